"""put_all / get_many / delete_all: chunked to DynamoDB's limits, in order, duplicates handled."""

from __future__ import annotations

import pytest

import dynorm
from dynorm import Database
from dynorm.testing import count_requests
from tests.seed_models import Org, User

from .seed import MICROSOFT

pytestmark = pytest.mark.integration


def users(n: int, org: str = "MICROSOFT") -> list[User]:
    return [User(org_name=org, username=f"U{i:04d}") for i in range(n)]


def test_batch_limits_are_dynamodbs() -> None:
    assert dynorm.BATCH_WRITE_MAX == 25
    assert dynorm.BATCH_GET_MAX == 100


@pytest.mark.parametrize(("count", "requests"), [(1, 1), (25, 1), (26, 2), (50, 2), (60, 3)])
async def test_put_all_sends_25_items_a_request(db: Database, count: int, requests: int) -> None:
    batch = users(count)
    with count_requests(db) as log:
        written = await db.put_all(batch)
    assert written == count
    # 26 items need two requests: never more than 25 in one.
    assert log.operations == ["BatchWriteItem"] * requests
    assert await db.query(User, org_name="MICROSOFT").all() == batch


async def test_put_all_of_mixed_models(db: Database) -> None:
    with count_requests(db) as log:
        written = await db.put_all([MICROSOFT, *users(3)])
    assert written == 4
    assert log.operations == ["BatchWriteItem"]
    org = await db.get(Org, name="MICROSOFT", load=[Org.users])
    assert org == MICROSOFT
    assert org.users.loaded == users(3)


async def test_put_all_collapses_duplicate_keys_and_the_last_wins(db: Database) -> None:
    batch = users(20)
    again = [User(org_name="MICROSOFT", username=u.username, user_type="Admin") for u in batch[:6]]
    with count_requests(db) as log:
        written = await db.put_all([*batch, *again])  # 26 objects, 20 keys
    assert written == 20
    assert log.operations == ["BatchWriteItem"]
    stored = await db.query(User, org_name="MICROSOFT").all()
    assert stored == [*again, *batch[6:]]


async def test_put_all_of_nothing_sends_nothing(db: Database) -> None:
    with count_requests(db) as log:
        assert await db.put_all([]) == 0
    assert len(log) == 0


async def test_get_many_reads_100_keys_a_request_in_order(db: Database) -> None:
    stored = users(200)
    await db.put_all(stored)
    # 250 distinct keys: every fifth one missing, spread over all three chunks.
    keys: list[dict[str, object]] = []
    expected: list[User | None] = []
    present = iter(stored)
    for i in range(250):
        if i % 5 == 4:
            keys.append({"org_name": "MICROSOFT", "username": f"MISSING{i}"})
            expected.append(None)
        else:
            user = next(present)
            keys.append({"org_name": user.org_name, "username": user.username})
            expected.append(user)

    with count_requests(db) as log:
        found = await db.get_many(User, keys)
    assert log.operations == ["BatchGetItem"] * 3
    assert found == expected


async def test_get_many_with_duplicate_keys(db: Database) -> None:
    a, b = users(2)
    await db.put_all([a, b])
    key_a = {"org_name": "MICROSOFT", "username": a.username}
    key_b = {"org_name": "MICROSOFT", "username": b.username}
    missing = {"org_name": "MICROSOFT", "username": "NOPE"}
    with count_requests(db) as log:
        found = await db.get_many(User, [key_a, key_b, key_a, missing, key_b, missing])
    assert log.operations == ["BatchGetItem"]
    assert found == [a, b, a, None, b, None]


async def test_get_many_of_the_design_example(db: Database) -> None:
    await db.put(MICROSOFT)
    found = await db.get_many(Org, [{"name": "MICROSOFT"}, {"name": "NOPE"}])
    assert found == [MICROSOFT, None]


async def test_get_many_ignores_items_of_other_models(db: Database) -> None:
    # Org and User keys never collide, so asking for Orgs by a user's name finds nothing.
    await db.put_all([MICROSOFT, *users(2)])
    assert await db.get_many(Org, [{"name": "U0000"}, {"name": "MICROSOFT"}]) == [None, MICROSOFT]


async def test_get_many_with_a_bad_key_sends_nothing(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(dynorm.KeyTemplateError):
        await db.get_many(User, [{"org_name": "MICROSOFT"}])
    assert len(log) == 0


async def test_delete_all(db: Database) -> None:
    stored = users(30)
    await db.put_all([MICROSOFT, *stored])
    with count_requests(db) as log:
        deleted = await db.delete_all([*stored, stored[0]])
    assert deleted == 30
    assert log.operations == ["BatchWriteItem"] * 2
    assert await db.query(User, org_name="MICROSOFT").all() == []
    keys = [{"org_name": u.org_name, "username": u.username} for u in stored]
    assert await db.get_many(User, keys) == [None] * 30
    # Only what was named went.
    assert await db.get(Org, name="MICROSOFT") == MICROSOFT
