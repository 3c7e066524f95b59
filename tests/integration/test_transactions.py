"""Transactions: one TransactWriteItems, all or nothing; refused before sending when invalid."""

from __future__ import annotations

import pytest

import dynorm
from dynorm import Attr, Database
from dynorm.testing import count_requests
from tests.seed_models import Org, User

from .raw import raw_item
from .seed import AMAZON, BILLGATES, JEFFBEZOS, MICROSOFT, SATYANADELLA

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

ACME = Org(name="ACME", plan_type="Pro")
WILE = User(org_name="ACME", username="WILE")


class BoomError(Exception):
    pass


async def test_commit_writes_everything_in_one_request(seeded: Database) -> None:
    with count_requests(seeded) as log:
        async with seeded.transaction() as tx:
            tx.put(ACME)
            tx.put(WILE)
            tx.delete(BILLGATES)
            tx.update(SATYANADELLA, set={"user_type": "Member"})
            tx.check(AMAZON, Attr("plan_type") == "Pro")
            assert len(log) == 0  # nothing is sent before the block ends
    assert log.operations == ["TransactWriteItems"]

    org = await seeded.get(Org, name="ACME", load=[Org.users])
    assert org == ACME
    assert org.users.loaded == [WILE]
    assert await seeded.query(User, org_name="MICROSOFT").all() == [
        User(org_name="MICROSOFT", username="SATYANADELLA", user_type="Member")
    ]


async def test_a_failed_condition_cancels_every_action(seeded: Database) -> None:
    async def write() -> None:
        async with seeded.transaction() as tx:
            tx.put(ACME)  # 0
            tx.delete(JEFFBEZOS)  # 1
            tx.put(Org(name="MICROSOFT", plan_type="Free"), overwrite=False)  # 2: exists
            tx.update(BILLGATES, set={"user_type": "Admin"})  # 3

    with count_requests(seeded) as log, pytest.raises(dynorm.TransactionCanceledError) as caught:
        await write()
    assert log.operations == ["TransactWriteItems"]

    error = caught.value
    assert isinstance(error, dynorm.DatabaseError)
    assert [r.index for r in error.reasons] == [0, 1, 2, 3]
    assert [r.index for r in error.failed] == [2]
    assert error.reasons[2].code == "ConditionalCheckFailed"
    assert all(r.code == "None" for r in error.reasons if r.index != 2)
    assert "action 2" in str(error)

    # Nothing was written, nothing was deleted.
    assert await raw_item(seeded, {"pk": "ORG#ACME", "sk": "METADATA#ACME"}) is None
    assert await seeded.get(User, org_name="AMAZON", username="JEFFBEZOS") == JEFFBEZOS
    assert await seeded.get(Org, name="MICROSOFT") == MICROSOFT
    assert await seeded.get(User, org_name="MICROSOFT", username="BILLGATES") == BILLGATES


async def test_a_failed_check_names_its_action(seeded: Database) -> None:
    async def write() -> None:
        async with seeded.transaction() as tx:
            tx.put(ACME)
            tx.check(MICROSOFT, Attr("plan_type") == "Free")

    with pytest.raises(dynorm.TransactionCanceledError) as caught:
        await write()
    assert [r.index for r in caught.value.failed] == [1]
    assert await raw_item(seeded, {"pk": "ORG#ACME", "sk": "METADATA#ACME"}) is None


async def test_more_than_100_actions_are_refused_before_sending(db: Database) -> None:
    assert dynorm.TRANSACT_MAX == 100
    batch = [User(org_name="BIG", username=f"U{i:03d}") for i in range(101)]
    added: list[User] = []

    async def write() -> None:
        async with db.transaction() as tx:
            for user in batch:
                tx.put(user)
                added.append(user)

    with count_requests(db) as log, pytest.raises(dynorm.LimitExceededError, match="100"):
        await write()
    assert len(log) == 0
    assert added == batch[:100]  # refused when the 101st action was added
    assert await db.query(User, org_name="BIG").all() == []


async def test_exactly_100_actions_commit(db: Database) -> None:
    batch = [User(org_name="BIG", username=f"U{i:03d}") for i in range(100)]
    with count_requests(db) as log:
        async with db.transaction() as tx:
            for user in batch:
                tx.put(user)
    assert log.operations == ["TransactWriteItems"]
    assert await db.query(User, org_name="BIG").all() == batch


async def test_the_same_item_twice_is_refused_before_sending(seeded: Database) -> None:
    async def write() -> None:
        async with seeded.transaction() as tx:
            tx.put(ACME)
            tx.update(BILLGATES, set={"user_type": "Admin"})
            tx.delete(BILLGATES)

    with count_requests(seeded) as log, pytest.raises(dynorm.DynormError, match="same item"):
        await write()
    assert len(log) == 0
    assert await raw_item(seeded, {"pk": "ORG#ACME", "sk": "METADATA#ACME"}) is None


async def test_an_exception_in_the_block_sends_nothing(seeded: Database) -> None:
    async def write() -> None:
        async with seeded.transaction() as tx:
            tx.put(ACME)
            tx.delete(BILLGATES)
            raise BoomError

    with count_requests(seeded) as log, pytest.raises(BoomError):
        await write()
    assert len(log) == 0
    assert await raw_item(seeded, {"pk": "ORG#ACME", "sk": "METADATA#ACME"}) is None
    assert await seeded.get(User, org_name="MICROSOFT", username="BILLGATES") == BILLGATES


async def test_an_empty_transaction_sends_nothing(db: Database) -> None:
    with count_requests(db) as log:
        async with db.transaction():
            pass
    assert len(log) == 0


async def test_objects_put_in_a_transaction_can_load_their_children(db: Database) -> None:
    acme = Org(name="ACME")
    async with db.transaction() as tx:
        tx.put(acme)
        tx.put(WILE)
    assert await acme.users.all() == [WILE]
