"""The floor: POST the Query with aiohttp and ``orjson.loads`` the body. No signing, no objects."""

from __future__ import annotations

import aiohttp
import orjson

from benchmarks import data

QUERY = {
    "TableName": data.TABLE,
    "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :lo AND :hi",
    "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
    "ExpressionAttributeValues": {
        ":pk": {"S": f"order#{data.ORDER_ID}"},
        ":lo": {"S": data.ITEM_PREFIX},
        ":hi": {"S": f"order#{data.ORDER_ID}"},
    },
}
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": "DynamoDB_20120810.Query",
}


class QueryClient:
    """The least any Python client must do: one HTTP request and one JSON parse."""

    async def setup(self, url: str) -> None:
        self._url = url
        self._session = aiohttp.ClientSession()
        self._body = orjson.dumps(QUERY)

    async def run_once(self) -> int:
        async with self._session.post(self._url, data=self._body, headers=HEADERS) as response:
            page = orjson.loads(await response.read())
        return len(page["Items"])

    async def teardown(self) -> None:
        await self._session.close()
