"""Lazy pagination memory: ``async for`` over a large relationship, page after page.

Two passes over the same collection. The first reads the process's peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``, a high-water mark, so this benchmark runs before
the others raise it). The second traces Python allocations (``tracemalloc``, peak since the walk
began) and compares that peak with the peak of reading one page alone: lazy pagination that
holds the current page (and at most the next) stays within a few pages however long the walk.
"""

from __future__ import annotations

import contextlib
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable

from benchmarks import data, models, server
from benchmarks.clients.dynorm_client import open_db
from benchmarks.report import Check, Section, number
from dynorm import Database

#: How often (in children) memory is sampled; growth is reported per this many children.
STEP = 10_000
#: The issue's "within a few pages": the walk's traced peak over one page's.
MAX_PAGES = 3.0


def _max_rss_kib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform == "darwin" else float(peak)  # bytes on macOS


def _traced_peak_kib() -> float:
    return tracemalloc.get_traced_memory()[1] / 1024


async def _walk(
    db: Database, every: int, sample: Callable[[], float]
) -> tuple[list[tuple[int, float]], int, float]:
    """Iterate every child; sample after each ``every``; returns samples, count, CPU seconds."""
    order = db.attach(models.order())
    marks = []
    count = 0
    cpu = time.process_time()
    async for _ in order.items:
        count += 1
        if count % every == 0:
            marks.append((count, sample()))
    cpu = time.process_time() - cpu
    if count % every:
        marks.append((count, sample()))
    return marks, count, cpu


async def _one_page(db: Database) -> int:
    page = await db.query(models.OrderItem, order_id=data.ORDER_ID).page()
    return len(page.items)


def _growth(marks: list[tuple[int, float]]) -> float:
    """Growth per STEP children after the first sample (the first page's setup excluded)."""
    if len(marks) < 2:  # a slope needs two points
        return 0.0
    (n0, v0), (n1, v1) = marks[0], marks[-1]
    return (v1 - v0) / (n1 - n0) * STEP


async def run(*, children: int, page_size: int) -> Section:
    every = min(STEP, max(1, children // 5))
    async with contextlib.AsyncExitStack() as stack:
        url = stack.enter_context(server.running(items=1, children=children, page_size=page_size))
        db = await open_db(stack, url)
        await _one_page(db)  # warm up: connection, botocore's lazy loading, dynorm's codecs

        base = _max_rss_kib()
        rss, count, cpu = await _walk(db, every, lambda: _max_rss_kib() - base)

        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            start = _traced_peak_kib()
            read = await _one_page(db)
            one_page = _traced_peak_kib() - start
            tracemalloc.reset_peak()
            start = _traced_peak_kib()
            traced, _, _ = await _walk(db, every, lambda: _traced_peak_kib() - start)
        finally:
            tracemalloc.stop()

    section = Section(
        f"Lazy pagination: async for over Order.items, {count:,} children in pages of "
        f"{page_size:,}",
        ["children read", "", "peak RSS growth KiB", "traced peak KiB", "traced peak / page"],
    )
    for (n, grown), (_, peak) in zip(rss, traced, strict=True):
        section.rows.append(
            [f"{n:,}", "", number(max(grown, 0)), number(peak), f"{peak / one_page:.2f}"]
        )
    walk_peak = max(peak for _, peak in traced)
    section.notes.append(
        f"growth per {STEP:,} children after the first sample: peak RSS (ru_maxrss) "
        f"{_growth(rss):+,.0f} KiB, traced peak (tracemalloc) {_growth(traced):+,.0f} KiB"
    )
    section.notes.append(
        f"one page of {read:,} children read alone: traced peak {number(one_page)} KiB; "
        f"walk CPU {number(cpu / count * 1e6)} us/child"
    )
    section.checks.append(
        Check(
            walk_peak <= MAX_PAGES * one_page,
            f"peak memory within {MAX_PAGES:g} pages while iterating",
            f"traced peak {walk_peak / one_page:.2f} pages",
        )
    )
    return section
