"""``query(..., load=[...]).explain()`` shows what the load sends for each parent it finds.

The parents' Query comes first; then, for each parent a page returns, the requests that read the
relationships not read by that Query (another collection, a shard, another table), with the
values each parent gives shown as ``FromRead`` placeholders. Nothing is sent: the Database
points at a closed port (tests/integration/test_matrix.py compares these with what is sent).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import attrs
import pytest

from dynorm import (
    GSI,
    BelongsTo,
    Database,
    Embedded,
    FromRead,
    HasMany,
    Index,
    Partition,
    Request,
    Table,
    connect,
)

app = Table(
    "load-explain",
    pk="pk",
    sk="sk",
    indexes=[
        GSI("GSI1", pk="GSI1PK", sk="GSI1SK"),
        GSI("KEYS", pk="K1PK", sk="K1SK", projection="KEYS_ONLY"),
    ],
)
audit = Table("load-explain-audit", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="g1pk", sk="g1sk")])


@attrs.define
class Address:
    nickname: str
    city: str


@app.model(pk="SHOP#{shop}", sk="CUSTOMER#{cid}")
@attrs.define
class Customer:
    shop: str
    cid: str
    orders: ClassVar[HasMany[Any]] = HasMany("Order", via=Index("GSI1"))
    notes: ClassVar[HasMany[Any]] = HasMany("Note", via=Partition(shards=3))
    visits: ClassVar[HasMany[Any]] = HasMany("Visit", via=Index("KEYS"))
    lines: ClassVar[HasMany[Any]] = HasMany("Line", via=Partition())
    addresses: ClassVar[HasMany[Any]] = HasMany(Address, via=Embedded(key="nickname"))
    events: ClassVar[HasMany[Any]] = HasMany("Event", via=Index("GSI1"))


@app.model(pk="ORDER#{oid}", sk="ORDER#{oid}", GSI1=("CUSTOMER#{cid}", "ORDER#{oid}"))
@attrs.define
class Order:
    oid: str
    cid: str
    total: int = 0
    customer: ClassVar[BelongsTo[Any]] = BelongsTo(Customer, key={"shop": "shop", "cid": "cid"})
    shop: str = "s1"


@app.model(pk="NOTES#{cid}#{shard}", sk="NOTE#{n}")
@attrs.define
class Note:
    cid: str
    n: str


@app.model(pk="VISIT#{vid}", sk="VISIT#{vid}", KEYS=("CUSTOMER#{cid}", "VISIT#{vid}"))
@attrs.define
class Visit:
    vid: str
    cid: str
    where: str = ""


@app.model(pk="SHOP#{shop}", sk="CUSTOMER#{cid}#LINE#{n}")
@attrs.define
class Line:
    shop: str
    cid: str
    n: str


@audit.model(pk="EVENT#{eid}", sk="EVENT#{eid}", GSI1=("CUSTOMER#{cid}", "EVENT#{eid}"))
@attrs.define
class Event:
    eid: str
    cid: str


@pytest.fixture
async def db() -> AsyncIterator[Database]:
    async with connect(
        app,
        audit,
        endpoint_url="http://127.0.0.1:1",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        table_names={app: "app", audit: "audit-prod"},
    ) as database:
        yield database


def each_customer(template: str) -> FromRead:
    return FromRead(f"{template!r} for each Customer read")


PARENTS = Request(
    "Query",
    {
        "TableName": "app",
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
        "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
        "ExpressionAttributeValues": {":pk": {"S": "SHOP#s1"}, ":sk": {"S": "CUSTOMER#"}},
    },
)


def values(request: Request) -> dict[str, Any]:
    return dict(request.params["ExpressionAttributeValues"])


def test_children_in_an_index_are_queried_for_each_parent(db: Database) -> None:
    query = db.query(Customer, shop="s1", load=[Customer.orders])
    first, each = query.explain()
    assert first.operation == "Query"
    assert first.params["ExpressionAttributeValues"] == {
        ":pk": {"S": "SHOP#s1"},
        ":sk": {"S": "CUSTOMER#"},
    }
    assert each.operation == "Query"
    assert each.params["IndexName"] == "GSI1"
    assert values(each) == {":pk": each_customer("CUSTOMER#<Customer.cid>"), ":sk": {"S": "ORDER#"}}
    # Loggable: the placeholder is a JSON object saying where the value comes from.
    shown = json.loads(json.dumps([dict(r.params) for r in query.explain()]))
    assert shown[1]["ExpressionAttributeValues"][":pk"] == {
        "from_read": "'CUSTOMER#<Customer.cid>' for each Customer read"
    }
    # db.explain.query and the query's own explain agree; requests() adds nothing here.
    assert db.explain.query(Customer, shop="s1", load=[Customer.orders]) == [first, each]
    assert query.requests() == [first, each]


def test_a_sharded_relationship_is_one_query_a_shard_for_each_parent(db: Database) -> None:
    first, *each = db.query(Customer, shop="s1", load=[Customer.notes]).explain()
    assert first == PARENTS
    assert [values(r)[":pk"] for r in each] == [
        each_customer(f"NOTES#<Customer.cid>#{shard}") for shard in range(3)
    ]
    assert {r.params["TableName"] for r in each} == {"app"}
    costs = db.query(Customer, shop="s1", load=[Customer.notes]).load_costs()
    assert costs == {
        "Customer.notes": "3 Queries per parent of a page (one a shard), run concurrently"
    }


def test_children_the_parents_query_reads_add_nothing(db: Database) -> None:
    (shared,) = db.query(Customer, shop="s1", load=[Customer.lines]).explain()
    assert values(shared)[":pk"] == {"S": "SHOP#s1"}  # one Query, its range widened
    (only,) = db.query(Customer, shop="s1", load=[Customer.addresses]).explain()
    assert only == PARENTS  # embedded children come inside each parent


def test_an_index_holding_the_children_in_part_reads_them_whole(db: Database) -> None:
    _, visits, whole = db.query(Customer, shop="s1", load=[Customer.visits]).explain()
    assert visits.params["IndexName"] == "KEYS"
    assert whole == Request("BatchGetItem", {"RequestItems": {"app": {"Keys": []}}})


def test_another_tables_children_are_read_under_its_connected_name(db: Database) -> None:
    _, events = db.query(Customer, shop="s1", load=[Customer.events]).explain()
    assert events.params["TableName"] == "audit-prod"
    assert values(events)[":pk"] == each_customer("CUSTOMER#<Customer.cid>")
    assert db.explain.query(Customer, shop="s1", load=[Customer.events])[1] == events


def test_belongs_to_parents_are_one_batch_get_of_the_keys_the_page_gives(db: Database) -> None:
    first, fetch = db.query(Order, index="GSI1", cid="c1", load=[Order.customer]).explain()
    assert first.params["IndexName"] == "GSI1"
    assert fetch == Request(
        "BatchGetItem",
        {"RequestItems": {"app": {"Keys": [FromRead("the Customer key of each Order read")]}}},
    )


def test_the_requests_follow_in_the_order_the_load_sends_them(db: Database) -> None:
    load = [Customer.notes, Customer.orders, Customer.lines, Customer.addresses]
    explained = db.query(Customer, shop="s1", load=load).explain()
    assert [r.params.get("IndexName") for r in explained] == [None, None, None, None, "GSI1"]
    assert [json.dumps(values(r)[":pk"]) for r in explained[1:]] == [
        json.dumps(each_customer(t))
        for t in (
            "NOTES#<Customer.cid>#0",
            "NOTES#<Customer.cid>#1",
            "NOTES#<Customer.cid>#2",
            "CUSTOMER#<Customer.cid>",
        )
    ]
    costs = db.query(Customer, shop="s1", load=load).load_costs()
    assert costs["Customer.lines"] == "in the same Query"
