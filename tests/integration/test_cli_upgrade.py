"""``dynorm migrate app:table Model --upgrade``, run as a user runs it: in a subprocess.

Items of ``versions_models.User`` are written raw at older schema versions; the command
rewrites them at the current one (a dry run first), and the stored items are checked.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dynorm import Database
from dynorm.testing import Connect

from .cli import Cli, Ran
from .raw import raw_put, raw_scan
from .versions_models import User, app, same_stored, upgraded_item, user_item

pytestmark = pytest.mark.integration

MODELS = "tests.integration.versions_models:app"


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(app) as connected:
        yield connected


def counts(ran: Ran) -> dict[str, int]:
    rows = re.findall(r"^[│|] (\S.*?) +[│|] +(\d+) [│|]$", ran.out, re.MULTILINE)
    return {label: int(n) for label, n in rows}


async def test_upgrade_rewrites_older_items_and_a_dry_run_writes_nothing(
    cli: Cli, db: Database, tmp_path: Path
) -> None:
    for i, version in enumerate([None, 1, 2, 3]):
        await raw_put(db, user_item(f"u{i}", version))
    before = await raw_scan(db)
    command = ("migrate", MODELS, "User", "--upgrade", "--table-name", db.table_name)

    dry = await cli.run(*command, "--dry-run", cwd=tmp_path)
    assert dry.code == 0, dry.output
    assert dry.out.startswith("upgrade: User")
    assert counts(dry)["items written"] == 3
    assert await raw_scan(db) == before

    ran = await cli.run(*command, "-y", cwd=tmp_path)

    assert ran.code == 0, ran.output
    assert counts(ran)["items written"] == 3
    assert counts(ran)["verified: changes left to make"] == 0
    for item in await raw_scan(db):
        assert same_stored(item, upgraded_item(item["uid"]["S"])), item
    found = await db.query(User, index="GSI1", last="Lovelace").all()
    assert len(found) == 4


async def test_upgrade_of_an_unversioned_model_or_with_another_flag_is_refused(
    cli: Cli, db: Database, tmp_path: Path
) -> None:
    unversioned = await cli.run(
        "migrate", MODELS, "Note", "--upgrade", "--table-name", db.table_name, "-y", cwd=tmp_path
    )
    assert unversioned.code != 0
    assert "Traceback" not in unversioned.err
    assert "declares no schema version" in unversioned.output
    both = await cli.run(
        "migrate", MODELS, "User", "--upgrade", "--backfill", "--table-name", db.table_name,
        cwd=tmp_path,
    )  # fmt: skip
    assert both.code == 2
    assert "give one of --copies, --backfill, --upgrade" in both.err
