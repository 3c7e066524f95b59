"""``BelongsTo``: a child's link to its parent, read by key (GetItem / BatchGetItem).

A user and its org come back in one BatchGetItem; many users' orgs in as few BatchGetItems as
100-key requests allow, each org read once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import (
    BATCH_GET_MAX,
    BelongsTo,
    Database,
    DetachedError,
    HasMany,
    ItemNotFoundError,
    NotLoadedError,
    Partition,
    Table,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("rel-belongs", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"]("User", via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
@attrs.define
class User:
    org_name: str
    username: str
    user_type: str = "Member"
    org = BelongsTo[Org](Org)
    devices = HasMany["Device"]("Device", via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}#DEVICE#{serial}")
@attrs.define
class Device:
    org_name: str
    username: str
    serial: str


MICROSOFT = Org("MICROSOFT", "Enterprise")
BILLGATES = User("MICROSOFT", "BILLGATES")
ORPHAN = User("GONE", "nobody")  # its org was never stored


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([MICROSOFT, BILLGATES, ORPHAN])
        yield database


async def test_a_user_and_its_org_in_one_batch_get(db: Database) -> None:
    with count_requests(db) as log:
        user = await db.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.org])
    assert log.operations == ["BatchGetItem"]
    assert user == BILLGATES
    assert user.org.is_loaded
    assert user.org.loaded == MICROSOFT
    with count_requests(db) as log:
        assert await user.org.get() == MICROSOFT
    assert len(log) == 0


async def test_loaded_before_loading_raises(db: Database) -> None:
    user = await db.get(User, org_name="MICROSOFT", username="BILLGATES")
    assert not user.org.is_loaded
    with pytest.raises(NotLoadedError, match=r"User\.org"):
        _ = user.org.loaded


async def test_get_reads_the_parent_once(db: Database) -> None:
    user = await db.get(User, org_name="MICROSOFT", username="BILLGATES")
    with count_requests(db) as log:
        first = await user.org.get()
        second = await user.org.get()
    assert log.operations == ["GetItem"]
    assert first == second == MICROSOFT
    assert user.org.loaded == MICROSOFT


async def test_a_missing_parent_loads_as_none_and_get_raises(db: Database) -> None:
    user = await db.get(User, org_name="GONE", username="nobody", load=[User.org])
    assert user == ORPHAN
    assert user.org.loaded is None
    with count_requests(db) as log, pytest.raises(ItemNotFoundError, match=r"User\.org"):
        await user.org.get()
    assert len(log) == 0


async def test_a_missing_child_is_not_found_even_when_its_parent_is(db: Database) -> None:
    with pytest.raises(ItemNotFoundError):
        await db.get(User, org_name="MICROSOFT", username="NOBODY", load=[User.org])


async def test_a_child_built_in_code_reads_its_parent_once_attached(db: Database) -> None:
    user = User("MICROSOFT", "SATYA")
    with pytest.raises(DetachedError, match="attach"):
        await user.org.get()
    db.attach(user)
    assert await user.org.get() == MICROSOFT


async def test_load_many_parents_batches_each_parent_once(db: Database) -> None:
    orgs = [Org(f"ORG{i:03d}") for i in range(130)]
    # 250 users over 130 orgs: the first 120 orgs have two users, the last 10 one.
    users = [User(orgs[i % 130].name, f"user{i:03d}") for i in range(250)]
    await db.put_all([*orgs, *users])
    found = await db.query(User, org_name="ORG000").all()
    assert len(found) == 2

    with count_requests(db) as log:
        loaded = await db.load(users, User.org)
    # 130 distinct keys, 100 a request: two BatchGetItems (250 keys would need three).
    assert BATCH_GET_MAX == 100
    assert log.operations == ["BatchGetItem", "BatchGetItem"]
    assert loaded is users
    for user in users:
        assert user.org.loaded == Org(user.org_name)


async def test_load_many_parents_with_some_missing(db: Database) -> None:
    users = [BILLGATES, ORPHAN, User("MICROSOFT", "SATYA")]
    with count_requests(db) as log:
        await db.load(users, User.org)
    assert log.operations == ["BatchGetItem"]
    assert [u.org.loaded for u in users] == [MICROSOFT, None, MICROSOFT]


async def test_load_of_nothing_sends_nothing(db: Database) -> None:
    with count_requests(db) as log:
        assert await db.load([], User.org) == []
    assert len(log) == 0


async def test_parent_and_children_load_in_one_concurrent_round(db: Database) -> None:
    # BILLGATESX's device shares the USER#BILLGATES text prefix and must not be read as his.
    await db.put_all(
        [Device("MICROSOFT", "BILLGATES", "d1"), Device("MICROSOFT", "BILLGATESX", "d2")]
    )
    first_round = db.explain.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.devices, User.org]
    )
    assert sorted(r.operation for r in first_round) == ["BatchGetItem", "Query"]
    with count_requests(db) as log:
        user = await db.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.devices, User.org]
        )
    assert sorted(log.operations) == ["BatchGetItem", "Query"]
    assert user.org.loaded == MICROSOFT
    assert user.devices.loaded == [Device("MICROSOFT", "BILLGATES", "d1")]
    assert await user.devices.all() == [Device("MICROSOFT", "BILLGATES", "d1")]
