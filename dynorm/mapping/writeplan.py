"""The write planner: every write path is planned here, so each strategy's rules hold on all.

``put``, ``put_all``, ``update``, ``delete``, ``delete_all``, ``add``, ``remove`` and every
transaction action go through :class:`WritePlanner`.

What a strategy requires of a write is asked of the strategy (:mod:`dynorm.mapping.strategies`):

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
- a **cascading delete** removes the tree under an item: the children its strategies store as
  items of their own, recursively (:mod:`dynorm.mapping.cascade`).

Plans are generators of steps (:mod:`dynorm.core.steps`); the Database runs them.
"""

from __future__ import annotations

import datetime
import functools
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

import attrs
import msgspec

from dynorm.core.chunks import item_key_id, key_id
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import (
    ConditionFailedError,
    DatabaseError,
    DefinitionError,
    ExpressionError,
    ItemNotFoundError,
    TransactionCanceledError,
    VersionConflictError,
)
from dynorm.core.expressions import Condition, ExpressionBuilder, extend_condition, top_field
from dynorm.core.requests import Request, consistent_get, transact_write
from dynorm.core.stamps import VersionCheck, Write, utc_now
from dynorm.core.steps import FromRead, Plan, Send, Unread, WriteBatch, on_table

from .cascade import DEFAULT_MAX_ITEMS, CascadeReport, plan_cascade
from .copies import (
    Copying,
    CopyPlanner,
    Filled,
    check_fanout,
    parent_holds,
    request_with_pending,
    transaction_actions,
    unchanged,
    with_pending,
)
from .keepput import keeps_stored, send_keeping
from .model import ModelInfo, ModelTable, info_of
from .oldcopies import OldCopies
from .oldembedded import old_embedded_of
from .oldtransact import ATTEMPTS, Refused, TransactActions, delete_later, old_copies
from .relations import HasManyRelation, embedded_of
from .state import held_items, state_of
from .strategies import ChildChange
from .table import Table
from .upgrading import stale_item, stale_put
from .writes import (
    ReturnValues,
    UpdateOps,
    plan_check,
    plan_delete,
    plan_put,
    plan_put_keeping,
    plan_update,
    transact_action,
    transact_once,
)

__all__ = ["Action", "WritePlanner", "returned_fields"]

T = TypeVar("T")


class Action(msgspec.Struct, frozen=True):
    """One write collected by a transaction, planned when the transaction commits."""

    kind: Write | Literal["check"]
    obj: object
    condition: Condition | None = None
    overwrite: bool = True
    #: What an update does.
    ops: UpdateOps = msgspec.field(default_factory=UpdateOps)
    upsert: bool = False
    returns: ReturnValues = "ALL_NEW"
    #: The time written into the item's timestamps (None: when planned).
    at: datetime.datetime | None = None


class WritePlanner:
    """Plans every write to one table, asking each relationship's strategy for its rules."""

    def __init__(
        self, table: Table, table_name: str, name_of: Callable[[ModelTable], str] | None = None
    ) -> None:
        self.table = table
        self.table_name = table_name
        #: The names of the connection's other tables (a cascade follows relationships there).
        self.name_of = name_of
        self.copier = CopyPlanner(table, table_name)
        #: the old copies (relationships declaring was=) a write of a child removes
        self.old_copies = OldCopies(table, table_name)

    # -- which rules apply -------------------------------------------------------------------------
    # -- single items ------------------------------------------------------------------------------

    def stamped(self, obj: T, now: datetime.datetime | None = None) -> T:
        """``obj`` as a put stores it: its next version and its timestamps (a copy, if any)."""
        info = self.table.info(type(obj))
        values = info.stamps.put_values(obj, now or utc_now()) if info.stamps else {}
        return attrs.evolve(obj, **values) if values else obj  # type: ignore[misc]

    def sample_item(self, obj: object, now: datetime.datetime | None = None) -> Item:
        """The whole item a put of ``obj`` stores: next version, timestamps, keys, children.

        Checked against DynamoDB's limits, never written, so no version check applies (any
        model may be given, versioned or not): for exports and examples.
        """
        stamped = self.stamped(obj, now)
        return self._whole_item(self.table.info(type(stamped)), stamped)

    def put_request(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> Request:
        """The PutItem (or, to keep embedded children, UpdateItem) that stores ``obj``."""
        return self._put_request(self.stamped(obj), condition=condition, overwrite=overwrite)

    def _put_request(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> Request:
        """The write of ``obj`` as stamped (its version is the one to store)."""
        info = self.table.info(type(obj))
        version = info.stamps.check("put", obj)
        kept = [codec.attribute for codec in old_embedded_of(info)]  # was=Embedded: as stored
        if not embedded_of(info) and not kept:
            return plan_put(
                info,
                obj,
                self.table_name,
                condition=condition,
                overwrite=overwrite,
                version=version,
            )
        embedded: dict[str, AttributeValue | None] = {}
        empty: dict[str, AttributeValue] = {}
        for rel in embedded_of(info):
            codec = rel.embedded
            if codec is None:  # pragma: no cover - embedded_of(info) holds resolved ones only
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
            kept=kept,
            condition=condition,
            overwrite=overwrite,
            version=version,
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
        original = obj
        if self.copier.incoming(self.table.info(type(obj))):
            # Every value is checked before the parent is read for the copies: a value that
            # fails a check sends nothing, not even that read.
            self.put_request(obj, condition=condition, overwrite=overwrite)
        filled = yield from self.copier.fill([obj], parents)
        (obj,) = filled.objs
        info = self.table.info(type(obj))
        obj = self.stamped(obj)
        request = self._put_request(obj, condition=condition, overwrite=overwrite)
        request = _placed(request, filled.placeholders(0))
        rels = self.copier.copying(info)
        count = 0
        try:
            if not rels:
                yield from self.old_copies.write(obj, request)
            else:
                copying = Copying(info, info.values_of(obj), rels)
                count, _ = yield from self.copier.write_parent(copying, request, copying.copied())
                yield from self.old_copies.after_batch([obj])  # was=: its old copies, after
        except ConditionFailedError as exc:
            stale = yield from stale_put(info, info.key_of(obj), exc, self.table_name)
            if stale is not None:
                raise stale from exc
            check = info.stamps.check("put", obj)
            if check is None:
                raise
            raise (yield from self._refused(info, info.key_of(obj), check, exc, "put")) from exc
        info.stamps.keep(original, info.stamps.written(obj))
        yield from self.copier.recheck(filled)
        return obj, count

    def update(
        self,
        obj: object,
        ops: UpdateOps,
        *,
        condition: Condition | None = None,
        upsert: bool = False,
        returns: ReturnValues = "ALL_NEW",
        exactly_once: bool = False,
    ) -> Plan[Item | None]:
        """Apply ``ops``; returns the item as ``returns`` asks (None: nothing asked for).

        ``upsert`` creates the item from ``obj`` when none is stored. ``exactly_once`` sends
        the UpdateItem as a TransactWriteItems of that one action (see :func:`transact_once`),
        which returns no item: the item is read back (one consistent GetItem) unless
        ``returns`` is ``"NONE"``; old values cannot be asked for.
        """
        info = self.table.info(type(obj))
        current = info.values_of(obj)
        action = Action(
            "update",
            obj,
            condition=condition,
            ops=ops,
            upsert=upsert,
            returns=returns,
            at=utc_now(),
        )
        if exactly_once:
            self._refuse_once(info, action)  # before anything is read or sent
        request, copying = yield from self._update_request(action)
        check = info.stamps.check("update", obj)
        guard = info.entity_guard()
        try:
            if copying is None and not exactly_once:
                response = yield from self.old_copies.update(obj, request, upsert=upsert)
            else:
                # was=: a child still in the old layout moved first (none: nothing is sent).
                yield from self.old_copies.ensure_moved(obj)
                response = yield from self._send_update(request, copying, once=exactly_once)
        except ConditionFailedError as exc:
            if (
                check is None
                and condition is None
                and copying is None
                and guard is None
                and info.versions is None
            ):
                # A plain update checks only that the item exists.
                raise _not_found(info, info.primary_key(current), exc) from exc
            # Else the stored item tells the failures apart (read on failure only).
            error = yield from self._refused(info, info.key_of(obj), check, exc, "update")
            raise error from exc
        info.stamps.keep(obj, _after_update(info, action))
        if response is not None:
            returned: Item | None = response.get("Attributes")
            return returned
        if returns == "NONE":
            return None
        # Written in a transaction, which returns no item: read it back.
        found = yield Send(consistent_get(info.primary_key(current), self.table_name))
        if isinstance(found, Unread):
            return None  # planned by explain
        stored: Item | None = found.get("Item")
        if stored is None:  # pragma: no cover - deleted between the write and the read
            raise _not_found(info, info.primary_key(current), None)
        return stored

    def _send_update(
        self, request: Request, copying: Copying | None, *, once: bool
    ) -> Plan[dict[str, Any] | None]:
        """An update sent exactly once (a one-action transaction), or with its copies."""
        if once or copying is None:
            return (yield from _send_once(request))
        _, response = yield from self.copier.write_parent(copying, request, copying.copied())
        return response

    def delete(
        self,
        target: object,
        *,
        condition: Condition | None = None,
        cascade: bool = False,
        key: Mapping[str, object] | None = None,
        max_items: int | None = DEFAULT_MAX_ITEMS,
    ) -> Plan[CascadeReport | None]:
        """Delete one item; with ``cascade``, the whole tree under it (see mapping/cascade.py).

        Returns what a cascade deleted (None without ``cascade``).
        """
        info, values, check = self._target(target, key)
        if cascade:
            return (
                yield from plan_cascade(
                    self.table_name,
                    info,
                    values,
                    condition=condition,
                    check=check,
                    max_items=max_items,
                    refused=self._refused,
                    name_of=self.name_of,
                )
            )
        request = plan_delete(
            info, info.primary_key(values), self.table_name, condition=condition, version=check
        )
        try:
            by_key = values if isinstance(target, type) else None  # db.delete(Model, **key)
            yield from self.old_copies.write(target, request, key=by_key)
        except ConditionFailedError as exc:
            if check is None and info.entity_guard() is None:
                raise
            key_ = info.primary_key(values)
            raise (yield from self._refused(info, key_, check, exc, "delete")) from exc
        return None

    def delete_request(
        self, target: object, *, condition: Condition | None = None, **key: object
    ) -> Request:
        """The DeleteItem for ``db.delete(obj)`` or ``db.delete(Model, **key)``."""
        info, values, check = self._target(target, key)
        return plan_delete(
            info, info.primary_key(values), self.table_name, condition=condition, version=check
        )

    def check_request(self, obj: object, condition: Condition) -> Request:
        """The ConditionCheck of ``tx.check(obj, condition)`` (no version: nothing is written)."""
        info = self.table.info(type(obj))
        return plan_check(info, info.key_of(obj), self.table_name, condition)

    def _target(
        self, target: object, key: Mapping[str, object] | None
    ) -> tuple[ModelInfo[Any], dict[str, object], VersionCheck | None]:
        """(model, key values, version check) of a delete; a key alone names no version."""
        if isinstance(target, type):
            model: ModelInfo[Any] = self.table.info(target)
            model.check_key_values(key or {})
            return model, dict(key or {}), None
        if key:
            raise TypeError("db.delete(obj) takes no key fields; use db.delete(Model, **key)")
        info = self.table.info(type(target))
        return info, info.values_of(target), info.stamps.check("delete", target)

    def sync_copies(self, parent: object) -> Plan[int]:
        """Make every copy of ``parent``'s fields equal what is stored for the parent now."""
        return (yield from self.copier.sync(parent))

    # -- many items --------------------------------------------------------------------------------

    def put_all(self, objs: Iterable[object]) -> Plan[int]:
        """Store many objects with BatchWriteItem; returns how many items were written.

        Every object is encoded and checked before the first request; objects with the same key
        are written once (the last one wins), as DynamoDB refuses a batch naming a key twice.
        """
        now = utc_now()
        # What each model's rules ask, found once per model rather than once per object.
        rules = _PutAllRules(self.table, self.copier)
        originals = list(objs)
        models = rules.check(originals)
        objs = [rules.stamped(o, now) for o in originals] if rules.stamps else list(originals)
        # Every item is encoded and checked before the first request of any kind (the reads
        # of parents for copies included); an object whose copies are filled is encoded again.
        items = [self._whole_item((models.get(type(o)) or rules.of(o)).info, o) for o in objs]
        checked = yield from self.copier.fill(objs)
        filled = checked.objs
        key_names = sorted(self.table.primary_attributes)
        writes: dict[Any, dict[str, Any]] = {}
        # The object written for each key: the last one given, where the first one stood.
        winners: dict[Any, object] = {}
        parents: dict[Any, Copying] = {}
        # Where each key's object stood (its copies' placeholders, for explain).
        positions: dict[Any, int] = {}
        for position, (obj, given, encoded) in enumerate(zip(filled, objs, items, strict=True)):
            model = models.get(type(obj)) or rules.of(obj)
            info = model.info
            item = encoded if obj is given else self._whole_item(info, obj)
            if checked.unread:
                item = {**item, **checked.placeholders(position)}
            ident = item_key_id(item, key_names)
            writes[ident] = {"PutRequest": {"Item": item}}
            winners[ident] = obj
            positions[ident] = position
            if model.copying:
                parents[ident] = Copying(info, info.values_of(obj), model.copying)
        changed = yield from self.copier.changed_parents(list(parents.values()))
        tokens = {}
        for copying in changed:
            check_fanout(copying, (yield from self.copier.children(copying)))
            # Marked pending until its copies are rewritten (see CopyPlanner.settle).
            ident = key_id(copying.info.primary_key(copying.values))
            tokens[ident] = secrets.token_hex(8)
            put = writes[ident]["PutRequest"]
            put["Item"] = with_pending(put["Item"], tokens[ident])
        count = len(writes)
        keeping = self._keeping(winners, writes, positions, tokens, checked)
        if writes:
            yield WriteBatch(tuple(writes.values()))
        yield from send_keeping(keeping, self.table_name)
        yield from self.old_copies.after_batch(list(winners.values()))
        for copying in changed:
            # Read again after the parent is written: see CopyPlanner.rewrite_after.
            children = yield from self.copier.children(copying)
            yield from self.copier.rewrite_after(copying, children)
            ident = key_id(copying.info.primary_key(copying.values))
            yield from self.copier.settle(copying, tokens[ident])
        if rules.stamps:
            for original, written in zip(originals, objs, strict=True):
                stamps = rules.of(original).info.stamps
                stamps.keep(original, stamps.written(written))
        yield from self.copier.recheck(checked)
        return count

    def _keeping(
        self,
        winners: Mapping[Any, object],
        writes: dict[Any, dict[str, Any]],
        positions: Mapping[Any, int],
        tokens: Mapping[Any, str],
        checked: Filled,
    ) -> list[tuple[ModelInfo[Any], Item, Request]]:
        """The objects that keep stored embedded children, taken out of ``writes``.

        Each is sent as its own UpdateItem, as ``db.put`` sends it (see :mod:`.keepput`).
        """
        keeping = []
        for ident, obj in winners.items():
            info = self.table.info(type(obj))
            if not keeps_stored(info, obj):
                continue
            del writes[ident]
            request = _placed(self._put_request(obj), checked.placeholders(positions[ident]))
            if ident in tokens:
                request = request_with_pending(request, tokens[ident])
            keeping.append((info, info.key_of(obj), request))
        return keeping

    def delete_all(self, objs: Iterable[object]) -> Plan[int]:
        """Delete many items with BatchWriteItem; returns how many keys were deleted."""
        writes: dict[Any, dict[str, Any]] = {}
        objs = list(objs)
        for obj in objs:
            _unversioned(self.table, obj, "delete_all", "delete")
            key = self.table.info(type(obj)).key_of(obj)
            writes[key_id(key)] = {"DeleteRequest": {"Key": key}}
        count = len(writes)
        # was=: their old items' deletions in the same batches; the conditioned removals (map
        # entries, items found through an index) before them, so that a reader meanwhile still
        # reads each child's new copy rather than an old one.
        old_keys, others = yield from self.old_copies.plain_deletes(objs)
        yield from self.old_copies.remove_each(others)
        writes.update({key_id(k): {"DeleteRequest": {"Key": k}} for k in old_keys})
        if writes:
            yield WriteBatch(tuple(writes.values()))
        return count

    def _whole_item(self, info: ModelInfo[Any], obj: object) -> Item:
        """The item PutRequest writes: every field, and embedded children written whole."""
        item = info.encode(obj)
        for rel in embedded_of(info):
            codec = rel.embedded
            if codec is None:  # pragma: no cover - embedded_of(info) holds resolved ones only
                continue
            children = held_items(obj, rel.name)
            if children is None and state_of(obj) is not None:
                raise DefinitionError(
                    f"put_all replaces whole items, and {rel.qualname} of {obj!r} was read "
                    "without its children, so they would be lost; load them first, or use "
                    "db.put (which keeps them)"
                )
            item[codec.attribute] = codec.encode(children or [])
        if embedded_of(info):
            info.check_item(item)  # again, with the children: every item before any request
        return item

    # -- relationships -----------------------------------------------------------------------------

    def add(self, parent: object, rel: HasManyRelation[Any], child: object) -> Plan[object]:
        """Add ``child`` to ``parent``'s relationship, however its strategy stores it."""
        return (yield from rel.via.plan_add(rel, self._change(parent, rel, child)))

    def remove(self, parent: object, rel: HasManyRelation[Any], child: object) -> Plan[int | None]:
        """Remove ``child`` from ``parent``'s relationship; returns a list child's old position."""
        return (yield from rel.via.plan_remove(rel, self._change(parent, rel, child)))

    def _change(self, parent: object, rel: HasManyRelation[Any], child: object) -> ChildChange:
        held = held_items(parent, rel.name)
        also = self.old_copies.embedded_removals(rel, child)
        return ChildChange(parent, child, held, self.table_name, _ItemWrites(self, parent), also)

    # -- transactions ------------------------------------------------------------------------------

    def transaction(
        self,
        actions: Sequence[Action],
        route: Callable[[object], WritePlanner] | None = None,
    ) -> Plan[None]:
        """One TransactWriteItems for ``actions``, with every copy their writes change.

        A parent written in the transaction whose copied fields do not change (one consistent
        BatchGetItem tells) is sent on that condition, and its children stay out of it; one
        whose copied fields change brings an action for each of its children (a rewrite, or a
        check that the copy holds). Children among the transaction's own writes get their
        copies from the parents as the transaction leaves them.

        ``route`` gives the planner of each object's table, for a transaction across tables
        (None: every object is this planner's). Copies stay within a table, as relationships
        do, so each table's planner plans its own copies; the reads they need are bound to
        their table (:func:`~dynorm.core.steps.on_table`).
        """
        of = route or (lambda _obj: self)
        now = utc_now()
        actions = [msgspec.structs.replace(a, at=a.at or now) for a in actions]
        planners = [of(a.obj) for a in actions]
        refused: Refused | None = None
        for attempt in range(1, ATTEMPTS + 1):
            sent = yield from self._transact(actions, planners, now, refused, attempt == ATTEMPTS)
            if not isinstance(sent, Refused):
                break
            refused = sent
        else:  # pragma: no cover - the last attempt returns or raises
            raise AssertionError("unreachable")
        written = sent
        for action, obj in zip(actions, written, strict=True):
            info = info_of(type(action.obj))
            if action.kind == "put":
                info.stamps.keep(action.obj, info.stamps.written(obj))
            elif action.kind == "update":
                info.stamps.keep(action.obj, _after_update(info, action))

    def _transact(
        self,
        actions: Sequence[Action],
        planners: Sequence[WritePlanner],
        now: datetime.datetime,
        refused: Refused | None,
        last: bool,  # noqa: FBT001 - internal
    ) -> Plan[list[object] | Refused]:
        """Plan and send the transaction once; returns the objects written.

        :class:`Refused`: to be planned again, as only actions carrying the removal of an old
        copy were refused (it may have gone meanwhile). Planned again, the same removals
        (``refused``'s) mean it had not: the transaction is refused for its own conditions.
        """
        tables = list({id(p): p for p in planners}.values())
        fills = yield from _fill_by_table(tables, actions, planners)
        filled = {i: iter(f.objs) for i, f in fills.items()}
        puts_seen = dict.fromkeys(fills, 0)
        plan = TransactActions({p.table_name: p.table for p in tables})
        parents: list[tuple[int, WritePlanner, Copying]] = []
        written: list[object] = []
        for action, planner in zip(actions, planners, strict=True):
            mine = id(planner)
            put = action.kind == "put"
            obj = planner.stamped(next(filled[mine]), now) if put else action.obj
            written.append(obj)
            request, copying = yield from on_table(
                planner.table_name, planner._action_request(action, obj)
            )
            if put:
                request = _placed(request, fills[mine].placeholders(puts_seen[mine]))
                puts_seen[mine] += 1
            if copying is not None:
                parents.append((len(plan.items), planner, copying))
            plan.user(transact_action(request))
        changed: list[Copying] = []
        for planner in tables:
            copyings = [c for _, p, c in parents if p is planner]
            if copyings:
                changed += yield from on_table(
                    planner.table_name, planner.copier.changed_parents(copyings)
                )
        olds = [
            (a.kind, p.table_name, p.old_copies, o)
            for a, p, o in zip(actions, planners, written, strict=True)
        ]
        removals = yield from old_copies(olds)
        if refused is not None and removals == refused.removals:
            exc = refused.error
            raise self._cancelled(actions, written, exc) or exc from exc
        for removal, movable in removals:
            plan.removal(removal, movable=movable)
        for position, planner, copying in parents:
            if copying not in changed:
                ((_, params),) = plan.items[position].items()
                extend_condition(params, functools.partial(_unchanged_of, copying))
                continue
            children = yield from on_table(planner.table_name, planner.copier.children(copying))
            for copy in transaction_actions(planner.copier, copying, children):
                plan.beside(copy)
        # Parents read for children's copies must still hold them when the transaction commits.
        for p in tables:
            for basis in {key_id(b.key): b for b in fills[id(p)].basis}.values():
                plan.beside(parent_holds(p.table_name, basis))
        items, later = plan.finish()
        if items:
            try:
                yield Send(transact_write(items))
            except TransactionCanceledError as exc:
                if not last and plan.only_old(exc):
                    return Refused(removals, exc)
                raise self._cancelled(actions, written, exc) or exc from exc
        yield from delete_later(later)  # was=: old items past the limit, after the commit
        return written

    def _after(self, action: Action) -> object | None:
        """A parent as the action leaves it (for the copies of children written beside it)."""
        info = self.table.info(type(action.obj))
        if action.kind == "put":
            return action.obj
        if action.kind != "update" or not self.copier.copying(info):
            return None
        fields = {k: v for k, v in action.ops.set.items() if top_field(k) == k}
        fields.update({k: None for k in action.ops.remove if top_field(k) == k})
        return attrs.evolve(action.obj, **fields)  # type: ignore[misc]

    def _action_request(self, action: Action, obj: object) -> Plan[tuple[Request, Copying | None]]:
        info = self.table.info(type(obj))
        values = info.values_of(obj)
        rels = self.copier.copying(info)
        if action.kind == "put":
            request = self._put_request(obj, condition=action.condition, overwrite=action.overwrite)
            return request, (Copying(info, values, rels) if rels else None)
        if action.kind == "update":
            return (yield from self._update_request(action))
        if action.kind == "check":
            if action.condition is None:  # pragma: no cover - Transaction.check requires one
                raise ExpressionError("a condition check needs a condition")
            return self.check_request(obj, action.condition), None
        return self.delete_request(obj, condition=action.condition), None

    def _update_request(self, action: Action) -> Plan[tuple[Request, Copying | None]]:
        """The UpdateItem of an update, and the copies it changes (None when it changes none).

        A move to another parent takes that parent's values (read by key).
        """
        info = self.table.info(type(action.obj))
        self._refuse_copies(info, action.ops.paths())
        values = info.values_of(action.obj)
        if self.copier.incoming(info):
            # Every value is checked before a new parent is read for the copies.
            self.update_request(action)
        moved = yield from self.copier.moved(info, values, action.ops.set, action.ops.remove)
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
        paths = action.ops.paths()
        self._refuse_copies(info, paths)
        _refuse_removing_required(info, action.ops.remove)
        # Copies explain could not know (the new parent is not read): placed after building.
        unknown = {
            info.codec.attributes[f]: v for f, v in (moved or {}).items() if isinstance(v, FromRead)
        }
        moved = {f: v for f, v in (moved or {}).items() if not isinstance(v, FromRead)}
        ops = attrs.evolve(action.ops, set={**action.ops.set, **moved})
        stamped, missing = info.stamps.update_values(action.obj, action.at or utc_now())
        request = plan_update(
            info,
            values,
            self.table_name,
            ops,
            condition=action.condition,
            upsert=self._upsert_item(info, action.obj) if action.upsert else None,
            returns=action.returns,
            stamped={**stamped, **missing},
            version=info.stamps.check("update", action.obj),
        )
        request = _placed(request, unknown)
        rels = self.copier.copying(info)
        copied = {f for rel in rels for f in rel.copies}
        _refuse_paths_inside(info, paths, copied)
        _refuse_by_amount_of_copied(info, ops, copied)
        set_values = ops.set
        changed = copied & {*set_values, *ops.remove}
        if not changed:
            return request, None
        if action.returns in ("ALL_OLD", "UPDATED_OLD"):
            raise ExpressionError(
                f"{info.name}: this update changes fields its children keep copies of, so it "
                "may be written in a transaction, which returns no old values; read the item "
                "first, or ask for returns='new'"
            )
        after = {**values, **set_values, **dict.fromkeys(ops.remove)}
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

    def _refuse_once(self, info: ModelInfo[Any], action: Action) -> None:
        """Refuse an ``exactly_once`` update that cannot be one single-action transaction."""
        if action.returns in ("ALL_OLD", "UPDATED_OLD"):
            raise ExpressionError(
                f"{info.name}: an exactly_once update is sent as a TransactWriteItems, which "
                "returns no old values; ask for returns='new' (read back after the write), "
                "'updated_new' or None, or pass exactly_once=False"
            )
        _, copying = self.update_request(action)
        if copying is not None:
            raise ExpressionError(
                f"{info.name}: this update changes fields its children keep copies of "
                f"({', '.join(sorted(copying.only or ()))}), so it writes more than one item and "
                "cannot be one exactly_once action; write it in a transaction (async with "
                "db.transaction() as tx: tx.update(...) is exactly-once, copies included), or "
                "pass exactly_once=False"
            )

    def _upsert_item(self, info: ModelInfo[Any], obj: object) -> Item:
        """The item an upsert creates when none is stored: ``obj``, embedded children empty."""
        item = info.encode(obj)
        for rel in embedded_of(info):
            if rel.embedded is not None:
                item[rel.embedded.attribute] = rel.embedded.empty()
        return item

    def _refused(
        self,
        info: ModelInfo[Any],
        key: Item,
        check: VersionCheck | None,
        exc: ConditionFailedError,
        write: Write,
    ) -> Plan[DatabaseError]:
        """Why a single-item write was refused: a version conflict, no item, or a condition.

        The stored item tells (sent back with the refusal, else read consistently).
        """
        stored = exc.item
        if stored is None:
            found = yield Send(consistent_get(key, self.table_name))
            stored = found.get("Item")
        if stored is None and write == "update" and (check is None or check.expected is None):
            return _not_found(info, key, exc)
        if stored is not None and not info.sort_key_matcher(None)(stored):
            return _other_entity(info, key, stored, exc, write)
        if stored is not None and write == "update":
            stale = stale_item(info, key, stored, exc)
            if stale is not None:
                return stale
        if check is None:
            return exc
        conflict = _conflict(info, key, check, exc, stored=stored)
        return exc if conflict is None else conflict

    def _cancelled(
        self, actions: Sequence[Action], written: Sequence[object], exc: TransactionCanceledError
    ) -> ConditionFailedError | None:
        """A version conflict, when a versioned action's condition cancelled a transaction."""
        for reason in exc.failed:
            if reason.index >= len(actions) or reason.code != "ConditionalCheckFailed":
                continue
            action = actions[reason.index]
            if action.kind == "check":
                continue
            info = info_of(type(action.obj))
            if action.kind == "update" and reason.item is not None:
                stale = stale_item(info, info.key_of(action.obj), reason.item, exc)
                if stale is not None:
                    return stale
            obj = written[reason.index] if action.kind == "put" else action.obj
            check = info.stamps.check(action.kind, obj)
            if check is not None:
                key = info.key_of(action.obj)
                own = action.condition is not None
                return _conflict(info, key, check, exc, action=reason.index, own_condition=own)
        return None


def _fill_by_table(
    tables: Sequence[WritePlanner], actions: Sequence[Action], planners: Sequence[WritePlanner]
) -> Plan[dict[int, Filled]]:
    """Each table's puts with their copies filled from that table's parents (by planner id)."""
    fills: dict[int, Filled] = {}
    for planner in tables:
        theirs = [a for a, p in zip(actions, planners, strict=True) if p is planner]
        after = [o for o in map(planner._after, theirs) if o is not None]
        puts = [a.obj for a in theirs if a.kind == "put"]
        fills[id(planner)] = yield from on_table(
            planner.table_name, planner.copier.fill(puts, after)
        )
    return fills


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


def _placed(request: Request, values: Mapping[str, FromRead]) -> Request:
    """``request`` with stored attributes set to values a read gives (for ``explain``).

    A PutItem's item holds them; an UpdateItem sets them (``SET #dynorm_read0 = ...``).
    """
    if not values:
        return request
    params = dict(request.params)
    if "Item" in params:
        params["Item"] = {**params["Item"], **values}
        return msgspec.structs.replace(request, params=params)
    names = dict(params.get("ExpressionAttributeNames", {}))
    placed = dict(params.get("ExpressionAttributeValues", {}))
    assignments = []
    for i, (attribute, value) in enumerate(values.items()):
        names[f"#dynorm_read{i}"] = attribute
        placed[f":dynorm_read{i}"] = value
        assignments.append(f"#dynorm_read{i} = :dynorm_read{i}")
    expression = str(params.get("UpdateExpression", ""))
    assignment = ", ".join(assignments)
    params["UpdateExpression"] = (
        expression.replace("SET ", f"SET {assignment}, ", 1)
        if expression.startswith("SET ")
        else f"SET {assignment} {expression}".strip()
    )
    params["ExpressionAttributeNames"] = names
    params["ExpressionAttributeValues"] = placed
    return msgspec.structs.replace(request, params=params)


def _send_once(request: Request) -> Plan[dict[str, Any] | None]:
    """Send a single-item write as a one-action transaction; None: no response item.

    A cancellation by the action's condition is the ConditionFailedError the write sent alone
    would raise, so the update's own handling of refusals applies unchanged.
    """
    try:
        yield Send(transact_once(request))
    except TransactionCanceledError as exc:
        failed = exc.failed
        if len(failed) == 1 and failed[0].code == "ConditionalCheckFailed":
            error = ConditionFailedError(
                f"{request.operation}: {failed[0].message or 'The conditional request failed'}",
                code="ConditionalCheckFailedException",
                operation=request.operation,
            )
            error.item = failed[0].item
            raise error from exc
        raise
    return None


def _not_found(info: ModelInfo[Any], key: Item, exc: DatabaseError | None) -> ItemNotFoundError:
    return ItemNotFoundError(
        f"update of {info.name}: no item with key {key!r} (upsert=True creates it)",
        code=exc.code if exc is not None else "",
        operation="UpdateItem",
    )


_OPERATIONS = {"put": "PutItem", "update": "UpdateItem", "delete": "DeleteItem"}


def _other_entity(
    info: ModelInfo[Any], key: Item, stored: Item, exc: DatabaseError, write: Write
) -> ConditionFailedError:
    type_attr = info.table.type_attribute or ""
    error = ConditionFailedError(
        f"{write} of {info.name}: the item with key {key!r} is another model's "
        f"({type_attr}={stored.get(type_attr, {}).get('S')!r}, not {info.entity!r}); nothing "
        "was written. Address it through its own model",
        code=exc.code,
        operation=_OPERATIONS[write],
    )
    error.item = stored
    return error


def _conflict(
    info: ModelInfo[Any],
    key: Item,
    check: VersionCheck,
    cause: DatabaseError,
    *,
    stored: Item | None = None,
    action: int | None = None,
    own_condition: bool = False,
) -> VersionConflictError | None:
    """The conflict a refused versioned write met; None if the version held.

    A single write knows the item as ``stored`` now (None: absent); None then means the
    caller's own condition failed. A transaction's ``action`` (its position) was cancelled by
    its condition, and the reasons carry no item: the version is what failed, unless the
    action's ``own_condition`` did.
    """
    what: str | None
    if action is None:
        attr = info.codec.attributes[check.field]
        found = None if stored is None else stored.get(attr, {}).get("N")
        version = None if found is None else int(found)
        what = check.refusal(exists=stored is not None, stored=version)
        if what is None:
            return None
    else:
        version = None
        what = f"changed since it was read (version {check.expected} expected)"
        what += " or its own condition failed" if own_condition else ""
    write = f"{check.write} of {info.name} {key!r}"
    if action is None:
        message = (
            f"{write}: the item {what}; nothing was written. Read it again (db.get), apply your "
            "change to what is stored, and write that"
        )
    else:
        message = (
            f"transaction cancelled, nothing was written: action {action} ({write}) found the "
            f"item {what}. Read it again (db.get), apply the change to what is stored, and run "
            "the transaction again"
        )
    error = VersionConflictError(
        message,
        code=cause.code,
        operation=cause.operation if action is not None else _OPERATIONS[check.write],
    )
    error.expected, error.stored = check.expected, version
    error.item = stored
    return error


def _after_update(info: ModelInfo[Any], action: Action) -> dict[str, object]:
    """The version and ``updated`` time an update stored (``created`` is kept as stored)."""
    values, _ = info.stamps.update_values(action.obj, action.at or utc_now())
    return values


def _unversioned(table: Table, obj: object, call: str, single: str) -> bool:
    """Refuse a versioned model in a batch write, which cannot carry its version check."""
    info = table.info(type(obj))
    if info.stamps.version is not None:
        raise DefinitionError(
            f"db.{call} cannot check {info.name}.{info.stamps.version} (BatchWriteItem takes "
            f"no conditions), and {info.name} is versioned; use db.{single} for each, or "
            "db.transaction() for several at once"
        )
    return True


def returned_fields(
    info: ModelInfo[Any], item: Item | None, action_paths: Sequence[str]
) -> dict[str, object]:
    """The values of the fields an update named, decoded from the item it returned."""
    if item is None:
        return {}
    names = dict.fromkeys([*map(top_field, action_paths), *info.stamps.managed])
    out: dict[str, object] = {}
    for name in names:
        attr = info.codec.attributes[name]
        if attr in item:
            out[name] = info.codec.decode_field[name](item[attr])
            continue
        # A field kept only inside keys comes back in the key attributes the update rewrote.
        for held in info.key_fields.values():
            texts = held.texts(item) if name in held.parsers else None
            if texts is not None:
                out[name] = held.parsers[name](texts[name])
                break
    return out


def _refuse_removing_required(info: ModelInfo[Any], removed: Sequence[str]) -> None:
    """``remove=`` of a whole field leaves its attribute absent, which reads back as its default.

    A field with no default (nor a key attribute holding it, nor an empty set to read) could not
    be read back at all: refused before anything is sent.
    """
    fields = attrs.fields_dict(info.cls)
    for path in removed:
        field = fields.get(path)
        if (
            field is None
            or field.default is not attrs.NOTHING
            or path in info.codec.sets
            or any(path in held.parsers for held in info.key_fields.values())
        ):
            continue
        raise ExpressionError(
            f"{info.name}: remove=[{path!r}] would leave an item whose {path!r} is absent, and "
            f"{info.name}.{path} has no default to read back; give the field a default "
            f"(`{path}: ... | None = None`) or set= a value instead"
        )


def _refuse_paths_inside(info: ModelInfo[Any], paths: Sequence[str], copied: set[str]) -> None:
    inside = [p for p in paths if top_field(p) in copied and top_field(p) != p]
    if inside:
        field = top_field(inside[0])
        raise ExpressionError(
            f"{info.name}: {inside[0]!r} changes part of {field!r}, which its children "
            f"keep copies of; give the whole {field!r} so the copies follow"
        )


def _refuse_by_amount_of_copied(info: ModelInfo[Any], ops: UpdateOps, copied: set[str]) -> None:
    added = [(p, option) for p, option in ops.by_amount.items() if top_field(p) in copied]
    if added:
        path, option = added[0]
        raise ExpressionError(
            f"{info.name}: {option}= changes {path!r}, which its children keep copies of, in a "
            "way the copies cannot follow; give the new value with set="
        )


def _unchanged_of(copying: Copying, builder: ExpressionBuilder) -> str:
    return unchanged(builder, copying.info, copying.copied())


def _info(table: Table, infos: dict[type, ModelInfo[Any]], obj: object) -> ModelInfo[Any]:
    """``table.info(type(obj))``, looked up once per class in ``infos``."""
    cls = type(obj)
    info = infos.get(cls)
    if info is None:
        info = infos[cls] = table.info(cls)
    return info


class _PutAllModel(msgspec.Struct, frozen=True):
    """What ``put_all`` asks of one model, the same for each of its objects."""

    info: ModelInfo[Any]
    #: Whether a put stamps anything (times; a versioned model is refused).
    stamps: bool
    #: The relationships whose children carry copies of its fields.
    copying: tuple[HasManyRelation[Any], ...]


class _PutAllRules:
    """Per model, once per ``put_all``: its info, checked for batch writes, and its rules."""

    def __init__(self, table: Table, copier: CopyPlanner) -> None:
        self._table = table
        self._copier = copier
        self._models: dict[type, _PutAllModel] = {}
        #: Whether any model seen stamps its objects.
        self.stamps = False

    def check(self, objs: Iterable[object]) -> Mapping[type, _PutAllModel]:
        """The rules of the models of ``objs`` (see :meth:`of`), by class."""
        models = self._models
        for obj in objs:
            if type(obj) not in models:
                self.of(obj)
        return models

    def of(self, obj: object) -> _PutAllModel:
        """The rules of ``obj``'s model; DefinitionError for a versioned model or a non-model."""
        model = self._models.get(type(obj))
        if model is None:
            _unversioned(self._table, obj, "put_all", "put")
            info = self._table.info(type(obj))
            model = _PutAllModel(info, bool(info.stamps), self._copier.copying(info))
            self._models[type(obj)] = model
            self.stamps = self.stamps or model.stamps
        return model

    def stamped(self, obj: T, now: datetime.datetime) -> T:
        """``obj`` as a put stores it (see :meth:`WritePlanner.stamped`)."""
        model = self.of(obj)
        if not model.stamps:
            return obj
        values = model.info.stamps.put_values(obj, now)
        return attrs.evolve(obj, **values) if values else obj  # type: ignore[misc]
