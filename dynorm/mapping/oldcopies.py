"""What a write of a child also does while its relationship declares ``was=``.

While ``HasMany(via=NEW, was=OLD)`` is declared, reads take the union of both layouts, the new
copy of a child winning. A write of a child stores the new layout and removes the child's copy
in the old layout in the same TransactWriteItems, so that no copy the write replaced is ever
read again:

- a collection moved to another collection (``Partition`` <-> ``Index``, a change of shards,
  ``Denormalized``): the old copy is an item of its own. Out of the table key, its key is the
  one the current templates give on the old key attributes (no read). Out of an index, only
  its index key is known: one Query of that index finds it (an index reads eventually, and the
  old items are old). When the old item has the new item's table key it is the same item: the
  write replaces it and nothing else is sent.
- out of ``Embedded(key=...)``: the old copy is the parent's map entry. One consistent GetItem
  of that entry says whether it is there (after the migration the parent holds no map, and a
  REMOVE of a member of a missing map is refused), and the removal is an UpdateItem of the
  parent conditioned on the entry being there. Out of ``Embedded()`` (a list, whose members
  have no key) the parent is read whole and each member made into the item it becomes: those
  with the child's key are removed, while each slot holds what was read.
- into ``Embedded``, from a collection: the old copy is the child's item, deleted in the
  transaction that sets (or removes) the map entry (see ``WritePlanner.add``/``remove``).

An update of a child whose item may still be in the old layout is first sent conditioned on
the new item existing (an UpdateItem of a missing key would create a half item); when it does
not, the old copy is read and moved (a TransactWriteItems: the new item put as the old one is
stored, with its new keys, where no item is; the old copy deleted while it is as read), and the
update is sent again. The moving is pure planning, shared with the migrations
(dynorm/mapping/oldlayout.py). A relationship without ``was=`` costs nothing here: a model
none of whose relationships moves is looked up once and gets no step.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import (
    CodecError,
    ConditionFailedError,
    DynormError,
    ItemNotFoundError,
    KeyTemplateError,
    TransactionCanceledError,
)
from dynorm.core.expressions import ExpressionBuilder, equal_to
from dynorm.core.keys import KeyTemplate, shard_number, typed_key_text
from dynorm.core.requests import Request, consistent_get, get_item, transact_write, update_item
from dynorm.core.steps import Plan, Send, Unread, WriteBatch, together
from dynorm.core.unchanged import unchanged

from .oldlayout import EmbeddedItems, ItemMove
from .relations import HasManyRelation, relationships_of
from .together import send_with
from .writes import plan_delete, plan_put, transact_action

if TYPE_CHECKING:
    from .embedded import EmbeddedCodec
    from .model import ModelInfo
    from .table import Table

__all__ = ["OldCopies"]

#: How often a write is planned again when only the removal of an old copy was refused.
_ATTEMPTS = 3
#: The ReturnValues of an update that a transaction cannot give back.
_OLD_VALUES = frozenset({"ALL_OLD", "UPDATED_OLD"})


def _delete_if(table_name: str, key: Item, condition: str, params: Mapping[str, Any]) -> Request:
    """DeleteItem of ``key`` while ``condition`` (with its placeholders ``params``) holds."""
    return Request(
        "DeleteItem",
        {"TableName": table_name, "Key": key, "ConditionExpression": condition, **params},
    )


class _Moved:
    """A collection's children moved to another collection: the old copy is an item."""

    def __init__(self, rel: HasManyRelation[Any], source: Any) -> None:
        self.rel, self.source = rel, source
        self.child: ModelInfo[Any] = rel.target_info
        self.move = ItemMove(rel, source)
        table = self.child.table
        self.old_pk, self.old_sk = table.key_attributes(source.index)
        #: the old item has the new one's table key (only index keys or shards changed)
        self.same_item = source.index is not None and source.index == rel.via.index

    def _old_partition(self, values: Mapping[str, object]) -> str:
        declared: KeyTemplate = self.child.key_templates(self.rel.via.index)[0]
        shards = self.source.shards
        if shards == 1:
            return declared.without_shard().format(values)
        texts = [typed_key_text(values[f]) for f in self.child.identity_fields()]
        template = declared
        if not declared.sharded:  # back from shards: the {shard} segment taken to be last
            template = KeyTemplate(
                declared.source + declared.delimiter + "{shard}", declared.delimiter
            )
        return template.format(values, shard_number(texts, shards))

    def old_index_key(self, values: Mapping[str, object]) -> Item:
        """The old copy's key attributes of the old layout (its table key, or index key)."""
        sk = self.child.key_templates(self.rel.via.index)[1]
        assert sk is not None  # noqa: S101 - a move between collections needs sort keys
        assert self.old_sk is not None  # noqa: S101 - likewise
        return {
            self.old_pk: {"S": self._old_partition(values)},
            self.old_sk: {"S": sk.format(values)},
        }

    def needs(self, values: Mapping[str, object]) -> bool:
        """Whether ``values`` (a key's fields) lack a field that says where the old copy is."""
        if self.same_item:
            return False
        try:
            self.old_index_key(values)
        except (KeyError, KeyTemplateError):
            return True
        return False

    def find(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Item]]:
        """The primary keys of the child's old copies but its new item (reads if needed).

        ``values``: the child's fields (its key fields at least).
        """
        if self.same_item:
            return []
        new = self.child.primary_key(values)
        old = self.old_index_key(values)
        if self.source.index is None:
            return [] if old == new else [old]
        builder = ExpressionBuilder()
        condition = " AND ".join(
            f"{builder.attribute(a)} = {builder.value(v)}" for a, v in old.items()
        )
        query = Request(
            "Query",
            {"TableName": table_name, "IndexName": self.source.index,
             "KeyConditionExpression": condition, **builder.params()},
        )  # fmt: skip
        response = yield Send(query)
        if isinstance(response, Unread):
            return []  # planned by explain: the old copies are not known
        table = self.child.table
        keys = [
            {a: item[a] for a in table.primary_attributes} for item in response.get("Items") or []
        ]
        return [k for k in keys if k != new]

    def removals(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        keys = yield from self.find(table_name, values)
        if self.source.index is None:
            return [plan_delete(self.child, k, table_name) for k in keys]
        # Found through the index: deleted only while it is still this child's old copy.
        builder = ExpressionBuilder()
        pk = builder.attribute(self.child.table.pk)
        same = " AND ".join(
            f"{builder.attribute(a)} = {builder.value(v)}"
            for a, v in self.old_index_key(values).items()
        )
        condition = f"attribute_not_exists({pk}) OR ({same})"
        return [_delete_if(table_name, k, condition, builder.params()) for k in keys]

    def moving(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        """The writes that move the child's old copy, read now, into the new layout (or none).

        The new item put as the old one is stored, with its new keys, where no item is; the old
        one deleted while it is as read.
        """
        keys = yield from self.find(table_name, values)
        for key in keys:
            found = yield Send(consistent_get(key, table_name))
            raw = None if isinstance(found, Unread) else found.get("Item")
            new = self.move.moved_item(dict(raw)) if raw is not None else None
            if raw is None or new is None:
                continue
            builder = ExpressionBuilder()
            while_read = unchanged(raw).render(builder)
            delete = _delete_if(table_name, key, while_read, builder.params())
            return [plan_put(self.child, None, table_name, item=new, overwrite=False), delete]
        return []


class _Unembedded:
    """Children once embedded in the parent (``Embedded(key=...)``): the old copy, an entry."""

    def __init__(self, rel: HasManyRelation[Any], codec: EmbeddedCodec) -> None:
        self.rel, self.codec = rel, codec
        self.child: ModelInfo[Any] = rel.target_info
        self.parent: ModelInfo[Any] = rel.owner_info
        self.items = EmbeddedItems(rel, codec)

    def _parent_key(self, values: Mapping[str, object]) -> Item | None:
        """The key of the child's parent (None: the child's link names no whole parent)."""
        parent_values = {p: values[c] for c, p in self.rel.link.items() if c in values}
        try:
            return self.parent.primary_key(parent_values)
        except (KeyError, KeyTemplateError):
            return None

    def _where(self, values: Mapping[str, object]) -> tuple[Item, str] | None:
        """(the parent's key, the entry's map key), or None: the child names no whole parent."""
        key = self._parent_key(values)
        name = None if self.codec.key is None else values.get(self.codec.key)
        return None if key is None or name is None else (key, str(name))

    def needs(self, values: Mapping[str, object]) -> bool:
        """Whether ``values`` (a key's fields) lack a field that says where the old copy is."""
        return self._where(values) is None

    def _member(self, builder: ExpressionBuilder, name: str) -> str:
        return f"{builder.attribute(self.codec.attribute)}.{builder.attribute(name)}"

    def _read(self, table_name: str, key: Item, name: str) -> Plan[Item | None]:
        builder = ExpressionBuilder()
        request = get_item(table_name, key, consistent=True)
        params = {
            **request.params,
            "ProjectionExpression": self._member(builder, name),
            **builder.params(),
        }
        found = yield Send(Request("GetItem", params))
        if isinstance(found, Unread):
            return {}  # planned by explain: taken to be there
        item: Item | None = found.get("Item")
        entry = ((item or {}).get(self.codec.attribute) or {}).get("M", {}).get(name)
        return None if entry is None else {"entry": entry}

    def _removal(
        self, table_name: str, key: Item, name: str, entry: AttributeValue | None
    ) -> Request:
        builder = ExpressionBuilder()
        member = self._member(builder, name)
        held = [f"attribute_exists({member})"]
        if entry is not None:
            held += equal_to(builder, member, entry)
        return update_item(table_name, key, f"REMOVE {member}",
                           ConditionExpression=" AND ".join(held), **builder.params())  # fmt: skip

    def removals(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        where = self._where(values)
        if where is None:
            return []
        key, name = where
        found = yield from self._read(table_name, key, name)
        return [] if found is None else [self._removal(table_name, key, name, None)]

    def moving(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        """The writes that move the child's map entry, read now, into an item (none: none).

        The item put as the entry is stored (every attribute kept), where no item is; the entry
        removed while it is as read.
        """
        where = self._where(values)
        if where is None:
            return []
        key, name = where
        found = yield Send(consistent_get(key, table_name))
        raw = None if isinstance(found, Unread) else found.get("Item")
        entry = ((raw or {}).get(self.codec.attribute) or {}).get("M", {}).get(name)
        if raw is None or entry is None:
            return []
        values = self.parent.values_of(self.parent.decode(raw))
        (new,) = self.items.children_of(values, {**raw, self.codec.attribute: {"M": {name: entry}}})
        removal = self._removal(table_name, key, name, entry)
        return [plan_put(self.child, None, table_name, item=new, overwrite=False), removal]


#: a list member that is a child's old copy: (its position, the member as stored, its item)
_Member = tuple[int, AttributeValue, Item]


class _Unlisted(_Unembedded):
    """Children once in the parent's list (``Embedded()``): the members that are this child.

    A list member has no key: the parent is read whole (consistent), each member made into the
    item it becomes, and those whose key is the child's are its old copies.
    """

    def _members(
        self, table_name: str, values: Mapping[str, object]
    ) -> Plan[tuple[Item, list[_Member]]]:
        key = self._parent_key(values)
        if key is None:
            return {}, []
        found = yield Send(consistent_get(key, table_name))
        raw = None if isinstance(found, Unread) else found.get("Item")
        attribute = self.codec.attribute
        members = ((raw or {}).get(attribute) or {}).get("L")
        if raw is None or not members:
            return key, []
        parent_values = self.parent.values_of(self.parent.decode(raw))
        mine = self.child.primary_key(values)
        primary = self.child.table.primary_attributes
        matched: list[_Member] = []
        for at, entry in enumerate(members):
            try:
                one = {**raw, attribute: {"L": [entry]}}
                (item,) = self.items.children_of(parent_values, one)
            except CodecError:
                continue  # another child's member, which does not decode: not this one
            if {a: item.get(a) for a in primary} == mine:
                matched.append((at, entry, item))
        return key, matched

    def needs(self, values: Mapping[str, object]) -> bool:
        return self._parent_key(values) is None

    def _slots_removal(self, table_name: str, key: Item, members: Sequence[_Member]) -> Request:
        """UpdateItem removing ``members`` from the list, while each slot holds its member."""
        builder = ExpressionBuilder()
        attribute = builder.attribute(self.codec.attribute)
        slots = [f"{attribute}[{at}]" for at, _, _ in members]
        held = [c for (_, entry, _), slot in zip(members, slots, strict=True)
                for c in equal_to(builder, slot, entry)]  # fmt: skip
        return update_item(table_name, key, "REMOVE " + ", ".join(slots), retry="token",
                           ConditionExpression=" AND ".join(held), **builder.params())  # fmt: skip

    def removals(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        key, members = yield from self._members(table_name, values)
        return [self._slots_removal(table_name, key, members)] if members else []

    def moving(self, table_name: str, values: Mapping[str, object]) -> Plan[list[Request]]:
        key, members = yield from self._members(table_name, values)
        if not members:
            return []
        new = members[0][2]
        put = plan_put(self.child, None, table_name, item=new, overwrite=False)
        return [put, self._slots_removal(table_name, key, members)]


class OldCopies:
    """The old copies the writes of one table's children remove (see the module docstring)."""

    def __init__(self, table: Table, table_name: str) -> None:
        self.table = table
        self.table_name = table_name

    @functools.cached_property
    def _by_child(self) -> dict[type, tuple[_Moved | _Unembedded, ...]]:
        found: dict[type, list[_Moved | _Unembedded]] = {}
        for info in self.table.models.values():
            for rel in relationships_of(info).values():
                if not isinstance(rel, HasManyRelation) or rel.was is None:
                    continue
                if rel.embedded is not None or rel.target_info.table is not self.table:
                    continue  # into Embedded: see embedded_removals; across tables: not here
                codec = rel.was.embedded_codec(rel)
                mover: _Moved | _Unembedded = (
                    _Moved(rel, rel.was)
                    if codec is None
                    else _Unembedded(rel, codec)
                    if codec.key is not None
                    else _Unlisted(rel, codec)
                )
                found.setdefault(rel.target_cls, []).append(mover)
        return {cls: tuple(movers) for cls, movers in found.items()}

    def of(self, obj: object) -> tuple[_Moved | _Unembedded, ...]:
        """What moves ``obj``'s model's items (empty: a model no ``was=`` concerns)."""
        return self._by_child.get(type(obj), ())

    def removals(self, obj: object) -> Plan[list[Request]]:
        """The writes that remove ``obj``'s old copies (reading where they are, as needed)."""
        movers = self.of(obj)
        if not movers:
            return []
        return (yield from self.removals_of(type(obj), self._values(obj)))

    def removals_of(self, cls: type, values: Mapping[str, object]) -> Plan[list[Request]]:
        """The same, of the child of class ``cls`` with ``values`` (its key fields at least)."""
        found: list[Request] = []
        for mover in self._by_child.get(cls, ()):
            found += yield from mover.removals(self.table_name, values)
        return found

    def _completed(self, cls: type, key: Mapping[str, object]) -> Plan[Mapping[str, object] | None]:
        """A delete by key's fields, with those the old copy's place needs read when missing.

        The old place may need fields the table key does not give (the parent's, for a child
        out of a map; an old key template's): the item is read then (one consistent GetItem)
        and its fields taken. No item stored under the key: the old copy cannot be found, and
        the delete is refused with what to do instead.
        """
        movers = self._by_child.get(cls, ())
        if not any(m.needs(key) for m in movers):
            return key
        info: ModelInfo[Any] = self.table.info(cls)
        found = yield Send(consistent_get(info.primary_key(key), self.table_name))
        if isinstance(found, Unread):
            return None  # planned by explain: the item is not read
        stored: Item | None = found.get("Item")
        if stored is None:
            rels = ", ".join(sorted({m.rel.qualname for m in movers}))
            raise ItemNotFoundError(
                f"db.delete({info.name}, **key): no {info.name} item is stored under "
                f"{dict(key)!r}, and the key alone does not say where its old copy is ({rels} "
                "declares was=): delete the object instead, db.delete(obj), as loaded through "
                "its parent",
                operation="DeleteItem",
            )
        return {**info.values_of(info.decode(stored)), **key}

    def _values(self, obj: object) -> dict[str, object]:
        return self.table.info(type(obj)).values_of(obj)

    def write(
        self, obj: object, request: Request, *, key: Mapping[str, object] | None = None
    ) -> Plan[dict[str, Any] | None]:
        """``request`` (a put or a delete of ``obj``) sent with the removals of its old copies.

        ``db.delete(Model, **key)`` gives the class as ``obj`` and the key's fields as ``key``.

        A removal refused because the old copy went meanwhile (a migration moved it, another
        writer removed it) while the write itself would go: planned again from what is stored
        now, up to ``_ATTEMPTS`` times.
        """
        values = None if key is None else (yield from self._completed(cast("type", obj), key))
        for attempt in range(1, _ATTEMPTS + 1):
            if key is None:
                also = yield from self.removals(obj)
            elif values is None:
                also = []  # planned by explain: the old copy's place is not known
            else:
                also = yield from self.removals_of(cast("type", obj), values)
            try:
                return (yield from send_with(request, also))
            except TransactionCanceledError as exc:
                if attempt == _ATTEMPTS or not _only_removals(exc):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def plain_deletes(
        self, objs: Sequence[object]
    ) -> Plan[tuple[list[Item], list[tuple[object, list[Request]]]]]:
        """The old copies of ``objs`` to delete: (keys a batch can delete, each child's others)."""
        keys: list[Item] = []
        others: list[tuple[object, list[Request]]] = []
        for obj in objs:
            if not self.of(obj):
                continue
            mine: list[Request] = []
            for request in (yield from self.removals(obj)):
                if _plain_delete(request):
                    keys.append(request.params["Key"])
                else:
                    mine.append(request)
            if mine:
                others.append((obj, mine))
        return keys, others

    def remove_each(self, others: Sequence[tuple[object, list[Request]]]) -> Plan[None]:
        """Send each child's conditioned removals (``others``), concurrently, each on its own.

        A removal refused because its old copy went meanwhile is planned again for that child
        alone (see :meth:`remove_now`): nothing is left to remove then. Every child is tried;
        the first real failure is raised after all of them.
        """
        if not others:
            return
        outcomes = yield from together(
            [(self.table_name, self._caught(obj, planned)) for obj, planned in others]
        )
        for outcome in outcomes:
            if outcome is not None:
                raise outcome

    def _caught(self, obj: object, planned: Sequence[Request]) -> Plan[DynormError | None]:
        try:
            yield from self.remove_now(obj, planned)
        except DynormError as exc:
            return exc
        return None

    def after_batch(self, objs: Sequence[object]) -> Plan[None]:
        """Remove the old copies of ``objs``, whose new items a batch has just written.

        After the batch, so that no child is ever missing to a reader of both layouts: plain
        deletions of old items in BatchWriteItem, the conditioned ones (old items found through
        an index, map entries) one request (or transaction) each child, concurrently.
        """
        keys, others = yield from self.plain_deletes(objs)
        yield from self.remove_each(others)
        if keys:
            yield WriteBatch(tuple({"DeleteRequest": {"Key": key}} for key in keys))

    def ensure_moved(self, obj: object) -> Plan[None]:
        """Move ``obj``'s old copy into the new layout when its new item is not stored yet.

        For an update in a transaction, which cannot move it within the transaction (the new
        item would be written twice): one consistent GetItem, and the move when needed.
        """
        movers = self.of(obj)
        if not movers:
            return
        key = self.table.info(type(obj)).key_of(obj)
        stored = yield Send(consistent_get(key, self.table_name))
        if isinstance(stored, Unread) or stored.get("Item") is not None:
            return
        for mover in movers:
            moving = yield from mover.moving(self.table_name, self._values(obj))
            if moving:
                yield from _move(moving)
                return

    def update(self, obj: object, request: Request, *, upsert: bool) -> Plan[dict[str, Any] | None]:
        """Send the update ``request`` of ``obj``, moving its old copy into the new layout first.

        The update is sent conditioned on the new item existing, with the removals of old
        copies; refused for that (the refusal carries no stored item), the old copy (if any) is
        moved, and ``request`` is sent again (with ``upsert``, it creates the item when there
        is no copy at all). A removal refused because the old copy went meanwhile (the
        migration moved it) is planned again from what is stored now, as :meth:`write` does.
        """
        movers = self.of(obj)
        if not movers:
            alone: dict[str, Any] = yield Send(request)
            return alone
        guarded = _existing(request, self.table.info(type(obj)).table.pk)
        try:
            if request.params.get("ReturnValues") in _OLD_VALUES:
                # A transaction returns no item: the update goes alone, then the removals.
                also = yield from self.removals(obj)
                response: dict[str, Any] = yield Send(guarded)
                yield from self.remove_now(obj, also)
                return response
            return (yield from self.write(obj, guarded))
        except ConditionFailedError as exc:
            if exc.item is not None:
                raise  # the new item is there: its own condition refused the update
        for mover in movers:
            moving = yield from mover.moving(self.table_name, self._values(obj))
            if moving:
                yield from _move(moving)
                break
        return (yield from send_with(request, ()))

    def remove_now(self, obj: object, planned: Sequence[Request] | None = None) -> Plan[None]:
        """Remove ``obj``'s old copies (``planned``: as planned already), the write being done.

        A removal refused on its condition means the old copy went meanwhile (a migration moved
        it, another writer removed it, or a list's members moved): planned again from what is
        stored now, up to ``_ATTEMPTS`` times; nothing left to remove is done.
        """
        also = list(planned) if planned is not None else (yield from self.removals(obj))
        for attempt in range(1, _ATTEMPTS + 1):
            if not also:
                return
            try:
                yield from send_with(also[0], also[1:])
                return
            except (ConditionFailedError, TransactionCanceledError) as exc:
                refused = isinstance(exc, ConditionFailedError) or _all_refused(exc)
                if attempt == _ATTEMPTS or not refused:
                    raise
            also = yield from self.removals(obj)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def embedded_removals(self, rel: HasManyRelation[Any], child: object) -> tuple[Request, ...]:
        """Into ``Embedded`` from a collection (``was=``): the DeleteItem of ``child``'s old item.

        The embedded child is an object of the model its items were stored as (which stays
        declared while ``was=`` is), so its old key is its model's key.
        """
        if rel.was is None or rel.embedded is None or rel.was.embedded_codec(rel) is not None:
            return ()
        info = self.table.models.get(type(child).__name__)
        if info is None or info.cls is not type(child):
            return ()
        return (plan_delete(info, info.key_of(child), self.table_name),)


def _move(requests: Sequence[Request]) -> Plan[None]:
    """Send a move (the new item put, the old copy removed) as one transaction.

    Refused by a condition, another writer moved (or changed, or removed) the child first: the
    write that needed the move goes on against what is stored now.
    """
    try:
        yield Send(transact_write([transact_action(r) for r in requests]))
    except TransactionCanceledError as exc:
        if not any(r.code == "ConditionalCheckFailed" for r in exc.reasons):
            raise


def _only_removals(exc: TransactionCanceledError) -> bool:
    """Whether only the removals (every action after the first) failed, on their conditions."""
    first, *rest = exc.reasons or (None,)
    return (
        first is not None
        and first.code in ("None", "")
        and any(r.code == "ConditionalCheckFailed" for r in rest)
        and all(r.code in ("None", "", "ConditionalCheckFailed") for r in rest)
    )


def _all_refused(exc: TransactionCanceledError) -> bool:
    """Whether every action that failed was refused on its condition."""
    return bool(exc.failed) and all(r.code == "ConditionalCheckFailed" for r in exc.failed)


def _plain_delete(request: Request) -> bool:
    """Whether ``request`` is a DeleteItem with no condition (a BatchWriteItem can send it)."""
    return request.operation == "DeleteItem" and "ConditionExpression" not in request.params


def _existing(request: Request, pk: str) -> Request:
    """``request`` (an UpdateItem) conditioned, besides, on its item existing."""
    params = dict(request.params)
    names = dict(params.get("ExpressionAttributeNames") or {})
    names["#dynorm_exists"] = pk
    exists = "attribute_exists(#dynorm_exists)"
    held = params.get("ConditionExpression")
    params["ConditionExpression"] = exists if not held else f"({held}) AND {exists}"
    params["ExpressionAttributeNames"] = names
    # The refusal carries the stored item (none: the new item is not stored yet).
    params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return Request(request.operation, params, retry=request.retry)
