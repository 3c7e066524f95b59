"""dynorm: ``db.get`` (an order and its items, or one order), ``db.put`` and ``db.put_all``."""

from __future__ import annotations

import contextlib

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.clients.aiobotocore_raw import GET_ITEM_BATCH
from benchmarks.models import Dimensions, Order, OrderItem, table
from dynorm import Database, connect


async def open_db(
    stack: contextlib.AsyncExitStack, url: str, *, coalesce: bool = False
) -> Database:
    """A Database on the loopback server, closed with ``stack``."""
    return await stack.enter_async_context(
        connect(
            table,
            endpoint_url=url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            coalesce=coalesce,
        )
    )


def order_item(n: int) -> OrderItem:
    """Order item ``n`` as the attrs object an application would hold."""
    fields = data.order_item_fields(n)
    return OrderItem(**{**fields, "dimensions": Dimensions(**fields["dimensions"])})


class _Connected:
    """A Database on the loopback server, closed at teardown."""

    async def setup(self, url: str) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._db = await open_db(self._stack, url)

    async def teardown(self) -> None:
        await self._stack.aclose()


class QueryClient(_Connected):
    """One Query: the order and its items, decoded into ``Order`` and ``OrderItem``."""

    async def run_once(self) -> int:
        found = await self._db.get(Order, id=data.ORDER_ID, load=[Order.items])
        return 1 + len(found.items.loaded)


class GetItemClient(_Connected):
    """``GET_ITEM_BATCH`` sequential ``db.get(Order, id=…)`` calls."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        for _ in range(self.batch):
            await self._db.get(Order, id=data.ORDER_ID)
        return self.batch


class PutItemClient(_Connected):
    """``batch`` sequential ``db.put(item)`` calls of one order item."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch
        self.item = order_item(1)

    async def run_once(self) -> int:
        for _ in range(self.batch):
            await self._db.put(self.item)
        return self.batch


class PutAllClient(_Connected):
    """``db.put_all(items)``: the attrs objects encoded and written 25 a request."""

    def __init__(self, items: int) -> None:
        self.items = [order_item(n) for n in range(1, items + 1)]

    async def run_once(self) -> int:
        return await self._db.put_all(self.items)
