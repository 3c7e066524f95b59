"""``python -m benchmarks``: run every benchmark in this process and print one table.

The cold start benchmarks (a library's, a FastAPI app's on AWS Lambda) and the pytest plugin's,
last, time fresh processes of their own (``benchmarks.coldstart``, ``benchmarks.lambda_start``,
``benchmarks.fixture``).

``--quick`` shrinks every input (the smoke test uses it); explicit options still win over it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import os
import platform
import sys
from dataclasses import dataclass

from benchmarks import (
    coalesce,
    coldstart,
    fixture,
    hot,
    lambda_start,
    latency,
    paging,
    per_request,
    query_page,
    writes,
)
from benchmarks.report import Section, render

_PACKAGES = (
    *("dynorm", "aiobotocore", "botocore", "aiohttp", "orjson", "cattrs"),
    *("boto3", "pynamodb", "pynamodb-async", "aiodynamo", "pydynox"),
)


@dataclass(frozen=True)
class Sizes:
    """Every input size, full or ``--quick``."""

    items: int
    writes: int
    repeats: int
    get_batch: int
    children: int
    page_size: int
    parents: int
    delay_ms: float
    cold_runs: int
    warm_calls: int
    fixture_tests: int
    fixture_rounds: int
    gets: int
    hot_seconds: float
    likes: int


FULL = Sizes(
    items=5000,
    writes=5000,
    repeats=7,
    get_batch=200,
    children=100_000,
    page_size=1000,
    parents=50,
    delay_ms=20.0,
    cold_runs=9,
    warm_calls=20,
    fixture_tests=120,
    fixture_rounds=5,
    gets=1000,
    hot_seconds=2.0,
    likes=200,
)
QUICK = Sizes(
    items=20,
    writes=20,
    repeats=1,
    get_batch=5,
    children=300,
    page_size=50,
    parents=5,
    delay_ms=2.0,
    cold_runs=1,
    warm_calls=2,
    fixture_tests=4,
    fixture_rounds=1,
    gets=250,
    hot_seconds=0.3,
    likes=50,
)

#: The help of every ``Sizes`` field's option (``--get-batch`` for ``get_batch``); the help
#: shows ``FULL``'s value.
_SIZE_HELP = {
    "items": "order items in the page",
    "writes": "items put_all writes",
    "repeats": "timed runs per client",
    "get_batch": "GetItem and PutItem requests per timed run",
    "children": "collection size for pagination",
    "page_size": "server page size",
    "parents": "parents in the latency benchmark",
    "delay_ms": "injected delay per request",
    "cold_runs": "fresh processes per library in the cold start benchmarks",
    "warm_calls": "warm invocations of each fresh process in the AWS Lambda benchmark",
    "fixture_tests": "tests in the larger suite of the pytest plugin benchmark (the smaller: 1/6)",
    "fixture_rounds": "pytest runs of each suite in the pytest plugin benchmark",
    "gets": "concurrent db.get calls in the coalesced gets benchmark",
    "hot_seconds": "seconds of writes to one post at each shard count (hot partition)",
    "likes": "likes of the post a sharded load reads",
}


@dataclass(frozen=True)
class Options:
    """What to run and how."""

    sizes: Sizes
    collect: bool
    check: bool


def _arguments(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    for name, what in _SIZE_HELP.items():
        default = getattr(FULL, name)
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            type=type(default),
            help=f"{what} ({default:,g})",
        )
    parser.add_argument("--quick", action="store_true", help="tiny inputs, one repeat (smoke)")
    parser.add_argument(
        "--no-gc",
        dest="collect",
        action="store_false",
        help="turn the garbage collector off during timed runs (each client's own code alone)",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target FAILs")
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    fields = Sizes.__dataclass_fields__
    given = {k: v for k, v in vars(args).items() if k in fields and v is not None}
    if any(v <= 0 for v in given.values()):
        parser.error("sizes, repeats and the delay must be positive")
    return Options(Sizes(**{**base.__dict__, **given}), collect=args.collect, check=args.check)


def _preamble() -> list[str]:
    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} -")
    title = (
        f"dynorm benchmarks: Python {platform.python_version()} on {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} CPUs"
    )
    return [title, "  " + ", ".join(versions)]


async def _run(sizes: Sizes, *, collect: bool) -> list[Section]:
    # Pagination first: its peak RSS reading needs a process whose high-water mark is still low.
    memory = await paging.run(children=sizes.children, page_size=sizes.page_size)
    page = await query_page.run(items=sizes.items, repeats=sizes.repeats, collect=collect)
    written = await writes.run(items=sizes.writes, repeats=sizes.repeats, collect=collect)
    requests = [
        await per_request.run(
            operation, batch=sizes.get_batch, repeats=sizes.repeats, collect=collect
        )
        for operation in per_request.OPERATIONS
    ]
    waits = await latency.run(
        parents=sizes.parents, delay=sizes.delay_ms / 1e3, repeats=sizes.repeats
    )
    coalesced = await coalesce.run(gets=sizes.gets, repeats=sizes.repeats)
    sharded = await hot.run(
        seconds=sizes.hot_seconds,
        likes=sizes.likes,
        delay=sizes.delay_ms / 1e3,
        repeats=sizes.repeats,
    )
    return [page, written, *requests, memory, waits, coalesced, *sharded]


def main(argv: list[str] | None = None) -> int:
    options = _arguments(argv)
    sections = asyncio.run(_run(options.sizes, collect=options.collect))
    # Fresh processes of their own, after the rest (it needs no event loop).
    sections.append(coldstart.run(runs=options.sizes.cold_runs))
    sections.append(lambda_start.run(runs=options.sizes.cold_runs, warm=options.sizes.warm_calls))
    tests = options.sizes.fixture_tests
    sections.append(
        fixture.run(small=max(1, tests // 6), large=tests, rounds=options.sizes.fixture_rounds)
    )
    print(render(_preamble(), sections), flush=True)
    failed = any(c.ok is False for s in sections for c in s.checks)
    return 1 if options.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
