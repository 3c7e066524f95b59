"""What :meth:`dynorm.Database.on_request` reports: one event per HTTP request sent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypedDict

import msgspec

from .errors import DatabaseError, DynormError
from .requests import Request

__all__ = [
    "OK",
    "TRANSPORT",
    "Capacity",
    "ConsumedCapacity",
    "RequestEvent",
    "outcome_of",
    "targets_of",
]

#: The outcome of an attempt that DynamoDB answered with success.
OK: Final = "ok"
#: The outcome of an attempt that got no answer: no connection, a reset, a timeout, a reply
#: whose checksum did not match.
TRANSPORT: Final = "transport"


class Capacity(TypedDict, total=False):
    """Capacity units one table or index consumed (DynamoDB's ``Capacity``)."""

    ReadCapacityUnits: float
    WriteCapacityUnits: float
    CapacityUnits: float


class ConsumedCapacity(TypedDict, total=False):
    """DynamoDB's ``ConsumedCapacity`` of one table, as the reply gives it (JSON numbers).

    Which keys are present depends on ``ReturnConsumedCapacity``: ``TOTAL`` gives
    ``TableName`` and ``CapacityUnits`` (and, on newer servers, the read/write split);
    ``INDEXES`` adds ``Table`` and the indexes' own, by index name.
    """

    TableName: str
    CapacityUnits: float
    ReadCapacityUnits: float
    WriteCapacityUnits: float
    Table: Capacity
    LocalSecondaryIndexes: dict[str, Capacity]
    GlobalSecondaryIndexes: dict[str, Capacity]


class RequestEvent(msgspec.Struct, frozen=True):
    """One HTTP request dynorm sent (one attempt of a request), reported after it completed.

    Attributes:
        operation: the API action, e.g. ``"GetItem"``.
        table: the table the request addresses (None when it names several or none).
        tables: every table the request names, in the order they appear.
        index: the secondary index a Query or Scan reads, else None.
        attempt: 1 for the first attempt of a request, 2 for its first retry, ...
        latency: seconds from sending to the complete reply or the failure (monotonic clock).
        consumed_capacity: the reply's ``ConsumedCapacity`` when the request asked for it
            (``ReturnConsumedCapacity``), else None: one :class:`ConsumedCapacity` dict, or a
            list of them, one a table, for batches and transactions.
        outcome: ``"ok"``; DynamoDB's error code (``"ConditionalCheckFailedException"``,
            ``"ThrottlingException"``, ``"500"`` for a bare server error ...); or
            ``"transport"`` when no reply came (see ``error`` for why).
        retrying: whether dynorm sends this request again after this attempt.
        error: the error this attempt ended with, None when it succeeded.
        partition_keys: on a throttled attempt, the partition key values the request
            addressed (a GetItem's, a Query's, each of a batch's once), to tell a hot
            partition from a table short of capacity; empty on other attempts.
    """

    operation: str
    table: str | None
    tables: tuple[str, ...]
    index: str | None
    attempt: int
    latency: float
    consumed_capacity: ConsumedCapacity | list[ConsumedCapacity] | None
    outcome: str
    retrying: bool
    error: DynormError | None = None
    partition_keys: tuple[str, ...] = ()


def targets_of(request: Request) -> tuple[tuple[str, ...], str | None]:
    """The tables ``request`` names and the index it reads (None if none)."""
    params = request.params
    name = params.get("TableName")
    if name is not None:
        return (str(name),), params.get("IndexName")
    items = params.get("RequestItems")
    if isinstance(items, Mapping):
        return tuple(str(n) for n in items), None
    actions = params.get("TransactItems")
    if isinstance(actions, list | tuple):
        tables: dict[str, None] = {}
        for action in actions:
            for body in action.values():
                if isinstance(body, Mapping) and "TableName" in body:
                    tables[str(body["TableName"])] = None
        return tuple(tables), None
    return (), None


def outcome_of(error: DynormError) -> str:
    """The event outcome an attempt's failure is reported as."""
    if isinstance(error, DatabaseError) and error.code:
        return error.code
    return TRANSPORT
