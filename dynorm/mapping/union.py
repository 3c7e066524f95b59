"""A relationship declared with ``was=``: its children read from both layouts, as one (pure).

While a migration moves children from the ``was=`` layout into the ``via=`` one, a child is in
the old layout, in the new one, or (between the move's put and its delete) in both. Every read
of the relationship returns the union, each child once (identity: its key fields; the new
layout's copy wins), in the order the new strategy promises. ``dynorm/io/union.py`` sends.

The order of the reads is what makes the union complete. A move writes the new copy first,
then deletes the old one: were both layouts read at once, the server could answer the new read
before the put and the old read after the delete, and the child would be in neither. So, for
each key range, the old layout's read is answered before the new layout's read of that range is
sent (a *window*): the old page's last child bounds what may be returned (or nothing does, when
the old layout was read to its end); the new layout is then read from the same position; both
are merged in the new order and returned up to the nearest end of the two. The next window
reads both again from the last child returned, so a new page read before a later old page is
never trusted beyond its own window. A child deleted from the old layout before the old read
was put into the new one before it too, so a new read sent afterwards finds it, provided that
read sees every write made before it: strongly consistent reads of the table do (the union
reads the new layout so when it is on the table); an index is eventually consistent, so a
child moved within the last second may be missing from a read of an index, as any fresh write
may be.

The positions: a collection's children are ordered by their sort key in the new layout, then
by their identity (ties in an index or across shards). A read of an index, whose sort keys may
repeat, ends its part of a window before the run of equal sort keys its page ended in (DynamoDB
orders such a run its own way): the next window reads that run again, whole.

An old child's sort key is the one it has once moved (``ItemMove`` keeps the sort key template;
a child embedded before becomes an item of the new templates), so both layouts' children have
a position in one order, and a window restarts either layout at a position with a sort key
condition narrowed to start there (as a sharded collection's pages do,
``dynorm.mapping.sharded``). Children that become embedded (new ``Embedded``) are read whole:
the old collection first, then the parent's attribute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import msgspec

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import DefinitionError
from dynorm.core.keys import KeyType, key_text, typed_key_text
from dynorm.core.ranges import SortRange
from dynorm.core.requests import CollectionRead, KeyRange, Request, get_item, whole_item_reads

from .embedded import EmbeddedCodec
from .model import ModelInfo
from .oldlayout import EmbeddedItems, ItemMove
from .relations import HasManyRelation, collection_read
from .sharded import narrowed_from, sort_order

__all__ = [
    "AFTER",
    "BEFORE",
    "CHILD",
    "Entry",
    "Side",
    "UnionPosition",
    "UnionRead",
    "embedded_union",
    "merge_window",
    "union_read",
    "union_scope",
]

#: A child's place in the new order: its sort key as compared, ``CHILD``, then its identity.
#: A bound before (or, backwards, after) every child of one sort key has ``BEFORE`` (``AFTER``)
#: and no identity: where an index's sort key repeats, a page may end inside a run of equal sort
#: keys, whose order DynamoDB does not tie to their identity.
OrderKey: TypeAlias = tuple[Any, int, tuple[str, ...]]
BEFORE, CHILD, AFTER = 0, 1, 2


class UnionPosition(msgspec.Struct, frozen=True):
    """After the child whose new sort key is ``sort`` (its stored value) and key ``identity``.

    ``identity`` None: before every child whose sort key is ``sort`` (in the read's direction).
    """

    sort: AttributeValue
    identity: tuple[str, ...] | None


class Entry(msgspec.Struct, frozen=True):
    """A child read from one layout: its place in the new order and the object."""

    key: OrderKey
    sort: AttributeValue
    obj: Any

    @property
    def position(self) -> UnionPosition:
        return UnionPosition(self.sort, self.key[2] if self.key[1] == CHILD else None)

    def run_start(self, *, forward: bool) -> Entry:
        """The bound before every child with this entry's sort key, in the read's direction."""
        return Entry((self.key[0], BEFORE if forward else AFTER, ()), self.sort, None)


class Side(msgspec.Struct, frozen=True):
    """What one layout's read of a window gave.

    ``horizon``: the last child read of a layout that has more (its read reaches that far and
    no further); None when the layout was read to its end from the window's start.
    """

    entries: list[Entry]
    horizon: Entry | None


def _before_or_at(key: OrderKey, bound: OrderKey, *, forward: bool) -> bool:
    return key <= bound if forward else key >= bound


def merge_window(
    new: Side, old: Side, limit: int | None, *, forward: bool
) -> tuple[list[Any], UnionPosition | None, bool]:
    """The children of a window, merged: each once, the new copy kept, in the new order.

    Only children up to the nearest horizon of the two layouts are certain (either layout may
    hold more before the other's horizon). Returns the children, the position they end at
    (the last child, or the horizon when none is certain) and whether more may follow.
    """
    by_identity: dict[tuple[str, ...], Entry] = {e.key[2]: e for e in old.entries}
    by_identity.update((e.key[2], e) for e in new.entries)  # the new layout's copy wins
    merged = sorted(by_identity.values(), key=lambda e: e.key, reverse=not forward)
    horizons = [h for h in (new.horizon, old.horizon) if h is not None]
    bound: Entry | None = None
    if horizons:
        bound = (
            min(horizons, key=lambda e: e.key) if forward else max(horizons, key=lambda e: e.key)
        )
        merged = [e for e in merged if _before_or_at(e.key, bound.key, forward=forward)]
    more = bound is not None
    if limit is not None and len(merged) > limit:
        merged, more = merged[:limit], True
    if merged:
        end: UnionPosition | None = merged[-1].position
    else:
        end = None if bound is None else bound.position
    return [e.obj for e in merged], end, more


def embedded_union(codec: EmbeddedCodec, new: Sequence[Any], old: Sequence[Any]) -> list[Any]:
    """Children that become embedded: the parent's own (new) and the old items not among them.

    A map (``Embedded(key=...)``) in key order; a list as stored, then the old children it does
    not hold, in the old layout's order.
    """
    held = [*new, *(c for c in old if not any(codec.same_child(c, n) for n in new))]
    if codec.key is not None:
        field = codec.key
        return sorted(held, key=lambda c: getattr(c, field))
    return held


class UnionRead(msgspec.Struct, frozen=True, dict=True):
    """Both layouts of one parent's children: the reads and how their items become children.

    ``new_reads``: the new layout's Queries (one a shard), none when it is ``Embedded``
    (``new_codec``). ``old_reads``: the old layout's Queries, none when it was ``Embedded``
    (``old_items``, read by ``old_get``). An old item is read as the child it becomes
    (``move``), or, when the new layout embeds children, as the old model's item.
    """

    rel: HasManyRelation[Any]
    parent_values: Mapping[str, object]
    new_reads: tuple[CollectionRead, ...]
    old_reads: tuple[CollectionRead, ...]
    new_codec: EmbeddedCodec | None
    old_get: Request | None
    old_items: EmbeddedItems | None
    move: ItemMove | None
    forward: bool
    #: the new layout's sort key attribute and type (None: the new layout embeds children)
    sort_attr: str | None
    sort_kind: KeyType = "S"
    #: the GetItem of the parent's attribute holding the new layout's children (new Embedded)
    new_get: Request | None = None
    #: the old layout is an index that holds items in part (KEYS_ONLY, INCLUDE): each page's
    #: items are read whole by their table keys (BatchGetItem) before they are moved
    old_whole: bool = False

    @property
    def child(self) -> ModelInfo[Any]:
        return self.rel.target_info

    def identity(self, obj: object) -> tuple[str, ...]:
        values = self.child.values_of(obj)
        return tuple(typed_key_text(values[f]) for f in self.child.identity_fields())

    def entry(self, obj: object, item: Mapping[str, AttributeValue]) -> Entry:
        """The child ``obj`` whose new-layout item is ``item``, placed in the new order."""
        assert self.sort_attr is not None  # noqa: S101 - collections only
        sort = item[self.sort_attr]
        return Entry((sort_order(self.sort_kind)(sort), CHILD, self.identity(obj)), sort, obj)

    def order_key(self, position: UnionPosition) -> OrderKey:
        compared = sort_order(self.sort_kind)(position.sort)
        if position.identity is None:
            return (compared, BEFORE if self.forward else AFTER, ())
        return (compared, CHILD, position.identity)

    def decode_old(self, raw: Item) -> tuple[object, Item] | None:
        """An old layout's item as (the child, the item it becomes); None: not an old child."""
        if self.move is not None:
            moved = self.move.moved_item(raw)
            return None if moved is None else (self.child.decode(moved), moved)
        child = self.child
        if child.table.model_of(raw) is not child:
            return None
        return child.decode(raw), raw

    def old_children(self, raw_parent: Item | None) -> list[tuple[object, Item]]:
        """The children embedded in the old layout's parent item, as the items they become."""
        if raw_parent is None or self.old_items is None:
            return []
        items = self.old_items.children_of(self.parent_values, raw_parent)
        return [(self.child.decode(item), item) for item in items]

    def after(self, read: CollectionRead, position: UnionPosition | None) -> CollectionRead:
        """``read`` narrowed to start at ``position``'s sort key (its range kept)."""
        if position is None or read.sk_attr is None:
            return read
        kind: KeyType = dict(read.key_types).get(read.sk_attr, "S")
        text = key_text(position.sort) or ""
        narrowed = narrowed_from(read.range, text, kind, forward=read.forward)
        return msgspec.structs.replace(read, range=narrowed)

    def keeps(self, read: CollectionRead, entry: Entry, after: OrderKey | None) -> bool:
        """Whether ``entry`` is past ``after`` and in the range of ``read`` (not narrowed)."""
        if after is not None and _before_or_at(entry.key, after, forward=self.forward):
            return False
        declared: KeyRange | None = read.range
        text = key_text(entry.sort)
        return declared is None or text is None or declared.contains(text)

    def reads(self) -> list[Request]:
        """Every first request, in the order sent: the old layout's, then the new one's."""
        return self.old_requests() + self.new_requests()

    def old_requests(self) -> list[Request]:
        """The old layout's first requests, sent together."""
        old = [self.old_get] if self.old_get is not None else []
        return old + [r.request() for r in self.old_reads]

    def new_requests(self) -> list[Request]:
        """What follows the old layout's reads, once they are answered.

        Their whole items (an index holding them in part), then the new layout's first reads.
        """
        whole = [whole_item_reads(self.old_reads[0].table_name)] if self.old_whole else []
        new = [self.new_get] if self.new_get is not None else []
        return whole + new + [r.request() for r in self.new_reads]


def _old_collection(
    rel: HasManyRelation[Any], table_name: str, values: Mapping[str, object], *, consistent: bool
) -> tuple[tuple[CollectionRead, ...], ItemMove | None]:
    """The old layout's Queries (one a shard) when it is a collection, and how an item moves."""
    assert rel.was is not None  # noqa: S101 - a union has a was=
    was = rel.was
    if rel.embedded is not None:
        # Children that become embedded: the child model still declares where they were.
        old = rel.via_strategy(was)
        return old.children_reads(table_name, values, consistent=consistent), None
    move = ItemMove(rel, was)
    child = rel.target_info
    link = rel.link_values(values)
    prefix = rel.child_prefix(values)
    sorted_ = SortRange(KeyRange("begins_with", (prefix,)) if prefix else None)
    reads = tuple(
        msgspec.structs.replace(
            collection_read(
                child,
                was.index,
                table_name,
                pk,
                sorted_,
                forward=not rel.newest_first,
                consistent=consistent,
            ),
            parse=None,  # an old item is read whole, as stored, then moved (see ItemMove)
        )
        for pk in move.old_pk.keys(link)
    )
    return reads, move


def union_read(
    rel: HasManyRelation[Any],
    table_name: str,
    parent_values: Mapping[str, object],
    *,
    consistent: bool = True,
) -> UnionRead:
    """The reads of ``rel``'s children in both layouts, for the parent of ``parent_values``.

    ``consistent``: read the new layout strongly consistently where it is on the table (the
    guarantee above needs it); the old layout's read may lag, which only shows a child's old
    copy a little longer.
    """
    was = rel.was
    if was is None:
        raise DefinitionError(f"{rel.qualname} has no was=: it is read from one layout")
    owner = rel.owner_info
    old_codec = was.embedded_codec(rel)
    if old_codec is not None and rel.embedded is not None:
        raise DefinitionError(
            f"{rel.qualname}: via= and was= are both Embedded; move the children through a "
            "collection (Partition()) first"
        )
    old_get = old_items = None
    old_reads: tuple[CollectionRead, ...] = ()
    move = None
    if old_codec is not None:
        key = owner.primary_key(parent_values)
        old_get = get_item(table_name, key, attribute=old_codec.attribute)
        old_items = EmbeddedItems(rel, old_codec)
    else:
        old_reads, move = _old_collection(rel, table_name, parent_values, consistent=False)
    new_reads: tuple[CollectionRead, ...] = ()
    new_get = None
    sort_attr: str | None = None
    sort_kind: KeyType = "S"
    if rel.embedded is not None:
        key = owner.primary_key(parent_values)
        new_get = get_item(table_name, key, consistent=consistent, attribute=rel.embedded.attribute)
    else:
        new_reads = rel.children_reads(table_name, parent_values, consistent=consistent)
        sort_attr = new_reads[0].sk_attr
        if sort_attr is not None:
            sort_kind = dict(new_reads[0].key_types).get(sort_attr, "S")
    index = was.index if old_codec is None else None
    old_whole = index is not None and rel.children_table.projected_attributes(index) is not None
    return UnionRead(
        rel,
        dict(parent_values),
        new_reads,
        old_reads,
        rel.embedded,
        old_get,
        old_items,
        move,
        not rel.newest_first,
        sort_attr,
        sort_kind,
        new_get,
        old_whole,
    )


def union_scope(rel: HasManyRelation[Any], parent_key: Item) -> tuple[object, ...]:
    """What a union's cursor is bound to: the relationship, both layouts, the parent."""
    assert rel.was is not None  # noqa: S101 - a union has a was=
    return ("union", rel.qualname, rel.via.describe(), rel.was.describe(), parent_key)
