"""The write planner: every write path is planned here, so each strategy's rules hold on all.

``put``, ``put_all``, ``update``, ``delete``, ``delete_all``, ``add``, ``remove`` and every
transaction action go through :class:`WritePlanner`.

What a strategy requires of a write is asked of the strategy (:mod:`dynorm._strategies`):

- a parent whose children carry **denormalized copies** rewrites the copies that its write
  changes. Its write is first sent with a condition that the copied fields are unchanged (or the
  item is new): when that holds, no child is read. Otherwise the children are read, refused past
  ``max_fanout`` with nothing written, and rewritten — in the parent's own transaction when parent
  and children fit in one (children left as they were are checked in it too), else after the
  parent in transactions that each check the parent still holds the values written, so an older
  write can never overwrite a newer one's copies;
- a **child** written on its own (``put``, ``put_all``, an ``update`` that moves it to another
  parent) gets its copies from its parent, read by key;
- **embedded** children are kept by ``put`` and written whole by ``put_all``;
- a **cascading delete** removes the children its strategies store as items of their own.

Plans are generators of steps (:mod:`dynorm._steps`); the Database runs them.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from ._chunks import TRANSACT_MAX, key_id
from ._codec import AttributeValue, Item
from ._copies import (
    Copying,
    CopyPlanner,
    Filled,
    check_fanout,
    parent_holds,
    transaction_actions,
    unchanged,
    with_pending,
)
from ._errors import (
    ConditionFailedError,
    DatabaseError,
    DefinitionError,
    ExpressionError,
    ItemNotFoundError,
    LimitExceededError,
)
from ._expressions import Condition, ExpressionBuilder, extend_condition, top_field
from ._model import ModelInfo
from ._plans import Request, consistent_get, existence_check, transact_write
from ._relations import HasMany
from ._state import held_items, state_of
from ._steps import Fetch, Plan, Send, WriteBatch, read_all
from ._strategies import ChildChange
from ._table import Table
from ._writes import plan_delete, plan_put, plan_put_keeping, plan_update, transact_action

__all__ = ["Action", "WritePlanner"]


@attrs.frozen
class Action:
    """One write collected by a transaction, planned when the transaction commits."""

    kind: str  # "put", "update", "delete" or "check"
    obj: object
    condition: Condition | None = None
    overwrite: bool = True
    set: Mapping[str, object] | None = None
    remove: tuple[str, ...] = ()
    add: Mapping[str, object] | None = None


class WritePlanner:
    """Plans every write to one table, asking each relationship's strategy for its rules."""

    def __init__(self, table: Table, table_name: str) -> None:
        self.table = table
        self.table_name = table_name
        self.copier = CopyPlanner(table, table_name)

    # -- which rules apply -------------------------------------------------------------------------
    # -- single items ------------------------------------------------------------------------------

    def put_request(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> Request:
        """The PutItem (or, to keep embedded children, UpdateItem) that stores ``obj``."""
        info = self.table.info(type(obj))
        if not info.embedded:
            return plan_put(info, obj, self.table_name, condition=condition, overwrite=overwrite)
        embedded: dict[str, AttributeValue | None] = {}
        empty: dict[str, AttributeValue] = {}
        for rel in info.embedded:
            codec = rel.embedded
            if codec is None:  # pragma: no cover - info.embedded holds resolved ones only
                continue
            children = held_items(obj, rel.name)
            embedded[codec.attribute] = codec.encode(children) if children is not None else None
            empty[codec.attribute] = codec.empty()
        return plan_put_keeping(
            info,
            obj,
            self.table_name,
            embedded=embedded,
            empty=empty,
            condition=condition,
            overwrite=overwrite,
        )

    def put(
        self,
        obj: object,
        *,
        condition: Condition | None = None,
        overwrite: bool = True,
        parents: Sequence[object] = (),
    ) -> Plan[tuple[object, int]]:
        """Store ``obj`` (copies filled); returns it as stored and how many copies were rewritten.

        ``parents`` are objects to take copied values from instead of reading them.
        """
        filled = yield from self.copier.fill([obj], parents)
        (obj,) = filled.objs
        info = self.table.info(type(obj))
        request = self.put_request(obj, condition=condition, overwrite=overwrite)
        rels = self.copier.copying(info)
        count = 0
        if not rels:
            yield Send(request)
        else:
            copying = Copying(info, info.values_of(obj), rels)
            count, _ = yield from self.copier.write_parent(copying, request, copying.copied())
        yield from self.copier.recheck(filled)
        return obj, count

    def update(
        self,
        obj: object,
        *,
        set: Mapping[str, object] | None = None,  # noqa: A002 - DynamoDB's SET
        remove: Iterable[str] = (),
        add: Mapping[str, object] | None = None,
        condition: Condition | None = None,
    ) -> Plan[Item]:
        """Change some fields; returns the stored item afterwards (ALL_NEW)."""
        info = self.table.info(type(obj))
        current = info.values_of(obj)
        action = Action("update", obj, condition=condition, set=set, remove=tuple(remove), add=add)
        request, copying = yield from self._update_request(action)
        if copying is None:
            try:
                response = yield Send(request)
            except ConditionFailedError as exc:
                # A plain update checks only that the item exists; with a condition of the
                # caller's, a consistent read tells the failures apart (on failure only).
                if condition is None or not (yield from self._exists(info, current)):
                    raise _not_found(info, current, exc) from exc
                raise
            item: Item = response["Attributes"]
            return item
        try:
            _, response = yield from self.copier.write_parent(copying, request, copying.copied())
        except ConditionFailedError as exc:
            if not (yield from self._exists(info, current)):
                raise _not_found(info, current, exc) from exc
            raise
        if response is not None:
            item = response["Attributes"]
            return item
        # Written in a transaction, which returns no item: read it back.
        found = yield Send(consistent_get(info.primary_key(current), self.table_name))
        stored: Item | None = found.get("Item")
        if stored is None:  # pragma: no cover - deleted between the write and the read
            raise _not_found(info, current, None)
        return stored

    def delete(
        self,
        target: object,
        *,
        condition: Condition | None = None,
        cascade: bool = False,
        key: Mapping[str, object] | None = None,
    ) -> Plan[int]:
        """Delete one item (and with ``cascade``, its children); returns how many children went."""
        info, values = self._target(target, key)
        request = plan_delete(info, info.primary_key(values), self.table_name, condition=condition)
        if not cascade:
            yield Send(request)
            return 0
        # The item as it was stored tells which children are its (the object, or the key
        # alone, may not: a stale object, or links through fields outside the key).
        response = yield Send(
            Request(
                request.operation,
                {**request.params, "ReturnValues": "ALL_OLD"},
                retry=request.retry,
            )
        )
        old = response.get("Attributes")
        if old is None:
            return 0  # nothing was stored under this key, so no child of it either
        values = info.values_of(info.decode(old))
        deletes: list[dict[str, Any]] = []
        for rel in info.relationships.values():
            if not isinstance(rel, HasMany):
                continue
            read = rel.via.cascade_read(rel, self.table_name, values)
            if read is None:
                continue
            keys = yield from read_all(read, rel.target_info.primary_key_of_item)
            deletes += [{"DeleteRequest": {"Key": k}} for k in keys]
        unique = list({key_id(d["DeleteRequest"]["Key"]): d for d in deletes}.values())
        if unique:
            yield WriteBatch(tuple(unique))
        return len(unique)

    def delete_request(
        self, target: object, *, condition: Condition | None = None, **key: object
    ) -> Request:
        """The DeleteItem for ``db.delete(obj)`` or ``db.delete(Model, **key)``."""
        info, values = self._target(target, key)
        return plan_delete(info, info.primary_key(values), self.table_name, condition=condition)

    def _target(
        self, target: object, key: Mapping[str, object] | None
    ) -> tuple[ModelInfo[Any], dict[str, object]]:
        if isinstance(target, type):
            model: ModelInfo[Any] = self.table.info(target)
            model.check_key_values(key or {})
            return model, dict(key or {})
        if key:
            raise TypeError("db.delete(obj) takes no key fields; use db.delete(Model, **key)")
        info = self.table.info(type(target))
        return info, info.values_of(target)

    def sync_copies(self, parent: object) -> Plan[int]:
        """Make every copy of ``parent``'s fields equal what is stored for the parent now."""
        return (yield from self.copier.sync(parent))

    # -- many items --------------------------------------------------------------------------------

    def put_all(self, objs: Iterable[object], *, reads: bool = True) -> Plan[int]:
        """Store many objects with BatchWriteItem; returns how many items were written.

        Every object is encoded and checked before the first request; objects with the same key
        are written once (the last one wins), as DynamoDB refuses a batch naming a key twice.
        ``reads=False`` plans the batches alone, objects as they are (for ``explain``): no
        parent read for copies, no stored embedded children kept, no copies rewritten.
        """
        objs = list(objs)
        checked = (yield from self.copier.fill(objs)) if reads else Filled(objs, ())
        filled = checked.objs
        writes: dict[Any, dict[str, Any]] = {}
        parents: dict[Any, Copying] = {}
        for obj in filled:
            info = self.table.info(type(obj))
            item = self._whole_item(info, obj)
            ident = key_id({a: item[a] for a in self.table.primary_attributes})
            writes[ident] = {"PutRequest": {"Item": item}}
            rels = self.copier.copying(info)
            if rels:
                parents[ident] = Copying(info, info.values_of(obj), rels)
        if not reads:
            yield WriteBatch(tuple(writes.values()))
            return len(writes)
        winners = {key_id(self.table.info(type(o)).key_of(o)): o for o in filled}
        yield from self._keep_embedded(list(winners.values()), writes)
        changed = yield from self.copier.changed_parents(list(parents.values()))
        tokens = {}
        for copying in changed:
            check_fanout(copying, (yield from self.copier.children(copying)))
            # Marked pending until its copies are rewritten (see CopyPlanner.settle).
            ident = key_id(copying.info.primary_key(copying.values))
            tokens[ident] = secrets.token_hex(8)
            put = writes[ident]["PutRequest"]
            put["Item"] = with_pending(put["Item"], tokens[ident])
        if writes:
            yield WriteBatch(tuple(writes.values()))
        for copying in changed:
            # Read again after the parent is written: see CopyPlanner.rewrite_after.
            children = yield from self.copier.children(copying)
            yield from self.copier.rewrite_after(copying, children)
            ident = key_id(copying.info.primary_key(copying.values))
            yield from self.copier.settle(copying, tokens[ident])
        yield from self.copier.recheck(checked)
        return len(writes)

    def delete_all(self, objs: Iterable[object]) -> Plan[int]:
        """Delete many items with BatchWriteItem; returns how many keys were deleted."""
        writes: dict[Any, dict[str, Any]] = {}
        for obj in objs:
            key = self.table.info(type(obj)).key_of(obj)
            writes[key_id(key)] = {"DeleteRequest": {"Key": key}}
        if writes:
            yield WriteBatch(tuple(writes.values()))
        return len(writes)

    def _whole_item(self, info: ModelInfo[Any], obj: object) -> Item:
        """The item PutRequest writes: every field, and embedded children written whole."""
        item = info.encode(obj)
        for rel in info.embedded:
            codec = rel.embedded
            if codec is None:  # pragma: no cover - info.embedded holds resolved ones only
                continue
            children = held_items(obj, rel.name)
            if children is None and state_of(obj) is not None:
                raise DefinitionError(
                    f"put_all replaces whole items, and {rel.qualname} of {obj!r} was read "
                    "without its children, so they would be lost; load them first, or use "
                    "db.put (which keeps them)"
                )
            item[codec.attribute] = codec.encode(children or [])
        if info.embedded:
            info.check_item(item)  # again, with the children: every item before any request
        return item

    def _keep_embedded(
        self, objs: Sequence[object], writes: Mapping[Any, dict[str, Any]]
    ) -> Plan[None]:
        """Objects built in code hold no embedded children: keep the stored ones, if any.

        A new object is stored with none (an empty map or list, which later adds need); an
        object that replaces a stored item keeps the children that item holds (one consistent
        BatchGetItem reads them for every such object).
        """
        fresh = [
            (o, rel.embedded)
            for o in objs
            if state_of(o) is None
            for rel in self.table.info(type(o)).embedded
            if rel.embedded is not None
        ]
        if not fresh:
            return
        keys = {key_id(self.table.info(type(o)).key_of(o)): o for o, _ in fresh}
        stored = yield Fetch(tuple(self.table.info(type(o)).key_of(o) for o in keys.values()))
        for obj, codec in fresh:
            ident = key_id(self.table.info(type(obj)).key_of(obj))
            found = stored.get(ident, {}).get(codec.attribute)
            if found is not None and ident in writes:
                item = writes[ident]["PutRequest"]["Item"]
                item[codec.attribute] = found
                self.table.info(type(obj)).check_item(item)

    # -- relationships -----------------------------------------------------------------------------

    def add(self, parent: object, rel: HasMany[Any, Any], child: object) -> Plan[object]:
        """Add ``child`` to ``parent``'s relationship, however its strategy stores it."""
        return (yield from rel.via.plan_add(rel, self._change(parent, rel, child)))

    def remove(self, parent: object, rel: HasMany[Any, Any], child: object) -> Plan[int | None]:
        """Remove ``child`` from ``parent``'s relationship; returns a list child's old position."""
        return (yield from rel.via.plan_remove(rel, self._change(parent, rel, child)))

    def _change(self, parent: object, rel: HasMany[Any, Any], child: object) -> ChildChange:
        held = held_items(parent, rel.name)
        return ChildChange(parent, child, held, self.table_name, _ItemWrites(self, parent))

    # -- transactions ------------------------------------------------------------------------------

    def transaction(self, actions: Sequence[Action]) -> Plan[None]:
        """One TransactWriteItems for ``actions``, with every copy their writes change.

        A parent written in the transaction whose copied fields do not change (one consistent
        BatchGetItem tells) is sent on that condition, and its children stay out of it; one
        whose copied fields change brings an action for each of its children (a rewrite, or a
        check that the copy holds). Children among the transaction's own writes get their
        copies from the parents as the transaction leaves them.
        """
        after = [o for o in map(self._after, actions) if o is not None]
        puts = [a.obj for a in actions if a.kind == "put"]
        checked = yield from self.copier.fill(puts, after)
        filled = iter(checked.objs)
        items: list[dict[str, Any]] = []
        parents: list[tuple[int, Copying]] = []
        for action in actions:
            obj = next(filled) if action.kind == "put" else action.obj
            request, copying = yield from self._action_request(action, obj)
            if copying is not None:
                parents.append((len(items), copying))
            items.append(transact_action(request))
        changed = yield from self.copier.changed_parents([c for _, c in parents])
        touched = {key_id(_key_of(self.table, action)) for action in items}
        for position, copying in parents:
            if copying not in changed:
                ((_, params),) = items[position].items()
                extend_condition(params, functools.partial(_unchanged_of, copying))
                continue
            children = yield from self.copier.children(copying)
            items += [
                action
                for action in transaction_actions(self.copier, copying, children)
                if key_id(_key_of(self.table, action)) not in touched
            ]
        # Parents read for children's copies must still hold them when the transaction commits.
        checks = {key_id(b.key): parent_holds(self.table_name, b) for b in checked.basis}
        items += [check for ident, check in checks.items() if ident not in touched]
        if len(items) > TRANSACT_MAX:
            raise LimitExceededError(
                f"this transaction needs {len(items)} actions, counting the denormalized copies "
                f"its writes change; DynamoDB allows {TRANSACT_MAX}. Write those parents with "
                "db.put (which rewrites copies in batches) or split the transaction"
            )
        if items:
            yield Send(transact_write(items))

    def _after(self, action: Action) -> object | None:
        """A parent as the action leaves it (for the copies of children written beside it)."""
        info = self.table.info(type(action.obj))
        if action.kind == "put":
            return action.obj
        if action.kind != "update" or not self.copier.copying(info):
            return None
        fields = {k: v for k, v in (action.set or {}).items() if top_field(k) == k}
        fields.update({k: None for k in action.remove if top_field(k) == k})
        return attrs.evolve(action.obj, **fields)  # type: ignore[misc]

    def _action_request(self, action: Action, obj: object) -> Plan[tuple[Request, Copying | None]]:
        info = self.table.info(type(obj))
        values = info.values_of(obj)
        rels = self.copier.copying(info)
        if action.kind == "put":
            request = self.put_request(obj, condition=action.condition, overwrite=action.overwrite)
            return request, (Copying(info, values, rels) if rels else None)
        if action.kind == "update":
            return (yield from self._update_request(action))
        request = plan_delete(info, info.key_of(obj), self.table_name, condition=action.condition)
        if action.kind == "check":
            if action.condition is None:  # pragma: no cover - Transaction.check requires one
                raise ExpressionError("a condition check needs a condition")
            params = dict(request.params)
            return Request("ConditionCheck", params), None
        return request, None

    def _update_request(self, action: Action) -> Plan[tuple[Request, Copying | None]]:
        """The UpdateItem of an update, and the copies it changes (None when it changes none).

        A move to another parent takes that parent's values (read by key).
        """
        info = self.table.info(type(action.obj))
        set_values = dict(action.set or {})
        self._refuse_copies(info, [*set_values, *action.remove, *(action.add or {})])
        values = info.values_of(action.obj)
        moved = yield from self.copier.moved(info, values, set_values, action.remove)
        return self.update_request(action, moved)

    def update_request(
        self, action: Action, moved: Mapping[str, object] | None = None
    ) -> tuple[Request, Copying | None]:
        """The UpdateItem of an update whose move copies are ``moved``; checked, never sent.

        A copy of the child's may not be given a value of its own, nor a copied field of the
        parent an ``add=``, nor a path inside one.
        """
        info = self.table.info(type(action.obj))
        values = info.values_of(action.obj)
        set_values = dict(action.set or {})
        paths = [*set_values, *action.remove, *(action.add or {})]
        self._refuse_copies(info, paths)
        set_values.update(moved or {})
        request = plan_update(
            info,
            values,
            self.table_name,
            set=set_values,
            remove=action.remove,
            add=action.add,
            condition=action.condition,
        )
        rels = self.copier.copying(info)
        copied = {f for rel in rels for f in rel.copies}
        _refuse_paths_inside(info, paths, copied)
        _refuse_add_of_copied(info, action.add, copied)
        changed = copied & {*set_values, *action.remove}
        if not changed:
            return request, None
        after = {**values, **set_values, **dict.fromkeys(action.remove)}
        return request, Copying(info, after, rels, only=frozenset(changed))

    def _refuse_copies(self, info: ModelInfo[Any], paths: Sequence[str]) -> None:
        """A copy follows its parent: an update may not give it a value of its own."""
        for rel in self.copier.incoming(info):
            for parent_field, child_field in rel.copies.items():
                if any(top_field(p) == child_field for p in paths):
                    raise ExpressionError(
                        f"{info.name}.{child_field} is a copy of {rel.owner_name}.{parent_field} "
                        f"({rel.qualname}) and follows it; change {rel.owner_name}.{parent_field} "
                        "instead (db.sync_copies(parent) repairs a copy that differs)"
                    )

    def _exists(self, info: ModelInfo[Any], values: Mapping[str, object]) -> Plan[bool]:
        pk_attr, _ = self.table.key_attributes(None)
        response = yield Send(existence_check(self.table_name, info.primary_key(values), pk_attr))
        return "Item" in response


class _ItemWrites:
    """The planner's put and delete, as strategies see them (see ItemWrites)."""

    def __init__(self, planner: WritePlanner, parent: object) -> None:
        self._planner = planner
        self._parent = parent

    def put(self, obj: object) -> Plan[object]:
        stored, _ = yield from self._planner.put(obj, parents=(self._parent,))
        return stored

    def delete(self, obj: object) -> Plan[None]:
        yield from self._planner.delete(obj)


# -- pure helpers -------------------------------------------------------------------------------


def _not_found(
    info: ModelInfo[Any], values: Mapping[str, object], exc: DatabaseError | None
) -> ItemNotFoundError:
    return ItemNotFoundError(
        f"update of {info.name}: no item with key {info.primary_key(values)!r}",
        code=exc.code if exc is not None else "",
        operation="UpdateItem",
    )


def _refuse_paths_inside(info: ModelInfo[Any], paths: Sequence[str], copied: set[str]) -> None:
    inside = [p for p in paths if top_field(p) in copied and top_field(p) != p]
    if inside:
        field = top_field(inside[0])
        raise ExpressionError(
            f"{info.name}: {inside[0]!r} changes part of {field!r}, which its children "
            f"keep copies of; give the whole {field!r} so the copies follow"
        )


def _refuse_add_of_copied(
    info: ModelInfo[Any], add: Mapping[str, object] | None, copied: set[str]
) -> None:
    added = [p for p in (add or {}) if top_field(p) in copied]
    if added:
        raise ExpressionError(
            f"{info.name}: add= changes {added[0]!r}, which its children keep copies of, by an "
            "amount the copies cannot follow; give the new value with set="
        )


def _unchanged_of(copying: Copying, builder: ExpressionBuilder) -> str:
    return unchanged(builder, copying.info, copying.copied())


def _key_of(table: Table, action: Mapping[str, Any]) -> Item:
    """The primary key of the item a transaction action touches."""
    ((_, params),) = action.items()
    key: Item = params.get("Key") or {a: params["Item"][a] for a in table.primary_attributes}
    return key
