"""``db.query(Parent, ..., load=[...])``: parents and their children from one Query.

A query names a collection, not one item: parents whose full key is not known (an order whose
sort key holds its customer id) are found by it. Children stored in the same collection (same
partition, same index, same read direction) are read by the same Query, whose sort key range is
widened to span the parents' and the children's ranges; each child is given to the parent its
link fields name. Other relationships are loaded for the page's parents afterwards, as
``db.load`` does: by key with one BatchGetItem per 100 distinct keys (BelongsTo), from the
parent items themselves (Embedded), or with one Query per parent, run concurrently.

``limit=N`` counts parents. Children of the page's parents that lie beyond the last DynamoDB
page read stay readable lazily (``async for child in parent.rel``); a limited load
(``Parent.rel.limit(5)``) reads on by itself until it has its children.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.keys import key_text
from dynorm.core.requests import CollectionRead, Request, Tally, upper_bound
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.reading import narrowed
from dynorm.mapping.readplan import QueryLoadReads, plan_query_load, share_of_page
from dynorm.mapping.relations import HasManyRelation, LoadOption
from dynorm.mapping.state import Loaded

from .loading import load_all
from .paging import Sender, read_page
from .reader import Reader

__all__ = ["QueryLoad"]

P = TypeVar("P")


#: Sort key conditions with plain bounds; any other is widened to the whole partition.


class QueryLoad(msgspec.Struct, Generic[P], frozen=True):
    """The relationships a query loads, and what it needs to read them."""

    reader: Reader
    info: ModelInfo[P]
    components: Mapping[str, object]
    options: tuple[LoadOption, ...]

    def plan(self, read: CollectionRead, *, filtered: bool = False) -> QueryLoadReads:
        return plan_query_load(self.info, read, self.components, self.options, filtered=filtered)

    def after_page(self, plan: QueryLoadReads) -> list[Request]:
        """The requests sent for each parent of a page (see ``QueryLoadReads.after_page``)."""
        return plan.after_page(self.info, self.reader.name_of)

    async def page(
        self,
        send: Sender,
        plan: QueryLoadReads,
        *,
        limit: int | None,
        start: Item | None,
        tally: Tally | None = None,
    ) -> tuple[list[P], Item | None]:
        """Up to ``limit`` parents after ``start`` with their children, and where to resume."""
        found = await _read(
            self.reader, send, self.info, plan, limit=limit, start=start, tally=tally
        )
        parents = found.parents
        after: Item | None = None
        if limit is not None and len(parents) > limit:
            parents = parents[:limit]
            after = plan.read.key_of(parents[-1][1])
        elif found.end is not None:
            after = plan.read.key_of(parents[-1][1]) if parents else found.end
        objs = [obj for obj, _ in parents]
        follow_ups: list[Awaitable[None]] = []
        for i, option in enumerate(plan.shared):
            follow_ups += self._give(
                plan,
                option=option,
                parents=parents,
                children=found.children[i],
                end=found.end,
                start=start,
            )
        await asyncio.gather(*follow_ups, load_all(self.reader, self.info, objs, plan.separate))
        return objs, after

    def _give(
        self,
        plan: QueryLoadReads,
        *,
        option: LoadOption,
        parents: Sequence[tuple[P, Item]],
        children: Sequence[tuple[Any, Item]],
        end: Item | None,
        start: Item | None,
    ) -> list[Awaitable[None]]:
        """Hand each parent its children from the Query; returns the reads some still need."""
        rel: HasManyRelation[Any] = option.relationship  # type: ignore[assignment]
        by_link: dict[tuple[object, ...], list[tuple[Any, Item]]] = {}
        for child, raw in children:
            by_link.setdefault(tuple(getattr(child, f) for f in rel.link), []).append((child, raw))
        follow_ups: list[Awaitable[None]] = []
        for parent, _ in parents:
            values = self.info.values_of(parent)
            mine = by_link.get(tuple(values[p] for p in rel.link.values()), [])
            prefix = rel.child_prefix(values)
            entry = Loaded([], None, read_by=rel)
            self.reader.adopt(self.info, parent, {}).loaded[rel.name] = entry
            if start is not None and _began_before(plan.read, prefix, start):
                # Some of its children may sort before where this page began: read them all.
                follow_ups.append(self._read_own(rel, values, entry, option.limit, None))
                continue
            # Children past the page's end are read lazily, unless a limited load still needs
            # some: it reads on now.
            share = share_of_page(
                plan.read,
                prefix,
                option.limit,
                [raw for _, raw in mine],
                end,
                crowded=False,
                lazy=True,
            )
            entry.items = [child for child, _ in mine[: share.keep]]
            entry.resume = share.resume
            if share.more:
                follow_ups.append(self._read_own(rel, values, entry, share.want, share.start))
        return follow_ups

    async def _read_own(
        self,
        rel: HasManyRelation[Any],
        values: Mapping[str, object],
        entry: Loaded,
        limit: int | None,
        start: Item | None,
    ) -> None:
        """More of one parent's children, by the relationship's own read."""
        read = rel.children_read(self.reader.name_of(rel.children_table), values)
        accept = self.reader.acceptor(rel.target_info, read.index)
        items, after = await self.reader.read_page(read, accept, limit=limit, start=start)
        entry.items += items
        entry.resume = after


def _began_before(read: CollectionRead, prefix: str, start: Item) -> bool:
    """Whether a read resumed after ``start`` may have skipped keys that start with ``prefix``."""
    value = start.get(read.sk_attr) if read.sk_attr else None
    sk: str | None = None if value is None else value.get("S")
    if sk is None:
        return True
    return sk >= prefix if read.forward else sk < upper_bound(prefix)


class _Found(msgspec.Struct, Generic[P]):
    parents: list[tuple[P, Item]]
    children: list[list[tuple[Any, Item]]]
    #: The last response's LastEvaluatedKey.
    end: Item | None = None


async def _read(
    reader: Reader,
    send: Sender,
    info: ModelInfo[P],
    plan: QueryLoadReads,
    *,
    limit: int | None,
    start: Item | None,
    tally: Tally | None,
) -> _Found[P]:
    """Whole DynamoDB pages until ``limit`` parents (one page with no limit) or the end."""
    read = plan.read
    # Parents are tested against their own range (a gt/lt bound excluded) when it was widened.
    accept_parent = reader.acceptor(info, read.index)
    accept_parent = narrowed(accept_parent, read)
    accepts = [reader.acceptor(o.relationship.target_info, read.index) for o in plan.shared]
    in_range = plan.parents.contains if plan.parents is not None else None
    sk_attr = read.sk_attr or ""
    found: _Found[P] = _Found([], [[] for _ in accepts])
    typed = plan.parents is not None and plan.parents.kind != "S"

    def sort(raw: Item) -> None:
        # A number or binary sort key is tested by value, from its key text.
        sk = (key_text(raw.get(sk_attr)) or "") if typed else raw.get(sk_attr, {}).get("S", "")
        parent = accept_parent(raw) if in_range is None or in_range(sk) else None
        if parent is not None:
            found.parents.append((parent, raw))
            return
        for accept, kept in zip(accepts, found.children, strict=True):
            child = accept(raw)
            if child is not None:
                kept.append((child, raw))

    while True:
        # One whole DynamoDB page a call; ``sort`` keeps what it finds and accepts nothing.
        _, start = await read_page(send, read, sort, limit=None, start=start, tally=tally)
        found.end = start
        if start is None or limit is None or len(found.parents) >= limit:
            return found
