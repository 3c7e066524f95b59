"""connect(rate_limit=...): token buckets, the adaptive rate, costs, throttled partition keys."""

from __future__ import annotations

import asyncio

import pytest

from dynorm import DefinitionError, LimitExceededError, RateLimit, Request
from dynorm.core.throughput import (
    CUT_FACTOR,
    MAX_RATE,
    MIN_RATE,
    QUIET_SECONDS,
    RAISE_FRACTION,
    AdaptiveRate,
    SendRate,
    TokenBucket,
    TopCounter,
    consumed_units,
    partition_keys_of,
    request_cost,
)
from dynorm.io.ratelimit import Limiter
from dynorm.io.transport import Counts

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
    # A request reserved after the cut was throttled too: the rate halves again.
    assert adaptive.throttled(reserved_at=0.3, now=0.4, sent=0.0) == 400.0 * CUT_FACTOR**2
    assert adaptive.cuts == 2


def test_the_adaptive_rate_grows_back_by_steps_after_quiet_seconds() -> None:
    adaptive = AdaptiveRate()
    adaptive.throttled(reserved_at=0.0, now=0.0, sent=1000.0)
    assert adaptive.rate == 500.0
    step = 1000.0 * RAISE_FRACTION
    assert adaptive.raised(QUIET_SECONDS * 0.9) == 500.0  # not a quiet second yet
    assert adaptive.raised(QUIET_SECONDS) == 500.0 + step
    assert adaptive.raised(QUIET_SECONDS * 3.5) == 500.0 + 3 * step
    # Back where it was cut from after 10 quiet seconds (additive increase).
    assert adaptive.raised(QUIET_SECONDS * 10) == pytest.approx(1000.0)
    # It never falls below MIN_RATE, and past MAX_RATE it is unlimited again.
    low = AdaptiveRate()
    for t in range(20):
        low.throttled(reserved_at=float(t), now=float(t), sent=0.0)
    assert low.rate == MIN_RATE
    high = AdaptiveRate()
    high.throttled(reserved_at=0.0, now=0.0, sent=MAX_RATE)
    assert high.raised(QUIET_SECONDS * 11) is None


def test_the_send_rate_counts_the_last_second_only() -> None:
    sent = SendRate()
    sent.add(100, 0.0)
    sent.add(50, 0.55)
    assert sent.per_second(0.6) == 150
    assert sent.per_second(1.02) == 50  # the first tenth of a second has rolled out
    assert sent.per_second(5.0) == 0


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
    counter = TopCounter(capacity=3)
    for _ in range(50):
        counter.add(("t", "hot"))
    for i in range(100):  # a long tail of keys throttled once each
        counter.add(("t", f"cold{i}"))
    for _ in range(20):
        counter.add(("t", "warm"))
    assert len(counter) == 3
    (first, hot), (second, warm) = counter.top(2)
    assert (first, hot) == (("t", "hot"), 50)
    assert (second, warm) == (("t", "warm"), 20)
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
        for _ in range(12):  # the retries go out at 200 units a second
            retry = await limiter.acquire(BATCH)
            assert retry is not None
            limiter.settle(retry, {"UnprocessedItems": {}})
        # A batch answered with unprocessed items counts as a throttle.
        time.now = 0.02
        partial = await limiter.acquire(BATCH)
        assert partial is not None
        limiter.settle(partial, {"UnprocessedItems": {"app": [{}]}})

    asyncio.run(run())
    # After a cut the bucket starts empty: one batch every 25/200 s (the 13th 10 ms later,
    # which paid back 2 units).
    expected = [(i + 1) * 25 / 200 for i in range(13)]
    expected[-1] -= 0.01
    assert time.slept == pytest.approx(expected)
    write = limiter.stats("write")
    assert write is not None
    assert write.rate == 100.0
    assert write.cuts == 2
    time.now = 0.02 + QUIET_SECONDS
    write = limiter.stats("write")
    assert write is not None
    assert write.rate == pytest.approx(100.0 + 200 * RAISE_FRACTION)


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
