"""PynamoDB (synchronous) with a model equivalent to dynorm's, run directly on the loop's thread.

PynamoDB has no mixed-collection decoding without a discriminator attribute, so one model holds
the order's and the items' attributes (the usual single-table PynamoDB model); every row of the
page becomes an instance. Credentials come from the environment, as PynamoDB users set them.
``benchmarks.clients.pynamodb_async_client`` builds the same model on pynamodb-async.
"""

from __future__ import annotations

import os
from typing import Any

from pynamodb.attributes import (
    Attribute,
    BooleanAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.models import Model

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.clients.aiobotocore_raw import GET_ITEM_BATCH

_ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


class Dimensions(MapAttribute[str, Any]):
    """The nested map of an order item."""

    width_cm = NumberAttribute()
    height_cm = NumberAttribute()
    depth_cm = NumberAttribute()
    weight_kg = NumberAttribute()
    color = UnicodeAttribute()


def attributes() -> dict[str, Attribute[Any]]:
    """The single-table model's attributes, new instances for each model class."""
    return {
        "pk": UnicodeAttribute(hash_key=True),
        "sk": UnicodeAttribute(range_key=True),
        "id": UnicodeAttribute(),
        # order items
        "order_id": UnicodeAttribute(null=True),
        "product_id": UnicodeAttribute(null=True),
        "name": UnicodeAttribute(null=True),
        "quantity": NumberAttribute(null=True),
        "price": NumberAttribute(null=True),
        "gift_wrap": BooleanAttribute(null=True),
        "backordered": BooleanAttribute(null=True),
        "tags": ListAttribute(of=UnicodeAttribute, null=True),
        "dimensions": Dimensions(null=True),  # type: ignore[no-untyped-call]
        # the order
        "user_id": UnicodeAttribute(null=True),
        "status": UnicodeAttribute(null=True),
        "currency": UnicodeAttribute(null=True),
        "total": NumberAttribute(null=True),
        "item_count": NumberAttribute(null=True),
        "express": BooleanAttribute(null=True),
    }


def row_values(n: int) -> dict[str, Any]:
    """Order item ``n`` as a PynamoDB model's keyword arguments.

    PynamoDB's ``NumberAttribute`` writes numbers with ``json.dumps``, which takes no Decimal, so
    the price is a float here.
    """
    fields = data.order_item_fields(n)
    return {
        **data.order_item_keys(n),
        **fields,
        "price": float(fields["price"]),
        "dimensions": Dimensions(**fields["dimensions"]),  # type: ignore[no-untyped-call]
    }


def _model(url: str) -> type[Model]:
    # A class per setup: PynamoDB caches the connection (and so the host) on the model class.
    meta = type("Meta", (), {"table_name": data.TABLE, "host": url, "region": REGION})
    return type("OrderRow", (Model,), {"Meta": meta, **attributes()})


class _Connected:
    """The model class bound to the loopback server, credentials in the environment."""

    async def setup(self, url: str) -> None:
        self._saved = {name: os.environ.get(name) for name in _ENV}
        os.environ.update(_ENV)
        self._model = _model(url)

    async def teardown(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class QueryClient(_Connected):
    """``Model.query(hash_key, sk.between(...))``, iterated to the end (it blocks the loop)."""

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._hash_key = f"order#{data.ORDER_ID}"
        self._range = self._model.sk.between(data.ITEM_PREFIX, self._hash_key)  # type: ignore[attr-defined]

    async def run_once(self) -> int:
        return sum(1 for _ in self._model.query(self._hash_key, self._range))


class GetItemClient(_Connected):
    """``batch`` sequential ``Model.get(hash_key, range_key)`` calls."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        key = f"order#{data.ORDER_ID}"
        for _ in range(self.batch):
            self._model.get(key, key)
        return self.batch


class PutItemClient(_Connected):
    """``batch`` sequential ``row.save()`` calls of one order item."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._row = self._model(**row_values(1))

    async def run_once(self) -> int:
        for _ in range(self.batch):
            self._row.save()
        return self.batch


class PutAllClient(_Connected):
    """``with Model.batch_write() as batch: batch.save(row)`` for every row (25 a request)."""

    def __init__(self, items: int) -> None:
        self.items = items

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._rows = [self._model(**row_values(n)) for n in range(1, self.items + 1)]

    async def run_once(self) -> int:
        with self._model.batch_write() as batch:
            for row in self._rows:
                batch.save(row)
        return len(self._rows)
