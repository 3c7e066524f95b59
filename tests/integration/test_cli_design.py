"""``dynorm design``, and what every command says about a MODULE:TABLE it cannot use."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import orjson
import pytest

from .cli import ROOT, Cli

#: The command refuses or answers before it connects: run once, not on every backend.
pytestmark = pytest.mark.offline


def test_design_prints_the_key_table_and_the_patterns(cli: Cli) -> None:
    ran = cli("design", "tests.seed_models:app")

    assert ran.code == 0, ran.output
    lines = ran.out.splitlines()
    assert any(
        "Org" in line and "ORG#{name}" in line and "METADATA#{name}" in line for line in lines
    )
    assert any("User.tickets" in line and "1 Query on GSI1, newest first" in line for line in lines)


def test_design_of_a_file_path_with_sibling_imports_as_markdown(cli: Cli) -> None:
    # The seed examples import `common` from their own directory, as scripts do.
    ran = cli("design", "examples/seed_003_strategies.py:table", "--format", "markdown")

    assert ran.code == 0, ran.output
    assert ran.out.startswith("### Table `strategies`\n")
    assert (
        "| Customer.addresses | `db.get(Customer, customer_id=…, load=[Customer.addresses])` | "
        "Embedded(key='nickname', max_items=20) | the parent's GetItem |"
    ) in ran.out


def test_design_as_json_is_the_design_data(cli: Cli) -> None:
    ran = cli("design", "seed_000_organizations:table", "--format", "json", cwd=ROOT / "examples")

    assert ran.code == 0, ran.output
    data = orjson.loads(ran.out)
    assert data["table"] == "orgs"
    assert [e["entity"] for e in data["entities"]] == ["Org", "User"]
    users = next(p for p in data["patterns"] if p["name"] == "Org.users")
    assert users["cost"] == "1 Query on the table"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests.seed_models", "is not MODULE:TABLE"),
        ("tests.no_such_module:app", "no module 'tests.no_such_module'"),
        ("tests.seed_models:nothing", "has no attribute 'nothing'; its Tables: app"),
        ("tests.seed_models:Org", "is a type, not a dynorm.Table"),
        ("examples/missing.py:table", "no file 'examples/missing.py'"),
    ],
)
@pytest.mark.parametrize("command", ["design", "create-table"])
def test_a_target_that_names_no_table_is_a_usage_error(
    cli: Cli, command: str, target: str, message: str
) -> None:
    ran = cli(command, target)

    assert ran.code == 2
    assert message in ran.err
    assert "Traceback" not in ran.err


def test_the_help_lists_every_command(cli: Cli) -> None:
    ran = cli("--help")

    assert ran.code == 0
    for command in ("design", "create-table", "delete-table"):
        assert command in ran.out


# -- layout: no template or name is broken, piped or in a terminal of any width -------------------

SEEDS = [
    ("tests.seed_models:app", ROOT),
    *(
        (f"{path.stem}:table", ROOT / "examples")
        for path in sorted(ROOT.glob("examples/seed_*.py"))
    ),
]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(cli: Cli, columns: int, *args: str, cwd: Path) -> str:
    """What ``dynorm *args`` shows in a terminal ``columns`` wide (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    environment = {**cli.environment(cwd), "COLUMNS": str(columns), "TERM": "xterm"}
    process = subprocess.Popen(  # noqa: S603  (our own command)
        [sys.executable, "-m", "dynorm", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=environment,
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command ended and closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert process.wait(timeout=120) == 0, shown.decode()
    return ANSI.sub("", shown.decode()).replace("\r\n", "\n")


def tokens(cli: Cli, target: str, cwd: Path) -> set[str]:
    """Every key template, attribute and word of every call and request of the design."""
    ran = cli("design", target, "--format", "json", cwd=cwd)
    assert ran.code == 0, ran.output
    data = orjson.loads(ran.out)
    found = {t for e in data["entities"] for t in e["keys"].values() if t}
    found |= {a for e in data["entities"] for a in e["attributes"]}
    for pattern in data["patterns"]:
        for text in (pattern["call"], *pattern["requests"]):
            found |= set(text.split())
    return found


def assert_whole(shown: str, expected: set[str], where: str) -> None:
    lines = shown.splitlines()
    broken = sorted(t for t in expected if not any(t in line for line in lines))
    assert not broken, f"{where}: broken across lines: {broken}\n{shown}"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize(("target", "cwd"), SEEDS, ids=[t for t, _ in SEEDS])
def test_design_never_breaks_a_template_or_a_name(cli: Cli, target: str, cwd: Path) -> None:
    expected = tokens(cli, target, cwd)
    assert any("#{" in t for t in expected)

    for columns in ("80", "200"):
        piped = cli("design", target, cwd=cwd, columns=columns)
        assert piped.code == 0, piped.output
        assert_whole(piped.out, expected, f"piped, COLUMNS={columns}")
    for width in (40, 80, 120, 200):
        shown = in_terminal(cli, width, "design", target, cwd=cwd)
        assert_whole(shown, expected, f"in a terminal {width} wide")
        if width >= 80:
            assert max(len(line) for line in shown.splitlines()) <= width, shown
