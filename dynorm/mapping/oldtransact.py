"""The old copies' removals (``was=``) of a transaction's children, placed among its actions.

A TransactWriteItems may name an item once. The removal of a child's old copy is an action on
an item the transaction may name already: its parent's map entry, when the transaction also
checks, updates or deletes the parent, or when it writes two children of one map. Each removal
is placed with what names its item:

- two removals of one parent's entries (or list slots), or a removal and an UpdateItem or a
  ConditionCheck of the parent, become one UpdateItem: its REMOVE clause names every entry, its
  condition holds every condition (a ConditionCheck's condition is kept as the update's);
- a removal of an item the transaction deletes is not needed: the entry goes with the item;
- any other meeting (a Put of the parent, which would replace the entry it must remove) is
  refused before anything is sent, saying what to change.

Plain deletions of old items (no condition) of children the transaction puts or updates may be
sent after it commits when the transaction would otherwise exceed DynamoDB's limit on actions:
the new items are written first, so a reader of both layouts never misses a child (the new copy
wins), and an old item left by a failure after the commit is only a stale copy the new one hides
(the migration removes it). A delete's old copy always goes in the transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from dynorm.core.chunks import TRANSACT_MAX, KeyId, key_id
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ExpressionError, LimitExceededError, TransactionCanceledError
from dynorm.core.expressions import grouped
from dynorm.core.steps import Plan, WriteBatch, on_table

from .writes import transact_action

if TYPE_CHECKING:
    from .oldcopies import OldCopies
    from .table import Table

__all__ = ["ATTEMPTS", "Refused", "TransactActions", "delete_later", "old_copies"]

#: How often a transaction is planned again when only the removal of an old copy was refused.
ATTEMPTS = 3

#: An action's place: its table's name and its primary key.
Ident = tuple[str, KeyId]

_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b")
_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
_CLAUSES = ("SET", "REMOVE", "ADD", "DELETE")


@attrs.frozen
class Refused:
    """A transaction refused where it carried removals: the removals planned, the refusal."""

    removals: list[tuple[dict[str, Any], bool]]
    error: TransactionCanceledError


def old_copies(
    writes: Sequence[tuple[str, str, OldCopies, object]],
) -> Plan[list[tuple[dict[str, Any], bool]]]:
    """The actions removing the old copies (``was=``) of a transaction's children.

    ``writes``: each action's kind, table name, old copies and object as written. Each removal
    comes with whether it may be sent after the transaction commits (a plain deletion of the
    old item of a child put or updated). A child updated in the transaction is moved out of the
    old layout first, when its new item is not stored yet (see ``OldCopies.ensure_moved``).
    """
    found: list[tuple[dict[str, Any], bool]] = []
    for kind, table_name, olds, obj in writes:
        if kind == "check" or not olds.of(obj):
            continue
        if kind == "update":
            yield from on_table(table_name, olds.ensure_moved(obj))
        removals = yield from on_table(table_name, olds.removals(obj))
        for request in removals:
            plain = (
                request.operation == "DeleteItem" and "ConditionExpression" not in request.params
            )
            found.append((transact_action(request), plain and kind != "delete"))
    return found


class TransactActions:
    """A transaction's actions, in order, with the old copies' removals placed among them."""

    def __init__(self, tables: Mapping[str, Table]) -> None:
        self.tables = tables
        self.items: list[dict[str, Any]] = []
        #: where each item is named (index in ``items``), the user's actions' apart
        self._at: dict[Ident, int] = {}
        self._users: set[Ident] = set()
        #: indices of actions carrying a removal (merged or alone), and those movable after
        self._carrying: set[int] = set()
        self._movable: set[int] = set()

    def ident(self, action: Mapping[str, Any]) -> Ident:
        """The table and primary key of the item ``action`` touches."""
        ((_, params),) = action.items()
        name = params["TableName"]
        primary = self.tables[name].primary_attributes
        key: Item = params.get("Key") or {a: params["Item"][a] for a in primary}
        return name, key_id(key)

    def user(self, action: dict[str, Any]) -> None:
        """One of the user's own actions (which the transaction refuses to name twice)."""
        ident = self.ident(action)
        self._users.add(ident)
        self._at[ident] = len(self.items)
        self.items.append(action)

    def beside(self, action: dict[str, Any]) -> None:
        """A copy's rewrite or a parent's check, beside the user's actions.

        Left out where a user's action names its item (that action carries it), merged into a
        removal's UpdateItem of the same item.
        """
        ident = self.ident(action)
        if ident in self._users:
            return
        at = self._at.get(ident)
        if at is None or at not in self._carrying:
            self.items.append(action)
            return
        self.items[at] = _merged(self.items[at], action, self._refuse(action))
        self._movable.discard(at)

    def removal(self, action: dict[str, Any], *, movable: bool) -> None:
        """An old copy's removal, placed as the module docstring says."""
        ident = self.ident(action)
        at = self._at.get(ident)
        if at is None:
            self._at[ident] = len(self.items)
            self._carrying.add(len(self.items))
            if movable:
                self._movable.add(len(self.items))
            self.items.append(action)
            return
        (kind,) = self.items[at]
        if kind == "Delete":
            return  # the item goes, and the old copy in it
        self.items[at] = _merged(self.items[at], action, self._refuse(action))
        self._carrying.add(at)
        self._movable.discard(at)

    @staticmethod
    def _refuse(action: Mapping[str, Any]) -> Callable[[str, str], ExpressionError]:
        ((_, params),) = action.items()
        table = params["TableName"]
        key: Item = params.get("Key") or {}
        shown = ", ".join(f"{a}={next(iter(v.values()))!r}" for a, v in key.items())

        def refusal(kind: str, what: str) -> ExpressionError:
            return ExpressionError(
                f"this transaction has a {kind} of an item (table {table!r}, "
                f"{shown}) that also holds the old copy (was=) of a child it writes, which "
                f"it must remove, and a transaction names an item once ({what}, or the child "
                "in another transaction)"
            )

        return refusal

    def finish(self) -> tuple[list[dict[str, Any]], list[tuple[str, Item]]]:
        """The actions to send, and the old items to delete after the commit.

        Those only to stay in DynamoDB's limit on actions; refused when even so there are too
        many.
        """
        items, later = self.items, []
        if len(items) > TRANSACT_MAX and self._movable:
            later = [_deleted(items[i]) for i in sorted(self._movable)]
            kept = [i for i in range(len(items)) if i not in self._movable]
            self._carrying = {n for n, i in enumerate(kept) if i in self._carrying}
            self._movable = set()
            items = self.items = [items[i] for i in kept]
        if len(items) > TRANSACT_MAX:
            raise LimitExceededError(
                f"this transaction needs {len(items)} actions, counting the denormalized copies "
                "its writes change (and the old copies, was=, of the children it writes); "
                f"DynamoDB allows {TRANSACT_MAX}. Write those parents with db.put (which "
                "rewrites copies in batches) or split the transaction"
            )
        return items, later

    def only_old(self, exc: TransactionCanceledError) -> bool:
        """Whether only actions carrying removals failed, on conditions.

        Planned again then: an old copy went meanwhile (the migration moved it).
        """
        failed = exc.failed
        return bool(failed) and all(
            r.code == "ConditionalCheckFailed" and r.index in self._carrying for r in failed
        )


def delete_later(later: Sequence[tuple[str, Item]]) -> Plan[None]:
    """Delete the old items ``later`` (table name, key) in batches, after the transaction."""
    by_table: dict[str, list[Item]] = {}
    for name, key in later:
        by_table.setdefault(name, []).append(key)
    for name, keys in by_table.items():
        writes = tuple({"DeleteRequest": {"Key": key}} for key in keys)
        yield from on_table(name, _batch(writes))


def _batch(writes: tuple[dict[str, Any], ...]) -> Plan[None]:
    yield WriteBatch(writes)


def _deleted(action: Mapping[str, Any]) -> tuple[str, Item]:
    ((_, params),) = action.items()
    return params["TableName"], params["Key"]


def _merged(
    held: Mapping[str, Any],
    added: Mapping[str, Any],
    refusal: Callable[[str, str], ExpressionError],
) -> dict[str, Any]:
    """One action for ``held`` and ``added`` (an Update or a ConditionCheck each) on one item."""
    ((kind, first),) = held.items()
    ((other, second),) = added.items()
    for name in (kind, other):
        if name not in ("Update", "ConditionCheck"):
            raise refusal(name, "write it in a separate call")
    params = dict(first)
    renamed = _renamed(second, {*first.get("ExpressionAttributeNames", {}),
                                *first.get("ExpressionAttributeValues", {})})  # fmt: skip
    for part in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        both = {**params.get(part, {}), **renamed.get(part, {})}
        if both:
            params[part] = both
    conditions = [c for c in (first.get("ConditionExpression"),
                              renamed.get("ConditionExpression")) if c]  # fmt: skip
    if conditions:
        params["ConditionExpression"] = " AND ".join(map(grouped, conditions))
    update = _joined(first.get("UpdateExpression", ""), renamed.get("UpdateExpression", ""))
    if not update:
        return {"ConditionCheck": params}
    params["UpdateExpression"] = update
    asked = first.get("ReturnValuesOnConditionCheckFailure") or second.get(
        "ReturnValuesOnConditionCheckFailure"
    )
    if asked is not None:
        params["ReturnValuesOnConditionCheckFailure"] = asked
    return {"Update": params}


def _renamed(params: Mapping[str, Any], taken: set[str]) -> dict[str, Any]:
    """``params`` with every placeholder renamed to one not in ``taken``."""
    mine = {
        *params.get("ExpressionAttributeNames", {}),
        *params.get("ExpressionAttributeValues", {}),
    }
    suffix = 1
    while any(f"{p}_{suffix}" in taken for p in mine):
        suffix += 1
    new = {p: f"{p}_{suffix}" for p in mine}

    def sub(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: new.get(m.group(0), m.group(0)), text)

    out = dict(params)
    for part in ("UpdateExpression", "ConditionExpression"):
        if part in out:
            out[part] = sub(out[part])
    for part in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        if part in out:
            out[part] = {new[p]: v for p, v in out[part].items()}
    return out


def _joined(first: str, second: str) -> str:
    """Two update expressions as one: each clause's actions together."""
    clauses: dict[str, list[str]] = {}
    for expression in (first, second):
        parts = _CLAUSE.split(expression)
        for keyword, body in zip(parts[1::2], parts[2::2], strict=True):
            clauses.setdefault(keyword, []).append(body.strip().rstrip(","))
    return " ".join(f"{k} {', '.join(clauses[k])}" for k in _CLAUSES if k in clauses)
