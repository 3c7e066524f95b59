"""Importing a NoSQL Workbench table's items into DynamoDB (see dynorm.tools.workbench).

:func:`import_model` checks everything first (keys of the Table, the models and the live
table, every item against DynamoDB's limits), creates the table when missing, then writes the
items in batches; with ``workers=`` several processes share one import under leases, as a
migration's workers share its segments (dynorm.tools.migrate_workers).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import attrs

from dynorm.core.chunks import BATCH_WRITE_MAX, chunked
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import DatabaseError, DynormError, TableNotFoundError
from dynorm.core.limits import MAX_KEY_NAME_BYTES, check_item
from dynorm.core.steps import write_batch
from dynorm.mapping.table import GSI, Table

from .migrate_workers import ProgressTable, Segment, Workers, progress_table_name, work_segments
from .workbench_model import KeyType, WorkbenchError, WorkbenchModel, WorkbenchTable, base64_text
from .workbench_read import TableKeys, attribute_name, read_item

if TYPE_CHECKING:
    from dynorm.io.database import Database

__all__ = [
    "ImportIncompleteError",
    "ImportReport",
    "ImportedItem",
    "import_model",
]


class ImportIncompleteError(DynormError):
    """An import stopped part-way: a write failed after its retries (the cause is chained).

    ``stored`` of the model's ``total`` items are stored for certain (the writes DynamoDB
    confirmed); the others may not be. An import writes whole items, so running it again
    stores the rest and rewrites the stored ones unchanged.
    """

    def __init__(self, message: str, *, table_name: str, stored: int, total: int) -> None:
        super().__init__(message)
        self.table_name = table_name
        self.stored = stored
        self.total = total


@attrs.frozen
class ImportedItem:
    """One item an import stored: its primary key and the model it maps to (None: none)."""

    key: Item
    model: str | None = None


@attrs.frozen
class ImportReport:
    """What :func:`import_model` did.

    ``items`` lists every item stored (its key, and with ``models=`` the model it maps to);
    ``classified`` says whether models were given. With ``workers=``, ``segments_finished``
    names the runs of items this worker stored (the others stored the rest).
    """

    table_name: str
    created: bool
    items: tuple[ImportedItem, ...]
    classified: bool = False
    segments_finished: tuple[int, ...] = ()

    @property
    def written(self) -> int:
        """How many items were stored."""
        return len(self.items)

    @property
    def unmapped(self) -> tuple[ImportedItem, ...]:
        """The items no model maps (empty without ``models=``)."""
        return tuple(i for i in self.items if self.classified and i.model is None)

    @property
    def by_model(self) -> dict[str, int]:
        """Model name -> how many of the items it maps (models in first-seen order)."""
        counts: dict[str, int] = {}
        for item in self.items:
            if item.model is not None:
                counts[item.model] = counts.get(item.model, 0) + 1
        return counts


def _key_text(found: WorkbenchTable, item: Mapping[str, AttributeValue]) -> str:
    return ", ".join(f"{a}={next(iter(v.values()))!r}" for a, v in found.key_of(item).items())


def _check_same_keys(table: Table, found: WorkbenchTable, what: str) -> None:
    theirs = (found.pk.name, found.sk.name if found.sk else None)
    if (table.pk, table.sk) != theirs:
        raise WorkbenchError(
            f"{what} Table {table.name!r} has keys pk={table.pk!r}, sk={table.sk!r}; the "
            f"model's table {found.name!r} has pk={theirs[0]!r}, sk={theirs[1]!r}. Use a Table "
            "with the same keys (table_from_model(model) makes one)"
        )


def _check_indexes(table: Table, found: WorkbenchTable) -> None:
    for index in found.indexes:
        mine = table.indexes.get(index.name)
        wanted = (index.pk.name, index.sk.name if index.sk else None)
        if not isinstance(mine, GSI) or (mine.pk, mine.sk) != wanted:
            raise WorkbenchError(
                f"the model's index {index.name!r} (pk={wanted[0]!r}, sk={wanted[1]!r}) is not "
                f"declared on Table {table.name!r}, which would create the table without it; "
                "connect with table_from_model(model)"
            )


def _check_live(described: Mapping[str, Any], found: WorkbenchTable, table_name: str) -> None:
    """Refuse to write into an existing table whose keys differ from the model's."""
    schema = {k["KeyType"]: k["AttributeName"] for k in described.get("KeySchema", [])}
    live = (schema.get("HASH"), schema.get("RANGE"))
    wanted = (found.pk.name, found.sk.name if found.sk else None)
    if live != wanted:
        raise WorkbenchError(
            f"table {table_name!r} exists with keys pk={live[0]!r}, sk={live[1]!r}; the "
            f"model's table has pk={wanted[0]!r}, sk={wanted[1]!r}. Import into another table"
        )
    types = {
        d["AttributeName"]: d["AttributeType"] for d in described.get("AttributeDefinitions", [])
    }
    for key in found.key_attributes:
        if key.name in types and types[key.name] != key.type:
            raise WorkbenchError(
                f"table {table_name!r} types key attribute {key.name!r} as "
                f"{types[key.name]}; the model as {key.type}. Import into another table"
            )


def _check_key_names(found: WorkbenchTable) -> None:
    """Again, for a WorkbenchTable not read from a file: key and projected attribute names."""
    for key in found.key_attributes:
        attribute_name(key.name, f"table {found.name!r}", MAX_KEY_NAME_BYTES)
    for index in found.indexes:
        for name in index.projection if isinstance(index.projection, tuple) else ():
            attribute_name(name, f"index {index.name!r} projection", MAX_KEY_NAME_BYTES)


async def _create(db: Database, found: WorkbenchTable, timeout: float) -> None:
    # The model's key types (read_model allows S, N and B only).
    types: dict[str, KeyType] = {k.name: cast("KeyType", k.type) for k in found.key_attributes}
    await db.create_table(timeout=timeout, key_types=types)


async def _write_all(
    db: Database, writes: list[dict[str, Any]], on_progress: Callable[[int, int], None] | None
) -> None:
    """Every write, a batch at a time, all batches at once; counts what is confirmed stored."""
    total = len(writes)
    stored = 0

    async def write(batch: Sequence[dict[str, Any]]) -> None:
        nonlocal stored
        await db.run(write_batch(batch))
        stored += len(batch)
        if on_progress is not None:
            on_progress(stored, total)

    outcomes = await asyncio.gather(
        *(write(batch) for batch in chunked(writes, BATCH_WRITE_MAX)), return_exceptions=True
    )
    failed = [e for e in outcomes if isinstance(e, BaseException)]
    for error in failed:
        if not isinstance(error, DynormError):
            raise error  # a bug, or a cancellation: as it is
    if failed:
        cause = failed[0]
        raise ImportIncompleteError(
            f"the import into {db.table_name!r} stopped part-way: {stored} of {total} items are "
            f"stored, {total - stored} may not be ({type(cause).__name__}: {cause}). Run the "
            "same import again to store the rest: it writes whole items, so the stored ones are "
            "rewritten unchanged",
            table_name=db.table_name,
            stored=stored,
            total=total,
        ) from cause


async def import_model(
    db: Database,
    model: WorkbenchModel | WorkbenchTable,
    *,
    source: str | None = None,
    create: bool = True,
    models: Table | None = None,
    timeout: float = 60.0,
    on_progress: Callable[[int, int], None] | None = None,
    workers: Workers | None = None,
) -> ImportReport:
    """Store a Workbench table's items in ``db``'s table, creating the table if it is missing.

    ``db`` is connected with :func:`table_from_model` (or any Table with the model's keys and
    global indexes); the live table is ``db.table_name``. ``source`` names the model's table
    when it has several. With ``create`` the table is created when missing (its indexes,
    on-demand billing) and waited for; an existing table must have the model's keys. Items are
    written with BatchWriteItem (25 a request, throttled ones retried), each as a whole item,
    so importing again overwrites the same keys. ``models``: a Table whose classifier reports
    which model each item maps to (``report.unmapped`` lists those no model maps).
    ``on_progress(stored, total)`` is called each time a batch of items is confirmed stored.

    ``workers=Workers(segments=N, ...)`` makes this call one of several processes importing
    the same file together: the items are cut in ``N`` runs of the file's order, each claimed
    under a lease in the progress table, as a migration's segments are (see
    dynorm.tools.migrate_workers); a dead worker's run is taken over from its last stored
    batch once its lease expires. The call returns once every run is stored
    (``report.segments_finished``: the runs this worker stored; ``on_progress`` counts them).

    When a write fails after its retries, the other batches are let finish, then
    :class:`ImportIncompleteError` says how many items are stored; importing again completes
    the table (items are written whole, so the stored ones are rewritten unchanged).

    Everything is checked before the first request that changes anything: the keys of
    ``db.table``, of ``models`` and of the live table against the model's, and every item
    against DynamoDB's limits (size, nesting).
    """
    found = model.table(source) if isinstance(model, WorkbenchModel) else model
    _check_same_keys(db.table, found, "the Database's")
    if models is not None:
        _check_same_keys(models, found, "models")
    _check_key_names(found)
    imported = tuple(
        ImportedItem(
            key=found.key_of(item),
            model=None if models is None or (info := models.model_of(item)) is None else info.name,
        )
        for item in found.items
    )
    keys = TableKeys.of(found.pk, found.sk, found.indexes)
    writes = []
    for n, item in enumerate(found.items):
        # Again, for a WorkbenchTable not read from a file: values, key values, sets.
        read_item(item, f"table {found.name!r} items[{n}]", keys)
        wire = {a: _as_wire(v) for a, v in item.items()}
        check_item(wire, f"item {_key_text(found, item)}", deep=True)  # size, depth, text
        writes.append({"PutRequest": {"Item": wire}})
    described = await db.describe_table()
    created = False
    if described is not None:
        _check_live(described, found, db.table_name)
    elif not create:
        raise TableNotFoundError(
            f"table {db.table_name!r} does not exist; import with create=True to create it",
            code="ResourceNotFoundException",
            operation="DescribeTable",
        )
    else:
        _check_indexes(db.table, found)
        try:
            await _create(db, found, timeout)
            created = True
        except DatabaseError as exc:
            # Another worker of a shared import created it first: wait until it is active.
            if workers is None or exc.code != "ResourceInUseException":
                raise
            deadline = asyncio.get_running_loop().time() + timeout
            while ((await db.describe_table()) or {}).get("TableStatus") != "ACTIVE":
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.2)
    finished: tuple[int, ...] = ()
    if workers is not None:
        finished = await _write_shared(db, found, writes, workers, on_progress)
    elif writes:
        await _write_all(db, writes, on_progress)
    return ImportReport(
        table_name=db.table_name,
        created=created,
        items=imported,
        classified=models is not None,
        segments_finished=finished,
    )


#: Items a worker of a shared import stores between two saves of its progress.
SHARED_STEP: Final = 100


async def _write_shared(
    db: Database,
    found: WorkbenchTable,
    writes: list[dict[str, Any]],
    workers: Workers,
    on_progress: Callable[[int, int], None] | None,
) -> tuple[int, ...]:
    """This worker's part of an import several run: runs of the items, claimed under leases."""
    count = workers.segments
    bounds = [len(writes) * n // count for n in range(count + 1)]
    digest = hashlib.sha256(
        json.dumps(writes, sort_keys=True, default=base64_text).encode()
    ).hexdigest()[:16]
    name = workers.progress_table or progress_table_name(db.table_name)
    job = f"{db.table_name}:import:{found.name}:{count}:{digest}"
    progress = ProgressTable(db, workers, name, job)
    await progress.ensure_table()
    stored = 0

    async def work(segment: Segment) -> None:
        nonlocal stored
        run = writes[bounds[segment.number] : bounds[segment.number + 1]]
        start = int(segment.position["next"]["N"]) if segment.position else 0
        while True:
            step = run[start : start + SHARED_STEP]
            if step:
                await _write_all(db, step, None)
            start += len(step)
            stored += len(step)
            segment.counters.written += len(step)
            segment.counters.pages += 1
            left = start < len(run)
            await progress.save(segment, {"next": {"N": str(start)}} if left else None)
            if on_progress is not None:
                on_progress(stored, len(writes))
            if not left:
                return

    finished, _ = await work_segments(progress, job, work)
    return tuple(sorted(finished))


def _as_wire(av: AttributeValue) -> AttributeValue:
    """An AttributeValue of the file as a request sends it: binaries as bytes."""
    ((tag, value),) = av.items()
    if tag == "B":
        return {"B": base64.b64decode(value)}
    if tag == "BS":
        return {"BS": [base64.b64decode(v) for v in value]}
    if tag == "M":
        return {"M": {k: _as_wire(v) for k, v in value.items()}}
    if tag == "L":
        return {"L": [_as_wire(v) for v in value]}
    return {tag: value}
