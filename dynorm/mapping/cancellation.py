"""A cancelled transaction's reasons, each naming its action's model, table and key (pure).

DynamoDB's cancellation gives each action a code and a message, by position only. The request
that was sent says the table and the key of each position; the table's models say which model
the key is of. Two models named ``Order`` in two tables are then told apart by their tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from dynorm.core.errors import DynormError, TransactionCanceledError, cancelled
from dynorm.core.requests import Request

from .table import Table

__all__ = ["named_cancellation"]


def named_cancellation(
    exc: TransactionCanceledError, request: Request, table_of: Callable[[str], Table | None]
) -> TransactionCanceledError:
    """``exc`` with every reason naming its action's table, key and model.

    ``table_of`` gives the Table a request's table name stands for (None: not known). Reasons
    keep their index, code, message and item: only ``table``, ``key`` and ``model`` are added.
    """
    actions = request.params.get("TransactItems") or []
    if not exc.failed or not actions:
        return exc  # nothing to name (the server gave no reasons)
    reasons = []
    for reason in exc.reasons:
        found = _action(actions[reason.index]) if reason.index < len(actions) else None
        if found is None:
            reasons.append(reason)
            continue
        name, key, item = found
        table = table_of(name)
        if table is not None and key is None and item is not None:
            key = _key_of(table, item)
        model = None if table is None else _model_name(table, item or key)
        reasons.append(msgspec.structs.replace(reason, table=name, key=key, model=model))
    named = cancelled(reasons, str(exc), operation=exc.operation)
    named.__cause__ = exc.__cause__
    for note in getattr(exc, "__notes__", ()):  # the transport's (attempts made, say)
        named.add_note(note)
    return named


def _action(action: object) -> tuple[str, dict[str, Any] | None, Mapping[str, Any] | None] | None:
    """An action's table name, its Key (Update, Delete, ConditionCheck, Get) or Item (Put)."""
    if not isinstance(action, Mapping) or len(action) != 1:
        return None
    ((_, params),) = action.items()
    if not isinstance(params, Mapping) or not isinstance(params.get("TableName"), str):
        return None
    key = params.get("Key")
    item = params.get("Item")
    return (
        params["TableName"],
        dict(key) if isinstance(key, Mapping) else None,
        item if isinstance(item, Mapping) else None,
    )


def _key_of(table: Table, item: Mapping[str, Any]) -> dict[str, Any]:
    return {a: item[a] for a in table.key_attributes(None) if a is not None and a in item}


def _model_name(table: Table, item: Mapping[str, Any] | None) -> str | None:
    if not item:
        return None
    try:
        info = table.model_of(item)
    except (DynormError, AttributeError, KeyError, TypeError, ValueError):
        return None  # a key no model's templates read: the table and key still name it
    return None if info is None else info.name
