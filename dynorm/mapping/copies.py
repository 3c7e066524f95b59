"""Denormalized copies: what a write of a parent or of a child must also write.

A ``Denormalized`` strategy stores children that carry copies of parent fields. These plans keep
the copies equal to the stored parent on every write path (the write planner calls them):

- a parent's write changes no copied field: sent on that condition, it reads no child;
- it changes some: the children are read, refused past ``max_fanout`` with nothing written, and
  rewritten in the parent's own transaction when all fit in one (the others checked in it), else
  after the parent in transactions that each check the parent still holds the values written;
- a child written on its own, or moved to another parent, takes its parent's values.

While the relationship declares ``was=``, the children still in the old layout carry copies
too: they are read as well (first, see ``dynorm.mapping.oldcopyreads``) and rewritten in place
at the keys they are stored under, on the same conditions.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import msgspec

from dynorm.core.chunks import TRANSACT_MAX, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    ConditionFailedError,
    CopiesIncompleteError,
    DatabaseError,
    DefinitionError,
    ItemNotFoundError,
    LimitExceededError,
    TransactionCanceledError,
)
from dynorm.core.expressions import ExpressionBuilder, equal_to, extend_condition
from dynorm.core.requests import (
    PENDING,
    Request,
    condition_check,
    consistent_get,
    transact_write,
    update_item,
)
from dynorm.core.steps import CANCELLED, Fetch, FromRead, Plan, Send, SendAll, Unread, read_each

from .model import ModelInfo
from .oldcopyreads import OldChild, old_children
from .relations import HasManyRelation, relationships_of
from .strategies import copy_changes
from .table import Table
from .writes import UpdateOps, plan_update, transact_action

__all__ = [
    "COPY_ATTEMPTS",
    "PENDING",
    "CopyPlanner",
    "Copying",
    "Filled",
    "check_fanout",
    "parent_holds",
    "request_with_pending",
    "unchanged",
    "with_pending",
]

logger = logging.getLogger("dynorm")


#: How often a parent's write is retried when its children change while their copies are
#: rewritten in the parent's transaction (each retry reads the children again).
COPY_ATTEMPTS: Final = 3

_NULL: Final = {"NULL": True}

Children = Sequence[tuple[HasManyRelation[Any], list[Any]]]


class Copying(msgspec.Struct, frozen=True):
    """One parent's copies: its values and the relationships whose children hold them."""

    info: ModelInfo[Any]
    values: Mapping[str, object]
    rels: tuple[HasManyRelation[Any], ...]
    #: the parent fields an update changes (None: a whole put); copies of the others are left
    #: alone, since ``values`` holds the caller's object for them, which may be older.
    only: frozenset[str] | None = None

    def pairs(self, rel: HasManyRelation[Any]) -> list[tuple[str, str]]:
        """(parent field, child field) of ``rel``'s copies that this write keeps equal."""
        return [(p, c) for p, c in rel.copies.items() if self.only is None or p in self.only]

    def copied(self) -> dict[str, object]:
        """The parent's values of the fields its children copy (that this write changes)."""
        return {p: self.values[p] for rel in self.rels for p, _ in self.pairs(rel)}


class _Basis:
    """A parent read for a child's copies: the child's position, the link, the item read."""

    # A plain class: as an attrs field typed HasMany, ``rel`` would read through the descriptor.
    __slots__ = ("index", "item", "key", "rel")

    def __init__(self, index: int, rel: HasManyRelation[Any], key: Item, item: Item) -> None:
        self.index = index
        self.rel: HasManyRelation[Any] = rel
        self.key = key
        self.item = item


class Filled(msgspec.Struct, frozen=True):
    """Objects with their copies filled, and the parents that were read to fill them."""

    objs: list[object]
    basis: tuple[_Basis, ...]
    #: For ``explain`` (the parents' read answered :class:`Unread`): per object's position,
    #: the stored attributes its copies would take from the parents read, as placeholders.
    unread: Mapping[int, Mapping[str, FromRead]] = msgspec.field(default_factory=dict)

    def placeholders(self, index: int) -> Mapping[str, FromRead]:
        """The placeholders of the object at ``index`` (none outside ``explain``)."""
        return self.unread.get(index, {}) if self.unread else {}


class CopyPlanner:
    """Plans the copy-keeping part of writes to one table."""

    def __init__(self, table: Table, table_name: str) -> None:
        self.table = table
        self.table_name = table_name
        self._incoming: dict[type, tuple[HasManyRelation[Any], ...]] = {}

    @staticmethod
    def copying(info: ModelInfo[Any]) -> tuple[HasManyRelation[Any], ...]:
        """The relationships whose children carry copies of ``info``'s fields."""
        return tuple(
            r
            for r in relationships_of(info).values()
            if isinstance(r, HasManyRelation) and r.copies
        )

    def incoming(self, info: ModelInfo[Any]) -> tuple[HasManyRelation[Any], ...]:
        """The relationships of other models whose children (of ``info``'s model) hold copies."""
        found = self._incoming.get(info.cls)
        if found is None:
            self.table.check()  # every relationship resolved: the answer cannot change later
            found = tuple(
                rel
                for model in self.table.models.values()
                for rel in relationships_of(model).values()
                if isinstance(rel, HasManyRelation) and rel.copies and rel.target_cls is info.cls
            )
            self._incoming[info.cls] = found
        return found

    def sync(self, parent: object) -> Plan[int]:
        """Make every copy of ``parent``'s fields equal what is stored for the parent now."""
        info = self.table.info(type(parent))
        rels = self.copying(info)
        if not rels:
            return 0
        found = yield Send(consistent_get(info.key_of(parent), self.table_name))
        stored = found.get("Item")
        if stored is None:
            raise ItemNotFoundError(
                f"sync_copies: no {info.name} is stored with key {info.key_of(parent)!r}",
                operation="GetItem",
            )
        values = info.values_of(info.decode(stored))
        copying = Copying(info, values, rels)
        children = yield from self.children(copying)
        check_fanout(copying, children)
        count = yield from self.rewrite_after(copying, children)
        if PENDING in stored:
            yield from self.settle(copying, stored[PENDING]["S"])
        return count

    # -- denormalized copies: children -------------------------------------------------------------

    def fill(self, objs: Sequence[object], parents: Sequence[object] = ()) -> Plan[Filled]:
        """``objs`` with every copy of a parent's field filled from that parent (read by key).

        Parents given (``parents``, and parents among ``objs``: a parent and its new children
        in one ``put_all``) are used as they are written; the others are read with one
        consistent BatchGetItem, and what was read is kept in ``Filled.basis`` so the write
        can be checked against a rename that lands meanwhile (see :meth:`recheck`).
        """
        wants: list[tuple[int, HasManyRelation[Any], Item]] = []
        # Per class: most classes in a batch hold no copies, and need no more than this.
        links: dict[type, tuple[ModelInfo[Any], tuple[HasManyRelation[Any], ...]]] = {}
        for i, obj in enumerate(objs):
            found = links.get(type(obj))
            if found is None:
                info = self.table.info(type(obj))
                found = links[type(obj)] = (info, self.incoming(info))
            info, incoming = found
            for rel in incoming:
                key = _parent_key(rel, info.values_of(obj))
                if key is not None:
                    wants.append((i, rel, key))
        if not wants:
            return Filled(list(objs), ())
        given = {key_id(self.table.info(type(o)).key_of(o)): o for o in (*parents, *objs)}
        missing = tuple({key_id(k): k for _, _, k in wants if key_id(k) not in given}.values())
        stored: dict[Any, Item] = {}
        if missing:
            stored = yield Fetch(missing)
        # Planned by explain: nothing was read, the copies are the parents' values, unknown yet.
        explained = isinstance(stored, Unread)
        out = list(objs)
        basis = []
        unread: dict[int, dict[str, FromRead]] = {}
        for i, rel, key in wants:
            if explained and key_id(key) not in given:
                attributes = rel.target_info.codec.attributes
                unread.setdefault(i, {}).update(
                    {
                        attributes[c]: FromRead(f"{rel.owner_name}.{p}")
                        for p, c in rel.copies.items()
                    }
                )
                basis.append(_Basis(i, rel, key, Unread()))
                continue
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
            if key_id(key) not in given:
                basis.append(_Basis(i, rel, key, stored[key_id(key)]))
        return Filled(out, tuple(basis), unread)

    def recheck(self, filled: Filled) -> Plan[None]:
        """After children were written: rewrite any copy whose parent was renamed meanwhile.

        A rename reads the children after writing the parent, so it sees every child written
        before that; a child written after the rename's read took its copy from the parent
        read before it, which this consistent read of the parents shows. Repeated until the
        parents read are the ones the copies hold.
        """
        basis = filled.basis
        for _ in range(COPY_ATTEMPTS):
            if not basis:
                return
            stored = yield Fetch(tuple({key_id(b.key): b.key for b in basis}.values()))
            if isinstance(stored, Unread):
                return  # planned by explain: shown as the parents being unchanged
            moved = [
                (b, stored.get(key_id(b.key))) for b in basis if stored.get(key_id(b.key)) != b.item
            ]
            updates = []
            for entry, item in moved:
                values = _parent_values(entry.rel, None, item)
                if values is None:
                    continue  # the parent was deleted meanwhile: no value to follow
                child = filled.objs[entry.index]
                copying = Copying(entry.rel.owner_info, values, (entry.rel,))
                for _, changes in _stale(entry.rel, copying, [child]):
                    info = entry.rel.target_info
                    updates.append(
                        plan_update(
                            info, info.values_of(child), self.table_name, UpdateOps(set=changes)
                        )
                    )
            for outcome in (yield SendAll(tuple(updates))) if updates else ():
                if isinstance(outcome, BaseException) and not isinstance(
                    outcome,
                    ConditionFailedError,  # the child was deleted meanwhile
                ):
                    raise outcome
            basis = tuple(
                _Basis(b.index, b.rel, b.key, item) for b, item in moved if item is not None
            )
        raise DatabaseError(
            f"the parents of the children written kept changing ({COPY_ATTEMPTS} reads); "
            "the children are written; call db.sync_copies(parent) once the renames settle"
        )

    def moved(
        self,
        info: ModelInfo[Any],
        current: Mapping[str, object],
        set_values: Mapping[str, object],
        removals: Sequence[str],
    ) -> Plan[dict[str, object]]:
        """CopyPlanner to set when an update moves a child to another parent (or out of one)."""
        changes: dict[str, object] = {}
        for rel in self.incoming(info):
            links = set(rel.link)
            if not links & {*set_values, *removals}:
                continue
            after = {**current, **set_values, **dict.fromkeys(removals)}
            key = _parent_key(rel, after)
            if key is None:
                continue  # out of every parent's collection: its copies stay as they were
            response = yield Send(consistent_get(key, self.table_name))
            if isinstance(response, Unread):  # planned by explain: shown as placeholders
                owner = rel.owner_name
                changes.update({c: FromRead(f"{owner}.{p}") for p, c in rel.copies.items()})
                continue
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

    def write_parent(
        self, copying: Copying, request: Request, new: Mapping[str, object]
    ) -> Plan[tuple[int, dict[str, Any] | None]]:
        """Write a parent and the copies its write changes; (copies rewritten, its response)."""
        # Keeps request.retry: its own condition decides how a lost reply is settled (the added
        # one holds again once this write is stored, so a plain write stays safe to resend).
        optimistic = msgspec.structs.replace(request, params=dict(request.params))
        extend_condition(optimistic.params, lambda b: unchanged(b, copying.info, new))  # type: ignore[arg-type]
        try:
            response = yield Send(optimistic)
        except ConditionFailedError:
            pass  # a copied field changed (or the caller's condition failed: decided below)
        else:
            return 0, response
        for _ in range(COPY_ATTEMPTS):
            children = yield from self.children(copying)
            check_fanout(copying, children)
            if 1 + sum(len(c) for _, c in children) > TRANSACT_MAX:
                token = secrets.token_hex(8)
                response = yield Send(request_with_pending(request, token))
                # Read again now the parent is written: a copy an older write changed after the
                # first read is seen (and no older write can change one any more).
                children = yield from self.children(copying)
                count = yield from self.rewrite_after(copying, children)
                yield from self.settle(copying, token)
                return count, response
            actions = [transact_action(request), *transaction_actions(self, copying, children)]
            try:
                yield Send(transact_write(actions))
            except TransactionCanceledError as exc:
                if _failed_at(exc, 0, "ConditionalCheckFailed"):
                    # The parent's own write was refused: the same error as when sent alone.
                    raise ConditionFailedError(
                        f"{request.operation}: the condition did not hold; nothing was written "
                        "(neither the item nor its denormalized copies)",
                        code=exc.failed[0].code,
                        operation=request.operation,
                    ) from exc
                continue  # a child changed since it was read: read them again
            count = sum(len(_stale(rel, copying, c)) for rel, c in children)
            _log_rewritten(count)
            return count, None
        raise DatabaseError(
            f"{copying.info.name}: its children kept changing while their copies were rewritten "
            f"({COPY_ATTEMPTS} attempts); nothing was written. Try again"
        )

    def settle(self, copying: Copying, token: str) -> Plan[None]:
        """Remove the pending marker ``token`` once every copy is rewritten (if still ours)."""
        builder = ExpressionBuilder()
        name = builder.attribute(PENDING)
        ours = f"{name} = {builder.value({'S': token})}"
        request = update_item(
            self.table_name,
            copying.info.primary_key(copying.values),
            f"REMOVE {name}",
            ConditionExpression=ours,
            **builder.params(),
        )
        # Refused: a newer write of the parent owns the copies (and its own marker).
        with contextlib.suppress(ConditionFailedError):
            yield Send(request)

    def children(self, copying: Copying) -> Plan[list[tuple[HasManyRelation[Any], list[Any]]]]:
        """Each copying relationship's children, read whole.

        Every read (each shard's Query, each relationship's) is sent at once, so a rewrite
        costs the time of its slowest read, not the sum of them. Children still in a ``was=``
        layout (as :class:`OldChild`) are read before, in one step of their own.
        """
        old = yield from old_children(copying.rels, self.table_name, copying.values)
        reads = [
            (at, read)
            for at, rel in enumerate(copying.rels)
            for read in rel.children_reads(self.table_name, copying.values, consistent=True)
        ]
        answers = yield from read_each([read for _, read in reads])
        out: list[tuple[HasManyRelation[Any], list[Any]]] = [(rel, []) for rel in copying.rels]
        for (at, read), items in zip(reads, answers, strict=True):
            rel, found = out[at]
            decode = functools.partial(rel.target_info.decode_if, index=read.index)
            found += [obj for obj in map(decode, items) if obj is not None]
        for (_, each), kids in zip(out, old, strict=True):
            each.extend(kids)
        return out

    def changed_parents(self, parents: Sequence[Copying]) -> Plan[list[Copying]]:
        """The parents whose stored copied fields differ from the ones about to be written."""
        if not parents:
            return []
        keys = tuple(p.info.primary_key(p.values) for p in parents)
        stored = yield Fetch(keys)
        changed = []
        for parent, key in zip(parents, keys, strict=True):
            item = stored.get(key_id(key))
            if item is not None and (
                PENDING in item
                or any(
                    item.get(parent.info.codec.attributes[f], _NULL)
                    != parent.info.codec.encode_field[f](value)
                    for f, value in parent.copied().items()
                )
            ):
                changed.append(parent)
        return changed

    def rewrite_after(
        self,
        copying: Copying,
        children: Sequence[tuple[HasManyRelation[Any], list[Any]]],
        rounds: int = COPY_ATTEMPTS,
    ) -> Plan[int]:
        """Rewrite stale copies after the parent is written, in transactions of 99 children.

        Each transaction also checks that the parent still holds the values written: a newer
        write of the parent (which rewrites the copies itself) makes an older one's remaining
        transactions fail instead of overwriting newer copies. The first failure of another kind
        cancels every transaction still in flight, and CopiesIncompleteError says how many
        copies were not rewritten. A child still in a ``was=`` layout that is gone when its
        copy is rewritten was moved meanwhile, its copy as it was: the children are read again
        (up to ``rounds`` times) and the moved ones rewritten in the new layout.
        """
        stale = [(rel, c, ch) for rel, cs in children for c, ch in _stale(rel, copying, cs)]
        if not stale:
            return 0
        check = _parent_check(self, copying)
        chunks = [stale[i : i + TRANSACT_MAX - 1] for i in range(0, len(stale), TRANSACT_MAX - 1)]
        done = pending = 0
        moved = False
        first: BaseException | None = None
        for _ in range(COPY_ATTEMPTS):
            requests = tuple(
                transact_write([check, *(_child_update(self, *entry) for entry in chunk)])
                for chunk in chunks
            )
            outcomes = yield SendAll(requests)
            if any(_superseded(o) for o in outcomes):
                # A newer write of the parent landed: it rewrites the copies itself, and this
                # write's remaining transactions (cancelled or not) must not.
                chunks = []
                break
            again: list[list[tuple[HasManyRelation[Any], object, dict[str, object]]]] = []
            for chunk, outcome in zip(chunks, outcomes, strict=True):
                if isinstance(outcome, dict):
                    done += len(chunk)
                elif not isinstance(outcome, TransactionCanceledError):
                    pending += len(chunk)
                    if first is None and outcome is not CANCELLED:
                        first = outcome
                else:
                    # Children deleted meanwhile are dropped; a conflict with another
                    # transaction is sent again.
                    gone = {
                        r.index - 1 for r in outcome.failed if r.code == "ConditionalCheckFailed"
                    }
                    rest = [entry for i, entry in enumerate(chunk) if i not in gone]
                    moved = moved or any(isinstance(chunk[i][1], OldChild) for i in gone)
                    if rest:
                        again.append(rest)
            chunks = again
            if not chunks or pending:
                break
        pending += sum(len(chunk) for chunk in chunks)
        if pending:
            raise CopiesIncompleteError(
                f"{copying.info.name} {_describe_key(copying)} is written, but {pending} of "
                f"{len(stale)} denormalized copies were not rewritten ({first}); call "
                "db.sync_copies(parent) to repair them, or write the parent again",
                pending=pending,
                rewritten=done,
            ) from first if isinstance(first, BaseException) else None
        if moved and rounds > 1:
            again_read = yield from self.children(copying)
            done += yield from self.rewrite_after(copying, again_read, rounds - 1)
            return done
        _log_rewritten(done)
        return done


def parent_holds(table_name: str, basis: _Basis) -> dict[str, Any]:
    """A ConditionCheck that a parent read for a child's copies still holds the copied values."""
    builder = ExpressionBuilder()
    stored = basis.rel.owner_info.codec.attributes
    if isinstance(basis.item, Unread):  # planned by explain: the values read are not known
        owner = basis.rel.owner_name
        unknown = {f: cast("Any", FromRead(f"{owner}.{f}")) for f in basis.rel.copies}
        parts = [
            f"{builder.attribute(stored[f])} = {builder.value(value)}"
            for f, value in unknown.items()
        ]
    else:
        parts = [
            part
            for parent_field in basis.rel.copies
            for part in equal_to(
                builder,
                builder.attribute(stored[parent_field]),
                basis.item.get(stored[parent_field], _NULL),
            )
        ]
    return transact_action(
        condition_check(table_name, basis.key, " AND ".join(parts), **builder.params())
    )


def request_with_pending(request: Request, token: str) -> Request:
    """The parent's write, also storing the pending marker ``token``."""
    params = dict(request.params)
    if "Item" in params:
        params["Item"] = {**params["Item"], PENDING: {"S": token}}
    else:
        names = {**params.get("ExpressionAttributeNames", {}), "#dynorm_pending": PENDING}
        values = {**params.get("ExpressionAttributeValues", {}), ":dynorm_pending": {"S": token}}
        assignment = "#dynorm_pending = :dynorm_pending"
        expression = params["UpdateExpression"]
        params["UpdateExpression"] = (
            expression.replace("SET ", f"SET {assignment}, ", 1)
            if expression.startswith("SET ")
            else f"SET {assignment} {expression}"
        )
        params["ExpressionAttributeNames"] = names
        params["ExpressionAttributeValues"] = values
    return msgspec.structs.replace(request, params=params)


def with_pending(item: Item, token: str) -> Item:
    """An item to put whole, also carrying the pending marker ``token``."""
    return {**item, PENDING: {"S": token}}


def _superseded(outcome: object) -> bool:
    """Whether a copy transaction failed because the parent no longer holds its values."""
    return isinstance(outcome, TransactionCanceledError) and _failed_at(
        outcome, 0, "ConditionalCheckFailed"
    )


def _failed_at(exc: TransactionCanceledError, index: int, code: str) -> bool:
    return any(r.index == index and r.code == code for r in exc.failed)


def _log_rewritten(count: int) -> None:
    if count:
        logger.info("rewrote %d denormalized copies", count)


def _describe_key(copying: Copying) -> str:
    fields = copying.info.identity_fields()
    return "(" + ", ".join(f"{f}={copying.values[f]!r}" for f in fields) + ")"


def unchanged(builder: ExpressionBuilder, info: ModelInfo[Any], new: Mapping[str, object]) -> str:
    """The stored item is new, or already holds ``new`` in the copied fields."""
    equal = [
        part
        for field, value in new.items()
        for part in equal_to(
            builder,
            builder.attribute(info.codec.attributes[field]),
            info.codec.encode_field[field](value),
        )
    ]
    missing = f"attribute_not_exists({builder.attribute(info.table.pk)})"
    settled = f"attribute_not_exists({builder.attribute(PENDING)})"
    return f"{missing} OR ({' AND '.join([settled, *equal])})"


def _stale(
    rel: HasManyRelation[Any], copying: Copying, children: Sequence[object]
) -> list[tuple[object, dict[str, object]]]:
    """Each child whose copies differ from the parent's values, with the fields to rewrite."""
    pairs = copying.pairs(rel)
    out = []
    for child in children:
        changes = copy_changes(pairs, copying.values, _obj(child))
        if changes:
            out.append((child, changes))
    return out


def check_fanout(
    copying: Copying, children: Sequence[tuple[HasManyRelation[Any], list[Any]]]
) -> None:
    for rel, found in children:
        stale = _stale(rel, copying, found)
        limit = rel.via.fanout_limit()
        if limit is not None and len(stale) > limit:
            raise LimitExceededError(
                f"{rel.qualname}: {len(stale)} children carry copies that would need rewriting, "
                f"over max_fanout={limit}; nothing was written. Raise max_fanout or store the "
                "field only on the parent"
            )


def _obj(child: object) -> object:
    """The object a child reads as (a child still in the old layout is wrapped)."""
    return child.obj if isinstance(child, OldChild) else child


def _child_update(
    copier: CopyPlanner, rel: HasManyRelation[Any], child: object, changes: Mapping[str, object]
) -> dict[str, Any]:
    info = rel.target_info
    values = info.values_of(_obj(child))
    request = plan_update(info, values, copier.table_name, UpdateOps(set=changes))
    if isinstance(child, OldChild):
        request = child.at_stored_key(request)
    return transact_action(request)


def transaction_actions(
    copier: CopyPlanner,
    copying: Copying,
    children: Children,
) -> list[dict[str, Any]]:
    """Transaction actions keeping children's copies equal to the parent's values.

    Stale children are rewritten; the others are checked to still hold the values, so a copy
    an older write of the parent changes meanwhile cancels the transaction instead of staying.
    """
    actions = []
    for rel, found in children:
        stale = {id(c): ch for c, ch in _stale(rel, copying, found)}
        info = rel.target_info
        for child in found:
            if id(child) in stale:
                actions.append(_child_update(copier, rel, child, stale[id(child)]))
                continue
            builder = ExpressionBuilder()
            parts = [
                part
                for parent_field, child_field in copying.pairs(rel)
                for part in equal_to(
                    builder,
                    builder.attribute(info.codec.attributes[child_field]),
                    info.codec.encode_field[child_field](copying.values[parent_field]),
                )
            ]
            key = child.key if isinstance(child, OldChild) else info.key_of(child)
            check = condition_check(copier.table_name, key, " AND ".join(parts), **builder.params())
            actions.append(transact_action(check))
    return actions


def _parent_check(copier: CopyPlanner, copying: Copying) -> dict[str, Any]:
    """A ConditionCheck that the stored parent holds the copied values being spread."""
    builder = ExpressionBuilder()
    new = copying.copied()
    parts = [
        part
        for field, value in new.items()
        for part in equal_to(
            builder,
            builder.attribute(copying.info.codec.attributes[field]),
            copying.info.codec.encode_field[field](value),
        )
    ]
    key = copying.info.primary_key(copying.values)
    return transact_action(
        condition_check(copier.table_name, key, " AND ".join(parts), **builder.params())
    )


def _parent_key(rel: HasManyRelation[Any], child_values: Mapping[str, object]) -> Item | None:
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
    rel: HasManyRelation[Any], given: object | None, stored: Item | None
) -> dict[str, object] | None:
    parent = rel.owner_info
    if given is not None and type(given) is parent.cls:
        return parent.values_of(given)
    if stored is None:
        return None
    return parent.values_of(parent.decode(stored))
