"""PynamoDB (synchronous) with a model equivalent to dynorm's, run directly on the loop's thread.

PynamoDB has no mixed-collection decoding without a discriminator attribute, so one model holds
the order's and the items' attributes (the usual single-table PynamoDB model); every row of the
page becomes an instance. Credentials come from the environment, as PynamoDB users set them.
"""

from __future__ import annotations

import os
from typing import Any

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.models import Model

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY

_ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


class Dimensions(MapAttribute[str, Any]):
    """The nested map of an order item."""

    width_cm = NumberAttribute()
    height_cm = NumberAttribute()
    depth_cm = NumberAttribute()
    weight_kg = NumberAttribute()
    color = UnicodeAttribute()


def _model(url: str) -> type[Model]:
    # A class per setup: PynamoDB caches the connection (and so the host) on the model class.
    class OrderRow(Model):
        class Meta:
            table_name = data.TABLE
            host = url
            region = REGION

        pk = UnicodeAttribute(hash_key=True)
        sk = UnicodeAttribute(range_key=True)
        id = UnicodeAttribute()
        # order items
        order_id = UnicodeAttribute(null=True)
        product_id = UnicodeAttribute(null=True)
        name = UnicodeAttribute(null=True)
        quantity = NumberAttribute(null=True)
        price = NumberAttribute(null=True)
        gift_wrap = BooleanAttribute(null=True)
        backordered = BooleanAttribute(null=True)
        tags = ListAttribute(of=UnicodeAttribute, null=True)
        dimensions = Dimensions(null=True)  # type: ignore[no-untyped-call]
        # the order
        user_id = UnicodeAttribute(null=True)
        status = UnicodeAttribute(null=True)
        currency = UnicodeAttribute(null=True)
        total = NumberAttribute(null=True)
        item_count = NumberAttribute(null=True)
        express = BooleanAttribute(null=True)

    return OrderRow


class QueryClient:
    """``Model.query(hash_key, sk.between(...))``, iterated to the end (it blocks the loop)."""

    async def setup(self, url: str) -> None:
        self._saved = {name: os.environ.get(name) for name in _ENV}
        os.environ.update(_ENV)
        self._model = _model(url)
        self._hash_key = f"order#{data.ORDER_ID}"
        self._range = self._model.sk.between(data.ITEM_PREFIX, self._hash_key)  # type: ignore[attr-defined]

    async def run_once(self) -> int:
        return sum(1 for _ in self._model.query(self._hash_key, self._range))

    async def teardown(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
