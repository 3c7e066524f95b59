"""connect(rate_limit=...): token buckets, the adaptive rate, costs, throttled partition keys."""

from __future__ import annotations

import asyncio
import random

import pytest

from dynorm import DefinitionError, LimitExceededError, RateLimit, Request
from dynorm.core.throughput import (
    CUBIC_SCALE,
    CUT_FACTOR,
    MIN_RATE,
    RECOVER_SECONDS,
    AdaptiveRate,
    SendRate,
    TokenBucket,
    TopCounter,
    consumed_units,
    partition_keys_of,
    request_cost,
    with_consumed_capacity,
)
from dynorm.io.ratelimit import Limiter
from dynorm.io.transport import HOT_KEYS_KEPT, Counts, Transport

KEYS = {"app": ("PK", "SK"), "audit": ("Id",)}


def test_rate_limit_takes_positive_rates_only() -> None:
    assert RateLimit(write=5) == RateLimit(read=None, write=5)
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(LimitExceededError, match=r"RateLimit\(read=...\) must be a positive"):
            RateLimit(read=bad)


def test_a_bucket_lets_its_burst_go_then_spaces_requests() -> None:
    bucket = TokenBucket(100.0, now=0.0)  # a burst of 10 units
    assert [bucket.reserve(1, 0.0) for _ in range(10)] == [0.0] * 10
    # Then each unit waits one more hundredth of a second: the bucket is in debt.
    assert bucket.reserve(1, 0.0) == pytest.approx(0.01)
    assert bucket.reserve(1, 0.0) == pytest.approx(0.02)
    assert bucket.reserve(25, 0.0) == pytest.approx(0.27)


def test_a_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    bucket = TokenBucket(100.0, now=0.0)
    assert bucket.reserve(10, 0.0) == 0.0
    assert bucket.reserve(5, 0.05) == 0.0  # 5 units came back in 50 ms
    assert bucket.reserve(1, 0.05) == pytest.approx(0.01)
    # An hour later it holds no more than its burst.
    assert bucket.reserve(10, 3600.0) == 0.0
    assert bucket.reserve(1, 3600.0) == pytest.approx(0.01)


def test_an_unlimited_bucket_never_waits_and_a_correction_is_charged() -> None:
    assert TokenBucket(None, now=0.0).reserve(1e9, 0.0) == 0.0
    bucket = TokenBucket(10.0, now=0.0)  # burst 1
    assert bucket.reserve(1, 0.0) == 0.0
    bucket.adjust(4, 0.0)  # it cost 5 units, not 1
    assert bucket.reserve(1, 0.0) == pytest.approx(0.5)


def test_the_adaptive_rate_cuts_from_what_was_sent_and_only_once_a_burst() -> None:
    adaptive = AdaptiveRate()
    assert adaptive.rate is None
    assert adaptive.raised(100.0) is None
    # Unlimited: a throttle cuts from the units sent over the last second.
    assert adaptive.throttled(reserved_at=0.0, now=0.1, sent=400.0) == 400.0 * CUT_FACTOR
    # More throttles of requests reserved before that cut: the same burst, no new cut.
    assert adaptive.throttled(reserved_at=0.05, now=0.2, sent=400.0) is None
    assert adaptive.cuts == 1
    # A request reserved after the cut was throttled too: the rate it has climbed back to
    # halves again.
    climbed = adaptive.raised(0.4)
    assert climbed is not None
    assert 200.0 < climbed < 400.0
    assert adaptive.throttled(reserved_at=0.3, now=0.4, sent=0.0) == climbed * CUT_FACTOR
    assert adaptive.cuts == 2


def test_the_adaptive_rate_climbs_back_along_a_cubic_curve() -> None:
    adaptive = AdaptiveRate()
    adaptive.throttled(reserved_at=0.0, now=0.0, sent=1000.0)
    assert adaptive.rate == 500.0
    rates = [adaptive.raised(t / 2) for t in range(2 * int(RECOVER_SECONDS) + 1)]
    assert all(r is not None for r in rates)
    climb = [r for r in rates if r is not None]
    assert climb == sorted(climb)  # it only climbs
    # Fast at first, flat near the rate it was cut from ...
    assert climb[2] - climb[0] > climb[-1] - climb[-3]
    # ... and back there within RECOVER_SECONDS of the cut.
    assert climb[-1] == pytest.approx(1000.0)
    # Then it probes past it, faster and faster, until it is unlimited again.
    past = [adaptive.raised(RECOVER_SECONDS + t) for t in (1.0, 2.0, 3.0)]
    assert past[0] is not None
    assert past[1] is not None
    assert past[2] is not None
    assert 1000.0 < past[0] < past[1] < past[2]
    assert past[2] - past[1] > past[1] - past[0]
    assert adaptive.raised(RECOVER_SECONDS + 100.0) is None
    assert adaptive.cuts == 1


def test_a_small_gap_closes_sooner_and_the_rate_never_falls_below_the_minimum() -> None:
    small = AdaptiveRate()
    small.throttled(reserved_at=0.0, now=0.0, sent=4.0)  # 4 -> 2 units a second
    # The gap of 2 closes in (2 / CUBIC_SCALE) ** (1/3) seconds, not RECOVER_SECONDS.
    back = (2 / CUBIC_SCALE) ** (1 / 3)
    assert back < RECOVER_SECONDS
    assert small.raised(back) == pytest.approx(4.0)
    low = AdaptiveRate()
    for t in range(20):
        low.throttled(reserved_at=t / 100, now=t / 100, sent=0.0)
    assert low.rate == MIN_RATE
    assert low.cuts == 20


def test_after_any_number_of_cuts_ten_quiet_seconds_bring_the_rate_back() -> None:
    """The issue's case: 373 writes a second, cut again and again, then quiet."""
    for cuts in (1, 2, 5, 9, 20):
        adaptive = AdaptiveRate()
        now = 0.0
        after: list[float] = []
        for _ in range(cuts):  # each throttle of a request reserved after the cut before it
            cut = adaptive.throttled(reserved_at=now, now=now + 0.05, sent=373.0)
            assert cut is not None
            after.append(cut)
            now += 0.05
        # Each throttle cut it further (to the minimum at most).
        assert after == sorted(after, reverse=True)
        assert after[-1] < 373.0 * CUT_FACTOR**0.5**cuts or after[-1] == MIN_RATE
        rate = adaptive.raised(now + 10.0)
        assert rate is None or rate >= 373.0, (cuts, rate)


def test_throttles_while_climbing_back_still_cut_and_the_peak_is_kept() -> None:
    adaptive = AdaptiveRate()
    adaptive.throttled(reserved_at=0.0, now=0.0, sent=800.0)  # 400, climbing back to 800
    halfway = adaptive.raised(3.0)
    assert halfway is not None
    assert 400.0 < halfway < 800.0
    # Throttled again while climbing: cut from where it is, but still aiming for 800.
    assert adaptive.throttled(reserved_at=3.0, now=3.0, sent=0.0) == halfway * CUT_FACTOR
    assert adaptive.raised(3.0 + RECOVER_SECONDS) == pytest.approx(800.0)
    # Throttled once past the peak: a new start from the rate of that moment.
    above = adaptive.raised(3.0 + RECOVER_SECONDS + 2.0)
    assert above is not None
    assert above > 800.0
    adaptive.throttled(reserved_at=20.0, now=3.0 + RECOVER_SECONDS + 2.0, sent=0.0)
    assert adaptive.raised(4.0 + 2 * RECOVER_SECONDS + 2.0) == pytest.approx(above, rel=0.01)


def test_a_connection_throttled_at_its_capacity_keeps_backing_off() -> None:
    """A table that takes 100 units a second: every second above it throttles and cuts."""
    adaptive = AdaptiveRate()
    now, sent = 0.0, 400.0
    adaptive.throttled(reserved_at=0.0, now=0.0, sent=sent)
    over = 0
    while now < 60.0:
        now += 0.1
        rate = adaptive.raised(now)
        if rate is None or rate > 100.0:
            over += 1
            adaptive.throttled(reserved_at=now, now=now, sent=sent)
    # Above the capacity for a moment at a time only: each time a throttle halves it.
    assert adaptive.cuts > 5
    assert over < 60.0 / 0.1 / 4
    assert adaptive.raised(now) is not None


def test_the_send_rate_counts_the_last_second_only() -> None:
    sent = SendRate()
    sent.add(100, 0.0)
    sent.add(50, 0.55)
    assert sent.per_second(0.65) == 150
    # A fifth of the first tenth of a second has rolled out (its units count as spread evenly).
    assert sent.per_second(1.02) == pytest.approx(100 * 0.8 + 50)
    assert sent.per_second(1.1) == 50
    assert sent.per_second(5.0) == 0
    steady = SendRate()
    for n in range(1000):
        steady.add(1, n / 373)
        if n > 373:
            assert steady.per_second(n / 373) == pytest.approx(373, rel=0.02)
    steady.remove(10, 999 / 373)
    assert steady.per_second(999 / 373) == pytest.approx(363, rel=0.02)
    steady.remove(10, 0.0)  # rolled out long ago: nothing to take back
    assert steady.per_second(999 / 373) == pytest.approx(363, rel=0.02)


def request(operation: str, **params: object) -> Request:
    return Request(operation, dict(params))


def test_costs_before_the_reply() -> None:
    key = {"PK": {"S": "a"}, "SK": {"S": "b"}}
    assert request_cost(request("GetItem", TableName="app", Key=key)) == ("read", 1.0)
    assert request_cost(request("Query", TableName="app")) == ("read", 1.0)
    assert request_cost(request("PutItem", TableName="app", Item=key)) == ("write", 1.0)
    writes = [{"PutRequest": {"Item": key}}] * 20 + [{"DeleteRequest": {"Key": key}}] * 5
    batch = request("BatchWriteItem", RequestItems={"app": writes[:20], "audit": writes[20:]})
    assert request_cost(batch) == ("write", 25.0)
    gets = request("BatchGetItem", RequestItems={"app": {"Keys": [key] * 7}})
    assert request_cost(gets) == ("read", 7.0)
    actions = [{"Put": {"TableName": "app", "Item": key}}] * 3
    assert request_cost(request("TransactWriteItems", TransactItems=actions)) == ("write", 6.0)
    get_actions = [{"Get": {"TableName": "app", "Key": key}}] * 2
    assert request_cost(request("TransactGetItems", TransactItems=get_actions)) == ("read", 4.0)
    assert request_cost(request("DescribeTable", TableName="app")) is None


def test_consumed_units_from_a_reply() -> None:
    assert consumed_units({}) is None
    assert consumed_units({"ConsumedCapacity": {"TableName": "a", "CapacityUnits": 2.5}}) == 2.5
    both = [{"TableName": "a", "CapacityUnits": 2}, {"TableName": "b", "CapacityUnits": 3}]
    assert consumed_units({"ConsumedCapacity": both}) == 5


def test_partition_keys_of_each_request_kind() -> None:
    key = {"PK": {"S": "ORG#1"}, "SK": {"S": "USER#2"}}
    for operation in ("GetItem", "UpdateItem", "DeleteItem"):
        assert partition_keys_of(request(operation, TableName="app", Key=key), KEYS) == (
            ("app", "ORG#1"),
        )
    put = request("PutItem", TableName="audit", Item={"Id": {"N": "42"}, "what": {"S": "x"}})
    assert partition_keys_of(put, KEYS) == (("audit", "42"),)
    query = request(
        "Query",
        TableName="app",
        IndexName="GSI1",
        KeyConditionExpression="#pk = :pk AND begins_with(#sk, :sk)",
        ExpressionAttributeValues={":pk": {"S": "ORG#9"}, ":sk": {"S": "U"}},
    )
    assert partition_keys_of(query, KEYS) == (("app", "ORG#9"),)
    binary = request("GetItem", TableName="audit", Key={"Id": {"B": b"\x00\x01"}})
    assert partition_keys_of(binary, KEYS) == (("audit", "AAE="),)
    other = {"PK": {"S": "ORG#3"}, "SK": {"S": "x"}}
    writes = [
        {"PutRequest": {"Item": key}},
        {"DeleteRequest": {"Key": {**key, "SK": {"S": "other"}}}},
        {"PutRequest": {"Item": other}},
    ]
    batch = request("BatchWriteItem", RequestItems={"app": writes})
    assert partition_keys_of(batch, KEYS) == (("app", "ORG#1"), ("app", "ORG#3"))
    gets = request("BatchGetItem", RequestItems={"app": {"Keys": [other, key]}})
    assert partition_keys_of(gets, KEYS) == (("app", "ORG#3"), ("app", "ORG#1"))
    actions = [
        {"Put": {"TableName": "app", "Item": key}},
        {"ConditionCheck": {"TableName": "audit", "Key": {"Id": {"S": "7"}}}},
    ]
    transaction = request("TransactWriteItems", TransactItems=actions)
    assert partition_keys_of(transaction, KEYS) == (("app", "ORG#1"), ("audit", "7"))
    assert partition_keys_of(request("Scan", TableName="app"), KEYS) == ()
    # One key schema for every table (a sequence).
    assert partition_keys_of(request("GetItem", TableName="t", Key=key), ("PK", "SK")) == (
        ("t", "ORG#1"),
    )


def test_the_top_counter_keeps_the_heavy_hitters_in_bounded_memory() -> None:
    counter = TopCounter(capacity=8)
    for _ in range(50):
        counter.add(("t", "hot"))
    for i in range(100):  # a long tail of keys throttled once each
        counter.add(("t", f"cold{i}"))
    for _ in range(20):
        counter.add(("t", "warm"))
    assert len(counter) == 8
    first, second = counter.top(2)
    assert first == (("t", "hot"), 50, 0)  # exact: it was never replaced
    # Taken in among the tail, it took over the count of the key it replaced (its own 20
    # come on top): the true count is within [count - overcount, count].
    key, count, overcount = second
    assert key == ("t", "warm")
    assert count - overcount == 20
    assert 0 < overcount <= 100 // 7 + 1  # at most the tail's 100 over the other 7 places
    with pytest.raises(LimitExceededError):
        TopCounter(capacity=0)


def streams(hot: int, cold: int) -> dict[str, list[tuple[str, str]]]:
    """A key counted ``hot`` times among ``cold`` keys counted once, in four orders."""
    tail = [("app", f"cold{i}") for i in range(cold)]
    hits = [("app", "hot")] * hot
    step = cold // hot
    return {
        "hot first": hits + tail,
        "hot last": tail + hits,
        "interleaved": [
            k for i, c in enumerate(tail) for k in ([hits[0], c] if i % step == 0 else [c])
        ],
        # A fixed shuffle, not a secret.
        "shuffled": random.Random(27).sample(hits + tail, hot + cold),  # noqa: S311
    }


@pytest.mark.parametrize("order", ["hot first", "hot last", "interleaved", "shuffled"])
def test_a_tail_of_keys_seen_once_does_not_push_out_a_hot_key(order: str) -> None:
    # 10,000 keys seen once for 64 places: plain Space-Saving's least count climbs to about
    # 10,000 / 64 = 156 and the key seen 20 times is gone in all but one order; the filter
    # keeps the tail's counts near 1.
    counter = TopCounter(capacity=64)
    for key in streams(20, 10_000)[order]:
        counter.add(key)
    assert len(counter) == 64
    (key, count, overcount), *_ = counter.top(10)
    assert key == ("app", "hot")
    assert count - overcount <= 20 <= count


def test_kept_counts_bound_the_true_counts_and_a_key_above_the_least_is_kept() -> None:
    rng = random.Random(11)  # noqa: S311 - a fixed stream, not a secret
    # Keys drawn with very unequal frequencies (Zipf-like), and a long tail.
    keys = [("t", f"k{int(rng.paretovariate(0.8))}") for _ in range(20_000)]
    counter = TopCounter(capacity=32, filter_size=256)
    true: dict[tuple[str, str], int] = {}
    for key in keys:
        counter.add(key)
        true[key] = true.get(key, 0) + 1
    kept = counter.top(32)
    assert len(kept) == 32
    for key, count, overcount in kept:
        assert count - overcount <= true[key] <= count
    least = min(count for _, count, _ in kept)
    shown = {key for key, _, _ in kept}
    assert all(key in shown for key, n in true.items() if n > least)
    # The heaviest keys come first, in their true order where the bounds tell them apart.
    heaviest = sorted(true, key=true.__getitem__, reverse=True)[:5]
    assert [key for key, _, _ in kept[:5]] == heaviest


@pytest.mark.parametrize("order", ["hot first", "hot last", "interleaved", "shuffled"])
def test_a_key_throttled_20_times_stays_on_top_among_100_000_throttled_once(
    order: str,
) -> None:
    stream = streams(20, 100_000)[order]
    counts = Counts()
    for key in stream:
        counts.throttle(("app",), (key,))
    stats = counts.stats(None)
    assert len(stats.hot_partitions) == 10
    top = stats.hot_partitions[0]
    assert (top.table, top.partition_key) == ("app", "hot")
    # The true count, 20, lies within what is shown.
    assert top.throttled - top.overcount <= 20 <= top.throttled
    assert len(counts.hot or ()) == HOT_KEYS_KEPT  # bounded memory
    # The old rule (a new key evicts the least counted and starts from 1) lost it.
    with pytest.raises(LimitExceededError):
        TopCounter(capacity=0)


class FakeTime:
    """A clock the sleeps move forward: waits are recorded, never slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


PUT = request("PutItem", TableName="app", Item={"PK": {"S": "a"}, "SK": {"S": "b"}})
GET = request("GetItem", TableName="app", Key={"PK": {"S": "a"}, "SK": {"S": "b"}})
BATCH = request(
    "BatchWriteItem", RequestItems={"app": [{"PutRequest": {"Item": {"PK": {"S": "a"}}}}] * 25}
)


def test_a_fixed_limit_spaces_writes_and_leaves_reads_alone() -> None:
    time = FakeTime()
    limiter = Limiter(RateLimit(write=50.0), sleep=time.sleep, clock=time.clock)

    async def run() -> None:
        for _ in range(10):
            await limiter.acquire(PUT)
        assert await limiter.acquire(GET) is None  # reads are not limited
        assert await limiter.acquire(request("DescribeTable", TableName="app")) is None

    asyncio.run(run())
    # A burst of 5 units (a tenth of a second at 50 a second), then 20 ms more each.
    assert time.slept == pytest.approx([0.02, 0.04, 0.06, 0.08, 0.1])
    stats = limiter.stats("write")
    assert stats is not None
    assert (stats.rate, stats.waits, stats.cuts) == (50.0, 5, 0)
    assert stats.waited == pytest.approx(0.3)
    assert limiter.stats("read") is None


def test_the_adaptive_limiter_cuts_on_a_throttle_and_paces_the_retries() -> None:
    time = FakeTime()
    limiter = Limiter("adaptive", sleep=time.sleep, clock=time.clock)

    async def run() -> None:
        tickets = [await limiter.acquire(BATCH) for _ in range(16)]  # 400 units, unlimited
        assert time.slept == []
        time.now = 0.01
        for ticket in tickets[4:]:  # 12 of them throttled: one cut
            assert ticket is not None
            limiter.throttled(ticket)
        write = limiter.stats("write")
        assert write is not None
        assert (write.rate, write.cuts) == (200.0, 1)
        # The retries go out at 200 units a second (the fake clock stands still meanwhile).
        for _ in range(12):
            retry = await limiter.acquire(BATCH)
            assert retry is not None
            limiter.settle(retry, {"UnprocessedItems": {}})
        # A batch answered with unprocessed items counts as a throttle.
        partial = await limiter.acquire(BATCH)
        assert partial is not None
        limiter.settle(partial, {"UnprocessedItems": {"app": [{}]}})

    asyncio.run(run())
    # After a cut the bucket starts empty: one batch every 25/200 s.
    assert time.slept == pytest.approx([(i + 1) * 25 / 200 for i in range(13)])
    write = limiter.stats("write")
    assert write is not None
    assert write.rate == 100.0
    assert write.cuts == 2
    # Both cuts came in one burst: quiet, it climbs back to the 400 units a second sent
    # before the first within RECOVER_SECONDS.
    time.now = 0.01 + RECOVER_SECONDS
    write = limiter.stats("write")
    assert write is not None
    assert write.rate == pytest.approx(400.0)


def test_ten_quiet_seconds_of_sends_after_many_cuts_run_at_the_rate_before_them() -> None:
    """373 writes a second, throttled and cut six times; then ten seconds without a throttle."""
    time = FakeTime()
    limiter = Limiter("adaptive", sleep=time.sleep, clock=time.clock)

    async def send_for(seconds: float) -> int:
        """PutItems back to back as the limiter lets them go (the clock moves by the waits)."""
        sent = 0
        end = time.now + seconds
        while time.now < end:
            ticket = await limiter.acquire(PUT)
            assert ticket is not None
            time.now += max(time.slept[-1] if time.slept else 0.0, 1 / 373)
            time.slept.clear()
            limiter.settle(ticket, {})
            sent += 1
        return sent

    async def run() -> None:
        assert await send_for(1.0) == 373  # unlimited: as fast as the requests go
        for _ in range(6):
            ticket = await limiter.acquire(PUT)
            assert ticket is not None
            limiter.throttled(ticket)
        cut = limiter.stats("write")
        assert cut is not None
        assert cut.cuts == 6
        assert cut.rate is not None
        assert cut.rate < 373 / 32
        await send_for(10.0)
        back = limiter.stats("write")
        assert back is not None
        assert back.rate is None or back.rate >= 373.0, back
        # And the next second runs at that rate again.
        assert await send_for(1.0) >= 373 - 1

    asyncio.run(run())


def test_a_reported_consumed_capacity_corrects_the_estimate() -> None:
    time = FakeTime()
    limiter = Limiter(RateLimit(read=10.0), sleep=time.sleep, clock=time.clock)

    async def run() -> None:
        ticket = await limiter.acquire(GET)
        assert ticket is not None
        limiter.settle(ticket, {"ConsumedCapacity": {"TableName": "app", "CapacityUnits": 5.0}})
        await limiter.acquire(GET)

    asyncio.run(run())
    assert time.slept == pytest.approx([0.5])  # 4 units owed, and 1 more, at 10 a second


def test_counts_report_the_throttled_tables_and_keys() -> None:
    counts = Counts()
    counts.requests = 7
    counts.throttle(("app",), (("app", "ORG#1"),))
    counts.throttle(("app", "audit"), (("app", "ORG#1"), ("audit", "9")))
    stats = counts.stats(None)
    assert (stats.requests, stats.throttled) == (7, 2)
    assert stats.by_table == {"app": 2, "audit": 1}
    assert [(h.table, h.partition_key, h.throttled) for h in stats.hot_partitions] == [
        ("app", "ORG#1", 2),
        ("audit", "9", 1),
    ]
    assert stats.read is None
    assert stats.write is None


def test_rate_limit_must_be_a_rate_limit_or_adaptive() -> None:
    with pytest.raises(DefinitionError, match=r"rate_limit takes RateLimit\(read=..., write=...\)"):
        Limiter("fast")  # type: ignore[arg-type]


def test_a_waiter_cancelled_before_its_turn_gives_its_units_back() -> None:
    time = FakeTime()
    held = asyncio.Event()

    async def sleep(seconds: float) -> None:
        time.slept.append(seconds)
        if len(time.slept) == 1:
            await held.wait()  # the first waiter waits until it is cancelled

    limiter = Limiter(RateLimit(write=10.0), sleep=sleep, clock=time.clock)

    async def run() -> None:
        assert await limiter.acquire(PUT) is not None  # the burst of 1 unit
        waiter = asyncio.ensure_future(limiter.acquire(BATCH))  # 25 units: waits 2.5 s
        await asyncio.sleep(0)
        assert time.slept == [2.5]
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        # The next request waits for its own unit only, not for the 25 never sent.
        assert await limiter.acquire(PUT) is not None

    asyncio.run(run())
    assert time.slept == pytest.approx([2.5, 0.1])  # without giving back: [2.5, 2.6]


def test_a_limited_request_asks_for_its_consumed_capacity_and_is_charged_it() -> None:
    time = FakeTime()
    limiter = Limiter(RateLimit(read=10.0), sleep=time.sleep, clock=time.clock)
    query = request("Query", TableName="app", KeyConditionExpression="#pk = :pk")
    measured = limiter.measured(query)
    assert measured.params == {**query.params, "ReturnConsumedCapacity": "TOTAL"}
    assert measured.operation == "Query"
    # Not limited here (writes), not a data request, or asking already: unchanged.
    assert limiter.measured(PUT) is PUT
    describe = request("DescribeTable", TableName="app")
    assert limiter.measured(describe) is describe
    indexes = request("Query", TableName="app", ReturnConsumedCapacity="INDEXES")
    assert limiter.measured(indexes) is indexes
    assert with_consumed_capacity(describe) is describe

    async def run() -> None:
        ticket = await limiter.acquire(measured)
        assert ticket is not None
        reply: dict[str, object] = {
            "Items": [],
            "ConsumedCapacity": {"TableName": "app", "CapacityUnits": 8.0},
        }
        limiter.settle(ticket, reply, measured=True)
        # The caller sees the reply it would see without a limiter.
        assert reply == {"Items": []}
        await limiter.acquire(measured)

    asyncio.run(run())
    assert time.slept == pytest.approx([0.8])  # 7 units owed, and 1 more, at 10 a second


def test_a_request_cancelled_while_waiting_for_a_place_gives_its_units_back() -> None:
    time = FakeTime()
    limiter = Limiter(RateLimit(write=10.0), sleep=time.sleep, clock=time.clock)
    answer = asyncio.Event()
    sent: list[str] = []

    async def attempt(request: Request) -> dict[str, object]:
        sent.append(request.operation)
        await answer.wait()
        return {}

    transport = Transport(attempt, key_attributes=("PK", "SK"), max_attempts=1, max_concurrency=1)
    transport.limiter = limiter

    async def run() -> None:
        first = asyncio.ensure_future(transport.send(PUT))  # takes the only place
        await asyncio.sleep(0)
        queued = asyncio.ensure_future(transport.send(BATCH))  # its units taken, no place
        for _ in range(3):
            await asyncio.sleep(0)
        assert time.slept == [pytest.approx(2.5)]
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        answer.set()
        await first
        await limiter.acquire(PUT)

    asyncio.run(run())
    assert sent == ["PutItem"]
    # The last PutItem waits for its own unit only (keeping the batch's, it would wait 2.6 s).
    assert time.slept == pytest.approx([2.5, 0.1])
