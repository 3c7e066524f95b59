"""Every ``dynorm ... --help`` renders as written: no literal ``\\b``, examples on own lines.

The commands are found from the help itself (``Commands:`` sections), so a new command is checked
too. Each help is rendered 80 and 200 columns wide.
"""

from __future__ import annotations

import re

import pytest

from .cli import Cli

#: The command refuses or answers before it connects: run once, not on every backend.
pytestmark = pytest.mark.offline


def subcommands(help_text: str) -> list[str]:
    """The names listed under ``Commands:``."""
    _, found, rest = help_text.partition("\nCommands:\n")
    if not found:
        return []
    return [line.split()[0] for line in rest.splitlines() if line.startswith("  ") and line.strip()]


def every_command(cli: Cli) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    waiting: list[tuple[str, ...]] = [()]
    while waiting:
        command = waiting.pop(0)
        ran = cli(*command, "--help")
        assert ran.code == 0, ran.output
        found.append(command)
        waiting.extend((*command, name) for name in subcommands(ran.out))
    return found


#: An example in a help text: the command run on a MODULE:TABLE.
EXAMPLE = re.compile(r"dynorm (?:[\w-]+ )+\w+:\w+")


def test_every_help_renders_its_examples_on_their_own_lines(cli: Cli) -> None:
    commands = every_command(cli)
    assert {"design", "create-table", "delete-table", "migrate"} <= {c[0] for c in commands if c}
    assert ("workbench", "import") in commands

    examples = 0
    for command in commands:
        for columns in ("80", "200"):
            ran = cli(*command, "--help", columns=columns)

            assert "\\b" not in ran.out, f"dynorm {' '.join(command)} --help:\n{ran.out}"
            assert "\b" not in ran.out
            for line in ran.out.splitlines():
                if line.startswith("Usage:"):
                    continue
                for example in EXAMPLE.finditer(line):
                    examples += 1
                    assert line[: example.start()].strip() == "", (
                        f"dynorm {' '.join(command)} --help (COLUMNS={columns}): an example "
                        f"does not start its line: {line!r}"
                    )
    assert examples >= 8  # migrate's four, at two widths


def test_migrate_help_shows_each_example_whole(cli: Cli) -> None:
    ran = cli("migrate", "--help", columns="80")

    lines = [line.strip() for line in ran.out.splitlines()]
    assert (
        'dynorm migrate app:table User.tickets --from "Partition()"     the strategy changed'
        in (lines)
    )
    assert (
        "dynorm migrate app:table Ticket --backfill --index GSI2        a new index template"
        in (lines)
    )
