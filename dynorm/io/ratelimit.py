"""The limiter of ``connect(rate_limit=...)``: requests wait here for their capacity units.

One per connection, shared by all its coroutines. The arithmetic is in
``dynorm/core/throughput.py``; this module only awaits what it says.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from dynorm.core.errors import DefinitionError
from dynorm.core.requests import Request
from dynorm.core.throughput import (
    AdaptiveRate,
    Kind,
    LimiterStats,
    RateLimit,
    SendRate,
    TokenBucket,
    consumed_units,
    request_cost,
    with_consumed_capacity,
)

from .batch import Sleep

__all__ = ["Limiter", "Ticket"]


class Ticket(NamedTuple):
    """One attempt's reservation: its bucket, the units taken and when they were taken."""

    kind: Kind
    units: float
    reserved_at: float


class _Bucket:
    def __init__(self, rate: float | None, now: float, *, adaptive: bool) -> None:
        self.bucket = TokenBucket(rate, now)
        self.adaptive = AdaptiveRate() if adaptive else None
        self.sent = SendRate()
        self.waits = 0
        self.waited = 0.0

    def stats(self, now: float) -> LimiterStats:
        adaptive = self.adaptive
        if adaptive is not None:
            self.bucket.set_rate(adaptive.raised(now), now)
        return LimiterStats(
            rate=self.bucket.rate,
            waits=self.waits,
            waited=self.waited,
            cuts=0 if adaptive is None else adaptive.cuts,
        )


class Limiter:
    """Token buckets for reads and writes, fixed (:class:`RateLimit`) or ``"adaptive"``."""

    def __init__(
        self,
        limit: RateLimit | Literal["adaptive"],
        *,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sleep = sleep
        self._clock = clock
        now = clock()
        self._buckets: dict[Kind, _Bucket] = {}
        if limit == "adaptive":
            self._buckets = {
                "read": _Bucket(None, now, adaptive=True),
                "write": _Bucket(None, now, adaptive=True),
            }
        elif isinstance(limit, RateLimit):
            for kind, rate in (("read", limit.read), ("write", limit.write)):
                if rate is not None:
                    self._buckets[kind] = _Bucket(rate, now, adaptive=False)  # type: ignore[index]
        else:
            raise DefinitionError(
                "rate_limit takes RateLimit(read=..., write=...) (capacity units a second) "
                f"or 'adaptive'; got {limit!r}"
            )

    async def acquire(self, request: Request) -> Ticket | None:
        """Wait until ``request`` may be sent; its ticket (None: it is not limited)."""
        cost = request_cost(request)
        if cost is None:
            return None
        kind, units = cost
        held = self._buckets.get(kind)
        if held is None:
            return None
        now = self._clock()
        if held.adaptive is not None:
            rate = held.adaptive.raised(now)
            if rate != held.bucket.rate:
                held.bucket.set_rate(rate, now)
        wait = held.bucket.reserve(units, now)
        held.sent.add(units, now)
        if wait > 0:
            held.waits += 1
            held.waited += wait
            try:
                await self._sleep(wait)
            except asyncio.CancelledError:
                self.give_back(Ticket(kind, units, now))
                raise
        return Ticket(kind, units, now)

    def give_back(self, ticket: Ticket) -> None:
        """The request holding ``ticket`` was cancelled before it was sent: its units return.

        Kept, they would be debt: the callers after it would wait for a request that never
        went out.
        """
        held = self._buckets[ticket.kind]
        held.bucket.adjust(-ticket.units, self._clock())
        held.sent.remove(ticket.units, ticket.reserved_at)

    def measured(self, request: Request) -> Request:
        """``request`` asking for its ``ConsumedCapacity`` when this limiter charges it.

        A Query's or a batch's cost is known only from the reply; asked for, it is charged
        in full by :meth:`settle` instead of the estimate. The same ``request`` when it is not
        limited or asks already.
        """
        cost = request_cost(request)
        if cost is None or cost[0] not in self._buckets:
            return request
        return with_consumed_capacity(request)

    def settle(self, ticket: Ticket, response: dict[str, Any], *, measured: bool = False) -> None:
        """Correct the estimate by the reply's ``ConsumedCapacity`` (when it reports one).

        ``measured``: the request asked for it only for the limiter's sake (:meth:`measured`),
        so it is taken out of ``response``: the caller sees the reply it would see without a
        limiter. A batch answered with unprocessed items was throttled in part: the adaptive
        rate is cut as for a throttle.
        """
        held = self._buckets[ticket.kind]
        now = self._clock()
        consumed = consumed_units(response)
        if measured:
            response.pop("ConsumedCapacity", None)
        if consumed is not None and consumed != ticket.units:
            held.bucket.adjust(consumed - ticket.units, now)
            held.sent.add(consumed - ticket.units, now)
        if held.adaptive is not None and (
            response.get("UnprocessedItems") or response.get("UnprocessedKeys")
        ):
            self.throttled(ticket)

    def throttled(self, ticket: Ticket) -> None:
        """The attempt holding ``ticket`` was throttled: an adaptive rate is cut."""
        held = self._buckets[ticket.kind]
        if held.adaptive is None:
            return
        now = self._clock()
        rate = held.adaptive.throttled(ticket.reserved_at, now, held.sent.per_second(now))
        if rate is not None:
            held.bucket.set_rate(rate, now)

    def stats(self, kind: Kind) -> LimiterStats | None:
        """One bucket's rate and waits (None when ``kind`` is not limited)."""
        held = self._buckets.get(kind)
        return None if held is None else held.stats(self._clock())
