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
  parent conditioned on the entry being there.
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
from typing import TYPE_CHECKING, Any

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import ConditionFailedError, KeyTemplateError
from dynorm.core.expressions import ExpressionBuilder, equal_to
from dynorm.core.keys import KeyTemplate, shard_number, typed_key_text
from dynorm.core.requests import Request, consistent_get, get_item, transact_write, update_item
from dynorm.core.steps import Plan, Send, Unread, WriteBatch

from .oldlayout import EmbeddedItems, ItemMove
from .relations import HasManyRelation, relationships_of
from .together import send_with
from .writes import plan_delete, plan_put, transact_action

if TYPE_CHECKING:
    from .embedded import EmbeddedCodec
    from .model import ModelInfo
    from .table import Table

__all__ = ["OldCopies"]

#: The ReturnValues of an update that a transaction cannot give back.
_OLD_VALUES = frozenset({"ALL_OLD", "UPDATED_OLD"})


def _delete_if(table_name: str, key: Item, condition: str, params: Mapping[str, Any]) -> Request:
    """DeleteItem of ``key`` while ``condition`` (with its placeholders ``params``) holds."""
    return Request(
        "DeleteItem",
        {"TableName": table_name, "Key": key, "ConditionExpression": condition, **params},
    )


def _same_as(read: Mapping[str, AttributeValue]) -> tuple[str, dict[str, Any]]:
    """A condition that the stored item is still ``read`` (every attribute equal)."""
    builder = ExpressionBuilder()
    parts = [f"attribute_exists({builder.attribute(next(iter(read)))})"]
    for name, value in read.items():
        parts += equal_to(builder, builder.attribute(name), value)
    return " AND ".join(parts), builder.params()


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

    def old_index_key(self, obj: object) -> Item:
        """The old copy's key attributes of the old layout (its table key, or index key)."""
        values = self.child.values_of(obj)
        sk = self.child.key_templates(self.rel.via.index)[1]
        assert sk is not None  # noqa: S101 - a move between collections needs sort keys
        assert self.old_sk is not None  # noqa: S101 - likewise
        return {
            self.old_pk: {"S": self._old_partition(values)},
            self.old_sk: {"S": sk.format(values)},
        }

    def find(self, table_name: str, obj: object) -> Plan[list[Item]]:
        """The primary keys of ``obj``'s old copies other than its new item (reads if needed)."""
        if self.same_item:
            return []
        new = self.child.key_of(obj)
        old = self.old_index_key(obj)
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

    def removals(self, table_name: str, obj: object) -> Plan[list[Request]]:
        keys = yield from self.find(table_name, obj)
        if self.source.index is None:
            return [plan_delete(self.child, k, table_name) for k in keys]
        # Found through the index: deleted only while it is still this child's old copy.
        builder = ExpressionBuilder()
        pk = builder.attribute(self.child.table.pk)
        same = " AND ".join(
            f"{builder.attribute(a)} = {builder.value(v)}"
            for a, v in self.old_index_key(obj).items()
        )
        condition = f"attribute_not_exists({pk}) OR ({same})"
        return [_delete_if(table_name, k, condition, builder.params()) for k in keys]

    def moving(self, table_name: str, obj: object) -> Plan[list[Request]]:
        """The writes that move ``obj``'s old copy, read now, into the new layout (none: none).

        The new item put as the old one is stored, with its new keys, where no item is; the old
        one deleted while it is as read.
        """
        keys = yield from self.find(table_name, obj)
        for key in keys:
            found = yield Send(consistent_get(key, table_name))
            raw = None if isinstance(found, Unread) else found.get("Item")
            new = self.move.moved_item(dict(raw)) if raw is not None else None
            if raw is None or new is None:
                continue
            delete = _delete_if(table_name, key, *_same_as(raw))
            return [plan_put(self.child, None, table_name, item=new, overwrite=False), delete]
        return []


class _Unembedded:
    """Children once embedded in the parent (``Embedded(key=...)``): the old copy, an entry."""

    def __init__(self, rel: HasManyRelation[Any], codec: EmbeddedCodec) -> None:
        self.rel, self.codec = rel, codec
        self.child: ModelInfo[Any] = rel.target_info
        self.parent: ModelInfo[Any] = rel.owner_info
        self.items = EmbeddedItems(rel, codec)

    def _where(self, obj: object) -> tuple[Item, str] | None:
        """(the parent's key, the entry's map key), or None: the child names no whole parent."""
        if self.codec.key is None:
            return None  # a list child has no key to find it by
        values = self.child.values_of(obj)
        parent_values = {p: values[c] for c, p in self.rel.link.items() if c in values}
        try:
            key = self.parent.primary_key(parent_values)
        except (KeyError, KeyTemplateError):
            return None
        return key, str(values.get(self.codec.key, getattr(obj, self.codec.key, "")))

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

    def removals(self, table_name: str, obj: object) -> Plan[list[Request]]:
        where = self._where(obj)
        if where is None:
            return []
        key, name = where
        found = yield from self._read(table_name, key, name)
        return [] if found is None else [self._removal(table_name, key, name, None)]

    def moving(self, table_name: str, obj: object) -> Plan[list[Request]]:
        """The writes that move ``obj``'s map entry, read now, into an item (none: none).

        The item put as the entry is stored (every attribute kept), where no item is; the entry
        removed while it is as read.
        """
        where = self._where(obj)
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
                mover = _Moved(rel, rel.was) if codec is None else _Unembedded(rel, codec)
                found.setdefault(rel.target_cls, []).append(mover)
        return {cls: tuple(movers) for cls, movers in found.items()}

    def of(self, obj: object) -> tuple[_Moved | _Unembedded, ...]:
        """What moves ``obj``'s model's items (empty: a model no ``was=`` concerns)."""
        return self._by_child.get(type(obj), ())

    def removals(self, obj: object) -> Plan[list[Request]]:
        """The writes that remove ``obj``'s old copies (reading where they are, as needed)."""
        found: list[Request] = []
        for mover in self.of(obj):
            found += yield from mover.removals(self.table_name, obj)
        return found

    def after_batch(self, objs: Sequence[object]) -> Plan[None]:
        """Remove the old copies of ``objs``, whose new items a batch has just written.

        After the batch, so that no child is ever missing to a reader of both layouts: plain
        deletions of old items in BatchWriteItem, the conditioned ones (old items found through
        an index, map entries) one request each.
        """
        batch: list[dict[str, Any]] = []
        for obj in objs:
            if not self.of(obj):
                continue
            for request in (yield from self.removals(obj)):
                if _plain_delete(request):
                    batch.append({"DeleteRequest": {"Key": request.params["Key"]}})
                else:
                    yield Send(request)
        if batch:
            yield WriteBatch(tuple(batch))

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
            moving = yield from mover.moving(self.table_name, obj)
            if moving:
                yield Send(transact_write([transact_action(r) for r in moving]))
                return

    def update(self, obj: object, request: Request, *, upsert: bool) -> Plan[dict[str, Any] | None]:
        """Send the update ``request`` of ``obj``, moving its old copy into the new layout first.

        The update is sent conditioned on the new item existing, with the removals of old
        copies; refused for that, the old copy (if any) is moved, and ``request`` is sent again
        (with ``upsert``, it creates the item when there is no copy at all).
        """
        movers = self.of(obj)
        if not movers:
            alone: dict[str, Any] = yield Send(request)
            return alone
        also = yield from self.removals(obj)
        guarded = _existing(request, self.table.info(type(obj)).table.pk)
        try:
            if request.params.get("ReturnValues") in _OLD_VALUES:
                # A transaction returns no item: the update goes alone, then the removals.
                response: dict[str, Any] = yield Send(guarded)
                yield from send_with(also[0], also[1:]) if also else ()
                return response
            return (yield from send_with(guarded, also))
        except ConditionFailedError:
            stored = yield Send(consistent_get(request.params["Key"], self.table_name))
            if isinstance(stored, Unread) or stored.get("Item") is not None:
                raise  # the new item is there: its own condition refused the update
        for mover in movers:
            moving = yield from mover.moving(self.table_name, obj)
            if moving:
                yield Send(transact_write([transact_action(r) for r in moving]))
                break
        return (yield from send_with(request, ()))

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
    return Request(request.operation, params, retry=request.retry)
