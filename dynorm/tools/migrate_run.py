"""How a migration runs: the Scan loop, each page's writes, checkpoints and the verification.

A kind (dynorm.tools.migrate_kinds) plans each page; this module reads the pages, sends what the
plans say, saves the checkpoint after each page and re-reads the table to verify. The public
calls are in dynorm.migrations, which also exports the Verification built here.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import attrs

from dynorm.core.chunks import KeyId
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    ConditionFailedError,
    DynormError,
    TableNotFoundError,
    TransactionCanceledError,
)
from dynorm.core.requests import ScanRead, consistent_get, transact_write
from dynorm.io.database import Database
from dynorm.io.paging import segment_pages
from dynorm.mapping.writes import transact_action

from .migrate_kinds import MAX_PROBLEMS, Kind, PagePlan, Reach, Unit, describe_key

__all__ = [
    "CHECKPOINT_VERSION",
    "CheckpointError",
    "Counters",
    "MigrationError",
    "Outcome",
    "Phase",
    "Sent",
    "Verification",
    "fingerprint_of",
    "migrate_items",
    "run",
    "total_estimate",
    "verify_table",
]

#: The format of checkpoint files; a file of another version is refused.
CHECKPOINT_VERSION: Final = 2
#: The largest Scan page a migration reads (DynamoDB's Limit has no bound; a page's writes and
#: its checkpoint are the unit of progress, so pages stay small).
MAX_PAGE_SIZE: Final = 1000

Phase: TypeAlias = Literal["migrate", "verify"]


class MigrationError(DynormError):
    """A migration that cannot run, or cannot go on, as asked; the message says what to change."""


class CheckpointError(MigrationError):
    """A checkpoint file that belongs to another migration, or cannot be read or written."""


@attrs.define
class Counters:
    """What a pass has done so far."""

    scanned: int = 0
    written: int = 0
    deleted: int = 0
    updated: int = 0
    pages: int = 0


@attrs.frozen
class Verification:
    """The fresh read after a migration.

    ``leftovers``: the writes, deletes and parent updates a run would still make (a child still
    in the old layout counts its write and its delete) — 0 when nothing is left in the old
    layout. ``parents``/``children``: parents read and children read through the declared
    strategy (``db.get(..., load=[rel])`` and the loader). ``unreachable``: child items stored
    in the new layout that their parent's loader does not return. ``orphans``: child items whose
    parent is not stored (reported, not a failure: they had no parent before either).
    ``unchecked``: child items whose parent the verification cannot name (the relationship's
    link does not give a whole parent key), so not checked; ``problems`` says so.

    For ``embed``, each parent this run changed must hold every child it was given (those
    moved in and those embedded before); one missing counts as ``unreachable``. For
    ``backfill``, ``leftovers`` is the check: items whose index keys still differ from what
    the templates give (``parents`` and ``children`` stay 0).
    """

    leftovers: int
    parents: int
    children: int
    unreachable: int
    orphans: int
    problems: tuple[str, ...] = ()
    unchecked: int = 0

    @property
    def ok(self) -> bool:
        """Whether nothing is left in the old layout and every child is reachable."""
        return self.leftovers == 0 and self.unreachable == 0


@attrs.frozen
class Outcome:
    """What a run did: its counts (earlier runs' included when resumed) and verification."""

    counters: Counters
    #: DescribeTable's ItemCount (None: unknown)
    total: int | None
    resumed: bool
    refused: tuple[str, ...]
    checked: Verification | None
    #: items left as they are because they do not decode: "key: why"
    skipped: tuple[str, ...] = ()


# -- checkpoints ----------------------------------------------------------------------------------

_CHECKPOINT_KEYS: Final = frozenset(
    {"version", "fingerprint", "positions", "done", "counters", "refused", "skipped"}
)


def _malformed(path: Path, why: str) -> CheckpointError:
    return CheckpointError(
        f"checkpoint {str(path)!r} is not a checkpoint this version of dynorm wrote ({why}); "
        "delete it to start over"
    )


@attrs.define
class Checkpoint:
    """The JSON file that lets an interrupted run resume (see docs/migrations.md)."""

    path: Path | None
    fingerprint: dict[str, object]
    positions: list[Item | None]
    done: list[bool]
    counters: Counters
    refused: list[str] = attrs.field(factory=list)
    skipped: list[str] = attrs.field(factory=list)
    resumed: bool = False

    @classmethod
    def open(cls, path: Path | None, fingerprint: dict[str, object], segments: int) -> Checkpoint:
        """The checkpoint at ``path`` when it is this migration's, else a fresh one.

        CheckpointError when the file is another migration's, or not a checkpoint at all.
        """
        fresh = cls(path, fingerprint, [None] * segments, [False] * segments, Counters())
        if path is None or not path.exists():
            return fresh
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                f"checkpoint {str(path)!r} cannot be read ({exc}); delete it to start over"
            ) from exc
        if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), dict):
            raise _malformed(path, "no fingerprint")
        stored: dict[str, object] = data["fingerprint"]
        if data.get("version") != CHECKPOINT_VERSION or stored != fingerprint:
            diff = ", ".join(
                f"{k}: {stored.get(k)!r} there, {fingerprint.get(k)!r} here"
                for k in sorted({*stored, *fingerprint})
                if stored.get(k) != fingerprint.get(k)
            )
            raise CheckpointError(
                f"checkpoint {str(path)!r} belongs to another migration ({diff or 'version'}); "
                "pass another checkpoint path, or delete this one to start over"
            )
        return cls._parse(path, fingerprint, segments, data)

    @classmethod
    def _parse(
        cls, path: Path, fingerprint: dict[str, object], segments: int, data: dict[str, Any]
    ) -> Checkpoint:
        unknown = set(data) - _CHECKPOINT_KEYS
        missing = _CHECKPOINT_KEYS - {"refused", "skipped"} - set(data)
        if unknown or missing:
            what = [f"unknown {sorted(unknown)}"] if unknown else []
            what += [f"missing {sorted(missing)}"] if missing else []
            raise _malformed(path, ", ".join(what))
        positions, done, counters = data["positions"], data["done"], data["counters"]
        refused = data.get("refused", [])
        skipped = data.get("skipped", [])
        fields = {f.name for f in attrs.fields(Counters)}
        if not (
            isinstance(positions, list)
            and len(positions) == segments
            and all(p is None or isinstance(p, dict) for p in positions)
        ):
            raise _malformed(path, f"positions must be {segments} scan positions")
        if not (
            isinstance(done, list)
            and len(done) == segments
            and all(isinstance(d, bool) for d in done)
        ):
            raise _malformed(path, f"done must be {segments} booleans")
        if not (
            isinstance(counters, dict)
            and set(counters) == fields
            and all(type(v) is int and v >= 0 for v in counters.values())
        ):
            raise _malformed(path, f"counters must hold {', '.join(sorted(fields))}")
        for name, texts in (("refused", refused), ("skipped", skipped)):
            if not (isinstance(texts, list) and all(isinstance(r, str) for r in texts)):
                raise _malformed(path, f"{name} must be a list of texts")
        return cls(
            path,
            fingerprint,
            positions,
            done,
            Counters(**counters),
            refused,
            skipped,
            resumed=True,
        )

    def save(self) -> None:
        """Write the file (atomically: a crash leaves the old checkpoint or the new one)."""
        if self.path is None:
            return
        data = {
            "version": CHECKPOINT_VERSION,
            "fingerprint": self.fingerprint,
            "positions": self.positions,
            "done": self.done,
            "counters": attrs.asdict(self.counters),
            "refused": self.refused[:MAX_PROBLEMS],
            "skipped": list(dict.fromkeys(self.skipped)),
        }
        # A name of this run's own: two runs of one command at once share the checkpoint.
        partial = self.path.with_name(f"{self.path.name}.{os.getpid()}-{id(self)}.tmp")
        try:
            partial.write_text(json.dumps(data, indent=1, sort_keys=True, default=_jsonable))
            partial.replace(self.path)
        except OSError as exc:
            raise CheckpointError(
                f"checkpoint {str(self.path)!r} cannot be written ({exc}); pass a path in a "
                "directory that exists and is writable"
            ) from exc

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()


def _jsonable(value: object) -> object:
    if isinstance(value, bytes | bytearray):  # a binary key value on the botocore path
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# -- reading and writing --------------------------------------------------------------------------


async def total_estimate(db: Database) -> int | None:
    """The table's ItemCount (None: unknown); TableNotFoundError when there is no table."""
    described = await db.describe_table()
    if described is None:
        raise TableNotFoundError(
            f"there is no table {db.table_name!r} to migrate: check its name and where it is "
            "(endpoint, region); nothing was read or written",
            code="ResourceNotFoundException",
            operation="DescribeTable",
        )
    count = (described or {}).get("ItemCount")
    # 0 is what a table reports until its first count (dynalite: always): read it as unknown.
    return int(count) if count else None


async def _scan_pages(
    db: Database,
    *,
    segments: int,
    page_size: int,
    positions: list[Item | None],
    done: list[bool],
    on_page: Callable[[int, list[Item], Item | None], Awaitable[None]],
    consistent: bool,
) -> None:
    """Read every segment page by page (segments concurrently), ``on_page`` after each.

    A segment a resumed checkpoint finished (``done``) is not read again; the others go on
    from their ``positions``.
    """
    numbers = [n for n in range(segments) if not done[n]]
    scans = [  # every model's items, as stored
        ScanRead(db.table_name, segment=n, segments=segments, consistent=consistent).request()
        for n in numbers
    ]

    async def page(i: int, response: dict[str, Any]) -> None:
        after = response.get("LastEvaluatedKey") or None
        await on_page(numbers[i], list(response.get("Items") or []), after)

    starts = [positions[n] for n in numbers]
    await segment_pages(db.send, scans, page, starts=starts, limit=page_size)


#: Units of one page sent at once.
CONCURRENCY: Final = 16
#: How often a unit whose parent another writer changed first is read and planned again.
MAX_REPLANS: Final = 5


@attrs.define
class Sent:
    """What a page's writes did (as opposed to what its plan said)."""

    written: int = 0
    deleted: int = 0
    updated: int = 0
    refused: list[str] = attrs.field(factory=list)
    skipped: list[str] = attrs.field(factory=list)


async def _execute(db: Database, kind: Kind, plan: PagePlan, sent: Sent) -> None:
    """Send a page's units, concurrently; each unit's steps in order (see Unit)."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(unit: Unit, depth: int) -> None:
        async with gate:
            replan = await _send_unit(db, unit, sent)
        if replan is None:
            return
        if depth >= MAX_REPLANS:
            sent.refused.append(
                f"{describe_key(db.table, replan)}: changed by another writer {depth} times "
                "while this run planned it; run the migration again to move it"
            )
            return
        # The parent changed since it was read (another run at once, say): read it again,
        # and plan it again from what is stored now.
        fresh = (await db.send(consistent_get(replan, db.table_name))).get("Item")
        if fresh is None:
            return  # deleted meanwhile: nothing to move into it or out of it
        again = await kind.plan(db, [fresh])
        sent.refused += again.refused
        sent.skipped += again.skipped
        await _all(one(u, depth + 1) for u in again.units)

    await _all(one(u, 0) for u in plan.units)


async def _all(work: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``work`` concurrently; the first failure cancels the rest and is raised as it is."""
    try:
        async with asyncio.TaskGroup() as group:
            for each in work:
                group.create_task(each)
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None


async def _send_unit(db: Database, unit: Unit, sent: Sent) -> Item | None:
    """Send one unit's steps in order; the parent's key when its update must be planned again.

    A step whose condition fails stops the steps after it that depend on it: nothing is deleted
    unless what replaces it is stored.
    """
    name = db.table_name
    if unit.atomic:
        return await _send_atomic(db, unit, sent)
    for item in unit.creates:
        try:
            await db.send(unit.create_request(name, item))
            sent.written += 1
        except ConditionFailedError:
            # Something is stored at the new key: the same item (put by another run), or not.
            key = {a: item[a] for a in db.table.primary_attributes}
            there = (await db.send(consistent_get(key, name))).get("Item")
            if there != item:
                sent.refused.append(
                    f"{describe_key(db.table, item)}: another item was stored at this new key "
                    "while the run read the old one; the old item is left as it is"
                )
                return None
    for old, new in unit.rewrites:
        try:
            await db.send(unit.rewrite_request(name, old, new))
            sent.written += 1
        except ConditionFailedError:
            pass  # changed (or deleted) since it was read: a second run plans it afresh
    if unit.update is not None:
        try:
            await db.send(unit.update)
            sent.updated += 1
        except ConditionFailedError:
            return unit.parent
    for old in unit.deletes:
        try:
            await db.send(unit.delete_request(name, old))
            sent.deleted += 1
        except ConditionFailedError:
            pass  # deleted by another run, or changed since: then it is left for a second run
    return None


async def _send_atomic(db: Database, unit: Unit, sent: Sent) -> Item | None:
    """Send a unit's steps as one TransactWriteItems (see ``Unit.atomic``).

    Cancelled by a condition (the application wrote the child, or its parent, since the run
    read it): nothing of it was written, and ``unit.parent`` is read again and planned again.
    """
    name = db.table_name
    requests = [
        *(unit.create_request(name, item) for item in unit.creates),
        *(unit.rewrite_request(name, old, new) for old, new in unit.rewrites),
        *([unit.update] if unit.update is not None else []),
        *(unit.delete_request(name, old) for old in unit.deletes),
    ]
    try:
        await db.send(transact_write([transact_action(r) for r in requests]))
    except TransactionCanceledError as exc:
        if any(r.code == "ConditionalCheckFailed" for r in exc.reasons):
            return unit.parent
        raise
    sent.written += len(unit.creates) + len(unit.rewrites)
    sent.updated += unit.update is not None
    sent.deleted += len(unit.deletes)
    return None


async def migrate_items(
    db: Database, kind: Kind, items: list[Item], *, dry_run: bool
) -> tuple[PagePlan, Sent]:
    """Plan one page's items and send the plan (count it only, in a dry run).

    MigrationError, before anything of the page is written, when the plan refuses a parent.
    """
    plan = await kind.plan(db, items)
    plan.check_writes()
    if plan.refused and not dry_run:
        raise MigrationError(
            f"{kind.subject}: nothing was written for this page: "
            + "; ".join(plan.refused[:MAX_PROBLEMS])
        )
    if dry_run:
        return plan, Sent(plan.written, plan.deleted, plan.updated)
    sent = Sent()
    await _execute(db, kind, plan, sent)
    return plan, sent


# -- the run --------------------------------------------------------------------------------------


def fingerprint_of(db: Database, kind: Kind, segments: int) -> dict[str, object]:
    """What identifies a migration in its checkpoint: where it runs and what it does."""
    return {
        "endpoint": db.endpoint,
        "region": db.region,
        "table": db.table_name,
        "kind": kind.kind,
        **kind.fingerprint(),
        "to": kind.subject,
        "segments": segments,
    }


async def run(
    db: Database,
    kind: Kind,
    *,
    dry_run: bool,
    checkpoint: str | os.PathLike[str] | None,
    on_progress: Callable[[Phase, Counters, int | None], None],
    segments: int,
    page_size: int,
    verify: bool,
) -> Outcome:
    """Run ``kind`` over the table; MigrationError when a page is refused (not in a dry run)."""
    if type(segments) is not int or segments < 1:
        raise MigrationError(f"segments must be a positive int; got {segments!r}")
    if type(page_size) is not int or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise MigrationError(
            f"page_size must be an int from 1 to {MAX_PAGE_SIZE}; got {page_size!r}"
        )
    path = None if dry_run or checkpoint is None else Path(checkpoint)
    state = Checkpoint.open(path, fingerprint_of(db, kind, segments), segments)
    state.save()  # a path that cannot be written fails here, before anything is written
    try:
        total = await total_estimate(db)
    except TableNotFoundError:
        if not state.resumed:
            state.remove()  # nothing ran: no progress to keep (nor to offer to resume)
        raise
    counters = state.counters
    lock = asyncio.Lock()
    expected: dict[KeyId, tuple[Item, frozenset[str]]] = {}

    async def migrate_page(number: int, items: list[Item], after: Item | None) -> None:
        plan, sent = await migrate_items(db, kind, items, dry_run=dry_run)
        async with lock:
            expected.update(plan.embedded)
            counters.scanned += len(items)
            counters.written += sent.written
            counters.deleted += sent.deleted
            counters.updated += sent.updated
            counters.pages += 1
            state.refused += plan.refused + sent.refused
            state.skipped += plan.skipped + sent.skipped
            state.positions[number] = after
            state.done[number] = after is None
            state.save()
            on_progress("migrate", counters, total)

    await _scan_pages(
        db,
        segments=segments,
        page_size=page_size,
        positions=state.positions,
        done=state.done,
        on_page=migrate_page,
        consistent=False,
    )
    state.remove()
    checked = None
    if verify and not dry_run:
        checked = await verify_table(
            db,
            kind,
            segments=segments,
            page_size=page_size,
            expected=expected,
            on_progress=lambda p, c: on_progress(p, c, total),
        )
    return Outcome(
        counters,
        total,
        state.resumed,
        tuple(state.refused[:MAX_PROBLEMS]),
        checked,
        tuple(dict.fromkeys(state.skipped)),
    )


async def verify_table(
    db: Database,
    kind: Kind,
    *,
    segments: int,
    page_size: int,
    expected: dict[KeyId, tuple[Item, frozenset[str]]],
    on_progress: Callable[[Phase, Counters], None],
    only: Collection[int] | None = None,
) -> Verification:
    """Re-read the table (consistent Scan), or only the segments ``only`` names, and check it."""
    seen = Counters()
    leftovers = 0
    total = Reach()
    problems: list[str] = []
    lock = asyncio.Lock()

    async def verify_page(number: int, items: list[Item], after: Item | None) -> None:
        nonlocal leftovers
        del number, after
        plan = await kind.plan(db, items)
        reach = await kind.reach(db, items, expected)
        async with lock:
            left = plan.written + plan.deleted + plan.updated + len(plan.refused)
            leftovers += left
            if left and len(problems) < MAX_PROBLEMS:
                problems.append(
                    f"{left} change(s) still to make in a page: "
                    f"{plan.written} to write, {plan.deleted} to delete, "
                    f"{plan.updated} parents to update, {len(plan.refused)} refused"
                )
            problems.extend(plan.refused[: MAX_PROBLEMS - len(problems)])
            total.parents |= reach.parents
            total.children += reach.children
            total.unreachable += reach.unreachable
            total.orphans += reach.orphans
            total.unchecked += reach.unchecked
            problems.extend(reach.problems[: MAX_PROBLEMS - len(problems)])
            seen.scanned += len(items)
            seen.pages += 1
            on_progress("verify", seen)

    await _scan_pages(
        db,
        segments=segments,
        page_size=page_size,
        positions=[None] * segments,
        done=[only is not None and n not in only for n in range(segments)],
        on_page=verify_page,
        consistent=True,
    )
    return Verification(
        leftovers=leftovers,
        parents=len(total.parents),
        children=total.children,
        unreachable=total.unreachable,
        orphans=total.orphans,
        unchecked=total.unchecked,
        problems=tuple(problems),
    )
