"""examples/web_app.py on AWS Lambda, behind API Gateway's HTTP API, through Mangum.

``handler`` is the Lambda function's handler (``lambda_app.handler``): Mangum turns each API
Gateway event into an ASGI request to the FastAPI app and its answer into the event's reply.

One Database serves every invocation of an execution environment. Mangum runs the app's
lifespan around *each* invocation (startup before it, shutdown after it), so a lifespan that
opened and closed the connection would open a new one every time: a new TCP and TLS handshake
per request. The app's lifespan enters :class:`KeptConnection` instead (this module sets the
app's ``state.open_database`` to it; the app is web_app's own, built once), which opens the Database
on the first invocation and keeps it for the environment's life; Lambda freezes the process
between invocations (no event loop runs, no timer fires) and thaws it for the next, and the
keep-alive connection is still there if the next comes within its keep-alive time. The
environment ends without warning, so nothing closes it; nothing needs to.

The settings come from the environment, as Lambda sets it: the role's credentials
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``), the region
(``AWS_DEFAULT_REGION``), and two of the function's own: ``DYNORM_TABLE_NAME`` (the table,
else the models' name, ``tickets``) and ``DYNORM_ENDPOINT_URL`` (unset on AWS).

``python examples/lambda_app.py`` invokes the handler with a few API Gateway events against
dynorm's embedded server (or ``DYNORM_ENDPOINT_URL``) and prints the replies.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mangum import Mangum

sys.path.insert(0, str(Path(__file__).parent))

from seed_001_tickets import table
from web_app import OpenDatabase, app

from dynorm import Database, connect

__all__ = [
    "InvocationContext",
    "KeptConnection",
    "app",
    "connection",
    "handler",
    "http_api_event",
]


class KeptConnection:
    """A Database opened on first use and kept open: one per Lambda execution environment.

    ``use()`` is what the app's lifespan enters at every invocation: the first opens the
    Database with ``open_database``, the later ones are handed the same one. Invocations of
    one environment never overlap, so no lock is needed.
    """

    def __init__(self, open_database: OpenDatabase) -> None:
        self.open_database = open_database
        #: How many times a Database was opened (1 for the environment's life).
        self.opened = 0
        self._db: Database | None = None
        self._stack = AsyncExitStack()

    @asynccontextmanager
    async def use(self) -> AsyncIterator[Database]:
        """The kept Database, opened if it is not yet; leaving the block keeps it open."""
        if self._db is None:
            self._db = await self._stack.enter_async_context(self.open_database())
            self.opened += 1
        yield self._db

    async def close(self) -> None:
        """Close the Database (a script's end; Lambda just ends the environment)."""
        self._db = None
        await self._stack.aclose()


def connect_from_environment() -> AbstractAsyncContextManager[Database]:
    """The Database of a deployed function: Lambda's environment variables."""
    return connect(
        table,
        table_name=os.environ.get("DYNORM_TABLE_NAME"),
        endpoint_url=os.environ.get("DYNORM_ENDPOINT_URL"),
    )


#: The execution environment's one connection, opened by the first invocation.
connection = KeptConnection(connect_from_environment)
# examples/web_app.py's app, built once by its import (building a second would add its routes'
# schemas to the cold start again): its lifespan enters the kept connection instead of opening one.
app.state.open_database = connection.use
#: The Lambda handler. lifespan="on": the app's lifespan is required (it hands endpoints the
#: Database); Mangum runs it around every invocation.
handler = Mangum(app, lifespan="on")


def http_api_event(method: str, path: str, body: Any = None) -> dict[str, Any]:
    """An API Gateway HTTP API (payload format 2.0) event, as Lambda passes it to ``handler``."""
    path, _, query = path.partition("?")
    headers = {"host": "api.example.com", "user-agent": "curl/8.5.0", "accept": "*/*"}
    if body is not None:
        headers["content-type"] = "application/json"
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "domainPrefix": "api",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "203.0.113.7",
                "userAgent": "curl/8.5.0",
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": "$default",
            "stage": "$default",
            "time": "28/Nov/2026:12:00:00 +0000",
            "timeEpoch": 1795867200000,
        },
        "body": None if body is None else json.dumps(body),
        "isBase64Encoded": False,
    }


@dataclass
class InvocationContext:
    """The context object Lambda passes beside the event (for local runs and tests)."""

    aws_request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    function_name: str = "dynorm-web"
    function_version: str = "$LATEST"
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:dynorm-web"
    memory_limit_in_mb: int = 512
    log_group_name: str = "/aws/lambda/dynorm-web"
    log_stream_name: str = "2026/11/28/[$LATEST]local"
    identity: Any = None
    client_context: Any = None

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def _demo() -> None:
    from common import demo_server  # noqa: PLC0415 - needs the test server

    from dynorm.testing import (  # noqa: PLC0415 - the embedded server's settings
        TEST_ACCESS_KEY_ID,
        TEST_REGION,
        TEST_SECRET_ACCESS_KEY,
    )

    with demo_server() as server:
        name = f"tickets-lambda-{uuid.uuid4().hex[:6]}"
        os.environ.update(DYNORM_ENDPOINT_URL=server.url, DYNORM_TABLE_NAME=name)
        if server.embedded:  # it takes any credentials
            os.environ.update(
                AWS_ACCESS_KEY_ID=TEST_ACCESS_KEY_ID,
                AWS_SECRET_ACCESS_KEY=TEST_SECRET_ACCESS_KEY,
                AWS_DEFAULT_REGION=TEST_REGION,
            )
        # Mangum runs every invocation on the loop it set up: the table is created on it too.
        loop = asyncio.get_event_loop()

        async def create() -> None:
            async with connection.use() as db:
                await db.create_table()

        loop.run_until_complete(create())
        calls = [
            ("POST", "/orgs", {"name": "MICROSOFT", "plan_type": "Enterprise"}),
            ("POST", "/orgs/MICROSOFT/users", {"org_name": "MICROSOFT", "username": "SATYA"}),
            ("GET", "/orgs/MICROSOFT", None),
            ("GET", "/orgs/NOPE", None),
        ]
        try:
            for method, path, body in calls:
                reply = handler(http_api_event(method, path, body), InvocationContext())
                print(f"{method} {path} -> {reply['statusCode']}\n  {reply['body']}")
            print(f"connections opened for {len(calls)} invocations: {connection.opened}")
        finally:

            async def drop() -> None:
                async with connection.use() as db:
                    await db.delete_table()
                await connection.close()

            loop.run_until_complete(drop())


if __name__ == "__main__":
    _demo()
