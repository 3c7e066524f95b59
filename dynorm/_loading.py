"""``db.get(Parent, ..., load=[...])``: plan the fewest requests, run them, assemble the result.

Relationships whose children share one item collection (same strategy scope, same direction)
are read together with the parent in a single Query whose sort key range spans the parent and
every child prefix: ``BETWEEN parent_sk AND upper(child_prefix)``. The parent rides along when it
is the first item in the read direction; otherwise it is fetched with GetItem, concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import attrs

from ._chunks import key_id
from ._codec import Item
from ._errors import DefinitionError, ItemNotFoundError
from ._model import ModelInfo
from ._plans import (
    CollectionRead,
    KeyRange,
    Request,
    batch_get,
    get_item,
    upper_bound,
    whole_item_reads,
)
from ._relations import BelongsTo, HasMany, LoadOption, Relationship
from ._state import Loaded, Session, state_of

__all__ = [
    "GetPlan",
    "execute_get",
    "load_all",
    "normalize_options",
    "plan_get",
    "range_passed",
    "share_of_page",
]

P = TypeVar("P")


def normalize_options(
    info: ModelInfo[Any], load: Sequence[Relationship[Any] | LoadOption]
) -> list[LoadOption]:
    options = []
    for entry in load:
        option = entry if isinstance(entry, LoadOption) else LoadOption(entry)
        rel = option.relationship
        if getattr(rel, "owner", None) is not info.cls:
            raise DefinitionError(
                f"load= takes relationships of {info.name} such as "
                f"{info.name}.{next(iter(info.relationships), 'children')}; got {entry!r}"
            )
        options.append(option)
    return options


Position = Literal["first", "last"]


@attrs.frozen
class CollectionLoad:
    """One Query that reads several relationships' children (and maybe the parent)."""

    read: CollectionRead
    options: tuple[LoadOption, ...]
    #: where the parent sits in read order when this Query carries it, else None.
    parent_at: Position | None
    #: the index holds some of the items in part: each page is followed by a BatchGetItem.
    fetches: bool = False


@attrs.frozen
class GetPlan:
    """Everything ``db.get`` will send: at most one GetItem plus one Query per collection."""

    parent_key: Item
    get_parent: Request | None
    collections: tuple[CollectionLoad, ...]
    #: relationships whose collection depends on parent fields the caller did not give.
    after_parent: tuple[LoadOption, ...]
    consistent: bool = False
    #: BelongsTo parents whose keys follow from the arguments, read by one BatchGetItem in the
    #: first round: with the item itself when ``fetch_self`` (get_parent is then that
    #: BatchGetItem and ``fetch_keys`` starts with the item's key), else beside the Queries.
    fetched_with: tuple[LoadOption, ...] = ()
    fetch_keys: tuple[Item, ...] = ()
    fetch_self: bool = False
    #: Embedded relationships: their children arrive inside the parent item.
    embedded: tuple[LoadOption, ...] = ()

    @property
    def requests(self) -> list[Request]:
        """The requests sent in the first round (all concurrently)."""
        first = [self.get_parent] if self.get_parent else []
        if self.fetch_keys and not self.fetch_self:
            table_name = self.collections[0].read.table_name
            first.append(_batch_get(self.fetch_keys, table_name, consistent=self.consistent))
        for c in self.collections:
            first.append(c.read.request())
            if c.fetches:
                first.append(whole_item_reads(c.read.table_name))
        return first


def _get_item(info: ModelInfo[Any], key: Item, table_name: str, *, consistent: bool) -> Request:
    # The item parsed into the table's wire structures (the fast path's; see dynorm._structs).
    return get_item(table_name, key, consistent=consistent, decode=info.table.decoder("GetItem"))


def plan_get(
    info: ModelInfo[P],
    key_values: Mapping[str, object],
    options: Sequence[LoadOption],
    table_name: str,
    *,
    consistent: bool = False,
) -> GetPlan:
    info.check_key_values(key_values)
    parent_key = info.primary_key(key_values)
    groups: dict[tuple[str | None, bool], list[LoadOption]] = {}
    after_parent: list[LoadOption] = []
    belongs: list[LoadOption] = []
    embedded: list[LoadOption] = []
    for option in options:
        rel = option.relationship
        if isinstance(rel, BelongsTo):
            belongs.append(option)
            continue
        if not isinstance(rel, HasMany):
            raise DefinitionError(f"{rel!r} cannot be loaded")
        if rel.embedded is not None:
            embedded.append(option)  # embedded children arrive inside the parent item
            continue
        if not all(parent_field in key_values for parent_field in rel.link.values()):
            after_parent.append(option)
            continue
        groups.setdefault((rel.via.index, not rel.newest_first), []).append(option)

    collections = []
    carried = False
    for (index, forward), group in groups.items():
        rels = [cast("HasMany[Any]", o.relationship) for o in group]
        read, position = _group_read(
            info, key_values, rels, index=index, forward=forward, table_name=table_name
        )
        # A parent at the far end arrives in the same page only when the page is not cut short
        # by a limit; without a limit it usually does, and a GetItem follows only if it did not.
        if position == "last" and any(o.limit is not None for o in group):
            position = None
        take = position if not carried else None
        carried = carried or take is not None
        if consistent and index is None:
            read = attrs.evolve(read, consistent=True)
        partial = info.table.partial_models(index) if index is not None else frozenset()
        names = {info.name, *(r.target_info.name for r in rels)}
        collections.append(CollectionLoad(read, tuple(group), take, bool(partial & names)))
    get_parent = None if carried else _get_item(info, parent_key, table_name, consistent=consistent)
    early = [o for o in belongs if _belongs(o).parent_key_from(key_values) is not None]
    fetch_keys = tuple(_belongs(o).parent_key_from(key_values) or {} for o in early)
    fetch_self = get_parent is not None and bool(early)
    if fetch_self:
        # The item and its parents are all addressed by key: one BatchGetItem reads them all.
        fetch_keys = (parent_key, *fetch_keys)
        get_parent = _batch_get(fetch_keys, table_name, consistent=consistent)
    late = [o for o in belongs if o not in early]
    return GetPlan(
        parent_key,
        get_parent,
        tuple(collections),
        (*after_parent, *late),
        consistent=consistent,
        fetched_with=tuple(early),
        fetch_keys=fetch_keys,
        fetch_self=fetch_self,
        embedded=tuple(embedded),
    )


def _batch_get(keys: Sequence[Item], table_name: str, *, consistent: bool) -> Request:
    batch: dict[str, Any] = {"Keys": list({key_id(k): k for k in keys}.values())}
    if consistent:
        batch["ConsistentRead"] = True
    return batch_get(table_name, batch)


async def _nothing() -> dict[Any, Item]:
    return {}


def _belongs(option: LoadOption) -> BelongsTo[Any]:
    return cast("BelongsTo[Any]", option.relationship)


def _group_read(
    info: ModelInfo[Any],
    key_values: Mapping[str, object],
    rels: Sequence[HasMany[Any]],
    *,
    index: str | None,
    forward: bool,
    table_name: str,
) -> tuple[CollectionRead, Position | None]:
    """The Query for a group, and where the parent sits in it (None: not in the range)."""
    children = rels[0].children_read(table_name, key_values)
    prefixes = [r.child_prefix(key_values) for r in rels]
    parent_sk = _parent_sort_key(info, key_values, index, children.pk_value)
    if parent_sk is None or not all(prefixes):
        # Several kinds of children but no common bound: read the whole collection.
        read = children if len(rels) == 1 else attrs.evolve(children, range=None)
        # A read of the whole collection passes the parent wherever it sorts; like a parent at
        # the far end, it may lie beyond a page that is cut short, and a GetItem then follows.
        whole = parent_sk is not None and read.range is None
        return read, ("last" if whole else None)
    low = min([parent_sk, *prefixes])
    high = max([parent_sk, *(upper_bound(p) for p in prefixes)])
    position: Position | None = None
    if parent_sk == (low if forward else high):
        position = "first"
    elif parent_sk == (high if forward else low):
        position = "last"
    elif len(rels) == 1:
        return children, None
    return attrs.evolve(children, range=KeyRange("between", (low, high))), position


def _parent_sort_key(
    info: ModelInfo[Any], key_values: Mapping[str, object], index: str | None, collection: str
) -> str | None:
    """The parent's sort key in the collection being read, when it lives there."""
    if index is not None and not info.in_index(index):
        return None
    pk_t, sk_t = info.key_templates(index)
    if sk_t is None or not (sk_t.covers(key_values) and pk_t.covers(key_values)):
        return None
    return sk_t.format(key_values) if pk_t.format(key_values) == collection else None


async def _run_collection(
    session: Session,
    info: ModelInfo[Any],
    load: CollectionLoad,
    parent_key: Item,
    key_values: Mapping[str, object],
) -> tuple[Item | None, dict[str, Loaded]]:
    """Run one collection Query: (the parent item if this Query carries it, loaded children).

    A Query that carries the parent but was cut short before reaching it reads it with GetItem.
    """
    read = load.read
    rels: list[HasMany[Any]] = [o.relationship for o in load.options]  # type: ignore[misc]
    parent: list[Item] = []

    def see(page: list[Item]) -> None:
        # The read's range starts or ends at the parent's key: it can only be an end item.
        for raw in (page[0], page[-1]) if page and not parent else ():
            if all(raw.get(k) == v for k, v in parent_key.items()):
                parent.append(raw)
                return

    on_page = see if load.parent_at is not None else None
    # A parent that comes first would otherwise take the look-ahead slot of a limited read.
    ahead = 1 if load.parent_at == "first" else 0
    if len(rels) == 1:
        # One relationship: its acceptor is the whole per-item work (the hot loop).
        (rel,) = rels
        accept = session.acceptor(rel.target_info, read.index)
        limit = load.options[0].limit
        items, after = await session.read_page(
            read, accept, limit=limit, start=None, on_page=on_page, ahead=ahead
        )
        loaded = {rel.name: Loaded(items, after, read_by=rel)}
        follow_ups: list[Awaitable[None]] = []
    else:
        loaded, follow_ups, after = await _run_shared(
            session, read, load.options, key_values, on_page
        )
    if load.parent_at is not None and not parent and after is not None:
        follow_ups.append(_fetch_parent(session, info, read, parent_key, parent))
    if follow_ups:
        await asyncio.gather(*follow_ups)
    return (parent[0] if parent else None), loaded


async def _fetch_parent(
    session: Session,
    info: ModelInfo[Any],
    read: CollectionRead,
    parent_key: Item,
    into: list[Item],
) -> None:
    """The parent sorts beyond a page that was cut short: read it directly."""
    request = _get_item(info, parent_key, session.table_name, consistent=read.consistent)
    item = (await session.send(request)).get("Item")
    if item is not None:
        into.append(item)


async def _run_shared(
    session: Session,
    read: CollectionRead,
    options: Sequence[LoadOption],
    key_values: Mapping[str, object],
    on_page: Any,
) -> tuple[dict[str, Loaded], list[Awaitable[None]], Item | None]:
    """Several relationships in one Query: one DynamoDB page for all of them.

    Each relationship the page left short reads on by itself: the returned follow-ups, to run
    concurrently.
    """
    rels: list[HasMany[Any]] = [o.relationship for o in options]  # type: ignore[misc]
    accepts = [session.acceptor(r.target_info, read.index) for r in rels]

    def accept(raw: Item) -> tuple[int, Any, Item] | None:
        for i, child_accept in enumerate(accepts):
            obj = child_accept(raw)
            if obj is not None:
                return i, obj, raw
        return None

    found, after = await session.read_page(read, accept, limit=None, start=None, on_page=on_page)
    kept: list[list[tuple[Any, Item]]] = [[] for _ in rels]
    order: list[int] = []  # relationships in the order their first child came
    for i, obj, raw in found:
        if not kept[i]:
            order.append(i)
        kept[i].append((obj, raw))
    loaded: dict[str, Loaded] = {}
    follow_ups: list[Awaitable[None]] = []
    for i, (rel, option) in enumerate(zip(rels, options, strict=True)):
        share = share_of_page(
            read,
            rel.child_prefix(key_values),
            option.limit,
            [raw for _, raw in kept[i]],
            after,
            crowded=bool(kept[i]) and order[0] != i,
        )
        entry = Loaded([obj for obj, _ in kept[i][: share.keep]], share.resume, read_by=rel)
        loaded[rel.name] = entry
        if share.more:
            own = rel.children_read(session.table_name, key_values, consistent=read.consistent)
            follow_ups.append(_read_on(session, own, accepts[i], entry, share))
    return loaded, follow_ups, after


async def _read_on(
    session: Session, read: CollectionRead, accept: Any, entry: Loaded, share: PageShare
) -> None:
    """A relationship's own read, after its children seen in the shared page."""
    items, after = await session.read_page(read, accept, limit=share.want, start=share.start)
    entry.items += items
    entry.resume = after


@attrs.frozen
class PageShare:
    """What a shared page gives one relationship.

    Its first ``keep`` children, and either where to resume (``resume``) or, with ``more``, a
    read of its own for ``want`` more children after ``start``.
    """

    keep: int
    resume: Item | None
    more: bool = False
    start: Item | None = None
    want: int | None = None


def share_of_page(
    read: CollectionRead,
    prefix: str,
    limit: int | None,
    children: Sequence[Item],
    after: Item | None,
    *,
    crowded: bool,
    lazy: bool = False,
) -> PageShare:
    """How one relationship fares in a page of a Query shared with others (pure).

    ``children`` are its raw items in the page, ``after`` the page's LastEvaluatedKey and
    ``prefix`` its sort key prefix. It needs a read of its own when the page was cut short before
    its range ended and it has fewer than ``limit`` children; without a limit, also when another
    relationship's children came first (``crowded``), since the page was not all its own, unless
    ``lazy``: the rest is then read when the children are iterated (``resume``; ``{}`` is "from
    the first child").
    """
    n = len(children)
    if limit is not None and n > limit:
        return PageShare(limit, read.key_of(children[limit - 1]))
    if after is None or range_passed(read, prefix, after):
        return PageShare(n, None)
    last = read.key_of(children[-1]) if children else None
    if limit is not None and n == limit:
        return PageShare(n, last)
    if limit is None and (lazy or (n and not crowded)):
        return PageShare(n, {} if last is None else last)
    return PageShare(n, None, more=True, start=last, want=None if limit is None else limit - n)


def range_passed(read: CollectionRead, prefix: str, after: Item) -> bool:
    """Whether a page that ended at ``after`` read every sort key that starts with ``prefix``."""
    value = after.get(read.sk_attr) if read.sk_attr and prefix else None
    sk: str | None = None if value is None else value.get("S")
    if sk is None or sk.startswith(prefix):
        return False
    return sk > prefix if read.forward else sk < prefix


async def load_all(
    session: Session, info: ModelInfo[Any], objs: Sequence[object], options: Sequence[LoadOption]
) -> None:
    """Load relationships for many objects at once.

    Whatever is read by key (BelongsTo parents, embedded children) shares one BatchGetItem per
    100 distinct keys; HasMany children are read with one Query per object, concurrently.
    """
    by_key = [o for o in options if _by_key(o)]
    others = [o for o in options if not _by_key(o)]
    await asyncio.gather(
        _load_by_key(session, info, objs, by_key),
        *(_load_children(session, info, objs, o) for o in others),
    )


def _by_key(option: LoadOption) -> bool:
    rel = option.relationship
    return isinstance(rel, BelongsTo) or (isinstance(rel, HasMany) and rel.embedded is not None)


async def _load_by_key(
    session: Session, info: ModelInfo[Any], objs: Sequence[object], options: Sequence[LoadOption]
) -> None:
    if not objs or not options:
        return
    belongs = [o for o in options if isinstance(o.relationship, BelongsTo)]
    embedded = [o for o in options if o not in belongs]
    # Objects lacking an embedded relationship are read again: their items hold the children.
    stale = [o for o in objs if any(not _held(o, e) for e in embedded)]
    parent_keys = [[_belongs(b).parent_key(o) for o in objs] for b in belongs]
    keys = [info.key_of(o) for o in stale]
    keys += [k for ks in parent_keys for k in ks if k is not None]
    found = await session.fetch(keys)
    for obj in stale:
        session.adopt(info, obj, found.get(key_id(info.key_of(obj)), {}))
    for option in embedded:
        for obj in objs:
            _show_embedded(session.adopt(info, obj, {}).loaded, option)
    for option, obj_keys in zip(belongs, parent_keys, strict=True):
        rel = _belongs(option)
        accept = session.acceptor(rel.target_info, None)
        parents: dict[Any, Any] = {}
        for obj, key in zip(objs, obj_keys, strict=True):
            kid = None if key is None else key_id(key)
            if kid is not None and kid not in parents:
                raw = found.get(kid)
                parents[kid] = None if raw is None else accept(raw)
            parent = None if kid is None else parents[kid]
            loaded = Loaded([parent] if parent is not None else [], None)
            session.adopt(info, obj, {}).loaded[rel.name] = loaded


def _held(obj: object, option: LoadOption) -> bool:
    state = state_of(obj)
    return state is not None and option.relationship.name in state.loaded


async def _load_children(
    session: Session, info: ModelInfo[Any], objs: Sequence[object], option: LoadOption
) -> None:
    """One HasMany for many objects: one Query each, run concurrently, never one by one."""
    if not isinstance(option.relationship, HasMany):
        raise DefinitionError(f"{option.relationship!r} cannot be loaded")
    results = await asyncio.gather(
        *(_run_children(session, option, info.values_of(o)) for o in objs)
    )
    for obj, loaded in zip(objs, results, strict=True):
        session.adopt(info, obj, {}).loaded[option.relationship.name] = loaded


def _show_embedded(loaded: dict[str, Loaded], option: LoadOption) -> None:
    """Embedded children all came with the parent (none if it stores none); a limit shows some."""
    entry = loaded.setdefault(option.relationship.name, Loaded([], None))
    entry.shown = option.limit


async def _run_children(
    session: Session, option: LoadOption, parent_values: Mapping[str, object]
) -> Loaded:
    rel: HasMany[Any] = option.relationship  # type: ignore[assignment]
    read = rel.children_read(session.table_name, parent_values)
    accept = session.acceptor(rel.target_info, read.index)
    items, after = await session.read_page(read, accept, limit=option.limit, start=None)
    return Loaded(items, after, read_by=rel)


def _not_found(info: ModelInfo[Any], key_values: Mapping[str, object]) -> ItemNotFoundError:
    described = ", ".join(f"{k}={v!r}" for k, v in key_values.items())
    return ItemNotFoundError(f"no {info.name} with {described}", operation="GetItem")


async def execute_get(
    session: Session, info: ModelInfo[P], plan: GetPlan, key_values: Mapping[str, object]
) -> P:
    """Run a GetPlan: the first round concurrently, then loads that needed the parent's fields."""
    runs = [
        _run_collection(session, info, c, plan.parent_key, key_values) for c in plan.collections
    ]
    raw_parent: Item | None
    found: dict[Any, Item]
    collected: list[tuple[Item | None, dict[str, Loaded]]]

    def fetching() -> Awaitable[dict[Any, Item]]:
        if plan.fetch_keys:
            return session.fetch(plan.fetch_keys, consistent=plan.consistent)
        return _nothing()

    def collections() -> Awaitable[list[tuple[Item | None, dict[str, Loaded]]]]:
        # Gathered as one awaitable, whose result is a list of one type.
        return asyncio.gather(*runs)

    if plan.get_parent is not None and not runs and not plan.fetch_keys:
        # A plain GetItem, the most common call: nothing to run beside it, no task to gather.
        raw_parent = (await session.send(plan.get_parent)).get("Item")
        found, collected = {}, []
    elif plan.fetch_self:
        found, collected = await asyncio.gather(fetching(), collections())
        raw_parent = found.get(key_id(plan.parent_key))
    elif plan.get_parent is not None:
        response, found, collected = await asyncio.gather(
            session.send(plan.get_parent), fetching(), collections()
        )
        raw_parent = response.get("Item")
    else:
        # One Query carries the parent (and reads it by key if its page was cut short first).
        found, collected = await asyncio.gather(fetching(), collections())
        raw_parent = next((p for p, _ in collected if p is not None), None)
    if raw_parent is None or not info.sort_key_matcher(None)(raw_parent):
        raise _not_found(info, key_values)
    parent = info.decode(raw_parent)
    state = session.adopt(info, parent, raw_parent)
    for _, loaded in collected:
        state.loaded.update(loaded)
    for option in plan.embedded:
        _show_embedded(state.loaded, option)
    parent_keys = plan.fetch_keys[1:] if plan.fetch_self else plan.fetch_keys
    for option, key in zip(plan.fetched_with, parent_keys, strict=True):
        rel = _belongs(option)
        raw = found.get(key_id(key))
        owner = session.acceptor(rel.target_info, None)(raw) if raw is not None else None
        state.loaded[rel.name] = Loaded([owner] if owner is not None else [], None)
    await load_all(session, info, [parent], plan.after_parent)
    return parent
