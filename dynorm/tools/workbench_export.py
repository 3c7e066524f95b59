"""Exporting a dynorm Table as a NoSQL Workbench data model (see dynorm.tools.workbench).

:func:`export_model` describes the table, its models (one facet each, with the DynamoDB type
:func:`stored_type` gives each field) and sample items, encoded as a put writes them;
:func:`scan_items` reads a live table's items for it; :func:`dump_model` writes the JSON text.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import typing
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.codec.generic import encode_any
from dynorm.core.codec.typeforms import LIST_ORIGINS, MAP_ORIGINS, SET_ORIGINS, without_none
from dynorm.core.errors import CodecError
from dynorm.core.requests import ScanRead
from dynorm.core.stamps import utc_now
from dynorm.io.paging import pages
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.relations import embedded_of
from dynorm.mapping.table import GSI, LSI, Table
from dynorm.mapping.writeplan import WritePlanner

from .workbench_model import AWS_SERVICE, WORKBENCH_VERSION, Projection, base64_text, key_id

if TYPE_CHECKING:
    from dynorm.io.database import Database

__all__ = [
    "dump_model",
    "export_model",
    "scan_items",
    "stored_type",
]

# -- types of stored values ---------------------------------------------------------------------

#: Python types and the DynamoDB type dynorm stores them as (see dynorm/core/codec/); the first
#: match wins, so ``bool`` is tested before ``int``.
_SCALARS: Final[tuple[tuple[type, str], ...]] = (
    (bool, "BOOL"),
    (str, "S"),
    (int, "N"),
    (float, "N"),
    (decimal.Decimal, "N"),
    (bytes, "B"),
    (uuid.UUID, "S"),
    (datetime.datetime, "S"),
    (datetime.date, "S"),
    (datetime.time, "S"),
)


def _tag_of(value: object) -> str | None:
    try:
        (tag,) = encode_any(value)
    except (CodecError, TypeError, ValueError):
        return None
    return tag


def stored_type(tp: object) -> str | None:
    """The DynamoDB type dynorm stores a field of type ``tp`` as (None: the type does not tell).

    None for ``Any`` and for types stored by hooks of their own (registered on the converter).

    ``X | None`` is stored as X (None as NULL); enums as their values; attrs classes and dicts
    as maps (``M``); lists and tuples as lists (``L``); sets of str, numbers or bytes as
    ``SS``/``NS``/``BS``; datetimes, dates, times and UUIDs as text (``S``).
    """
    if tp is type(None):
        return "NULL"
    tp = without_none(tp)
    if isinstance(tp, type):
        if attrs.has(tp):
            return "M"
        if issubclass(tp, enum.Enum):
            tags = {_tag_of(member.value) for member in tp}
            return tags.pop() if len(tags) == 1 else None
        for base, tag in _SCALARS:
            if issubclass(tp, base):
                return tag
    origin = typing.get_origin(tp) or tp
    args = typing.get_args(tp)
    if origin is Literal:
        tags = {_tag_of(value) for value in args}
        return tags.pop() if len(tags) == 1 else None
    if origin in LIST_ORIGINS:
        return "L"
    if origin in MAP_ORIGINS:
        return "M"
    if origin in SET_ORIGINS and args:
        element = stored_type(args[0])
        return {"S": "SS", "N": "NS", "B": "BS"}.get(element or "")
    return None


def _field_types(info: ModelInfo[Any]) -> dict[str, str | None]:
    """Stored attribute -> its type, for each field of ``info`` the item holds itself."""
    found: dict[str, str | None] = {}
    epoch = info.stamps.epoch
    for name, tp in info.field_types.items():
        if name in info.codec.key_only:
            continue
        found[info.codec.attributes[name]] = "N" if name in epoch else stored_type(tp)
    for rel in embedded_of(info):
        if rel.embedded is not None:
            found[rel.embedded.attribute] = "L" if rel.embedded.key is None else "M"
    return found


def _model_attributes(info: ModelInfo[Any]) -> dict[str, str | None]:
    """The non-key attributes ``info``'s items hold, in a fixed order, with their types.

    Its fields (declaration order), its embedded children, the index keys its templates fill,
    then the table's type attribute.
    """
    table = info.table
    primary = table.primary_attributes
    found = {a: t for a, t in _field_types(info).items() if a not in primary}
    for attr in info.templates:
        if attr not in primary:
            found.setdefault(attr, table.key_type(attr))
    if table.type_attribute is not None and info.entity is not None:
        found.setdefault(table.type_attribute, "S")
    if info.versions is not None:
        found.setdefault(info.versions.attribute, "N")
    return found


def _current(table: Table, raw: Mapping[str, AttributeValue]) -> Item:
    """A stored item as the current code reads it: a versioned model's upgraded if older.

    CodecError for an item newer than the code, UpgradeError when its upgrade fails.
    """
    info = table.model_of(raw)
    return dict((raw if info is None else info.upgraded(raw)).items())


# -- DynamoDB JSON, as a file holds it ----------------------------------------------------------


def _as_json(av: AttributeValue) -> AttributeValue:
    """An AttributeValue as the file holds it: binaries as base64, sets and maps sorted."""
    ((tag, value),) = av.items()
    if tag == "B":
        return {"B": base64_text(value)}
    if tag == "BS":
        return {"BS": sorted(base64_text(v) for v in value)}
    if tag in ("SS", "NS"):
        return {tag: sorted(value)}
    if tag == "M":
        return {"M": {k: _as_json(value[k]) for k in sorted(value)}}
    if tag == "L":
        return {"L": [_as_json(v) for v in value]}
    return {tag: value}


def _ordered(item: Mapping[str, AttributeValue], keys: Sequence[str]) -> Item:
    """``item`` for the file: key attributes first, then the others by name."""
    rest = sorted(a for a in item if a not in keys)
    return {a: _as_json(item[a]) for a in [*(k for k in keys if k in item), *rest]}


# -- export -------------------------------------------------------------------------------------


def _workbench_date(when: datetime.datetime) -> str:
    """A date as Workbench writes it: ``Jan 5, 2026, 09:30 AM``."""
    return f"{when:%b} {when.day}, {when:%Y, %I:%M %p}"


def _key_attribute(name: str, type_: str = "S") -> dict[str, str]:
    return {"AttributeName": name, "AttributeType": type_}


def _key_attributes(table: Table, pk: str, sk: str | None) -> dict[str, Any]:
    """The key attributes as the Table declares their types (``key_types``; S by default)."""
    keys = {"PartitionKey": _key_attribute(pk, table.key_type(pk))}
    if sk is not None:
        keys["SortKey"] = _key_attribute(sk, table.key_type(sk))
    return keys


def _projection(projection: Projection) -> dict[str, Any]:
    if isinstance(projection, tuple):
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(projection)}
    return {"ProjectionType": projection}


def _facet_name(info: ModelInfo[Any]) -> str:
    return info.entity or info.name


def _encoded(table: Table, objs: Iterable[object]) -> list[Item]:
    """The items a put of each of ``objs`` writes: checked, stamped, index keys, type attribute.

    Samples, never written: a versioned model's objects carry their next version, unchecked.
    """
    planner = WritePlanner(table, table.name)
    now = utc_now()
    return [planner.sample_item(obj, now) for obj in objs]


def export_model(
    table: Table,
    *,
    items: Iterable[object] | None = None,
    raw_items: Iterable[Mapping[str, AttributeValue]] | None = None,
    name: str | None = None,
    table_name: str | None = None,
    author: str = "",
    description: str = "",
    when: datetime.datetime | None = None,
) -> dict[str, Any]:
    """``table`` as a NoSQL Workbench data model (a JSON-ready dict, format version 3.0).

    ``items``: model instances to show as sample data, each encoded as a put stores it (index
    keys, type attribute, next version and timestamps included; versioned models too, as nothing
    is written). ``raw_items``: items as DynamoDB holds them (:func:`scan_items` reads a live
    table's), each given to the model the table's classifier maps it to; items of no model stay
    in the table's own ``TableData``. An item of a versioned model stored at an older schema
    version is exported upgraded, as a read gives it (``@table.model(schema_version=...)``).

    One facet per model (named by its entity name, or class name), its key templates as the key
    aliases. Attribute types come from the field types (from the sample items where a type does
    not tell, else ``S``). The output is stable: attributes in declaration order, items sorted by
    key, so exports can be compared and diffed. ``name`` (default: the table's name) is the
    model's name, ``table_name`` the table's in the file; ``when`` (default: now) is written as
    the creation and modification date. Local secondary indexes, which Workbench models lack,
    are left out and named in the description.
    """
    table.check()
    primary = list(table.primary_attributes)
    by_key: dict[str, Item] = {}
    for raw in raw_items or ():
        by_key[key_id(raw, primary)] = _current(table, raw)
    for item in _encoded(table, items or ()):
        by_key[key_id(item, primary)] = item
    ordered = [by_key[k] for k in sorted(by_key)]

    models = list(table.models.values())
    facet_items: dict[str, list[Item]] = {info.name: [] for info in models}
    loose: list[Item] = []
    for item in ordered:
        info = table.model_of(item)
        (loose if info is None else facet_items[info.name]).append(_ordered(item, primary))

    types: dict[str, str | None] = {}
    facets = []
    for info in models:
        attributes = _model_attributes(info)
        for attr, type_ in attributes.items():
            if types.get(attr) is None:
                types[attr] = type_
        facet: dict[str, Any] = {
            "FacetName": _facet_name(info),
            "KeyAttributeAlias": {"PartitionKeyAlias": info.templates[table.pk].source},
            "TableData": facet_items[info.name],
            "NonKeyAttributes": list(attributes),
            "DataAccess": {"MySql": {}},
        }
        if table.sk is not None:
            facet["KeyAttributeAlias"]["SortKeyAlias"] = info.templates[table.sk].source
        facets.append(facet)
    gsis = [i for i in table.indexes.values() if isinstance(i, GSI)]
    for index in gsis:
        for key in (index.pk, index.sk):
            if key is not None and key not in primary:
                types.setdefault(key, table.key_type(key))
    seen: dict[str, str] = {}
    for item in ordered:
        for attr, av in item.items():
            if attr not in primary:
                seen.setdefault(attr, next(iter(av)))
    for attr in sorted(seen):
        types.setdefault(attr, seen[attr])
    non_key = [_key_attribute(a, t or seen.get(a, "S")) for a, t in types.items()]

    lsis = [i for i in table.indexes.values() if isinstance(i, LSI)]
    if lsis:
        left_out = ", ".join(f"{i.name} (sort key {i.sk!r})" for i in lsis)
        note = f"Local secondary indexes (NoSQL Workbench models have none): {left_out}."
        description = f"{description}\n\n{note}" if description else note
    date = _workbench_date(when or datetime.datetime.now().astimezone())
    return {
        "ModelName": name or table.name,
        "ModelMetadata": {
            "Author": author,
            "DateCreated": date,
            "DateLastModified": date,
            "Description": description,
            "AWSService": AWS_SERVICE,
            "Version": WORKBENCH_VERSION,
        },
        "DataModel": [
            {
                "TableName": table_name or table.name,
                "KeyAttributes": _key_attributes(table, table.pk, table.sk),
                "NonKeyAttributes": non_key,
                "TableFacets": facets,
                "GlobalSecondaryIndexes": [
                    {
                        "IndexName": index.name,
                        "KeyAttributes": _key_attributes(table, index.pk, index.sk),
                        "Projection": _projection(index.projection),
                    }
                    for index in gsis
                ],
                "TableData": loose,
                "DataAccess": {"MySql": {}},
                "BillingMode": "PAY_PER_REQUEST",
            }
        ],
    }


def dump_model(data: Mapping[str, Any]) -> str:
    """The JSON text of a model, as Workbench writes it (two-space indents, UTF-8 text)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


async def scan_items(db: Database) -> list[Item]:
    """Every item of ``db``'s table as DynamoDB holds it (a consistent Scan, page by page).

    What :func:`export_model` takes as ``raw_items`` to export a live table.
    """
    scan = ScanRead(db.table_name, consistent=True).request()
    return [item async for response in pages(db.send, scan) for item in response.get("Items", [])]
