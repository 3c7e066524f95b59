"""Raw reads through ``db.send``: what is stored, as DynamoDB holds it, without the mapper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynorm import Database, Request


async def raw_item(db: Database, key: dict[str, str]) -> dict[str, Any] | None:
    """The stored item with this key (string attributes), or None (one GetItem)."""
    response = await db.send(
        Request(
            "GetItem",
            {"TableName": db.table_name, "Key": {k: {"S": v} for k, v in key.items()}},
        )
    )
    item: dict[str, Any] | None = response.get("Item")
    return item


async def raw_collection(
    db: Database, attribute: str, value: str, *, index: str | None = None
) -> list[dict[str, Any]]:
    """Every item whose ``attribute`` (a partition key) is ``value``, in sort key order."""
    params: dict[str, Any] = {
        "TableName": db.table_name,
        "KeyConditionExpression": "#p = :p",
        "ExpressionAttributeNames": {"#p": attribute},
        "ExpressionAttributeValues": {":p": {"S": value}},
    }
    if index is not None:
        params["IndexName"] = index
    items: list[dict[str, Any]] = []
    while True:
        response = await db.send(Request("Query", params))
        items += response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return items
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def strings(item: dict[str, Any], *names: str) -> tuple[str | None, ...]:
    """The string values of ``names`` in a raw item (None where absent)."""
    return tuple(item[n]["S"] if n in item else None for n in names)


async def raw_put(db: Database, item: dict[str, Any]) -> None:
    """Store ``item`` as given (AttributeValues), bypassing every rule of the mapper."""
    await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))


async def raw_scan(db: Database) -> list[dict[str, Any]]:
    """Every stored item as DynamoDB holds it (a consistent Scan, page after page)."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": db.table_name, "ConsistentRead": True}
    while True:
        page = await db.send(Request("Scan", params))
        items += page.get("Items", [])
        if not page.get("LastEvaluatedKey"):
            return items
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def flat(value: Mapping[str, Any]) -> Any:
    """An AttributeValue's plain value (maps and lists flattened too)."""
    ((kind, inner),) = value.items()
    if kind == "M":
        return {k: flat(v) for k, v in inner.items()}
    if kind == "L":
        return [flat(v) for v in inner]
    return inner


async def stored(db: Database) -> list[dict[str, Any]]:
    """Every stored item, values flattened, sorted by table key (``pk``, ``sk``)."""
    items = [{k: flat(v) for k, v in raw.items()} for raw in await raw_scan(db)]
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))
