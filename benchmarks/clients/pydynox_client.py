"""pydynox (Rust core: its own HTTP client, signing and AttributeValue conversion) with a model
equivalent to dynorm's.

Like PynamoDB, one single-table model holds the order's and the items' attributes, the nested map
a dataclass. pydynox runs its requests on a Rust runtime of its own; those threads' CPU time is
the process's, so ``time.process_time()`` counts it like every other client's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydynox import BatchWriter, DynamoDBClient, Model, ModelConfig
from pydynox.attributes import (
    BooleanAttribute,
    DecimalAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    StringAttribute,
)

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY


@dataclasses.dataclass
class Dimensions:
    """The nested map of an order item."""

    width_cm: float
    height_cm: float
    depth_cm: float
    weight_kg: float
    color: str


def _model(client: DynamoDBClient) -> Any:
    # A class per setup: the model's config holds the client (and so the endpoint).
    class OrderRow(Model):
        model_config = ModelConfig(table=data.TABLE, client=client)

        pk = StringAttribute(partition_key=True)
        sk = StringAttribute(sort_key=True)
        id = StringAttribute()
        # order items
        order_id = StringAttribute()
        product_id = StringAttribute()
        name = StringAttribute()
        quantity = NumberAttribute()
        price = DecimalAttribute()
        gift_wrap = BooleanAttribute()
        backordered = BooleanAttribute()
        tags = ListAttribute()
        dimensions = MapAttribute(Dimensions)
        # the order
        user_id = StringAttribute()
        status = StringAttribute()
        currency = StringAttribute()
        total = DecimalAttribute()
        item_count = NumberAttribute()
        express = BooleanAttribute()

    return OrderRow


class _Connected:
    """A pydynox client and the model class bound to it."""

    async def setup(self, url: str) -> None:
        self._client = DynamoDBClient(
            region=REGION, access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_url=url
        )
        self._model = _model(self._client)

    def row(self, n: int) -> Any:
        fields = data.order_item_fields(n)
        dimensions = Dimensions(**fields["dimensions"])
        return self._model(**data.order_item_keys(n), **{**fields, "dimensions": dimensions})

    async def teardown(self) -> None:
        pass  # the client holds no connection that needs closing


class QueryClient(_Connected):
    """``async for row in Model.query(partition_key=…, sort_key_condition=sk.between(…))``."""

    async def run_once(self) -> int:
        pk = f"order#{data.ORDER_ID}"
        condition = self._model.sk.between(data.ITEM_PREFIX, pk)
        count = 0
        async for _ in self._model.query(partition_key=pk, sort_key_condition=condition):
            count += 1
        return count


class GetItemClient(_Connected):
    """``batch`` sequential ``await Model.get(pk=…, sk=…)`` calls."""

    def __init__(self, batch: int) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        key = f"order#{data.ORDER_ID}"
        for _ in range(self.batch):
            await self._model.get(pk=key, sk=key)
        return self.batch


class PutItemClient(_Connected):
    """``batch`` sequential ``await row.save()`` calls of one new order item (PutItem)."""

    def __init__(self, batch: int) -> None:
        self.batch = batch

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._row = self.row(1)

    async def run_once(self) -> int:
        for _ in range(self.batch):
            await self._row.save()
        return self.batch


class PutAllClient(_Connected):
    """``async with BatchWriter(client, table) as batch: batch.put(row.to_dict())`` for every row.

    pydynox's batch writes take dicts; ``to_dict`` is its model's way to them.
    """

    def __init__(self, items: int) -> None:
        self.items = items

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._rows = [self.row(n) for n in range(1, self.items + 1)]

    async def run_once(self) -> int:
        async with BatchWriter(self._client, data.TABLE) as batch:
            for row in self._rows:
                batch.put(row.to_dict())
        return len(self._rows)
