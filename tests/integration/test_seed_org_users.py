"""Seeds 000 and 001: the access patterns, each in the number of requests the seeds promise."""

from __future__ import annotations

import pytest

from dynorm import Database, Request
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User

from .raw import raw_collection, raw_item, strings
from .seed import (
    AMAZON,
    BILLGATES,
    JEFFBEZOS,
    MICROSOFT,
    SATYANADELLA,
    TICKET_123,
    TICKET_456,
)

pytestmark = pytest.mark.integration


# -- the stored layout is the seed's table ------------------------------------------------------


async def test_stored_keys_are_the_seed_table(seeded: Database) -> None:
    rows = [
        ("ORG#MICROSOFT", "METADATA#MICROSOFT"),
        ("ORG#MICROSOFT", "USER#BILLGATES"),
        ("ORG#MICROSOFT", "USER#SATYANADELLA"),
        ("ORG#AMAZON", "METADATA#AMAZON"),
        ("ORG#AMAZON", "USER#JEFFBEZOS"),
    ]
    for pk, sk in rows:
        item = await raw_item(seeded, {"pk": pk, "sk": sk})
        assert item is not None, (pk, sk)
        assert strings(item, "pk", "sk") == (pk, sk)

    collection = await raw_collection(seeded, "pk", "ORG#MICROSOFT")
    assert [strings(i, "sk")[0] for i in collection] == [
        "METADATA#MICROSOFT",
        "USER#BILLGATES",
        "USER#SATYANADELLA",
    ]
    org = collection[0]
    assert org["plan_type"] == {"S": "Enterprise"}
    # Orgs are in no index collection: their templates give no GSI1 keys.
    assert strings(org, "GSI1PK", "GSI1SK") == (None, None)


async def test_stored_index_keys_are_the_seed_table(seeded: Database) -> None:
    ticket = await raw_item(seeded, {"pk": "TICKET#123", "sk": "TICKET#123"})
    assert ticket is not None
    assert strings(ticket, "GSI1PK", "GSI1SK") == ("ORG#MICROSOFT#USER#BILLGATES", "TICKET#123")
    assert ticket["created"] == {"S": "2023-09-05T22:31:54"}

    user = await raw_item(seeded, {"pk": "ORG#AMAZON", "sk": "USER#JEFFBEZOS"})
    assert user is not None
    assert strings(user, "GSI1PK", "GSI1SK") == ("ORG#AMAZON#USER#JEFFBEZOS", "USER#JEFFBEZOS")

    index = await raw_collection(seeded, "GSI1PK", "ORG#MICROSOFT#USER#BILLGATES", index="GSI1")
    assert [strings(i, "GSI1SK", "pk", "sk") for i in index] == [
        ("TICKET#123", "TICKET#123", "TICKET#123"),
        ("TICKET#456", "TICKET#456", "TICKET#456"),
        ("USER#BILLGATES", "ORG#MICROSOFT", "USER#BILLGATES"),
    ]
    # The seed's table repeats BILLGATES' index key on SATYANADELLA's row (a copy slip): each
    # user has an index collection of their own, so SATYANADELLA never joins BILLGATES' tickets.
    satya = await raw_collection(seeded, "GSI1PK", "ORG#MICROSOFT#USER#SATYANADELLA", index="GSI1")
    assert [strings(i, "GSI1SK")[0] for i in satya] == ["USER#SATYANADELLA"]


# -- seed 000: the four access patterns ---------------------------------------------------------


async def test_1_retrieve_an_organization_with_one_getitem(seeded: Database) -> None:
    with count_requests(seeded) as log:
        org = await seeded.get(Org, name="MICROSOFT")
    assert log.operations == ["GetItem"]
    assert org == MICROSOFT
    assert await seeded.get(Org, name="AMAZON") == AMAZON


async def test_2_retrieve_an_organization_and_its_users_with_one_query(seeded: Database) -> None:
    with count_requests(seeded) as log:
        org = await seeded.get(Org, name="MICROSOFT", load=[Org.users])
    assert log.operations == ["Query"]
    assert org == MICROSOFT
    assert org.users.is_loaded
    assert org.users.loaded == [BILLGATES, SATYANADELLA]
    assert all(type(u) is User for u in org.users.loaded)

    # The whole collection came in that one Query: iterating sends nothing more.
    with count_requests(seeded) as log:
        users = [u async for u in org.users]
    assert users == [BILLGATES, SATYANADELLA]
    assert len(log) == 0

    # Another organization's collection holds only its own user.
    amazon = await seeded.get(Org, name="AMAZON", load=[Org.users])
    assert amazon.users.loaded == [JEFFBEZOS]


async def test_2_plan_is_one_query_on_the_partition(seeded: Database) -> None:
    (request,) = seeded.explain.get(Org, name="MICROSOFT", load=[Org.users])
    assert request.operation == "Query"
    assert "IndexName" not in request.params
    assert request.params["ExpressionAttributeValues"][":pk"] == {"S": "ORG#MICROSOFT"}


async def test_2_unknown_organization_is_not_found_in_one_query(seeded: Database) -> None:
    with count_requests(seeded) as log, pytest.raises(LookupError):
        await seeded.get(Org, name="NOPE", load=[Org.users])
    assert log.operations == ["Query"]


async def test_3_retrieve_only_the_users_with_one_prefix_query(seeded: Database) -> None:
    query = seeded.query(User, org_name="MICROSOFT")
    (request,) = query.explain()
    assert request.operation == "Query"
    assert "begins_with(#sk, :sk)" in request.params["KeyConditionExpression"]
    assert request.params["ExpressionAttributeNames"]["#sk"] == "sk"
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "USER#"}
    assert request.params["ExpressionAttributeValues"][":pk"] == {"S": "ORG#MICROSOFT"}

    with count_requests(seeded) as log:
        users = await query.all()
    assert log.operations == ["Query"]
    assert users == [BILLGATES, SATYANADELLA]
    assert all(type(u) is User for u in users)


async def test_4_retrieve_a_specific_user_with_one_getitem(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(User, org_name="MICROSOFT", username="SATYANADELLA")
    assert log.operations == ["GetItem"]
    assert user == SATYANADELLA
    assert user.user_type == "Admin"


# -- seed 001: a user and the newest tickets, one Query on GSI1 ---------------------------------


async def test_user_and_newest_tickets_in_one_index_query(seeded: Database) -> None:
    (request,) = seeded.explain.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets]
    )
    assert request.operation == "Query"
    assert request.params["IndexName"] == "GSI1"
    assert request.params["ScanIndexForward"] is False
    assert request.params["ExpressionAttributeValues"][":pk"] == {
        "S": "ORG#MICROSOFT#USER#BILLGATES"
    }

    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == [TICKET_456, TICKET_123]
    assert all(type(t) is Ticket for t in user.tickets.loaded)


async def test_user_and_the_newest_ticket_in_one_index_query(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(1)]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == [TICKET_456]

    # The older ticket is still reachable, newest first, after the loaded one.
    with count_requests(seeded) as log:
        tickets = await user.tickets.all()
    assert tickets == [TICKET_456, TICKET_123]
    assert log.operations == ["Query"]


async def test_user_without_tickets_loads_an_empty_list(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="SATYANADELLA", load=[User.tickets]
        )
    assert log.operations == ["Query"]
    assert user == SATYANADELLA
    assert user.tickets.loaded == []


async def test_ticket_is_read_directly_by_its_own_key(seeded: Database) -> None:
    with count_requests(seeded) as log:
        ticket = await seeded.get(Ticket, ticket_id="456")
    assert log.operations == ["GetItem"]
    assert ticket == TICKET_456


# -- a table written by another tool: no type attribute, fields only inside the keys ------------


async def _put_raw(db: Database, item: dict[str, str]) -> None:
    await db.send(
        Request(
            "PutItem",
            {"TableName": db.table_name, "Item": {k: {"S": v} for k, v in item.items()}},
        )
    )


async def test_items_written_by_another_tool_map_by_their_keys(db: Database) -> None:
    await _put_raw(db, {"pk": "ORG#MICROSOFT", "sk": "METADATA#MICROSOFT", "plan_type": "Pro"})
    await _put_raw(db, {"pk": "ORG#MICROSOFT", "sk": "USER#BILLGATES"})
    await _put_raw(db, {"pk": "ORG#MICROSOFT", "sk": "USER#A%23B", "user_type": "Admin"})
    await _put_raw(db, {"pk": "ORG#MICROSOFT", "sk": "SOMETHING#ELSE"})  # no model of ours

    org = await db.get(Org, name="MICROSOFT", load=[Org.users])
    assert org == Org(name="MICROSOFT", plan_type="Pro")
    assert org.users.loaded == [
        User(org_name="MICROSOFT", username="A#B", user_type="Admin"),
        BILLGATES,
    ]
    assert await db.get(User, org_name="MICROSOFT", username="A#B") == org.users.loaded[0]
