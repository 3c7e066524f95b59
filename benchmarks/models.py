"""dynorm's models for the benchmark data (``data.py``): seed 004's order and items, richer."""

from __future__ import annotations

from decimal import Decimal
from typing import ClassVar

import attrs

from benchmarks import data
from dynorm import HasMany, Partition, Table

table = Table(data.TABLE, pk="pk", sk="sk")


@attrs.define
class Dimensions:
    """The nested map of an order item."""

    width_cm: float
    height_cm: float
    depth_cm: float
    weight_kg: float
    color: str


@table.model(pk="order#{id}", sk="order#{id}")
@attrs.define
class Order:
    """The parent: its items share its partition."""

    id: str
    user_id: str
    status: str = "pending"
    currency: str = "EUR"
    total: Decimal = Decimal(0)
    item_count: int = 0
    express: bool = False
    items: ClassVar[HasMany[OrderItem]] = HasMany("OrderItem", via=Partition())


@table.model(pk="order#{order_id}", sk="item#{id}")
@attrs.define
class OrderItem:
    """One line of an order."""

    order_id: str
    id: str
    product_id: str
    name: str
    quantity: int
    price: Decimal
    gift_wrap: bool
    backordered: bool
    tags: list[str]
    dimensions: Dimensions


def order(order_id: str = data.ORDER_ID) -> Order:
    """An Order built in code (attach it to a Database to read its items)."""
    return Order(id=order_id, user_id=data.USER_ID)
