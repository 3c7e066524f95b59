"""Client-side throughput: the token buckets of ``connect(rate_limit=...)`` and what is throttled.

Pure logic, driven by the caller's clock (seconds, monotonic): nothing here sleeps. The
awaiting half is ``dynorm/io/ratelimit.py``.

- :class:`RateLimit` is the public option: fixed read and write capacity units a second.
- :class:`TokenBucket` hands out reservations: a request takes its cost in units now and is
  told how long to wait before it may go (the bucket may go into debt, so concurrent callers
  queue up one behind the other without polling).
- :class:`AdaptiveRate` is the controller of ``rate_limit="adaptive"``: it starts unlimited,
  halves the rate on a throttle and climbs back along a cubic curve (as TCP CUBIC does) to
  the rate the cuts began from within :data:`RECOVER_SECONDS`.
- :func:`request_cost` estimates what a request costs before it is sent,
  :func:`with_consumed_capacity` asks the reply to say what it did cost, and
  :func:`consumed_units` reads that from the reply.
- :func:`partition_keys_of` names the partition key values a request addresses, and
  :class:`TopCounter` counts the throttled ones in bounded memory.
"""

from __future__ import annotations

import array
import base64
import heapq
import math
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from .errors import LimitExceededError
from .requests import Request

__all__ = [
    "BURST_SECONDS",
    "CUBIC_SCALE",
    "CUT_FACTOR",
    "MAX_RATE",
    "MIN_RATE",
    "RECOVER_SECONDS",
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
    "with_consumed_capacity",
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
#: After the last cut, the rate is back where the cuts began within this many seconds, however
#: many cuts there were (the cubic curve of :class:`AdaptiveRate`) ...
RECOVER_SECONDS: Final = 8.0
#: ... and the curve is never flatter than this (units a second, per second cubed: TCP
#: CUBIC's and botocore's constant), so a small gap closes sooner and the probe past it
#: still climbs.
CUBIC_SCALE: Final = 0.4


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
    """Units sent over the last second, in slots of a tenth of a second (bounded memory).

    Eleven slots are kept: the ten that end now, and the one before them, of which the part
    still inside the last second counts (as if its units came evenly), so a steady rate reads
    as itself at any moment, not up to a slot short.
    """

    _SLOTS: Final = 11
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

    def remove(self, units: float, at: float) -> None:
        """Take back ``units`` added at ``at`` (nothing once that slot has rolled out)."""
        tick = int(at / self._WIDTH)
        slot = tick % self._SLOTS
        if self._stamps[slot] == tick:
            self._units[slot] -= units

    def per_second(self, now: float) -> float:
        tick = int(now / self._WIDTH)
        oldest = tick - self._SLOTS + 1
        # The share of the oldest slot still within the last second.
        share = 1.0 - min(1.0, max(0.0, now / self._WIDTH - tick))
        total = 0.0
        for units, stamp in zip(self._units, self._stamps, strict=True):
            if oldest < stamp <= tick:
                total += units
            elif stamp == oldest:
                total += units * share
        return total


class AdaptiveRate:
    """Cut on a throttle, then back to the rate the cuts began from within seconds (CUBIC).

    It starts unlimited. A throttle multiplies the rate by :data:`CUT_FACTOR`. After a cut the
    rate climbs along a cubic curve, as TCP CUBIC and botocore's adaptive retry mode do: fast
    at first, flat near the rate the cuts began from (the *peak*, reached within
    :data:`RECOVER_SECONDS` of the last cut however deep the cuts went), then faster again
    past it, probing for more, until past :data:`MAX_RATE` it is unlimited again.

    Cuts that come while the rate is still climbing back keep the peak: a throttled burst
    that cuts five times in a row still returns to the rate before the first cut. A throttle
    once the peak is passed starts over from the rate of that moment.

    Throttles of requests reserved before the last cut do not cut again: the burst that
    caused a cut is answered by it once, not once per request of the burst.
    """

    def __init__(self) -> None:
        self.rate: float | None = None
        self.cuts = 0
        self._cut_at = -math.inf
        # The curve since the last cut: rate(t) = peak + scale * (t - cut_at - rise) ** 3.
        self._peak = 0.0
        self._scale = CUBIC_SCALE
        self._rise = 0.0

    def throttled(self, reserved_at: float, now: float, sent: float) -> float | None:
        """A request reserved at ``reserved_at`` was throttled; the new rate, None if unchanged.

        ``sent`` is the units sent over the last second, where an unlimited rate is cut from.
        """
        if reserved_at < self._cut_at:
            return None
        current = self.raised(now)
        base = current if current is not None else max(sent, MIN_RATE / CUT_FACTOR)
        climbing = current is not None and now < self._cut_at + self._rise
        self._peak = max(self._peak, base) if climbing else base
        self.rate = max(MIN_RATE, base * CUT_FACTOR)
        gap = self._peak - self.rate
        # Steep enough to close the gap within RECOVER_SECONDS, never flatter than CUBIC_SCALE
        # (a small gap is closed sooner, and the probe past the peak still gets somewhere).
        self._scale = max(CUBIC_SCALE, gap / RECOVER_SECONDS**3)
        self._rise = (gap / self._scale) ** (1 / 3)
        self._cut_at = now
        self.cuts += 1
        return self.rate

    def raised(self, now: float) -> float | None:
        """The rate at ``now`` on the curve since the last cut (None: unlimited)."""
        if self.rate is None or now <= self._cut_at:
            return self.rate
        rate = self._peak + self._scale * (now - self._cut_at - self._rise) ** 3
        self.rate = None if rate >= MAX_RATE else max(MIN_RATE, rate)
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


def with_consumed_capacity(request: Request) -> Request:
    """``request`` asking for ``ReturnConsumedCapacity=TOTAL`` (as is when it says already).

    Every request :func:`request_cost` charges takes the parameter.
    """
    if "ReturnConsumedCapacity" in request.params or request_cost(request) is None:
        return request
    params = {**request.params, "ReturnConsumedCapacity": "TOTAL"}
    return msgspec.structs.replace(request, params=params)


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
    """The most counted keys of a stream in bounded memory: Filtered Space-Saving.

    At most ``capacity`` keys are kept with their counts (Space-Saving, Metwally et al.), and
    ``filter_size`` small counters stand for every key not kept, by a hash of the key (the
    filter of Homem and Carvalho): each holds a bound on the count of any key not kept that
    hashes to it, raised by the arrivals of such keys and by the count of a key that leaves.

    A key not kept arriving when all places are taken comes in only if its filter counter
    reaches the least count kept; it then replaces the key with that count (the one that
    reached it first) and counts on from the filter counter: a key that came and went and came
    back keeps its count, and a key seen for the first time starts near 1, so a long tail of
    keys seen once churns among the least counted places without raising them. Each kept key
    carries its ``overcount`` (the filter counter it came in with): its true count lies between
    ``count - overcount`` and ``count``. A key counted more often than the least count kept is
    always kept. In plain Space-Saving every new key raises the least count, which a tail of
    ``capacity`` times a hot key's count lifts past it; here the tail spreads over the filter
    (16 counters a kept key by default), and the least count rises only as those fill.
    """

    def __init__(self, capacity: int = 64, filter_size: int | None = None) -> None:
        if capacity < 1 or (filter_size is not None and filter_size < 1):
            raise LimitExceededError(
                f"capacity and filter_size must be at least 1; got {capacity}, {filter_size}"
            )
        self.capacity = capacity
        #: key -> (count, overcount); in the order the keys were taken in.
        self._kept: dict[tuple[str, str], tuple[int, int]] = {}
        #: count -> the keys with that count, in the order they reached it (Stream-Summary:
        #: the least counted key is found without a search).
        self._by_count: dict[int, dict[tuple[str, str], None]] = {}
        self._least = 0
        # 4 bytes a counter: 64 KB for the 16,384 of a connection's 1,024 kept keys.
        self._filter = array.array("I", [0]) * (filter_size or 16 * capacity)

    def _slot(self, key: tuple[str, str]) -> int:
        # crc32, not hash(): the same key lands in the same slot in every process.
        return zlib.crc32("\0".join(key).encode()) % len(self._filter)

    def add(self, key: tuple[str, str]) -> None:
        """Count ``key`` once more."""
        kept = self._kept
        found = kept.get(key)
        if found is not None:
            count, overcount = found
            self._move(key, count, count + 1)
            kept[key] = (count + 1, overcount)
            return
        slot = self._slot(key)
        bound = self._filter[slot]
        if len(kept) >= self.capacity:
            if bound + 1 < self._least:
                self._filter[slot] = bound + 1  # not kept: counted in the filter only
                return
            self._evict()
        kept[key] = (bound + 1, bound)
        self._by_count.setdefault(bound + 1, {})[key] = None
        self._least = min(self._least, bound + 1) if self._least else bound + 1

    def _evict(self) -> None:
        """The least counted key (the one that reached that count first) leaves for the filter."""
        least = self._least
        group = self._by_count[least]
        evicted = next(iter(group))
        del self._kept[evicted]
        slot = self._slot(evicted)
        self._filter[slot] = max(self._filter[slot], least)
        del group[evicted]
        if not group:
            del self._by_count[least]
            self._least = min(self._by_count, default=0)

    def _move(self, key: tuple[str, str], count: int, to: int) -> None:
        """``key`` goes from the group of ``count`` to that of ``to`` (more)."""
        group = self._by_count[count]
        del group[key]
        if not group:
            del self._by_count[count]
            if self._least == count:
                self._least = to  # the key moved there, and nothing was between
        self._by_count.setdefault(to, {})[key] = None

    def __len__(self) -> int:
        return len(self._kept)

    def top(self, n: int) -> list[tuple[tuple[str, str], int, int]]:
        """The ``n`` most counted keys with their counts and overcounts, most first.

        Ties: the key taken in first comes first.
        """
        best = heapq.nsmallest(n, self._kept.items(), key=lambda kv: -kv[1][0])
        return [(key, count, overcount) for key, (count, overcount) in best]


class HotPartition(msgspec.Struct, frozen=True):
    """A partition key value whose requests were throttled, and how many attempts were.

    ``throttled`` may over-count by at most ``overcount`` (0: exact): the counts are kept in
    bounded memory, and a value taken in after others were forgotten starts from a counter it
    shares with them (see :class:`TopCounter`). The true count lies between
    ``throttled - overcount`` and ``throttled``.
    """

    table: str
    partition_key: str
    throttled: int
    overcount: int = 0


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
