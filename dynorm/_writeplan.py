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
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from ._chunks import TRANSACT_MAX, key_id
from ._codec import AttributeValue, Item
from ._errors import (
    ConditionFailedError,
    CopiesIncompleteError,
    DatabaseError,
    DefinitionError,
    ExpressionError,
    ItemNotFoundError,
    LimitExceededError,
    TransactionCanceledError,
)
from ._expressions import Condition, ExpressionBuilder, equal_to, extend_condition, top_field
from ._model import ModelInfo
from ._plans import Request, existence_check
from ._relations import HasMany
from ._state import held_items, state_of
from ._steps import CANCELLED, Fetch, Plan, Send, SendAll, WriteBatch, read_all
from ._strategies import ChildChange
from ._table import Table
from ._writes import plan_delete, plan_put, plan_put_keeping, plan_update

__all__ = ["Action", "WritePlanner"]

logger = logging.getLogger("dynorm")

#: How often a parent's write is retried when its children change while their copies are
#: rewritten in the parent's transaction (each retry reads the children again).
COPY_ATTEMPTS: Final = 3

_TRANSACT_KINDS: Final = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}


def transact_action(request: Request) -> dict[str, Any]:
    """The TransactWriteItems action for a single-item write (which takes no ReturnValues)."""
    params = {k: v for k, v in request.params.items() if k != "ReturnValues"}
    return {_TRANSACT_KINDS.get(request.operation, "ConditionCheck"): params}


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


@attrs.frozen
class _Copying:
    """One parent's copies: its values and the relationships whose children hold them."""

    info: ModelInfo[Any]
    values: Mapping[str, object]
    rels: tuple[HasMany[Any, Any], ...]

    def copied(self) -> dict[str, object]:
        """The parent's values of the fields its children copy."""
        return {f: self.values[f] for rel in self.rels for f in rel.copies}


class WritePlanner:
    """Plans every write to one table, asking each relationship's strategy for its rules."""

    def __init__(self, table: Table, table_name: str) -> None:
        self.table = table
        self.table_name = table_name
        self._incoming: dict[type, tuple[HasMany[Any, Any], ...]] = {}

    # -- which rules apply -------------------------------------------------------------------------

    @staticmethod
    def copying(info: ModelInfo[Any]) -> tuple[HasMany[Any, Any], ...]:
        """The relationships whose children carry copies of ``info``'s fields."""
        return tuple(r for r in info.relationships.values() if isinstance(r, HasMany) and r.copies)

    def incoming(self, info: ModelInfo[Any]) -> tuple[HasMany[Any, Any], ...]:
        """The relationships of other models whose children (of ``info``'s model) hold copies."""
        found = self._incoming.get(info.cls)
        if found is None:
            self.table.check()  # every relationship resolved: the answer cannot change later
            found = tuple(
                rel
                for model in self.table.models.values()
                for rel in model.relationships.values()
                if isinstance(rel, HasMany) and rel.copies and rel.target_cls is info.cls
            )
            self._incoming[info.cls] = found
        return found

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
    ) -> Plan[int]:
        """Store ``obj`` (its copies filled); returns how many children's copies were rewritten.

        ``parents`` are objects to take copied values from instead of reading them.
        """
        (obj,) = yield from self.fill_copies([obj], parents)
        info = self.table.info(type(obj))
        request = self.put_request(obj, condition=condition, overwrite=overwrite)
        rels = self.copying(info)
        if not rels:
            yield Send(request)
            return 0
        copying = _Copying(info, info.values_of(obj), rels)
        count, _ = yield from self._write_parent(copying, request, copying.copied())
        return count

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
        removals = tuple(remove)
        set_values = dict(set or {})
        current = info.values_of(obj)
        set_values.update((yield from self._moved_copies(info, current, set_values, removals)))
        request = plan_update(
            info,
            current,
            self.table_name,
            set=set_values,
            remove=removals,
            add=add,
            condition=condition,
        )
        rels = self.copying(info)
        copied = {f for rel in rels for f in rel.copies}
        paths = [*set_values, *removals, *(add or {})]
        _refuse_paths_inside(info, paths, copied)
        if not copied & {top_field(p) for p in paths}:
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
        after = {**current, **set_values, **dict.fromkeys(removals)}
        copying = _Copying(info, after, rels)
        try:
            _, response = yield from self._write_parent(
                copying, request, {f: after[f] for f in copied & {*set_values, *removals}}
            )
        except ConditionFailedError as exc:
            if not (yield from self._exists(info, current)):
                raise _not_found(info, current, exc) from exc
            raise
        if response is not None:
            item = response["Attributes"]
            return item
        # Written in a transaction, which returns no item: read it back.
        found = yield Send(_get_item(info.primary_key(current), self.table_name))
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
        yield Send(request)
        if not cascade:
            return 0
        if not _covers_links(info, values):
            return 0  # addressed by key alone and the links need other fields: see _target
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
        info = self.table.info(type(parent))
        rels = self.copying(info)
        if not rels:
            return 0
        found = yield Send(_get_item(info.key_of(parent), self.table_name))
        stored = found.get("Item")
        if stored is None:
            raise _not_found(info, info.values_of(parent), None)
        values = info.values_of(info.decode(stored))
        copying = _Copying(info, values, rels)
        children = yield from self._children(copying)
        _check_fanout(copying, children)
        return (yield from self._rewrite_after(copying, children))

    # -- many items --------------------------------------------------------------------------------

    def put_all(self, objs: Iterable[object]) -> Plan[int]:
        """Store many objects with BatchWriteItem; returns how many items were written.

        Every object is encoded and checked before the first request; objects with the same key
        are written once (the last one wins), as DynamoDB refuses a batch naming a key twice.
        """
        filled = yield from self.fill_copies(list(objs))
        writes: dict[Any, dict[str, Any]] = {}
        parents: dict[Any, _Copying] = {}
        for obj in filled:
            info = self.table.info(type(obj))
            item = self._whole_item(info, obj)
            ident = key_id({a: item[a] for a in self.table.primary_attributes})
            writes[ident] = {"PutRequest": {"Item": item}}
            rels = self.copying(info)
            if rels:
                parents[ident] = _Copying(info, info.values_of(obj), rels)
        yield from self._keep_embedded(filled, writes)
        changed = yield from self._changed_parents(list(parents.values()))
        for copying in changed:
            _check_fanout(copying, (yield from self._children(copying)))
        if writes:
            yield WriteBatch(tuple(writes.values()))
        for copying in changed:
            # Read again after the parent is written: see _rewrite_after.
            yield from self._rewrite_after(copying, (yield from self._children(copying)))
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
                writes[ident]["PutRequest"]["Item"][codec.attribute] = found

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
        """One TransactWriteItems for ``actions``, with every copy their writes change."""
        puts = [a.obj for a in actions if a.kind == "put"]
        filled = iter((yield from self.fill_copies(puts)))
        items: list[dict[str, Any]] = []
        copies: list[tuple[_Copying, Mapping[str, object]]] = []
        for action in actions:
            obj = next(filled) if action.kind == "put" else action.obj
            request, copied = yield from self._action_request(action, obj)
            items.append(transact_action(request))
            if copied is not None:
                copies.append(copied)
        for copying, changed in copies:
            children = yield from self._children(copying)
            items += _copy_actions(self, copying, children, changed)
        if len(items) > TRANSACT_MAX:
            raise LimitExceededError(
                f"this transaction needs {len(items)} actions, counting the denormalized copies "
                f"its writes change; DynamoDB allows {TRANSACT_MAX}. Write those parents with "
                "db.put (which rewrites copies in batches) or split the transaction"
            )
        _check_transaction_keys(self.table, items)
        if items:
            yield Send(Request("TransactWriteItems", {"TransactItems": items}))

    def _action_request(
        self, action: Action, obj: object
    ) -> Plan[tuple[Request, tuple[_Copying, Mapping[str, object]] | None]]:
        info = self.table.info(type(obj))
        values = info.values_of(obj)
        rels = self.copying(info)
        if action.kind == "put":
            request = self.put_request(obj, condition=action.condition, overwrite=action.overwrite)
            copying = _Copying(info, values, rels) if rels else None
            return request, (None if copying is None else (copying, values))
        if action.kind == "update":
            set_values = dict(action.set or {})
            moved = yield from self._moved_copies(info, values, set_values, action.remove)
            set_values.update(moved)
            request = plan_update(
                info,
                values,
                self.table_name,
                set=set_values,
                remove=action.remove,
                add=action.add,
                condition=action.condition,
            )
            copied = {f for rel in rels for f in rel.copies}
            paths = [*set_values, *action.remove, *(action.add or {})]
            _refuse_paths_inside(info, paths, copied)
            after = {**values, **set_values, **dict.fromkeys(action.remove)}
            changed = {f: after[f] for f in copied & {*set_values, *action.remove}}
            if not changed:
                return request, None
            return request, (_Copying(info, after, rels), changed)
        request = plan_delete(info, info.key_of(obj), self.table_name, condition=action.condition)
        if action.kind == "check":
            if action.condition is None:  # pragma: no cover - Transaction.check requires one
                raise ExpressionError("a condition check needs a condition")
            params = dict(request.params)
            return Request("ConditionCheck", params), None
        return request, None

    # -- denormalized copies: children -------------------------------------------------------------

    def fill_copies(
        self, objs: Sequence[object], parents: Sequence[object] = ()
    ) -> Plan[list[object]]:
        """``objs`` with every copy of a parent's field filled from that parent (read by key).

        Parents among ``objs`` themselves are used as they are written (a parent and its new
        children in one ``put_all``); the others are read with one BatchGetItem.
        """
        wants: list[tuple[int, HasMany[Any, Any], Item]] = []
        for i, obj in enumerate(objs):
            info = self.table.info(type(obj))
            for rel in self.incoming(info):
                key = _parent_key(rel, info.values_of(obj))
                if key is not None:
                    wants.append((i, rel, key))
        if not wants:
            return list(objs)
        given = {key_id(self.table.info(type(o)).key_of(o)): o for o in (*parents, *objs)}
        missing = tuple({key_id(k): k for _, _, k in wants if key_id(k) not in given}.values())
        stored: dict[Any, Item] = {}
        if missing:
            stored = yield Fetch(missing)
        out = list(objs)
        for i, rel, key in wants:
            parent_values = _parent_values(rel, given.get(key_id(key)), stored.get(key_id(key)))
            if parent_values is None:
                info = self.table.info(type(out[i]))
                raise ItemNotFoundError(
                    f"{info.name} carries copies of {rel.owner_name} fields ({rel.qualname}), "
                    f"but its {rel.owner_name} with key {key!r} is not stored; put the parent "
                    "first (or in the same put_all), or add the child with db.add(parent, "
                    f"{rel.qualname}, child)"
                )
            out[i] = rel.via.prepare_child(rel, parent_values, out[i])
        return out

    def _moved_copies(
        self,
        info: ModelInfo[Any],
        current: Mapping[str, object],
        set_values: Mapping[str, object],
        removals: Sequence[str],
    ) -> Plan[dict[str, object]]:
        """Copies to set when an update moves a child to another parent (or out of one)."""
        changes: dict[str, object] = {}
        for rel in self.incoming(info):
            links = set(rel.link)
            if not links & {*set_values, *removals}:
                continue
            after = {**current, **set_values, **dict.fromkeys(removals)}
            key = _parent_key(rel, after)
            if key is None:
                continue  # out of every parent's collection: its copies stay as they were
            response = yield Send(_get_item(key, self.table_name))
            parent_values = _parent_values(rel, None, response.get("Item"))
            if parent_values is None:
                raise ItemNotFoundError(
                    f"{info.name} would move to the {rel.owner_name} with key {key!r}, which is "
                    f"not stored, so its copies ({rel.qualname}) cannot be filled; put the "
                    f"{rel.owner_name} first"
                )
            changes.update({child: parent_values[parent] for parent, child in rel.copies.items()})
        return changes

    # -- denormalized copies: parents --------------------------------------------------------------

    def _write_parent(
        self, copying: _Copying, request: Request, new: Mapping[str, object]
    ) -> Plan[tuple[int, dict[str, Any] | None]]:
        """Write a parent and the copies its write changes; (copies rewritten, its response)."""
        # Keeps request.retry: its own condition decides how a lost reply is settled (the added
        # one holds again once this write is stored, so a plain write stays safe to resend).
        optimistic = attrs.evolve(request, params=dict(request.params))
        extend_condition(optimistic.params, lambda b: _unchanged(b, copying.info, new))  # type: ignore[arg-type]
        try:
            response = yield Send(optimistic)
        except ConditionFailedError:
            pass  # a copied field changed (or the caller's condition failed: decided below)
        else:
            return 0, response
        for _ in range(COPY_ATTEMPTS):
            children = yield from self._children(copying)
            _check_fanout(copying, children)
            if 1 + sum(len(c) for _, c in children) > TRANSACT_MAX:
                response = yield Send(request)
                # Read again now the parent is written: a copy an older write changed after the
                # first read is seen (and no older write can change one any more).
                children = yield from self._children(copying)
                return (yield from self._rewrite_after(copying, children)), response
            actions = [transact_action(request), *_copy_actions(self, copying, children, new)]
            try:
                yield Send(Request("TransactWriteItems", {"TransactItems": actions}))
            except TransactionCanceledError as exc:
                if any(r.index == 0 for r in exc.failed):
                    # The parent's own write was refused: the same error as when sent alone.
                    raise ConditionFailedError(
                        f"{request.operation}: the condition did not hold; nothing was written "
                        "(neither the item nor its denormalized copies)",
                        code=exc.failed[0].code,
                        operation=request.operation,
                    ) from exc
                continue  # a child changed since it was read: read them again
            count = sum(len(_stale(rel, copying.values, c)) for rel, c in children)
            _log_rewritten(count)
            return count, None
        raise DatabaseError(
            f"{copying.info.name}: its children kept changing while their copies were rewritten "
            f"({COPY_ATTEMPTS} attempts); nothing was written. Try again"
        )

    def _children(self, copying: _Copying) -> Plan[list[tuple[HasMany[Any, Any], list[Any]]]]:
        out = []
        for rel in copying.rels:
            read = rel.children_read(self.table_name, copying.values, consistent=True)
            decode = functools.partial(rel.target_info.decode_if, index=read.index)
            out.append((rel, (yield from read_all(read, decode))))
        return out

    def _changed_parents(self, parents: Sequence[_Copying]) -> Plan[list[_Copying]]:
        """The parents whose stored copied fields differ from the ones about to be written."""
        if not parents:
            return []
        keys = tuple(p.info.primary_key(p.values) for p in parents)
        stored = yield Fetch(keys)
        changed = []
        for parent, key in zip(parents, keys, strict=True):
            item = stored.get(key_id(key))
            if item is not None and any(
                item.get(f, _NULL) != parent.info.codec.encode_field[f](parent.values[f])
                for rel in parent.rels
                for f in rel.copies
            ):
                changed.append(parent)
        return changed

    def _rewrite_after(
        self, copying: _Copying, children: Sequence[tuple[HasMany[Any, Any], list[Any]]]
    ) -> Plan[int]:
        """Rewrite stale copies after the parent is written, in transactions of 99 children.

        Each transaction also checks that the parent still holds the values written: a newer
        write of the parent (which rewrites the copies itself) makes an older one's remaining
        transactions fail instead of overwriting newer copies. The first failure of another kind
        cancels every transaction still in flight, and CopiesIncompleteError says how many
        copies were not rewritten.
        """
        stale = [(rel, c, ch) for rel, cs in children for c, ch in _stale(rel, copying.values, cs)]
        if not stale:
            return 0
        check = _parent_check(self, copying)
        chunks = [stale[i : i + TRANSACT_MAX - 1] for i in range(0, len(stale), TRANSACT_MAX - 1)]
        requests = tuple(
            Request(
                "TransactWriteItems",
                {"TransactItems": [check, *(_child_update(self, r, c, ch) for r, c, ch in chunk)]},
            )
            for chunk in chunks
        )
        outcomes = yield SendAll(requests)
        done = pending = 0
        first: BaseException | None = None
        for chunk, outcome in zip(chunks, outcomes, strict=True):
            if isinstance(outcome, dict):
                done += len(chunk)
            elif isinstance(outcome, TransactionCanceledError) and any(
                r.index == 0 for r in outcome.failed
            ):
                continue  # superseded by a newer write of the parent, which owns the copies now
            else:
                pending += len(chunk)
                if first is None and outcome is not CANCELLED:
                    first = outcome
        if pending:
            raise CopiesIncompleteError(
                f"{copying.info.name} {_describe_key(copying)} is written, but {pending} of "
                f"{len(stale)} denormalized copies were not rewritten ({first}); call "
                "db.sync_copies(parent) to repair them, or write the parent again",
                pending=pending,
                rewritten=done,
            ) from first if isinstance(first, BaseException) else None
        _log_rewritten(done)
        return done

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
        yield from self._planner.put(obj, parents=(self._parent,))
        return obj

    def delete(self, obj: object) -> Plan[None]:
        yield from self._planner.delete(obj)


def _log_rewritten(count: int) -> None:
    if count:
        logger.info("rewrote %d denormalized copies", count)


# -- pure helpers -------------------------------------------------------------------------------

_NULL: Final = {"NULL": True}


def _get_item(key: Item, table_name: str) -> Request:
    return Request("GetItem", {"TableName": table_name, "Key": key, "ConsistentRead": True})


def _not_found(
    info: ModelInfo[Any], values: Mapping[str, object], exc: DatabaseError | None
) -> ItemNotFoundError:
    return ItemNotFoundError(
        f"update of {info.name}: no item with key {info.primary_key(values)!r}",
        code=exc.code if exc is not None else "",
        operation="UpdateItem",
    )


def _describe_key(copying: _Copying) -> str:
    fields = copying.info.identity_fields()
    return "(" + ", ".join(f"{f}={copying.values[f]!r}" for f in fields) + ")"


def _refuse_paths_inside(info: ModelInfo[Any], paths: Sequence[str], copied: set[str]) -> None:
    inside = [p for p in paths if top_field(p) in copied and top_field(p) != p]
    if inside:
        field = top_field(inside[0])
        raise ExpressionError(
            f"{info.name}: {inside[0]!r} changes part of {field!r}, which its children "
            f"keep copies of; give the whole {field!r} so the copies follow"
        )


def _unchanged(builder: ExpressionBuilder, info: ModelInfo[Any], new: Mapping[str, object]) -> str:
    """The stored item is new, or already holds ``new`` in the copied fields."""
    equal = [
        part
        for field, value in new.items()
        for part in equal_to(builder, builder.name(field), info.codec.encode_field[field](value))
    ]
    missing = f"attribute_not_exists({builder.name(info.table.pk)})"
    return f"{missing} OR ({' AND '.join(equal)})" if equal else missing


def _stale(
    rel: HasMany[Any, Any], parent_values: Mapping[str, object], children: Sequence[object]
) -> list[tuple[object, dict[str, object]]]:
    """Each child whose copies differ from the parent's values, with the fields to rewrite."""
    out = []
    for child in children:
        changes = {
            child_field: parent_values[parent_field]
            for parent_field, child_field in rel.copies.items()
            if getattr(child, child_field) != parent_values[parent_field]
        }
        if changes:
            out.append((child, changes))
    return out


def _check_fanout(
    copying: _Copying, children: Sequence[tuple[HasMany[Any, Any], list[Any]]]
) -> None:
    for rel, found in children:
        stale = _stale(rel, copying.values, found)
        limit = rel.via.fanout_limit()
        if limit is not None and len(stale) > limit:
            raise LimitExceededError(
                f"{rel.qualname}: {len(stale)} children carry copies that would need rewriting, "
                f"over max_fanout={limit}; nothing was written. Raise max_fanout or store the "
                "field only on the parent"
            )


def _child_update(
    planner: WritePlanner, rel: HasMany[Any, Any], child: object, changes: Mapping[str, object]
) -> dict[str, Any]:
    info = rel.target_info
    request = plan_update(info, info.values_of(child), planner.table_name, set=changes)
    return transact_action(request)


def _copy_actions(
    planner: WritePlanner,
    copying: _Copying,
    children: Sequence[tuple[HasMany[Any, Any], list[Any]]],
    changed: Mapping[str, object],
) -> list[dict[str, Any]]:
    """Transaction actions keeping children's copies equal to the parent's values.

    Stale children are rewritten; the others are checked to still hold the values, so a copy
    an older write of the parent changes meanwhile cancels the transaction instead of staying.
    """
    actions = []
    for rel, found in children:
        stale = {id(c): ch for c, ch in _stale(rel, copying.values, found)}
        info = rel.target_info
        for child in found:
            if id(child) in stale:
                actions.append(_child_update(planner, rel, child, stale[id(child)]))
                continue
            builder = ExpressionBuilder()
            parts = [
                part
                for parent_field, child_field in rel.copies.items()
                for part in equal_to(
                    builder,
                    builder.name(child_field),
                    info.codec.encode_field[child_field](copying.values[parent_field]),
                )
            ]
            check = {
                "TableName": planner.table_name,
                "Key": info.key_of(child),
                "ConditionExpression": " AND ".join(parts),
                **builder.params(),
            }
            actions.append({"ConditionCheck": check})
    del changed  # every copy is kept equal, not only the changed fields'
    return actions


def _parent_check(planner: WritePlanner, copying: _Copying) -> dict[str, Any]:
    """A ConditionCheck that the stored parent holds the copied values being spread."""
    builder = ExpressionBuilder()
    new = copying.copied()
    parts = [
        part
        for field, value in new.items()
        for part in equal_to(
            builder, builder.name(field), copying.info.codec.encode_field[field](value)
        )
    ]
    return {
        "ConditionCheck": {
            "TableName": planner.table_name,
            "Key": copying.info.primary_key(copying.values),
            "ConditionExpression": " AND ".join(parts),
            **builder.params(),
        }
    }


def _parent_key(rel: HasMany[Any, Any], child_values: Mapping[str, object]) -> Item | None:
    """The key of the parent whose collection a child with these values is in (None: none)."""
    parent = rel.owner_info
    values = {parent: child_values[child] for child, parent in rel.link.items()}
    if any(v is None for v in values.values()):
        return None
    missing = [f for f in parent.identity_fields() if f not in values]
    if missing:
        raise DefinitionError(
            f"{rel.qualname}: a {rel.target_name} written on its own must get its copies from "
            f"its {parent.name}, but its fields do not give the {parent.name} key field(s) "
            f"{', '.join(missing)}; add them with db.add(parent, {rel.qualname}, child)"
        )
    return parent.primary_key(values)


def _parent_values(
    rel: HasMany[Any, Any], given: object | None, stored: Item | None
) -> dict[str, object] | None:
    parent = rel.owner_info
    if given is not None and type(given) is parent.cls:
        return parent.values_of(given)
    if stored is None:
        return None
    return parent.values_of(parent.decode(stored))


def _covers_links(info: ModelInfo[Any], values: Mapping[str, object]) -> bool:
    return all(
        all(f in values for f in rel.link.values())
        for rel in info.relationships.values()
        if isinstance(rel, HasMany)
    )


def _key_of_put(planner: WritePlanner, request: Request) -> Item:
    item = request.params["Item"]
    return {a: item[a] for a in planner.table.primary_attributes}


def _check_transaction_keys(table: Table, items: Sequence[dict[str, Any]]) -> None:
    """Copies added to a transaction must not touch an item one of its actions writes."""
    seen: set[Any] = set()
    for action in items:
        ((_, params),) = action.items()
        key = params.get("Key") or {a: params["Item"][a] for a in table.primary_attributes}
        ident = key_id(key)
        if ident in seen:
            raise LimitExceededError(
                f"two actions of this transaction touch the item {key!r} (a write and one of "
                "the copies it changes); DynamoDB allows one action per item in a transaction"
            )
        seen.add(ident)
