"""aiodynamo's ``table.query`` (aiohttp transport, static credentials): dicts of Python values."""

from __future__ import annotations

import aiohttp
from aiodynamo.client import Client
from aiodynamo.credentials import Key, StaticCredentials
from aiodynamo.expressions import HashKey, RangeKey
from aiodynamo.http.aiohttp import AIOHTTP
from yarl import URL

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY


class QueryClient:
    """``async for item in table.query(...)`` with aiodynamo's defaults (numbers as float)."""

    async def setup(self, url: str) -> None:
        self._session = aiohttp.ClientSession()
        client = Client(
            AIOHTTP(self._session),
            StaticCredentials(Key(ACCESS_KEY, SECRET_KEY)),
            REGION,
            endpoint=URL(url),
        )
        self._table = client.table(data.TABLE)
        pk = f"order#{data.ORDER_ID}"
        self._condition = HashKey("pk", pk) & RangeKey("sk").between(data.ITEM_PREFIX, pk)

    async def run_once(self) -> int:
        count = 0
        async for _ in self._table.query(self._condition):
            count += 1
        return count

    async def teardown(self) -> None:
        await self._session.close()
