"""A hot partition: likes written to one post as fast as they go, over 1 to 16 shards.

The loopback store (``benchmarks.store``) limits every partition key value to ``RATE`` writes a
second (DynamoDB's 1,000 write units, scaled down tenfold so the client is not the limit first)
and answers writes beyond it with ProvisionedThroughputExceededException. ``WORKERS`` coroutines
each ``db.add(post, Post.likes, like)`` in a loop for a fixed wall time; dynorm retries a
throttled write with backoff as always (with more attempts and no retry quota, so a write is
only given up on after ``MAX_ATTEMPTS``). With ``Partition(shards=N)`` the likes spread over N
partition keys, so the limit is N times higher until the client itself is the limit.

Then the price: ``db.get(Post, post_id=..., load=[Post.likes])`` of a post with ``likes`` likes,
unsharded and over 8 and 16 shards, through the delaying proxy (``benchmarks.proxy``): one
Query per shard, all sent at once, so still one round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import statistics
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import attrs

from benchmarks import data, proxy, store
from benchmarks.clients import ACCESS_KEY, REGION, SECRET_KEY
from benchmarks.report import Check, Section, number, ratio
from dynorm import Database, HasMany, Partition, RequestEvent, Table, ThrottledError, connect

#: Writes a second one partition key value takes (DynamoDB: about 1,000 write units).
RATE = 100.0
#: Concurrent writers.
WORKERS = 64
#: Attempts a throttled write gets (connect's default is 5).
MAX_ATTEMPTS = 10
#: The shard counts of the write rows.
SHARDS = (1, 2, 4, 8, 16)
#: The target: 8 shards write at least this many times what one does.
MIN_SPEEDUP_AT_8 = 4.0
#: The target: a load over 16 shards takes at most this many round trips.
MAX_ROUND_TRIPS = 2.0
_THROTTLED = "ProvisionedThroughputExceededException"


@dataclass(frozen=True)
class Models:
    """A post and its likes, declared for one shard count (0: unsharded)."""

    table: Table
    post: type[Any]
    like: type[Any]
    likes: Any


def models(shards: int) -> Models:
    """The contract's Post and Like with ``Partition(shards=shards)`` (0 or 1: ``Partition()``,
    one partition key for the likes: ``Partition(shards=1)`` is the same)."""
    table = Table(data.TABLE, pk="pk", sk="sk")
    via = Partition(shards=shards) if shards > 1 else Partition()
    like_pk = "POST#{post_id}#{shard}" if shards > 1 else "POST#{post_id}"

    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    @attrs.define
    class Post:
        post_id: str
        likes: ClassVar[HasMany[Like]] = HasMany("Like", via=via)

    @table.model(pk=like_pk, sk="LIKE#{user_id}")
    @attrs.define
    class Like:
        post_id: str
        user_id: str

    return Models(table, Post, Like, Post.likes)


async def _open(stack: contextlib.AsyncExitStack, url: str, table: Table) -> Database:
    return await stack.enter_async_context(
        connect(
            table,
            endpoint_url=url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            max_attempts=MAX_ATTEMPTS,
            retry_quota=None,
        )
    )


@dataclass(frozen=True)
class Written:
    """One write run: accepted writes, throttled attempts and writes given up, in ``seconds``."""

    shards: int
    accepted: int
    throttled: int
    given_up: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.accepted / self.seconds


async def _write(url: str, shards: int, seconds: float) -> Written:
    m = models(shards)
    counts = {"accepted": 0, "given_up": 0, "throttled": 0}
    async with contextlib.AsyncExitStack() as stack:
        db = await _open(stack, url, m.table)
        post_id = f"hot-{shards}"
        post = db.attach(m.post(post_id=post_id))
        serial = iter(range(1 << 62))

        def seen(event: RequestEvent) -> None:
            if event.outcome == _THROTTLED:
                counts["throttled"] += 1

        async def writer() -> None:
            while True:
                like = m.like(post_id=post_id, user_id=f"U{next(serial):09d}")
                try:
                    await db.add(post, m.likes, like)
                except ThrottledError:
                    counts["given_up"] += 1
                else:
                    counts["accepted"] += 1

        stop = db.on_request(seen)
        gc.collect()
        tasks = [asyncio.create_task(writer()) for _ in range(WORKERS)]
        try:
            # Writes that complete within the window count; those still out are cancelled.
            await asyncio.sleep(seconds)
            done = dict(counts)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            stop()
    return Written(shards, done["accepted"], done["throttled"], done["given_up"], seconds)


@dataclass(frozen=True)
class Loaded:
    """One load: its label, requests sent and median wall seconds."""

    label: str
    requests: int
    wall: float


async def _load(url: str, shards: int, likes: int, repeats: int) -> Loaded:
    m = models(shards)
    async with contextlib.AsyncExitStack() as stack:
        db = await _open(stack, url, m.table)
        post_id = f"read-{shards}"
        await db.put_all(
            [m.post(post_id=post_id)]
            + [m.like(post_id=post_id, user_id=f"U{n:05d}") for n in range(likes)]
        )

        async def once() -> tuple[float, int]:
            sent: list[RequestEvent] = []
            stop = db.on_request(sent.append)
            gc.collect()
            try:
                wall = time.perf_counter()
                found = await db.get(m.post, post_id=post_id, load=[m.likes])
                wall = time.perf_counter() - wall
            finally:
                stop()
            got = len(getattr(found, "likes").loaded)  # noqa: B009 - the models are built per N
            if got != likes:
                raise RuntimeError(f"the load over {shards} shards read {got} of {likes} likes")
            return wall, len(sent)

        await once()  # warm up: open the pool's connections, generate the decoders
        runs = [await once() for _ in range(max(1, min(repeats, 5)))]
    label = f"shards={shards}" if shards else "unsharded"
    return Loaded(label, runs[0][1], statistics.median(w for w, _ in runs))


async def run(*, seconds: float, likes: int, delay: float, repeats: int) -> list[Section]:
    with store.running(rate=RATE) as url:
        written = [await _write(url, shards, seconds) for shards in SHARDS]
    with store.running(rate=0) as direct, proxy.running(direct, delay=delay) as url:
        loads = [await _load(url, shards, likes, repeats) for shards in (0, 8, 16)]
    return [_write_section(written, seconds), _load_section(loads, likes, delay, repeats)]


def _write_section(written: list[Written], seconds: float) -> Section:
    section = Section(
        f"Hot partition: {WORKERS} concurrent db.add(post, Post.likes, like) to one post for "
        f"{seconds:g} s, {RATE:g} writes/s a partition key",
        ["shards", "", "accepted", "writes/s", "throttled", "given up", "x 1 shard"],
    )
    one = written[0].per_second or 1.0
    for w in written:
        section.rows.append(
            [
                f"shards={w.shards}",
                "",
                str(w.accepted),
                number(w.per_second),
                str(w.throttled),
                str(w.given_up),
                ratio(w.per_second / one),
            ]
        )
    section.notes.append(
        f"the store's limit: {RATE:g} writes/s per partition key value (a burst of "
        f"{RATE * store.BURST_SECONDS:g}), DynamoDB's 1,000 WCU scaled down: N shards take "
        f"N x {RATE:g}/s, until the client is the limit"
    )
    section.notes.append(
        "throttled: attempts answered ProvisionedThroughputExceededException, retried with "
        f"backoff; given up: writes still throttled after {MAX_ATTEMPTS} attempts"
    )
    by = {w.shards: w.per_second for w in written}
    section.checks.append(
        Check(
            by[8] >= MIN_SPEEDUP_AT_8 * by[1],
            f"8 shards write >= {MIN_SPEEDUP_AT_8:g}x what 1 shard does (the limit allows 8x)",
            ratio(by[8] / (by[1] or 1.0)),
        )
    )
    return section


def _load_section(loads: list[Loaded], likes: int, delay: float, repeats: int) -> Section:
    section = Section(
        f"Sharded load: db.get(Post, post_id=..., load=[Post.likes]) of {likes} likes, "
        f"{delay * 1e3:g} ms added to every request by a delaying proxy",
        ["partition", "", "requests", "wall ms", "round trips"],
    )
    for load in loads:
        section.rows.append(
            [
                load.label,
                "",
                str(load.requests),
                number(load.wall * 1e3),
                f"{load.wall / delay:.1f}",
            ]
        )
    section.notes.append(
        "sharded: the post's GetItem and a Query per shard, sent at once; each Query is billed "
        f"at least one read unit (wall: median of {max(1, min(repeats, 5))} runs)"
    )
    sixteen = loads[-1]
    # The parent and its children share the unsharded partition: one Query reads both.
    want = {"unsharded": 1, "shards=8": 9, "shards=16": 17}
    section.checks.append(
        Check(
            {load.label: load.requests for load in loads} == want,
            "requests: 1 Query unsharded, a GetItem and N Queries sharded",
            ", ".join(str(load.requests) for load in loads),
        )
    )
    section.checks.append(
        Check(
            sixteen.wall / delay <= MAX_ROUND_TRIPS,
            f"a load over 16 shards within {MAX_ROUND_TRIPS:g} round trips",
            f"{sixteen.wall / delay:.1f}",
        )
    )
    return section
