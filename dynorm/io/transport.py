"""The transport: how a connection sends, and the Transport that retries.

This module also opens a connection (:func:`open_connection`; its senders are in
:mod:`dynorm.io.senders`).

The Transport retries: throttling, server-side failures and broken connections get further
attempts with jittered exponential backoff, within a retry quota. botocore's own retries are
off, so each attempt is one HTTP request and the rules of ``dynorm.wire.retry`` decide what a
lost reply means for a write. A failed attempt is a DynormError, decided once above the senders
(:mod:`dynorm.io.senders.attempt`); each sender reports its failures in plain terms
(:mod:`dynorm.io.senders.base`).

aiobotocore, botocore and aiohttp are imported when a connection is opened, never by
``import dynorm``. When connect()'s arguments and the environment say everything
(``_lean_settings``: keys, region, endpoint, and no AWS configuration files), the connection is
lean: dynorm's own HTTP client posts, and neither aiobotocore nor botocore is imported unless
an operation outside the fast path is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import warnings
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from dynorm.core.chunks import backoff
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    ConditionFailedError,
    DatabaseError,
    DynormError,
    LimitExceededError,
    OutcomeUnknownError,
    TransportError,
)
from dynorm.core.events import OK, RequestEvent, outcome_of, targets_of
from dynorm.core.requests import Request
from dynorm.core.versions import installed_version
from dynorm.wire.retry import (
    NO_RETRY_INCREMENT,
    THROTTLING_CODES,
    RetryQuota,
    Verdict,
    applied,
    asking_for_old,
    classify,
    needs_token,
    new_token,
    prepare,
    settled_response,
    verification_read,
)

from .lean import _Lean, _lean_settings
from .otel import Span, Tracing
from .senders.attempt import Attempt
from .senders.base import Send, Timeouts
from .settings import attempt_timeout_of, check_credentials

if TYPE_CHECKING:
    from dynorm.core.throughput import Stats, TopCounter

    from .batch import Sleep
    from .ratelimit import Limiter, Ticket
    from .senders.botocore_client import BotocoreSender, Client

__all__ = ["Connection", "RequestListener", "Send", "Transport", "open_connection"]

RequestListener = Callable[[RequestEvent], None]

#: How many throttled partition keys a connection keeps counts of (``TopCounter``: a key
#: throttled more often than the least count kept is always among them).
HOT_KEYS_KEPT: Final = 1024
#: How many of them ``db.stats()`` lists.
HOT_KEYS_SHOWN: Final = 10


class Counts:
    """What ``db.stats()`` reports: requests sent, throttles by table and partition key.

    ``dynorm.core.throughput`` (partition keys of a request, the bounded counter, the stats
    structure) is imported by the first throttle or ``stats()``, not by a connection that
    sees neither.
    """

    def __init__(self) -> None:
        self.requests = 0
        self.throttled = 0
        self.by_table: dict[str, int] = {}
        #: The throttled partition keys' counts (from the first throttle on).
        self.hot: TopCounter | None = None

    def throttle_request(
        self, request: Request, key_attributes: Mapping[str, Sequence[str]] | Sequence[str]
    ) -> tuple[tuple[str, str], ...]:
        """One throttled attempt of ``request``; returns the (table, partition key) it addressed."""
        from dynorm.core.throughput import partition_keys_of  # noqa: PLC0415 - throttles only

        pairs = partition_keys_of(request, key_attributes)
        self.throttle(targets_of(request)[0], pairs)
        return pairs

    def throttle(self, tables: tuple[str, ...], keys: tuple[tuple[str, str], ...]) -> None:
        """One throttled attempt naming ``tables`` and addressing ``keys``."""
        self.throttled += 1
        for table in tables:
            self.by_table[table] = self.by_table.get(table, 0) + 1
        if not keys:
            return
        hot = self.hot
        if hot is None:
            from dynorm.core.throughput import TopCounter  # noqa: PLC0415 - the first throttle

            hot = self.hot = TopCounter(HOT_KEYS_KEPT)
        for key in keys:
            hot.add(key)

    def stats(self, limiter: Limiter | None) -> Stats:
        from dynorm.core.throughput import HotPartition, Stats  # noqa: PLC0415 - db.stats()

        top = [] if self.hot is None else self.hot.top(HOT_KEYS_SHOWN)
        return Stats(
            requests=self.requests,
            throttled=self.throttled,
            by_table=dict(self.by_table),
            hot_partitions=[
                HotPartition(table, key, count, overcount) for (table, key), count, overcount in top
            ],
            read=None if limiter is None else limiter.stats("read"),
            write=None if limiter is None else limiter.stats("write"),
        )


class Transport:
    """Sends requests with retries, at most ``max_concurrency`` at a time.

    ``attempt`` sends one request once (one HTTP request) and raises DynormErrors; ``sleep``
    waits between attempts (tests pass a fake); ``key_attributes`` name the primary key of
    each table (by table name; a sequence: of every table), to read back an item a lost write
    may have stored. Every attempt that reached the
    wire is reported to ``listeners`` as a :class:`RequestEvent`, and to OpenTelemetry when a
    tracer provider is configured.
    """

    def __init__(
        self,
        attempt: Send,
        *,
        key_attributes: Sequence[str] | Mapping[str, Sequence[str]],
        max_attempts: int,
        max_concurrency: int,
        sleep: Sleep = asyncio.sleep,
        quota: RetryQuota | None = None,
        token: Callable[[], str] = new_token,
        tracing: Tracing | None = None,
        endpoint: str | None = None,
        region: str | None = None,
        limiter: Limiter | None = None,
        fast_path: bool = False,
    ) -> None:
        if max_attempts < 1:
            raise LimitExceededError(f"max_attempts must be at least 1; got {max_attempts}")
        self._attempt = attempt
        self._key_attributes: Mapping[str, Sequence[str]] | tuple[str, ...] = (
            dict(key_attributes) if isinstance(key_attributes, Mapping) else tuple(key_attributes)
        )
        self._max_attempts = max_attempts
        self._gate = asyncio.Semaphore(max_concurrency)
        self._sleep = sleep
        self._quota = quota
        self._token = token
        self._tracing = tracing or Tracing()
        self.listeners: list[RequestListener] = []
        #: Waits for capacity before each attempt (``connect(rate_limit=...)``), or None.
        self.limiter = limiter
        #: Requests sent and throttles, for ``db.stats()``.
        self.counts = Counts()
        #: Whether requests go out on dynorm's own fast path (False: through botocore).
        self.fast_path = fast_path
        #: The client's endpoint URL and region (None for a Transport built without a client).
        self.endpoint = endpoint
        self.region = region

    @classmethod
    def for_connection(cls, connection: Connection, **options: Any) -> Transport:
        """A Transport sending through an open connection (:func:`open_connection`)."""
        parts = urlsplit(connection.endpoint)
        return cls(
            connection.send,
            tracing=Tracing(server=parts.hostname, port=parts.port),
            endpoint=connection.endpoint,
            region=connection.region,
            fast_path=connection.fast_path,
            **options,
        )

    async def send(self, request: Request) -> dict[str, Any]:
        """Send ``request``, retrying as its failures allow; DynormError on failure.

        With a limiter, the first attempt waits for its units before taking one of the
        ``max_concurrency`` places: requests held back by one bucket leave them to the other.
        A limited request asks for its ConsumedCapacity, which the limiter charges; cancelled
        before it is sent, it gives its units back.
        """
        ticket = None
        measured = False
        if self.limiter is not None:
            asked, request = request, self.limiter.measured(request)
            measured = request is not asked
            ticket = await self.limiter.acquire(request)
        try:
            await self._gate.acquire()
        except asyncio.CancelledError:
            if ticket is not None and self.limiter is not None:
                self.limiter.give_back(ticket)  # cancelled before it was sent
            raise
        try:
            span = self._tracing.start(request)
            if span is None:
                return await self._send(request, None, ticket, measured=measured)
            with span.scope:
                try:
                    response = await self._send(request, span, ticket, measured=measured)
                except BaseException as exc:
                    span.fail(exc)
                    raise
                span.succeed(response)
                return response
        finally:
            self._gate.release()

    async def _send(
        self,
        request: Request,
        span: Span | None,
        ticket: Ticket | None = None,
        *,
        measured: bool = False,
    ) -> dict[str, Any]:
        """``send``'s attempts.

        ``measured``: the limiter added ReturnConsumedCapacity (see ``Limiter.settle``).
        """
        token = self._token() if needs_token(request) else ""
        prepared = prepare(request, token)
        mode = request.retry
        lost: DynormError | None = None  # the failure of an attempt that may have been applied
        spent = 0
        attempt = 0
        report = bool(self.listeners) or span is not None
        while True:
            attempt += 1
            # A repeat of a checked write asks for the stored item with a refusal (it is free).
            again = attempt > 1 and (mode == "token" or (mode == "verify" and lost is not None))
            if self.limiter is not None and (attempt > 1 or ticket is None):
                ticket = await self.limiter.acquire(request)
            started = time.perf_counter()
            try:
                response = await self._attempt(asking_for_old(prepared) if again else prepared)
            except ConditionFailedError as error:
                self.counts.requests += 1
                if report:
                    self._report(request, attempt, started, span, error=error)
                if not again:
                    raise  # nothing sent before could have been applied: a real refusal
                return await self._settle(prepared, error.item, token, lost or error, span)
            except DynormError as error:
                verdict = classify(error)
                settle = verdict.outcome == "unknown" and mode == "token"
                stop = "" if settle else self._stop(verdict, attempt)
                if _was_sent(error):
                    keys = self._failed(request, error, ticket)
                    if report:
                        self._report(
                            request,
                            attempt,
                            started,
                            span,
                            error=error,
                            retrying=stop is None,
                            partition_keys=keys,
                        )
                if settle:
                    # Sent again, it would apply twice if another write replaced our token in
                    # between; only the stored item can tell, so read it instead.
                    return await self._settle(prepared, None, token, error, span)
                if verdict.outcome == "unknown" and lost is None:
                    lost = error
                if stop is not None:
                    if lost is not None and mode != "safe":
                        raise _unknown(request, attempt, error) from error
                    if attempt > 1 or verdict.retry:
                        error.add_note(f"dynorm gave up after {attempt} attempts{stop}")
                    raise
                spent += verdict.cost
                await self._sleep(backoff(attempt - 1))
                continue
            self.counts.requests += 1
            if ticket is not None and self.limiter is not None:
                self.limiter.settle(ticket, response, measured=measured)
            if report:
                self._report(request, attempt, started, span, response=response)
            if self._quota is not None:
                self._quota.release(spent or NO_RETRY_INCREMENT)
            return response

    def _report(
        self,
        request: Request,
        attempt: int,
        started: float,
        span: Span | None,
        *,
        response: Mapping[str, Any] | None = None,
        error: DynormError | None = None,
        retrying: bool = False,
        partition_keys: tuple[str, ...] = (),
    ) -> None:
        """Tell the listeners and the span about one attempt that reached the wire.

        A success passes its ``response``; a failure its ``error`` and whether it is retried.
        """
        tables, index = targets_of(request)
        event = RequestEvent(
            operation=request.operation,
            table=tables[0] if len(tables) == 1 else None,
            tables=tables,
            index=index,
            attempt=attempt,
            latency=time.perf_counter() - started,
            consumed_capacity=None if response is None else response.get("ConsumedCapacity"),
            outcome=OK if error is None else outcome_of(error),
            retrying=retrying,
            error=error,
            partition_keys=partition_keys,
        )
        if span is not None:
            span.attempt(event)
        for listener in list(self.listeners):
            listener(event)

    def _failed(
        self, request: Request, error: DynormError, ticket: Ticket | None
    ) -> tuple[str, ...]:
        """Count a failed attempt that was sent; a throttled one's partition key values.

        A throttle also cuts an adaptive rate.
        """
        self.counts.requests += 1
        if not (isinstance(error, DatabaseError) and error.code in THROTTLING_CODES):
            return ()
        if ticket is not None and self.limiter is not None:
            self.limiter.throttled(ticket)
        pairs = self.counts.throttle_request(request, self._key_attributes)
        return tuple(dict.fromkeys(value for _, value in pairs))

    def _stop(self, verdict: Verdict, attempt: int) -> str | None:
        """None to retry, else why not (a note for the error)."""
        if not verdict.retry:
            return ""
        if attempt >= self._max_attempts:
            return " (connect(max_attempts=...))"
        if self._quota is not None and not self._quota.acquire(verdict.cost):
            return " (the retry quota is spent: too many failures at once; connect(retry_quota=))"
        return None

    async def _settle(
        self,
        prepared: Request,
        stored: Item | None,
        token: str,
        cause: DynormError,
        span: Span | None,
    ) -> dict[str, Any]:
        """Was a checked write applied by one of its attempts? The stored item tells.

        ``stored`` came with a refusal (None: read it). ``cause`` is the failure that made the
        outcome unknown, or the refusal itself when every earlier attempt was surely refused.
        """
        if stored is None:
            # Absent, or not returned (not every server honours ReturnValuesOnCondition...).
            try:
                known = self._key_attributes
                keys: Sequence[str] = (
                    known[prepared.params["TableName"]] if isinstance(known, Mapping) else known
                )
                read = await self._send(verification_read(prepared, keys), span)
            except DynormError as exc:
                raise _unknown(prepared, 0, cause) from exc
            stored = read.get("Item")
        if applied(prepared, stored, token):
            return settled_response(prepared, stored)
        if isinstance(cause, ConditionFailedError):
            raise cause
        raise _unknown(prepared, 0, cause) from cause


def _was_sent(error: DynormError) -> bool:
    """Whether a failed attempt reached the wire.

    A refusal before it (no credentials, botocore's parameter validation) is not an HTTP
    request.
    """
    return isinstance(error, TransportError) or (
        isinstance(error, DatabaseError) and bool(error.code)
    )


def _unknown(request: Request, attempts: int, error: DynormError) -> OutcomeUnknownError:
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    return OutcomeUnknownError(
        f"{request.operation}: the reply to an attempt was lost{tried}, and the write may or may "
        f"not have been applied (last error: {error}). Read the item with consistent=True to "
        "see whether the change is there before repeating it",
        code=getattr(error, "code", ""),
        operation=request.operation,
    )


class Connection:
    """An open connection to DynamoDB: where requests go and what sends them.

    ``send`` is one attempt of one request (the Transport retries); ``fast_path`` whether it
    is dynorm's own request path; ``endpoint`` and ``region`` where requests go and what they
    are signed for.
    """

    def __init__(self, send: Send, *, fast_path: bool, endpoint: str, region: str | None) -> None:
        self.send = send
        self.fast_path = fast_path
        self.endpoint = endpoint
        self.region = region


@contextlib.asynccontextmanager
async def open_connection(
    *,
    endpoint_url: str | None,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
    profile: str | None,
    max_concurrency: int,
    connect_timeout: float,
    read_timeout: float,
    attempt_timeout: float | None = None,
    fast_path: bool = True,
) -> AsyncIterator[Connection]:
    """A connection to DynamoDB, open until the block ends.

    ``fast_path=False``: an aiobotocore DynamoDB client (botocore's retries off: the Transport
    retries) sends everything. Otherwise dynorm's own signed requests go out on aiobotocore's
    HTTP session, with the credentials, region and endpoint aiobotocore's session resolves, and
    a botocore client is created only for an operation the fast path does not send. When the
    configuration is connect()'s arguments and the environment only (:func:`_lean_settings`),
    the fast path imports neither aiobotocore nor botocore (:func:`_lean_connection`).
    """
    timeouts = Timeouts(
        connect_timeout,
        read_timeout,
        attempt_timeout_of(attempt_timeout, connect_timeout, read_timeout),
    )
    if aws_access_key_id is not None or aws_session_token is not None:
        check_credentials(  # refused before a client is built, on every path
            aws_access_key_id or "",
            aws_session_token,
            key_setting="connect(aws_access_key_id=...)",
            session_setting="connect(aws_session_token=...)",
        )
    if fast_path and profile is None:
        lean = _lean_settings(
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            environ=os.environ,
        )
        if lean is not None:
            async with _lean_connection(
                lean, max_concurrency=max_concurrency, timeouts=timeouts
            ) as connection:
                yield connection
            return

    # Not a lean connection: aiobotocore's session (imported by these, as they need it).
    from .senders import aio  # noqa: PLC0415
    from .senders.botocore_client import BotocoreSender, Client, cannot_create  # noqa: PLC0415

    session = aio.session_for(profile)
    client = Client(
        session,
        region_name=region_name,
        endpoint_url=endpoint_url,
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(client.close)
        slow = BotocoreSender(client, timeouts)
        if not fast_path:
            yield await _through_botocore(client, slow, timeouts)
            return
        region, endpoint, credentials = await aio.resolve(
            session,
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
        )
        if endpoint is None:
            # Something only botocore resolves (FIPS, dual-stack, another partition): the
            # client's endpoint, then dynorm's requests as before.
            endpoint, region, credentials = await client.resolved()
        elif not aio.valid_endpoint(endpoint):
            # (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL: the configuration files' advice.)
            raise cannot_create(f"Invalid endpoint: {endpoint}")
        # An endpoint behind a path (a gateway's prefix) is left to botocore, which signs the
        # path as it must; the fast path signs and posts to "/".
        if urlsplit(endpoint).path not in ("", "/"):
            yield await _through_botocore(client, slow, timeouts)
            return
        http = aio.http_session(session, endpoint, max_concurrency, timeouts)
        if http is None:
            # A silent fallback would hide a several-fold slowdown; say it once per connection.
            warnings.warn(
                f"aiobotocore {installed_version('aiobotocore')} lacks the HTTP session "
                "dynorm's fast request path sends on, so every request goes through botocore "
                "(slower). Install an aiobotocore version dynorm supports, or pass "
                "connect(fast_path=False) to choose this path and silence the warning",
                RuntimeWarning,
                stacklevel=4,
            )
            yield await _through_botocore(client, slow, timeouts)
            return
        await stack.enter_async_context(http)
        sender = aio.AioSender(
            http,
            credentials,
            endpoint=endpoint,
            region=region,
            deadline=timeouts.attempt_timeout,
        )
        send = Attempt(sender, slow, timeouts=timeouts)
        yield Connection(send, fast_path=True, endpoint=endpoint, region=region)


async def _through_botocore(
    client: Client, sender: BotocoreSender, timeouts: Timeouts
) -> Connection:
    """A connection sending everything through ``client`` (built now) with ``sender``."""
    endpoint, region, _ = await client.resolved()
    send = Attempt(None, sender, timeouts=timeouts)
    return Connection(send, fast_path=False, endpoint=endpoint, region=region)


@contextlib.asynccontextmanager
async def _lean_connection(
    lean: _Lean, *, max_concurrency: int, timeouts: Timeouts
) -> AsyncIterator[Connection]:
    """A fast-path connection that imports neither aiobotocore nor botocore.

    An operation the fast path does not send builds aiobotocore's session and a client then,
    with the same credentials, region and endpoint.
    """
    # Loaded when a connection opens, not by `import dynorm`.
    from .senders.botocore_client import BotocoreSender, Client  # noqa: PLC0415
    from .senders.lean import LeanSender  # noqa: PLC0415

    client = Client(
        None,
        region_name=lean.region,
        endpoint_url=lean.endpoint,
        aws_access_key_id=lean.keys.access_key,
        aws_secret_access_key=lean.keys.secret_key,
        aws_session_token=lean.keys.token,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
    )
    sender = LeanSender(
        lean.keys,
        endpoint=lean.endpoint,
        region=lean.region,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
        ca_bundle=lean.ca_bundle,
    )
    try:
        send = Attempt(sender, BotocoreSender(client, timeouts), timeouts=timeouts)
        yield Connection(send, fast_path=True, endpoint=lean.endpoint, region=lean.region)
    finally:
        try:
            await sender.aclose()
        finally:
            await client.close()
