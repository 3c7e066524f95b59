"""Client-side throughput: the token buckets of ``connect(rate_limit=...)`` and what is throttled.

Pure logic, driven by the caller's clock (seconds, monotonic): nothing here sleeps. The
awaiting half is ``dynorm/io/ratelimit.py``.

- :class:`RateLimit` is the public option: fixed read and write capacity units a second.
- :class:`TokenBucket` hands out reservations: a request takes its cost in units now and is
  told how long to wait before it may go (the bucket may go into debt, so concurrent callers
  queue up one behind the other without polling).
- :class:`AdaptiveRate` is the AIMD controller of ``rate_limit="adaptive"``: it starts
  unlimited, halves the rate on a throttle and adds a step back after each quiet second.
- :func:`request_cost` estimates what a request costs before it is sent, :func:`consumed_units`
  reads what it did cost from a reply that reports ``ConsumedCapacity``.
- :func:`partition_keys_of` names the partition key values a request addresses, and
  :class:`TopCounter` counts the throttled ones in bounded memory.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from .errors import LimitExceededError
from .requests import Request

__all__ = [
    "BURST_SECONDS",
    "CUT_FACTOR",
    "MAX_RATE",
    "MIN_RATE",
    "QUIET_SECONDS",
    "RAISE_FRACTION",
    "AdaptiveRate",
    "HotPartition",
    "Kind",
    "LimiterStats",
    "RateLimit",
    "SendRate",
    "Stats",
    "TokenBucket",
    "TopCounter",
    "consumed_units",
    "partition_keys_of",
    "request_cost",
]

#: Which bucket a request draws from.
Kind = Literal["read", "write"]

#: A bucket holds this many seconds of its rate (at least one unit): a limit of 100 units a
#: second lets 10 go at once, then paces the rest.
BURST_SECONDS: Final = 0.1
#: The adaptive rate never drops below this many units a second ...
MIN_RATE: Final = 1.0
#: ... and becomes unlimited again once it climbs past this (DynamoDB's default per-table
#: quota of 40,000 units a second).
MAX_RATE: Final = 40_000.0
#: A throttle multiplies the rate by this (multiplicative decrease).
CUT_FACTOR: Final = 0.5
#: After this many seconds without a throttle the rate grows by one step (additive increase) ...
QUIET_SECONDS: Final = 1.0
#: ... of this fraction of the rate the last cut started from: back there ten quiet seconds
#: after a cut.
RAISE_FRACTION: Final = 0.05


class RateLimit(msgspec.Struct, frozen=True):
    """Fixed client-side throughput for ``connect(rate_limit=RateLimit(read=..., write=...))``.

    ``read`` and ``write`` are capacity units a second (None: that kind is not limited).
    Every request waits for its units before it is sent; all coroutines of the connection
    share the buckets.
    """

    read: float | None = None
    write: float | None = None

    def __post_init__(self) -> None:
        for name, value in (("read", self.read), ("write", self.write)):
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise LimitExceededError(
                    f"RateLimit({name}=...) must be a positive number of capacity units a "
                    f"second, or None for no limit; got {value!r}"
                )


class TokenBucket:
    """Units a second, ``rate`` of them; None: unlimited (every reservation is free)."""

    def __init__(self, rate: float | None, now: float) -> None:
        self.rate = rate
        self._tokens = self._burst()
        self._last = now

    def _burst(self) -> float:
        return 0.0 if self.rate is None else max(1.0, self.rate * BURST_SECONDS)

    def _refill(self, now: float) -> None:
        if self.rate is not None and now > self._last:
            self._tokens = min(self._burst(), self._tokens + (now - self._last) * self.rate)
        self._last = max(self._last, now)

    def reserve(self, units: float, now: float) -> float:
        """Take ``units`` now; the seconds to wait before sending (0: go at once)."""
        if self.rate is None:
            return 0.0
        self._refill(now)
        self._tokens -= units
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def adjust(self, units: float, now: float) -> None:
        """Charge ``units`` more (negative: give back) once the true cost is known."""
        if self.rate is not None:
            self._refill(now)
            self._tokens = min(self._burst(), self._tokens - units)

    def set_rate(self, rate: float | None, now: float) -> None:
        """A new rate from ``now`` on; units already owed are still owed."""
        self._refill(now)
        self.rate = rate
        self._tokens = min(self._tokens, self._burst()) if rate is not None else 0.0


class SendRate:
    """Units sent over the last second, in ten slots of a tenth of a second (bounded memory)."""

    _SLOTS: Final = 10
    _WIDTH: Final = 0.1

    def __init__(self) -> None:
        self._units = [0.0] * self._SLOTS
        self._stamps = [-1] * self._SLOTS

    def add(self, units: float, now: float) -> None:
        tick = int(now / self._WIDTH)
        slot = tick % self._SLOTS
        if self._stamps[slot] != tick:
            self._stamps[slot] = tick
            self._units[slot] = 0.0
        self._units[slot] += units

    def per_second(self, now: float) -> float:
        tick = int(now / self._WIDTH)
        return sum(
            u
            for u, s in zip(self._units, self._stamps, strict=True)
            if tick - self._SLOTS < s <= tick
        )


class AdaptiveRate:
    """AIMD: unlimited at first; each throttle halves the rate, each quiet second adds a step.

    Throttles of requests reserved before the last cut do not cut again: the burst that
    caused a cut is answered by it once, not once per request of the burst.
    """

    def __init__(self) -> None:
        self.rate: float | None = None
        self.cuts = 0
        self._cut_at = -math.inf
        self._changed_at = 0.0
        self._step = MIN_RATE

    def throttled(self, reserved_at: float, now: float, sent: float) -> float | None:
        """A request reserved at ``reserved_at`` was throttled; the new rate, None if unchanged.

        ``sent`` is the units sent over the last second, where an unlimited rate is cut from.
        """
        if reserved_at < self._cut_at:
            return None
        base = self.rate if self.rate is not None else max(sent, MIN_RATE / CUT_FACTOR)
        self.rate = max(MIN_RATE, base * CUT_FACTOR)
        self._step = max(MIN_RATE, base * RAISE_FRACTION)
        self._cut_at = self._changed_at = now
        self.cuts += 1
        return self.rate

    def raised(self, now: float) -> float | None:
        """The rate at ``now`` after the quiet seconds since the last change (maybe unchanged)."""
        if self.rate is None:
            return None
        steps = int((now - self._changed_at) / QUIET_SECONDS)
        if steps > 0:
            self._changed_at += steps * QUIET_SECONDS
            rate = self.rate + steps * self._step
            self.rate = None if rate >= MAX_RATE else rate
        return self.rate


_ONE: Final = {"GetItem", "Query", "Scan"}
_ONE_WRITE: Final = {"PutItem", "UpdateItem", "DeleteItem"}


def request_cost(request: Request) -> tuple[Kind, float] | None:
    """The bucket ``request`` draws from and its estimated units (None: not limited).

    Before the reply nothing says how big the items are: a single read or write is 1 unit,
    a batch one a key or write, a transaction two an action (DynamoDB's transaction price).
    Queries and scans are 1 unit until a reply that reports ``ConsumedCapacity`` says more.
    """
    operation = request.operation
    params = request.params
    if operation in _ONE:
        return "read", 1.0
    if operation in _ONE_WRITE:
        return "write", 1.0
    if operation == "BatchWriteItem":
        items = params.get("RequestItems") or {}
        return "write", float(max(1, sum(len(w) for w in items.values())))
    if operation == "BatchGetItem":
        items = params.get("RequestItems") or {}
        return "read", float(max(1, sum(len(e.get("Keys", ())) for e in items.values())))
    if operation == "TransactWriteItems":
        return "write", 2.0 * max(1, len(params.get("TransactItems") or ()))
    if operation == "TransactGetItems":
        return "read", 2.0 * max(1, len(params.get("TransactItems") or ()))
    return None


def consumed_units(response: Mapping[str, Any]) -> float | None:
    """The capacity units a reply says its request consumed, None when it does not say."""
    consumed = response.get("ConsumedCapacity")
    if consumed is None:
        return None
    each = consumed if isinstance(consumed, list) else [consumed]
    return float(sum(float(c.get("CapacityUnits", 0) or 0) for c in each))


def _text(value: object) -> str | None:
    """A key attribute value (``{"S": "x"}``, ``{"N": "5"}``, ``{"B": ...}``) as text."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return None
    ((_tag, inner),) = value.items()
    if isinstance(inner, bytes | bytearray):
        return base64.b64encode(inner).decode()
    return inner if isinstance(inner, str) else str(inner)


#: Matched through ``re``'s cache, compiled on first use: nothing is compiled at import.
_KEY_CONDITION: Final = r"\s*\(?\s*(#?[\w.]+)\s*=\s*(:\w+)"


def partition_keys_of(
    request: Request, key_attributes: Mapping[str, Sequence[str]] | Sequence[str]
) -> tuple[tuple[str, str], ...]:
    """The (table, partition key value) pairs ``request`` addresses, each once, in order.

    ``key_attributes`` names each table's primary key attributes, partition key first (a
    sequence: the same for every table). A Query's partition key is the value its key
    condition compares first; a Scan addresses none.
    """
    found: dict[tuple[str, str], None] = {}

    def add(table: object, item: object) -> None:
        if not isinstance(item, Mapping):
            return
        name = str(table)
        attrs = (
            key_attributes.get(name, ()) if isinstance(key_attributes, Mapping) else key_attributes
        )
        if attrs:
            text = _text(item.get(attrs[0]))
            if text is not None:
                found[name, text] = None

    params = request.params
    operation = request.operation
    table = params.get("TableName")
    if operation in ("GetItem", "UpdateItem", "DeleteItem"):
        add(table, params.get("Key"))
    elif operation == "PutItem":
        add(table, params.get("Item"))
    elif operation == "Query":
        match = re.match(_KEY_CONDITION, str(params.get("KeyConditionExpression", "")))
        value = None if match is None else (params.get("ExpressionAttributeValues") or {})
        text = None if value is None or match is None else _text(value.get(match.group(2)))
        if text is not None:
            found[str(table), text] = None
    elif operation == "BatchWriteItem":
        for name, writes in (params.get("RequestItems") or {}).items():
            for write in writes:
                put = write.get("PutRequest")
                add(name, put.get("Item") if put else (write.get("DeleteRequest") or {}).get("Key"))
    elif operation == "BatchGetItem":
        for name, entry in (params.get("RequestItems") or {}).items():
            for key in entry.get("Keys", ()):
                add(name, key)
    elif operation in ("TransactWriteItems", "TransactGetItems"):
        for action in params.get("TransactItems") or ():
            for body in action.values():
                if isinstance(body, Mapping):
                    add(body.get("TableName"), body.get("Key") or body.get("Item"))
    return tuple(found)


class TopCounter:
    """Counts of keys in bounded memory: at most ``capacity`` keys are kept.

    A new key arriving when full replaces the least counted one (the oldest of those), and
    counts from 1: every count shown is exact since the key was last taken in, never an
    over-estimate. A key hit again and again stays; a long tail of keys seen once churns
    among the least counted places.
    """

    def __init__(self, capacity: int = 64) -> None:
        if capacity < 1:
            raise LimitExceededError(f"capacity must be at least 1; got {capacity}")
        self.capacity = capacity
        self._counts: dict[tuple[str, str], int] = {}

    def add(self, key: tuple[str, str], count: int = 1) -> None:
        counts = self._counts
        if key in counts or len(counts) < self.capacity:
            counts[key] = counts.get(key, 0) + count
            return
        del counts[min(counts, key=counts.__getitem__)]
        counts[key] = count

    def __len__(self) -> int:
        return len(self._counts)

    def top(self, n: int) -> list[tuple[tuple[str, str], int]]:
        """The ``n`` most counted keys, most first (ties: first seen first)."""
        return sorted(self._counts.items(), key=lambda kv: -kv[1])[:n]


class HotPartition(msgspec.Struct, frozen=True):
    """A partition key value whose requests were throttled, and how many attempts were."""

    table: str
    partition_key: str
    throttled: int


class LimiterStats(msgspec.Struct, frozen=True):
    """One bucket of ``connect(rate_limit=...)``: its rate now, and how often it held requests.

    ``rate`` is units a second (None: unlimited at the moment, as ``"adaptive"`` starts);
    ``waits`` counts the requests that had to wait, ``waited`` adds up the seconds they were
    told to wait; ``cuts`` counts the adaptive rate's cuts (0 for a fixed limit).
    """

    rate: float | None
    waits: int
    waited: float
    cuts: int


class Stats(msgspec.Struct, frozen=True):
    """What ``db.stats()`` reports since the connection opened.

    ``requests``: HTTP requests sent (every attempt); ``throttled``: attempts DynamoDB
    throttled, in all and ``by_table``; ``hot_partitions``: the partition key values
    throttled most, most first (see :class:`HotPartition`); ``read`` and ``write``: the
    limiter's buckets (None without ``rate_limit`` or for a kind it does not limit).
    """

    requests: int
    throttled: int
    by_table: dict[str, int]
    hot_partitions: list[HotPartition]
    read: LimiterStats | None = None
    write: LimiterStats | None = None
