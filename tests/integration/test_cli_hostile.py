"""No input makes the ``dynorm`` command print a traceback: hostile arguments and models modules.

Every command gets arguments a user can mistype (a URL without its scheme, an empty region, a
strategy with a list for a field name) and models modules that misbehave on import (exit, raise,
Ctrl-C, a syntax error). Each must end with a message that names the flag or the module, and
exit status 2 (usage) or 1 (error), or 130 for the interrupt; never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dynorm.workbench import dump_model, export_model
from tests.seed_models import app

from .cli import Cli, Ran

#: The command refuses or answers before it connects: run once, not on every backend.
pytestmark = pytest.mark.offline

#: Models modules that misbehave on import: file name -> source.
MODULES = {
    "exits_zero": "import sys\nsys.exit(0)\n",
    "exits_text": "import sys\nsys.exit('no database configured')\n",
    "interrupts": "raise KeyboardInterrupt\n",
    "bad_syntax": "def table(:\n    pass\n",
    "raises": "raise RuntimeError('boom\\non two lines')\n",
    "raises_base": "class Stop(BaseException):\n    pass\n\n\nraise Stop('stop')\n",
}

#: What each command is given as its MODULE:TABLE, in the place it takes one.
COMMANDS = {
    "design": lambda target, tmp: ["design", target],
    "create-table": lambda target, tmp: ["create-table", target],
    "delete-table": lambda target, tmp: ["delete-table", target, "--yes"],
    "workbench export": lambda target, tmp: [
        "workbench",
        "export",
        target,
        "--output",
        str(tmp / "out.json"),
    ],
    "workbench import": lambda target, tmp: [
        "workbench",
        "import",
        str(workbench_file(tmp)),
        "--models",
        target,
    ],
    "migrate": lambda target, tmp: ["migrate", target, "Org.users", "--copies", "--yes"],
}


def workbench_file(tmp: Path) -> Path:
    path = tmp / "model.json"
    if not path.exists():
        path.write_text(dump_model(export_model(app)), encoding="utf-8")
    return path


def assert_handled(ran: Ran, codes: tuple[int, ...] = (1, 2)) -> None:
    assert "Traceback" not in ran.output, ran.output
    assert ran.code in codes, ran.output


@pytest.mark.parametrize("module", sorted(MODULES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_models_module_that_misbehaves_on_import_is_one_line_naming_it(
    cli: Cli, tmp_path: Path, command: str, module: str
) -> None:
    (tmp_path / f"{module}.py").write_text(MODULES[module], encoding="utf-8")

    ran = cli(*COMMANDS[command](f"{module}:table", tmp_path), cwd=tmp_path)

    if module == "interrupts":
        assert_handled(ran, codes=(130,))
        assert ran.err.strip().splitlines() == [
            f"Interrupted: importing {module!r} raised KeyboardInterrupt; nothing was done"
        ]
        return
    assert_handled(ran)
    [error] = [line for line in ran.err.splitlines() if line.startswith("Error:")]
    assert repr(module) in error
    assert ran.out == ""
    if module == "exits_zero":
        assert "sys.exit(0)" in error
    if module == "exits_text":
        assert "sys.exit('no database configured')" in error


#: The options every command that connects takes, given values no endpoint or region has: each
#: command gets the first ones (the options are shared), one command every one.
EVERY_COMMAND = [
    (["--endpoint-url", "127.0.0.1:8000"], "write http://127.0.0.1:8000"),
    (["--endpoint-url", ""], "the endpoint is empty"),
    (["--endpoint-url", "http://[::1"], "Invalid IPv6 URL"),
    (["--region", "eu west 1"], "is not a region name"),
]
ONE_COMMAND = [
    (["--endpoint-url", "localhost"], "is not an http:// or https:// URL"),
    (["--endpoint-url", "ftp://localhost:21"], "is not an http:// or https:// URL"),
    (["--endpoint-url", "http://"], "does not name a host"),
    (["--endpoint-url", "http://localhost:port"], "is not a URL"),
    (["--endpoint-url", "http://localhost:99999"], "is not a URL"),
    (["--region", ""], "is not a region name"),
    (["--table-name", ""], "is not a DynamoDB table name"),
    (["--table-name", "x" * 300], "is not a DynamoDB table name"),
    (["--table-name", "no spaces"], "is not a DynamoDB table name"),
    (["--connect-timeout", "nan"], "is not a number of seconds"),
    (["--read-timeout", "-1"], "--read-timeout"),
    (["--attempt-timeout", "0"], "x>0"),
    (["--max-attempts", "0"], "--max-attempts"),
]

CONNECTING = {
    "create-table": ["create-table", "tests.seed_models:app"],
    "delete-table": ["delete-table", "tests.seed_models:app", "--yes"],
    "workbench export --live": [
        "workbench",
        "export",
        "tests.seed_models:app",
        "--live",
        "--output",
        "-",
    ],
    "workbench import": ["workbench", "import", "{model}"],
    "migrate": [
        "migrate",
        "tests.integration.cli_models:new",
        "Author.books",
        "--copies",
        "--yes",
    ],
}


def connecting(command: str, tmp_path: Path) -> list[str]:
    return [str(workbench_file(tmp_path)) if a == "{model}" else a for a in CONNECTING[command]]


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [(c, o, m) for c in sorted(CONNECTING) for o, m in EVERY_COMMAND]
    + [("create-table", o, m) for o, m in ONE_COMMAND],
)
def test_a_bad_connection_option_is_a_usage_error_naming_it(
    cli: Cli, tmp_path: Path, command: str, options: list[str], message: str
) -> None:
    ran = cli(*connecting(command, tmp_path), *options, cwd=tmp_path)

    assert_handled(ran, codes=(2,))
    assert f"Invalid value for '{options[0]}'" in ran.err
    assert message in ran.err


@pytest.mark.parametrize("command", sorted(CONNECTING))
def test_an_endpoint_that_does_not_answer_is_an_error_naming_the_flags(
    cli: Cli, tmp_path: Path, command: str
) -> None:
    options = ["--endpoint-url", "http://127.0.0.1:1", "--max-attempts", "1"]

    ran = cli(*connecting(command, tmp_path), *options, cwd=tmp_path)

    assert_handled(ran, codes=(1,))
    assert "could not connect to http://127.0.0.1:1" in ran.err
    assert "Check --endpoint-url and --region" in ran.err
    assert "connect(" not in ran.err


def test_no_region_anywhere_is_an_error_naming_the_flag(cli: Cli, tmp_path: Path) -> None:
    ran = cli("create-table", "tests.seed_models:app", cwd=tmp_path, unset=["AWS_DEFAULT_REGION"])

    assert_handled(ran, codes=(1,))
    assert "no AWS region is configured; pass --region eu-west-1 or set AWS_DEFAULT_REGION" in (
        ran.err
    )


@pytest.mark.parametrize(
    ("strategy", "message"),
    [
        ("Embedded(key=['a','b'])", "Embedded(key=...) takes a field name (a string)"),
        ("Embedded(max_items='3')", "Embedded(max_items=...) takes a whole number"),
        ("Index(1)", "Index(name=...) takes an index name (a string)"),
        ("Index()", "missing a required argument: 'name'"),
        ("Partition('GSI1')", "too many positional arguments"),
        ("Denormalized(copy={'a': 1})", "Denormalized(copy=...) takes a dict"),
        ("Denormalized(copy={'a': 'b'}, where=Embedded())", "takes Partition() or Index"),
        ("Embedded(**{'key': 'a'})", "write each argument out"),
        ("Index(name=__import__('os').getcwd())", "is not a strategy"),
        ("Index(name=GSI1)", "arguments must be literals"),
        ("Embedded(" * 60, "is not a strategy"),
        ("Index('" + "x" * 5000 + "')", "is too long for a strategy"),
        ("", "is not a strategy"),
    ],
)
def test_a_strategy_that_is_not_one_is_a_usage_error_naming_the_flag(
    cli: Cli, tmp_path: Path, strategy: str, message: str
) -> None:
    ran = cli("migrate", "tests.seed_models:app", "User.tickets", "--from", strategy, "--yes")

    assert_handled(ran, codes=(2,))
    assert "Invalid value for '--from'" in ran.err
    assert message in ran.err


@pytest.mark.parametrize(
    "arguments",
    [
        ["design", ":"],
        ["design", "..:table"],
        ["design", "getattr_raises:table"],
        ["design", "tests.seed_models:app", "--table-name", "a"],
        ["delete-table", "", "--yes"],
        ["delete-table", "x" * 300, "--yes"],
        ["workbench", "export", "tests.seed_models:app", "--output", "/no/such/dir/out.json"],
        ["workbench", "export", "tests.seed_models:app", "-o", "-", "--examples", "nope:x"],
        ["workbench", "export", "tests.seed_models:app", "-o", "-", "--examples", "raises:boom"],
        ["workbench", "export", "tests.seed_models:app", "-o", "-", "--examples", "raises:later"],
        ["workbench", "import", "not-json.json"],
        ["workbench", "import", "deep.json"],
        ["migrate", "tests.seed_models:app", "", "--copies", "--yes"],
        ["migrate", "tests.seed_models:app", "Org.", "--copies", "--yes"],
        ["migrate", "tests.seed_models:app", "Org.users", "--copies", "-y", "--checkpoint", "/x/y"],
    ],
    ids=lambda arguments: " ".join(a[:30] for a in arguments),
)
def test_other_hostile_arguments_end_in_a_message(
    cli: Cli, tmp_path: Path, arguments: list[str]
) -> None:
    (tmp_path / "raises.py").write_text(
        "def boom():\n    raise ValueError('no samples today')\n\n\n"
        "def later():\n    yield from ()\n    raise ValueError('no more samples')\n",
        encoding="utf-8",
    )
    (tmp_path / "getattr_raises.py").write_text(
        "def __getattr__(name):\n    raise RuntimeError(name)\n", encoding="utf-8"
    )
    (tmp_path / "not-json.json").write_bytes(b"\xff\xfe not json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")

    ran = cli(*arguments, cwd=tmp_path)

    assert_handled(ran)
    assert "Error:" in ran.err
    if arguments[1] == "getattr_raises:table":
        assert "reading 'table' from 'getattr_raises' raised RuntimeError: table" in ran.err
