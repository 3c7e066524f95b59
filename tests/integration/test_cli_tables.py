"""``dynorm create-table`` and ``dynorm delete-table``, run as a user runs them."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Database, TableNotFoundError, connect
from dynorm.core.requests import Request
from dynorm.testing import TEST_ACCESS_KEY_ID, TEST_REGION, TEST_SECRET_ACCESS_KEY, RunningServer
from tests.seed_models import app

from .cli import Cli

pytestmark = pytest.mark.integration


@pytest.fixture
def name() -> str:
    return f"cli-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def db(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """A connection to the table the command works on, which the test does not create."""
    async with connect(
        app,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=name,
    ) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()


async def describe(db: Database) -> dict[str, Any]:
    table: dict[str, Any] = (await db.send(Request("DescribeTable", {"TableName": db.table_name})))[
        "Table"
    ]
    return table


async def test_create_table_creates_the_declared_keys_and_indexes(
    cli: Cli, db: Database, name: str
) -> None:
    ran = cli("create-table", "tests.seed_models:app", "--table-name", name)

    assert ran.code == 0, ran.output
    assert f"Created {name!r} (pk, sk; indexes GSI1 (GSI1PK, GSI1SK))" in ran.out
    table = await describe(db)
    assert table["TableStatus"] == "ACTIVE"
    assert {(k["AttributeName"], k["KeyType"]) for k in table["KeySchema"]} == {
        ("pk", "HASH"),
        ("sk", "RANGE"),
    }
    [gsi] = table["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "GSI1"
    assert [k["AttributeName"] for k in gsi["KeySchema"]] == ["GSI1PK", "GSI1SK"]


async def test_create_table_refuses_an_existing_table_unless_told(
    cli: Cli, db: Database, name: str
) -> None:
    await db.create_table()

    again = cli("create-table", "tests.seed_models:app", "--table-name", name)
    accepted = cli("create-table", "tests.seed_models:app", "--table-name", name, "--exists-ok")

    assert again.code == 1
    assert f"table {name!r} exists already" in again.err
    assert "--exists-ok" in again.err
    assert accepted.code == 0, accepted.output
    assert "exists already" in accepted.out


async def test_delete_table_asks_first_and_aborts_without_a_yes(
    cli: Cli, db: Database, name: str
) -> None:
    await db.create_table()

    refused = cli("delete-table", name, stdin="n\n")
    unanswered = cli("delete-table", name)  # stdin closed: no confirmation

    assert refused.code == 1
    assert unanswered.code == 1
    assert f"Delete table {name!r}" in refused.err
    assert (await describe(db))["TableStatus"] == "ACTIVE"


@pytest.mark.parametrize("how", [["--yes"], []])
async def test_delete_table_deletes_after_confirmation(
    cli: Cli, db: Database, name: str, how: list[str]
) -> None:
    await db.create_table()

    ran = cli("delete-table", "tests.seed_models:app", "--table-name", name, *how, stdin="y\n")

    assert ran.code == 0, ran.output
    assert f"Deleted {name!r}" in ran.out
    with pytest.raises(TableNotFoundError):
        await describe(db)


def test_delete_table_says_when_there_is_nothing_to_delete(cli: Cli, name: str) -> None:
    ran = cli("delete-table", name, "--yes")

    assert ran.code == 1
    assert f"there is no table {name!r}" in ran.err


@pytest.mark.offline
def test_an_unreachable_endpoint_is_an_error_that_says_so(cli: Cli, name: str) -> None:
    ran = cli(
        "create-table",
        "tests.seed_models:app",
        "--table-name",
        name,
        "--endpoint-url",
        "http://127.0.0.1:9",
        "--max-attempts",
        "1",
    )

    assert ran.code == 1
    assert "Error: TransportError" in ran.err
    assert "Traceback" not in ran.err
