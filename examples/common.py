"""Shared by the example scripts: a Database to play with, and a narrator that counts requests.

With ``DYNORM_ENDPOINT_URL`` set the examples use that endpoint (and the standard AWS
configuration); otherwise they start dynorm's embedded moto server on a free loopback port.
Each run works on its own freshly created table and deletes it afterwards.

``dynorm.testing`` (which imports pytest) is imported by the functions that use it: the seed
models import this module, and the example apps (web_app, lambda_app) import the seed models, so
an app deployed from them would otherwise load the test tools at every cold start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pprint
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

import attrs

from dynorm import Database, Table, TableNotFoundError, connect

T = TypeVar("T")


@contextmanager
def demo_server() -> Iterator[Server]:
    """DYNORM_ENDPOINT_URL if set, else dynorm's embedded moto server for the run; says which."""
    endpoint = os.environ.get("DYNORM_ENDPOINT_URL")
    if endpoint:
        print(f"Running on {endpoint} (DYNORM_ENDPOINT_URL), with your AWS credentials")
        yield Server(endpoint, embedded=False)
        return
    from dynorm.testing import start_server  # noqa: PLC0415 - see the docstring

    server = start_server("moto")
    print(
        f"Running on dynorm's embedded moto server at {server.url} "
        "(set DYNORM_ENDPOINT_URL to use another DynamoDB)"
    )
    try:
        yield Server(server.url, embedded=True)
    finally:
        server.stop()


@attrs.frozen
class Server:
    """Where the demo's requests go; the embedded server takes any credentials."""

    url: str
    embedded: bool


@asynccontextmanager
async def open_database(
    table: Table, server: Server, *, create: bool = True
) -> AsyncIterator[Database]:
    """A Database on a fresh copy of ``table`` on ``server``.

    ``create=False`` leaves creating the table to the scenario (as another tool would); the
    table is deleted afterwards either way.
    """
    key = "demo" if server.embedded else None  # a real endpoint uses the AWS defaults
    async with connect(
        table,
        endpoint_url=server.url,
        region_name=os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
        table_name=f"{table.name}-tour-{uuid.uuid4().hex[:6]}",
        aws_access_key_id=key,
        aws_secret_access_key=key,
    ) as db:
        if create:
            from dynorm.testing import fresh_table  # noqa: PLC0415 - see the docstring

            async with fresh_table(db):
                yield db
        else:
            try:
                yield db
            finally:
                with contextlib.suppress(TableNotFoundError):
                    await db.delete_table()


class Narrator:
    """Prints each access pattern, what came back, and how many requests it cost."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.steps: list[tuple[str, int]] = []

    async def step(self, title: str, action: Callable[[], Awaitable[T]]) -> T:
        from dynorm.testing import count_requests  # noqa: PLC0415 - see the docstring

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

    async def main(server: Server) -> None:
        async with open_database(table, server, create=create) as db:
            await scenario(Narrator(db))

    with demo_server() as server:
        asyncio.run(main(server))
