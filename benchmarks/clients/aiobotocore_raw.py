"""aiobotocore's ``query``, ``get_item``, ``put_item`` and ``batch_write_item`` on AttributeValues.

The client is configured as dynorm configures its own (standard retries, same pool size), so
the per-request comparison shows what dynorm adds on top of aiobotocore, not a config change.
"""

from __future__ import annotations

import contextlib
from typing import Any

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.clients.floor import QUERY, chunks


async def open_client(stack: contextlib.AsyncExitStack, url: str) -> Any:
    """An aiobotocore DynamoDB client for the loopback server, closed with ``stack``."""
    config = AioConfig(retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=16)
    return await stack.enter_async_context(
        get_session().create_client(
            "dynamodb",
            region_name=REGION,
            endpoint_url=url,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=config,
        )
    )


class Connected:
    """An aiobotocore client on the loopback server, closed at teardown."""

    async def setup(self, url: str) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._client = await open_client(self._stack, url)

    async def teardown(self) -> None:
        await self._stack.aclose()


class QueryClient(Connected):
    """``client.query(...)``: the page as botocore parses it, nothing more."""

    async def run_once(self) -> int:
        page = await self._client.query(**QUERY)
        return len(page["Items"])


#: GetItem requests per ``run_once`` of the per-request benchmark.
GET_ITEM_BATCH = 200


class GetItemClient(Connected):
    """``GET_ITEM_BATCH`` sequential ``client.get_item(...)`` calls."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        key = data.order_key()
        for _ in range(self.batch):
            response = await self._client.get_item(TableName=data.TABLE, Key=key)
            assert "Item" in response  # noqa: S101 - the server always answers with the order
        return self.batch


class PutItemClient(Connected):
    """``batch`` sequential ``client.put_item(...)`` calls of a pre-encoded order item."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        item = data.order_item(1)
        for _ in range(self.batch):
            await self._client.put_item(TableName=data.TABLE, Item=item)
        return self.batch


class PutAllClient(Connected):
    """Sequential ``client.batch_write_item(...)`` calls of 25 pre-encoded items each."""

    def __init__(self, items: int) -> None:
        self.items = [data.order_item(n) for n in range(1, items + 1)]

    async def run_once(self) -> int:
        for chunk in chunks(self.items):
            writes = [{"PutRequest": {"Item": item}} for item in chunk]
            answer = await self._client.batch_write_item(RequestItems={data.TABLE: writes})
            assert not answer["UnprocessedItems"]  # noqa: S101 - the server accepts every write
        return len(self.items)
