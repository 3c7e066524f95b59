"""db.query(..., load=[...]): parents whose full key is not known, with their children.

Children that share the queried collection come with the same Query; other relationships are
loaded for each page's parents as db.load does. ``limit=N`` counts parents.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    BelongsTo,
    Database,
    DefinitionError,
    ExpressionError,
    HasMany,
    Index,
    Partition,
    Relationship,
    Table,
    gt,
    lt,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("query-load", pk="PK", sk="SK", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# An order's sort key holds its customer: db.get cannot address it without knowing the customer.
@table.model(
    pk="ORDER#{order_id}",
    sk="CUSTOMER#{customer_id}",
    GSI1=("ORDER#{order_id}", "#ORDER#{order_id}"),
)
@attrs.define
class Order:
    order_id: str
    customer_id: str
    items = HasMany["Item"]("Item", via=Partition())
    notes = HasMany["Note"]("Note", via=Partition())
    shipments = HasMany["Shipment"]("Shipment", via=Index("GSI1"))
    customer = BelongsTo["Customer"]("Customer", key={"customer_id": "customer_id"})


@table.model(pk="ORDER#{order_id}", sk="ITEM#{n:03d}")
@attrs.define
class Item:
    order_id: str
    n: int
    body: str = ""


@table.model(pk="ORDER#{order_id}", sk="NOTE#{n:03d}")
@attrs.define
class Note:
    order_id: str
    n: int


@table.model(
    pk="SHIPMENT#{ship_id}", sk="SHIPMENT#{ship_id}", GSI1=("ORDER#{order_id}", "SHIP#{ship_id}")
)
@attrs.define
class Shipment:
    ship_id: str
    order_id: str


@table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
@attrs.define
class Customer:
    customer_id: str
    name: str = ""


# A hierarchy: carts of a shop, each cart's lines sorted right after it.
@table.model(pk="SHOP#{shop}", sk="CART#{cart_id}")
@attrs.define
class Cart:
    shop: str
    cart_id: str
    lines = HasMany["Line"]("Line", via=Partition())


@table.model(pk="SHOP#{shop}", sk="CART#{cart_id}#LINE#{n:03d}")
@attrs.define
class Line:
    shop: str
    cart_id: str
    n: int


ORDER = Order("1", "c9")
ITEMS = [Item("1", n) for n in range(3)]
NOTES = [Note("1", n) for n in range(2)]
CARTS = [Cart("s", c) for c in "abc"]
LINES = {c.cart_id: [Line("s", c.cart_id, n) for n in range(2)] for c in CARTS}
BODY = "x" * 4000  # ~4 KB an item: 300 items are more than one 1 MB page


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def test_a_parent_and_two_kinds_of_children_in_one_query(db: Database) -> None:
    await db.put_all([ORDER, *ITEMS, *NOTES, Order("2", "c9"), Item("2", 0)])
    query = db.query(Order, order_id="1", load=[Order.items, Order.notes])
    with count_requests(db) as log:
        (order,) = await query.all()
    assert log.operations == ["Query"]
    assert order == ORDER
    assert order.items.loaded == ITEMS
    assert order.notes.loaded == NOTES
    with count_requests(db) as log:
        assert await order.items.all() == ITEMS  # the load reached the end: nothing to read
    assert len(log) == 0


async def test_explain_shows_the_widened_query_and_each_cost(db: Database) -> None:
    load: list[Relationship[Any]] = [
        Order.items,
        Order.notes,
        Order.customer,
        Order.shipments,
    ]
    query = db.query(Order, order_id="1", load=load)
    condition = query.explain()[0].params["KeyConditionExpression"]
    assert condition == "#pk = :pk AND #sk BETWEEN :sk AND :sk2"
    values = query.explain()[0].params["ExpressionAttributeValues"]
    assert (values[":sk"], values[":sk2"]) == ({"S": "CUSTOMER#"}, {"S": "NOTE$"})
    assert db.explain.query(Order, order_id="1", load=load) == query.explain()
    assert query.load_costs() == {
        "Order.items": "in the same Query",
        "Order.notes": "in the same Query",
        "Order.customer": "one BatchGetItem per 100 distinct parents of a page",
        "Order.shipments": "one Query per parent of a page, run concurrently",
    }
    assert db.query(Order, order_id="1").load_costs() == {}


async def test_other_collections_load_per_page(db: Database) -> None:
    await db.put_all([ORDER, *ITEMS, Customer("c9", "Ann"), Shipment("s1", "1")])
    query = db.query(Order, order_id="1", load=[Order.items, Order.customer, Order.shipments])
    with count_requests(db) as log:
        (order,) = await query.all()
    # The shared Query; then the customer by key and the shipments' own Query, side by side.
    assert sorted(log.operations) == ["BatchGetItem", "Query", "Query"]
    assert log.operations[0] == "Query"
    assert order.items.loaded == ITEMS
    assert order.customer.loaded == Customer("c9", "Ann")
    assert order.shipments.loaded == [Shipment("s1", "1")]


async def test_a_page_counts_parents_and_brings_their_children(db: Database) -> None:
    await db.put_all([*CARTS, *(line for lines in LINES.values() for line in lines)])
    query = db.query(Cart, shop="s", load=[Cart.lines])
    with count_requests(db) as log:
        first = await query.page(limit=2)
        second = await query.page(limit=2, cursor=first.cursor)
    assert log.operations == ["Query", "Query"]
    assert first.items == CARTS[:2]
    assert second.items == CARTS[2:]
    assert second.cursor is None
    for cart in [*first.items, *second.items]:
        assert cart.lines.loaded == LINES[cart.cart_id]
    with count_requests(db) as log:
        assert [c.cart_id async for c in query] == ["a", "b", "c"]
        assert (await query.first()) == CARTS[0]
    assert log.operations == ["Query", "Query"]


async def test_a_parent_given_whole_reads_only_its_own_range(db: Database) -> None:
    await db.put_all([*CARTS, *(line for lines in LINES.values() for line in lines)])
    query = db.query(Cart, shop="s", cart_id="b", load=[Cart.lines.limit(1)])
    values = query.explain()[0].params["ExpressionAttributeValues"]
    assert (values[":sk"], values[":sk2"]) == ({"S": "CART#b"}, {"S": "CART#b#LINE$"})
    with count_requests(db) as log:
        (cart,) = await query.all()
    assert log.operations == ["Query"]
    assert cart.lines.loaded == LINES["b"][:1]
    assert await cart.lines.all() == LINES["b"]


async def test_children_past_the_page_end_continue_lazily(db: Database) -> None:
    every_item = [Item("1", n, BODY) for n in range(300)]
    await db.put_all([ORDER, *every_item, *NOTES])
    query = db.query(Order, order_id="1", load=[Order.items, Order.notes])
    with count_requests(db) as log:
        page = await query.page(limit=1)
    assert log.operations == ["Query"]  # the order came first; one 1 MB page of its children
    (order,) = page.items
    loaded = order.items.loaded
    assert 0 < len(loaded) < 300
    assert loaded == every_item[: len(loaded)]
    assert order.notes.loaded == []  # not reached: read when iterated
    with count_requests(db) as log:
        assert [i async for i in order.items] == every_item
    assert log.operations == ["Query"]  # the rest, from where the page ended
    assert [n async for n in order.notes] == NOTES


async def test_a_limited_load_reads_on_until_it_has_its_children(db: Database) -> None:
    every_item = [Item("1", n, BODY) for n in range(300)]
    await db.put_all([ORDER, *every_item, *NOTES])
    query = db.query(Order, order_id="1", load=[Order.items, Order.notes.limit(2)])
    with count_requests(db) as log:
        (order,) = (await query.page(limit=1)).items
    assert log.operations == ["Query", "Query"]  # the notes were past the page: their own read
    assert order.notes.loaded == NOTES


async def test_a_relationship_of_another_model_is_refused_before_sending(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(DefinitionError, match="relationships of Order"):
        db.query(Order, order_id="1", load=[Cart.lines])  # type: ignore[misc]
    assert len(log) == 0


async def test_an_excluded_bound_stays_out_with_loads(db: Database) -> None:
    await db.put_all([*CARTS, *(line for lines in LINES.values() for line in lines)])
    query = db.query(Cart, shop="s", cart_id=gt("a"), load=[Cart.lines])
    carts = await query.all()
    assert carts == CARTS[1:]  # gt("a"): cart a is the bound, not a match
    assert [c.lines.loaded for c in carts] == [LINES["b"], LINES["c"]]
    query = db.query(Cart, shop="s", cart_id=lt("c"), load=[Cart.lines])
    assert await query.all() == CARTS[:2]


async def test_pages_with_loads_report_what_was_scanned(db: Database) -> None:
    await db.put_all([*CARTS, *(line for lines in LINES.values() for line in lines)])
    page = await db.query(Cart, shop="s", load=[Cart.lines]).with_capacity().page()
    assert page.scanned == 9  # three carts and six lines
    assert page.consumed is not None


async def test_a_filter_with_shared_loads_is_refused_before_sending(db: Database) -> None:
    query = db.query(Cart, shop="s", load=[Cart.lines])
    with count_requests(db) as log, pytest.raises(ExpressionError, match=r"db\.load"):
        query.filter(Attr("cart_id") == "b")
    assert len(log) == 0
