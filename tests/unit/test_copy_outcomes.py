"""A TransactionConflict is not a refused condition, for the copy plans.

DynamoDB cancels a transaction with ``TransactionConflict`` for the action whose item is part of
another ongoing transaction. ``rewrite_after`` sends its checked batches concurrently and every
one of them has a ConditionCheck of the same parent at index 0, so they can cancel each other
that way; a concurrent ``db.put`` of a child, or another writer's transaction, can too. These
tests drive the pure plans with such answers (no server needed).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from dynorm import (
    CancellationReason,
    ConditionFailedError,
    CopiesIncompleteError,
    Denormalized,
    DynormError,
    HasMany,
    Table,
    TransactionCanceledError,
)
from dynorm.core.steps import Plan, ReadEach, Send, SendAll
from dynorm.mapping.writeplan import WritePlanner

table = Table("review-unit", pk="pk", sk="sk")


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    birthdate: datetime.date
    books = HasMany["Book"]("Book", via=Denormalized(copy={"birthdate": "author_birthdate"}))


@table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}")
@attrs.define
class Book:
    author_name: str
    title: str
    author_birthdate: datetime.date | None = None


BORN = datetime.date(1929, 10, 21)
LATER = datetime.date(1930, 1, 1)


def conflict_at_parent(actions: int) -> TransactionCanceledError:
    codes = ["TransactionConflict"] + ["None"] * (actions - 1)
    return TransactionCanceledError(
        "transaction cancelled", reasons=[CancellationReason(i, c, "") for i, c in enumerate(codes)]
    )


def drive(plan: Plan[Any], answer: Callable[[Any], Any]) -> Any:
    """Run a plan as Database.run does: a DynormError an answer returns is thrown into it."""
    result: Any = None
    error: DynormError | None = None
    while True:
        try:
            step = plan.send(result) if error is None else plan.throw(error)
        except StopIteration as stop:
            return stop.value
        out = answer(step)
        result, error = (None, out) if isinstance(out, DynormError) else (out, None)


def books(n: int) -> list[dict[str, Any]]:
    info = table.info(Book)
    return [info.encode(Book("Le Guin", f"T{i}", BORN)) for i in range(n)]


def test_a_conflict_on_the_parent_in_its_transaction_is_not_a_refused_condition() -> None:
    planner = WritePlanner(table, "t")
    tries = []

    def answer(step: Any) -> Any:
        if isinstance(step, Send) and step.request.operation == "PutItem":
            return ConditionFailedError("copied field changed", code="ConditionalCheckFailed")
        if isinstance(step, ReadEach):  # the children's reads, at once
            return [books(3) for _ in step.requests]
        tries.append(step)
        # The first attempt collides with another writer; a retry would go through.
        return conflict_at_parent(4) if len(tries) == 1 else {}

    # Raises ConditionFailedError("the condition did not hold; nothing was written"), though the
    # caller gave no condition and nothing was refused: a retry (as for a child's conflict) or a
    # TransactionCanceledError would be right.
    drive(planner.put(Author("Le Guin", LATER)), answer)
    assert len(tries) == 2


def test_a_conflict_on_the_parent_check_of_a_batch_is_not_a_newer_write() -> None:
    planner = WritePlanner(table, "t")
    author_item = table.info(Author).encode(Author("Le Guin", LATER))

    def answer(step: Any) -> Any:
        if isinstance(step, Send) and step.request.operation == "GetItem":
            return {"Item": author_item}
        if isinstance(step, ReadEach):  # the children's reads, at once
            return [books(3) for _ in step.requests]
        assert isinstance(step, SendAll)
        return [conflict_at_parent(4)]  # the stored parent still holds LATER

    # Returns 0 (as if a newer write of the parent owned the copies): three stale copies and
    # no error. Only ConditionalCheckFailed at index 0 means "superseded".
    with pytest.raises(CopiesIncompleteError):
        drive(planner.sync_copies(Author("Le Guin", LATER)), answer)
