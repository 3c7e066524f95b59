"""The transport against real sockets: refused connections, silent and broken servers, retries.

Each test points ``connect`` at a loopback port of its own: a closed one, or a tiny scripted HTTP
server that answers the way the test needs (never, a cut connection, a 500, throttling).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

import dynorm
from dynorm import Database, Request, connect
from dynorm.testing import count_requests
from dynorm.wire.retry import TOKEN_ATTRIBUTE
from tests.seed_models import Org, app

from .models import Thing
from .raw import raw_item

pytestmark = pytest.mark.integration

GET = Request("GetItem", {"TableName": "app", "Key": {"pk": {"S": "a"}, "sk": {"S": "a"}}})

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def database(url: str, **options: Any) -> AsyncIterator[Database]:
    async with connect(
        app,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        **options,
    ) as db:
        yield db


@asynccontextmanager
async def serving(handle: Handler) -> AsyncIterator[str]:
    """A loopback server running ``handle`` per connection; every connection ends with it."""
    tasks: set[asyncio.Task[None]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await handle(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


async def read_request(reader: asyncio.StreamReader) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)


def reply(status: int, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def scripted(answers: list[bytes]) -> Handler:
    """Answers each request with the next scripted reply (the last one repeats)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await read_request(reader)
                writer.write(answers.pop(0) if len(answers) > 1 else answers[0])
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client hung up

    return handle


async def test_connection_refused_is_a_transport_error_after_every_attempt() -> None:
    async with database(f"http://127.0.0.1:{closed_port()}", max_attempts=3) as db:
        with count_requests(db) as log, pytest.raises(dynorm.TransportError) as caught:
            await db.get(Org, name="ACME")
    error = caught.value
    assert isinstance(error, ConnectionError)
    assert not error.request_sent
    assert error.operation == "GetItem"
    assert "endpoint_url" in str(error)
    assert "nothing was sent" in str(error)
    assert log.operations == ["GetItem"] * 3
    assert isinstance(error.__cause__, Exception)
    assert not type(error.__cause__).__module__.startswith("dynorm")  # chained, not leaked


async def test_a_silent_server_is_a_read_timeout_within_read_timeout() -> None:
    accepted = 0

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        await reader.read()  # until the client gives up and closes

    async with serving(never_answer) as url, database(url, read_timeout=0.3, max_attempts=1) as db:
        started = time.monotonic()
        with pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
        elapsed = time.monotonic() - started
    # 0.3 s, with room for a loaded machine (50x), and still half the 30 s default.
    assert elapsed < 15.0
    assert caught.value.request_sent
    assert "read_timeout=0.3" in str(caught.value)
    assert "may have been applied" in str(caught.value)
    assert accepted == 1


@pytest.mark.parametrize("fast_path", [True, False], ids=["fast-path", "botocore"])
async def test_a_reply_that_never_ends_is_cut_at_the_attempt_timeout(fast_path: bool) -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        while not writer.transport.is_closing():  # a byte every 20 ms: no read timeout ends it
            writer.write(b"1\r\n \r\n")
            await writer.drain()
            await asyncio.sleep(0.02)

    options = {"read_timeout": 5, "attempt_timeout": 0.5, "max_attempts": 1}
    async with serving(trickle) as url, database(url, fast_path=fast_path, **options) as db:
        started = time.monotonic()
        with pytest.raises(dynorm.TransportError) as caught:
            await asyncio.wait_for(db.send(GET), 30)
        elapsed = time.monotonic() - started
    assert elapsed < 10  # the 0.5 s deadline, with a margin for a loaded machine
    assert caught.value.request_sent
    assert f"the reply from {url}" in str(caught.value)
    assert "did not end within attempt_timeout=0.5s" in str(caught.value)


async def test_a_conditional_write_that_times_out_is_an_unknown_outcome() -> None:
    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with serving(never_answer) as url, database(url, read_timeout=0.2, max_attempts=2) as db:
        with count_requests(db) as log, pytest.raises(dynorm.OutcomeUnknownError) as caught:
            await db.put(Org(name="ACME"), overwrite=False)
    assert isinstance(caught.value.__cause__, dynorm.TransportError)
    assert log.operations == ["PutItem", "PutItem"]


async def test_a_connection_closed_before_the_reply_is_a_transport_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)  # and close without a reply

    async with serving(hang_up) as url, database(url, max_attempts=2) as db:
        with count_requests(db) as log, pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
    assert caught.value.request_sent
    assert log.operations == ["GetItem", "GetItem"]


async def test_server_errors_and_throttling_are_retried_until_an_answer() -> None:
    answers = [
        reply(500, b'{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}'),
        reply(400, b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}'),
        reply(503, b"<html>unavailable</html>"),
        reply(200, b"{}"),
    ]
    async with serving(scripted(answers)) as url, database(url, max_attempts=4) as db:
        with count_requests(db) as log:
            assert "Item" not in await db.send(GET)
    assert log.operations == ["GetItem"] * 4


async def test_throttling_that_outlasts_max_attempts_is_a_throttled_error() -> None:
    throttled = reply(400, b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}')
    async with serving(scripted([throttled])) as url, database(url, max_attempts=2) as db:
        with count_requests(db) as log, pytest.raises(dynorm.ThrottledError) as caught:
            await db.send(GET)
    assert log.operations == ["GetItem"] * 2
    assert "max_attempts" in str(caught.value)


# -- against the test server: what the retry mechanisms leave on the wire and in items -----------


async def test_an_add_stores_its_write_token_and_reads_stay_clean(kinds_db: Database) -> None:
    thing = await kinds_db.put(Thing(thing_id="t1", count=1))
    with count_requests(kinds_db) as log:
        updated = await kinds_db.update(thing, add={"count": 2})
        again = await kinds_db.update(updated, add={"count": 3})
    assert log.operations == ["UpdateItem", "UpdateItem"]  # no extra request on success
    assert again == Thing(thing_id="t1", count=6)
    assert await kinds_db.get(Thing, thing_id="t1") == again  # the token is not a field
    stored = await raw_item(kinds_db, {"pk": "THING#t1", "sk": "THING#t1"})
    assert stored is not None
    token = stored[TOKEN_ATTRIBUTE]["S"]
    assert len(token) == 16
    await kinds_db.put(again)  # a put replaces the item, token and all
    stored = await raw_item(kinds_db, {"pk": "THING#t1", "sk": "THING#t1"})
    assert stored is not None
    assert TOKEN_ATTRIBUTE not in stored


async def test_a_refusal_returns_the_stored_item_where_the_server_supports_it(
    kinds_db: Database, dynorm_backend: str
) -> None:
    await kinds_db.put(Thing(thing_id="t2", text="stored"))
    (request,) = kinds_db.explain.put(Thing(thing_id="t2", text="mine"), overwrite=False)
    asked = Request(
        request.operation,
        {**request.params, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
    )
    with pytest.raises(dynorm.ConditionFailedError) as caught:
        await kinds_db.send(asked)
    if dynorm_backend == "dynalite":
        assert caught.value.item is None  # dynalite ignores the parameter: dynorm reads instead
    else:
        assert caught.value.item is not None
        assert caught.value.item["text"] == {"S": "stored"}
    with pytest.raises(dynorm.ConditionFailedError) as plain:
        await kinds_db.send(request)
    assert plain.value.item is None


async def test_an_operation_the_server_lacks_says_which_server_lacks_which_operation(
    kinds_db: Database, dynorm_backend: str
) -> None:
    (put,) = kinds_db.explain.put(Thing(thing_id="t3", text="in a transaction"))
    transaction = Request("TransactWriteItems", {"TransactItems": [{"Put": dict(put.params)}]})
    if dynorm_backend != "dynalite":  # moto and DynamoDB have transactions
        await kinds_db.send(transaction)
        assert await kinds_db.get(Thing, thing_id="t3") == Thing(
            thing_id="t3", text="in a transaction"
        )
        return
    with count_requests(kinds_db) as log, pytest.raises(dynorm.UnsupportedOperationError) as caught:
        await kinds_db.send(transaction)
    endpoint = kinds_db._transport.endpoint
    assert str(caught.value) == (
        f"TransactWriteItems: the server at {endpoint} does not support TransactWriteItems "
        "(UnknownOperationException); DynamoDB does (dynalite, for one, has no transactions: "
        "test them against DynamoDB Local, moto or DynamoDB itself)"
    )
    assert caught.value.code == "UnknownOperationException"
    assert log.operations == ["TransactWriteItems"]  # refused once, not retried
