"""Seed 004: an order and its items in one partition, and a user's posts (boto3-assist's example).

Stored keys exactly as the seed shows them (`order#xyz-789` / `item#item-001`); each of the
three access patterns is one request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import attrs
import pytest

from dynorm import Database, HasMany, Partition, Table
from dynorm.testing import Connect, count_requests

from .raw import raw_collection

pytestmark = pytest.mark.integration

table = Table("app-table", pk="pk", sk="sk")


@table.model(pk="order#{id}", sk="order#{id}")
@attrs.define
class Order:
    id: str
    user_id: str
    total: Decimal = Decimal(0)
    status: str = "pending"
    items = HasMany["OrderItem"]("OrderItem", via=Partition())


@table.model(pk="order#{order_id}", sk="item#{id}")
@attrs.define
class OrderItem:
    order_id: str
    id: str
    product_id: str
    quantity: int
    price: Decimal


@table.model(pk="user#{id}", sk="user#{id}")
@attrs.define
class User:
    id: str
    posts = HasMany["Post"]("Post", via=Partition())


@table.model(pk="user#{user_id}", sk="post#{id}")
@attrs.define
class Post:
    user_id: str
    id: str
    title: str


ORDER = Order("xyz-789", "user-123", Decimal("99.99"))
ITEMS = [
    OrderItem("xyz-789", "item-001", "prod-456", 2, Decimal("29.99")),
    OrderItem("xyz-789", "item-002", "prod-789", 1, Decimal("39.99")),
]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put(ORDER)
        for item in ITEMS:
            await database.add(ORDER, Order.items, item)
        await database.put_all(
            [User("alice"), Post("alice", "p1", "Hi"), Post("alice", "p2", "Yo")]
        )
        yield database


async def test_stored_keys_are_the_seeds(db: Database) -> None:
    stored = await raw_collection(db, "pk", "order#xyz-789")
    assert [(i["pk"]["S"], i["sk"]["S"]) for i in stored] == [
        ("order#xyz-789", "item#item-001"),
        ("order#xyz-789", "item#item-002"),
        ("order#xyz-789", "order#xyz-789"),
    ]
    assert stored[0]["quantity"] == {"N": "2"}
    assert stored[0]["price"] == {"N": "29.99"}


async def test_get_order_only_is_one_get_item(db: Database) -> None:
    with count_requests(db) as log:
        order = await db.get(Order, id="xyz-789")
    assert log.operations == ["GetItem"]
    assert order == ORDER


async def test_order_with_all_items_is_one_query(db: Database) -> None:
    # The order's sort key ("order#…") sorts after its items' ("item#…"): it rides at the end
    # of the same Query.
    with count_requests(db) as log:
        order = await db.get(Order, id="xyz-789", load=[Order.items])
    assert log.operations == ["Query"]
    assert order == ORDER
    assert order.items.loaded == ITEMS


async def test_items_only_is_one_query(db: Database) -> None:
    with count_requests(db) as log:
        items = await db.query(OrderItem, order_id="xyz-789").all()
    assert log.operations == ["Query"]
    assert items == ITEMS
    (request,) = db.explain.query(OrderItem, order_id="xyz-789")
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "item#"}


async def test_a_user_and_all_posts_is_one_query(db: Database) -> None:
    with count_requests(db) as log:
        user = await db.get(User, id="alice", load=[User.posts])
    assert log.operations == ["Query"]
    assert [p.id for p in user.posts.loaded] == ["p1", "p2"]
