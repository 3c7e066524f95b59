"""``Index("GSI1")``: parent and children share an index collection (seed 001).

Tickets live in their own partitions (``TICKET#<id>``); in GSI1 they share the collection
``ORG#<org>#USER#<user>`` with their user, whose item sorts last, so a user and the newest
tickets come back in one Query read backwards.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
    HasMany,
    Index,
    KeyTemplateError,
    NotLoadedError,
    Partition,
    Table,
)
from dynorm.testing import Connect, count_requests

from .raw import raw_collection, raw_item, strings

pytestmark = pytest.mark.integration

table = Table(
    "rel-index",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
)


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    users = HasMany["User"]("User", via=Partition())


@table.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    GSI1=("ORG#{org_name}#USER#{username}", "USER#{username}"),
)
@attrs.define
class User:
    org_name: str
    username: str
    user_type: str = "Member"
    tickets = HasMany["Ticket"]("Ticket", via=Index("GSI1"), newest_first=True)
    notes = HasMany["Note"]("Note", via=Index("GSI1"), newest_first=True)


@table.model(
    pk="TICKET#{ticket_id}",
    sk="TICKET#{ticket_id}",
    GSI1=("ORG#{org_name}#USER#{username}", "TICKET#{ticket_id}"),
    # Sparse: only open tickets are in GSI2 (the user is not in it at all).
    GSI2=("OPEN#{org_name}#USER#{username}", "TICKET#{opened}#{ticket_id}"),
)
@attrs.define
class Ticket:
    ticket_id: str
    org_name: str
    username: str
    created: datetime.datetime
    opened: str | None = None


@table.model(
    pk="NOTE#{note_id}",
    sk="NOTE#{note_id}",
    GSI1=("ORG#{org_name}#USER#{username}", "NOTE#{note_id}"),
)
@attrs.define
class Note:
    note_id: str
    org_name: str
    username: str
    text: str = ""


BILLGATES = User("MICROSOFT", "BILLGATES")
SATYA = User("MICROSOFT", "SATYANADELLA", user_type="Admin")


def ticket(ticket_id: str, username: str = "BILLGATES", opened: str | None = None) -> Ticket:
    year = 2020 + int(ticket_id) % 10
    created = datetime.datetime(year, 9, 5, 22, 31, 54)
    return Ticket(ticket_id, "MICROSOFT", username, created, opened)


# Ticket ids grow with time, so GSI1SK order is age order (seed 001: TICKET#123 < TICKET#456).
TICKETS = [ticket("123"), ticket("456"), ticket("501"), ticket("502"), ticket("503")]
NEWEST_FIRST = TICKETS[::-1]
NOTES = [Note("n1", "MICROSOFT", "BILLGATES", "first"), Note("n2", "MICROSOFT", "BILLGATES")]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


@pytest.fixture
async def seeded(db: Database) -> Database:
    await db.put_all(
        [Org("MICROSOFT"), BILLGATES, SATYA, *TICKETS, *NOTES, ticket("900", "SATYANADELLA")]
    )
    return db


async def get_bill(db: Database) -> User:
    return await db.get(User, org_name="MICROSOFT", username="BILLGATES")


# -- layout ---------------------------------------------------------------------------------------


async def test_tickets_have_own_partitions_and_the_user_sorts_last_in_gsi1(
    seeded: Database,
) -> None:
    item = await raw_item(seeded, {"pk": "TICKET#123", "sk": "TICKET#123"})
    assert item is not None
    assert strings(item, "GSI1PK", "GSI1SK") == ("ORG#MICROSOFT#USER#BILLGATES", "TICKET#123")
    index = await raw_collection(seeded, "GSI1PK", "ORG#MICROSOFT#USER#BILLGATES", index="GSI1")
    assert [strings(i, "GSI1SK")[0] for i in index] == [
        "NOTE#n1",
        "NOTE#n2",
        *(f"TICKET#{t.ticket_id}" for t in TICKETS),
        "USER#BILLGATES",
    ]


# -- loading --------------------------------------------------------------------------------------


async def test_user_and_newest_tickets_in_one_query_on_gsi1(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == NEWEST_FIRST
    (request,) = seeded.explain.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets]
    )
    assert request.params["IndexName"] == "GSI1"
    assert request.params["ScanIndexForward"] is False


async def test_user_and_the_newest_ticket_in_one_query(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(2)]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == NEWEST_FIRST[:2]


async def test_loaded_before_a_load_raises(seeded: Database) -> None:
    user = await get_bill(seeded)
    with pytest.raises(NotLoadedError, match=r"User\.tickets"):
        _ = user.tickets.loaded


async def test_async_for_yields_loaded_then_the_rest_each_once(seeded: Database) -> None:
    user = await seeded.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(2)]
    )
    seen: list[Ticket] = []
    sent_before: list[int] = []
    with count_requests(seeded) as log:
        async for t in user.tickets:
            sent_before.append(len(log))
            seen.append(t)
    assert seen == NEWEST_FIRST
    assert sent_before[:2] == [0, 0]
    assert log.operations == ["Query"]


async def test_page_counts_tickets_only(seeded: Database) -> None:
    user = await get_bill(seeded)
    pages: list[list[Ticket]] = []
    cursor: str | None = None
    with count_requests(seeded) as log:
        while True:
            page = await user.tickets.page(limit=2, cursor=cursor)
            pages.append(page.items)
            cursor = page.cursor
            if cursor is None:
                break
    assert pages == [NEWEST_FIRST[0:2], NEWEST_FIRST[2:4], NEWEST_FIRST[4:]]
    assert log.operations == ["Query"] * 3


async def test_other_users_tickets_never_appear(seeded: Database) -> None:
    satya = await seeded.get(
        User, org_name="MICROSOFT", username="SATYANADELLA", load=[User.tickets]
    )
    assert [t.ticket_id for t in satya.tickets.loaded] == ["900"]
    bill = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    assert "900" not in {t.ticket_id for t in bill.tickets.loaded}


async def test_relationships_sharing_the_index_collection_cost_one_query(
    seeded: Database,
) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets, User.notes]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == NEWEST_FIRST
    assert user.notes.loaded == NOTES[::-1]


# -- per-call override ----------------------------------------------------------------------------


async def test_using_another_index_for_one_call(db: Database) -> None:
    open_ones = [ticket("601", opened="2024-01-02"), ticket("602", opened="2024-03-04")]
    await db.put_all([BILLGATES, *TICKETS, *open_ones])
    option = User.tickets.using(Index("GSI2"))
    with count_requests(db) as log:
        user = await db.get(User, org_name="MICROSOFT", username="BILLGATES", load=[option])
    # The user is not in GSI2, so its GetItem runs beside the Query.
    assert sorted(log.operations) == ["GetItem", "Query"]
    assert user == BILLGATES
    # GSI2 is sparse: only open tickets, newest opened first.
    assert user.tickets.loaded == open_ones[::-1]
    requests = db.explain.get(User, org_name="MICROSOFT", username="BILLGATES", load=[option])
    assert {r.params.get("IndexName") for r in requests} == {None, "GSI2"}

    # The declaration is unchanged.
    again = await db.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    assert len(again.tickets.loaded) == len(TICKETS) + len(open_ones)


# -- queries through the index --------------------------------------------------------------------


async def test_query_tickets_of_a_user_on_the_index(seeded: Database) -> None:
    with count_requests(seeded) as log:
        found = await seeded.query(
            Ticket, index="GSI1", org_name="MICROSOFT", username="BILLGATES"
        ).all()
    assert log.operations == ["Query"]
    assert found == TICKETS


# -- writes ---------------------------------------------------------------------------------------


async def test_add_is_one_put_into_the_index_collection(seeded: Database) -> None:
    user = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    new = ticket("777")
    with count_requests(seeded) as log:
        stored = await seeded.add(user, User.tickets, new)
    assert log.operations == ["PutItem"]
    assert stored == new
    item = await raw_item(seeded, {"pk": "TICKET#777", "sk": "TICKET#777"})
    assert item is not None
    assert strings(item, "GSI1PK", "GSI1SK") == ("ORG#MICROSOFT#USER#BILLGATES", "TICKET#777")
    fresh = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    assert fresh.tickets.loaded[0] == new


async def test_add_refuses_a_ticket_of_another_user_before_sending(seeded: Database) -> None:
    user = await get_bill(seeded)
    with count_requests(seeded) as log, pytest.raises(KeyTemplateError, match="SATYANADELLA"):
        await seeded.add(user, User.tickets, ticket("778", "SATYANADELLA"))
    assert len(log) == 0
    assert await raw_item(seeded, {"pk": "TICKET#778", "sk": "TICKET#778"}) is None


async def test_remove_is_one_delete(seeded: Database) -> None:
    user = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    with count_requests(seeded) as log:
        await seeded.remove(user, User.tickets, TICKETS[0])
    assert log.operations == ["DeleteItem"]
    assert await raw_item(seeded, {"pk": "TICKET#123", "sk": "TICKET#123"}) is None
    assert user.tickets.loaded == NEWEST_FIRST[:-1]
    assert await user.tickets.all() == NEWEST_FIRST[:-1]


async def test_remove_refuses_a_ticket_of_another_user_before_sending(seeded: Database) -> None:
    user = await get_bill(seeded)
    with count_requests(seeded) as log, pytest.raises(KeyTemplateError, match="another parent"):
        await seeded.remove(user, User.tickets, ticket("900", "SATYANADELLA"))
    assert len(log) == 0
    assert await raw_item(seeded, {"pk": "TICKET#900", "sk": "TICKET#900"}) is not None
