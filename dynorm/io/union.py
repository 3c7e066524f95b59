"""Reading a relationship declared with ``was=``: the old layout first, then the new, merged.

The windows and the merge are planned in ``dynorm.mapping.union`` (which says why the old
layout's read is answered before the new layout's read of the same range is sent); this module
sends them. A window costs one round trip for the old layout (every old shard at once) and then
one for the new (every new shard at once); a page of ``limit`` children may take more windows
while children are found in both layouts (each is returned once).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from operator import attrgetter
from typing import Any

from dynorm.core.chunks import BATCH_GET_MAX, chunked, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec, scope_fingerprint
from dynorm.core.requests import CollectionRead, Page, Request
from dynorm.mapping.relations import HasManyRelation, relationships_of
from dynorm.mapping.state import Loaded
from dynorm.mapping.union import (
    Entry,
    Side,
    UnionPosition,
    UnionRead,
    embedded_union,
    merge_window,
    union_read,
    union_scope,
)

from .batch import drain_get
from .reader import Reader

__all__ = [
    "count_union",
    "iterate_union",
    "load_union",
    "read_union_page",
    "union_of",
    "union_page",
    "union_requests",
]


def union_of(
    reader: Reader, rel: HasManyRelation[Any], parent_values: dict[str, object]
) -> UnionRead:
    """The union reads of ``rel``'s children of the parent of ``parent_values``."""
    return union_read(rel, reader.name_of(rel.children_table), parent_values)


def _bind(reader: Reader, union: UnionRead) -> Callable[[object, Item], object]:
    """Binds an old child to the reader, as the acceptor binds a new one."""
    child = union.child
    if not relationships_of(child):
        return lambda obj, item: obj

    def bind(obj: object, item: Item) -> object:
        reader.adopt(child, obj, item)
        return obj

    return bind


async def _collection_side(
    reader: Reader,
    union: UnionRead,
    reads: Sequence[CollectionRead],
    decode: Callable[[Item], Entry | None],
    *,
    after: UnionPosition | None,
    limit: int | None,
    whole: bool = False,
) -> Side:
    """One layout's collection (every shard at once) read from ``after`` for one window."""
    after_key = None if after is None else union.order_key(after)

    async def one(read: CollectionRead) -> tuple[list[Entry], Entry | None]:
        def accept(raw: Item) -> Entry | None:
            entry = decode(raw)
            return entry if entry is not None and union.keeps(read, entry, after_key) else None

        narrowed = union.after(read, after)
        # An index's sort keys may repeat: its part ends before the run its page ended in (see
        # dynorm.mapping.union), so it reads one more child to keep ``limit`` of them.
        ties = read.index is not None
        want = None if limit is None or not ties else limit + 1

        async def page(start: Item | None) -> tuple[list[Entry], Item | None]:
            if not whole:
                return await reader.read_page(narrowed, accept, limit=want, start=start)
            return await _whole_page(reader, union, narrowed, accept, limit=want, start=start)

        found, resume = await page(None)
        # Read on while no child can be returned: a page of other items only, or of one run.
        while resume is not None and (not found or (ties and _one_run(found))):
            more, resume = await page(resume)
            found += more
        if resume is None or not found:
            return found, None
        return found, (found[-1].run_start(forward=union.forward) if ties else found[-1])

    results = await asyncio.gather(*map(one, reads))
    entries = [e for found, _ in results for e in found]
    ends = [end for _, end in results if end is not None]
    if not ends:
        return Side(entries, None)
    nearest = min if union.forward else max
    return Side(entries, nearest(ends, key=lambda e: e.key))


async def _whole_page(
    reader: Reader,
    union: UnionRead,
    read: CollectionRead,
    accept: Callable[[Item], Entry | None],
    *,
    limit: int | None,
    start: Item | None,
) -> tuple[list[Entry], Item | None]:
    """A page of an index holding the old items in part: its items read whole, then taken."""
    table = union.child.table
    keys = table.primary_attributes

    def keyed(raw: Item) -> Item | None:
        return {a: raw[a] for a in keys} if all(a in raw for a in keys) else None

    found, resume = await reader.read_page(read, keyed, limit=limit, start=start)
    # Read as plain JSON, every attribute kept: the old item is moved whole (see ItemMove).
    chunks = await asyncio.gather(
        *(
            drain_get(reader.send, read.table_name, chunk, sleep=asyncio.sleep)
            for chunk in chunked(found, BATCH_GET_MAX)
        )
    )
    items = {key_id({a: raw[a] for a in keys}): raw for chunk in chunks for raw in chunk}
    entries = [accept(items[key_id(key)]) for key in found if key_id(key) in items]
    return [e for e in entries if e is not None], resume


def _one_run(found: Sequence[Entry]) -> bool:
    """Whether every child of ``found`` has one sort key."""
    return bool(found[0].key[0] == found[-1].key[0])


async def _old_side(
    reader: Reader, union: UnionRead, after: UnionPosition | None, limit: int | None
) -> Side:
    """The old layout's part of a window: its Queries, or the parent's embedded attribute."""
    bind = _bind(reader, union)
    if union.old_get is not None:
        raw = (await reader.send(union.old_get)).get("Item")
        after_key = None if after is None else union.order_key(after)
        entries = [union.entry(bind(obj, item), item) for obj, item in union.old_children(raw)]
        read = union.new_reads[0]
        return Side([e for e in entries if union.keeps(read, e, after_key)], None)

    def decode(raw: Item) -> Entry | None:
        found = union.decode_old(raw)
        return None if found is None else union.entry(bind(*found), found[1])

    return await _collection_side(
        reader, union, union.old_reads, decode, after=after, limit=limit, whole=union.old_whole
    )


async def _new_side(
    reader: Reader, union: UnionRead, after: UnionPosition | None, limit: int | None
) -> Side:
    accept = reader.acceptor(union.child, union.new_reads[0].index)

    def decode(raw: Item) -> Entry | None:
        obj = accept(raw)
        return None if obj is None else union.entry(obj, raw)

    return await _collection_side(reader, union, union.new_reads, decode, after=after, limit=limit)


async def read_union_page(
    reader: Reader,
    union: UnionRead,
    *,
    limit: int | None,
    after: UnionPosition | None,
    read_old: list[Side] | None = None,
) -> tuple[list[Any], UnionPosition | None, bool]:
    """The next ``limit`` children after ``after`` (one window's when None), merged.

    Also where the page ends and whether more may follow. Windows are read until the page
    holds ``limit`` children (or one window holds some, without a limit) or both layouts end.
    ``read_old`` keeps the old layout once a window read it to its end (reads of the same
    iteration pass the same list): the new layout then runs free, its windows sending no more
    old reads (what they were answered was, as the order needs, before the new reads).
    """
    collected: list[Any] = []
    kept = [] if read_old is None else read_old
    while True:
        if kept:
            old = _past(union, kept[0], after)
        else:
            old = await _old_side(reader, union, after, limit)
            if old.horizon is None:
                kept.append(old)
        # Sent only now: the old layout's read of this range is answered.
        new = await _new_side(reader, union, after, limit)
        want = None if limit is None else limit - len(collected)
        found, end, more = merge_window(new, old, want, forward=union.forward)
        collected += found
        if not more:
            return collected, None, False
        after = end
        if (limit is None and collected) or (limit is not None and len(collected) >= limit):
            return collected, end, True


def _past(union: UnionRead, side: Side, after: UnionPosition | None) -> Side:
    """The old layout read to its end, from ``after`` on."""
    if after is None:
        return side
    after_key = union.order_key(after)
    read = (union.old_reads or union.new_reads)[0]
    return Side([e for e in side.entries if union.keeps(read, e, after_key)], None)


async def _embedded_children(reader: Reader, union: UnionRead) -> list[Any]:
    """Children that become embedded: every old item first, then the parent's attribute."""
    accept = reader.acceptor(union.child, union.old_reads[0].index)

    async def whole(read: CollectionRead) -> list[Any]:
        return [obj async for obj in reader.iterate(read, accept)]

    old_parts = await asyncio.gather(*map(whole, union.old_reads))
    old = [c for part in old_parts for c in part]
    assert union.new_get is not None  # noqa: S101 - a new Embedded layout has its GetItem
    assert union.new_codec is not None  # noqa: S101 - a new Embedded layout has its codec
    item = (await reader.send(union.new_get)).get("Item") or {}
    info = union.rel.owner_info
    new = union.new_codec.decode(item, key=info.describe(info.primary_key(union.parent_values)))
    return embedded_union(union.new_codec, new, old)


async def iterate_union(
    reader: Reader, union: UnionRead, *, after: UnionPosition | None = None
) -> AsyncIterator[Any]:
    """Every child after ``after`` (default: from the first), window by window."""
    if union.new_codec is not None:
        for child in await _embedded_children(reader, union):
            yield child
        return
    more = True
    read_old: list[Side] = []  # the old layout, once a window read it to its end
    while more:
        found, after, more = await read_union_page(
            reader, union, limit=None, after=after, read_old=read_old
        )
        for child in found:
            yield child


async def union_page(
    reader: Reader, rel: HasManyRelation[Any], parent: object, limit: int | None, cursor: str | None
) -> Page[Any]:
    """``loader.page()`` of a relationship with ``was=``; the cursor holds the last child."""
    owner = rel.owner_info
    union = union_of(reader, rel, owner.values_of(parent))
    scope = scope_fingerprint(*union_scope(rel, owner.key_of(parent)))
    cursors = reader.cursors
    if union.new_codec is not None:
        children = await _embedded_children(reader, union)
        if union.new_codec.key is not None:
            key = union.new_codec.key
            return _keyed_page(children, key, limit, cursor=cursor, cursors=cursors, scope=scope)
        offset = 0 if cursor is None else cursors.decode_offset(cursor, scope)
        end = len(children) if limit is None else offset + limit
        after = cursors.encode_offset(end, scope) if end < len(children) else None
        return Page(children[offset:end], after)
    start = None
    if cursor is not None:
        sort, identity = cursors.decode_union(cursor, scope)
        start = UnionPosition(sort, identity)
    items, end_at, more = await read_union_page(reader, union, limit=limit, after=start)
    if not more or end_at is None:
        return Page(items, None)
    return Page(items, cursors.encode_union(end_at.sort, end_at.identity, scope))


def _keyed_page(
    children: list[Any],
    field: str,
    limit: int | None,
    *,
    cursor: str | None,
    cursors: CursorCodec,
    scope: str,
) -> Page[Any]:
    """A page of children becoming a map (``Embedded(key=...)``), in key order.

    As the map's own pages (``RelationLoader.page``): the cursor holds the last key returned,
    not a count, so a child added, removed or moved before it between two pages (the
    application writes while a migration runs) moves no other child in or out of the next.
    """
    after_key = None if cursor is None else cursors.decode_after(cursor, scope)
    ordered = sorted(children, key=attrgetter(field))
    rest = [c for c in ordered if after_key is None or getattr(c, field) > after_key]
    shown = rest if limit is None else rest[:limit]
    if len(shown) == len(rest):
        return Page(shown, None)
    return Page(shown, cursors.encode_after(getattr(shown[-1], field), scope))


async def load_union(reader: Reader, union: UnionRead, limit: int | None) -> Loaded:
    """The children a ``load=`` of a relationship with ``was=`` gives (the rest: ``resume``)."""
    if union.new_codec is not None:
        children = await _embedded_children(reader, union)
        return Loaded(children, None, read_by=union.rel, shown=limit)
    items, end, more = await read_union_page(reader, union, limit=limit, after=None)
    return Loaded(items, {} if more else None, read_by=union.rel, position=end)


async def count_union(reader: Reader, union: UnionRead) -> int:
    """How many children both layouts hold, each once.

    Every child is read, not counted by DynamoDB (``Select=COUNT`` of each layout would count
    a child being moved twice).
    """
    return sum([1 async for _ in iterate_union(reader, union)])


def union_requests(union: UnionRead) -> list[Request]:
    """The first requests of a union read, in the order they are sent (old layout first)."""
    return union.reads()
