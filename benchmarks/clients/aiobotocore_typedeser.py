"""aiobotocore's ``query`` and boto3's ``TypeDeserializer`` over every attribute: plain dicts."""

from __future__ import annotations

from boto3.dynamodb.types import TypeDeserializer  # type: ignore[import-untyped]

from benchmarks.clients.aiobotocore_raw import Connected
from benchmarks.clients.floor import QUERY


class QueryClient(Connected):
    """What boto3's resource layer does to each item, on top of aiobotocore."""

    async def setup(self, url: str) -> None:
        await super().setup(url)
        self._deserialize = TypeDeserializer().deserialize

    async def run_once(self) -> int:
        page = await self._client.query(**QUERY)
        deserialize = self._deserialize
        items = [{k: deserialize(v) for k, v in raw.items()} for raw in page["Items"]]
        return len(items)
