"""What each kind of migration does to one Scan page (see dynorm.migrations, docs/migrations.md).

Each kind plans a page's writes from the page's raw items, as units: each unit is one item's or
one parent's change (new items to create, items to rewrite in place, the parent's update, old
items to delete), sent in that order, each step only once the one before it is stored. Every
write is conditioned on what the run read (see ``Unchanged``), so two runs at once cannot
clobber each other: the second one's write fails, and its unit is planned again from a fresh
read. The planning is pure apart from the reads a kind needs beyond the page: the old children
of a page's parents (``embed``, ``copies``) and the items already stored at the new keys of
moved children (``move``, ``unembed``). Kinds that write new keys keep a run-wide record of
those they gave out (Claims), so two pages, even of concurrent segments, never write one key.

Items are rewritten RAW: the stored item (or embedded map entry) with only its key and strategy
attributes replaced, so attributes no model declares, nested ones inside embedded maps,
timestamps and versions are kept as stored. An item that does not decode as the model it fits
is skipped and listed (``PagePlan.skipped``), and the page goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias

import attrs
import msgspec

from dynorm.core.chunks import BATCH_GET_MAX, TRANSACT_MAX, KeyId, chunked, key_id
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, ItemNotFoundError, LimitExceededError
from dynorm.core.expressions import ExpressionBuilder, render_update
from dynorm.core.limits import MAX_ITEM_BYTES, item_size
from dynorm.core.requests import CollectionRead, Request, update_item
from dynorm.core.unchanged import Unchanged, unchanged
from dynorm.io.batch import drain_get
from dynorm.io.database import Database
from dynorm.mapping.embedded import EmbeddedCodec
from dynorm.mapping.model import ModelInfo, ModelTable
from dynorm.mapping.oldlayout import EmbeddedItems, ItemMove
from dynorm.mapping.relations import HasManyRelation
from dynorm.mapping.sharded import ShardedRead
from dynorm.mapping.strategies import Strategy
from dynorm.mapping.table import Table
from dynorm.mapping.union import union_read
from dynorm.mapping.writes import plan_delete, plan_put
from dynorm.wire.retry import same_value

__all__ = [
    "MAX_PROBLEMS",
    "Backfill",
    "Copies",
    "Embed",
    "Kind",
    "MigrationKind",
    "Move",
    "PagePlan",
    "Reach",
    "Unembed",
    "Unit",
    "child_digest",
]

MigrationKind: TypeAlias = Literal["move", "unembed", "embed", "backfill", "copies", "upgrade"]
"""What a migration does: see dynorm.migrations."""

#: Problems a report spells out at most (the counts cover all of them).
MAX_PROBLEMS: Final = 20


@attrs.define
class Unit:
    """One item's or one parent's change, each step sent once the one before it is stored.

    Nothing is deleted before its replacement is stored. ``creates``: new items, put only
    where no item is (or the same item is, put by another run). ``rewrites``: (the item as
    read, as it is written) at one key: the attributes that differ are updated, only while
    they are as read. ``update``: the parent's UpdateItem, conditioned on what was read of it;
    when that fails, the parent (``parent``, its key) is read again and planned again.
    ``deletes``: old items as read, deleted only while they are. ``atomic``: every step sent in
    one TransactWriteItems (a migration of a relationship declaring ``was=``, beside the
    application's writers: a child is never written again once they removed it); when it is
    cancelled by a condition, ``parent`` (the parent's key, or a moved child's old key) is read
    again and planned again.
    """

    model: ModelInfo[Any]
    creates: list[Item] = attrs.field(factory=list)
    rewrites: list[tuple[Item, Item]] = attrs.field(factory=list)
    update: Request | None = None
    parent: Item | None = None
    deletes: list[Item] = attrs.field(factory=list)
    atomic: bool = False

    def create_request(self, table_name: str, item: Item) -> Request:
        return plan_put(self.model, None, table_name, item=item, overwrite=False)

    def rewrite_request(self, table_name: str, old: Item, new: Item) -> Request:
        """UpdateItem of the attributes ``new`` changes, conditioned on them being as read.

        Not a PutItem of the whole item: attributes another writer adds meanwhile are kept.
        """
        table = self.model.table
        changed = {k: v for k, v in new.items() if old.get(k) != v}
        gone = [k for k in old if k not in new]
        key = _primary(table, old)
        return _parent_update(table, table_name, key, set_=changed, remove=gone, read=old)

    def delete_request(self, table_name: str, old: Item) -> Request:
        key = _primary(self.model.table, old)
        return plan_delete(self.model, key, table_name, condition=unchanged(old))


@attrs.define
class PagePlan:
    """The writes one Scan page needs: its units, sent concurrently."""

    units: list[Unit] = attrs.field(factory=list)
    refused: list[str] = attrs.field(factory=list)
    #: items that do not decode as the model they fit, left as they are: "key: why"
    skipped: list[str] = attrs.field(factory=list)
    #: embed: parent key -> digests of the children its attribute must hold once written
    embedded: dict[KeyId, tuple[Item, frozenset[str]]] = attrs.field(factory=dict)

    @property
    def written(self) -> int:
        return sum(len(u.creates) + len(u.rewrites) for u in self.units)

    @property
    def deleted(self) -> int:
        return len({key_id(_primary(u.model.table, d)) for u in self.units for d in u.deletes})

    @property
    def updated(self) -> int:
        return sum(u.update is not None for u in self.units)

    def skip(self, table: Table, raw: Mapping[str, AttributeValue], exc: CodecError) -> None:
        """Leave ``raw`` as it is, listed by key: it does not decode as the model it fits."""
        self.skipped.append(f"{describe_key(table, raw)}: {exc}")

    def set_aside(
        self, table: Table, raw: Mapping[str, AttributeValue], exc: CodecError | LimitExceededError
    ) -> None:
        """``raw`` left out of the page's writes: skipped, or refused when it is over a limit.

        A LimitExceededError (the checks a put makes: a key or the item too long once
        migrated) is no stored item that fails to decode but a write DynamoDB would refuse:
        refused, so the page is not written and the run says which item and why.
        """
        if isinstance(exc, LimitExceededError):
            self.refused.append(f"{describe_key(table, raw)}: {exc}")
        else:
            self.skip(table, raw, exc)

    def check_writes(self) -> None:
        """Refuse, as a put would, each item the units write whole that DynamoDB would refuse.

        The units' items are encoded by the models (checked there), but keep what the model
        does not declare as stored: the item as written is checked whole (its size, chiefly).
        """
        for unit in list(self.units):
            for item in [*unit.creates, *(new for _, new in unit.rewrites)]:
                try:
                    unit.model.check_item(item)
                except (CodecError, LimitExceededError) as exc:
                    self.refused.append(f"{describe_key(unit.model.table, item)}: {exc}")
                    self.units.remove(unit)
                    break


@attrs.define
class Reach:
    """What the verification found in one page."""

    #: the parents read (by key: a parent met in several pages counts once)
    parents: set[KeyId] = attrs.field(factory=set)
    children: int = 0
    unreachable: int = 0
    orphans: int = 0
    #: child items that could not be checked (their link does not name a whole parent)
    unchecked: int = 0
    problems: list[str] = attrs.field(factory=list)

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)


#: what a run embedded: parent key -> (the parent's key, digests of its children)
Expected: TypeAlias = Mapping[KeyId, tuple[Item, frozenset[str]]]


class Kind(Protocol):
    """One kind of migration: its page planner and its verification of a page."""

    @property
    def kind(self) -> MigrationKind: ...

    @property
    def subject(self) -> str: ...

    def fingerprint(self) -> dict[str, object]: ...

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan: ...

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach: ...


# -- shared helpers -------------------------------------------------------------------------------


def _primary(table: ModelTable, item: Mapping[str, AttributeValue]) -> Item:
    return {a: item[a] for a in table.primary_attributes}


def describe_key(table: ModelTable, item: Mapping[str, AttributeValue]) -> str:
    """``pk='P#a', sk='ITEM#x'``: the item's table key, for messages."""
    return ", ".join(f"{a}={_scalar(item.get(a))!r}" for a in table.primary_attributes)


def _scalar(value: Mapping[str, Any] | None) -> object:
    """A key attribute's value as it reads (a string, a number's digits, bytes)."""
    return None if not value else next(iter(value.values()))


def _plain(raw: Mapping[str, AttributeValue]) -> Item:
    """A raw item as a dict (a wire-decoded item is a read-only mapping)."""
    return {name: raw[name] for name in raw}


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
    # Compared as stored values: a number key reads back normalised ("1.5" for "1.50"), a
    # binary one as base64 text on the fast path.
    to_set = {
        a: encoded[a]
        for a in attributes
        if a in encoded and (a not in raw or not same_value(raw[a], encoded[a]))
    }
    to_remove = [a for a in attributes if a not in encoded and a in raw]
    return to_set, to_remove


def _rewritten(raw: Item, to_set: Mapping[str, AttributeValue], to_remove: Sequence[str]) -> Item:
    """``raw`` with ``to_set`` written over it and ``to_remove`` taken out: the raw rewrite."""
    kept = {k: v for k, v in raw.items() if k not in to_remove}
    return {**kept, **to_set}


def _parent_update(
    table: ModelTable,
    table_name: str,
    key: Item,
    *,
    set_: Mapping[str, AttributeValue],
    remove: Sequence[str] = (),
    read: Mapping[str, AttributeValue],
) -> Request:
    """UpdateItem that sets and removes attributes of an existing item (never creates one).

    Conditioned on what the run ``read`` of the attributes it changes: a concurrent run's
    write of them makes this one fail (and be planned again) instead of being overwritten.
    """
    builder = ExpressionBuilder()
    expression = render_update(
        builder, set_values={}, set_raw=set_, remove=(), add={}, remove_raw=remove
    )
    exists = f"attribute_exists({builder.attribute(table.pk)})"
    same = Unchanged(read, tuple(dict.fromkeys([*set_, *remove]))).render(builder)
    # Sent again after a lost reply, its condition fails: the run then reads the parent again
    # and plans it again, which finds it done.
    return update_item(
        table_name,
        key,
        expression,
        ConditionExpression=f"{exists} AND {same}",
        **builder.params(),
    )


async def _read_raw(
    db: Database, read: CollectionRead, info: ModelInfo[Any], plan: PagePlan
) -> list[tuple[Item, Any]]:
    """(raw item, decoded object) of every ``info`` item a collection read returns, whole.

    Read as plain JSON (not the typed parse, which keeps only the declared attributes), and,
    through an index, read again whole by key. Items that do not decode are skipped (``plan``).
    """
    accept = db.reads.acceptor(info, read.index)
    table = db.table

    def keyed(raw: Item) -> tuple[Item, Any] | None:
        try:
            obj = accept(raw)
        except CodecError as exc:
            plan.skip(table, raw, exc)
            return None
        return None if obj is None else (_plain(raw), obj)

    found = [f async for f in db.reads.iterate(msgspec.structs.replace(read, parse=None), keyed)]
    if read.index is None or not found:
        return found
    whole = await fetch_whole(db, [_primary(table, raw) for raw, _ in found])
    return [
        (item, obj)
        for raw, obj in found
        if (item := whole.get(key_id(_primary(table, raw)))) is not None
    ]


async def fetch_whole(db: Database, keys: Sequence[Item]) -> dict[KeyId, Item]:
    """The stored items at ``keys``, by key id: consistent BatchGetItems, 100 keys each.

    Parsed as plain JSON, not into the table's typed structures, which keep only the attributes
    the models declare: a raw rewrite must keep every attribute.
    """
    unique = list({key_id(k): k for k in keys}.values())
    chunks = await asyncio.gather(
        *(
            drain_get(db.send, db.table_name, chunk, consistent=True, sleep=asyncio.sleep)
            for chunk in chunked(unique, BATCH_GET_MAX)
        )
    )
    return {key_id(_primary(db.table, raw)): raw for chunk in chunks for raw in chunk}


def child_digest(codec: EmbeddedCodec, child: object) -> str:
    """A short fingerprint of an embedded child as the codec stores it."""
    text = repr(_sorted_value(codec.encode_child(child)))
    return hashlib.blake2s(text.encode(), digest_size=8).hexdigest()


def _sorted_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return sorted((k, _sorted_value(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return [_sorted_value(v) for v in value]
    return value


class Claims:
    """The new keys a run has given out: new key -> the old item (or parent) that takes it.

    Run-wide, kept by the kind across every page and segment of one run (dry runs too): the
    pages of several segments are planned concurrently, each reading what is stored at its new
    keys before any of them writes, so two old items meeting at one new key in two pages would
    both see it free. A page's check and claim are made without an ``await`` in between, so on
    the run's one event loop they are atomic: the second page to settle finds the key claimed.
    A resumed run starts empty; new keys written by the earlier run are then stored items.
    """

    def __init__(self) -> None:
        self.taken: dict[KeyId, Item] = {}

    def holder(self, new: Item, owner: Item) -> Item | None:
        """The key of whoever else took ``new`` (None: it is free, or ``owner``'s own)."""
        held = self.taken.get(key_id(new))
        return None if held is None or key_id(held) == key_id(owner) else held

    def take(self, new: Item, owner: Item) -> None:
        self.taken[key_id(new)] = owner


# -- move: Partition <-> Index --------------------------------------------------------------------


class _StrategyChange:
    """A relationship's children moving from ``source`` into the declared strategy."""

    def __init__(self, rel: HasManyRelation[Any], source: Strategy) -> None:
        self.rel = rel
        self.source = source
        #: the source is the declaration's ``was=``: the application reads both layouts and
        #: writes children in the new one while the run goes on, so a child's new copy that
        #: differs from its old one is the application's, and wins (see ``newer``)
        self.live = rel.was is not None and rel.was == source

    def newer(self, table: Table, there: Mapping[str, AttributeValue] | None) -> bool:
        """Whether ``there``, stored at a child's new key, is its new copy that wins (live)."""
        return self.live and there is not None and table.model_of(there) is self.rel.target_info

    def atomic(self, actions: int) -> bool:
        """Whether a unit of ``actions`` writes is sent as one transaction (live, and fits)."""
        return self.live and actions <= TRANSACT_MAX

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: {self.source.describe()} -> {self.rel.via.describe()}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "from": self.source.describe()}


class Move(_StrategyChange):
    """Children between two item collections (Partition <-> Index): same templates, moved."""

    kind: MigrationKind = "move"

    # Plain classes, not attrs: a field typed HasMany reads through the descriptor protocol.
    def __init__(self, rel: HasManyRelation[Any], source: Strategy) -> None:
        super().__init__(rel, source)
        #: how an old-layout item reads and what it becomes (shared with was= reads; live,
        #: back from shards, only where they look: see ``stranded``)
        self.items = ItemMove(rel, source, anywhere=not self.live)
        self.parent, self.child = rel.owner_info, rel.target_info
        self.src, self.dst = self.items.src, self.items.dst
        self.key_attributes = self.items.key_attributes
        #: the new keys this run's moves have taken (see Claims)
        self.claims = Claims()

    def is_current(self, raw: Item) -> bool:
        """Whether ``raw`` is stored as the current code stores it (table and new keys)."""
        return self.items.is_current(raw)

    def moved_item(self, raw: Item) -> Item | None:
        """The item an old-layout child becomes (None: not one); see ``ItemMove.moved_item``."""
        return self.items.moved_item(raw)

    def stranded_text(self) -> str:
        """Why a live run leaves a child whose old shard segment is not last, and what to do."""
        rel, source = self.rel, self.source
        return (
            f"its partition key holds its shard of {source.describe()} elsewhere than last, "
            f"where the reads of was= look for it, so they do not see it, and a live run does "
            f"not move it. Move it by hand, or stop the application's writers, deploy "
            f"{rel.qualname} without was= and run migrate(db, {rel.qualname}, "
            f"from_={source.describe()}), which finds it"
        )

    def plan_page(
        self, table: Table, table_name: str, items: Sequence[Item]
    ) -> tuple[PagePlan, list[tuple[Item, Item]]]:
        """The page's writes, and the moves (old item, new item) whose new key differs."""
        parent, child = self.parent, self.child
        plan = PagePlan()
        index = self.rel.via.index
        # A parent of another table (a relationship across tables) is not in this table.
        same = parent.table is child.table
        parent_attrs = _index_attributes(parent, [index]) if index is not None and same else []
        moves: list[tuple[Item, Item]] = []
        for raw in map(_plain, items):
            found = table.model_of(raw)
            try:
                if found is parent and parent is not child:
                    to_set, to_remove = _index_drift(parent, raw, parent_attrs)
                    if to_set or to_remove:
                        update = _parent_update(
                            table,
                            table_name,
                            _primary(table, raw),
                            set_=to_set,
                            remove=to_remove,
                            read=raw,
                        )
                        plan.units.append(Unit(parent, update=update, parent=_primary(table, raw)))
                    continue
                new = self.moved_item(raw)
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(table, raw, exc)
                continue
            if new is None:
                if self.live and self.items.stranded(raw):
                    plan.skip(table, raw, CodecError(self.stranded_text()))
                continue
            if _primary(table, raw) != _primary(table, new):
                moves.append((raw, new))
            elif new != raw:
                plan.units.append(Unit(child, rewrites=[(raw, new)]))
        return plan, moves

    def settle(
        self,
        table: Table,
        plan: PagePlan,
        moves: Sequence[tuple[Item, Item]],
        stored: Mapping[KeyId, Mapping[str, AttributeValue]],
    ) -> PagePlan:
        """Add the moves to ``plan``, refusing those whose new key is not theirs to take.

        ``stored``: the items stored at the moves' new keys (by key id). A new key that two
        moves share, that another page of this run took already (``self.claims``), or that
        holds an item other than the one the move writes (a re-run after an interruption finds
        its own), is refused: writing would replace that item. Synchronous on purpose: the
        claims are checked and taken with no ``await`` in between (see Claims).
        """
        by_key: dict[KeyId, list[Item]] = {}
        for old, new in moves:
            by_key.setdefault(key_id(_primary(table, new)), []).append(old)
        for old, new in moves:
            new_key = _primary(table, new)
            sharing = by_key[key_id(new_key)]
            there = stored.get(key_id(new_key))
            if len(sharing) > 1:
                others = "; ".join(describe_key(table, o) for o in sharing if o is not old)
                plan.refused.append(
                    f"{self.child.name} {describe_key(table, old)}: its new key "
                    f"{describe_key(table, new_key)} is also the new key of {others}; the "
                    "current key templates must tell them apart (or delete one of them)"
                )
            elif (other := self.claims.holder(new_key, _primary(table, old))) is not None:
                plan.refused.append(
                    f"{self.child.name} {describe_key(table, old)}: its new key "
                    f"{describe_key(table, new_key)} is also the new key of "
                    f"{describe_key(table, other)}, moved by another page of this run; the "
                    "current key templates must tell them apart (or delete one of them)"
                )
            elif there is not None and _plain(there) != new and not self.newer(table, there):
                plan.refused.append(
                    f"{self.child.name} {describe_key(table, old)}: its new key "
                    f"{describe_key(table, new_key)} holds another item already; writing would "
                    "replace it. Delete or move that item (or this one) first"
                )
            else:
                self.claims.take(new_key, _primary(table, old))
                # Stored already (by an interrupted or a concurrent run): only the delete is left.
                # (Live: a new copy the application wrote wins; only the old one is deleted.)
                creates = [] if there is not None else [new]
                plan.units.append(
                    Unit(
                        self.child,
                        creates=creates,
                        deletes=[old],
                        parent=_primary(table, old),
                        atomic=self.atomic(len(creates) + 1),
                    )
                )
        return plan

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        plan, moves = self.plan_page(db.table, db.table_name, items)
        stored: dict[KeyId, Item] = {}
        if moves:
            # One BatchGetItem per 100 new keys: what is stored there already.
            stored = await fetch_whole(db, [_primary(db.table, new) for _, new in moves])
        return self.settle(db.table, plan, moves, stored)

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        return await reach_collection(db, self.rel, items)


# -- unembed: Embedded -> a collection ------------------------------------------------------------


class Unembed(_StrategyChange):
    """Children embedded in the parent item become items of their own."""

    kind: MigrationKind = "unembed"

    def __init__(self, rel: HasManyRelation[Any], source: Strategy, codec: EmbeddedCodec) -> None:
        super().__init__(rel, source)
        self.codec = codec
        #: the child keys this run's parents have taken (see Claims)
        self.claims = Claims()
        #: the items the embedded children become (shared with was= reads)
        self.items = EmbeddedItems(rel, codec)
        self.strategy_attributes = self.items.strategy_attributes

    def fingerprint(self) -> dict[str, object]:
        return {**super().fingerprint(), "attribute": self.codec.attribute}

    def children_of(self, parent_values: Mapping[str, object], raw: Item) -> list[Item]:
        """The items the embedded children become (see ``EmbeddedItems.children_of``)."""
        return self.items.children_of(parent_values, raw)

    def parents_of(
        self, table: Table, items: Sequence[Item], plan: PagePlan
    ) -> list[tuple[Item, list[Item], dict[str, AttributeValue], list[str]]]:
        """The page's parents to change: (raw, child items, index keys to set, to remove).

        A parent whose children do not decode is skipped (``plan``), as it is.
        """
        parent = self.rel.owner_info
        index = self.rel.via.index
        parent_attrs = _index_attributes(parent, [index]) if index is not None else []
        found: list[tuple[Item, list[Item], dict[str, AttributeValue], list[str]]] = []
        for raw in map(_plain, items):
            if table.model_of(raw) is not parent:
                continue
            has_children = self.codec.attribute in raw
            try:
                to_set, to_remove = _index_drift(parent, raw, parent_attrs)
                if not has_children and not to_set and not to_remove:
                    continue
                children: list[Item] = []
                if has_children:
                    values = parent.values_of(parent.decode(raw))
                    children = self.children_of(values, raw)
                    to_remove = [*to_remove, self.codec.attribute]
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(table, raw, exc)
                continue
            found.append((raw, children, to_set, to_remove))
        return found

    def settle(
        self,
        table: Table,
        table_name: str,
        found: Sequence[tuple[Item, list[Item], dict[str, AttributeValue], list[str]]],
        stored: Mapping[KeyId, Mapping[str, AttributeValue]],
        plan: PagePlan,
    ) -> PagePlan:
        """The page's writes: each parent's children as items, then the attribute removed.

        ``stored``: the items stored at the children's keys. A parent is refused (nothing of
        it written) when two of its children would be one item (a list, ``Embedded()``, whose
        children the new templates map to one key), when a child's key is another parent's in
        this run (``self.claims``), or when it holds an item other than the one the child
        becomes (written by the new code, or changed since an interrupted run put it): putting
        would replace that item. Synchronous on purpose: the claims are checked and taken with
        no ``await`` in between.
        """
        child = self.rel.target_info
        for raw, items, to_set, to_remove in found:
            where = f"{self.rel.owner_info.name} {describe_key(table, raw)}"
            owner = _primary(table, raw)
            problems: list[str] = []
            by_key: dict[KeyId, list[Item]] = {}
            for item in items:
                by_key.setdefault(key_id(_primary(table, item)), []).append(item)
            creates: list[Item] = []
            for item in items:
                key = _primary(table, item)
                there = stored.get(key_id(key))
                if len(by_key[key_id(key)]) > 1:
                    problems.append(
                        f"{len(by_key[key_id(key)])} of its children become the one item "
                        f"{describe_key(table, key)}; the current key templates must tell them "
                        "apart (or remove the extra children)"
                    )
                elif (other := self.claims.holder(key, owner)) is not None:
                    problems.append(
                        f"its child {describe_key(table, key)} is also a child of "
                        f"{describe_key(table, other)}; the current key templates must tell "
                        "them apart"
                    )
                elif there is not None and _plain(there) != item and not self.newer(table, there):
                    problems.append(
                        f"{describe_key(table, key)} holds another {child.name} already; "
                        "putting the embedded child would replace it. Delete that item (or "
                        "the embedded child) first"
                    )
                elif there is None:
                    creates.append(item)
            if problems:
                plan.refused.append(f"{where}: {'; '.join(dict.fromkeys(problems))}")
                continue
            for item in items:
                self.claims.take(_primary(table, item), owner)
            update = _parent_update(
                table, table_name, owner, set_=to_set, remove=to_remove, read=raw
            )
            atomic = self.atomic(len(creates) + 1)
            plan.units.append(
                Unit(child, creates=creates, update=update, parent=owner, atomic=atomic)
            )
        return plan

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        plan = PagePlan()
        found = self.parents_of(db.table, items, plan)
        keys = [_primary(db.table, item) for _, each, _, _ in found for item in each]
        # One BatchGetItem per 100 children: what is stored at their keys already.
        stored = await fetch_whole(db, keys) if keys else {}
        return self.settle(db.table, db.table_name, found, stored, plan)

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        return await reach_collection(db, self.rel, items)


# -- embed: a collection -> Embedded --------------------------------------------------------------


class Embed(_StrategyChange):
    """Children stored as items of their own move into the parent item."""

    kind: MigrationKind = "embed"

    def __init__(
        self, rel: HasManyRelation[Any], source: Strategy, old: HasManyRelation[Any]
    ) -> None:
        assert rel.embedded is not None  # noqa: S101 - checked by migrate()
        super().__init__(rel, source)
        self.codec: EmbeddedCodec = rel.embedded
        self.old = old  # the relationship as it was declared: reads the old collection
        child = old.target_info
        table = child.table
        keys = {*table.attribute_names(), *filter(None, [table.type_attribute])}
        #: what a child item holds that its map entry does not: its key attributes (and the
        #: type attribute), those that are no field's own
        self.strip = frozenset(keys - set(child.codec.attributes.values()))

    def fingerprint(self) -> dict[str, object]:
        return {
            **super().fingerprint(),
            "attribute": self.codec.attribute,
            "key": self.codec.key,
            "max_items": self.codec.max_items,
        }

    def entry(self, raw: Item, child: object) -> AttributeValue:
        """The map entry (or list member) the child item ``raw`` becomes.

        The item as stored without its key attributes (and type attribute): every other
        attribute is kept, declared or not.
        """
        encoded = self.codec.encode_child(child).get("M", {})
        return {"M": {**encoded, **{k: v for k, v in raw.items() if k not in self.strip}}}

    def plan_parent(
        self,
        table: Table,
        table_name: str,
        raw: Item,
        old: Sequence[tuple[Item, Any]],
        plan: PagePlan,
    ) -> None:
        """Add to ``plan`` what moves ``old`` (raw item, child) into the parent ``raw``.

        Refused (nothing planned for the parent) when the children would not fit, when two of
        them share a map key, or when one differs from a child embedded already under its key:
        a map holds one child a key, so embedding would lose one of them. The parent's update
        is conditioned on its attribute being as read, and each old item is deleted only while
        it is as read, after the parent holds it.
        """
        codec = self.codec
        attribute = codec.attribute
        if not old and attribute in raw:
            return  # moved already
        where = describe_key(table, raw)
        stored = raw.get(attribute)
        clashes: list[str] = []
        entries = [(item, child, self.entry(item, child)) for item, child in old]
        if codec.key is not None:
            held_map: dict[str, AttributeValue] = dict((stored or {}).get("M") or {})
            by_key: dict[str | None, list[Item]] = {}
            for item, child, _ in entries:
                by_key.setdefault(codec.child_key(child), []).append(item)
            clashes += [
                f"{len(items)} child items share the map key {k!r} ("
                + "; ".join(describe_key(table, i) for i in items)
                + ")"
                for k, items in by_key.items()
                if len(items) > 1
            ]
            # Live, the entry is the application's newer copy: it wins (kept by ``merged``).
            clashes += [
                f"child item {describe_key(table, item)} differs from the child embedded under "
                f"its map key {codec.child_key(child)!r}"
                for item, child, entry in entries
                if held_map.get(str(codec.child_key(child)), entry) != entry and not self.live
            ]
            merged: AttributeValue = {
                "M": {
                    **{str(codec.child_key(c)): e for _, c, e in entries},
                    **held_map,
                }
            }
            count = len(merged["M"])
        else:
            held_list: list[AttributeValue] = list((stored or {}).get("L") or [])
            members = [*held_list, *(e for _, _, e in entries if e not in held_list)]
            merged = {"L": members}
            count = len(members)
        if clashes:
            plan.refused.append(
                f"{where}: {'; '.join(clashes)}; a map holds one child a key "
                f"(Embedded(key={codec.key!r})): make the keys unique or delete the extra items"
            )
            return
        size = item_size({**raw, attribute: merged})
        if codec.max_items is not None and count > codec.max_items:
            plan.refused.append(
                f"{where}: {codec.qualname} holds at most {codec.max_items} items (max_items); "
                f"embedding would make {count}. Delete some children first or raise max_items"
            )
            return
        if size > MAX_ITEM_BYTES:
            plan.refused.append(
                f"{where}: {codec.qualname}: the parent item would be {size} bytes, over "
                f"DynamoDB's {MAX_ITEM_BYTES}-byte item limit; store these children with "
                "Partition() instead"
            )
            return
        key = _primary(table, raw)
        update = _parent_update(table, table_name, key, set_={attribute: merged}, read=raw)
        plan.units.append(
            Unit(
                self.old.target_info,
                update=update,
                parent=key,
                deletes=[item for item, _ in old],
                atomic=self.atomic(1 + len(old)),
            )
        )
        digests = frozenset(child_digest(codec, c) for c in codec.decode({attribute: merged}))
        plan.embedded[key_id(key)] = (key, digests)

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        parent = self.rel.owner_info
        child = self.old.target_info
        plan = PagePlan()
        parents: list[tuple[Item, dict[str, object]]] = []
        for raw in map(_plain, items):
            if db.table.model_of(raw) is not parent:
                continue
            try:
                parents.append((raw, parent.values_of(parent.decode(raw))))
            except CodecError as exc:
                plan.skip(db.table, raw, exc)

        async def children(values: Mapping[str, object]) -> list[tuple[Item, Any]]:
            # A sharded collection is one read a shard, merged in the collection's order (a
            # list keeps it).
            reads = ShardedRead(self.old.children_reads(db.table_name, values, consistent=True))
            found = await asyncio.gather(*(_read_raw(db, r, child, plan) for r in reads.reads))
            if len(found) == 1:
                return found[0]
            order = reads.order()
            merged = [pair for shard in found for pair in shard]
            return sorted(merged, key=lambda pair: order(pair[0]), reverse=not reads.forward)

        found = await asyncio.gather(*(children(values) for _, values in parents))
        for (raw, _), old in zip(parents, found, strict=True):
            try:
                self.plan_parent(db.table, db.table_name, raw, old, plan)
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(db.table, raw, exc)
        return plan

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        """Each parent's children read through the declared strategy; those embedded are there."""
        parent, codec, table = self.rel.owner_info, self.codec, db.table
        reach = Reach()
        for raw in items:
            if table.model_of(raw) is not parent:
                continue
            key = _primary(table, raw)
            try:
                values = parent.values_of(parent.decode(raw))
                loaded = await db.get(
                    parent.cls,
                    load=[self.rel],
                    consistent=True,
                    **{f: values[f] for f in parent.identity_fields()},
                )
            except ItemNotFoundError:
                continue  # deleted since the scan
            except CodecError as exc:
                reach.unchecked += 1
                reach.problem(f"{parent.name} {describe_key(table, key)} cannot be read: {exc}")
                continue
            reach.parents.add(key_id(key))
            children = getattr(loaded, self.rel.name).loaded
            reach.children += len(children)
            wanted = expected.get(key_id(key))
            if wanted is None:
                continue
            missing = wanted[1] - {child_digest(codec, c) for c in children}
            if missing:
                reach.unreachable += len(missing)
                reach.problem(
                    f"{parent.name} {describe_key(table, key)}: {len(missing)} of the children "
                    f"moved into {codec.attribute!r} are not there"
                )
        return reach


# -- backfill: index keys ------------------------------------------------------------------------


class Backfill:
    """Index key attributes of every item of a model, rewritten where they differ."""

    kind: MigrationKind = "backfill"

    def __init__(self, info: ModelInfo[Any], indexes: tuple[str, ...]) -> None:
        self.info = info
        self.indexes = indexes
        self.attributes = _index_attributes(info, indexes)

    @property
    def subject(self) -> str:
        return f"{self.info.name}: index keys of {', '.join(self.indexes)}"

    def fingerprint(self) -> dict[str, object]:
        return {"model": self.info.name, "indexes": list(self.indexes)}

    def plan_page(self, table: Table, items: Sequence[Item]) -> PagePlan:
        """Each item of the model whose index keys differ, rewritten with them."""
        plan = PagePlan()
        for raw in map(_plain, items):
            if table.model_of(raw) is not self.info:
                continue
            try:
                to_set, to_remove = _index_drift(self.info, raw, self.attributes)
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(table, raw, exc)
                continue
            if to_set or to_remove:
                plan.units.append(
                    Unit(self.info, rewrites=[(raw, _rewritten(raw, to_set, to_remove))])
                )
        return plan

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        return self.plan_page(db.table, items)

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        # The check is the plan's: an item whose index keys still differ is a leftover.
        return Reach()


# -- copies: Denormalized(copy=...) ---------------------------------------------------------------


class Copies:
    """Every child's denormalized copies made equal to its parent's fields."""

    kind: MigrationKind = "copies"

    def __init__(self, rel: HasManyRelation[Any]) -> None:
        self.rel = rel
        child = rel.target_info
        copied = [child.codec.attributes[f] for f in rel.copies.values()]
        primary = child.table.primary_attributes
        #: what a repair rewrites: the copies' attributes and the index keys made from fields
        self.attributes = [*copied, *(a for a in child.templates if a not in primary)]
        #: what it rewrites of a child still in a was= layout, in place: its copies only (its
        #: keys are the old layout's, which the migration replaces)
        self.copied = copied

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: copies {dict(self.rel.copies)}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "copies": sorted(self.rel.copies.items())}

    def repaired(
        self,
        parent_values: Mapping[str, object],
        raw: Item,
        child: object,
        attributes: Sequence[str] | None = None,
    ) -> Item | None:
        """``raw`` with the copies its parent's values give (None: they are right).

        ``attributes``: those rewritten (default: the copies and the index keys).
        """
        fixed = self.rel.via.prepare_child(self.rel, parent_values, child)
        if fixed == child:
            return None
        encoded = self.rel.target_info.encode(fixed)
        rewritten = self.attributes if attributes is None else attributes
        to_set = {a: encoded[a] for a in rewritten if a in encoded}
        return _rewritten(raw, to_set, [a for a in rewritten if a not in encoded])

    async def old_layout(
        self, db: Database, values: Mapping[str, object], plan: PagePlan
    ) -> list[tuple[Item, Any]]:
        """(raw item, child) of the parent's children still in a ``was=`` collection."""
        rel = self.rel
        if rel.was is None or rel.was.embedded_codec(rel) is not None:
            return []
        union = union_read(rel, db.table_name, values)
        found: list[Item] = []
        for read in union.old_reads:
            plain = msgspec.structs.replace(read, consistent=read.index is None)
            found += [raw async for raw in db.reads.iterate(plain, _plain)]
        if union.old_whole and found:
            whole = await fetch_whole(db, [_primary(db.table, raw) for raw in found])
            found = [w for raw in found if (w := whole.get(key_id(_primary(db.table, raw))))]
        children: list[tuple[Item, Any]] = []
        for raw in found:
            try:
                decoded = union.decode_old(raw)
            except CodecError as exc:
                plan.skip(db.table, raw, exc)
                continue
            if decoded is not None:
                children.append((raw, decoded[0]))
        return children

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        parent, child = self.rel.owner_info, self.rel.target_info
        plan = PagePlan()
        parents: list[dict[str, object]] = []
        for raw in map(_plain, items):
            if db.table.model_of(raw) is not parent:
                continue
            try:
                parents.append(parent.values_of(parent.decode(raw)))
            except CodecError as exc:
                plan.skip(db.table, raw, exc)

        async def stale(
            values: dict[str, object],
        ) -> list[tuple[dict[str, object], Item, Any, bool]]:
            read = self.rel.children_read(db.table_name, values, consistent=True)
            found = [(*f, False) for f in await _read_raw(db, read, child, plan)]
            found += [(*f, True) for f in await self.old_layout(db, values, plan)]
            return [
                (values, item, obj, old)
                for item, obj, old in found
                if self.rel.via.prepare_child(self.rel, values, obj) != obj
            ]

        found = [c for cs in await asyncio.gather(*(stale(v) for v in parents)) for c in cs]
        for values, item, obj, old in found:
            try:
                fixed = self.repaired(values, item, obj, self.copied if old else None)
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(db.table, item, exc)
                continue
            if fixed is not None:
                plan.units.append(Unit(child, rewrites=[(item, fixed)]))
        return plan

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        return await reach_collection(db, self.rel, items)


# -- verification of collections ------------------------------------------------------------------


async def reach_collection(db: Database, rel: HasManyRelation[Any], items: Sequence[Item]) -> Reach:
    """Each child item of the page is among its parent's children read through ``rel``."""
    parent, child, table = rel.owner_info, rel.target_info, db.table
    reach = Reach()
    by_parent: dict[KeyId, tuple[dict[str, Any], list[Item]]] = {}
    identity = parent.identity_fields()
    for raw in items:
        if table.model_of(raw) is not child or not child.matches(raw):
            continue
        try:
            obj = child.decode(raw)
        except CodecError:
            continue  # skipped by the run, and listed there
        values = {p: getattr(obj, c) for c, p in rel.link.items()}
        if not all(f in values for f in identity):
            reach.unchecked += 1  # the link does not name a whole parent: no key to read by
            continue
        key: dict[str, Any] = {f: values[f] for f in identity}
        entry = by_parent.setdefault(key_id(parent.primary_key(key)), (key, []))
        entry[1].append(_primary(table, raw))
    if reach.unchecked:
        reach.problem(
            f"{reach.unchecked} {child.name} item(s) not checked: the link of {rel.qualname} "
            f"does not name a whole {parent.name} key"
        )

    async def check(parent_id: KeyId, key: dict[str, Any], keys: list[Item]) -> None:
        try:
            loaded = await db.get(parent.cls, load=[rel], **key)
            found = {key_id(child.key_of(c)) for c in await getattr(loaded, rel.name).all()}
        except ItemNotFoundError:
            reach.orphans += len(keys)
            return
        except CodecError as exc:
            reach.unchecked += len(keys)
            reach.problem(f"the children of {parent.name} {key} cannot be read: {exc}")
            return
        reach.parents.add(parent_id)
        for k in keys:
            if key_id(k) in found:
                reach.children += 1
            else:
                reach.unreachable += 1
                reach.problem(
                    f"{child.name} {describe_key(table, k)} is not among the children of "
                    f"{parent.name} {key} read through {rel.via.describe()}"
                )

    await asyncio.gather(*(check(pid, key, keys) for pid, (key, keys) in by_parent.items()))
    return reach
