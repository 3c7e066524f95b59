"""pynamodb-async: PynamoDB's models and attributes over aiobotocore, the same model as PynamoDB's.

Credentials go in the model's ``Meta`` (the loopback server checks no signature).
"""

from __future__ import annotations

from typing import Any

from pynamodb_async.models import Model  # type: ignore[import-untyped]

from benchmarks import data
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.clients.aiobotocore_raw import GET_ITEM_BATCH
from benchmarks.clients.pynamodb_client import attributes, row_values


def _model(url: str) -> Any:
    # A class per setup: the connection (and so the host) is cached on the model class.
    meta = type(
        "Meta",
        (),
        {
            "table_name": data.TABLE,
            "host": url,
            "region": REGION,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
        },
    )
    return type("OrderRow", (Model,), {"Meta": meta, **attributes()})


class _Connected:
    """The model class bound to the loopback server; its connection closed at teardown."""

    async def setup(self, url: str) -> None:
        self._model = _model(url)

    async def teardown(self) -> None:
        await self._model.close()


class QueryClient(_Connected):
    """``async for row in Model.query(hash_key, sk.between(...))``."""

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._hash_key = f"order#{data.ORDER_ID}"
        self._range = self._model.sk.between(data.ITEM_PREFIX, self._hash_key)

    async def run_once(self) -> int:
        count = 0
        async for _ in self._model.query(self._hash_key, self._range):
            count += 1
        return count


class GetItemClient(_Connected):
    """``batch`` sequential ``await Model.get(hash_key, range_key)`` calls."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def run_once(self) -> int:
        key = f"order#{data.ORDER_ID}"
        for _ in range(self.batch):
            await self._model.get(key, key)
        return self.batch


class PutItemClient(_Connected):
    """``batch`` sequential ``await row.save()`` calls of one order item."""

    def __init__(self, batch: int = GET_ITEM_BATCH) -> None:
        self.batch = batch

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._row = self._model(**row_values(1))

    async def run_once(self) -> int:
        for _ in range(self.batch):
            await self._row.save()
        return self.batch


class PutAllClient(_Connected):
    """``async with Model.batch_write() as batch: await batch.save(row)`` (25 a request)."""

    def __init__(self, items: int) -> None:
        self.items = items

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._rows = [self._model(**row_values(n)) for n in range(1, self.items + 1)]

    async def run_once(self) -> int:
        async with self._model.batch_write() as batch:
            for row in self._rows:
                await batch.save(row)
        return len(self._rows)
