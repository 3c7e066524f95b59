"""Creating one table of a connection: CreateTable, waiting until active, time to live.

``db.create_table(exists_ok=True)`` (and ``dynorm create-table --exists-ok``) accepts a table
that exists already, and then leaves it as creating it would have: it waits until the table and
its indexes are active (another process may be creating it) and enables time to live on the
attribute the models declare with ``ttl=``, unless it is enabled there already. A table whose
primary key (attribute names, HASH/RANGE, types) differs from the Table's is refused: every
read and write would fail against it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from dynorm.core.errors import DatabaseError
from dynorm.core.requests import Request

if TYPE_CHECKING:
    from .tables import Connected

__all__ = ["create_one", "table_status"]

#: What a DynamoDB implementation without time to live (dynalite) answers its requests with.
NO_TTL_CODES: Final = frozenset({"UnknownOperationException", "UnrecognizedClientException"})
#: What CreateTable answers when the table exists (or is being created or deleted).
_EXISTS: Final = "ResourceInUseException"

Send = Callable[[Request], Awaitable[dict[str, Any]]]
#: Describes the table until the callable accepts its description (None: no such table).
Wait = Callable[[str, Callable[[Mapping[str, Any] | None], bool], float], Awaitable[None]]


def table_status(table: Mapping[str, Any] | None) -> str | None:
    """A described table's status (None: no such table); CREATING until every index is ACTIVE."""
    if table is None:
        return None
    status: str = table["TableStatus"]
    if status == "ACTIVE" and any(
        gsi.get("IndexStatus", "ACTIVE") != "ACTIVE"
        for gsi in table.get("GlobalSecondaryIndexes", [])
    ):
        return "CREATING"
    return status


async def create_one(
    send: Send,
    wait_for: Wait,
    connected: Connected,
    *,
    timeout: float,
    key_types: Mapping[str, Literal["S", "N", "B"]] | None,
    exists_ok: bool,
) -> bool:
    """Create ``connected``'s table, wait until active, enable its TTL; False if it existed.

    A table that exists is a DatabaseError (ResourceInUseException) unless ``exists_ok``.
    """
    from dynorm.mapping.tabledef import (  # noqa: PLC0415 - not on a data path
        create_table_request,
        time_to_live_request,
    )

    ttl = time_to_live_request(connected.table, connected.name)  # refused before anything is sent
    request = create_table_request(connected.table, connected.name, key_types)
    try:
        created = await send(request)
    except DatabaseError as exc:
        if exc.code != _EXISTS or not exists_ok:
            raise
        await wait_for(connected.name, _existing_active(connected.name, request), timeout)
        if ttl is not None:
            await _ensure_ttl(send, connected.name, ttl)
        return False
    # A server that creates tables at once (moto) says ACTIVE in the reply: then there is
    # nothing to wait for. DynamoDB and dynalite say CREATING, and are asked until ACTIVE.
    if table_status(created.get("TableDescription")) != "ACTIVE":
        await wait_for(connected.name, lambda found: table_status(found) == "ACTIVE", timeout)
    if ttl is not None:
        await _tolerating_no_ttl(send(ttl))
    return True


def _existing_active(name: str, wanted: Request) -> Callable[[Mapping[str, Any] | None], bool]:
    """Whether a table CreateTable found is active; refused when it is going away.

    ResourceInUseException also answers for a table being deleted: waiting for it to become
    active would last until the timeout. A table of another primary key is refused at once.
    """

    def active(found: Mapping[str, Any] | None) -> bool:
        status = table_status(found)
        if found is not None and status != "DELETING":
            _check_primary_key(name, wanted, found)
        if status in ("DELETING", None):
            state = "being deleted" if status == "DELETING" else "deleted meanwhile"
            raise DatabaseError(
                f"table {name!r} exists but is {state}, so exists_ok cannot accept it; "
                "create it again once the deletion has ended",
                code=_EXISTS,
                operation="CreateTable",
            )
        return status == "ACTIVE"

    return active


def _primary_key(params: Mapping[str, Any]) -> list[str]:
    """``pk (HASH, S)``, ``sk (RANGE, N)``: a CreateTable's or a description's primary key."""
    types = {a["AttributeName"]: a["AttributeType"] for a in params.get("AttributeDefinitions", [])}
    return [
        f"{k['AttributeName']} ({k['KeyType']}, {types.get(k['AttributeName'], '?')})"
        for k in params.get("KeySchema", [])
    ]


def _check_primary_key(name: str, wanted: Request, found: Mapping[str, Any]) -> None:
    """Refuse an existing table whose primary key is not the one the Table declares."""
    declared, existing = _primary_key(wanted.params), _primary_key(found)
    if declared != existing:
        raise DatabaseError(
            f"table {name!r} exists with primary key {', '.join(existing)}, but the Table "
            f"declares {', '.join(declared)}; exists_ok accepts only a table of the same key: "
            "connect with another table name, or change the Table to match",
            code=_EXISTS,
            operation="CreateTable",
        )


async def _ensure_ttl(send: Send, name: str, ttl: Request) -> None:
    """Enable time to live on an existing table, unless it is on that attribute already.

    DynamoDB refuses UpdateTimeToLive when TTL is enabled already (even on the same attribute),
    and while it is being disabled; TTL on another attribute is refused with what to do.
    """
    wanted = ttl.params["TimeToLiveSpecification"]["AttributeName"]
    described = await _tolerating_no_ttl(send(Request("DescribeTimeToLive", {"TableName": name})))
    if described is None:  # the server has no time to live (dynalite)
        return
    current = described.get("TimeToLiveDescription", {})
    status = current.get("TimeToLiveStatus", "DISABLED")
    attribute = current.get("AttributeName")
    if status in ("ENABLED", "ENABLING") and attribute == wanted:
        return
    if status != "DISABLED":
        raise DatabaseError(
            f"table {name!r} has time to live {status} on {attribute!r}, and its models declare "
            f"ttl= on {wanted!r}; DynamoDB keeps one TTL attribute per table: disable the other "
            "(aws dynamodb update-time-to-live), wait until it is DISABLED, and run again"
        )
    await _tolerating_no_ttl(send(ttl))


async def _tolerating_no_ttl(reply: Awaitable[dict[str, Any]]) -> dict[str, Any] | None:
    """``reply``, or None from a server without time to live (nothing expires there)."""
    try:
        return await reply
    except DatabaseError as exc:
        if exc.code not in NO_TTL_CODES:
            raise
        return None
