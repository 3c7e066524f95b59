"""Seed 004 — an order and its items in one partition (boto3-assist's one-to-many example).

| pk              | sk              |
|-----------------|-----------------|
| order#xyz-789   | order#xyz-789   |
| order#xyz-789   | item#item-001   |
"""

from __future__ import annotations

from decimal import Decimal

from common import Narrator, run

from dynorm import HasMany, Partition, Table

table = Table("app-table", pk="pk", sk="sk")


@table.model(pk="order#{id}", sk="order#{id}")
class Order:
    id: str
    user_id: str
    total: Decimal = Decimal("0")
    status: str = "pending"
    items = HasMany["OrderItem"](via=Partition())


@table.model(pk="order#{order_id}", sk="item#{id}")
class OrderItem:
    order_id: str
    id: str
    product_id: str
    quantity: int
    price: Decimal


async def scenario(tour: Narrator) -> None:
    db = tour.db
    order = Order("xyz-789", "user-123", Decimal("99.99"))
    await db.put(order)
    await db.add(
        order, Order.items, OrderItem("xyz-789", "item-001", "prod-456", 2, Decimal("29.99"))
    )
    await db.add(
        order, Order.items, OrderItem("xyz-789", "item-002", "prod-789", 1, Decimal("39.99"))
    )

    await tour.step("004.1 Get the order only (GetItem)", lambda: db.get(Order, id="xyz-789"))

    async def order_with_items() -> object:
        found = await db.get(Order, id="xyz-789", load=[Order.items])
        return {"order": found, "items": found.items.loaded}

    await tour.step("004.2 Get the order WITH all its items (1 Query)", order_with_items)
    await tour.step(
        "004.3 Get the items only (begins_with(sk, 'item#'))",
        lambda: db.query(OrderItem, order_id="xyz-789").all(),
    )


if __name__ == "__main__":
    run(scenario, table)
