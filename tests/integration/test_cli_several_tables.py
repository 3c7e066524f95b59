"""``dynorm create-table`` with several tables, run as a user runs it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from dynorm import Database, Table, TableNotFoundError, connect
from dynorm.testing import TEST_ACCESS_KEY_ID, TEST_REGION, TEST_SECRET_ACCESS_KEY, RunningServer

from .cli import Cli

pytestmark = pytest.mark.integration


@pytest.fixture
def suffix() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture
def models(tmp_path: Path, suffix: str) -> Path:
    """A models file declaring two uniquely named tables (the command imports it by path)."""
    path = tmp_path / "several.py"
    path.write_text(
        "from dynorm import GSI, Table\n"
        f"app = Table('app-{suffix}', pk='pk', sk='sk',\n"
        "            indexes=[GSI('GSI1', pk='GSI1PK', sk='GSI1SK')])\n"
        f"audit = Table('audit-{suffix}', pk='pk', sk='sk')\n"
    )
    return path


@pytest.fixture
async def db(dynorm_server: RunningServer, suffix: str) -> AsyncIterator[Database]:
    """A connection to both tables the command creates (deleted afterwards)."""
    app = Table(f"app-{suffix}", pk="pk", sk="sk")
    audit = Table(f"audit-{suffix}", pk="pk", sk="sk")
    async with connect(
        app,
        audit,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
    ) as database:
        yield database
        for table in database.tables:
            with contextlib.suppress(TableNotFoundError):
                await database.delete_table(table)


async def test_create_table_creates_every_table_named(
    cli: Cli, db: Database, models: Path, suffix: str
) -> None:
    app, audit = db.tables
    ran = cli("create-table", f"{models}:app", f"{models}:audit")

    assert ran.code == 0, ran.output
    assert f"Created 'app-{suffix}' (pk, sk; indexes GSI1 (GSI1PK, GSI1SK))" in ran.out
    assert f"Created 'audit-{suffix}' (pk, sk)" in ran.out
    described = [await db.describe_table(app), await db.describe_table(audit)]
    assert [d and d["TableStatus"] for d in described] == ["ACTIVE", "ACTIVE"]

    again = cli("create-table", f"{models}:app", f"{models}:audit", "--exists-ok")
    assert again.code == 0, again.output
    assert again.out.count("Table exists already:") == 2


async def test_a_table_name_for_several_tables_is_refused_before_anything_is_sent(
    cli: Cli, db: Database, models: Path
) -> None:
    app, audit = db.tables
    ran = cli("create-table", f"{models}:app", f"{models}:audit", "--table-name", "renamed")

    assert ran.code == 2
    assert "--table-name renames one table" in ran.err
    assert "Traceback" not in ran.err
    assert await db.describe_table(app) is None
    assert await db.describe_table(audit) is None


@pytest.mark.offline
def test_design_shows_each_table_in_turn(cli: Cli) -> None:
    shop, audit = "tests.integration.tables_models:shop", "tests.integration.tables_models:audit"
    ran = cli("design", shop, audit)
    assert ran.code == 0, ran.output
    assert ran.out.index("Table shop") < ran.out.index("Table audit")
    assert "AuditEntry by key" in ran.out

    as_json = cli("design", shop, audit, "--format", "json")
    assert as_json.code == 0, as_json.output
    assert [d["table"] for d in orjson.loads(as_json.out)] == ["shop", "audit"]

    across = cli("design", "tests.integration.xtable_models:people", "--format", "json")
    assert across.code == 0, across.output
    people = orjson.loads(across.out)  # one table: its design
    entries = next(p for p in people["patterns"] if p["name"] == "Account.entries")
    assert entries["strategy"] == "Index('GSI1') (Table 'ledger')"
    assert (
        entries["cost"] == "1 GetItem + 1 Query on GSI1 of Table 'ledger', newest first (at once)"
    )

    renamed = cli("design", shop, audit, "--table-name", "renamed")
    assert renamed.code == 2
    assert "--table-name renames one table" in renamed.err


async def test_delete_table_deletes_every_table_named_after_one_confirmation(
    cli: Cli, db: Database, models: Path, suffix: str
) -> None:
    app, audit = db.tables
    await db.create_table()
    refused = cli("delete-table", f"{models}:app", f"audit-{suffix}", stdin="n\n")
    assert refused.code == 1
    assert f"Delete tables 'app-{suffix}', 'audit-{suffix}'" in refused.err
    assert await db.describe_table(app) is not None

    ran = cli("delete-table", f"{models}:app", f"audit-{suffix}", stdin="y\n")
    assert ran.code == 0, ran.output
    assert f"Deleted 'app-{suffix}'" in ran.out
    assert f"Deleted 'audit-{suffix}'" in ran.out
    assert await db.describe_table(app) is None
    assert await db.describe_table(audit) is None
