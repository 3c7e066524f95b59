"""dynorm.testing.count_requests: what it records, and when it stops."""

from __future__ import annotations

import pytest

import dynorm
from dynorm import Database
from dynorm.testing import Connect, RequestLog, count_requests
from tests.seed_models import Org, app

pytestmark = pytest.mark.integration


async def test_records_each_request_in_order(db: Database) -> None:
    with count_requests(db) as log:
        assert isinstance(log, RequestLog)
        assert len(log) == 0
        await db.put(Org(name="A"))
        await db.get(Org, name="A")
        await db.query(Org, name="A").all()
    assert log.operations == ["PutItem", "GetItem", "Query"]
    assert len(log) == 3
    assert log.count("GetItem") == 1
    assert log.count("Scan") == 0


async def test_stops_at_the_end_of_the_block(db: Database) -> None:
    with count_requests(db) as log:
        await db.put(Org(name="A"))
    await db.get(Org, name="A")
    assert log.operations == ["PutItem"]


async def test_nested_blocks_both_count(db: Database) -> None:
    with count_requests(db) as outer:
        await db.put(Org(name="A"))
        with count_requests(db) as inner:
            await db.get(Org, name="A")
    assert outer.operations == ["PutItem", "GetItem"]
    assert inner.operations == ["GetItem"]


async def test_failed_requests_count_and_the_block_still_ends(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(dynorm.ItemNotFoundError):
        await db.get(Org, name="NOPE")
    assert log.operations == ["GetItem"]


async def test_only_the_given_database_is_counted(db: Database, dynorm_connect: Connect) -> None:
    async with dynorm_connect(app) as other:
        with count_requests(db) as log:
            await other.put(Org(name="B"))
            await db.put(Org(name="A"))
    assert log.operations == ["PutItem"]
