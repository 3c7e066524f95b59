"""The requests that make a table: CreateTable from its models' keys and indexes, and TTL.

Pure: ``Database.create_table`` sends them (and waits for the table); ``dynorm design`` and the
Workbench export describe the same table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from dynorm.core.errors import DefinitionError
from dynorm.core.requests import Request, create_table, time_to_live

from .table import GSI, LSI, Table

__all__ = ["create_table_request", "time_to_live_request"]


def create_table_request(
    table: Table, table_name: str, key_types: Mapping[str, Literal["S", "N", "B"]] | None = None
) -> Request:
    """CreateTable of ``table`` as ``table_name``: its keys, every index, billed per request.

    Key attributes have the types the Table declares (``Table(..., key_types=...)``; strings
    by default). ``key_types`` here may add types for attributes the Table leaves as strings
    (kept for tables made before Table took them); it may not contradict the Table's.
    """
    names = table.attribute_names()
    types: dict[str, str] = dict(table.key_types)
    for name, given in (key_types or {}).items():
        declared = table.key_types.get(name)
        if declared is not None and declared != given:
            raise DefinitionError(
                f"key_types[{name!r}] is {given!r}, but Table {table.name!r} declares {name!r} "
                f"as {declared!r}, which its models write; drop create_table's key_types (the "
                "Table's are used), or change the Table's"
            )
        types[name] = given
    for name, type_ in types.items():
        if name not in names:
            raise DefinitionError(
                f"key_types names {name!r}, which is no key attribute of Table "
                f"{table.name!r} or its indexes; its key attributes: {', '.join(names)}"
            )
        if type_ not in ("S", "N", "B"):
            raise DefinitionError(f"key_types[{name!r}] is {type_!r}; a key attribute is S, N or B")
    attributes = [{"AttributeName": a, "AttributeType": types.get(a, "S")} for a in names]

    def schema(pk: str, sk: str | None) -> list[dict[str, str]]:
        keys = [{"AttributeName": pk, "KeyType": "HASH"}]
        return keys + ([{"AttributeName": sk, "KeyType": "RANGE"}] if sk else [])

    def projection(p: Any) -> dict[str, Any]:
        if isinstance(p, tuple):
            return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(p)}
        return {"ProjectionType": p}

    params: dict[str, Any] = {
        "TableName": table_name,
        "AttributeDefinitions": attributes,
        "KeySchema": schema(table.pk, table.sk),
        "BillingMode": "PAY_PER_REQUEST",
    }
    gsis = [i for i in table.indexes.values() if isinstance(i, GSI)]
    lsis = [i for i in table.indexes.values() if isinstance(i, LSI)]
    if gsis:
        params["GlobalSecondaryIndexes"] = [
            {
                "IndexName": i.name,
                "KeySchema": schema(i.pk, i.sk),
                "Projection": projection(i.projection),
            }
            for i in gsis
        ]
    if lsis:
        params["LocalSecondaryIndexes"] = [
            {
                "IndexName": i.name,
                "KeySchema": schema(table.pk, i.sk),
                "Projection": projection(i.projection),
            }
            for i in lsis
        ]
    return create_table(params)


def time_to_live_request(table: Table, table_name: str) -> Request | None:
    """UpdateTimeToLive for the attribute models name with ``ttl=`` (None if none does)."""
    return time_to_live(
        table_name,
        {
            info.name: info.codec.attributes[info.stamps.ttl]
            for info in table.models.values()
            if info.stamps.ttl is not None
        },
    )
