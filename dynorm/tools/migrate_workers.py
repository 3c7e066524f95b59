"""One migration run by several processes together, its progress kept in DynamoDB.

With ``workers=Workers(segments=N, ...)`` a migration's Scan is cut in ``N`` segments
(DynamoDB's parallel Scan: ``Segment``/``TotalSegments``) and each process that runs the same
migration takes segments one at a time. Progress is not a local file but one item per
(migration, segment) in a *progress table* (by default ``<table>.dynorm-progress``, created
on first use, on-demand billing): the segment's status (``running``, ``pending`` once a worker
let it go, ``done``), the last evaluated key of its Scan, its counters, what it refused and
skipped, and a lease: the worker holding it and until when (epoch seconds).

- Claiming a segment is an UpdateItem conditioned on the segment having no item yet, or not
  being done with its lease expired: two workers never hold one segment.
- The holder renews its lease after each page (the checkpoint write, conditioned on it still
  being the holder) and every quarter lease while a page is in flight. A worker that finds its
  lease taken (it was paused longer than the lease) stops working on that segment.
- A crashed worker's segment is claimed, once its lease expired, by a worker with nothing else
  to do, which resumes from the segment's last checkpoint (pages in flight when the worker
  died are read and written again: every write is conditioned on what was read, so an item
  already moved is left alone).
- ``segment=I`` makes the worker take segment ``I`` first; without it a worker takes whichever
  segment is free. Either way, once its segment is done a worker takes free or expired ones,
  and waits (polling the progress table every quarter lease, at most every 5 seconds) until
  every segment is done; it then verifies the segments it finished.

Leases compare wall clocks of different machines: keep the lease far longer than their skew.
The bookkeeping items live in a table of their own, so no model's item is ever mistaken for
one (and no migration reads them).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import Any, Final

import attrs

from dynorm.core.chunks import KeyId
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ConditionFailedError, DatabaseError, TableNotFoundError
from dynorm.core.requests import Request, ScanRead, create_table, describe_table, update_item
from dynorm.io.database import Database
from dynorm.io.paging import pages, segment_pages

from .migrate_kinds import MAX_PROBLEMS, Kind
from .migrate_run import (
    Counters,
    MigrationError,
    Outcome,
    Phase,
    migrate_items,
    verify_table,
)

__all__ = [
    "DEFAULT_LEASE",
    "PROGRESS_TABLE_SUFFIX",
    "ProgressTable",
    "Segment",
    "Workers",
    "migration_id",
    "progress_table_name",
    "run_workers",
    "work_segments",
]

#: Seconds a worker holds a segment without renewing it.
DEFAULT_LEASE: Final = 60.0
#: The default progress table is the migrated table's name with this after it.
PROGRESS_TABLE_SUFFIX: Final = ".dynorm-progress"
#: How long a worker waits for the progress table to become active.
TABLE_TIMEOUT: Final = 120.0

_COUNTERS: Final = tuple(f.name for f in attrs.fields(Counters))


def progress_table_name(table_name: str) -> str:
    """The progress table of ``table_name`` unless one is named."""
    return f"{table_name}{PROGRESS_TABLE_SUFFIX}"


def _default_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@attrs.frozen
class Workers:
    """How one process takes part in a migration that several run together.

    ``segments``: the Scan segments the migration is cut in (every worker of one migration
    gives the same number). ``segment``: the one this worker takes first (None: any free one).
    ``progress_table``: where the bookkeeping items go (None: ``<table>.dynorm-progress``).
    ``lease``: seconds a segment stays held by a worker that stopped renewing it.
    ``worker``: this worker's name in the items (default: host, process id and a random part).
    """

    segments: int
    segment: int | None = None
    progress_table: str | None = None
    lease: float = DEFAULT_LEASE
    worker: str = attrs.field(factory=_default_worker)

    def check(self) -> None:
        """MigrationError naming what to change when the numbers do not fit together."""
        if type(self.segments) is not int or self.segments < 1:
            raise MigrationError(f"segments must be a positive int; got {self.segments!r}")
        if self.segment is not None and (
            type(self.segment) is not int or not 0 <= self.segment < self.segments
        ):
            raise MigrationError(
                f"segment must be an int from 0 to {self.segments - 1} (segments={self.segments}); "
                f"got {self.segment!r}"
            )
        if isinstance(self.lease, bool) or not isinstance(self.lease, int | float):
            raise MigrationError(f"lease must be a number of seconds; got {self.lease!r}")
        if not self.lease > 0:
            raise MigrationError(f"lease must be more than 0 seconds; got {self.lease!r}")
        if not self.worker:
            raise MigrationError("worker must be a non-empty name")

    @property
    def poll(self) -> float:
        """Seconds between looks at the progress table, and between renewals of a lease."""
        return min(max(self.lease / 4, 0.05), 5.0)


def migration_id(fingerprint: Mapping[str, object]) -> str:
    """The progress items' partition: what the migration does, and a digest of its fingerprint.

    The endpoint is left out: workers on different machines may reach the same table through
    different endpoints (a proxy, a VPC endpoint), and the progress table is what they share.
    """
    shared = {k: v for k, v in fingerprint.items() if k != "endpoint"}
    digest = hashlib.sha256(json.dumps(shared, sort_keys=True, default=str).encode()).hexdigest()
    what = ":".join(str(fingerprint.get(k)) for k in ("table", "kind", "to"))
    return f"{what}:{digest[:16]}"


class LeaseLostError(MigrationError):
    """Another worker holds the segment now (this one did not renew its lease in time)."""


def _n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def _at(seconds: float) -> dict[str, str]:
    """A time, epoch seconds to the millisecond."""
    return {"N": f"{seconds:.3f}"}


def _num(item: Mapping[str, Any], name: str) -> float:
    value = item.get(name)
    return float(value["N"]) if value else 0.0


def _texts(item: Mapping[str, Any], name: str) -> list[str]:
    value = item.get(name)
    return [v["S"] for v in value["L"]] if value else []


def _text_list(texts: list[str]) -> dict[str, Any]:
    return {"L": [{"S": t} for t in dict.fromkeys(texts)][:MAX_PROBLEMS]}


@attrs.define
class Segment:
    """A segment this worker holds: where its Scan stands and what it did."""

    number: int
    position: Item | None
    counters: Counters
    refused: list[str]
    skipped: list[str]


class ProgressTable:
    """The progress table's items of one migration, read and written with conditions."""

    def __init__(self, db: Database, workers: Workers, name: str, migration: str) -> None:
        self.db = db
        self.workers = workers
        self.name = name
        self.migration = migration

    def _key(self, number: int) -> Item:
        return {"migration": {"S": self.migration}, "segment": {"N": str(number)}}

    async def ensure_table(self) -> None:
        """Create the progress table unless it exists, and wait until it is active."""
        try:
            described = (await self.db.send(describe_table(self.name)))["Table"]
        except TableNotFoundError:
            described = None
        if described is None:
            params = {
                "TableName": self.name,
                "KeySchema": [
                    {"AttributeName": "migration", "KeyType": "HASH"},
                    {"AttributeName": "segment", "KeyType": "RANGE"},
                ],
                "AttributeDefinitions": [
                    {"AttributeName": "migration", "AttributeType": "S"},
                    {"AttributeName": "segment", "AttributeType": "N"},
                ],
                "BillingMode": "PAY_PER_REQUEST",
            }
            try:
                described = (await self.db.send(create_table(params)))["TableDescription"]
            except DatabaseError as exc:  # another worker created it first
                if exc.code != "ResourceInUseException":
                    raise
                described = {}
        deadline = time.monotonic() + TABLE_TIMEOUT
        while (described or {}).get("TableStatus") != "ACTIVE":
            if time.monotonic() > deadline:
                raise MigrationError(
                    f"progress table {self.name!r} is not active after {TABLE_TIMEOUT:.0f}s"
                )
            await asyncio.sleep(0.2)
            with contextlib.suppress(TableNotFoundError):
                described = (await self.db.send(describe_table(self.name)))["Table"]

    async def states(self) -> dict[int, Mapping[str, Any]]:
        """Every segment item stored so far (a consistent Query), by segment number."""
        request = Request(
            "Query",
            {
                "TableName": self.name,
                "KeyConditionExpression": "#m = :m",
                "ExpressionAttributeNames": {"#m": "migration"},
                "ExpressionAttributeValues": {":m": {"S": self.migration}},
                "ConsistentRead": True,
            },
        )
        found: dict[int, Mapping[str, Any]] = {}
        responses = pages(self.db.send, request)
        async with aclosing(responses):
            async for response in responses:
                for item in response.get("Items") or []:
                    found[int(item["segment"]["N"])] = item
        return found

    async def claim(self, number: int, fingerprint: str) -> Segment | None:
        """Take ``number`` if no worker holds it (and it is not done); None if one does."""
        now = time.time()
        request = update_item(
            self.name,
            self._key(number),
            "SET #st = :running, #ow = :me, #ex = :until, #fp = :fp, #ts = :ts",
            ConditionExpression=("attribute_not_exists(#st) OR (#st <> :done AND #ex < :now)"),
            ExpressionAttributeNames={
                "#st": "status",
                "#ow": "owner",
                "#ex": "expires",
                "#fp": "fingerprint",
                "#ts": "segments",
            },
            ExpressionAttributeValues={
                ":running": {"S": "running"},
                ":done": {"S": "done"},
                ":me": {"S": self.workers.worker},
                ":until": _at(now + self.workers.lease),
                ":now": _at(now),
                ":fp": {"S": fingerprint},
                ":ts": _n(self.workers.segments),
            },
            ReturnValues="ALL_NEW",
        )
        try:
            item = (await self.db.send(request))["Attributes"]
        except ConditionFailedError:
            return None
        position = item.get("position")
        return Segment(
            number,
            dict(position["M"]) if position and "M" in position else None,
            Counters(**{name: int(_num(item, name)) for name in _COUNTERS}),
            _texts(item, "refused"),
            _texts(item, "skipped"),
        )

    def _held(
        self, number: int, update: str, values: dict[str, Any], names: dict[str, str]
    ) -> Request:
        """An UpdateItem of segment ``number`` that holds only while this worker holds it."""
        return update_item(
            self.name,
            self._key(number),
            update,
            ConditionExpression="#ow = :me AND #st = :running",
            ExpressionAttributeNames={"#ow": "owner", "#st": "status", **names},
            ExpressionAttributeValues={
                ":me": {"S": self.workers.worker},
                ":running": {"S": "running"},
                **values,
            },
        )

    async def _send_held(self, number: int, request: Request) -> None:
        try:
            await self.db.send(request)
        except ConditionFailedError:
            raise LeaseLostError(
                f"segment {number} of {self.migration} is held by another worker now: this "
                f"worker did not renew its lease within {self.workers.lease}s"
            ) from None

    async def renew(self, number: int) -> None:
        """Push the lease's expiry on; LeaseLostError when another worker holds the segment."""
        until = time.time() + self.workers.lease
        request = update_item(
            self.name,
            self._key(number),
            "SET #ex = :until",
            # Not the status: a renewal may land after the page that finished the segment.
            ConditionExpression="#ow = :me",
            ExpressionAttributeNames={"#ow": "owner", "#ex": "expires"},
            ExpressionAttributeValues={":me": {"S": self.workers.worker}, ":until": _at(until)},
        )
        await self._send_held(number, request)

    async def save(self, segment: Segment, after: Item | None) -> None:
        """The segment's checkpoint after a page (done when ``after`` is None); renews the lease."""
        names = {f"#{c}": c for c in _COUNTERS}
        values: dict[str, Any] = {f":{c}": _n(getattr(segment.counters, c)) for c in _COUNTERS}
        sets = [f"#{c} = :{c}" for c in _COUNTERS]
        names |= {"#ex": "expires", "#rf": "refused", "#sk": "skipped"}
        values |= {
            ":until": _at(time.time() + self.workers.lease),
            ":rf": _text_list(segment.refused),
            ":sk": _text_list(segment.skipped),
        }
        sets += ["#ex = :until", "#rf = :rf", "#sk = :sk"]
        names["#pos"] = "position"
        if after is None:
            names["#fin"] = "status"
            values[":done"] = {"S": "done"}
            update = f"SET {', '.join(sets)}, #fin = :done REMOVE #pos"
        else:
            values[":pos"] = {"M": after}
            update = f"SET {', '.join(sets)}, #pos = :pos"
        await self._send_held(segment.number, self._held(segment.number, update, values, names))

    async def release(self, number: int) -> None:
        """Let the segment go at once (an interrupted worker): pending, its lease expired."""
        request = self._held(
            number,
            "SET #ex = :zero, #st = :pending",
            {":zero": _n(0), ":pending": {"S": "pending"}},
            {"#ex": "expires"},
        )
        with contextlib.suppress(MigrationError):
            await self._send_held(number, request)


async def _holding(progress: ProgressTable, number: int, work: Awaitable[None]) -> None:
    """Run ``work`` while renewing the lease of segment ``number`` every quarter lease."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=progress.workers.poll)
            if done:
                task.result()
                return
            await progress.renew(number)
    except BaseException:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        raise


async def work_segments(
    progress: ProgressTable, stamp: str, work: Callable[[Segment], Awaitable[None]]
) -> tuple[list[int], bool]:
    """Claim segments and ``work`` each under its lease until every segment is done.

    Returns the segments this worker finished, and whether it went on from progress stored
    before (a checkpoint of a segment, or segments done already).
    """
    finished: list[int] = []
    resumed = False
    first = progress.workers.segment
    while (claimed := await _claim_next(progress, stamp, first)) is not None:
        first = None
        resumed = resumed or claimed.position is not None or claimed.counters.pages > 0
        try:
            await _holding(progress, claimed.number, work(claimed))
        except LeaseLostError:
            continue  # another worker took it over: leave it to that one
        except BaseException:
            await asyncio.shield(progress.release(claimed.number))
            raise
        finished.append(claimed.number)
    return finished, resumed or not finished


async def _claim_next(progress: ProgressTable, stamp: str, first: int | None) -> Segment | None:
    """The next segment this worker takes (``first`` if free); None once every one is done.

    Waits, looking again every :attr:`Workers.poll` seconds, while the segments not done are
    held by other workers.
    """
    workers = progress.workers
    while True:
        states = await progress.states()
        done = {n for n, item in states.items() if item.get("status", {}).get("S") == "done"}
        if len(done) >= workers.segments:
            return None
        now = time.time()
        free = [
            n
            for n in range(workers.segments)
            if n not in done and (n not in states or _num(states[n], "expires") < now)
        ]
        if first in free:
            free.remove(first)
            free.insert(0, first)
        for number in free:
            claimed = await progress.claim(number, stamp)
            if claimed is not None:
                return claimed
        await asyncio.sleep(workers.poll)


def _totals(states: Mapping[int, Mapping[str, Any]]) -> tuple[Counters, list[str], list[str]]:
    """Every segment's counters added up, and what they refused and skipped."""
    counters = Counters()
    refused: list[str] = []
    skipped: list[str] = []
    for number in sorted(states):
        item = states[number]
        for c in _COUNTERS:
            setattr(counters, c, getattr(counters, c) + int(_num(item, c)))
        refused += _texts(item, "refused")
        skipped += _texts(item, "skipped")
    return counters, refused, skipped


async def run_workers(
    db: Database,
    kind: Kind,
    workers: Workers,
    *,
    fingerprint: dict[str, object],
    dry_run: bool,
    page_size: int,
    verify: bool,
    total: int | None,
    on_progress: Callable[[Phase, Counters, int | None], None],
) -> tuple[Outcome, tuple[int, ...]]:
    """This worker's part of the migration, until every segment is done.

    Returns the migration's outcome (the counts of every segment, every worker's) and the
    segments this worker finished. A dry run keeps no progress: it counts ``segment`` only.
    """
    workers.check()
    if dry_run:
        return await _dry_run(
            db, kind, workers, page_size=page_size, total=total, on_progress=on_progress
        )
    name = workers.progress_table or progress_table_name(db.table_name)
    progress = ProgressTable(db, workers, name, migration_id(fingerprint))
    await progress.ensure_table()
    stamp = json.dumps(
        {k: v for k, v in fingerprint.items() if k != "endpoint"}, sort_keys=True, default=str
    )
    expected: dict[KeyId, tuple[Item, frozenset[str]]] = {}
    mine = Counters()
    lock = asyncio.Lock()

    async def work(segment: Segment) -> None:
        read = ScanRead(table_name=db.table_name, segment=segment.number, segments=workers.segments)

        async def page(_: int, response: dict[str, Any]) -> None:
            items = list(response.get("Items") or [])
            after = response.get("LastEvaluatedKey") or None
            plan, sent = await migrate_items(db, kind, items, dry_run=False)
            counted = Counters(len(items), sent.written, sent.deleted, sent.updated, 1)
            for c in _COUNTERS:
                setattr(segment.counters, c, getattr(segment.counters, c) + getattr(counted, c))
            segment.refused += plan.refused + sent.refused
            segment.skipped += plan.skipped + sent.skipped
            await progress.save(segment, after)
            async with lock:
                expected.update(plan.embedded)
                for c in _COUNTERS:
                    setattr(mine, c, getattr(mine, c) + getattr(counted, c))
                on_progress("migrate", mine, total)

        await segment_pages(
            db.send, [read.request()], page, starts=[segment.position], limit=page_size
        )

    finished, resumed = await work_segments(progress, stamp, work)
    counters, refused, skipped = _totals(await progress.states())
    checked = None
    if verify and finished:
        checked = await verify_table(
            db,
            kind,
            segments=workers.segments,
            page_size=page_size,
            expected=expected,
            on_progress=lambda p, c: on_progress(p, c, total),
            only=finished,
        )
    outcome = Outcome(
        counters,
        total,
        resumed,
        tuple(refused[:MAX_PROBLEMS]),
        checked,
        tuple(dict.fromkeys(skipped)),
    )
    return outcome, tuple(sorted(finished))


async def _dry_run(
    db: Database,
    kind: Kind,
    workers: Workers,
    *,
    page_size: int,
    total: int | None,
    on_progress: Callable[[Phase, Counters, int | None], None],
) -> tuple[Outcome, tuple[int, ...]]:
    """Count what the segment (or every segment, one after another) would change."""
    chosen = range(workers.segments) if workers.segment is None else [workers.segment]
    counters = Counters()
    refused: list[str] = []
    skipped: list[str] = []

    async def count_page(_: int, response: dict[str, Any]) -> None:
        nonlocal refused, skipped
        items = list(response.get("Items") or [])
        plan, sent = await migrate_items(db, kind, items, dry_run=True)
        counters.scanned += len(items)
        counters.written += sent.written
        counters.deleted += sent.deleted
        counters.updated += sent.updated
        counters.pages += 1
        refused += plan.refused
        skipped += plan.skipped
        on_progress("migrate", counters, total)

    for number in chosen:  # one segment after another
        read = ScanRead(table_name=db.table_name, segment=number, segments=workers.segments)
        await segment_pages(db.send, [read.request()], count_page, limit=page_size)
    outcome = Outcome(
        counters=counters,
        total=total,
        resumed=False,
        refused=tuple(refused[:MAX_PROBLEMS]),
        checked=None,
        skipped=tuple(dict.fromkeys(skipped)),
    )
    return outcome, tuple(chosen)
