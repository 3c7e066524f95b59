"""aiodynamo (aiohttp transport, static credentials): Query, GetItem, PutItem and batch writes.

aiodynamo works on dicts of Python values (numbers read back as float); its ``batch_write``
sends whatever it is given in one request, so the writer cuts the items into requests of 25.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiodynamo.client import Client, Table
from aiodynamo.credentials import Key, StaticCredentials
from aiodynamo.expressions import HashKey, RangeKey
from aiodynamo.http.aiohttp import AIOHTTP
from aiodynamo.models import BatchWriteRequest
from yarl import URL

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.clients.floor import chunks


class _Connected:
    """An aiodynamo client and its table on the loopback server."""

    async def setup(self, url: str) -> None:
        self._session = aiohttp.ClientSession()
        self._client = Client(
            AIOHTTP(self._session),
            StaticCredentials(Key(ACCESS_KEY, SECRET_KEY)),
            REGION,
            endpoint=URL(url),
        )
        self._table: Table = self._client.table(data.TABLE)

    async def teardown(self) -> None:
        await self._session.close()


def order_item(n: int) -> dict[str, Any]:
    """Order item ``n`` as the dict aiodynamo writes: its keys and plain values."""
    return {**data.order_item_keys(n), **data.order_item_fields(n)}


class QueryClient(_Connected):
    """``async for item in table.query(...)`` with aiodynamo's defaults (numbers as float)."""

    async def setup(self, url: str) -> None:
        await super().setup(url)
        pk = f"order#{data.ORDER_ID}"
        self._condition = HashKey("pk", pk) & RangeKey("sk").between(data.ITEM_PREFIX, pk)

    async def run_once(self) -> int:
        count = 0
        async for _ in self._table.query(self._condition):
            count += 1
        return count


class GetItemClient(_Connected):
    """``batch`` sequential ``table.get_item(key)`` calls."""

    def __init__(self, batch: int) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        key = {"pk": f"order#{data.ORDER_ID}", "sk": f"order#{data.ORDER_ID}"}
        for _ in range(self.batch):
            await self._table.get_item(key)
        return self.batch


class PutItemClient(_Connected):
    """``batch`` sequential ``table.put_item(item)`` calls of one order item."""

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self.item = order_item(1)

    async def run_once(self) -> int:
        for _ in range(self.batch):
            await self._table.put_item(self.item)
        return self.batch


class PutAllClient(_Connected):
    """Sequential ``client.batch_write(...)`` calls of 25 items each."""

    def __init__(self, items: int) -> None:
        self.items = [order_item(n) for n in range(1, items + 1)]

    async def run_once(self) -> int:
        for chunk in chunks(self.items):
            request = BatchWriteRequest(items_to_put=list(chunk))
            result = await self._client.batch_write({data.TABLE: request})
            assert not result  # noqa: S101 - the server accepts every write
        return len(self.items)
