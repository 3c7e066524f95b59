"""A single-item write sent with the writes it must go with, in one TransactWriteItems."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dynorm.core.errors import ConditionFailedError, TransactionCanceledError
from dynorm.core.requests import Request, transact_write
from dynorm.core.steps import Plan, Send

from .writes import transact_action

__all__ = ["send_with"]


def send_with(request: Request, also: Sequence[Request]) -> Plan[dict[str, Any] | None]:
    """Send ``request``, with ``also`` in the same TransactWriteItems when there are any.

    A cancellation by ``request``'s own condition is the ConditionFailedError it would raise
    sent alone, so the caller's handling of refusals applies unchanged. The transaction returns
    no item: None then (the reply of ``request`` alone otherwise).
    """
    if not also:
        response: dict[str, Any] = yield Send(request)
        return response
    first_action = transact_action(request)
    asked = request.params.get("ReturnValuesOnConditionCheckFailure")
    if asked is not None:  # a refusal then carries the stored item, as the write's own would
        ((_, params),) = first_action.items()
        params["ReturnValuesOnConditionCheckFailure"] = asked
    try:
        yield Send(transact_write([first_action, *(transact_action(r) for r in also)]))
    except TransactionCanceledError as exc:
        first = exc.reasons[0] if exc.reasons else None
        if first is not None and first.code == "ConditionalCheckFailed":
            error = ConditionFailedError(
                f"{request.operation}: {first.message or 'The conditional request failed'}",
                code="ConditionalCheckFailedException",
                operation=request.operation,
            )
            error.item = first.item
            raise error from exc
        raise
    return None
