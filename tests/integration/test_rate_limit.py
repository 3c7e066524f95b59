"""``connect(rate_limit=...)``: a client-side limit that meets the table's capacity.

The table is reached through the fault proxy (``tests/faultproxy.py``), whose own write capacity
(``proxy.limit_writes``) refuses writes beyond a rate as a table short of capacity does. What is
stored is checked item by item through a direct connection; throttles are counted from the
RequestEvents and the proxy's record, waits from the limiter's recorded decisions.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dynorm import Database, DefinitionError, HotPartition, RateLimit, RequestEvent
from dynorm.testing import RunningServer
from tests.faultproxy import Faulty, FaultyConnect, Injected, connect_through, connect_to

from .fault_models import Entry, faults

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

#: Enough attempts that the run without a limiter also stores everything in the end.
ATTEMPTS = 16
THROTTLED = "ProvisionedThroughputExceededException"


def entries(box: str, count: int) -> list[Entry]:
    return [Entry(box, n, f"{box}-{n}") for n in range(count)]


async def stored(direct: Database, box: str) -> list[Entry]:
    return await direct.query(Entry, box=box, consistent=True).all()


async def put_all_counting_throttles(db: Database, faulty: Faulty, box: str) -> int:
    """Store 400 entries through a proxy taking 400 write units a second; throttled attempts."""
    events: list[RequestEvent] = []
    unsubscribe = db.on_request(events.append)
    faulty.proxy.limit_writes(400, burst=100)
    wanted = entries(box, 400)
    try:
        assert await db.put_all(wanted) == 400
    finally:
        unsubscribe()
        faulty.proxy.limit_writes(None)
    assert await stored(faulty.direct, box) == wanted  # nothing lost
    throttled = [e for e in events if e.outcome == THROTTLED]
    assert all(e.retrying for e in throttled)
    return len(throttled)


async def test_the_adaptive_limit_stores_everything_with_fewer_throttles(
    dynorm_server: RunningServer,
) -> None:
    async with connect_through(
        dynorm_server.url, faults, max_attempts=ATTEMPTS, retry_quota=None
    ) as faulty:
        unlimited = await put_all_counting_throttles(faulty.db, faulty, "unlimited")
        async with connect_to(
            faulty.proxy.url,
            faults,
            faulty.db.table_name,
            max_attempts=ATTEMPTS,
            retry_quota=None,
            rate_limit="adaptive",
        ) as adaptive_db:
            adaptive = await put_all_counting_throttles(adaptive_db, faulty, "adaptive")
            stats = adaptive_db.stats()
        assert faulty.proxy.injected.count(Injected("BatchWriteItem", "provisioned")) == (
            unlimited + adaptive
        )
    assert 0 < adaptive < unlimited, (adaptive, unlimited)
    assert stats.throttled == adaptive
    assert stats.by_table == {faulty.db.table_name: adaptive}
    assert stats.write is not None
    assert stats.write.cuts >= 1
    assert stats.write.rate is not None  # cut from unlimited, not yet grown back past the top
    assert stats.read is not None
    assert stats.read.cuts == 0  # reads were never throttled
    # Every throttled batch held 25 entries of one partition.
    assert stats.hot_partitions == [HotPartition(faulty.db.table_name, "BOX#adaptive", adaptive)]


async def test_a_fixed_write_limit_spaces_the_writes(dynorm_server: RunningServer) -> None:
    async with connect_through(
        dynorm_server.url, faults, rate_limit=RateLimit(write=400)
    ) as faulty:
        wanted = entries("fixed", 200)
        started = time.monotonic()
        assert await faulty.db.put_all(wanted) == 200  # 8 batches of 25 units, started at once
        took = time.monotonic() - started
        stats = faulty.db.stats()
        assert await stored(faulty.direct, "fixed") == wanted
    assert stats.read is None  # reads are not limited
    assert stats.write is not None
    assert (stats.write.rate, stats.write.cuts) == (400.0, 0)
    # A burst of 40 units lets the first batch go; each other one waits at most 25/400 s more
    # than the one before it: (25k - 15) / 400 seconds for k = 1..7, less when a busy machine
    # (botocore's request path) makes a batch reach the bucket later, as it has refilled since.
    # At most the 7 batches after the first wait: on a busy machine a batch reaching the bucket
    # after it refilled enough sends at once (counted from the limiter's decisions, not a clock).
    assert 1 <= stats.write.waits <= 7
    assert 0 < stats.write.waited <= sum(25 * k - 15 for k in range(1, 8)) / 400 * 1.05
    assert took >= 0.35  # the last batch waited (200 - 40) / 400 s; sleeps never end early
    assert stats.throttled == 0
    assert stats.hot_partitions == []


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """Spans go to memory; the SDK's provider is set once for the process (the API's rule)."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


async def test_throttled_partition_keys_are_reported(
    dynorm_server: RunningServer, exporter: InMemorySpanExporter
) -> None:
    async with connect_through(dynorm_server.url, faults) as faulty:
        db, proxy = faulty.db, faulty.proxy
        name = db.table_name
        events: list[RequestEvent] = []
        db.on_request(events.append)
        proxy.inject("throttle", operation="PutItem", times=2)
        proxy.inject("provisioned", operation="BatchWriteItem")
        proxy.inject("throttle", operation="Query")
        exporter.clear()
        await db.put(Entry("hot", 1))
        await db.put_all([*entries("a", 2), *entries("b", 1)])
        assert await db.query(Entry, box="hot").all() == [Entry("hot", 1)]
        stats = db.stats()
        assert await stored(faulty.direct, "a") == entries("a", 2)
        assert await stored(faulty.direct, "b") == entries("b", 1)
    assert [(e.operation, e.outcome, e.partition_keys) for e in events] == [
        ("PutItem", "ThrottlingException", ("BOX#hot",)),
        ("PutItem", "ThrottlingException", ("BOX#hot",)),
        ("PutItem", "ok", ()),
        ("BatchWriteItem", THROTTLED, ("BOX#a", "BOX#b")),
        ("BatchWriteItem", "ok", ()),
        ("Query", "ThrottlingException", ("BOX#hot",)),
        ("Query", "ok", ()),
    ]
    assert stats.requests == len(events)
    assert stats.throttled == 4
    assert stats.by_table == {name: 4}
    assert stats.hot_partitions == [
        HotPartition(name, "BOX#hot", 3),
        HotPartition(name, "BOX#a", 1),
        HotPartition(name, "BOX#b", 1),
    ]
    assert (stats.read, stats.write) == (None, None)  # no limiter
    spans = {s.name.split()[0]: s for s in exporter.get_finished_spans()}
    put = spans["PutItem"]
    assert dict(put.attributes or {})["dynorm.throttled_partition_keys"] == ("BOX#hot",)
    first, _, last = put.events
    assert dict(first.attributes or {})["dynorm.partition_keys"] == ("BOX#hot",)
    assert "dynorm.partition_keys" not in dict(last.attributes or {})
    batch = dict(spans["BatchWriteItem"].attributes or {})
    assert batch["dynorm.throttled_partition_keys"] == ("BOX#a", "BOX#b")


async def test_a_rate_limit_of_another_kind_is_refused(dynorm_server: RunningServer) -> None:
    with pytest.raises(DefinitionError, match=r"rate_limit takes RateLimit\(read=..., write=...\)"):
        async with connect_to(dynorm_server.url, faults, "never-created", rate_limit="fast"):
            pass


async def test_a_limited_read_is_charged_the_capacity_the_server_reports(
    faulty_connect: FaultyConnect,
) -> None:
    """The limiter asks for ConsumedCapacity and charges what the reply reports.

    moto reports fixed amounts, whatever the items' size: 1 unit a Query (the estimate too)
    and half a unit a GetItem (an eventually consistent read of up to 4 KB, estimated 1). So
    the Query shows that the capacity is asked for and kept from the caller, the GetItem that
    the reported half unit is what is charged.
    """
    async with faulty_connect(faults, rate_limit=RateLimit(read=1)) as faulty:
        db, proxy = faulty.db, faulty.proxy
        await faulty.direct.put_all([Entry("box", n) for n in range(3)])
        page = await db.query(Entry, box="box").page(limit=10)  # takes the bucket's 1 unit
        assert len(page) == 3
        assert proxy.bodies[-1]["ReturnConsumedCapacity"] == "TOTAL"
        assert page.consumed is None  # the caller sees the page it would see without a limiter
        before = time.monotonic()
        await db.get(Entry, box="box", n=0)  # waits about a second; charged half a unit
        assert proxy.bodies[-1]["ReturnConsumedCapacity"] == "TOTAL"
        told_first = waited(db)
        first = asyncio.ensure_future(db.get(Entry, box="box", n=1))
        await held(db, 2)
        span = time.monotonic() - before
        told = waited(db) - told_first
        # It is told to wait for what the first get was, plus the half unit that one was
        # charged (a whole one at the estimate), less what the bucket refilled in between:
        # at least the first get's wait, at most the time since it was called.
        assert told_first + 0.5 - span <= told <= 0.5 + 1e-6
        # Cancelled while it waits, it gives its unit back: the next get is told to wait no
        # longer than it was (keeping it, the next would wait a whole second more).
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        second = asyncio.ensure_future(db.get(Entry, box="box", n=2))
        await held(db, 3)
        assert waited(db) - told_first - told <= told + 1e-6
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        assert proxy.requests.count("GetItem") == 1  # neither cancelled get was sent


async def held(db: Database, waits: int) -> None:
    """Returns once the limiter has held ``waits`` reads (a get held waits on the next turn)."""
    for _ in range(100):
        read = db.stats().read
        assert read is not None
        if read.waits >= waits:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"the limiter held fewer than {waits} reads")


def waited(db: Database) -> float:
    """The seconds the limiter has told reads to wait, in all."""
    read = db.stats().read
    assert read is not None
    return read.waited
