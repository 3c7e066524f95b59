"""What each kind of migration does to one Scan page (see dynorm.migrations, docs/migrations.md).

Each kind plans a page's writes from the page's raw items: which items to put, which parents to
update and which old items to delete, and which parents (or items) it refuses. The planning is
pure apart from the reads a kind needs beyond the page: the old children of a page's parents
(``embed``, ``copies``) and the items already stored at the new keys of moved children
(``move``, ``unembed``). Kinds that write new keys keep a run-wide record of those they gave
out (Claims), so two pages, even of concurrent segments, never write one key. Items are
rewritten RAW wherever they stay items: the stored item with only its key attributes (and, for
copies, the copy attributes) replaced, so attributes the model does not declare, timestamps and
versions are kept as stored.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias

import attrs

from dynorm.core.chunks import BATCH_GET_MAX, KeyId, chunked, key_id
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import ItemNotFoundError, LimitExceededError
from dynorm.core.expressions import ExpressionBuilder, render_update
from dynorm.core.requests import CollectionRead, Request, update_item
from dynorm.io.batch import drain_get
from dynorm.io.database import Database
from dynorm.mapping.embedded import EmbeddedCodec
from dynorm.mapping.model import ModelInfo, ModelTable
from dynorm.mapping.relations import HasManyRelation
from dynorm.mapping.strategies import Strategy
from dynorm.mapping.table import Table

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
    "child_digest",
]

MigrationKind: TypeAlias = Literal["move", "unembed", "embed", "backfill", "copies"]
"""What a migration does: see dynorm.migrations."""

#: Problems a report spells out at most (the counts cover all of them).
MAX_PROBLEMS: Final = 20


@attrs.define
class PagePlan:
    """The writes one Scan page needs, in the order they are sent."""

    puts: list[object] = attrs.field(factory=list)  # objects: db.put_all (the write planner)
    raw_puts: list[Item] = attrs.field(factory=list)  # whole items, written as they are
    updates: list[Request] = attrs.field(factory=list)  # parents: UpdateItem, conditioned
    deletes: list[Item] = attrs.field(factory=list)  # old items' keys
    refused: list[str] = attrs.field(factory=list)
    #: embed: parent key -> digests of the children its attribute must hold once written
    embedded: dict[KeyId, tuple[Item, frozenset[str]]] = attrs.field(factory=dict)

    @property
    def written(self) -> int:
        return len(self.puts) + len(self.raw_puts)


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


def _text(item: Mapping[str, AttributeValue], attr: str | None) -> str | None:
    if attr is None:
        return None
    value = item.get(attr)
    text = None if value is None else value.get("S")
    return text if isinstance(text, str) else None


def _primary(table: ModelTable, item: Mapping[str, AttributeValue]) -> Item:
    return {a: item[a] for a in table.primary_attributes}


def describe_key(table: Table, item: Mapping[str, AttributeValue]) -> str:
    """``pk='P#a', sk='ITEM#x'``: the item's table key, for messages."""
    return ", ".join(f"{a}={_text(item, a)!r}" for a in table.primary_attributes)


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
    to_set = {a: encoded[a] for a in attributes if a in encoded and raw.get(a) != encoded[a]}
    to_remove = [a for a in attributes if a not in encoded and a in raw]
    return to_set, to_remove


def _rewritten(raw: Item, to_set: Mapping[str, AttributeValue], to_remove: Sequence[str]) -> Item:
    """``raw`` with ``to_set`` written over it and ``to_remove`` taken out: the raw rewrite."""
    kept = {k: v for k, v in raw.items() if k not in to_remove}
    return {**kept, **to_set}


def _parent_update(
    table: Table,
    table_name: str,
    key: Item,
    *,
    set_: Mapping[str, AttributeValue],
    remove: Sequence[str] = (),
) -> Request:
    """UpdateItem that sets and removes attributes of an existing item (never creates one)."""
    builder = ExpressionBuilder()
    expression = render_update(
        builder, set_values={}, set_raw=set_, remove=(), add={}, remove_raw=remove
    )
    exists = f"attribute_exists({builder.attribute(table.pk)})"
    # The same values again change nothing: "safe".
    return update_item(table_name, key, expression, ConditionExpression=exists, **builder.params())


async def _read_raw(
    db: Database, read: CollectionRead, info: ModelInfo[Any]
) -> list[tuple[Item, Any]]:
    """(raw item, decoded object) of every ``info`` item a collection read returns, whole."""
    accept = db.acceptor(info, read.index)

    def keyed(raw: Item) -> tuple[Item, Any] | None:
        obj = accept(raw)
        return None if obj is None else (_plain(raw), obj)

    return [found async for found in db.iterate(read, keyed)]


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
        parent, child = rel.owner_info, rel.target_info
        table = child.table
        src_pk, src_sk = table.key_attributes(source.index)
        dst_pk, dst_sk = table.key_attributes(rel.via.index)
        assert src_sk is not None  # noqa: S101 - checked by migrate()
        assert dst_sk is not None  # noqa: S101 - checked by migrate()
        self.parent, self.child = parent, child
        self.src, self.dst = (src_pk, src_sk), (dst_pk, dst_sk)
        #: the attributes a move rewrites: every key attribute that is no field's own
        self.key_attributes = frozenset(table.attribute_names()) - set(
            child.codec.attributes.values()
        )
        #: the new keys this run's moves have taken (see Claims)
        self.claims = Claims()

    def moved_item(self, raw: Item) -> Item | None:
        """The item an old-layout child becomes (None: not an old-layout child).

        The stored item with its key attributes replaced by those the current templates give:
        attributes the model does not declare, timestamps and versions stay as stored.
        """
        child, table = self.child, self.child.table
        (src_pk, src_sk), (dst_pk, dst_sk) = self.src, self.dst
        found = table.model_of(raw)
        if found is not None and found is not child:
            return None  # another model's item
        if child.tests(None).keys(raw):
            current = child.decode(raw)
            if _primary(table, child.encode(current)) == _primary(table, raw):
                return None  # stored as the current code stores it
        pk_t, sk_t = child.key_templates(self.rel.via.index)
        pk_text, sk_text = _text(raw, src_pk), _text(raw, src_sk)
        if pk_text is None or sk_text is None or sk_t is None:
            return None
        if not (pk_t.matches(pk_text) and sk_t.matches(sk_text)):
            return None
        kept = {k: v for k, v in raw.items() if k not in self.key_attributes}
        encoded = child.encode(child.decode({**kept, dst_pk: raw[src_pk], dst_sk: raw[src_sk]}))
        return {**kept, **{k: v for k, v in encoded.items() if k in self.key_attributes}}

    def plan_page(
        self, table: Table, table_name: str, items: Sequence[Item]
    ) -> tuple[PagePlan, list[tuple[Item, Item]]]:
        """The page's writes, and the moves (old item, new item) whose new key differs."""
        parent, child = self.parent, self.child
        plan = PagePlan()
        index = self.rel.via.index
        parent_attrs = _index_attributes(parent, [index]) if index is not None else []
        moves: list[tuple[Item, Item]] = []
        for raw in items:
            found = table.model_of(raw)
            if found is parent and parent is not child:
                to_set, to_remove = _index_drift(parent, raw, parent_attrs)
                if to_set or to_remove:
                    plan.updates.append(
                        _parent_update(
                            table, table_name, _primary(table, raw), set_=to_set, remove=to_remove
                        )
                    )
                continue
            new = self.moved_item(raw)
            if new is None:
                continue
            if _primary(table, raw) != _primary(table, new):
                moves.append((raw, new))
            elif new != raw:
                plan.raw_puts.append(new)
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
            elif there is not None and _plain(there) != new:
                plan.refused.append(
                    f"{self.child.name} {describe_key(table, old)}: its new key "
                    f"{describe_key(table, new_key)} holds another item already; writing would "
                    "replace it. Delete or move that item (or this one) first"
                )
            else:
                self.claims.take(new_key, _primary(table, old))
                plan.raw_puts.append(new)
                plan.deletes.append(_primary(table, old))
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

    def fingerprint(self) -> dict[str, object]:
        return {**super().fingerprint(), "attribute": self.codec.attribute}

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

    def parents_of(
        self, table: Table, items: Sequence[Item]
    ) -> list[tuple[Item, list[Any], dict[str, AttributeValue], list[str]]]:
        """The page's parents to change: (raw, children, index keys to set, to remove)."""
        parent = self.rel.owner_info
        index = self.rel.via.index
        parent_attrs = _index_attributes(parent, [index]) if index is not None else []
        found: list[tuple[Item, list[Any], dict[str, AttributeValue], list[str]]] = []
        for raw in items:
            if table.model_of(raw) is not parent:
                continue
            has_children = self.codec.attribute in raw
            to_set, to_remove = _index_drift(parent, raw, parent_attrs)
            if not has_children and not to_set and not to_remove:
                continue
            children: list[Any] = []
            if has_children:
                values = parent.values_of(parent.decode(raw))
                children = self.children_of(values, raw)
                to_remove = [*to_remove, self.codec.attribute]
            found.append((raw, children, to_set, to_remove))
        return found

    def _same(self, child: object, written: Item, there: Mapping[str, AttributeValue]) -> bool:
        """Whether the stored item ``there`` is what putting ``child`` writes (``written``).

        The put stamps ``updated`` (and ``created`` where the child has none) afresh: those
        attributes may differ, as when a re-run finds the items an interrupted run put.
        """
        info = self.rel.target_info
        stamps, names = info.stamps, info.codec.attributes
        fresh = [stamps.updated] if stamps.updated is not None else []
        if stamps.created is not None and getattr(child, stamps.created) is None:
            fresh.append(stamps.created)
        ignored = {names[f] for f in fresh}
        mine = {k: v for k, v in written.items() if k not in ignored}
        theirs = {k: there[k] for k in there if k not in ignored}
        return mine == theirs

    def settle(
        self,
        table: Table,
        table_name: str,
        found: Sequence[tuple[Item, list[Any], dict[str, AttributeValue], list[str]]],
        written: Sequence[Sequence[Item]],
        stored: Mapping[KeyId, Mapping[str, AttributeValue]],
    ) -> PagePlan:
        """The page's writes: each parent's children as items, then the attribute removed.

        ``written``: for each parent of ``found``, the item each child's put writes; ``stored``:
        the items stored at their keys. A parent is refused (nothing of it written) when two of
        its children would be one item (a list, ``Embedded()``, whose children the new templates
        map to one key), when a child's key is another parent's in this run (``self.claims``),
        or when it holds an item other than the one the put writes (written by the new code, or
        changed by it since an interrupted run put it): putting would replace that item.
        Synchronous on purpose: the claims are checked and taken with no ``await`` in between.
        """
        child = self.rel.target_info
        plan = PagePlan()
        for (raw, children, to_set, to_remove), items in zip(found, written, strict=True):
            where = f"{self.rel.owner_info.name} {describe_key(table, raw)}"
            owner = _primary(table, raw)
            problems: list[str] = []
            by_key: dict[KeyId, list[Item]] = {}
            for item in items:
                by_key.setdefault(key_id(_primary(table, item)), []).append(item)
            for obj, item in zip(children, items, strict=True):
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
                elif there is not None and not self._same(obj, item, there):
                    problems.append(
                        f"{describe_key(table, key)} holds another {child.name} already; "
                        "putting the embedded child would replace it. Delete that item (or "
                        "the embedded child) first"
                    )
            if problems:
                plan.refused.append(f"{where}: {'; '.join(dict.fromkeys(problems))}")
                continue
            for item in items:
                self.claims.take(_primary(table, item), owner)
            plan.puts += children
            plan.updates.append(
                _parent_update(table, table_name, owner, set_=to_set, remove=to_remove)
            )
        return plan

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        found = self.parents_of(db.table, items)
        written = [[db.writes.sample_item(c) for c in children] for _, children, _, _ in found]
        keys = [_primary(db.table, item) for each in written for item in each]
        # One BatchGetItem per 100 children: what is stored at their keys already.
        stored = await fetch_whole(db, keys) if keys else {}
        return self.settle(db.table, db.table_name, found, written, stored)

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

    def fingerprint(self) -> dict[str, object]:
        return {
            **super().fingerprint(),
            "attribute": self.codec.attribute,
            "key": self.codec.key,
            "max_items": self.codec.max_items,
        }

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
        a map holds one child a key, so embedding would lose one of them.
        """
        codec = self.codec
        if not old and codec.attribute in raw:
            return  # moved already
        where = describe_key(table, raw)
        held = codec.decode(raw)
        clashes: list[str] = []
        if codec.key is not None:
            by_key: dict[str | None, list[Item]] = {}
            for item, child in old:
                by_key.setdefault(codec.child_key(child), []).append(item)
            clashes += [
                f"{len(items)} child items share the map key {k!r} ("
                + "; ".join(describe_key(table, i) for i in items)
                + ")"
                for k, items in by_key.items()
                if len(items) > 1
            ]
            held_by_key = {codec.child_key(c): c for c in held}
            clashes += [
                f"child item {describe_key(table, item)} differs from the child embedded under "
                f"its map key {codec.child_key(child)!r}"
                for item, child in old
                if codec.child_key(child) in held_by_key
                and held_by_key[codec.child_key(child)] != child
            ]
        if clashes:
            plan.refused.append(
                f"{where}: {'; '.join(clashes)}; a map holds one child a key "
                f"(Embedded(key={codec.key!r})): make the keys unique or delete the extra items"
            )
            return
        merged = [*held, *(c for _, c in old if c not in held)]
        try:
            codec.check_fits(raw, merged)
        except LimitExceededError as exc:
            plan.refused.append(f"{where}: {exc}")
            return
        key = _primary(table, raw)
        plan.updates.append(
            _parent_update(table, table_name, key, set_={codec.attribute: codec.encode(merged)})
        )
        plan.deletes += [_primary(table, item) for item, _ in old]
        digests = frozenset(child_digest(codec, c) for c in merged)
        plan.embedded[key_id(key)] = (key, digests)

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        parent = self.rel.owner_info
        child = self.old.target_info
        parents = [raw for raw in items if db.table.model_of(raw) is parent]

        async def children(raw: Item) -> list[tuple[Item, Any]]:
            values = parent.values_of(parent.decode(raw))
            read = self.old.children_read(db.table_name, values, consistent=True)
            return await _read_raw(db, read, child)

        found = await asyncio.gather(*(children(raw) for raw in parents))
        plan = PagePlan()
        for raw, old in zip(parents, found, strict=True):
            self.plan_parent(db.table, db.table_name, raw, old, plan)
        return plan

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        """Each parent's children read through the declared strategy; those embedded are there."""
        parent, codec, table = self.rel.owner_info, self.codec, db.table
        reach = Reach()
        for raw in items:
            if table.model_of(raw) is not parent:
                continue
            values = parent.values_of(parent.decode(raw))
            key = _primary(table, raw)
            try:
                loaded = await db.get(
                    parent.cls,
                    load=[self.rel],
                    consistent=True,
                    **{f: values[f] for f in parent.identity_fields()},
                )
            except ItemNotFoundError:
                continue  # deleted since the scan
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
        for raw in items:
            if table.model_of(raw) is not self.info:
                continue
            to_set, to_remove = _index_drift(self.info, raw, self.attributes)
            if to_set or to_remove:
                plan.raw_puts.append(_rewritten(raw, to_set, to_remove))
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

    @property
    def subject(self) -> str:
        return f"{self.rel.qualname}: copies {dict(self.rel.copies)}"

    def fingerprint(self) -> dict[str, object]:
        return {"relationship": self.rel.qualname, "copies": sorted(self.rel.copies.items())}

    def repaired(
        self, parent_values: Mapping[str, object], raw: Item, child: object
    ) -> Item | None:
        """``raw`` with the copies its parent's values give (None: they are right)."""
        fixed = self.rel.via.prepare_child(self.rel, parent_values, child)
        if fixed == child:
            return None
        encoded = self.rel.target_info.encode(fixed)
        to_set = {a: encoded[a] for a in self.attributes if a in encoded}
        return _rewritten(raw, to_set, [a for a in self.attributes if a not in encoded])

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        parent, child = self.rel.owner_info, self.rel.target_info
        parents = [raw for raw in items if db.table.model_of(raw) is parent]

        async def stale(raw: Item) -> list[tuple[Mapping[str, object], Item, object]]:
            values = parent.values_of(parent.decode(raw))
            read = self.rel.children_read(db.table_name, values, consistent=True)
            found = await _read_raw(db, read, child)
            return [
                (values, _primary(db.table, item), obj)
                for item, obj in found
                if self.rel.via.prepare_child(self.rel, values, obj) != obj
            ]

        found = [c for cs in await asyncio.gather(*(stale(raw) for raw in parents)) for c in cs]
        # The children to repair read again whole, every attribute as stored (a BatchGetItem
        # per 100): a collection read parses items into what the models declare.
        whole = await fetch_whole(db, [key for _, key, _ in found]) if found else {}
        plan = PagePlan()
        for values, key, obj in found:
            item = whole.get(key_id(key))
            fixed = None if item is None else self.repaired(values, item, obj)
            if fixed is not None:  # None: deleted since it was read
                plan.raw_puts.append(fixed)
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
        obj = child.decode(raw)
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
        except ItemNotFoundError:
            reach.orphans += len(keys)
            return
        found = {key_id(child.key_of(c)) for c in await getattr(loaded, rel.name).all()}
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
