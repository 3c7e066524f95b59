"""Another tool's table: a plain boto3 client creates and fills it, and dynorm is mapped onto it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs
import boto3  # type: ignore[import-untyped]

import dynorm
from dynorm import Database, Table
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    RunningServer,
    fast_path_selected,
)

Raw = dict[str, Any]


def _key(key: Mapping[str, Any]) -> Raw:
    """A key as DynamoDB takes it: a plain str is a string attribute, the rest is as given."""
    return {k: {"S": v} if isinstance(v, str) else v for k, v in key.items()}


@attrs.frozen
class Tool:
    """The other tool: a plain boto3 client on one table (its calls run in a worker thread)."""

    client: Any
    table_name: str

    async def get(self, key: Mapping[str, Any]) -> Raw | None:
        """The stored item with this key, as DynamoDB holds it."""
        response = await asyncio.to_thread(
            self.client.get_item, TableName=self.table_name, Key=_key(key), ConsistentRead=True
        )
        item: Raw | None = response.get("Item")
        return item

    async def delete(self, key: Mapping[str, Any]) -> None:
        await asyncio.to_thread(self.client.delete_item, TableName=self.table_name, Key=_key(key))


def _create_and_fill(client: Any, name: str, schema: Raw, items: list[Raw]) -> None:
    client.create_table(TableName=name, **schema)
    client.get_waiter("table_exists").wait(TableName=name)
    for item in items:
        client.put_item(TableName=name, Item=item)


@asynccontextmanager
async def written_by_tool(
    server: RunningServer, table: Table, schema: Raw, items: list[Raw], **options: Any
) -> AsyncIterator[tuple[Database, Tool]]:
    """A table the tool created and filled, and a dynorm Database mapped onto it."""
    client: Any = boto3.client(
        "dynamodb",
        endpoint_url=server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
    )
    name = f"{table.name}-tool-{uuid.uuid4().hex[:8]}"
    await asyncio.to_thread(_create_and_fill, client, name, schema, items)
    try:
        async with dynorm.connect(
            table,
            endpoint_url=server.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_name=name,
            fast_path=fast_path_selected(),  # DYNORM_TEST_FAST_PATH=0: botocore's path
            **options,
        ) as db:
            yield db, Tool(client, name)
    finally:
        await asyncio.to_thread(client.delete_table, TableName=name)
        client.close()
