"""Moving live data when a relationship's strategy changes (see docs/migrations.md).

The code always describes the *target* layout: the Table and models as they are declared now.
A migration is told where the data is stored *now* and rewrites it into what the current
declaration writes:

- :func:`migrate` — a HasMany whose strategy changed: ``Partition()`` <-> ``Index(name)``
  (``kind="move"``), ``Embedded(...)`` -> ``Partition()``/``Index(...)`` (``"unembed"``) and
  back (``"embed"``).
- :func:`backfill_index` — a model gained (or changed) key templates for an index: every item
  of the model gets the index key attributes the current templates write (``"backfill"``).
- :func:`repair_copies` — a ``Denormalized(copy=...)`` relationship: every child's copies made
  equal to its parent's fields (``"copies"``).
- :func:`upgrade_items` — a model with ``schema_version=``: every item stored at an older
  version rewritten at the current one through its ``upgrades`` (``"upgrade"``).

Each reads the table with Scan pages (``segments=`` parallel segments, ``page_size`` items a
page) and, page by page, writes what that page needs, item by item (or parent by parent): new
items first (PutItem conditioned on no other item at the key), then the parent's update
(UpdateItem conditioned on the attributes it changes being as the run read them), then
deletions of old items (DeleteItem conditioned on the item being as read). Nothing is deleted
before its replacement is stored. Items are rewritten raw: the stored item (or embedded map
entry) with only its key and strategy attributes replaced, so attributes no model declares
(nested ones inside embedded maps too), timestamps and versions are kept. A page that would
overwrite or lose an item is refused before anything of it is written. An item that does not
decode as the model it fits is left as it is and listed in the report (``skipped``); the run
goes on. The page planning is in dynorm.tools.migrate_kinds, the run (scan, writes, checkpoint,
verification) in dynorm.tools.migrate_run. After each page the progress callback is called and the
checkpoint, if any, is saved; a verification pass re-reads the table at the end.

Two runs at once (a retried job, a second terminal, or two migrations of one table) and runs
interrupted anywhere and run again leave every item once, in one layout, with every attribute:
a write whose condition fails because another run wrote first is read and planned again (or,
for an item, left to that run). Other writers: run a migration between deploys, or with the
writers of that relationship (or model) paused; a write of theirs makes the migration's
conditioned write fail and be planned again, but a writer still running the old code may add
items in the old layout behind the scan: the verification pass reports them (``leftovers``)
and running the migration again moves them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias, cast

import attrs

from dynorm.core.errors import DefinitionError
from dynorm.io.database import Database
from dynorm.mapping.model import ModelTable, info_of, is_model
from dynorm.mapping.relations import HasManyRelation, Relationship
from dynorm.mapping.strategies import Strategy
from dynorm.mapping.table import Table

from .migrate_kinds import (
    MAX_PROBLEMS,
    Backfill,
    Copies,
    Embed,
    Kind,
    MigrationKind,
    Move,
    Unembed,
)
from .migrate_run import (
    CHECKPOINT_VERSION,
    MAX_PAGE_SIZE,
    CheckpointError,
    Counters,
    MigrationError,
    Phase,
    Verification,
    fingerprint_of,
    run,
    total_estimate,
)
from .migrate_status import count_old
from .migrate_upgrade import Upgrade
from .migrate_workers import DEFAULT_LEASE, Workers, progress_table_name, run_workers

__all__ = [
    "CHECKPOINT_VERSION",
    "DEFAULT_LEASE",
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "MAX_PROBLEMS",
    "CheckpointError",
    "MigrationError",
    "MigrationKind",
    "MigrationProgress",
    "MigrationReport",
    "ProgressCallback",
    "Verification",
    "Workers",
    "backfill_index",
    "migrate",
    "migration_status",
    "progress_table_name",
    "repair_copies",
    "upgrade_items",
]

#: Items a Scan page reads by default (its ``Limit``): the unit of writes and checkpoints.
DEFAULT_PAGE_SIZE: Final = 100


@attrs.frozen
class MigrationProgress:
    """Where a run stands, handed to ``on_progress`` after every page.

    ``total`` is DynamoDB's ItemCount of the table (DescribeTable), an *estimate* updated about
    every six hours (None when unknown, or reported as 0): ``scanned`` may pass it. ``phase``
    is ``"migrate"`` (counts are what was written, or would be in a dry run) or ``"verify"``
    (the fresh read).
    """

    kind: MigrationKind
    phase: Literal["migrate", "verify"]
    scanned: int
    total: int | None
    written: int
    deleted: int
    updated: int
    pages: int
    dry_run: bool


ProgressCallback: TypeAlias = Callable[[MigrationProgress], object]
"""``on_progress(progress)``: called after each page; an exception it raises stops the run."""


@attrs.frozen
class MigrationReport:
    """What a migration did (or, with ``dry_run``, would do).

    ``written``: items put; ``deleted``: items deleted; ``updated``: parent items changed in
    place (UpdateItem). With a resumed checkpoint the counts include the earlier runs', and are
    a lower bound of what was written: pages in flight when a run with several segments stopped
    may have been written without their counts being saved. ``refused``: parents or children
    left alone because writing them would lose or replace an item (children that would not fit,
    share a key, or whose key holds another item; only a dry run reports these, a real run
    raises). ``skipped``: items left as they are because they do not decode as the model they
    fit ("key: why"), for instance another tool's item holding a text where the model has a
    number; fix or delete them and run again. ``verification`` is None for a dry run or
    ``verify=False``. With ``workers=``, the counts, ``refused`` and ``skipped`` are every
    worker's (every segment's), ``verification`` covers the segments this worker finished
    (``segments_finished``; None when it finished none, e.g. all were done already).
    """

    kind: MigrationKind
    subject: str
    dry_run: bool
    scanned: int
    written: int
    deleted: int
    updated: int
    pages: int
    total_estimate: int | None
    resumed: bool = False
    refused: tuple[str, ...] = ()
    verification: Verification | None = None
    skipped: tuple[str, ...] = ()
    segments_finished: tuple[int, ...] = ()

    @property
    def changes(self) -> int:
        """Writes of every kind: items put, deleted and updated."""
        return self.written + self.deleted + self.updated

    @property
    def ok(self) -> bool:
        """False when a parent was refused or the verification failed (the CLI exits non-zero)."""
        return not self.refused and (self.verification is None or self.verification.ok)


def _check_has_many(
    db: Database, relationship: Relationship[Any], call: str
) -> HasManyRelation[Any]:
    if not isinstance(relationship, HasManyRelation):
        raise DefinitionError(
            f"{call} takes a HasMany relationship (Parent.children); got {relationship!r}"
        )
    if relationship.owner is None:
        raise DefinitionError(f"{call}: {relationship!r} is not bound to a model class")
    if not relationship.crosses_tables:  # one across tables is checked by _children_view
        db.table.check()
        db.table.info(relationship.owner)  # on this Database's table
    return relationship


def _focus(db: Database, table: ModelTable, where: str) -> Database:
    """``db``, or on a connection of several tables ``db`` focused on ``table`` (the one scanned).

    DefinitionError, before anything is sent, when ``table`` is not on the connection.
    """
    if len(db.tables) == 1 and db.tables[0] is table:
        return db
    try:
        db.name_of(table)
    except DefinitionError as exc:
        raise DefinitionError(f"{where} scans Table {table.name!r}: {exc}") from exc
    return db.focused(cast("Table", table))


def _children_view(
    db: Database, rel: HasManyRelation[Any], from_: Strategy, where: str
) -> Database:
    """``db`` focused on the table of ``rel``'s children, for a relationship across tables.

    The children move within their table (between two indexes of it, or two shard counts of
    one), so the run scans and writes that table; its verification reads each parent, in the
    owner's table, with its children. Any other source layout kept the children in another
    table (or inside the parent), a move between tables a migration does not make: refused.
    """
    owner, children = rel.owner_info.table, rel.children_table
    if from_.index is None or from_.embedded_codec(rel) is not None:
        raise DefinitionError(
            f"{where}: {rel.qualname} reaches into Table {children.name!r} (its "
            f"{rel.target_name} items, read through {rel.via.describe()}), and "
            f"{from_.describe()} kept them in Table {owner.name!r}; a migration moves children "
            f"within one table, so from_= takes an Index of Table {children.name!r} there. "
            f"Copy them into Table {children.name!r} yourself (read, put_all, then delete_all)"
        )
    for table, role in ((children, "its children's"), (owner, "its parents'")):
        try:
            db.name_of(table)
        except DefinitionError as exc:
            raise DefinitionError(
                f"{where}: {rel.qualname} needs Table {table.name!r} ({role}) on the "
                f"connection: connect({owner.name}, {children.name}, ...)"
            ) from exc
    view = db.focused(cast("Table", children))
    view.table.check()
    return view


def _check_index(db: Database, index: str | None, why: str) -> None:
    if index is not None and index not in db.table.indexes:
        declared = ", ".join(db.table.indexes) or "none"
        raise DefinitionError(
            f"{why}: index {index!r} is not declared on Table {db.table.name!r} (declared: "
            f"{declared}); keep it declared while the migration runs"
        )


async def _run(
    db: Database,
    kind: Kind,
    *,
    dry_run: bool,
    checkpoint: str | os.PathLike[str] | None,
    on_progress: ProgressCallback | None,
    segments: int,
    page_size: int,
    verify: bool,
    workers: Workers | None,
) -> MigrationReport:
    def progress(phase: Phase, seen: Counters, total: int | None) -> None:
        if on_progress is not None:
            on_progress(
                MigrationProgress(
                    kind=kind.kind,
                    phase=phase,
                    scanned=seen.scanned,
                    total=total,
                    written=seen.written,
                    deleted=seen.deleted,
                    updated=seen.updated,
                    pages=seen.pages,
                    dry_run=dry_run,
                )
            )

    finished: tuple[int, ...] = ()
    if workers is None:
        outcome = await run(
            db,
            kind,
            dry_run=dry_run,
            checkpoint=checkpoint,
            on_progress=progress,
            segments=segments,
            page_size=page_size,
            verify=verify,
        )
    else:
        if checkpoint is not None:
            raise MigrationError(
                "checkpoint= is the progress file of a single process; with workers= the "
                "progress is kept in the progress table: pass one or the other"
            )
        if segments not in (1, workers.segments):
            raise MigrationError(
                f"segments={segments} and workers=Workers(segments={workers.segments}) differ; "
                "with workers= give the segments there only"
            )
        if type(page_size) is not int or not 1 <= page_size <= MAX_PAGE_SIZE:
            raise MigrationError(
                f"page_size must be an int from 1 to {MAX_PAGE_SIZE}; got {page_size!r}"
            )
        workers.check()
        outcome, finished = await run_workers(
            db,
            kind,
            workers,
            fingerprint=fingerprint_of(db, kind, workers.segments),
            dry_run=dry_run,
            page_size=page_size,
            verify=verify,
            total=await total_estimate(db),
            on_progress=progress,
        )
    counters, checked = outcome.counters, outcome.checked
    return MigrationReport(
        kind=kind.kind,
        subject=kind.subject,
        dry_run=dry_run,
        scanned=counters.scanned,
        written=counters.written,
        deleted=counters.deleted,
        updated=counters.updated,
        pages=counters.pages,
        total_estimate=outcome.total,
        resumed=outcome.resumed,
        refused=outcome.refused,
        verification=checked,
        skipped=outcome.skipped,
        segments_finished=finished,
    )


def _source(rel: HasManyRelation[Any], from_: Strategy | None, call: str) -> Strategy:
    """The strategy the children are stored with now: ``from_``, or the declaration's ``was=``."""
    if from_ is not None and not isinstance(from_, Strategy):
        raise DefinitionError(f"from_= takes a strategy such as Partition(); got {from_!r}")
    if from_ is None and rel.declared_was is None:
        raise DefinitionError(
            f"{call}({rel.qualname}): where are the children stored now? Declare it on the "
            f"relationship, HasMany(via={rel.via.describe()}, was=OLD_STRATEGY), so that reads "
            "and writes of the application take both layouts while the migration runs, or pass "
            "from_=OLD_STRATEGY"
        )
    was = rel.declared_was
    if from_ is not None and was is not None and from_ != was:
        raise DefinitionError(
            f"{call}({rel.qualname}, from_={from_.describe()}): {rel.qualname} declares "
            f"was={was.describe()}; the children move out of the layout was= names. Leave "
            "from_= out (or make the two the same)"
        )
    chosen = from_ if from_ is not None else was
    assert chosen is not None  # noqa: S101 - one of them, checked above
    return chosen


def _strategy_change(
    db: Database, relationship: Relationship[Any], from_: Strategy | None, call: str
) -> tuple[Database, Kind]:
    """The database view and the kind of a move of ``relationship``'s children out of ``from_``.

    DefinitionError, before anything is sent, for a move no migration makes.
    """
    if (
        isinstance(relationship, HasManyRelation)
        and relationship.owner is not None
        and not relationship.crosses_tables
        and len(db.tables) > 1
    ):
        db = _focus(db, relationship.children_table, call)
    rel = _check_has_many(db, relationship, call)
    from_ = _source(rel, from_, call)
    where = f"{call}({rel.qualname}, from_={from_.describe()})"
    if rel.crosses_tables:
        db = _children_view(db, rel, from_, where)
    if from_ == rel.via:
        raise DefinitionError(
            f"{where}: {rel.qualname} is declared with {rel.via.describe()} already; from_= "
            "names the strategy the data is stored with NOW, and the declaration the target"
        )
    kind: Kind
    codec = from_.embedded_codec(rel)  # the old attribute, when the children were embedded
    if codec is not None and rel.embedded is not None:
        raise DefinitionError(
            f"{where}: both layouts are Embedded; migrate to Partition() first, or rename the "
            "attribute by hand"
        )
    if codec is not None:
        child = rel.target_info
        if child.stamps.version is not None:
            raise DefinitionError(
                f"{where}: {child.name} is versioned, and the children become new items from "
                "map entries that carry no version to check; migrate with the version field "
                "removed and add it afterwards"
            )
        kind = Unembed(rel, from_, codec)
    elif rel.embedded is not None:
        target = rel.target_cls
        if not is_model(target) or rel.target_info.table is not db.table:
            raise DefinitionError(
                f"{where}: the old children are items of {target.__name__}, so "
                f"{target.__name__} must still be declared on Table {db.table.name!r} "
                "(@table.model with the key templates it was stored with) while the migration "
                "runs; its templates say where the old items are"
            )
        _check_index(db, from_.index, where)
        old = rel.via_strategy(from_)
        kind = Embed(rel, from_, old)
    else:
        src, dst = from_.index, rel.via.index
        _check_index(db, src, where)
        if src == dst and from_.shards == rel.via.shards and rel.declared_was is not None:
            if rel.via.copies:
                return db, Copies(rel)  # Partition() -> Denormalized(copy=...): fill the copies
            raise DefinitionError(
                f"{where}: children of {from_.describe()} and {rel.via.describe()} live in the "
                "same place and carry no copies to fill, so there is nothing to migrate: "
                "delete was= (reads and writes already take one layout)"
            )
        if src == dst and from_.shards == rel.via.shards:
            raise DefinitionError(
                f"{where}: children of {from_.describe()} and {rel.via.describe()} live in the "
                "same place, so nothing moves; to fill denormalized copies use repair_copies()"
            )
        for index in (src, dst):
            if db.table.key_attributes(index)[1] is None:
                raise DefinitionError(f"{where}: {index or 'the table'} has no sort key")
        kind = Move(rel, from_)
    return db, kind


# -- the public calls -----------------------------------------------------------------------------


async def migrate(
    db: Database,
    relationship: Relationship[Any],
    *,
    from_: Strategy | None = None,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
    segments: int = 1,
    page_size: int = DEFAULT_PAGE_SIZE,
    verify: bool = True,
    workers: Workers | None = None,
) -> MigrationReport:
    """Move ``relationship``'s stored children from ``from_`` into the declared strategy.

    The declaration (``Parent.children`` as the code declares it now) is the target; ``from_``
    says where the children are stored now, and defaults to the declaration's ``was=``
    (DefinitionError when neither is given, or when both are and differ). With ``was=``
    declared the application reads both layouts and writes the new one while the run goes on
    (see docs/migrations.md): each unit of the run (a child moved, a parent embedded or
    unembedded) is then one TransactWriteItems, and a child whose new copy differs from its
    old one (the application wrote it) keeps the new copy: the old one is deleted, while as
    read. Without ``was=`` (``from_=`` alone) such a new key holding another item is refused:
    it may be an unrelated item the move would overwrite.

    - ``Partition()`` <-> ``Index(name)``: the child's key templates are the same before and
      after and only move between the table key and the index key. Each child found in the old
      place is rewritten as stored with only its key attributes replaced (attributes no model
      declares, timestamps and versions are kept), then the old item is deleted; parents get
      the index key attributes the current templates give them. A page where two old children
      get the same new key, or where a new key holds another item already, is refused before
      anything of it is written (the new keys are read first: a BatchGetItem per 100).
    - ``Partition()`` <-> ``Partition(shards=N)`` (``Index(name)`` <-> ``Index(name, shards=N)``
      likewise): a move between the shards' partition keys and the one partition. An old
      child's partition key is the declared template without its ``{shard}`` component (to a
      sharded layout), or with one more component holding its shard, at any position (back
      from one); from one number of shards to another, the declared template (each child's
      shard is recomputed). An index child keeps its table key: it is rewritten in place.
    - ``Embedded(key=..., attribute=...)`` -> a collection: each embedded child becomes an item
      (its map entry as stored, every attribute kept, given its parent's link fields and the
      key attributes), then the attribute is removed from the parent (UpdateItem conditioned
      on the attribute being as read).
    - a collection -> ``Embedded(...)``: each parent's old children are read (the child class
      must still be declared on the table), set as the parent's attribute (each child item as
      stored without its key attributes; refused, before anything is written for that page,
      beyond ``max_items`` or 400 KB, or when two children share a map key or differ from a
      child embedded under theirs; conditioned on the attribute being as read), then each
      deleted while it is as read.

    ``dry_run=True`` reads everything and writes nothing: the report counts what would change.
    ``checkpoint`` is a JSON file saved after each page (a dry run neither reads nor writes it);
    a later call with the same path resumes after the last page saved, and refuses a checkpoint
    of another migration (:class:`CheckpointError`). It is removed once the pass completes.
    ``on_progress`` is called after each page. ``segments`` reads the table in parallel
    segments; ``page_size`` items a Scan page. ``verify`` re-reads the table (consistent Scan)
    and each parent's children through the declared strategy; see :class:`Verification`.
    ``workers=Workers(segments=N, segment=I)`` makes this call one of several processes (on
    one machine or many) that run the migration together: each takes Scan segments (``I``
    first, when given) under a lease, and the progress is kept in a progress table in DynamoDB
    instead of ``checkpoint`` (see dynorm.tools.migrate_workers and docs/migrations.md); the
    call returns once every segment is done, and verifies the segments it finished.

    Concurrent writers: see the module docstring (run between deploys, or with the writers of
    this relationship paused; a second run plus verification catches stragglers).
    """
    db, kind = _strategy_change(db, relationship, from_, "migrate")
    return await _run(
        db,
        kind,
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
        workers=workers,
    )


async def migration_status(
    db: Database,
    relationship: Relationship[Any],
    *,
    from_: Strategy | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> int:
    """The children of ``relationship`` still stored in the old layout (0: all are moved).

    The old layout is the declaration's ``was=`` (or ``from_=``, as for :func:`migrate`). Once
    it says 0, and no process runs code older than the ``was=`` declaration (which would still
    write the old layout), delete ``was=``: reads then take the declared layout alone.

    Cost: one consistent Scan of the table, every item read whole (the read capacity of the
    table's size, as a migration's pass); nothing is written. The same questions as the
    migration's planning are asked of each item, so a child the migration skips (one that does
    not decode) is counted until it is fixed.
    """
    db, kind = _strategy_change(db, relationship, from_, "migration_status")
    if type(page_size) is not int or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise MigrationError(
            f"page_size must be an int from 1 to {MAX_PAGE_SIZE}; got {page_size!r}"
        )
    return await count_old(db, kind, page_size=page_size)


async def backfill_index(
    db: Database,
    model: type[Any],
    index: str | None = None,
    *,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
    segments: int = 1,
    page_size: int = DEFAULT_PAGE_SIZE,
    verify: bool = True,
    workers: Workers | None = None,
) -> MigrationReport:
    """Write the index key attributes ``model``'s templates give, into every item of it.

    For a model that gained key templates for an index (``GSI2=(...)``) or whose templates
    changed: each stored item whose attributes for ``index`` (None: every index the model has
    templates for) differ from what the current templates make is rewritten with them — the
    item read, those attributes replaced, written back whole with a PutItem conditioned on the
    item being as read (an item whose template fields are None loses them, keeping the index
    sparse). Items already right
    are not written. Options as for :func:`migrate`.
    """
    if is_model(model) and len(db.tables) > 1:
        db = _focus(db, info_of(model).table, "backfill_index")
    info = db.table.info(model)
    if index is None:
        indexes = tuple(i for i in db.table.indexes if info.in_index(i))
        if not indexes:
            raise DefinitionError(
                f"backfill_index({info.name}): {info.name} has key templates for no index; "
                f"declare them: @table.model(..., GSI1=(pk_template, sk_template))"
            )
    else:
        _check_index(db, index, f"backfill_index({info.name}, {index!r})")
        if not info.in_index(index):
            raise DefinitionError(
                f"backfill_index({info.name}, {index!r}): {info.name} has no key templates for "
                f"{index!r}; declare them: @table.model(..., {index}=(pk_template, sk_template))"
            )
        indexes = (index,)
    kind = Backfill(info, indexes)
    if not kind.attributes:
        raise DefinitionError(
            f"backfill_index({info.name}): the keys of {', '.join(indexes)} are the table's own "
            "attributes or the model's fields; nothing to backfill"
        )
    return await _run(
        db,
        kind,
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
        workers=workers,
    )


async def repair_copies(
    db: Database,
    relationship: Relationship[Any],
    *,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
    segments: int = 1,
    page_size: int = DEFAULT_PAGE_SIZE,
    verify: bool = True,
    workers: Workers | None = None,
) -> MigrationReport:
    """Make every child's ``Denormalized(copy=...)`` fields equal to its parent's fields.

    For copies added to a relationship (children stored before have none) or gone stale. Each
    parent's children are read through the declared strategy; those whose copies differ are
    rewritten as stored with the copies' attributes (and index keys made from them) replaced:
    other attributes, timestamps and versions are kept. Children already right are not
    written. Options as for :func:`migrate`.
    """
    if (
        isinstance(relationship, HasManyRelation)
        and relationship.owner is not None
        and len(db.tables) > 1
    ):
        db = _focus(db, relationship.children_table, "repair_copies")
    rel = _check_has_many(db, relationship, "repair_copies")
    if not rel.via.copies:
        raise DefinitionError(
            f"repair_copies({rel.qualname}): it is declared with {rel.via.describe()}, which "
            "keeps no copies; declare it via=Denormalized(copy={...}) first"
        )
    return await _run(
        db,
        Copies(rel),
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
        workers=workers,
    )


async def upgrade_items(
    db: Database,
    model: type[Any],
    *,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
    segments: int = 1,
    page_size: int = DEFAULT_PAGE_SIZE,
    verify: bool = True,
    workers: Workers | None = None,
) -> MigrationReport:
    """Rewrite every item of ``model`` stored below its ``schema_version`` at that version.

    Each is upgraded as a read upgrades it (the model's ``upgrades``), then rewritten in place
    with an UpdateItem conditioned on the whole item being as read: attributes the model does
    not declare are kept as the upgrade leaves them. Items at the version are not written;
    items newer than the code, or whose upgrade fails, are left as they are and listed in
    ``skipped``. ``written`` counts the items upgraded. Options as for :func:`migrate`.
    """
    if is_model(model) and len(db.tables) > 1:
        db = _focus(db, info_of(model).table, "upgrade_items")
    info = db.table.info(model)
    if info.versions is None:
        raise DefinitionError(
            f"upgrade_items({info.name}): {info.name} declares no schema version, so every "
            f"item of it is at version 1; declare @table.model(..., schema_version=2, "
            "upgrades={1: v1_to_v2}) first"
        )
    return await _run(
        db,
        Upgrade(info),
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
        workers=workers,
    )
