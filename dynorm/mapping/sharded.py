"""Sharded collections read back as one: the order of the merge and where the next page starts.

A relationship declared ``Partition(shards=N)`` (or ``Index(name, shards=N)``) keeps its children
in N partitions; a page of them is read by N Queries sent together (one per shard) and merged
here, purely, in sort key order. ``dynorm/io/sharded.py`` sends them.

The merge order is the sort key, then (for children whose sort keys are equal, which an index's
sort key allows) the shard's number, then the shard's own order. A page ends at a
:class:`Position` in that order, the last child it returned, and the next page starts every
shard from there: the shard of that child after its key (an ExclusiveStartKey, a real position
in DynamoDB's order), every other shard by its sort key condition narrowed to start at that
child's sort key. Nothing depends on where a shard's earlier read stopped, so a child added
between two pages, in whichever shard, comes on the next page if it sorts after the position.
"""

from __future__ import annotations

import base64
import decimal
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.keys import KeyType, key_attribute_value, key_text
from dynorm.core.requests import CollectionRead, KeyRange, upper_bound

__all__ = [
    "Position",
    "ShardResult",
    "ShardStart",
    "ShardedRead",
    "merge_page",
    "narrowed_from",
    "sort_order",
]

T = TypeVar("T")


def _sort_order(kind: str) -> Callable[[Any], Any]:
    """How a sort key attribute's values compare, as DynamoDB compares them."""
    if kind == "N":
        return lambda value: decimal.Decimal(key_text(value) or "0")
    if kind == "B":
        # bytes from botocore, base64 text from the fast path: compared as the bytes.
        def binary(value: Any) -> bytes:
            raw = value.get("B") if isinstance(value, dict) else None
            return raw if isinstance(raw, bytes) else base64.b64decode(raw or "")

        return binary
    # Strings compare by their UTF-8 bytes, which is code point order: Python's str order.
    return lambda value: key_text(value) or ""


class Position(msgspec.Struct, frozen=True):
    """A point in a sharded collection's merge order: after ``key`` of shard ``shard``.

    ``key`` is the ExclusiveStartKey that resumes ``shard``'s Query right after the child (the
    table's keys, and an index's too); its sort key attribute is the child's sort key.
    """

    shard: int
    key: Item


class ShardResult(msgspec.Struct, Generic[T], frozen=True):
    """What one shard's read gave: accepted (object, raw item) pairs, and where it resumes."""

    found: list[tuple[T, Item]]
    #: the key to resume after, None when the shard was read to its end.
    after: Item | None


class ShardStart(msgspec.Struct, frozen=True):
    """How one shard is read for a page: its Query, a start key, and the items to drop.

    ``read`` None: nothing of this shard can follow the position (a collection without a sort
    key, whose earlier shards were read whole). ``drop`` tests a raw item the narrowed Query
    returns that does not follow the position (or lies outside the relationship's range).
    """

    read: CollectionRead | None
    start: Item | None = None
    drop: Callable[[Item], bool] | None = None


class ShardedRead(msgspec.Struct, frozen=True):
    """The Queries of a sharded collection, one per shard, read as one collection."""

    reads: tuple[CollectionRead, ...]

    @property
    def forward(self) -> bool:
        return self.reads[0].forward

    def order(self) -> Callable[[Item], Any]:
        """The merge order of a raw item: its sort key (ties: by shard, see the module)."""
        read = self.reads[0]
        attr = read.sk_attr
        if attr is None:
            return lambda raw: ""
        compare = _sort_order(dict(read.key_types).get(attr, "S"))
        return lambda raw: compare(raw.get(attr))

    def position_of(self, shard: int, raw: Item) -> Position:
        """The position right after ``raw``, an item of ``shard``."""
        return Position(shard, self.reads[shard].key_of(raw))

    def starts(self, after: Position | None) -> list[ShardStart]:
        """How each shard is read for the children that follow ``after`` (None: the first)."""
        if after is None:
            return [ShardStart(read) for read in self.reads]
        return [self._start(shard, read, after) for shard, read in enumerate(self.reads)]

    def _start(self, shard: int, read: CollectionRead, after: Position) -> ShardStart:
        if shard == after.shard:
            return ShardStart(read, after.key)
        # Another shard starts by its sort key condition, not by an ExclusiveStartKey made up
        # from the position: among equal index sort keys, DynamoDB places such a key by its own
        # order of the table keys (a hash, on some servers), which no merge can follow.
        attr = read.sk_attr
        # Children with the position's sort key come after it in a later shard only.
        strict = shard < after.shard
        if attr is None:
            return ShardStart(None if strict else read)
        value = after.key[attr]
        kind: KeyType = dict(read.key_types).get(attr, "S")
        narrowed, outside = _from(read.range, key_text(value) or "", kind, forward=read.forward)
        order = _sort_order(kind)
        dropped = [order(value)] if strict else []
        if outside is not None:
            dropped.append(order(key_attribute_value(kind, outside)))

        def drop(raw: Item) -> bool:
            return order(raw.get(attr)) in dropped

        narrowed_read = msgspec.structs.replace(read, range=narrowed)
        return ShardStart(narrowed_read, None, drop if dropped else None)


def _above(prefix: str, kind: KeyType) -> str | None:
    """The smallest key above every key that starts with ``prefix`` (None: there is none)."""
    if kind == "S":
        return upper_bound(prefix)
    data = base64.b64decode(prefix).rstrip(b"\xff")
    if not data:
        return None
    return base64.b64encode(data[:-1] + bytes([data[-1] + 1])).decode("ascii")


def _from(
    declared: KeyRange | None, value: str, kind: KeyType, *, forward: bool
) -> tuple[KeyRange, str | None]:
    """``declared`` narrowed to the keys at or after ``value`` in the read's direction.

    DynamoDB takes one sort key condition, so the narrowed range is a BETWEEN where the
    declared one bounds the far end; the second value is that far bound when the declared range
    leaves it out (the top of a prefix, a strict ``lt``/``gt``), for the reader to drop.
    """
    op = None if declared is None else declared.op
    if declared is None or op == "eq":
        return declared or KeyRange("ge" if forward else "le", (value,), kind), None
    low, high = declared.values[0], declared.values[-1]
    if forward:
        if op == "begins_with":
            top = _above(low, kind)
            if top is None:
                return KeyRange("ge", (value,), kind), None
            return KeyRange("between", (value, top), kind), top
        if op in ("between", "lt", "le"):
            return KeyRange("between", (value, high), kind), high if op == "lt" else None
        return KeyRange("ge", (value,), kind), None  # gt, ge
    if op in ("begins_with", "between", "gt", "ge"):
        return KeyRange("between", (low, value), kind), low if op == "gt" else None
    return KeyRange("le", (value,), kind), None  # lt, le


def sort_order(kind: str) -> Callable[[Any], Any]:
    """How a sort key attribute's values compare, as DynamoDB compares them (a union's too)."""
    return _sort_order(kind)


def narrowed_from(
    declared: KeyRange | None, value: str, kind: KeyType, *, forward: bool
) -> KeyRange:
    """``declared`` narrowed to the keys at or after ``value`` (inclusive) in the direction.

    The far bound of a prefix is included: the reader drops keys outside ``declared`` itself.
    """
    return _from(declared, value, kind, forward=forward)[0]


def merge_page(
    sharded: ShardedRead, results: Sequence[ShardResult[T] | None], limit: int | None
) -> tuple[list[T], Position | None, bool]:
    """The next ``limit`` children in merge order, the position they end at, whether more follow.

    ``results`` holds, per shard, its read from the page's start (None for a shard that cannot
    hold any). Each shard read up to ``limit`` children, so the first ``limit`` of the merge
    are the collection's next ``limit``. Without a limit each shard read one DynamoDB page:
    only children up to the nearest page end of a shard that has more are certain to come
    next, and the rest are read again next time. The position is the last child returned; a
    page that returns none while a shard has more ends at that shard's page end.
    """
    order = sharded.order()
    # Entries come in (shard, position in the shard) order; a stable sort on the sort key
    # alone keeps that order among equal sort keys, in both directions.
    merged = sorted(
        (
            _Entry(order(raw), shard, obj, raw)
            for shard, result in enumerate(results)
            if result is not None
            for obj, raw in result.found
        ),
        key=lambda entry: entry.sort,
        reverse=not sharded.forward,
    )
    ends = [
        _Entry(order(result.after), shard, None, result.after)
        for shard, result in enumerate(results)
        if result is not None and result.after is not None
    ]
    more = bool(ends)
    if limit is not None:
        more = more or len(merged) > limit
        merged = merged[:limit]
    elif ends:
        # The end that comes first in merge order bounds what is certain.
        bound = min(ends, key=lambda end: end.sort) if sharded.forward else _first_down(ends)
        merged = [entry for entry in merged if _at_or_before(entry, bound, forward=sharded.forward)]
        if not merged:
            return [], Position(bound.shard, bound.raw), True
    end = sharded.position_of(merged[-1].shard, merged[-1].raw) if merged else None
    return [entry.obj for entry in merged], end, more


class _Entry(msgspec.Struct, frozen=True):
    """An item in merge order: its sort key's order, its shard, its object, the raw item."""

    sort: Any
    shard: int
    obj: Any
    raw: Item


def _at_or_before(entry: _Entry, bound: _Entry, *, forward: bool) -> bool:
    if entry.sort == bound.sort:
        return entry.shard <= bound.shard
    return bool(entry.sort < bound.sort) if forward else bool(entry.sort > bound.sort)


def _first_down(ends: list[_Entry]) -> _Entry:
    """The end that comes first in descending order: the greatest sort key, the lowest shard."""
    best = ends[0]
    for end in ends[1:]:
        if end.sort > best.sort:  # equal: the earlier (lower) shard stays
            best = end
    return best
