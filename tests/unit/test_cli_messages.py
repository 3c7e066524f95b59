"""What the library's errors advise reaches the ``dynorm`` command as its flags, not Python calls.

Every string in ``dynorm/`` that advises ``connect(name=...)`` (or another call a command runs
for the user) is read from the source, so a new message is checked when it is written.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dynorm
from dynorm.cli._app import for_the_command_line

PACKAGE = Path(dynorm.__file__).parent

#: Advice of a Python call whose command-line equivalent is a flag or a command.
ADVICE = re.compile(
    r"connect\((\.\.\., )?\w+=|connect\(\)'s|\bregion_name\b|\bendpoint_url=|await db\.create_table"
    r"|\bfrom_=|\b(migrate|backfill_index|repair_copies)\([\w.]+"
)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
    return found


def _message_texts() -> list[tuple[str, str]]:
    """(file:line, text) of every string literal piece outside docstrings and the CLI."""
    texts = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts or path.name in {"testing.py", "mypy.py"}:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                skip.update(id(v) for v in node.values)
                # A value put in (a name, a number) stands as "Value".
                text = "".join(
                    str(v.value) if isinstance(v, ast.Constant) else "Value" for v in node.values
                )
                texts.append((f"{path.name}:{node.lineno}", text))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
            ):
                texts.append((f"{path.name}:{node.lineno}", node.value))
    return [(where, text) for where, text in texts if ADVICE.search(text)]


MESSAGES = _message_texts()


def test_the_library_advises_calls_somewhere() -> None:
    # The search finds the messages this test is about (it would pass vacuously otherwise).
    assert len(MESSAGES) >= 8


@pytest.mark.parametrize(("where", "text"), MESSAGES, ids=[w for w, _ in MESSAGES])
def test_every_advice_of_a_call_is_said_with_flags(where: str, text: str) -> None:
    said = for_the_command_line(text)

    assert not re.search(r"connect\((\.\.\., )?\w+=|connect\(\)'s|await db\.", said), said
    assert not re.search(r"\b(region_name|endpoint_url|from_)\b", said), said


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            (
                "CreateTable: could not connect to http://h/ (refused); nothing was sent. Check "
                "connect(endpoint_url=...) and region_name, that the network reaches it, and "
                "connect(connect_timeout=...)"
            ),
            (
                "CreateTable: could not connect to http://h/ (refused); nothing was sent. Check "
                "--endpoint-url and --region, that the network reaches it, and --connect-timeout"
            ),
        ),
        (
            (
                "no AWS region is configured; pass connect(..., region_name='eu-west-1') or set "
                "AWS_DEFAULT_REGION"
            ),
            "no AWS region is configured; pass --region eu-west-1 or set AWS_DEFAULT_REGION",
        ),
        (
            (
                "Scan: no reply from http://h/ within read_timeout=5.0s; raise "
                "connect(read_timeout=...)"
            ),
            "Scan: no reply from http://h/ within --read-timeout 5.0s; raise --read-timeout",
        ),
        (
            (
                "Scan: the reply from http://h/ did not end within attempt_timeout=0.5s; raise "
                "connect(attempt_timeout=...)"
            ),
            (
                "Scan: the reply from http://h/ did not end within --attempt-timeout 0.5s; raise "
                "--attempt-timeout"
            ),
        ),
        (
            "the AWS session token from connect(aws_session_token=...) has a line break",
            "the AWS session token from --aws-session-token has a line break",
        ),
        (
            (
                "PutItem: Throughput exceeded (throttled: raise the table's capacity, or "
                "connect(max_attempts=...))"
            ),
            (
                "PutItem: Throughput exceeded (throttled: raise the table's capacity, or "
                "--max-attempts)"
            ),
        ),
        (
            (
                "migrate(Shelf.jars, from_=Embedded(key='name', max_items=None)): Shelf.jars is "
                "declared with Index('GSI1') already; from_= names the strategy"
            ),
            (
                "migrate Shelf.jars --from \"Embedded(key='name', max_items=None)\": Shelf.jars is "
                "declared with Index('GSI1') already; --from names the strategy"
            ),
        ),
        # Data in a message is left as it is: only the library's advice is rewritten.
        ("item region_name=eu: stored", "item region_name=eu: stored"),
    ],
)
def test_advice_is_rewritten_as_flags(message: str, said: str) -> None:
    assert for_the_command_line(message) == said
