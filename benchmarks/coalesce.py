"""Coalesced gets: 1,000 concurrent ``db.get`` calls with and without ``connect(coalesce=True)``.

The gets are the shape of a GraphQL resolver or a fan-in endpoint: one ``db.get(Order, id=…)``
per object, all started at once with ``asyncio.gather``. Without coalescing each is a GetItem
(at most ``max_concurrency``, 64, in flight); with it they share BatchGetItem requests of 100
keys. The loopback server (``benchmarks.server``) answers both at once, so the wall time here is
the client's own work per request, not network latency, which coalescing saves as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import statistics
import time

from benchmarks import server
from benchmarks.clients.dynorm_client import open_db
from benchmarks.models import Order
from benchmarks.report import Check, Section, number
from dynorm import BATCH_GET_MAX, Database, RequestEvent


async def _timed(db: Database, ids: list[str]) -> tuple[float, int]:
    """Wall seconds and requests sent for one gather of a get per id."""
    sent: list[RequestEvent] = []
    stop = db.on_request(sent.append)
    gc.collect()
    try:
        wall = time.perf_counter()
        await asyncio.gather(*(db.get(Order, id=i) for i in ids))
        wall = time.perf_counter() - wall
    finally:
        stop()
    return wall, len(sent)


async def run(*, gets: int, repeats: int) -> Section:
    ids = [f"ORD-COALESCE-{n:05d}" for n in range(gets)]
    results: dict[bool, tuple[float, int]] = {}
    async with contextlib.AsyncExitStack() as stack:
        url = stack.enter_context(server.running(items=1))
        for coalesce in (False, True):
            db = await open_db(stack, url, coalesce=coalesce)
            await _timed(db, ids)  # warm up: open the pool's connections, generate the decoder
            runs = [await _timed(db, ids) for _ in range(max(1, min(repeats, 5)))]
            results[coalesce] = statistics.median(w for w, _ in runs), runs[0][1]

    section = Section(
        f"Coalesced gets: {gets:,} concurrent db.get(Order, id=...) on the loopback server",
        ["connect", "requests", "wall ms", "us per get", "x coalesced"],
    )
    fastest = results[True][0]
    for coalesce, (wall, requests) in results.items():
        section.rows.append(
            [
                f"coalesce={coalesce}",
                str(requests),
                number(wall * 1e3),
                number(wall / gets * 1e6),
                f"{wall / fastest:.2f}x",
            ]
        )
    section.notes.append(
        "without coalescing: one GetItem per get; with it: BatchGetItem of up to "
        f"{BATCH_GET_MAX} keys (wall: median of {max(1, min(repeats, 5))} runs)"
    )
    want = math.ceil(gets / BATCH_GET_MAX)
    section.checks.append(
        Check(
            results[True][1] == want and results[False][1] == gets,
            f"{gets:,} concurrent gets: {want} BatchGetItem coalesced, {gets:,} GetItem not",
            f"{results[True][1]} and {results[False][1]} requests",
        )
    )
    return section
