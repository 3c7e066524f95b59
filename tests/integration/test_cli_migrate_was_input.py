"""`dynorm migrate` --status/--upgrade with bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import Cli

pytestmark = [pytest.mark.integration]
MODELS = "tests.integration.cli_was_models:new"


@pytest.mark.parametrize(
    "args",
    [
        ("Crate.bottles", "--status", "--table-name", "no-such-table"),
        ("Crate.bottles", "-y", "--table-name", "no-such-table"),
        ("Crate.nope", "--status"),
        ("Nope.bottles", "--status"),
        ("Crate", "--status"),
        ("Crate.bottles", "--status", "--upgrade"),
        ("Bottle", "--upgrade", "-y"),
        ("Crate.bottles", "--status", "--page-size", "0"),
        ("Crate.bottles", "--status", "--json", "--table-name", "no-such-table"),
    ],
)
async def test_migrate_with_bad_input_says_what_to_change(
    cli: Cli, tmp_path: Path, args: tuple[str, ...]
) -> None:
    ran = await cli.run("migrate", MODELS, *args, cwd=tmp_path)
    assert ran.code in (1, 2), ran.output
    assert "Traceback" not in ran.err
