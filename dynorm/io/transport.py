"""The Transport: sends each request through a connection's ``send``, and retries.

One attempt is one HTTP request, sent by the connection (:mod:`dynorm.io.connection`) through
its senders (:mod:`dynorm.io.senders`), which map every failure to a
:class:`~dynorm.DynormError` subclass. The Transport retries: throttling, server-side failures
and broken connections get further attempts with jittered exponential backoff, within a retry
quota, and the rules of ``dynorm.wire.retry`` decide what a lost reply means for a write. It
counts what was sent (``db.stats()``), tells request listeners and OpenTelemetry about each
attempt, and waits for capacity with ``connect(rate_limit=...)``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
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

from .otel import Span, Tracing
from .senders.base import Send

if TYPE_CHECKING:
    # Imported with connect(rate_limit=...) only: a connection without one never loads them.
    from dynorm.core.throughput import Stats, TopCounter

    from .batch import Sleep
    from .connection import Connection
    from .ratelimit import Limiter, Ticket

__all__ = ["RequestListener", "Send", "Transport"]

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
