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

Each reads the table with Scan pages (``segments=`` parallel segments, ``page_size`` items a
page) and, page by page, writes what that page needs: new items first (BatchWriteItem, 25 a
request, unprocessed items retried with backoff), then parent updates (UpdateItem conditioned
on the parent existing), then deletions of old items (BatchWriteItem). An interruption can leave
a duplicate (repaired by running again) but never loses an item. After each page the progress
callback is called and the checkpoint, if any, is saved; a verification pass re-reads the table
at the end.

Concurrent writers: BatchWriteItem carries no conditions, so an item rewritten here replaces
what a concurrent writer stored between the read and the write. Run a migration between
deploys, or with the writers of that relationship (or model) paused. A writer still running the
old code may add items in the old layout behind the scan: the verification pass reports them
(``leftovers``) and running the migration again moves them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeAlias

import attrs

from ._chunks import key_id
from ._codec import AttributeValue, Item
from ._database import Database
from ._embedded import EmbeddedCodec
from ._errors import (
    ConditionFailedError,
    DefinitionError,
    DynormError,
    ItemNotFoundError,
    LimitExceededError,
)
from ._expressions import ExpressionBuilder
from ._model import ModelInfo, is_model
from ._plans import Request
from ._relations import HasMany, Relationship
from ._steps import Plan, WriteBatch
from ._strategies import Denormalized, Embedded, Strategy
from ._table import Table

__all__ = [
    "CheckpointError",
    "MigrationError",
    "MigrationKind",
    "MigrationProgress",
    "MigrationReport",
    "ProgressCallback",
    "Verification",
    "backfill_index",
    "migrate",
    "repair_copies",
]

MigrationKind: TypeAlias = Literal["move", "unembed", "embed", "backfill", "copies"]
"""What a migration does: see the module docstring."""

#: The format of checkpoint files; a file of another version is refused.
CHECKPOINT_VERSION: Final = 1
#: Items a Scan page reads by default (its ``Limit``): the unit of writes and checkpoints.
DEFAULT_PAGE_SIZE: Final = 100
#: Problems a report spells out at most (the counts cover all of them).
MAX_PROBLEMS: Final = 20


class MigrationError(DynormError):
    """A migration that cannot run, or cannot go on, as asked; the message says what to change."""


class CheckpointError(MigrationError):
    """A checkpoint file that belongs to another migration, or cannot be read."""


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
class Verification:
    """The fresh read after a migration.

    ``leftovers``: the writes, deletes and parent updates a run would still make (a child still
    in the old layout counts its write and its delete) — 0 when nothing is left in the old
    layout. ``parents``/``children``: parents read and children read through the declared
    strategy (``db.get(..., load=[rel])`` and the loader). ``unreachable``: child items stored
    in the new layout that their parent's loader does not return. ``orphans``: child items whose
    parent is not stored (reported, not a failure: they had no parent before either).
    """

    leftovers: int
    parents: int
    children: int
    unreachable: int
    orphans: int
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether nothing is left in the old layout and every child is reachable."""
        return self.leftovers == 0 and self.unreachable == 0


@attrs.frozen
class MigrationReport:
    """What a migration did (or, with ``dry_run``, would do).

    ``written``: items put; ``deleted``: items deleted; ``updated``: parent items changed in
    place (UpdateItem). With a resumed checkpoint the counts include the earlier runs'.
    ``refused``: parents left alone because their children would not fit (only a dry run
    reports these; a real run raises). ``verification`` is None for a dry run or
    ``verify=False``.
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

    @property
    def changes(self) -> int:
        """Writes of every kind: items put, deleted and updated."""
        return self.written + self.deleted + self.updated

    @property
    def ok(self) -> bool:
        """False when a parent was refused or the verification failed (the CLI exits non-zero)."""
        return not self.refused and (self.verification is None or self.verification.ok)


# -- what one page needs --------------------------------------------------------------------------


@attrs.define
class _PagePlan:
    """The writes one Scan page needs, in the order they are sent."""

    puts: list[object] = attrs.field(factory=list)  # objects: db.put_all (the write planner)
    raw_puts: list[Item] = attrs.field(factory=list)  # items rewritten as they are
    updates: list[Request] = attrs.field(factory=list)  # parents: UpdateItem, conditioned
    deletes: list[Item] = attrs.field(factory=list)  # old items' keys
    refused: list[str] = attrs.field(factory=list)

    @property
    def written(self) -> int:
        return len(self.puts) + len(self.raw_puts)


@attrs.define
class _Reach:
    """Reachability counts of one verified page."""

    parents: int = 0
    children: int = 0
    unreachable: int = 0
    orphans: int = 0
    problems: list[str] = attrs.field(factory=list)


class _Kind(Protocol):
    @property
    def kind(self) -> MigrationKind: ...

    @property
    def subject(self) -> str: ...

    def fingerprint(self) -> dict[str, object]: ...

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan: ...

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach: ...


# -- shared helpers -------------------------------------------------------------------------------


def _text(item: Mapping[str, AttributeValue], attr: str | None) -> str | None:
    if attr is None:
        return None
    value = item.get(attr)
    text = None if value is None else value.get("S")
    return text if isinstance(text, str) else None


def _primary(table: Table, item: Mapping[str, AttributeValue]) -> Item:
    return {a: item[a] for a in table.primary_attributes}


def _key(db: Database, item: Mapping[str, AttributeValue]) -> Item:
    return _primary(db.table, item)


def _describe_key(db: Database, item: Mapping[str, AttributeValue]) -> str:
    return ", ".join(f"{a}={_text(item, a)!r}" for a in db.table.primary_attributes)


def _index_attributes(info: ModelInfo[Any], indexes: Sequence[str]) -> list[str]:
    """The key attributes of ``indexes`` that ``info``'s templates fill (not table keys)."""
    table = info.table
    found: list[str] = []
    for index in indexes:
        for attr in table.key_attributes(index):
            if (
                attr
                and attr in info.templates
                and attr not in table.primary_attributes
                and attr not in info.identity
                and attr not in found
            ):
                found.append(attr)
    return found


def _index_drift(
    info: ModelInfo[Any], raw: Item, attributes: Sequence[str]
) -> tuple[dict[str, AttributeValue], list[str]]:
    """What brings ``raw``'s index keys up to date with ``info``'s templates.

    (attribute -> value to set, attributes to remove); both empty when they are up to date.
    """
    if not attributes:
        return {}, []
    encoded = info.encode(info.decode(raw))
    to_set = {a: encoded[a] for a in attributes if a in encoded and raw.get(a) != encoded[a]}
    to_remove = [a for a in attributes if a not in encoded and a in raw]
    return to_set, to_remove


def _parent_update(
    db: Database,
    key: Item,
    *,
    set_: Mapping[str, AttributeValue],
    remove: Sequence[str] = (),
) -> Request:
    """UpdateItem that sets and removes attributes of an existing item (never creates one)."""
    builder = ExpressionBuilder()
    clauses = []
    if set_:
        clauses.append(
            "SET "
            + ", ".join(f"{builder.attribute(a)} = {builder.value(v)}" for a, v in set_.items())
        )
    if remove:
        clauses.append("REMOVE " + ", ".join(builder.attribute(a) for a in remove))
    exists = f"attribute_exists({builder.attribute(db.table.pk)})"
    params = {
        "TableName": db.table_name,
        "Key": key,
        "UpdateExpression": " ".join(clauses),
        "ConditionExpression": exists,
        **builder.params(),
    }
    return Request("UpdateItem", params)  # the same values again change nothing: "safe"


def _write_plan(writes: Sequence[dict[str, Any]]) -> Plan[None]:
    yield WriteBatch(tuple(writes))


async def _read_all(db: Database, read: Any, accept: Callable[[Item], Any]) -> list[Any]:
    return [found async for found in db.iterate(read, accept)]


def _keyed(db: Database, info: ModelInfo[Any], index: str | None) -> Callable[[Item], Any]:
    """An acceptor that returns (the raw item's table key, the decoded object)."""
    accept = db.acceptor(info, index)

    def keyed(raw: Item) -> tuple[Item, Any] | None:
        obj = accept(raw)
        return None if obj is None else (_key(db, raw), obj)

    return keyed


def _location(strategy: Strategy) -> Strategy:
    """Where a strategy's children live (a Denormalized one's ``where``)."""
    return strategy.where if isinstance(strategy, Denormalized) else strategy


def _check_has_many(db: Database, relationship: Relationship[Any], call: str) -> HasMany[Any]:
    if not isinstance(relationship, HasMany):
        raise DefinitionError(
            f"{call} takes a HasMany relationship (Parent.children); got {relationship!r}"
        )
    if relationship.owner is None:
        raise DefinitionError(f"{call}: {relationship!r} is not bound to a model class")
    db.table.check()
    db.table.info(relationship.owner)  # on this Database's table
    return relationship


def _check_index(db: Database, index: str | None, why: str) -> None:
    if index is not None and index not in db.table.indexes:
        declared = ", ".join(db.table.indexes) or "none"
        raise DefinitionError(
            f"{why}: index {index!r} is not declared on Table {db.table.name!r} (declared: "
            f"{declared}); keep it declared while the migration runs"
        )


# -- kinds ----------------------------------------------------------------------------------------


class _Move:
    """Children between two item collections (Partition <-> Index): same templates, moved."""

    kind: MigrationKind = "move"

    # Plain classes, not attrs: a field typed HasMany reads through the descriptor protocol.
    def __init__(self, rel: HasMany[Any], source: Strategy) -> None:
        self.rel = rel
        self.source = source

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: {self.source.describe()} -> {self.rel.via.describe()}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "from": self.source.describe()}

    def _setup(self) -> tuple[ModelInfo[Any], ModelInfo[Any], tuple[str, str], tuple[str, str]]:
        parent, child = self.rel.owner_info, self.rel.target_info
        table = child.table
        src_pk, src_sk = table.key_attributes(_location(self.source).index)
        dst_pk, dst_sk = table.key_attributes(self.rel.via.index)
        assert src_sk is not None  # noqa: S101 - checked by migrate()
        assert dst_sk is not None  # noqa: S101 - checked by migrate()
        return parent, child, (src_pk, src_sk), (dst_pk, dst_sk)

    def old_child(self, raw: Item) -> Any | None:
        """The child an item in the old layout holds (None: not an old-layout child)."""
        _, child, (src_pk, src_sk), (dst_pk, dst_sk) = self._setup()
        table = child.table
        found = table.model_of(raw)
        if found is not None and found is not child:
            return None  # another model's item
        if table.classifier(None).tests(child).keys(raw):
            current = child.decode(raw)
            if _primary(table, child.encode(current)) == _primary(table, raw):
                return None  # stored as the current code stores it
        pk_t, sk_t = child.key_templates(self.rel.via.index)
        pk_text, sk_text = _text(raw, src_pk), _text(raw, src_sk)
        if pk_text is None or sk_text is None or sk_t is None:
            return None
        if not (pk_t.matches(pk_text) and sk_t.matches(sk_text)):
            return None
        key_attrs = set(table.attribute_names()) - set(child.codec.attributes.values())
        moved = {k: v for k, v in raw.items() if k not in key_attrs}
        moved[dst_pk] = raw[src_pk]
        moved[dst_sk] = raw[src_sk]
        return child.decode(moved)

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan:
        parent, child, _, _ = self._setup()
        plan = _PagePlan()
        index = self.rel.via.index
        parent_attrs = _index_attributes(parent, [index]) if index is not None else []
        for raw in items:
            found = db.table.model_of(raw)
            if found is parent and parent is not child:
                to_set, to_remove = _index_drift(parent, raw, parent_attrs)
                if to_set or to_remove:
                    plan.updates.append(
                        _parent_update(db, _key(db, raw), set_=to_set, remove=to_remove)
                    )
                continue
            obj = self.old_child(raw)
            if obj is None:
                continue
            encoded = child.encode(obj)
            old_key, new_key = _key(db, raw), _key(db, encoded)
            if old_key != new_key:
                plan.puts.append(obj)
                plan.deletes.append(old_key)
            elif any(raw.get(a) != encoded.get(a) for a in child.templates):
                plan.puts.append(obj)
        return plan

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach:
        return await _reach_collection(db, self.rel, items)


class _Unembed:
    """Children embedded in the parent item become items of their own."""

    kind: MigrationKind = "unembed"

    def __init__(self, rel: HasMany[Any], source: Embedded, codec: EmbeddedCodec) -> None:
        self.rel = rel
        self.source = source
        self.codec = codec

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: {self.source.describe()} -> {self.rel.via.describe()}"

    def fingerprint(self) -> dict[str, object]:
        return {
            "relationship": self.rel.qualname,
            "from": self.source.describe(),
            "attribute": self.codec.attribute,
        }

    def children_of(self, parent_values: Mapping[str, object], raw: Item) -> list[Any]:
        """The embedded children, each given the link fields its parent implies."""
        child = self.rel.target_info
        link = self.rel.link_values(parent_values)
        encode = child.codec.encode_path
        injected = {child.codec.attributes[f]: encode(f)(v) for f, v in link.items()}
        stored = raw[self.codec.attribute]
        if "M" in stored:
            entries = {k: {"M": {**v.get("M", {}), **injected}} for k, v in stored["M"].items()}
            fake: Item = {self.codec.attribute: {"M": entries}}
        elif "L" in stored:
            fake = {
                self.codec.attribute: {
                    "L": [{"M": {**v.get("M", {}), **injected}} for v in stored["L"]]
                }
            }
        else:
            return []
        via = self.rel.via
        return [
            via.prepare_child(self.rel, parent_values, attrs.evolve(c, **link))
            for c in self.codec.decode(fake)
        ]

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan:
        parent = self.rel.owner_info
        index = self.rel.via.index
        parent_attrs = _index_attributes(parent, [index]) if index is not None else []
        plan = _PagePlan()
        for raw in items:
            if db.table.model_of(raw) is not parent:
                continue
            has_children = self.codec.attribute in raw
            to_set, to_remove = _index_drift(parent, raw, parent_attrs)
            if not has_children and not to_set and not to_remove:
                continue
            if has_children:
                values = parent.values_of(parent.decode(raw))
                plan.puts += self.children_of(values, raw)
                to_remove = [*to_remove, self.codec.attribute]
            plan.updates.append(_parent_update(db, _key(db, raw), set_=to_set, remove=to_remove))
        return plan

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach:
        return await _reach_collection(db, self.rel, items)


class _Embed:
    """Children stored as items of their own move into the parent item."""

    kind: MigrationKind = "embed"

    def __init__(self, rel: HasMany[Any], source: Strategy, old: HasMany[Any]) -> None:
        self.rel = rel
        self.source = source
        self.old = old  # the relationship as it was declared: reads the old collection

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: {self.source.describe()} -> {self.rel.via.describe()}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "from": self.source.describe()}

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan:
        parent, codec = self.rel.owner_info, self.rel.embedded
        assert codec is not None  # noqa: S101 - an Embedded relationship has its codec
        child = self.old.target_info
        plan = _PagePlan()
        parents = [raw for raw in items if db.table.model_of(raw) is parent]

        async def children(raw: Item) -> list[tuple[Item, Any]]:
            values = parent.values_of(parent.decode(raw))
            read = self.old.children_read(db.table_name, values, consistent=True)
            found: list[tuple[Item, Any]] = await _read_all(db, read, _keyed(db, child, read.index))
            return found

        found = await asyncio.gather(*(children(raw) for raw in parents))
        for raw, old in zip(parents, found, strict=True):
            if not old and codec.attribute in raw:
                continue  # moved already
            held = codec.decode(raw)
            merged = _merge(codec, held, [obj for _, obj in old])
            try:
                codec.check_fits(raw, merged)
            except LimitExceededError as exc:
                plan.refused.append(f"{_describe_key(db, raw)}: {exc}")
                continue
            plan.updates.append(
                _parent_update(db, _key(db, raw), set_={codec.attribute: codec.encode(merged)})
            )
            plan.deletes += [key for key, _ in old]
        return plan

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach:
        parent = self.rel.owner_info
        reach = _Reach()
        for raw in items:
            if db.table.model_of(raw) is not parent:
                continue
            values = parent.values_of(parent.decode(raw))
            key: dict[str, Any] = {f: values[f] for f in parent.identity_fields()}
            try:
                loaded = await db.get(parent.cls, load=[self.rel], **key)
            except ItemNotFoundError:
                continue  # deleted since the scan
            reach.parents += 1
            reach.children += len(getattr(loaded, self.rel.name).loaded)
        return reach


def _merge(codec: EmbeddedCodec, held: Sequence[Any], moved: Sequence[Any]) -> list[Any]:
    """The children already embedded plus those moving in (a moving child replaces its key)."""
    if codec.key is None:
        return [*held, *(c for c in moved if c not in held)]
    by_key = {codec.child_key(c): c for c in held}
    by_key.update({codec.child_key(c): c for c in moved})
    return list(by_key.values())


class _Backfill:
    """Index key attributes of every item of a model, rewritten where they differ."""

    kind: MigrationKind = "backfill"

    def __init__(self, info: ModelInfo[Any], indexes: tuple[str, ...]) -> None:
        self.info = info
        self.indexes = indexes

    @property
    def subject(self) -> str:
        return f"{self.info.name}: index keys of {', '.join(self.indexes)}"

    def fingerprint(self) -> dict[str, object]:
        return {"model": self.info.name, "indexes": list(self.indexes)}

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan:
        plan = _PagePlan()
        attributes = _index_attributes(self.info, self.indexes)
        for raw in items:
            if db.table.model_of(raw) is not self.info:
                continue
            to_set, to_remove = _index_drift(self.info, raw, attributes)
            if to_set or to_remove:
                item = {k: v for k, v in raw.items() if k not in to_remove}
                plan.raw_puts.append({**item, **to_set})
        return plan

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach:
        return _Reach()


class _Copies:
    """Every child's denormalized copies made equal to its parent's fields."""

    kind: MigrationKind = "copies"

    def __init__(self, rel: HasMany[Any]) -> None:
        self.rel = rel

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: copies {dict(self.rel.copies)}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "copies": sorted(self.rel.copies.items())}

    async def plan(self, db: Database, items: Sequence[Item]) -> _PagePlan:
        parent, child = self.rel.owner_info, self.rel.target_info
        parents = [raw for raw in items if db.table.model_of(raw) is parent]

        async def stale(raw: Item) -> list[Any]:
            values = parent.values_of(parent.decode(raw))
            read = self.rel.children_read(db.table_name, values, consistent=True)
            children: list[Any] = await _read_all(db, read, db.acceptor(child, read.index))
            fixed = [self.rel.via.prepare_child(self.rel, values, c) for c in children]
            return [f for f, c in zip(fixed, children, strict=True) if f != c]

        plan = _PagePlan()
        for found in await asyncio.gather(*(stale(raw) for raw in parents)):
            plan.puts += found
        return plan

    async def reach(self, db: Database, items: Sequence[Item]) -> _Reach:
        return await _reach_collection(db, self.rel, items)


async def _reach_collection(db: Database, rel: HasMany[Any], items: Sequence[Item]) -> _Reach:
    """Each child item of the page is among its parent's children read through ``rel``."""
    parent, child = rel.owner_info, rel.target_info
    reach = _Reach()
    by_parent: dict[Any, tuple[dict[str, Any], list[Item]]] = {}
    identity = parent.identity_fields()
    for raw in items:
        if db.table.model_of(raw) is not child or not child.matches(raw):
            continue
        obj = child.decode(raw)
        values = {p: getattr(obj, c) for c, p in rel.link.items()}
        if not all(f in values for f in identity):
            return reach  # the link does not name whole parents: nothing to check by key
        key: dict[str, Any] = {f: values[f] for f in identity}
        entry = by_parent.setdefault(key_id(parent.primary_key(key)), (key, []))
        entry[1].append(_key(db, raw))

    async def check(key: dict[str, Any], keys: list[Item]) -> None:
        try:
            loaded = await db.get(parent.cls, load=[rel], **key)
        except ItemNotFoundError:
            reach.orphans += len(keys)
            return
        found = {key_id(child.key_of(c)) for c in await getattr(loaded, rel.name).all()}
        reach.parents += 1
        for k in keys:
            if key_id(k) in found:
                reach.children += 1
            else:
                reach.unreachable += 1
                if len(reach.problems) < MAX_PROBLEMS:
                    reach.problems.append(
                        f"{child.name} {_describe_key(db, k)} is not among the children of "
                        f"{parent.name} {key} read through {rel.via.describe()}"
                    )

    await asyncio.gather(*(check(key, keys) for key, keys in by_parent.values()))
    return reach


# -- the run --------------------------------------------------------------------------------------


@attrs.define
class _Counters:
    scanned: int = 0
    written: int = 0
    deleted: int = 0
    updated: int = 0
    pages: int = 0


@attrs.define
class _Checkpoint:
    """The JSON file that lets an interrupted run resume (see docs/migrations.md)."""

    path: Path | None
    fingerprint: dict[str, object]
    positions: list[Item | None]
    done: list[bool]
    counters: _Counters
    refused: list[str] = attrs.field(factory=list)
    resumed: bool = False

    @classmethod
    def open(cls, path: Path | None, fingerprint: dict[str, object], segments: int) -> _Checkpoint:
        fresh = cls(path, fingerprint, [None] * segments, [False] * segments, _Counters())
        if path is None or not path.exists():
            return fresh
        try:
            data = json.loads(path.read_text())
            version = data.get("version")
            stored = data["fingerprint"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CheckpointError(
                f"checkpoint {str(path)!r} cannot be read ({exc}); delete it to start over"
            ) from exc
        if version != CHECKPOINT_VERSION or stored != fingerprint:
            diff = ", ".join(
                f"{k}: {stored.get(k)!r} there, {fingerprint.get(k)!r} here"
                for k in sorted({*stored, *fingerprint})
                if stored.get(k) != fingerprint.get(k)
            )
            raise CheckpointError(
                f"checkpoint {str(path)!r} belongs to another migration ({diff or 'version'}); "
                "pass another checkpoint path, or delete this one to start over"
            )
        counters = _Counters(**{k: int(v) for k, v in data["counters"].items()})
        return cls(
            path,
            fingerprint,
            list(data["positions"]),
            [bool(d) for d in data["done"]],
            counters,
            list(data.get("refused", [])),
            resumed=True,
        )

    def save(self) -> None:
        if self.path is None:
            return
        data = {
            "version": CHECKPOINT_VERSION,
            "fingerprint": self.fingerprint,
            "positions": self.positions,
            "done": self.done,
            "counters": attrs.asdict(self.counters),
            "refused": self.refused[:MAX_PROBLEMS],
        }
        partial = self.path.with_name(self.path.name + ".tmp")
        partial.write_text(json.dumps(data, indent=1, sort_keys=True, default=_jsonable))
        partial.replace(self.path)  # a crash leaves the old checkpoint or the new one

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()


def _jsonable(value: object) -> object:
    if isinstance(value, bytes | bytearray):  # a binary key value on the botocore path
        import base64  # noqa: PLC0415 - only for binary keys

        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


async def _total_estimate(db: Database) -> int | None:
    described = await db.send(Request("DescribeTable", {"TableName": db.table_name}))
    count = described.get("Table", {}).get("ItemCount")
    # 0 is what a table reports until its first count (dynalite: always): read it as unknown.
    return int(count) if count else None


def _scan_request(
    db: Database,
    segment: int,
    segments: int,
    page_size: int,
    start: Item | None,
    *,
    consistent: bool,
) -> Request:
    params: dict[str, Any] = {"TableName": db.table_name, "Limit": page_size}
    if segments > 1:
        params["Segment"] = segment
        params["TotalSegments"] = segments
    if consistent:
        params["ConsistentRead"] = True
    if start:
        params["ExclusiveStartKey"] = start
    return Request("Scan", params)


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
    """Read every segment page by page (segments concurrently), ``on_page`` after each."""

    async def segment(number: int) -> None:
        start = positions[number]
        while not done[number]:  # a segment a resumed checkpoint finished is not read again
            request = _scan_request(db, number, segments, page_size, start, consistent=consistent)
            response = await db.send(request)
            start = response.get("LastEvaluatedKey") or None
            await on_page(number, list(response.get("Items") or []), start)
            if start is None:
                return

    if segments == 1:
        await segment(0)
        return
    try:
        async with asyncio.TaskGroup() as group:  # one failing cancels the others
            for number in range(segments):
                group.create_task(segment(number))
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None  # the first failure, as with one segment


async def _execute(db: Database, plan: _PagePlan) -> int:
    """Send a page's writes: puts, then parent updates, then deletes. Returns updates applied."""
    if plan.puts:
        await db.put_all(plan.puts)
    if plan.raw_puts:
        await db.run(_write_plan([{"PutRequest": {"Item": item}} for item in plan.raw_puts]))
    applied = 0

    async def update(request: Request) -> None:
        nonlocal applied
        try:
            await db.send(request)
            applied += 1
        except ConditionFailedError:
            pass  # the parent was deleted since the scan: nothing to update

    await asyncio.gather(*(update(r) for r in plan.updates))
    if plan.deletes:
        unique = list({key_id(k): k for k in plan.deletes}.values())
        await db.run(_write_plan([{"DeleteRequest": {"Key": k}} for k in unique]))
    return applied


async def _run(
    db: Database,
    kind: _Kind,
    *,
    dry_run: bool,
    checkpoint: str | os.PathLike[str] | None,
    on_progress: ProgressCallback | None,
    segments: int,
    page_size: int,
    verify: bool,
) -> MigrationReport:
    if type(segments) is not int or segments < 1:
        raise MigrationError(f"segments must be a positive int; got {segments!r}")
    if type(page_size) is not int or not 1 <= page_size <= 1000:
        raise MigrationError(f"page_size must be an int from 1 to 1000; got {page_size!r}")
    fingerprint = {
        "table": db.table_name,
        "kind": kind.kind,
        **kind.fingerprint(),
        "to": kind.subject,
        "segments": segments,
    }
    path = None if dry_run or checkpoint is None else Path(checkpoint)
    state = _Checkpoint.open(path, fingerprint, segments)
    counters = state.counters
    total = await _total_estimate(db)
    lock = asyncio.Lock()

    def progress(phase: Literal["migrate", "verify"], seen: _Counters) -> None:
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

    async def migrate_page(number: int, items: list[Item], after: Item | None) -> None:
        plan = await kind.plan(db, items)
        if plan.refused and not dry_run:
            raise MigrationError(
                f"{kind.subject}: nothing was written for this page: "
                + "; ".join(plan.refused[:MAX_PROBLEMS])
            )
        updated = len(plan.updates) if dry_run else await _execute(db, plan)
        async with lock:
            counters.scanned += len(items)
            counters.written += plan.written
            counters.deleted += len({key_id(k) for k in plan.deletes})
            counters.updated += updated
            counters.pages += 1
            state.refused += plan.refused
            state.positions[number] = after
            state.done[number] = after is None
            state.save()
            progress("migrate", counters)

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
    verification = None
    if verify and not dry_run:
        verification = await _verify(db, kind, segments, page_size, progress)
    return MigrationReport(
        kind=kind.kind,
        subject=kind.subject,
        dry_run=dry_run,
        scanned=counters.scanned,
        written=counters.written,
        deleted=counters.deleted,
        updated=counters.updated,
        pages=counters.pages,
        total_estimate=total,
        resumed=state.resumed,
        refused=tuple(state.refused[:MAX_PROBLEMS]),
        verification=verification,
    )


async def _verify(
    db: Database,
    kind: _Kind,
    segments: int,
    page_size: int,
    progress: Callable[[Literal["migrate", "verify"], _Counters], None],
) -> Verification:
    seen = _Counters()
    leftovers = 0
    total = _Reach()
    problems: list[str] = []
    lock = asyncio.Lock()

    async def verify_page(number: int, items: list[Item], after: Item | None) -> None:
        nonlocal leftovers
        del number
        plan = await kind.plan(db, items)
        reach = await kind.reach(db, items)
        async with lock:
            left = plan.written + len(plan.deletes) + len(plan.updates) + len(plan.refused)
            leftovers += left
            if left and len(problems) < MAX_PROBLEMS:
                problems.append(
                    f"{left} change(s) still to make in a page: "
                    f"{plan.written} to write, {len(plan.deletes)} to delete, "
                    f"{len(plan.updates)} parents to update"
                )
            total.parents += reach.parents
            total.children += reach.children
            total.unreachable += reach.unreachable
            total.orphans += reach.orphans
            problems.extend(reach.problems[: MAX_PROBLEMS - len(problems)])
            seen.scanned += len(items)
            seen.pages += 1
            progress("verify", seen)

    positions: list[Item | None] = [None] * segments
    await _scan_pages(
        db,
        segments=segments,
        page_size=page_size,
        positions=positions,
        done=[False] * segments,
        on_page=verify_page,
        consistent=True,
    )
    return Verification(
        leftovers=leftovers,
        parents=total.parents,
        children=total.children,
        unreachable=total.unreachable,
        orphans=total.orphans,
        problems=tuple(problems),
    )


# -- the public calls -----------------------------------------------------------------------------


async def migrate(
    db: Database,
    relationship: Relationship[Any],
    *,
    from_: Strategy,
    dry_run: bool = False,
    checkpoint: str | os.PathLike[str] | None = None,
    on_progress: ProgressCallback | None = None,
    segments: int = 1,
    page_size: int = DEFAULT_PAGE_SIZE,
    verify: bool = True,
) -> MigrationReport:
    """Move ``relationship``'s stored children from ``from_`` into the declared strategy.

    The declaration (``Parent.children`` as the code declares it now) is the target; ``from_``
    says where the children are stored now:

    - ``Partition()`` <-> ``Index(name)``: the child's key templates are the same before and
      after and only move between the table key and the index key. Children found in the old
      place are written where the current code writes them (``db.put_all``: copies and other
      rules hold), then the old items are deleted; parents get the index key attributes the
      current templates give them.
    - ``Embedded(key=..., attribute=...)`` -> a collection: each embedded child becomes an item
      (given its parent's link fields), then the attribute is removed from the parent
      (UpdateItem conditioned on the parent existing).
    - a collection -> ``Embedded(...)``: each parent's old children are read (the child class
      must still be declared on the table), set as the parent's attribute (refused, before
      anything is written for that page, beyond ``max_items`` or 400 KB), then deleted.

    ``dry_run=True`` reads everything and writes nothing: the report counts what would change.
    ``checkpoint`` is a JSON file saved after each page (a dry run neither reads nor writes it);
    a later call with the same path resumes after the last page saved, and refuses a checkpoint
    of another migration (:class:`CheckpointError`). It is removed once the pass completes.
    ``on_progress`` is called after each page. ``segments`` reads the table in parallel
    segments; ``page_size`` items a Scan page. ``verify`` re-reads the table (consistent Scan)
    and each parent's children through the declared strategy; see :class:`Verification`.

    Concurrent writers: see the module docstring (run between deploys, or with the writers of
    this relationship paused; a second run plus verification catches stragglers).
    """
    rel = _check_has_many(db, relationship, "migrate")
    if not isinstance(from_, Strategy):
        raise DefinitionError(f"from_= takes a strategy such as Partition(); got {from_!r}")
    where = f"migrate({rel.qualname}, from_={from_.describe()})"
    if from_ == rel.via:
        raise DefinitionError(
            f"{where}: {rel.qualname} is declared with {rel.via.describe()} already; from_= "
            "names the strategy the data is stored with NOW, and the declaration the target"
        )
    kind: _Kind
    if isinstance(from_, Embedded) and rel.embedded is not None:
        raise DefinitionError(
            f"{where}: both layouts are Embedded; migrate to Partition() first, or rename the "
            "attribute by hand"
        )
    if isinstance(from_, Embedded):
        codec = EmbeddedCodec.build(
            rel.qualname, from_.attribute or rel.name, rel.target_cls, from_.key, from_.max_items
        )
        kind = _Unembed(rel, from_, codec)
    elif rel.embedded is not None:
        target = rel.target_cls
        if not is_model(target) or rel.target_info.table is not db.table:
            raise DefinitionError(
                f"{where}: the old children are items of {target.__name__}, so "
                f"{target.__name__} must still be declared on Table {db.table.name!r} "
                "(@table.model with the key templates it was stored with) while the migration "
                "runs; its templates say where the old items are"
            )
        _check_index(db, _location(from_).index, where)
        old = rel.via_strategy(from_)
        kind = _Embed(rel, from_, old)
    else:
        src, dst = _location(from_).index, rel.via.index
        _check_index(db, src, where)
        if src == dst:
            raise DefinitionError(
                f"{where}: children of {from_.describe()} and {rel.via.describe()} live in the "
                "same place, so nothing moves; to fill denormalized copies use repair_copies()"
            )
        child = rel.target_info
        for index in (src, dst):
            if db.table.key_attributes(index)[1] is None:
                raise DefinitionError(f"{where}: {index or 'the table'} has no sort key")
        if child.stamps.version is not None:
            raise DefinitionError(
                f"{where}: {child.name} is versioned, and BatchWriteItem cannot carry its "
                "version check; migrate it with writes paused and the version field removed"
            )
        kind = _Move(rel, from_)
    return await _run(
        db,
        kind,
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
    )


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
) -> MigrationReport:
    """Write the index key attributes ``model``'s templates give, into every item of it.

    For a model that gained key templates for an index (``GSI2=(...)``) or whose templates
    changed: each stored item whose attributes for ``index`` (None: every index the model has
    templates for) differ from what the current templates make is rewritten with them — the
    item read, those attributes replaced, written back whole with BatchWriteItem (an item
    whose template fields are None loses them, keeping the index sparse). Items already right
    are not written. Options as for :func:`migrate`.
    """
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
    if not _index_attributes(info, indexes):
        raise DefinitionError(
            f"backfill_index({info.name}): the keys of {', '.join(indexes)} are the table's own "
            "attributes or the model's fields; nothing to backfill"
        )
    return await _run(
        db,
        _Backfill(info, indexes),
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
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
) -> MigrationReport:
    """Make every child's ``Denormalized(copy=...)`` fields equal to its parent's fields.

    For copies added to a relationship (children stored before have none) or gone stale. Each
    parent's children are read through the declared strategy; those whose copies differ are
    written with ``db.put_all`` (which fills the copies from the stored parent). Children
    already right are not written. Options as for :func:`migrate`.
    """
    rel = _check_has_many(db, relationship, "repair_copies")
    if not isinstance(rel.via, Denormalized):
        raise DefinitionError(
            f"repair_copies({rel.qualname}): it is declared with {rel.via.describe()}, which "
            "keeps no copies; declare it via=Denormalized(copy={...}) first"
        )
    if rel.target_info.stamps.version is not None:
        raise DefinitionError(
            f"repair_copies({rel.qualname}): {rel.target_name} is versioned, and BatchWriteItem "
            "cannot carry its version check; use db.sync_copies(parent) for each parent"
        )
    return await _run(
        db,
        _Copies(rel),
        dry_run=dry_run,
        checkpoint=checkpoint,
        on_progress=on_progress,
        segments=segments,
        page_size=page_size,
        verify=verify,
    )
