"""``dynorm create-table`` and ``dynorm delete-table``, run as a user runs them."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Database, Table, TableNotFoundError, connect
from dynorm.core.requests import Request
from dynorm.mapping.tabledef import create_table_request
from dynorm.testing import TEST_ACCESS_KEY_ID, TEST_REGION, TEST_SECRET_ACCESS_KEY, RunningServer
from tests.faultproxy import FaultProxy
from tests.seed_models import app

from .cli import Cli
from .cli_models import sessions

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


async def test_delete_table_fails_before_asking_when_it_could_not_delete(
    cli: Cli, db: Database, name: str
) -> None:
    await db.create_table()

    no_region = cli("delete-table", name, stdin="y\n", unset=["AWS_DEFAULT_REGION"])
    no_table = cli("delete-table", name, f"{name}-gone", stdin="y\n")

    assert no_region.code == 1
    assert "no AWS region is configured; pass --region" in no_region.err
    assert no_table.code == 1
    assert f"there is no table {name + '-gone'!r}" in no_table.err
    for ran in (no_region, no_table):
        assert "Delete table" not in ran.err  # not asked: the answer would have been for nothing
        assert "Traceback" not in ran.err
    assert (await describe(db))["TableStatus"] == "ACTIVE"  # neither deleted the one that exists


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


@pytest.fixture
async def sessions_db(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """A connection to a table whose model declares ``ttl=``, which the test creates."""
    async with connect(
        sessions,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=name,
    ) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()


def once_each(operations: list[str]) -> list[str]:
    """``operations`` with repeats in a row as one (a table still CREATING is asked again)."""
    return [op for i, op in enumerate(operations) if i == 0 or op != operations[i - 1]]


async def time_to_live(db: Database) -> dict[str, Any]:
    described = await db.send(Request("DescribeTimeToLive", {"TableName": db.table_name}))
    found: dict[str, Any] = described["TimeToLiveDescription"]
    return found


async def test_exists_ok_waits_for_an_existing_table_and_enables_its_ttl(
    cli: Cli, sessions_db: Database, name: str, dynorm_backend: str
) -> None:
    # Created by someone else, without the time to live its model declares.
    await sessions_db.send(create_table_request(sessions, name, None))
    target = ("create-table", "tests.integration.cli_models:sessions", "--table-name", name)

    async with FaultProxy.running(cli.server.url) as proxy:
        # The table's status is asked before anything is reported: held here, the run waits.
        held = proxy.pause("DescribeTable")
        run = asyncio.ensure_future(cli.run(*target, "--exists-ok", "--endpoint-url", proxy.url))
        await asyncio.wait_for(held.arrived.wait(), timeout=60)
        assert not run.done()
        held.release()
        ran = await run
        first = once_each(proxy.requests)
        proxy.requests.clear()
        again = await cli.run(*target, "--exists-ok", "--endpoint-url", proxy.url)
        second = once_each(proxy.requests)

    assert ran.code == 0, ran.output
    assert f"Table exists already: {name!r}" in ran.out
    assert again.code == 0, again.output
    assert (await describe(sessions_db))["TableStatus"] == "ACTIVE"
    assert first == ["CreateTable", "DescribeTable", "DescribeTimeToLive", "UpdateTimeToLive"]
    if dynorm_backend == "dynalite":  # says DISABLED, refuses enabling: tolerated, nothing expires
        assert second == first
        return
    ttl = await time_to_live(sessions_db)
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expires_at")
    # Enabled already: asked, not enabled again (DynamoDB refuses enabling it twice).
    assert second == ["CreateTable", "DescribeTable", "DescribeTimeToLive"]


async def test_exists_ok_refuses_a_table_whose_ttl_is_on_another_attribute(
    cli: Cli, sessions_db: Database, name: str, dynorm_backend: str
) -> None:
    if dynorm_backend == "dynalite":
        pytest.skip("dynalite has no time to live")
    await sessions_db.send(create_table_request(sessions, name, None))
    spec = {"Enabled": True, "AttributeName": "gone_at"}
    await sessions_db.send(
        Request("UpdateTimeToLive", {"TableName": name, "TimeToLiveSpecification": spec})
    )

    ran = await cli.run(
        "create-table", "tests.integration.cli_models:sessions", "--table-name", name, "--exists-ok"
    )

    assert ran.code == 1, ran.output
    assert "has time to live ENABLED on 'gone_at'" in ran.err
    assert "ttl= on 'expires_at'" in ran.err
    assert "Traceback" not in ran.err


async def test_exists_ok_refuses_a_table_of_another_primary_key(
    cli: Cli, sessions_db: Database, name: str
) -> None:
    # Made by another program: the same name, but a numeric sort key named otherwise.
    other = Table("other", pk="pk", sk="rank", key_types={"rank": "N"})
    await sessions_db.send(create_table_request(other, name, None))

    ran = await cli.run(
        "create-table", "tests.integration.cli_models:sessions", "--table-name", name, "--exists-ok"
    )

    assert ran.code == 1, ran.output
    assert f"table {name!r} exists with primary key pk (HASH, S), rank (RANGE, N)" in ran.err
    assert "the Table declares pk (HASH, S), sk (RANGE, S)" in ran.err
    assert "pass --exists-ok" not in ran.err
    assert "Traceback" not in ran.err


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
