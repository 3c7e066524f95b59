"""A cascading delete: a whole tree of items, read first, deleted leaves first, bounded.

``db.delete(obj, cascade=True)`` follows every ``HasMany`` relationship whose strategy stores
children as items of their own (``Partition``, ``Index``, ``Denormalized``), recursively: the
children's children, and items found through an index relationship (the mapping items of a
many-to-many link). ``Embedded`` children are inside their parent's item and go with it. The plan:

1. a consistent GetItem of the root (the values its relationships link by, as stored);
2. the tree, level by level: one Query per parent per relationship, a level's Queries sent
   concurrently (every page, through the paging loop), the items of a model an index holds in
   part read whole (BatchGetItem) when their own relationships need their fields; keys already
   seen are skipped (cycles end), and past ``max_items`` the cascade is refused with nothing
   written;
3. the root's conditions (the caller's ``condition``, its version, its model) checked by an
   UpdateItem that marks the root and deletes nothing: refused, nothing is deleted;
4. the levels deleted deepest first (BatchWriteItem, 25 a request, unprocessed ones retried),
   each level whole before the one above it, so every item left after an interruption is still
   reachable from its surviving parent, and running the cascade again finishes the job;
5. the root last, on condition that it still carries the mark (a put of the root meanwhile
   keeps it) and its version.

A relationship into another table of the connection (``HasMany`` through that table's index) is
followed there: its Query goes to that table's index, its items are deleted from that table, in
the same level's BatchWriteItem requests as the level's other items (a request may address
several tables). Nothing about the order changes, so the guarantees hold across tables: the
mark stays on the root, the one item every rerun starts from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final

import msgspec

from dynorm.core.chunks import DEFAULT_MAX_ITEMS, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    CodecError,
    ConditionFailedError,
    DatabaseError,
    DefinitionError,
    DynormError,
    KeyTemplateError,
    LimitExceededError,
)
from dynorm.core.expressions import Condition, extend_condition
from dynorm.core.requests import CollectionRead, Request, consistent_get
from dynorm.core.stamps import VersionCheck, Write
from dynorm.core.steps import (
    Fetch,
    FromRead,
    Plan,
    ReadAll,
    Send,
    Together,
    Unread,
    WriteBatch,
    read_each,
)

from .model import ModelInfo, ModelTable, info_of, is_model
from .oldcascade import OldLayout, old_layouts, was_collections
from .relations import HasManyRelation, relationships_of
from .unknown import placed_request, sample_values
from .writes import plan_delete, plan_mark

__all__ = ["DEFAULT_MAX_ITEMS", "MARK", "CascadeReport", "plan_cascade"]

#: The attribute that marks a root whose cascade has checked its conditions (see step 3 above).
MARK: Final = "dynorm:cascade"

#: Why a single-item write was refused (``WritePlanner._refused``).
Refused = Callable[
    [ModelInfo[Any], Item, VersionCheck | None, ConditionFailedError, Write],
    Generator[Any, Any, DatabaseError],
]

#: The name a table has on the connection (raises DefinitionError for one not connected).
NameOf = Callable[[ModelTable], str]


def _counts(value: Mapping[type[Any], int]) -> Mapping[type[Any], int]:
    return MappingProxyType(dict(value))


class CascadeReport(msgspec.Struct, frozen=True):
    """What ``db.delete(obj, cascade=True)`` deleted: how many items of each model.

    ``report[Listing]`` is the number of listings deleted (0 for a model it deleted none of),
    ``report.total`` every item, the root included.
    """

    deleted: Mapping[type[Any], int] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "deleted", _counts(self.deleted))  # read-only

    def __hash__(self) -> int:
        return hash(frozenset(self.deleted.items()))

    @property
    def total(self) -> int:
        """How many items were deleted, the root included."""
        return sum(self.deleted.values())

    def __getitem__(self, model: type[Any]) -> int:
        return self.deleted.get(model, 0)

    def __iter__(self) -> Iterator[type[Any]]:
        return iter(self.deleted)

    def __str__(self) -> str:
        tables = {_table_of(cls) for cls in self.deleted}
        # A tree across tables names each model's table (two tables may have an Order each).
        parts = ", ".join(
            f"{n} {cls.__name__}" + (f" (Table {_table_of(cls)!r})" if len(tables) > 1 else "")
            for cls, n in self.deleted.items()
        )
        return f"deleted {self.total} items" + (f" ({parts})" if parts else "")


def _table_of(cls: type[Any]) -> str:
    return info_of(cls).table.name if is_model(cls) else ""


class _Found(msgspec.Struct, frozen=True):
    """One item of the tree: its model, its key and the name of its table."""

    info: ModelInfo[Any]
    key: Item | FromRead  # FromRead: as explain shows it
    table: str


def _cascading(info: ModelInfo[Any]) -> list[HasManyRelation[Any]]:
    """The relationships of ``info`` whose children a cascade deletes as items of their own."""
    return [
        rel
        for rel in relationships_of(info).values()
        if isinstance(rel, HasManyRelation) and rel.via.cascades
    ]


def _table_names(
    info: ModelInfo[Any], table_name: str, name_of: NameOf | None
) -> dict[ModelTable, str]:
    """The name of every table the tree under ``info`` reaches, found before anything is sent.

    A relationship into a table the connection was not given is refused here, with nothing
    sent: the cascade could not delete those children, nor leave them reachable.
    """
    names: dict[ModelTable, str] = {info.table: table_name}
    seen: set[ModelInfo[Any]] = set()
    todo = [info]
    while todo:
        one = todo.pop()
        if one in seen:
            continue
        seen.add(one)
        for rel in [*_cascading(one), *was_collections(one)]:
            table = rel.children_table
            if table not in names:
                names[table] = _name(table, rel, name_of)
            todo.append(rel.target_info)
    return names


def _name(table: ModelTable, rel: HasManyRelation[Any], name_of: NameOf | None) -> str:
    if name_of is None:
        return table.name
    try:
        return name_of(table)
    except DefinitionError as exc:  # a table the connection was not given
        raise DefinitionError(
            f"db.delete(cascade=True) follows {rel.qualname} into Table {table.name!r}: {exc}"
        ) from exc


def plan_cascade(
    table_name: str,
    info: ModelInfo[Any],
    values: Mapping[str, object],
    *,
    condition: Condition | None,
    check: VersionCheck | None,
    max_items: int | None,
    refused: Refused,
    name_of: NameOf | None = None,
) -> Plan[CascadeReport]:
    """Delete the item ``values`` names and every item under it (see the module docstring).

    ``name_of`` names the connection's other tables the tree reaches (None: their own names).
    """
    if max_items is not None and (type(max_items) is not int or max_items < 1):
        raise ValueError(f"max_items must be a positive int or None; got {max_items!r}")
    names = _table_names(info, table_name, name_of)
    key = info.primary_key(values)
    delete = plan_delete(info, key, table_name, condition=condition, version=check)
    found = yield Send(consistent_get(key, table_name))
    if isinstance(found, Unread):  # planned by explain
        return (yield from _explain(names, info, values, condition=condition, check=check))
    stored = found.get("Item")
    if stored is None or (check is not None and check.new) or not info.matches(stored):
        # Nothing of this model is stored under the key, so nothing under it either: the
        # delete alone says what a delete of that key does (nothing, or why it is refused).
        try:
            yield Send(delete)
        except ConditionFailedError as exc:
            raise (yield from refused(info, key, check, exc, "delete")) from exc
        return CascadeReport()
    # The item as stored tells which children are its (the object given, or the key alone,
    # may not: a stale object, or links through fields outside the key).
    levels = yield from _read_tree(
        names, info, key, values=_values(info, stored), max_items=max_items
    )
    try:
        yield Send(plan_mark(info, key, table_name, MARK, condition=condition, version=check))
    except ConditionFailedError as exc:
        error = yield from refused(info, key, check, exc, "delete")
        if error is exc:
            error = _condition_failed(info, key, exc)
        raise error from exc
    counts: dict[type[Any], int] = {}
    try:
        for level in reversed(levels):
            yield from _delete_level(table_name, level)
            for f in level:
                counts[f.info.cls] = counts.get(f.info.cls, 0) + 1
    except DynormError as exc:
        yield from _abandon(info, key, table_name, sum(counts.values()), exc)
        raise
    # Outside the abandoning block: a root delete whose outcome is unknown may have deleted the
    # root, so its mark is not touched and no note says the root was kept.
    try:
        yield Send(_marked_delete(info, key, table_name, check))
    except ConditionFailedError as exc:
        raise _root_changed(info, key, counts, exc) from exc
    counts[info.cls] = counts.get(info.cls, 0) + 1
    return CascadeReport(_ordered(counts, info, levels))


def _abandon(
    info: ModelInfo[Any], key: Item, table_name: str, deleted: int, exc: DynormError
) -> Plan[None]:
    """After a cascade stopped part-way: take the mark off the root, and say so on ``exc``.

    The mark would be harmless (reads leave it out, a put of the root replaces it), but a root
    left as it was stored is what a caller who gives up on the cascade expects. The removal is
    conditional on the mark (a root replaced meanwhile is left alone); when it fails too, the
    mark stays and the note says so.
    """
    unmark = Request(
        "UpdateItem",
        {
            "TableName": table_name,
            "Key": key,
            "UpdateExpression": "REMOVE #mark",
            "ConditionExpression": "attribute_exists(#mark)",
            "ExpressionAttributeNames": {"#mark": MARK},
        },
    )
    try:
        yield Send(unmark)
        mark = f"its mark ({MARK}) was removed"
    except ConditionFailedError:
        mark = "it was written by someone else meanwhile, and keeps what they wrote"
    except DynormError as failed:
        mark = (
            f"its mark ({MARK}) stays, as removing it failed too ({failed}); reads leave it "
            "out, and the next cascade or put of the item replaces it"
        )
    exc.add_note(
        f"delete of {info.name} {info.describe(key)} with cascade=True stopped part-way: "
        f"{deleted} items under it were deleted (a level in progress may be deleted in part), "
        f"the item itself was kept and {mark}. Every item left is reachable from it: run the "
        "same delete again to finish"
    )


def _read_tree(
    names: Mapping[ModelTable, str],
    info: ModelInfo[Any],
    key: Item,
    *,
    values: Mapping[str, object],
    max_items: int | None,
) -> Plan[list[list[_Found]]]:
    """Every item under the root, by level (the root's children first); refused past the bound."""
    root = f"{info.name} {info.describe(key)}"
    # Keys are told apart by table too: two tables may hold items under the same key.
    seen = {(names[info.table], key_id(key))}
    levels: list[list[_Found]] = []
    frontier: list[tuple[ModelInfo[Any], Mapping[str, object]]] = [(info, values)]
    while frontier:
        level: list[_Found] = []
        below: list[tuple[ModelInfo[Any], Mapping[str, object]]] = []
        # The level's Queries (one per parent per relationship and layout, whichever table) go
        # out at once: a relationship declaring was= a collection is read in both layouts.
        reads: list[tuple[HasManyRelation[Any], CollectionRead, OldLayout | None]] = [
            (rel, read, None)
            for parent, parent_values in frontier
            for rel in _cascading(parent)
            for read in _cascade_reads(rel, names[rel.children_table], parent_values, root)
        ]
        reads += [
            (old.rel, read, old)
            for parent, parent_values in frontier
            for old in _old_reads(parent, names, parent_values, root)
            for read in old.reads
        ]
        answers = yield from read_each([read for _, read, _ in reads])
        for (rel, _, old), items in zip(reads, answers, strict=True):
            child = rel.target_info
            name = names[child.table]
            follow = bool(_cascading(child) or was_collections(child))
            new = []
            for item in items:
                # None: another model's item (or, in the old layout, not an old child)
                found = child.primary_key_of_item(item) if old is None else old.child_item(item)
                stored = _key(child, item) if found is not None else None
                if stored is not None and (name, key_id(stored)) not in seen:
                    seen.add((name, key_id(stored)))
                    new.append(item)
            if max_items is not None and len(seen) > max_items:
                raise _too_many(root, len(seen), max_items)
            index = rel.via.index if old is None else old.index
            if follow and index is not None and child.name in child.table.partial_models(index):
                # The index holds these items in part: read them whole by key, in their table.
                new = yield from _whole(name, own=name == names[info.table], child=child, items=new)
            for item in new:
                level.append(_Found(child, _key(child, item), name))
                child_item = item if old is None else old.child_item(item)
                if follow and child_item is not None:
                    below.append((child, _values(child, child_item)))
        if level:
            levels.append(level)
        frontier = below
    return levels


def _whole(name: str, *, own: bool, child: ModelInfo[Any], items: list[Item]) -> Plan[list[Item]]:
    """``items`` (as an index holds them, in part) read whole by key from Table ``name``.

    ``own``: the root's table, the runner's (a Fetch); another is named (a Together).
    """
    keys = tuple(_key(child, item) for item in items)
    if not keys:
        return []
    if own:
        whole = yield Fetch(keys)
    else:
        (whole,) = yield Together(((name, Fetch(keys)),))
        if isinstance(whole, Exception):
            raise whole
    return [whole[key_id(k)] for k in keys if key_id(k) in whole]


def _delete_level(table_name: str, level: list[_Found]) -> Plan[None]:
    """Delete one level's items, each from its table; done when every one is gone.

    A level within the root's table is one WriteBatch (the runner's table); a level spanning
    tables is one Together, whose BatchWriteItem requests address each item's table.
    """
    if not level:
        return
    by_table: dict[str, list[dict[str, Any]]] = {}
    for f in level:
        by_table.setdefault(f.table, []).append({"DeleteRequest": {"Key": f.key}})
    if set(by_table) == {table_name}:
        yield WriteBatch(tuple(by_table[table_name]))
        return
    # One key in two tables is two items, and DynamoDB takes them in one request; moto refuses
    # such a request as "duplicates", so a level holding one goes table by table (still whole
    # before the level above).
    owners: dict[Any, set[str]] = {}
    for f in level:
        if not isinstance(f.key, FromRead):  # explain's placeholders are no keys
            owners.setdefault(key_id(f.key), set()).add(f.table)
    shared = any(len(tables) > 1 for tables in owners.values())
    groups = [[n] for n in by_table] if shared else [list(by_table)]
    for group in groups:
        outcomes = yield Together(tuple((n, WriteBatch(tuple(by_table[n]))) for n in group))
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                raise outcome


class _Undecoded(dict[str, object]):
    """The fields of an item that does not decode, read one by one; ``error`` says why not."""

    def __init__(self, info: ModelInfo[Any], item: Item, error: CodecError) -> None:
        super().__init__()
        self.info, self.item, self.error = info, item, error


def _values(info: ModelInfo[Any], item: Item) -> Mapping[str, object]:
    """The field values of a stored item, to read the items under it by.

    An item that does not decode (another tool wrote a field of another type) is still in the
    tree by its key: it is deleted by key, and what its own relationships link by is read field
    by field (from its attribute, else from a key holding it). A field that cannot be read
    either refuses the cascade when a relationship needs it (``_cascade_reads``).
    """
    try:
        return info.values_of(info.decode(item))
    except CodecError as exc:
        found = _Undecoded(info, item, exc)
        for name in {f for rel in _cascading(info) for f in rel.link.values()}:
            value = _field(info, item, name)
            if value is not _UNREAD:
                found[name] = value
        return found


_UNREAD: Final[Any] = object()


def _field(info: ModelInfo[Any], item: Item, name: str) -> object:
    """One field of an item: from its own attribute, else a key holding it; else _UNREAD."""
    stored = info.codec.attributes[name]
    if stored in item:
        with contextlib.suppress(KeyError, TypeError, ValueError, CodecError):
            return info.codec.decode_field[name](item[stored])
    for holder in info.key_fields.values():
        texts = holder.texts(item) if name in holder.parsers else None
        if texts is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError, CodecError):
                return holder.parsers[name](texts[name])
    return _UNREAD


def _cascade_reads(
    rel: HasManyRelation[Any],
    table_name: str,
    values: Mapping[str, object],
    root: str,
) -> tuple[CollectionRead, ...]:
    """The reads of ``rel``'s children; refused (nothing written yet) if the parent lacks a link."""
    try:
        return rel.via.cascade_reads(rel, table_name, values)
    except (KeyError, KeyTemplateError) as exc:
        if not isinstance(values, _Undecoded):
            raise
        missing = sorted(set(rel.link.values()) - set(values))
        raise CodecError(
            f"delete of {root} with cascade=True refused, nothing was deleted: "
            f"{values.info.name} item {values.info.describe(values.item)} in its tree does not "
            f"decode, and {rel.qualname} links its children by {', '.join(map(repr, missing))}, "
            f"which cannot be read from it ({values.error}). Correct the stored item and run "
            "the cascade again"
        ) from exc


def _old_reads(
    info: ModelInfo[Any],
    names: Mapping[ModelTable, str],
    values: Mapping[str, object],
    root: str,
) -> list[OldLayout]:
    """The old-layout reads of ``info``'s was= relationships (refused as ``_cascade_reads``)."""
    try:
        return old_layouts(info, names, values)
    except (KeyError, KeyTemplateError) as exc:
        if not isinstance(values, _Undecoded):
            raise
        raise CodecError(
            f"delete of {root} with cascade=True refused, nothing was deleted: "
            f"{values.info.name} item {values.info.describe(values.item)} in its tree does not "
            f"decode, so where its children were stored before (was=) cannot be read from it "
            f"({values.error}). Correct the stored item and run the cascade again"
        ) from exc


def _key(info: ModelInfo[Any], item: Item) -> Item:
    return {a: item[a] for a in info.table.primary_attributes}


def _marked_delete(
    info: ModelInfo[Any], key: Item, table_name: str, check: VersionCheck | None
) -> Request:
    """The root's DeleteItem: only while it holds the mark (and its version)."""
    request = plan_delete(info, key, table_name, version=check)
    params = dict(request.params)
    extend_condition(params, lambda b: f"attribute_exists({b.attribute(MARK)})")
    # Conditional: refused after an attempt whose reply was lost, the item's absence says the
    # delete went through.
    return Request(request.operation, params, retry="verify")


def _ordered(
    counts: Mapping[type[Any], int], root: ModelInfo[Any], levels: list[list[_Found]]
) -> dict[type[Any], int]:
    """The counts in tree order: the root's model, then each level's models as found."""
    order = [root.cls, *(f.info.cls for level in levels for f in level)]
    return {cls: counts[cls] for cls in dict.fromkeys(order) if cls in counts}


def _too_many(root: str, found: int, max_items: int) -> LimitExceededError:
    return LimitExceededError(
        f"delete of {root} with cascade=True refused, nothing was deleted: "
        f"the tree holds more than max_items={max_items} items ({found} found so far, the "
        "root included; reading stopped there). Pass a larger max_items=, or max_items=None "
        "for no bound"
    )


def _condition_failed(
    info: ModelInfo[Any], key: Item, exc: ConditionFailedError
) -> ConditionFailedError:
    error = ConditionFailedError(
        f"delete of {info.name} {key!r} (cascade): the condition did not hold, or the item is "
        "gone; nothing was deleted",
        code=exc.code,
        operation="UpdateItem",
    )
    error.item = exc.item
    return error


def _root_changed(
    info: ModelInfo[Any], key: Item, counts: Mapping[type[Any], int], exc: ConditionFailedError
) -> ConditionFailedError:
    done = sum(counts.values())
    error = ConditionFailedError(
        f"delete of {info.name} {key!r} (cascade): the {done} items under it are deleted, but "
        "the item itself was written by someone else meanwhile (replaced, or its version "
        "changed), so it was kept. Read it again and delete it if you still mean to",
        code=exc.code,
        operation="DeleteItem",
    )
    error.item = exc.item
    return error


# -- explain ------------------------------------------------------------------------------------


def _explain_old(
    parent: ModelInfo[Any],
    names: Mapping[ModelTable, str],
    values: Mapping[str, object] | None,
    shown: set[tuple[str, str]],
) -> Plan[list[HasManyRelation[Any]]]:
    """The old-layout Queries of ``parent``'s was= relationships, as explain shows them."""
    level: list[HasManyRelation[Any]] = []
    for old in old_layouts(parent, names, values or sample_values(parent)):
        if (parent.name, f"{old.rel.name} (was=)") in shown:
            continue  # a cycle: shown already
        shown.add((parent.name, f"{old.rel.name} (was=)"))
        for read in old.reads:
            request = read.request()
            if values is None:
                request = placed_request(request, parent)
            yield ReadAll(Request(request.operation, request.params))
        level.append(old.rel)
    return level


def _explain(
    names: Mapping[ModelTable, str],
    info: ModelInfo[Any],
    values: Mapping[str, object],
    *,
    condition: Condition | None,
    check: VersionCheck | None,
) -> Plan[CascadeReport]:
    """The cascade as explain shows it: one Query per relationship and level, then the deletes.

    Below the root's children the parents are not known: each level's Query is shown once per
    relationship, its key values ``FromRead`` placeholders (one is sent per parent read).
    """
    table_name = names[info.table]
    key = info.primary_key(values)
    shown: set[tuple[str, str]] = set()
    levels: list[list[HasManyRelation[Any]]] = []
    frontier: list[tuple[ModelInfo[Any], Mapping[str, object] | None]] = [(info, values)]
    while frontier:
        level: list[HasManyRelation[Any]] = []
        below: list[tuple[ModelInfo[Any], Mapping[str, object] | None]] = []
        for parent, parent_values in frontier:
            for rel in _cascading(parent):
                if (parent.name, rel.name) in shown:
                    continue  # a cycle: this relationship's reads are shown already
                shown.add((parent.name, rel.name))
                reads = rel.via.cascade_reads(
                    rel, names[rel.children_table], parent_values or sample_values(parent)
                )
                for read in reads:
                    request = read.request()
                    if parent_values is None:
                        request = placed_request(request, parent)
                    yield ReadAll(Request(request.operation, request.params))
                level.append(rel)
                below.append((rel.target_info, None))
            level += yield from _explain_old(parent, names, parent_values, shown)
        if level:
            levels.append(level)
        frontier = below
    yield Send(plan_mark(info, key, table_name, MARK, condition=condition, version=check))
    for level in reversed(levels):
        yield from _delete_level(
            table_name,
            [
                _Found(
                    rel.target_info,
                    FromRead(f"the keys of the {rel.target_name} items read"),
                    names[rel.children_table],
                )
                for rel in level
            ],
        )
    yield Send(_marked_delete(info, key, table_name, check))
    return CascadeReport()
