"""A fault-injecting HTTP proxy in front of a DynamoDB server, for tests of "nothing lost".

The proxy listens on 127.0.0.1 (a free port) and forwards each DynamoDB request (JSON over HTTP
POST, the operation named by the ``X-Amz-Target`` header) to the server, unless it injects a fault
instead. The faults are what a client of the real DynamoDB meets:

``throttle`` / ``provisioned``
    a 400 ``ThrottlingException`` / ``ProvisionedThroughputExceededException``; nothing forwarded.
``error_500``
    a 500 ``InternalServerError``; nothing forwarded.
``error_500_after``
    forwarded and applied by the server, then answered with a 500 (the write happened).
``reset``
    the connection is reset (RST) after the request arrived; nothing forwarded.
``lost_reply``
    forwarded and applied by the server, then the connection is closed instead of answered.
``clock_skew``
    a 400 ``InvalidSignatureException`` "Signature expired" whose ``Date`` header is an hour
    ahead of this machine's clock, as DynamoDB answers a client whose clock is behind;
    nothing forwarded.
``bad_crc``
    forwarded and applied by the server, then answered with an ``x-amz-crc32`` header that
    does not match the body (the reply was damaged on the way).
``not_json``
    forwarded and applied by the server, then answered ``200`` with an HTML page instead of
    DynamoDB's JSON (a proxy or captive portal answering in its place).
``partial_batch``
    a ``BatchWriteItem`` forwards only some writes and returns the rest as ``UnprocessedItems``;
    a ``BatchGetItem`` returns some keys as ``UnprocessedKeys``. Batches of one request are
    forwarded untouched (DynamoDB throttles such a batch with an error instead).
``unprocessed_batch``
    a ``BatchWriteItem`` or ``BatchGetItem`` is answered with every write or key unprocessed
    (a round without progress); nothing forwarded.
``transaction_conflict``
    a ``TransactWriteItems`` is cancelled (400 ``TransactionCanceledException``) with reason
    ``TransactionConflict`` for its first action, as when another transaction holds its item;
    nothing forwarded. Other operations are left alone.

A write capacity of the proxy's own: ``proxy.limit_writes(per_second, burst=...)`` refuses a
write (``PutItem``, ``UpdateItem``, ``DeleteItem``: 1 unit; ``BatchWriteItem``: 1 a write;
``TransactWriteItems``: 2 an action) with ``ProvisionedThroughputExceededException`` when its
token bucket (refilled at ``per_second``, holding at most ``burst``) lacks the units, as a table
short of write capacity does; refusals are recorded as ``Injected(operation, "provisioned")``
and cost nothing. The bucket reads ``proxy.clock`` (``time.monotonic``): no sleeps.

Random faults come from a :class:`FaultPlan` (``proxy.use(FaultPlan(seed=7, rates={...}))``):
each eligible request draws from one ``random.Random(seed)``, so the n-th eligible request meets
the same fault in every run (which request is n-th may vary when many are sent at once).
Targeted faults come first: ``proxy.inject("lost_reply", operation="UpdateItem", times=1)`` hits
the next matching request. Every injected fault is recorded in ``proxy.injected`` as
``Injected(operation, fault)``, so a test can assert that the fault it is about really happened;
``proxy.requests`` names every request that arrived, ``proxy.bodies`` holds each one's parsed
JSON body and ``proxy.signed_at`` its ``X-Amz-Date``; ``proxy.accepted`` counts the TCP
connections clients opened. ``proxy.pause(skip=1)`` holds a request
(here: the second one) until the test releases it, to put another client's write between an
attempt and its retry.

``TransactWriteItems`` are served as DynamoDB serves them (moto keeps no client tokens, and
runs concurrent transactions on one item without isolation): one at a time, and alone: no
other request through the proxy is served while one is (moto applies a transaction to a copy
of the table and puts the copy back when it fails, undoing any write served meanwhile, and a
read meanwhile may see a transaction's writes that are then undone; DynamoDB isolates
transactions from other requests); two ``UpdateItem`` of one item are served one after the
other (moto's is not atomic); and a request
whose ``ClientRequestToken`` an earlier one succeeded with (within the proxy's life, where
DynamoDB keeps them ten minutes) is answered with success without being forwarded again, or
with ``IdempotentParameterMismatchException`` if its other parameters differ.
``proxy.replayed`` counts the requests answered from a kept token.

The proxy runs on the caller's event loop: ``async with FaultProxy.running(url) as proxy``, or
``connect_through(server_url, table, *others)`` (the ``faulty_connect`` fixture) for fresh tables
with a Database through the proxy and one straight to the server. The client side is plain asyncio
streams, so the proxy decides when a connection ends; aiohttp forwards to the server. A failure
of the proxy itself is recorded in ``proxy.errors`` and fails the block that ran it.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import random
import socket
import struct
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from typing import Any, Final, Literal, NamedTuple, get_args

import aiohttp
import attrs
import orjson

import dynorm
from dynorm import Database, Request, Table
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    fast_path_selected,
    fresh_table,
)

__all__ = [
    "DATA_OPERATIONS",
    "FAULTS",
    "SKEW_SECONDS",
    "Fault",
    "FaultPlan",
    "FaultProxy",
    "Faulty",
    "FaultyConnect",
    "Injected",
    "Pause",
    "connect_through",
    "connect_to",
    "empty_table",
]

Fault = Literal[
    "throttle",
    "provisioned",
    "error_500",
    "error_500_after",
    "reset",
    "lost_reply",
    "clock_skew",
    "bad_crc",
    "not_json",
    "partial_batch",
    "unprocessed_batch",
    "transaction_conflict",
]
FAULTS: Final[tuple[Fault, ...]] = get_args(Fault)

#: The operations a plan faults unless told otherwise: item reads and writes, not table admin.
DATA_OPERATIONS: Final = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)

_BATCHES: Final = frozenset({"BatchGetItem", "BatchWriteItem"})
_ERROR_PREFIX: Final = "com.amazonaws.dynamodb.v20120810#"
_SORTED: Final = orjson.OPT_SORT_KEYS
_CONTENT_TYPE: Final = "application/x-amz-json-1.0"
# Headers that describe one hop of the connection, not the request: never forwarded.
_HOP_HEADERS: Final = frozenset(
    {"host", "content-length", "connection", "transfer-encoding", "keep-alive", "expect"}
)
_REASONS: Final = {200: "OK", 400: "Bad Request", 500: "Internal Server Error"}
# The faults answered with an error instead of forwarding: status, error type, message.
_REFUSALS: Final[Mapping[Fault, tuple[int, str, str]]] = {
    "throttle": (400, "ThrottlingException", "Rate of requests exceeds the allowed throughput"),
    "provisioned": (
        400,
        "ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded",
    ),
    "error_500": (500, "InternalServerError", "Internal server error"),
}


class Injected(NamedTuple):
    """One fault the proxy injected: the request's operation and the fault."""

    operation: str
    fault: Fault


@attrs.frozen
class FaultPlan:
    """Random faults, deterministic by ``seed``.

    ``rates`` gives each fault's probability per eligible request (their sum at most 1);
    ``operations`` limits which operations are eligible (default: :data:`DATA_OPERATIONS`).
    A ``partial_batch`` or ``unprocessed_batch`` drawn for an operation that is not a batch
    leaves the request alone.
    """

    seed: int
    rates: Mapping[Fault, float]
    operations: Collection[str] = DATA_OPERATIONS

    def __attrs_post_init__(self) -> None:
        unknown = set(self.rates) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {', '.join(FAULTS)}")
        if any(rate < 0 for rate in self.rates.values()) or sum(self.rates.values()) > 1:
            raise ValueError(f"fault rates must be >= 0 and sum to at most 1; got {self.rates}")


@attrs.define
class _Targeted:
    fault: Fault
    operation: str | None
    times: int
    when: Callable[[dict[str, Any]], bool] | None


@attrs.define(eq=False)
class Pause:
    """A request held by :meth:`FaultProxy.pause`."""

    operation: str | None
    skip: int
    when: Callable[[dict[str, Any]], bool] | None
    arrived: asyncio.Event = attrs.field(factory=asyncio.Event)
    """Set when the held request has arrived."""
    released: asyncio.Event = attrs.field(factory=asyncio.Event)

    def release(self) -> None:
        """Let the held request go on (to its fault, if one is chosen, or to the server)."""
        self.released.set()


@attrs.frozen
class _Request:
    head: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def operation(self) -> str:
        for name, value in self.headers:
            if name.lower() == "x-amz-target":
                return value.rsplit(".", 1)[-1]
        return ""


@attrs.frozen
class _Response:
    status: int
    body: bytes
    request_id: str
    headers: tuple[tuple[str, str], ...] = ()
    crc32: int | None = None  # None: the body's own


class _DroppedError(Exception):
    """The connection is to end without an answer (a reset or a lost reply)."""

    def __init__(self, *, reset: bool) -> None:
        super().__init__("connection dropped by the fault proxy")
        self.reset = reset


@attrs.define
class _Gate:
    """Requests served side by side (``shared``), or one alone (``alone``, a transaction).

    A transaction waiting keeps new requests out until it has been served, so a stream of
    other requests cannot hold it back for ever.
    """

    _changed: asyncio.Condition = attrs.field(factory=asyncio.Condition)
    _serving: int = 0
    _alone: bool = False
    _waiting: int = 0

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._alone and not self._waiting)
            self._serving += 1
        try:
            yield
        finally:
            async with self._changed:
                self._serving -= 1
                self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        async with self._changed:
            self._waiting += 1
            try:
                await self._changed.wait_for(lambda: not self._alone and not self._serving)
            finally:
                self._waiting -= 1
            self._alone = True
        try:
            yield
        finally:
            async with self._changed:
                self._alone = False
                self._changed.notify_all()


@attrs.define(eq=False)
class FaultProxy:
    """The proxy; create it with :meth:`running`. See the module docstring."""

    upstream: str
    _session: aiohttp.ClientSession
    url: str = ""
    injected: list[Injected] = attrs.field(factory=list)
    """Every fault injected, in order."""
    requests: list[str] = attrs.field(factory=list)
    """The operation of every request that reached the proxy, in order."""
    signed_at: list[str] = attrs.field(factory=list)
    """The ``X-Amz-Date`` header of every request that reached the proxy, in order."""
    bodies: list[dict[str, Any]] = attrs.field(factory=list)
    """The JSON body of every request that reached the proxy, parsed, in order."""
    errors: list[str] = attrs.field(factory=list)
    """Failures of the proxy itself (the server unreachable …): each dropped its connection."""
    replayed: int = 0
    """How many TransactWriteItems were answered from a token an earlier one succeeded with."""
    accepted: int = 0
    """How many TCP connections clients opened to the proxy."""
    _tokens: dict[str, tuple[dict[str, Any], bytes]] = attrs.field(factory=dict)
    _gate: _Gate = attrs.field(factory=_Gate)
    _updating: dict[bytes, asyncio.Lock] = attrs.field(factory=dict)
    _plan: FaultPlan | None = None
    _random: random.Random = attrs.field(factory=random.Random)
    _targeted: list[_Targeted] = attrs.field(factory=list)
    _pauses: list[Pause] = attrs.field(factory=list)
    _connections: set[asyncio.Task[None]] = attrs.field(factory=set)
    clock: Callable[[], float] = time.monotonic
    """What the write capacity of :meth:`limit_writes` refills by (seconds)."""
    _capacity: _WriteCapacity | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, upstream: str, plan: FaultPlan | None = None
    ) -> AsyncIterator[FaultProxy]:
        """Listen on a free loopback port for the block; ``proxy.url`` is its endpoint."""
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            proxy = cls(upstream.rstrip("/"), session)
            proxy.use(plan)
            server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            proxy.url = f"http://127.0.0.1:{port}"
            try:
                yield proxy
            finally:
                server.close()
                # Connections still open end before the upstream session closes under them.
                for task in proxy._connections:
                    task.cancel()
                await asyncio.gather(*proxy._connections, return_exceptions=True)
                await server.wait_closed()
            if proxy.errors:
                raise AssertionError(f"the fault proxy failed by itself: {proxy.errors}")

    # -- what to inject --------------------------------------------------------------------

    def use(self, plan: FaultPlan | None) -> None:
        """Inject random faults by ``plan`` from now on (``None``: none); restarts its seed."""
        self._plan = plan
        seed = plan.seed if plan is not None else 0
        self._random = random.Random(seed)  # noqa: S311 - reproducible faults, not secrets

    def inject(
        self,
        fault: Fault,
        *,
        operation: str | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Inject ``fault`` into the next ``times`` requests of ``operation`` (any if None).

        ``when`` narrows the match further, given the request's parsed JSON body. Targeted
        faults are matched in the order they were given, before any random fault.
        """
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
        if times < 1:
            raise ValueError(f"times must be at least 1; got {times}")
        self._targeted.append(_Targeted(fault, operation, times, when))

    def limit_writes(self, per_second: float | None, *, burst: float = 25.0) -> None:
        """Refuse writes beyond ``per_second`` units (None: no limit); see the module docstring."""
        self._capacity = (
            None if per_second is None else _WriteCapacity(per_second, burst, burst, self.clock())
        )

    def reset(self) -> None:
        """Forget faults, pauses and records (not :attr:`errors`), as for a new test."""
        self.use(None)
        self._capacity = None
        self._targeted.clear()
        for held in self._pauses:
            held.release()
        self._pauses.clear()
        self.injected.clear()
        self.requests.clear()
        self.signed_at.clear()
        self.bodies.clear()
        self.replayed = 0

    def pause(
        self,
        operation: str | None = None,
        *,
        skip: int = 0,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Pause:
        """Hold the next matching request (after ``skip`` matches) until ``release()``.

        The held request has arrived (``pause.arrived`` is set) but is neither forwarded nor
        answered, so a test can act in between, e.g. write the same item from elsewhere before
        a retry lands. Faults are chosen for it after the release.
        """
        held = Pause(operation, skip, when)
        self._pauses.append(held)
        return held

    async def _hold(self, operation: str, body: bytes) -> None:
        for held in self._pauses:
            if held.operation in (None, operation) and (
                held.when is None or held.when(orjson.loads(body))
            ):
                if held.skip:
                    held.skip -= 1
                    continue
                self._pauses.remove(held)
                held.arrived.set()
                await held.released.wait()
                return

    def pending(self) -> int:
        """How many targeted faults are still waiting for their request."""
        return sum(t.times for t in self._targeted)

    def _choose(self, operation: str, body: bytes) -> Fault | None:
        parsed: dict[str, Any] | None = None
        for target in self._targeted:
            if target.operation not in (None, operation):
                continue
            if target.when is not None:
                parsed = orjson.loads(body) if parsed is None else parsed
                if not target.when(parsed):
                    continue
            target.times -= 1
            if target.times == 0:
                self._targeted.remove(target)
            return target.fault
        plan = self._plan
        if plan is None or operation not in plan.operations:
            return None
        draw = self._random.random()
        for fault, rate in plan.rates.items():
            if draw < rate:
                return fault
            draw -= rate
        return None

    # -- serving ---------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while (request := await _read_request(reader)) is not None:
                try:
                    response = await self._answer(request)
                except aiohttp.ClientError as exc:
                    self.errors.append(f"{request.operation}: {exc!r}")
                    raise _DroppedError(reset=True) from exc
                writer.write(_encode_response(response))
                await writer.drain()
        except _DroppedError as dropped:
            if dropped.reset:
                _reset(writer)
            writer.transport.abort()
        except (ConnectionError, asyncio.IncompleteReadError):
            writer.transport.abort()  # the client went away mid-request: nothing to answer
        except asyncio.CancelledError:
            writer.transport.abort()  # the proxy is stopping; ending quietly keeps asyncio calm
        finally:
            self._connections.discard(task)
            writer.close()

    async def _answer(self, request: _Request) -> _Response:
        operation = request.operation
        self.requests.append(operation)
        self.signed_at.append(
            next((v for n, v in request.headers if n.lower() == "x-amz-date"), "")
        )
        self.bodies.append(orjson.loads(request.body) if request.body else {})
        if self._pauses:
            await self._hold(operation, request.body)
        fault = self._choose(operation, request.body)
        if fault is None and self._capacity is not None and operation in _WRITE_UNITS:
            units = _WRITE_UNITS[operation](orjson.loads(request.body))
            if not self._capacity.take(units, self.clock()):
                fault = "provisioned"
        if fault == "partial_batch" and operation in _BATCHES:
            return await self._partial(request, operation)
        if fault == "unprocessed_batch" and operation in _BATCHES:
            return self._unprocessed(request, operation)
        if fault == "transaction_conflict" and operation == "TransactWriteItems":
            return self._conflict(request)
        if fault in (None, "partial_batch", "unprocessed_batch", "transaction_conflict"):
            return await self._forward(request, request.body)
        self.injected.append(Injected(operation, fault))
        if fault in _REFUSALS:
            status, kind, message = _REFUSALS[fault]
            return _error(status, kind, message)
        if fault == "reset":
            raise _DroppedError(reset=True)
        if fault == "clock_skew":
            return _skewed()
        answer = await self._forward(request, request.body)  # the server applies it ...
        if fault == "bad_crc":
            return attrs.evolve(answer, crc32=zlib.crc32(answer.body) ^ 0xFFFF)
        if fault == "not_json":
            return attrs.evolve(answer, body=b"<html><body>Please sign in</body></html>")
        if fault == "lost_reply":  # ... and the answer is lost
            raise _DroppedError(reset=False)
        return _error(500, "InternalServerError", "Internal server error after applying")

    async def _forward(self, request: _Request, body: bytes) -> _Response:
        if request.operation == "UpdateItem":
            # moto reads, changes and stores an item without a lock: two updates of one item
            # at once may lose one. DynamoDB applies them one after the other.
            update = orjson.loads(body)
            item = orjson.dumps([update.get("TableName"), update.get("Key")], option=_SORTED)
            async with self._gate.shared(), self._updating.setdefault(item, asyncio.Lock()):
                return await self._send(request, body)
        if request.operation != "TransactWriteItems":
            async with self._gate.shared():
                return await self._send(request, body)
        params: dict[str, Any] = orjson.loads(body)
        token = params.pop("ClientRequestToken", None)
        async with self._gate.alone():
            if token is None:
                return await self._send(request, body)
            if token in self._tokens:
                kept, reply = self._tokens[token]
                if kept != params:
                    return _error(
                        400,
                        "IdempotentParameterMismatchException",
                        "Client request token was used with different parameters",
                    )
                self.replayed += 1
                return _Response(200, reply, uuid.uuid4().hex)  # its first answer again
            answer = await self._send(request, body)
            if answer.status == 200:
                self._tokens[token] = (params, answer.body)
            return answer

    async def _send(self, request: _Request, body: bytes) -> _Response:
        headers = [(n, v) for n, v in request.headers if n.lower() not in _HOP_HEADERS]
        async with self._session.post(self.upstream + "/", data=body, headers=headers) as reply:
            content = await reply.read()
            request_id = reply.headers.get("x-amzn-RequestId", uuid.uuid4().hex)
            return _Response(reply.status, content, request_id)

    def _conflict(self, request: _Request) -> _Response:
        """Cancel a transaction as DynamoDB does when another one holds its first item."""
        self.injected.append(Injected("TransactWriteItems", "transaction_conflict"))
        actions = orjson.loads(request.body)["TransactItems"]
        reasons = [
            {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
        ]
        reasons += [{"Code": "None"}] * (len(actions) - 1)
        body = {
            "__type": _ERROR_PREFIX + "TransactionCanceledException",
            "message": "Transaction cancelled, please refer cancellation reasons for specific "
            "reasons [TransactionConflict] (injected)",
            "CancellationReasons": reasons,
        }
        return _Response(400, orjson.dumps(body), uuid.uuid4().hex)

    def _unprocessed(self, request: _Request, operation: str) -> _Response:
        """Answer a whole batch as unprocessed, forwarding nothing."""
        params: dict[str, Any] = orjson.loads(request.body)
        self.injected.append(Injected(operation, "unprocessed_batch"))
        field = "UnprocessedItems" if operation == "BatchWriteItem" else "UnprocessedKeys"
        answer: dict[str, Any] = {field: params["RequestItems"]}
        if operation == "BatchGetItem":
            answer["Responses"] = {table: [] for table in params["RequestItems"]}
        return _Response(200, orjson.dumps(answer), uuid.uuid4().hex)

    async def _partial(self, request: _Request, operation: str) -> _Response:
        """Forward about half of a batch; answer the rest as unprocessed."""
        params: dict[str, Any] = orjson.loads(request.body)
        writes = operation == "BatchWriteItem"
        sent: dict[str, Any] = {}
        held: dict[str, Any] = {}
        for table, entry in params["RequestItems"].items():
            members = entry if writes else entry["Keys"]
            keep = set(self._random.sample(range(len(members)), k=len(members) // 2))
            forward = [m for i, m in enumerate(members) if i in keep]
            rest = [m for i, m in enumerate(members) if i not in keep]
            if forward:
                sent[table] = forward if writes else {**entry, "Keys": forward}
            held[table] = rest if writes else {**entry, "Keys": rest}
        if not sent:
            return await self._forward(request, request.body)  # a batch of one: left whole
        self.injected.append(Injected(operation, "partial_batch"))
        reply = await self._forward(request, orjson.dumps({**params, "RequestItems": sent}))
        if reply.status != 200:
            return reply
        answer: dict[str, Any] = orjson.loads(reply.body)
        field = "UnprocessedItems" if writes else "UnprocessedKeys"
        unprocessed: dict[str, Any] = answer.get(field) or {}
        for table, rest in held.items():
            if writes:
                unprocessed[table] = [*unprocessed.get(table, []), *rest]
            elif table in unprocessed:
                unprocessed[table]["Keys"] += rest["Keys"]
            else:
                unprocessed[table] = rest
        answer[field] = unprocessed
        return _Response(200, orjson.dumps(answer), reply.request_id)


@attrs.define
class _WriteCapacity:
    """The proxy's write token bucket (:meth:`FaultProxy.limit_writes`)."""

    per_second: float
    burst: float
    tokens: float
    at: float

    def take(self, units: float, now: float) -> bool:
        """Take ``units`` if the bucket holds them; False (nothing taken) if not."""
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.per_second)
        self.at = now
        if self.tokens < units:
            return False
        self.tokens -= units
        return True


#: The write units of each write operation, from its parsed body.
_WRITE_UNITS: Final[Mapping[str, Callable[[dict[str, Any]], float]]] = {
    "PutItem": lambda _: 1.0,
    "UpdateItem": lambda _: 1.0,
    "DeleteItem": lambda _: 1.0,
    "BatchWriteItem": lambda body: float(sum(len(w) for w in body["RequestItems"].values())),
    "TransactWriteItems": lambda body: 2.0 * len(body["TransactItems"]),
}


@attrs.frozen
class Faulty:
    """A table reached two ways: ``db`` through the fault proxy, ``direct`` straight to the server.

    ``direct`` is for checking what is stored; it never meets a fault.
    """

    db: Database
    direct: Database
    proxy: FaultProxy


FaultyConnect = Callable[..., contextlib.AbstractAsyncContextManager[Faulty]]
"""The type of the ``faulty_connect`` fixture: ``faulty_connect(table, *others, **options)``."""


def connect_to(
    endpoint_url: str, table: Table, table_name: str, *others: Table, **options: Any
) -> contextlib.AbstractAsyncContextManager[Database]:
    """``dynorm.connect`` to a test endpoint (the server or a proxy) with the test credentials.

    ``others``: the connection's further tables, each under ``<its name>-<table_name's suffix>``
    (see :func:`other_name`).
    """
    if others:
        names = {table: table_name, **{t: other_name(t, table_name) for t in others}}
        options = {"table_names": names, **options}
    else:
        options = {"table_name": table_name, **options}
    return dynorm.connect(
        table,
        *others,
        endpoint_url=endpoint_url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        **{"fast_path": fast_path_selected(), **options},
    )


def other_name(table: Table, first_name: str) -> str:
    """The name of a further table of a connection whose first table is named ``first_name``."""
    return f"{table.name}-{first_name.rsplit('-', 1)[-1]}"


@contextlib.asynccontextmanager
async def connect_through(
    server_url: str, table: Table, *others: Table, **options: Any
) -> AsyncIterator[Faulty]:
    """Fresh copies of ``table`` (and ``others``) on the server at ``server_url``, and a proxy.

    ``options`` go to the proxied ``dynorm.connect`` (``max_attempts=``, ``max_concurrency=`` …).
    The tables are created and deleted directly, so no fault touches them.
    """
    name = f"{table.name}-{uuid.uuid4().hex[:8]}"
    async with (
        connect_to(server_url, table, name, *others) as direct,
        fresh_table(direct),
        FaultProxy.running(server_url) as proxy,
        connect_to(proxy.url, table, name, *others, **options) as db,
    ):
        yield Faulty(db, direct, proxy)


async def empty_table(db: Database) -> None:
    """Delete every item of ``db``'s table (a consistent Scan, then BatchWriteItem)."""
    attributes = db.table.primary_attributes
    names = {f"#k{i}": a for i, a in enumerate(attributes)}
    scan: dict[str, Any] = {
        "TableName": db.table_name,
        "ConsistentRead": True,
        "ProjectionExpression": ", ".join(names),
        "ExpressionAttributeNames": names,
    }
    keys: list[Any] = []
    while True:
        page = await db.send(Request("Scan", scan))
        keys += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            break
        scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    batches = [keys[i : i + 25] for i in range(0, len(keys), 25)]
    await asyncio.gather(
        *(
            db.send(
                Request(
                    "BatchWriteItem",
                    {"RequestItems": {db.table_name: [{"DeleteRequest": {"Key": k}} for k in b]}},
                )
            )
            for b in batches
        )
    )


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """One HTTP/1.1 request with a Content-Length body, or None when the client hung up."""
    head = await reader.readline()
    if not head.strip():
        return None
    headers: list[tuple[str, str]] = []
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))
    length = next((int(v) for n, v in headers if n.lower() == "content-length"), 0)
    body = await reader.readexactly(length) if length else b""
    return _Request(head.decode("latin-1").strip(), headers, body)


def _error(status: int, kind: str, message: str) -> _Response:
    body = orjson.dumps({"__type": _ERROR_PREFIX + kind, "message": f"{message} (injected)"})
    return _Response(status, body, uuid.uuid4().hex)


#: How far ahead of this machine's clock the ``clock_skew`` fault's server clock is.
SKEW_SECONDS: Final = 3600


def _skewed() -> _Response:
    """DynamoDB's answer to a request signed with a clock that is behind."""
    server_time = time.time() + SKEW_SECONDS
    signed = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    window = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(server_time - 300))
    response = _error(
        400,
        "InvalidSignatureException",
        f"Signature expired: {signed} is now earlier than {window} "
        f"({time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(server_time))} - 5 min.)",
    )
    date = email.utils.formatdate(server_time, usegmt=True)
    return attrs.evolve(response, headers=(("Date", date),))


def _encode_response(response: _Response) -> bytes:
    reason = _REASONS.get(response.status, "Unknown")
    # botocore checks DynamoDB's CRC32 when present: a rewritten body needs its own.
    crc32 = zlib.crc32(response.body) if response.crc32 is None else response.crc32
    extra = "".join(f"{name}: {value}\r\n" for name, value in response.headers)
    head = (
        f"HTTP/1.1 {response.status} {reason}\r\n"
        f"Content-Type: {_CONTENT_TYPE}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        f"x-amzn-RequestId: {response.request_id}\r\n"
        f"x-amz-crc32: {crc32}\r\n"
        f"{extra}"
        "\r\n"
    )
    return head.encode("latin-1") + response.body


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (linger 0) rather than a FIN: the client sees a reset."""
    sock = writer.transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
