"""``db.get(Parent, ..., load=[...])``: plan the fewest requests, run them, assemble the result.

Relationships whose children share one item collection (same strategy scope, same direction)
are read together with the parent in a single Query whose sort key range spans the parent and
every child prefix: ``BETWEEN parent_sk AND upper(child_prefix)``. The parent rides along when it
is the first item in the read direction; otherwise it is fetched with GetItem, concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import DefinitionError, ItemNotFoundError
from dynorm.core.requests import (
    CollectionRead,
)
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.readplan import (
    CollectionLoad,
    GetReads,
    PageShare,
    ShardedLoad,
    UnionLoad,
    belongs_to,
    parent_get,
    share_of_page,
)
from dynorm.mapping.relations import BelongsToRelation, HasManyRelation, LoadOption
from dynorm.mapping.state import InstanceState, Loaded, state_of

from .reader import Reader

if TYPE_CHECKING:
    from dynorm.mapping.sharded import ShardedRead

__all__ = [
    "execute_get",
    "found_item",
    "load_all",
]

P = TypeVar("P")


async def _nothing() -> dict[tuple[str, Any], Item]:
    return {}


async def _run_collection(
    reader: Reader,
    info: ModelInfo[Any],
    load: CollectionLoad,
    parent_key: Item,
    key_values: Mapping[str, object],
) -> tuple[Item | None, dict[str, Loaded]]:
    """Run one collection Query: (the parent item if this Query carries it, loaded children).

    A Query that carries the parent but was cut short before reaching it reads it with GetItem.
    """
    read = load.read
    rels: list[HasManyRelation[Any]] = [o.relationship for o in load.options]  # type: ignore[misc]
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
        accept = reader.acceptor(rel.target_info, read.index)
        limit = load.options[0].limit
        items, after = await reader.read_page(
            read, accept, limit=limit, start=None, on_page=on_page, ahead=ahead
        )
        loaded = {rel.name: Loaded(items, after, read_by=rel)}
        follow_ups: list[Awaitable[None]] = []
    else:
        loaded, follow_ups, after = await _run_shared(
            reader, read, load.options, key_values, on_page
        )
    if load.parent_at is not None and not parent and after is not None:
        follow_ups.append(_fetch_parent(reader, info, read, parent_key, parent))
    if follow_ups:
        await asyncio.gather(*follow_ups)
    return (parent[0] if parent else None), loaded


async def _fetch_parent(
    reader: Reader,
    info: ModelInfo[Any],
    read: CollectionRead,
    parent_key: Item,
    into: list[Item],
) -> None:
    """The parent sorts beyond a page that was cut short: read it directly."""
    name = reader.name_of(info.table)
    request = parent_get(info, parent_key, name, consistent=read.consistent)
    item = (await reader.send(request)).get("Item")
    if item is not None:
        into.append(item)


async def _run_shared(
    reader: Reader,
    read: CollectionRead,
    options: Sequence[LoadOption],
    key_values: Mapping[str, object],
    on_page: Any,
) -> tuple[dict[str, Loaded], list[Awaitable[None]], Item | None]:
    """Several relationships in one Query: one DynamoDB page for all of them.

    Each relationship the page left short reads on by itself: the returned follow-ups, to run
    concurrently.
    """
    rels: list[HasManyRelation[Any]] = [o.relationship for o in options]  # type: ignore[misc]
    accepts = [reader.acceptor(r.target_info, read.index) for r in rels]

    def accept(raw: Item) -> tuple[int, Any, Item] | None:
        for i, child_accept in enumerate(accepts):
            obj = child_accept(raw)
            if obj is not None:
                return i, obj, raw
        return None

    found, after = await reader.read_page(read, accept, limit=None, start=None, on_page=on_page)
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
            name = reader.name_of(rel.children_table)
            own = rel.children_read(name, key_values, consistent=read.consistent)
            follow_ups.append(_read_on(reader, own, accepts[i], entry, share))
    return loaded, follow_ups, after


async def _read_on(
    reader: Reader, read: CollectionRead, accept: Any, entry: Loaded, share: PageShare
) -> None:
    """A relationship's own read, after its children seen in the shared page."""
    items, after = await reader.read_page(read, accept, limit=share.want, start=share.start)
    entry.items += items
    entry.resume = after


async def load_all(
    reader: Reader, info: ModelInfo[Any], objs: Sequence[object], options: Sequence[LoadOption]
) -> None:
    """Load relationships for many objects at once.

    Whatever is read by key (BelongsTo parents, embedded children) shares one BatchGetItem per
    100 distinct keys; HasMany children are read with one Query per object, concurrently.
    """
    by_key = [o for o in options if _by_key(o)]
    others = [o for o in options if not _by_key(o)]
    await asyncio.gather(
        _load_by_key(reader, info, objs, by_key),
        *(_load_children(reader, info, objs, o) for o in others),
    )


def _by_key(option: LoadOption) -> bool:
    rel = option.relationship
    return isinstance(rel, BelongsToRelation) or (
        isinstance(rel, HasManyRelation) and rel.embedded is not None and rel.was is None
    )


async def _load_by_key(
    reader: Reader, info: ModelInfo[Any], objs: Sequence[object], options: Sequence[LoadOption]
) -> None:
    if not objs or not options:
        return
    belongs = [o for o in options if isinstance(o.relationship, BelongsToRelation)]
    embedded = [o for o in options if o not in belongs]
    # Objects lacking an embedded relationship are read again: their items hold the children.
    stale = [o for o in objs if any(not _held(o, e) for e in embedded)]
    parent_keys = [[belongs_to(b).parent_key(o) for o in objs] for b in belongs]
    own = reader.name_of(info.table)
    # Parents of other tables share the requests, each key under its table's name.
    names = [reader.name_of(belongs_to(b).target_info.table) for b in belongs]
    keys = [(own, info.key_of(o)) for o in stale]
    keys += [(n, k) for n, ks in zip(names, parent_keys, strict=True) for k in ks if k is not None]
    found = await reader.fetch_named(keys) if keys else {}
    for obj in stale:
        reader.adopt(info, obj, found.get((own, key_id(info.key_of(obj))), {}))
    for option in embedded:
        for obj in objs:
            _show_embedded(reader.adopt(info, obj, {}).loaded, option)
    for option, name, obj_keys in zip(belongs, names, parent_keys, strict=True):
        rel = belongs_to(option)
        accept = reader.acceptor(rel.target_info, None)
        parents: dict[Any, Any] = {}
        for obj, key in zip(objs, obj_keys, strict=True):
            kid = None if key is None else (name, key_id(key))
            if kid is not None and kid not in parents:
                raw = found.get(kid)
                parents[kid] = None if raw is None else accept(raw)
            parent = None if kid is None else parents[kid]
            loaded = Loaded([parent] if parent is not None else [], None)
            reader.adopt(info, obj, {}).loaded[rel.name] = loaded


def _held(obj: object, option: LoadOption) -> bool:
    state = state_of(obj)
    return state is not None and option.relationship.name in state.loaded


async def _load_children(
    reader: Reader, info: ModelInfo[Any], objs: Sequence[object], option: LoadOption
) -> None:
    """One HasMany for many objects: one Query each, run concurrently, never one by one."""
    if not isinstance(option.relationship, HasManyRelation):
        raise DefinitionError(f"{option.relationship!r} cannot be loaded")
    results = await asyncio.gather(
        *(_run_children(reader, option, info.values_of(o)) for o in objs)
    )
    for obj, loaded in zip(objs, results, strict=True):
        reader.adopt(info, obj, {}).loaded[option.relationship.name] = loaded


def _show_embedded(loaded: dict[str, Loaded], option: LoadOption) -> None:
    """Embedded children all came with the parent (none if it stores none); a limit shows some."""
    entry = loaded.setdefault(option.relationship.name, Loaded([], None))
    entry.shown = option.limit
    entry.asked = True  # shown by jsonable, as a loaded relationship of any strategy is


async def _run_sharded_load(
    reader: Reader, load: ShardedLoad
) -> tuple[Item | None, dict[str, Loaded]]:
    """A sharded relationship loaded with its parent (who is read elsewhere)."""
    rel: HasManyRelation[Any] = load.option.relationship  # type: ignore[assignment]
    return None, {rel.name: await _read_shards(reader, rel, load.read, load.option.limit)}


async def _read_shards(
    reader: Reader, rel: HasManyRelation[Any], sharded: ShardedRead, limit: int | None
) -> Loaded:
    # Imported by a sharded relationship's first read only (beside one Query per shard).
    from .sharded import read_sharded_page  # noqa: PLC0415 - sharded reads only

    accept = reader.acceptor(rel.target_info, sharded.reads[0].index)
    items, end, more = await read_sharded_page(reader, sharded, accept, limit=limit, after=None)
    return Loaded(items, {} if more else None, read_by=rel, position=end)


async def _run_union_load(reader: Reader, load: UnionLoad) -> tuple[Item | None, dict[str, Loaded]]:
    """A relationship with ``was=`` loaded with its parent (who is read elsewhere)."""
    from .union import load_union  # noqa: PLC0415 - was= loads only

    loaded = await load_union(reader, load.read, load.option.limit)
    return None, {load.option.relationship.name: loaded}


async def _run_children(
    reader: Reader, option: LoadOption, parent_values: Mapping[str, object]
) -> Loaded:
    rel: HasManyRelation[Any] = option.relationship  # type: ignore[assignment]
    if rel.was is not None:
        from .union import load_union, union_of  # noqa: PLC0415 - was= loads only

        return await load_union(reader, union_of(reader, rel, dict(parent_values)), option.limit)
    if rel.sharded:
        reads = rel.children_reads(reader.name_of(rel.children_table), parent_values)
        from dynorm.mapping.sharded import ShardedRead  # noqa: PLC0415 - sharded reads only

        return await _read_shards(reader, rel, ShardedRead(reads), option.limit)
    read = rel.children_read(reader.name_of(rel.children_table), parent_values)
    accept = reader.acceptor(rel.target_info, read.index)
    items, after = await reader.read_page(read, accept, limit=option.limit, start=None)
    return Loaded(items, after, read_by=rel)


def _not_found(info: ModelInfo[Any], key_values: Mapping[str, object]) -> ItemNotFoundError:
    described = ", ".join(f"{k}={v!r}" for k, v in key_values.items())
    return ItemNotFoundError(f"no {info.name} with {described}", operation="GetItem")


def found_item(
    reader: Reader, info: ModelInfo[P], raw: Item | None, key_values: Mapping[str, object]
) -> tuple[P, InstanceState]:
    """The object ``db.get`` returns for the item read by key (None: ItemNotFoundError).

    Shared by a get sent alone and one coalesced into a BatchGetItem (``io/coalesce.py``), so
    both decode, check and bind their object the same way. Each call decodes its own object.
    """
    if raw is None or not info.sort_key_matcher(None)(raw):
        raise _not_found(info, key_values)
    obj = info.decode(raw)
    return obj, reader.adopt(info, obj, raw)


async def execute_get(
    reader: Reader, info: ModelInfo[P], plan: GetReads, key_values: Mapping[str, object]
) -> P:
    """Run a GetPlan: the first round concurrently, then loads that needed the parent's fields."""
    runs = [_run_collection(reader, info, c, plan.parent_key, key_values) for c in plan.collections]
    runs += [_run_sharded_load(reader, load) for load in plan.sharded]
    runs += [_run_union_load(reader, load) for load in plan.unions]
    raw_parent: Item | None
    found: dict[tuple[str, Any], Item]
    collected: list[tuple[Item | None, dict[str, Loaded]]]

    def fetching() -> Awaitable[dict[tuple[str, Any], Item]]:
        if plan.fetch_keys:
            return reader.fetch_named(plan.fetch_keys, consistent=plan.consistent)
        return _nothing()

    def collections() -> Awaitable[list[tuple[Item | None, dict[str, Loaded]]]]:
        # Gathered as one awaitable, whose result is a list of one type.
        return asyncio.gather(*runs)

    if plan.get_parent is not None and not runs and not plan.fetch_keys:
        # A plain GetItem, the most common call: nothing to run beside it, no task to gather.
        raw_parent = (await reader.send(plan.get_parent)).get("Item")
        found, collected = {}, []
    elif plan.fetch_self:
        found, collected = await asyncio.gather(fetching(), collections())
        own, key = plan.fetch_keys[0]
        raw_parent = found.get((own, key_id(key)))
    elif plan.get_parent is not None:
        response, found, collected = await asyncio.gather(
            reader.send(plan.get_parent), fetching(), collections()
        )
        raw_parent = response.get("Item")
    else:
        # One Query carries the parent (and reads it by key if its page was cut short first).
        found, collected = await asyncio.gather(fetching(), collections())
        raw_parent = next((p for p, _ in collected if p is not None), None)
    parent, state = found_item(reader, info, raw_parent, key_values)
    for _, loaded in collected:
        state.loaded.update(loaded)
    for option in plan.embedded:
        _show_embedded(state.loaded, option)
    parent_keys = plan.fetch_keys[1:] if plan.fetch_self else plan.fetch_keys
    for option, (name, key) in zip(plan.fetched_with, parent_keys, strict=True):
        rel = belongs_to(option)
        raw = found.get((name, key_id(key)))
        owner = reader.acceptor(rel.target_info, None)(raw) if raw is not None else None
        state.loaded[rel.name] = Loaded([owner] if owner is not None else [], None)
    await load_all(reader, info, [parent], plan.after_parent)
    return parent
