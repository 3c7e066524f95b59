"""Relationship loading under latency: 50 parents' children with 20 ms added to every request.

A delaying loopback proxy (``benchmarks.proxy``) between the client and the loopback server
holds every request back, so the client spends the delay waiting, as on a real network.
``db.load(orders, Order.items)`` should take a handful of round trips; the sequential loop of
one load per order, shown for contrast, takes one round trip per order.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
import time
from collections.abc import Awaitable, Callable

from benchmarks import models, proxy, server
from benchmarks.clients.dynorm_client import open_db
from benchmarks.models import Order
from benchmarks.report import Check, Section, number
from dynorm import Database, RequestEvent

#: Children each order has in this benchmark (a page per parent).
CHILDREN = 10
#: "A handful of round-trip times": the concurrent load's wall time over the delay.
MAX_ROUND_TRIPS = 5.0


def _orders(db: Database, parents: int) -> list[Order]:
    return [db.attach(models.order(f"ORD-LATENCY-{n:03d}")) for n in range(parents)]


async def _timed(db: Database, run: Callable[[], Awaitable[None]]) -> tuple[float, int]:
    """Wall seconds and requests sent for one ``run``."""
    sent: list[RequestEvent] = []
    stop = db.on_request(sent.append)
    gc.collect()
    try:
        wall = time.perf_counter()
        await run()
        return time.perf_counter() - wall, len(sent)
    finally:
        stop()


async def run(*, parents: int, delay: float, repeats: int) -> Section:
    async with contextlib.AsyncExitStack() as stack:
        # Paging mode with one page of CHILDREN: each Query gets just the children, no parent.
        direct = stack.enter_context(server.running(items=1, children=CHILDREN, page_size=CHILDREN))
        url = stack.enter_context(proxy.running(direct, delay=delay))
        db = await open_db(stack, url)
        await db.load(_orders(db, parents), Order.items)  # warm up: open the pool's connections

        async def together() -> None:
            await db.load(_orders(db, parents), Order.items)

        async def one_by_one() -> None:
            for order in _orders(db, parents):
                await db.load([order], Order.items)

        runs = [await _timed(db, together) for _ in range(max(1, min(repeats, 5)))]
        walls = [wall for wall, _ in runs]
        concurrent = statistics.median(walls), runs[0][1]
        sequential = await _timed(db, one_by_one)

    section = Section(
        f"Relationship load under latency: {parents} orders x {CHILDREN} items, "
        f"{delay * 1e3:g} ms added to every request by a delaying proxy",
        ["how", "", "requests", "wall ms", "round trips"],
    )
    for label, (wall, requests) in [
        ("await db.load(orders, Order.items)", concurrent),
        (f"for each order: await db.load([order], Order.items)  ({parents} loads)", sequential),
    ]:
        section.rows.append([label, "", str(requests), number(wall * 1e3), f"{wall / delay:.1f}"])
    spread = (max(walls) - min(walls)) / concurrent[0]
    section.notes.append(
        f"round trips = wall time / injected delay (db.load: median of {len(walls)} runs, "
        f"spread {spread:.0%}; the loop one run)"
    )
    section.checks.append(
        Check(
            concurrent[0] / delay <= MAX_ROUND_TRIPS,
            f"db.load for {parents} parents within {MAX_ROUND_TRIPS:g} round trips",
            f"{concurrent[0] / delay:.1f}",
        )
    )
    return section
