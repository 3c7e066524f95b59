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

import attrs

from ._codec import Item
from ._errors import ExpressionError, KeyTemplateError
from ._loading import load_all, share_of_page
from ._model import ModelInfo
from ._paging import Sender, read_page
from ._plans import CollectionRead, KeyRange, Tally, upper_bound
from ._reading import narrowed
from ._relations import HasMany, LoadOption
from ._state import Loaded, Session

__all__ = ["QueryLoad", "QueryLoadPlan", "plan_query_load"]

P = TypeVar("P")


@attrs.frozen
class QueryLoadPlan:
    """What a page of ``db.query(..., load=[...])`` sends."""

    #: The Query: the parents' read, its range widened to their shared children.
    read: CollectionRead
    #: The parents' own sort key condition when the range was widened (parents are tested
    #: against it), else None.
    parents: KeyRange | None
    #: Relationships read by the same Query.
    shared: tuple[LoadOption, ...]
    #: Relationships loaded for the page's parents afterwards (see ``costs``).
    separate: tuple[LoadOption, ...]

    def costs(self) -> dict[str, str]:
        """Each relationship's qualified name -> how it is read, and what that costs a page."""
        found = {o.relationship.qualname: "in the same Query" for o in self.shared}
        for option in self.separate:
            rel = option.relationship
            if not isinstance(rel, HasMany):
                how = "one BatchGetItem per 100 distinct parents of a page"
            elif rel.embedded is not None:
                how = "inside each parent item (no request)"
            else:
                how = "one Query per parent of a page, run concurrently"
            found[rel.qualname] = how
        return found


def plan_query_load(
    info: ModelInfo[Any],
    read: CollectionRead,
    components: Mapping[str, object],
    options: Sequence[LoadOption],
    *,
    filtered: bool = False,
) -> QueryLoadPlan:
    """Which relationships share the parents' Query, and the range that reads them all (pure).

    ``filtered``: the query has a filter of the caller's, which would drop the children of a
    shared Query too (an ExpressionError then). The filter on the type attribute is dropped.
    """
    shared = [o for o in options if _shares(o.relationship, read, components)]
    separate = tuple(o for o in options if o not in shared)
    if not shared:
        return QueryLoadPlan(read, None, (), separate)
    if filtered:
        names = ", ".join(o.relationship.qualname for o in shared)
        raise ExpressionError(
            f"db.query({info.name}, load=[...]) reads {names} in the same Query as the "
            f"{info.name} items, and a filter would drop those children too: filter the "
            f"{info.name} items in Python, or query without load= and load the children of "
            f"the items it returns with db.load(items, {names})"
        )
    read = attrs.evolve(read, filter=None)  # the type attribute's filter would drop children
    bounds = [_bounds(read.range)]
    for option in shared:
        rel: HasMany[Any] = option.relationship  # type: ignore[assignment]
        prefix = _static_prefix(rel, read.index, components)
        bounds.append((prefix, upper_bound(prefix)) if prefix else None)
    widened: KeyRange | None = None
    if all(b is not None for b in bounds):
        lows = [b[0] for b in bounds if b is not None]
        highs = [b[1] for b in bounds if b is not None]
        widened = KeyRange("between", (min(lows), max(highs)))
    own = bounds[0]
    if widened == (None if own is None else KeyRange("between", own)):
        return QueryLoadPlan(read, None, tuple(shared), separate)
    return QueryLoadPlan(attrs.evolve(read, range=widened), read.range, tuple(shared), separate)


def _shares(rel: Any, read: CollectionRead, components: Mapping[str, object]) -> bool:
    """Whether the children of every parent the query returns lie in the query's collection."""
    if not isinstance(rel, HasMany) or rel.embedded is not None or read.sk_attr is None:
        return False
    if rel.via.index != read.index or rel.newest_first == read.forward:
        return False
    child_pk, _ = rel.target_info.key_templates(read.index)
    given = {c: components[p] for c, p in rel.link.items() if p in components}
    if not child_pk.covers(given):
        return False  # the children's partition depends on each parent's other fields
    return child_pk.format(given) == read.pk_value


def _static_prefix(rel: HasMany[Any], index: str | None, values: Mapping[str, object]) -> str:
    """The sort key prefix every child of every parent the query returns starts with."""
    _, child_sk = rel.target_info.key_templates(index)
    if child_sk is None:
        return ""
    given = {c: values[p] for c, p in rel.link.items() if p in values}
    try:
        return child_sk.prefix(given)
    except KeyTemplateError:  # a later component given without an earlier one
        return child_sk.prefix({})


#: Sort key conditions with plain bounds; any other is widened to the whole partition.
_BOUNDED: frozenset[str] = frozenset({"eq", "begins_with", "between"})


def _bounds(range_: KeyRange | None) -> tuple[str, str] | None:
    """The inclusive (low, high) of a sort key condition, when it has simple bounds."""
    if range_ is None or range_.op not in _BOUNDED:
        return None  # the parents are then tested against their condition one by one
    return range_.span()


@attrs.frozen
class QueryLoad(Generic[P]):
    """The relationships a query loads, and what it needs to read them."""

    session: Session
    info: ModelInfo[P]
    components: Mapping[str, object]
    options: tuple[LoadOption, ...]

    def plan(self, read: CollectionRead, *, filtered: bool = False) -> QueryLoadPlan:
        return plan_query_load(self.info, read, self.components, self.options, filtered=filtered)

    async def page(
        self,
        send: Sender,
        plan: QueryLoadPlan,
        *,
        limit: int | None,
        start: Item | None,
        tally: Tally | None = None,
    ) -> tuple[list[P], Item | None]:
        """Up to ``limit`` parents after ``start`` with their children, and where to resume."""
        found = await _read(
            self.session, send, self.info, plan, limit=limit, start=start, tally=tally
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
        await asyncio.gather(*follow_ups, load_all(self.session, self.info, objs, plan.separate))
        return objs, after

    def _give(
        self,
        plan: QueryLoadPlan,
        *,
        option: LoadOption,
        parents: Sequence[tuple[P, Item]],
        children: Sequence[tuple[Any, Item]],
        end: Item | None,
        start: Item | None,
    ) -> list[Awaitable[None]]:
        """Hand each parent its children from the Query; returns the reads some still need."""
        rel: HasMany[Any] = option.relationship  # type: ignore[assignment]
        by_link: dict[tuple[object, ...], list[tuple[Any, Item]]] = {}
        for child, raw in children:
            by_link.setdefault(tuple(getattr(child, f) for f in rel.link), []).append((child, raw))
        follow_ups: list[Awaitable[None]] = []
        for parent, _ in parents:
            values = self.info.values_of(parent)
            mine = by_link.get(tuple(values[p] for p in rel.link.values()), [])
            prefix = rel.child_prefix(values)
            entry = Loaded([], None, read_by=rel)
            self.session.adopt(self.info, parent, {}).loaded[rel.name] = entry
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
        rel: HasMany[Any],
        values: Mapping[str, object],
        entry: Loaded,
        limit: int | None,
        start: Item | None,
    ) -> None:
        """More of one parent's children, by the relationship's own read."""
        read = rel.children_read(self.session.table_name, values)
        accept = self.session.acceptor(rel.target_info, read.index)
        items, after = await self.session.read_page(read, accept, limit=limit, start=start)
        entry.items += items
        entry.resume = after


def _began_before(read: CollectionRead, prefix: str, start: Item) -> bool:
    """Whether a read resumed after ``start`` may have skipped keys that start with ``prefix``."""
    value = start.get(read.sk_attr) if read.sk_attr else None
    sk: str | None = None if value is None else value.get("S")
    if sk is None:
        return True
    return sk >= prefix if read.forward else sk < upper_bound(prefix)


@attrs.define
class _Found(Generic[P]):
    parents: list[tuple[P, Item]]
    children: list[list[tuple[Any, Item]]]
    #: The last response's LastEvaluatedKey.
    end: Item | None = None


async def _read(
    session: Session,
    send: Sender,
    info: ModelInfo[P],
    plan: QueryLoadPlan,
    *,
    limit: int | None,
    start: Item | None,
    tally: Tally | None,
) -> _Found[P]:
    """Whole DynamoDB pages until ``limit`` parents (one page with no limit) or the end."""
    read = plan.read
    # Parents are tested against their own range (a gt/lt bound excluded) when it was widened.
    accept_parent = session.acceptor(info, read.index)
    accept_parent = narrowed(accept_parent, read)
    accepts = [session.acceptor(o.relationship.target_info, read.index) for o in plan.shared]
    in_range = plan.parents.contains if plan.parents is not None else None
    sk_attr = read.sk_attr or ""
    found: _Found[P] = _Found([], [[] for _ in accepts])

    def sort(raw: Item) -> None:
        sk = raw.get(sk_attr, {}).get("S", "")
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
