"""Relationship loaders: no implicit I/O, explicit attachment, add/remove via the relationship."""

from __future__ import annotations

import pytest

import dynorm
from dynorm import Database
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User

from .raw import raw_item
from .seed import BILLGATES, JEFFBEZOS, MICROSOFT, SATYANADELLA, TICKET_123, TICKET_456

pytestmark = pytest.mark.integration

SATYA_TICKET = Ticket(
    ticket_id="789",
    org_name="MICROSOFT",
    username="SATYANADELLA",
    created=TICKET_456.created,
)


async def test_loaded_without_a_load_raises_and_sends_nothing(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT")
    with count_requests(seeded) as log:
        assert not org.users.is_loaded
        with pytest.raises(dynorm.NotLoadedError) as caught:
            _ = org.users.loaded
        assert "load=[Org.users]" in str(caught.value)
        assert isinstance(caught.value, AttributeError)
        repr(org.users)  # describing a loader reads nothing either
    assert len(log) == 0

    # Objects from queries and from other loads are in the same position.
    (user,) = await seeded.query(User, org_name="MICROSOFT", username="BILLGATES").all()
    with (
        count_requests(seeded) as log,
        pytest.raises(dynorm.NotLoadedError, match=r"User\.tickets"),
    ):
        _ = user.tickets.loaded
    assert len(log) == 0


async def test_loading_one_relationship_does_not_load_another(seeded: Database) -> None:
    user = await seeded.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(1)]
    )
    assert user.tickets.loaded == [TICKET_456]
    org = await seeded.get(Org, name="MICROSOFT")
    with pytest.raises(dynorm.NotLoadedError):
        _ = org.users.loaded


async def test_unloaded_children_are_read_only_when_asked(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT")
    with count_requests(seeded) as log:
        users = [u async for u in org.users]
    assert users == [BILLGATES, SATYANADELLA]
    assert log.operations == ["Query"]
    with count_requests(seeded) as log:
        assert await org.users.all() == users
        assert (await org.users.page(limit=1)).items == [BILLGATES]
    assert log.operations == ["Query", "Query"]
    # Reading did not turn the relationship into loaded data.
    with pytest.raises(dynorm.NotLoadedError):
        _ = org.users.loaded


async def test_a_model_built_in_code_is_detached_until_attached(seeded: Database) -> None:
    org = Org(name="MICROSOFT", plan_type="Enterprise")
    with count_requests(seeded) as log:
        with pytest.raises(dynorm.DetachedError, match=r"db\.attach"):
            async for _ in org.users:
                pass
        with pytest.raises(dynorm.DetachedError):
            await org.users.all()
        with pytest.raises(dynorm.DetachedError):
            await org.users.page(limit=1)
        with pytest.raises(dynorm.NotLoadedError):
            _ = org.users.loaded
    assert len(log) == 0

    assert seeded.attach(org) is org
    with count_requests(seeded) as log:
        users = [u async for u in org.users]
    assert users == [BILLGATES, SATYANADELLA]
    assert log.operations == ["Query"]


async def test_a_model_put_through_the_database_is_attached(db: Database) -> None:
    org = Org(name="ACME")
    await db.put(org)
    assert await org.users.all() == []


async def test_an_equal_object_is_not_attached_by_its_twin(seeded: Database) -> None:
    await seeded.get(Org, name="MICROSOFT")  # attaches that instance, not every equal one
    twin = Org(name="MICROSOFT", plan_type="Enterprise")
    with pytest.raises(dynorm.DetachedError):
        await twin.users.all()


async def test_add_writes_one_item(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT")
    satya2 = User(org_name="MICROSOFT", username="SATYA")
    with count_requests(seeded) as log:
        added = await seeded.add(org, Org.users, satya2)
    assert log.operations == ["PutItem"]
    assert added == satya2
    item = await raw_item(seeded, {"pk": "ORG#MICROSOFT", "sk": "USER#SATYA"})
    assert item is not None
    assert await org.users.all() == [BILLGATES, satya2, SATYANADELLA]


async def test_add_keeps_loaded_children_current(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT", load=[Org.users])
    satya2 = User(org_name="MICROSOFT", username="SATYA")
    await seeded.add(org, Org.users, satya2)
    assert satya2 in org.users.loaded
    assert await org.users.all() == [*org.users.loaded]
    assert sorted(u.username for u in await org.users.all()) == [
        "BILLGATES",
        "SATYA",
        "SATYANADELLA",
    ]


async def test_add_through_an_index_relationship(seeded: Database) -> None:
    satya = await seeded.get(User, org_name="MICROSOFT", username="SATYANADELLA")
    with count_requests(seeded) as log:
        await seeded.add(satya, User.tickets, SATYA_TICKET)
    assert log.operations == ["PutItem"]
    again = await seeded.get(
        User, org_name="MICROSOFT", username="SATYANADELLA", load=[User.tickets]
    )
    assert again.tickets.loaded == [SATYA_TICKET]


async def test_add_refuses_a_child_of_another_parent_before_sending(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT")
    bill = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES")
    with count_requests(seeded) as log:
        with pytest.raises(dynorm.DynormError, match="AMAZON"):
            await seeded.add(org, Org.users, User(org_name="AMAZON", username="ANDY"))
        with pytest.raises(dynorm.DynormError, match="SATYANADELLA"):
            await seeded.add(bill, User.tickets, SATYA_TICKET)
        with pytest.raises(TypeError):
            await seeded.add(org, Org.users, MICROSOFT)  # type: ignore[misc]
        with pytest.raises(dynorm.DynormError):
            await seeded.add(org, User.tickets, SATYA_TICKET)  # type: ignore[misc]  # not a relationship of Org
    assert len(log) == 0
    assert await raw_item(seeded, {"pk": "ORG#AMAZON", "sk": "USER#ANDY"}) is None
    assert await raw_item(seeded, {"pk": "TICKET#789", "sk": "TICKET#789"}) is None


async def test_remove_deletes_the_child(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT", load=[Org.users])
    with count_requests(seeded) as log:
        await seeded.remove(org, Org.users, BILLGATES)
    assert log.operations == ["DeleteItem"]
    assert org.users.loaded == [SATYANADELLA]
    assert await raw_item(seeded, {"pk": "ORG#MICROSOFT", "sk": "USER#BILLGATES"}) is None
    assert await org.users.all() == [SATYANADELLA]
    # Only the child went: the parent and the other org are untouched.
    assert await seeded.get(Org, name="MICROSOFT") == MICROSOFT
    amazon = await seeded.get(Org, name="AMAZON", load=[Org.users])
    assert amazon.users.loaded == [JEFFBEZOS]


async def test_remove_through_an_index_relationship(seeded: Database) -> None:
    bill = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    await seeded.remove(bill, User.tickets, TICKET_123)
    assert bill.tickets.loaded == [TICKET_456]
    assert await raw_item(seeded, {"pk": "TICKET#123", "sk": "TICKET#123"}) is None
    assert await bill.tickets.all() == [TICKET_456]


async def test_remove_refuses_a_child_of_another_parent_before_sending(seeded: Database) -> None:
    org = await seeded.get(Org, name="MICROSOFT")
    with count_requests(seeded) as log, pytest.raises(dynorm.DynormError, match="AMAZON"):
        await seeded.remove(org, Org.users, JEFFBEZOS)
    assert len(log) == 0
    assert await seeded.get(User, org_name="AMAZON", username="JEFFBEZOS") == JEFFBEZOS
