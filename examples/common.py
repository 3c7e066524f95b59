"""Shared by the example scripts: a Database to play with, and a narrator that counts requests.

With ``DYNORM_ENDPOINT_URL`` set the examples use that endpoint (and the standard AWS
configuration); otherwise they start dynorm's embedded moto server on a free loopback port.
Each run works on its own freshly created table and deletes it afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pprint
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from dynorm import Database, Table, TableNotFoundError, connect
from dynorm.testing import count_requests, fresh_table, start_server

T = TypeVar("T")


@asynccontextmanager
async def open_database(table: Table, *, create: bool = True) -> AsyncIterator[Database]:
    """A Database on a fresh copy of ``table``: on DYNORM_ENDPOINT_URL, or an embedded server.

    ``create=False`` leaves creating the table to the scenario (as another tool would); the
    table is deleted afterwards either way.
    """
    endpoint = os.environ.get("DYNORM_ENDPOINT_URL")
    server = None if endpoint else start_server("moto")
    # The embedded server takes any credentials; a real endpoint uses the AWS defaults.
    key = None if endpoint else "demo"
    try:
        async with connect(
            table,
            endpoint_url=endpoint or (server.url if server else None),
            region_name=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
            table_name=f"{table.name}-tour-{uuid.uuid4().hex[:6]}",
            aws_access_key_id=key,
            aws_secret_access_key=key,
        ) as db:
            if create:
                async with fresh_table(db):
                    yield db
            else:
                try:
                    yield db
                finally:
                    with contextlib.suppress(TableNotFoundError):
                        await db.delete_table()
    finally:
        if server is not None:
            server.stop()


class Narrator:
    """Prints each access pattern, what came back, and how many requests it cost."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.steps: list[tuple[str, int]] = []

    async def step(self, title: str, action: Callable[[], Awaitable[T]]) -> T:
        with count_requests(self.db) as log:
            result = await action()
        operations = log.operations
        self.steps.append((title, len(operations)))
        plural = "request" if len(operations) == 1 else "requests"
        print(f"\n▶ {title}\n  {len(operations)} {plural}: {', '.join(operations) or '-'}")
        for line in pprint.pformat(result, width=96, sort_dicts=False).splitlines():
            print(f"    {line}")
        return result


def run(
    scenario: Callable[[Narrator], Awaitable[None]], table: Table, *, create: bool = True
) -> None:
    """Run one scenario on its own table (for `python examples/<scenario>.py`)."""

    async def main() -> None:
        async with open_database(table, create=create) as db:
            await scenario(Narrator(db))

    asyncio.run(main())
