"""Planning reads of parents with their children: what ``db.get``/``db.query`` with ``load=`` send.

Pure: the plans here name every request a load sends and how a shared page is split between
relationships; ``dynorm/io/loading.py`` and ``dynorm/io/queryload.py`` send them and assemble the
objects. ``explain`` and ``dynorm design`` show the same plans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import msgspec

from dynorm.core.chunks import TRANSACT_MAX, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    DefinitionError,
    ExpressionError,
    KeyTemplateError,
    LimitExceededError,
)
from dynorm.core.ranges import SortCondition, SortRange, sort_range
from dynorm.core.requests import (
    CollectionRead,
    KeyRange,
    Request,
    batch_get,
    batch_get_tables,
    get_item,
    transact_get_items,
    upper_bound,
    whole_item_reads,
)
from dynorm.core.steps import FromRead

from .model import ModelInfo, ModelTable, not_key_fields
from .reading import Finished, finish_query, models_in_range
from .relations import (
    BelongsToRelation,
    HasManyRelation,
    LoadOption,
    Relationship,
    collection_read,
    relationships_of,
)
from .unknown import placed_request, sample_values

if TYPE_CHECKING:
    # Imported by the first sharded relationship's load (``_sharded_read``) only.
    from .sharded import ShardedRead
    from .union import UnionRead

__all__ = [
    "CollectionLoad",
    "GetReads",
    "KeyOf",
    "PageShare",
    "QueryLoadReads",
    "ShardedLoad",
    "TransactGetReads",
    "UnionLoad",
    "belongs_to",
    "crowding",
    "fetch_request",
    "normalize_options",
    "parent_get",
    "plan_get",
    "plan_query_load",
    "query_read",
    "range_passed",
    "share_of_page",
    "transact_get_reads",
]

P = TypeVar("P")


def _sharded_read(reads: tuple[CollectionRead, ...]) -> ShardedRead:
    """The merged read of a sharded relationship's Queries (one per shard).

    ``mapping/sharded.py`` is imported here, by a sharded load only (a process whose loads are
    not sharded never loads it); the import costs nothing beside the Queries the plan sends.
    """
    from .sharded import ShardedRead  # noqa: PLC0415 - sharded loads only

    return ShardedRead(reads)


def normalize_options(
    info: ModelInfo[Any], load: Sequence[Relationship[Any] | LoadOption]
) -> list[LoadOption]:
    if isinstance(load, Relationship | LoadOption | str):  # one given without its list
        named = _named_load(load)
        raise _wrong_load(info, f"load={named}", f"load= takes a list, load=[{named}]")
    options = []
    for entry in load:
        shown = f"load=[{_named_load(entry)}]"
        if isinstance(entry, str) and entry in relationships_of(info):
            raise _wrong_load(info, shown, f"pass the relationship, load=[{info.name}.{entry}]")
        if not isinstance(entry, Relationship | LoadOption):
            raise _wrong_load(info, shown, f"{entry!r} is not a relationship")
        option = entry if isinstance(entry, LoadOption) else LoadOption(entry)
        rel = option.relationship
        if rel.owner is not info.cls:
            why = f"{rel.qualname} is a relationship of {rel.owner_name}, not of {info.name}"
            raise _wrong_load(info, shown, why)
        options.append(option)
    return options


def _named_load(entry: object) -> str:
    if isinstance(entry, LoadOption):
        entry = entry.relationship
    return entry.qualname if isinstance(entry, Relationship) else repr(entry)


def _wrong_load(info: ModelInfo[Any], shown: str, why: str) -> DefinitionError:
    """The error for a ``load=`` that names no relationship of ``info``'s model: says why."""
    declared = [f"{info.name}.{name}" for name in relationships_of(info)]
    takes = (
        f"takes a list of relationships of {info.name} ({', '.join(declared)}) or their "
        f"options, such as load=[{declared[0]}]"
        if declared
        else f"takes relationships of {info.name}, which declares none"
    )
    return DefinitionError(f"{shown}: {why}; load= {takes}")


Position = Literal["first", "last"]


class CollectionLoad(msgspec.Struct, frozen=True):
    """One Query that reads several relationships' children (and maybe the parent)."""

    read: CollectionRead
    options: tuple[LoadOption, ...]
    #: where the parent sits in read order when this Query carries it, else None.
    parent_at: Position | None
    #: the index holds some of the items in part: each page is followed by a BatchGetItem.
    reads_whole: bool = False
    #: other entities whose items may sort inside the read's range (see :func:`crowding`).
    crowded_by: tuple[str, ...] = ()

    def note(self) -> str | None:
        """What the Query count depends on, when it can be more than one (see :func:`crowding`).

        A limited load of one relationship asks for its children with a Limit, which items of
        other entities in its range use up: the loader reads on until it has them all.
        """
        if not self.crowded_by or len(self.options) > 1:
            return None  # several relationships share one unlimited page (1 MB)
        return f"more with a limit, as {', '.join(self.crowded_by)} items share its range"

    def cost(self) -> str:
        """``1 Query on GSI1`` and, when it can take more, the note saying when."""
        where = f"on {self.read.index}" if self.read.index else "on the table"
        note = self.note()
        return f"1 Query {where}" + (f" ({note})" if note else "")


class ShardedLoad(msgspec.Struct, frozen=True):
    """A sharded relationship loaded with its parent: one Query per shard, sent together."""

    option: LoadOption
    read: ShardedRead


class UnionLoad(msgspec.Struct, frozen=True):
    """A relationship with ``was=`` loaded with its parent: the old layout, then the new.

    Its old layout's reads go in the first round, beside the rest; the new layout's once they
    are answered (see ``dynorm.mapping.union``).
    """

    option: LoadOption
    read: UnionRead

    def cost(self) -> str:
        """What the load sends, in order, as ``costs()`` and ``dynorm design`` word it."""
        return union_cost(self.read.old_reads, self.read.new_reads, self.read)


def _reads_cost(reads: Sequence[CollectionRead]) -> str:
    where = f"on {reads[0].index}" if reads[0].index else "on the table"
    if len(reads) == 1:
        return f"1 Query {where}"
    return f"{len(reads)} Queries {where} in parallel (one a shard)"


def union_cost(
    old: Sequence[CollectionRead], new: Sequence[CollectionRead], union: UnionRead
) -> str:
    """``1 Query on the table (was=...), then 1 Query on GSI1 once it is answered``."""
    rel = union.rel
    assert rel.was is not None  # noqa: S101 - a union has a was=
    first = _reads_cost(old) if old else "1 GetItem of the parent's old attribute"
    if union.old_whole:
        first += " and 1 BatchGetItem per page (the index holds the items in part)"
    if not new:
        first = f"every page of {first}" if old else first  # the old collection is read whole first
        then = "1 GetItem of the parent's attribute"
    else:
        then = _reads_cost(new)
    return (
        f"{first} (the old layout, was={rel.was.describe()}), then {then} once it is answered "
        f"({rel.via.describe()}); more while children are found in both"
    )


class GetReads(msgspec.Struct, frozen=True):
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
    #: Each key with the name of its table: parents of other tables share the BatchGetItem.
    fetched_with: tuple[LoadOption, ...] = ()
    fetch_keys: tuple[tuple[str, Item], ...] = ()
    fetch_self: bool = False
    #: Embedded relationships: their children arrive inside the parent item.
    embedded: tuple[LoadOption, ...] = ()
    #: Sharded relationships: their shards are read in the first round, beside the rest.
    sharded: tuple[ShardedLoad, ...] = ()
    #: Relationships with ``was=``: the old layout in the first round, the new one after it.
    unions: tuple[UnionLoad, ...] = ()

    @property
    def single(self) -> bool:
        """Whether this is one GetItem of the whole item and nothing else (no ``load=``).

        Only such a get can share a BatchGetItem with others (``connect(coalesce=True)``): a
        BatchGetItem reads whole items by key, which is all it asks for. Any ``load=`` (even of
        embedded children, which arrive inside the item but are shown per load option) keeps
        its own plan.
        """
        return (
            self.get_parent is not None
            and self.get_parent.operation == "GetItem"
            and not self.collections
            and not self.after_parent
            and not self.fetch_keys
            and not self.embedded
            and not self.sharded
            and not self.unions
        )

    def costs(self) -> dict[str, str]:
        """Each loaded relationship's qualified name -> the requests that read it.

        ``1 Query on the table`` says when the load can take more (``dynorm design`` says the
        same for the same load; see :meth:`CollectionLoad.cost`).
        """
        found: dict[str, str] = {}
        for load in self.collections:
            cost = load.cost()
            if load.reads_whole:
                cost += ", then 1 BatchGetItem per page (the index holds the items in part)"
            names = [o.relationship.qualname for o in load.options]
            for name in names:
                others = ", ".join(n for n in names if n != name)
                found[name] = cost + (f", the same Query as {others}" if others else "")
        for sharded in self.sharded:
            n = len(sharded.read.reads)
            found[sharded.option.relationship.qualname] = f"{n} Queries in parallel (one a shard)"
        for union in self.unions:
            found[union.option.relationship.qualname] = union.cost()
        for option in self.embedded:
            found[option.relationship.qualname] = "inside the item (no request)"
        for option in self.fetched_with:
            found[option.relationship.qualname] = "in the first round's BatchGetItem"
        for option in self.after_parent:
            found[option.relationship.qualname] = "after the item is read (its keys come from it)"
        return found

    @property
    def requests(self) -> list[Request]:
        """The requests sent in the first round (all concurrently)."""
        first = [self.get_parent] if self.get_parent else []
        if self.fetch_keys and not self.fetch_self:
            first.append(fetch_request(self.fetch_keys, consistent=self.consistent))
        for c in self.collections:
            first.append(c.read.request())
            if c.reads_whole:
                first.append(whole_item_reads(c.read.table_name))
        first += [read.request() for load in self.sharded for read in load.read.reads]
        for union in self.unions:
            first += union.read.old_requests()
        return first

    @property
    def then(self) -> list[Request]:
        """The requests sent once the first round's old-layout reads are answered (``was=``)."""
        return [r for union in self.unions for r in union.read.new_requests()]


def parent_get(info: ModelInfo[Any], key: Item, table_name: str, *, consistent: bool) -> Request:
    # The item parsed into the table's wire structures (the fast path's; see dynorm.wire.structs).
    return get_item(table_name, key, consistent=consistent, parse=info.table.parser("GetItem"))


def plan_get(
    info: ModelInfo[P],
    key_values: Mapping[str, object],
    options: Sequence[LoadOption],
    table_name: str,
    *,
    consistent: bool = False,
    name_of: Callable[[ModelTable], str] | None = None,
) -> GetReads:
    """What ``db.get`` sends; ``name_of`` names other tables a load reads (None: own only).

    Every request of the first round goes out at once: the item (or the Query carrying it),
    each collection's Query (another table's index too) and one BatchGetItem of the parents
    whose keys follow from the arguments, whatever their tables.
    """
    info.check_key_values(key_values)
    parent_key = info.primary_key(key_values)

    def named(table: ModelTable, rel: Relationship[Any]) -> str:
        if table is info.table:
            return table_name
        if name_of is None:
            return table.name
        try:
            return name_of(table)
        except DefinitionError as exc:  # a table the connection was not given
            what = f"load=[{rel.qualname}] reads Table {table.name!r}"
            raise DefinitionError(f"{what}: {exc}") from exc

    groups: dict[tuple[str, str | None, bool], list[LoadOption]] = {}
    after_parent: list[LoadOption] = []
    belongs: list[LoadOption] = []
    embedded: list[LoadOption] = []
    sharded: list[ShardedLoad] = []
    unions: list[UnionLoad] = []
    for option in options:
        rel = option.relationship
        if isinstance(rel, BelongsToRelation):
            belongs.append(option)
            continue
        if not isinstance(rel, HasManyRelation):
            raise DefinitionError(f"{rel!r} cannot be loaded")
        if rel.was is not None:
            union = _union_load(option, rel, key_values, named(rel.children_table, rel))
            if union is None:
                after_parent.append(option)  # its reads need fields of the parent item
            else:
                unions.append(union)
            continue
        if rel.embedded is not None:
            embedded.append(option)  # embedded children arrive inside the parent item
            continue
        if not all(parent_field in key_values for parent_field in rel.link.values()):
            after_parent.append(option)
            continue
        where = named(rel.children_table, rel)
        if rel.sharded:
            # Its shards are other partitions than the parent's: their Queries go beside it.
            reads = rel.children_reads(where, key_values, consistent=consistent)
            sharded.append(ShardedLoad(option, _sharded_read(reads)))
            continue
        groups.setdefault((where, rel.via.index, not rel.newest_first), []).append(option)

    collections, carried = _collection_loads(info, key_values, groups, consistent=consistent)
    get_parent = (
        None if carried else parent_get(info, parent_key, table_name, consistent=consistent)
    )
    early = [o for o in belongs if belongs_to(o).parent_key_from(key_values) is not None]
    fetch_keys = tuple(
        (named(rel.target_info.table, rel), rel.parent_key_from(key_values) or {})
        for rel in map(belongs_to, early)
    )
    fetch_self = get_parent is not None and bool(early)
    if fetch_self:
        # The item and its parents are all addressed by key: one BatchGetItem reads them all,
        # the parents of other tables too (each table's keys under its name).
        fetch_keys = ((table_name, parent_key), *fetch_keys)
        get_parent = fetch_request(fetch_keys, consistent=consistent)
    late = [o for o in belongs if o not in early]
    return GetReads(
        parent_key,
        get_parent,
        tuple(collections),
        (*after_parent, *late),
        consistent=consistent,
        fetched_with=tuple(early),
        fetch_keys=fetch_keys,
        fetch_self=fetch_self,
        embedded=tuple(embedded),
        sharded=tuple(sharded),
        unions=tuple(unions),
    )


def _union_load(
    option: LoadOption, rel: HasManyRelation[Any], key_values: Mapping[str, object], where: str
) -> UnionLoad | None:
    """The union load of ``rel`` when the arguments give every field its reads need."""
    from .union import union_read  # noqa: PLC0415 - was= loads only

    if any(field not in key_values for field in rel.copies):
        return None  # old children read from the parent item get its copied fields
    try:
        return UnionLoad(option, union_read(rel, where, key_values))
    except (KeyTemplateError, KeyError):
        return None


def crowding(
    info: ModelInfo[Any], read: CollectionRead, rels: Sequence[HasManyRelation[Any]]
) -> tuple[str, ...]:
    """The other entities whose items may sort inside ``read``'s range (pure, from templates).

    Those of :func:`~dynorm.mapping.reading.models_in_range` but the children read, and the
    parent's own model when a collection holds one of it (the loader asks for it on top).
    """
    wanted = {r.target_info.name for r in rels}
    found: list[str] = []
    # The children's table: another table's collection is crowded by that table's models.
    for other in models_in_range(rels[0].children_table, read):
        pk_t, sk_t = other.key_templates(read.index)
        if other.name in wanted or sk_t is None:
            continue
        if other is info and set(sk_t.fields) <= set(pk_t.fields):
            continue
        found.append(other.name)
    return tuple(found)


def _collection_loads(
    info: ModelInfo[Any],
    key_values: Mapping[str, object],
    groups: Mapping[tuple[str, str | None, bool], Sequence[LoadOption]],
    *,
    consistent: bool,
) -> tuple[list[CollectionLoad], bool]:
    """One Query per group of relationships sharing a collection; whether one carries the parent.

    The first that can carry it does.
    """
    collections = []
    carried = False
    for (name, index, forward), group in groups.items():
        rels = [cast("HasManyRelation[Any]", o.relationship) for o in group]
        read, position = _group_read(
            info, key_values, rels, index=index, forward=forward, table_name=name
        )
        # A parent at the far end arrives in the same page only when the page is not cut short
        # by a limit; without a limit it usually does, and a GetItem follows only if it did not.
        if position == "last" and any(o.limit is not None for o in group):
            position = None
        take = position if not carried else None
        carried = carried or take is not None
        if consistent and index is None:
            read = msgspec.structs.replace(read, consistent=True)
        table = rels[0].children_table
        partial = table.partial_models(index) if index is not None else frozenset()
        names = {info.name, *(r.target_info.name for r in rels)}
        crowd = crowding(info, read, rels)
        collections.append(CollectionLoad(read, tuple(group), take, bool(partial & names), crowd))
    return collections, carried


def fetch_request(keys: Sequence[tuple[str, Item]], *, consistent: bool) -> Request:
    """The BatchGetItem of (table name, key) pairs, each key once, as the reader sends it.

    One table's keys make the request a lone table's fetch sends; several tables' share one
    request, each table's keys under its name, in the order first named.
    """
    grouped: dict[str, dict[Any, Item]] = {}
    for name, key in keys:
        grouped.setdefault(name, {}).setdefault(key_id(key), key)
    if len(grouped) == 1:
        ((name, only),) = grouped.items()
        return _batch_get(list(only.values()), name, consistent=consistent)
    read = {"ConsistentRead": True} if consistent else {}
    return batch_get_tables({n: {"Keys": list(k.values()), **read} for n, k in grouped.items()})


def _batch_get(keys: Sequence[Item], table_name: str, *, consistent: bool) -> Request:
    batch: dict[str, Any] = {"Keys": list({key_id(k): k for k in keys}.values())}
    if consistent:
        batch["ConsistentRead"] = True
    return batch_get(table_name, batch)


def belongs_to(option: LoadOption) -> BelongsToRelation[Any]:
    return cast("BelongsToRelation[Any]", option.relationship)


def _group_read(
    info: ModelInfo[Any],
    key_values: Mapping[str, object],
    rels: Sequence[HasManyRelation[Any]],
    *,
    index: str | None,
    forward: bool,
    table_name: str,
) -> tuple[CollectionRead, Position | None]:
    """The Query for a group, and where the parent sits in it (None: not in the range)."""
    children = rels[0].children_read(table_name, key_values)
    prefixes = [r.child_prefix(key_values) for r in rels]
    parent_sk = _parent_sort_key(info, key_values, index, children.pk_value, rels[0].children_table)
    if parent_sk is None or not all(prefixes):
        # Several kinds of children but no common bound: read the whole collection.
        read = children if len(rels) == 1 else msgspec.structs.replace(children, range=None)
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
    return msgspec.structs.replace(children, range=KeyRange("between", (low, high))), position


def _parent_sort_key(
    info: ModelInfo[Any],
    key_values: Mapping[str, object],
    index: str | None,
    collection: str,
    table: ModelTable,
) -> str | None:
    """The parent's sort key in the collection being read, when it lives there."""
    if table is not info.table:
        return None  # the children are of another table: the parent is never among them
    if index is not None and not info.in_index(index):
        return None
    pk_t, sk_t = info.key_templates(index)
    if sk_t is None or not (sk_t.covers(key_values) and pk_t.covers(key_values)):
        return None
    return sk_t.format(key_values) if pk_t.format(key_values) == collection else None


class PageShare(msgspec.Struct, frozen=True):
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


class QueryLoadReads(msgspec.Struct, frozen=True):
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
            if not isinstance(rel, HasManyRelation):
                how = "one BatchGetItem per 100 distinct parents of a page"
            elif rel.was is not None:
                how = (
                    f"per parent of a page, run concurrently: the old layout "
                    f"(was={rel.was.describe()}), then the new one once it is answered"
                )
            elif rel.embedded is not None:
                how = "inside each parent item (no request)"
            elif rel.sharded:
                how = (
                    f"{rel.via.shards} Queries per parent of a page (one a shard), run concurrently"
                )
            else:
                how = "one Query per parent of a page, run concurrently"
            if rel.crosses_tables:
                # The page's items give the keys: its round trip comes first.
                how += f", in Table {rel.target_info.table.name!r}, after the page"

            found[rel.qualname] = how
        return found

    def after_page(
        self, info: ModelInfo[Any], name_of: Callable[[ModelTable], str]
    ) -> list[Request]:
        """The requests sent for each parent a page returns, once the page is read (pure).

        As ``load_all`` sends them: one BatchGetItem of the BelongsTo parents' keys, then each
        separate HasMany's Query (one a shard), each followed by the BatchGetItem that reads
        its items whole where the index holds them in part. Values taken from the parents are
        :class:`~dynorm.FromRead` placeholders (``'P#<Order.id>' for each Order read``): these
        requests are sent once for each parent of the page (a parent's children that fill more
        than a page, or a limited load, may take more). Embedded children need none.
        """
        samples = sample_values(info)
        found: list[Request] = []
        keys: dict[str, list[Item]] = {}
        for option in self.separate:
            rel = option.relationship
            if isinstance(rel, BelongsToRelation):
                what = f"the {rel.target_name} key of each {info.name} read"
                keys.setdefault(name_of(rel.target_info.table), []).append(
                    cast("Item", FromRead(what))
                )
        if keys:
            requests = {name: {"Keys": shown} for name, shown in keys.items()}
            found.append(batch_get_tables(requests))
        for option in self.separate:
            rel = option.relationship
            if not isinstance(rel, HasManyRelation) or rel.embedded is not None:
                continue
            name = name_of(rel.children_table)
            if rel.was is not None:  # the old layout's reads, then the new layout's
                from .union import union_read  # noqa: PLC0415 - was= loads only

                found += [placed_request(r, info) for r in union_read(rel, name, samples).reads()]
                continue
            index = rel.via.index
            partial = rel.children_table.partial_models(index) if index is not None else ()
            for read in rel.children_reads(name, samples):
                found.append(placed_request(read.request(), info))
                if rel.target_info.name in partial:
                    found.append(whole_item_reads(name))
        return found


def plan_query_load(
    info: ModelInfo[Any],
    read: CollectionRead,
    components: Mapping[str, object],
    options: Sequence[LoadOption],
    *,
    filtered: bool = False,
) -> QueryLoadReads:
    """Which relationships share the parents' Query, and the range that reads them all (pure).

    ``filtered``: the query has a filter of the caller's, which would drop the children of a
    shared Query too (an ExpressionError then). The filter on the type attribute is dropped.
    """
    shared = [o for o in options if _shares(o.relationship, read, components)]
    separate = tuple(o for o in options if o not in shared)
    if not shared:
        return QueryLoadReads(read, None, (), separate)
    if filtered:
        names = ", ".join(o.relationship.qualname for o in shared)
        raise ExpressionError(
            f"db.query({info.name}, load=[...]) reads {names} in the same Query as the "
            f"{info.name} items, and a filter would drop those children too: filter the "
            f"{info.name} items in Python, or query without load= and load the children of "
            f"the items it returns with db.load(items, {names})"
        )
    # The type attribute's filter would drop the children.
    read = msgspec.structs.replace(read, filter=None)
    bounds = [_bounds(read.range)]
    for option in shared:
        rel: HasManyRelation[Any] = option.relationship  # type: ignore[assignment]
        prefix = _static_prefix(rel, read.index, components)
        bounds.append((prefix, upper_bound(prefix)) if prefix else None)
    widened: KeyRange | None = None
    if all(b is not None for b in bounds):
        lows = [b[0] for b in bounds if b is not None]
        highs = [b[1] for b in bounds if b is not None]
        widened = KeyRange("between", (min(lows), max(highs)))
    own = bounds[0]
    if widened == (None if own is None else KeyRange("between", own)):
        return QueryLoadReads(read, None, tuple(shared), separate)
    return QueryLoadReads(
        msgspec.structs.replace(read, range=widened), read.range, tuple(shared), separate
    )


def _shares(rel: Any, read: CollectionRead, components: Mapping[str, object]) -> bool:
    """Whether the children of every parent the query returns lie in the query's collection."""
    if not isinstance(rel, HasManyRelation) or rel.embedded is not None or read.sk_attr is None:
        return False
    if rel.was is not None:
        return False  # two layouts, read one after the other by their own requests
    if rel.crosses_tables:
        return False  # another table's collection: never in the parents' Query
    if rel.via.index != read.index or rel.newest_first == read.forward or rel.sharded:
        return False  # (a sharded collection is other partitions: read by its own Queries)
    child_pk, _ = rel.target_info.key_templates(read.index)
    given = {c: components[p] for c, p in rel.link.items() if p in components}
    if not child_pk.covers(given):
        return False  # the children's partition depends on each parent's other fields
    return child_pk.format(given) == read.pk_value


def _static_prefix(
    rel: HasManyRelation[Any], index: str | None, values: Mapping[str, object]
) -> str:
    """The sort key prefix every child of every parent the query returns starts with."""
    _, child_sk = rel.target_info.key_templates(index)
    if child_sk is None:
        return ""
    given = {c: values[p] for c, p in rel.link.items() if p in values}
    try:
        return child_sk.prefix(given)
    except KeyTemplateError:  # a later component given without an earlier one
        return child_sk.prefix({})


def _bounds(range_: KeyRange | None) -> tuple[str, str] | None:
    """The inclusive (low, high) of a sort key condition, when it has simple bounds."""
    if range_ is None or range_.op not in _BOUNDED:
        return None  # the parents are then tested against their condition one by one
    return range_.span()


_BOUNDED: frozenset[str] = frozenset({"eq", "begins_with", "between"})


def query_read(
    info: ModelInfo[Any],
    index: str | None,
    components: Mapping[str, object],
    table_name: str,
    *,
    consistent: bool = False,
) -> Finished[CollectionRead]:
    """The collection read behind ``db.query``, as it is sent (see ``finish_query``)."""
    pk, sk = info.key_templates(index)
    call = f"db.query({info.name}{', index=' + repr(index) if index else ''})"
    known = tuple(dict.fromkeys(pk.fields + (sk.fields if sk else ())))
    unknown = [name for name in components if name not in known]
    if unknown:
        raise not_key_fields(info.name, f"{call} takes", unknown, known)
    missing = [f for f in pk.fields if f not in components]
    if missing:
        raise KeyTemplateError(
            f"{call} needs every field of the partition key {pk.source!r}: "
            f"give {', '.join(missing)}"
        )
    marked = [f for f in pk.fields if isinstance(components[f], SortCondition)]
    if marked:
        raise KeyTemplateError(
            f"{call}: {marked[0]}={components[marked[0]]!r} is part of the partition key "
            f"{pk.source!r}, which a Query addresses by equality; give {marked[0]} a value "
            "(conditions go on a sort key component)"
        )
    info.check_key_types(components)
    pk_attr, sk_attr = info.table.key_attributes(index)
    if info.key_type(pk_attr) != "S":
        info.key_attribute(pk_attr, components)  # a number or binary given as such
    sk_kind = info.key_type(sk_attr or "")
    sorted_ = sort_range(sk, components, call, sk_kind) if sk is not None else SortRange(None)
    read = collection_read(
        info, index, table_name, pk.format(components), sorted_, consistent=consistent
    )
    return finish_query(info, read)


#: One item ``db.transact_get`` reads: its model and its key fields.
KeyOf = tuple[type[Any], Mapping[str, object]]


class TransactGetReads(msgspec.Struct, frozen=True):
    """A TransactGetItems and, for each item asked for, its model and key (in order)."""

    request: Request
    infos: tuple[ModelInfo[Any], ...]
    keys: tuple[Item, ...]


def transact_get_reads(
    wanted: Sequence[KeyOf], locate: Callable[[type[Any]], tuple[ModelInfo[Any], str]]
) -> TransactGetReads:
    """The TransactGetItems of ``wanted``; ``locate`` gives a model's info and table name.

    Items of several tables go in one request (each names its TableName); each distinct item
    is read once, since DynamoDB refuses a transaction naming one twice.
    """
    infos: list[ModelInfo[Any]] = []
    keys: list[Item] = []
    named: dict[tuple[str, Any], tuple[str, Item]] = {}
    for i, entry in enumerate(wanted):
        shape: object = entry  # callers without a type checker pass anything
        if not (isinstance(shape, tuple) and len(shape) == 2 and isinstance(shape[1], Mapping)):
            raise DefinitionError(
                f"db.transact_get takes (Model, {{key field: value}}) pairs, such as "
                f"(Org, {{'name': 'ACME'}}); item {i} is {entry!r}"
            )
        info, name = locate(entry[0])
        info.check_key_values(entry[1])
        infos.append(info)
        key = info.primary_key(entry[1])
        keys.append(key)
        named.setdefault((name, key_id(key)), (name, key))
    if not named:
        raise LimitExceededError("db.transact_get needs at least one (Model, key) pair")
    if len(named) > TRANSACT_MAX:
        raise LimitExceededError(
            f"db.transact_get reads at most {TRANSACT_MAX} items in one transaction "
            f"(TRANSACT_MAX); got {len(named)}: split them, or use db.get_many when the "
            "items need not be read at one point in time"
        )
    return TransactGetReads(transact_get_items(list(named.values())), tuple(infos), tuple(keys))
