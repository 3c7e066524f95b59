"""AWS NoSQL Workbench data models (the JSON files its data modeler imports and exports).

Both directions, for one table at a time:

- :func:`export_model` describes a dynorm :class:`~dynorm.Table` as a Workbench model (format
  version 3.0): the key attributes, every attribute the models store with its DynamoDB type, the
  global secondary indexes, one facet per model (its key templates as the key aliases) and sample
  items, encoded exactly as dynorm writes them. :func:`scan_items` reads a live table's items
  for it. :func:`dump_model` writes the JSON text.
- :func:`read_model` (:func:`load_model` for a file) checks a Workbench file and gives typed
  values; :func:`table_from_model` makes a :class:`~dynorm.Table` with the file's keys and indexes,
  and :func:`import_model` creates the table if missing and stores the file's items.

NoSQL Workbench models have no local secondary indexes: an export leaves a table's LSIs out and
says so in the model's description. Key attributes are strings in dynorm; a file may declare
number or binary keys (a table created from such a file keeps their types).

The file's items are DynamoDB JSON (``{"pk": {"S": "ORG#ACME"}}``), binary values as base64 text;
values inside ``M`` and ``L`` may be plain JSON, as Workbench writes them (``"M": {"on": true}``).
Files of every format version are read (1.0, 2.0 and 3.0 hold tables in one shape); exports are
format 3.0, DynamoDB JSON throughout.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import decimal
import enum
import hashlib
import json
import re
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, cast

import attrs

from dynorm.core.chunks import BATCH_WRITE_MAX, chunked
from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.codec.generic import encode_any
from dynorm.core.codec.typeforms import LIST_ORIGINS, MAP_ORIGINS, SET_ORIGINS, without_none
from dynorm.core.errors import (
    CodecError,
    DatabaseError,
    DefinitionError,
    DynormError,
    TableNotFoundError,
)
from dynorm.core.limits import (
    MAX_ATTRIBUTE_NAME_BYTES,
    MAX_DEPTH,
    MAX_KEY_NAME_BYTES,
    MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES,
    check_decimal,
    check_item,
    int_text,
    utf8_size,
)
from dynorm.core.requests import ScanRead
from dynorm.core.stamps import utc_now
from dynorm.core.steps import write_batch
from dynorm.io.paging import pages
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.relations import embedded_of
from dynorm.mapping.table import GSI, LSI, Table
from dynorm.mapping.writeplan import WritePlanner

from .migrate_workers import ProgressTable, Segment, Workers, progress_table_name, work_segments

if TYPE_CHECKING:
    from dynorm.io.database import Database

__all__ = [
    "AWS_SERVICE",
    "WORKBENCH_VERSION",
    "Attribute",
    "Facet",
    "ImportIncompleteError",
    "ImportReport",
    "ImportedItem",
    "WorkbenchError",
    "WorkbenchIndex",
    "WorkbenchModel",
    "WorkbenchTable",
    "dump_model",
    "export_model",
    "import_model",
    "load_model",
    "read_model",
    "scan_items",
    "stored_type",
    "table_from_model",
]

#: The data model format version NoSQL Workbench writes, and exports carry (files of every
#: version are read: 1.0, 2.0 and 3.0 hold tables in one shape).
WORKBENCH_VERSION: Final = "3.0"
#: ``ModelMetadata.AWSService`` of a DynamoDB model.
AWS_SERVICE: Final = "Amazon DynamoDB"
#: The attribute types a Workbench model declares (DynamoDB's data type descriptors).
ATTRIBUTE_TYPES: Final = ("S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS")
#: The types a key attribute may have.
KEY_TYPES: Final = ("S", "N", "B")

Projection = Literal["ALL", "KEYS_ONLY"] | tuple[str, ...]
KeyType = Literal["S", "N", "B"]


class WorkbenchError(DynormError, ValueError):
    """A NoSQL Workbench data model cannot be read or imported; the message names the place."""


class ImportIncompleteError(DynormError):
    """An import stopped part-way: a write failed after its retries (the cause is chained).

    ``stored`` of the model's ``total`` items are stored for certain (the writes DynamoDB
    confirmed); the others may not be. An import writes whole items, so running it again
    stores the rest and rewrites the stored ones unchanged.
    """

    def __init__(self, message: str, *, table_name: str, stored: int, total: int) -> None:
        super().__init__(message)
        self.table_name = table_name
        self.stored = stored
        self.total = total


# -- typed values -------------------------------------------------------------------------------


@attrs.frozen
class Attribute:
    """An attribute a model declares: its name and DynamoDB type (``"S"``, ``"N"``, ``"M"`` …)."""

    name: str
    type: str


@attrs.frozen
class WorkbenchIndex:
    """A global secondary index of a Workbench table."""

    name: str
    pk: Attribute
    sk: Attribute | None
    #: ``"ALL"``, ``"KEYS_ONLY"``, or the non-key attributes an INCLUDE projection copies.
    projection: Projection = "ALL"


@attrs.frozen
class Facet:
    """A facet: one kind of item of a table (in dynorm's exports, one model).

    ``pk_alias``/``sk_alias`` are the labels Workbench shows for the key attributes (dynorm
    writes the model's key templates there); ``attributes`` the non-key attributes it shows;
    ``items`` the facet's own sample items.
    """

    name: str
    pk_alias: str
    sk_alias: str | None
    attributes: tuple[str, ...] = ()
    items: tuple[Item, ...] = ()


@attrs.frozen
class WorkbenchTable:
    """One table of a Workbench model.

    ``items`` holds every sample item of the table, those of its ``TableData`` and of its facets,
    one per primary key, in the order the file gives them (table data first).
    """

    name: str
    pk: Attribute
    sk: Attribute | None
    attributes: tuple[Attribute, ...] = ()
    indexes: tuple[WorkbenchIndex, ...] = ()
    facets: tuple[Facet, ...] = ()
    items: tuple[Item, ...] = ()
    billing_mode: str | None = None

    @property
    def key_attributes(self) -> tuple[Attribute, ...]:
        """The table's key attributes and its indexes', each once (table keys first)."""
        found: dict[str, Attribute] = {}
        for index in (None, *self.indexes):
            keys = (self.pk, self.sk) if index is None else (index.pk, index.sk)
            for key in keys:
                if key is not None:
                    found.setdefault(key.name, key)
        return tuple(found.values())

    def key_of(self, item: Mapping[str, AttributeValue]) -> Item:
        """The primary key of one of the table's items."""
        names = [self.pk.name] + ([self.sk.name] if self.sk else [])
        return {name: item[name] for name in names}


@attrs.frozen
class WorkbenchModel:
    """A NoSQL Workbench data model: its name, metadata and tables."""

    name: str
    tables: tuple[WorkbenchTable, ...]
    author: str = ""
    description: str = ""
    version: str = WORKBENCH_VERSION

    def table(self, name: str | None = None) -> WorkbenchTable:
        """The table called ``name``; without a name, the model's only table."""
        if name is None:
            if len(self.tables) == 1:
                return self.tables[0]
            names = ", ".join(repr(t.name) for t in self.tables)
            raise WorkbenchError(
                f"model {self.name!r} has {len(self.tables)} tables ({names}); name the one to use"
            )
        for table in self.tables:
            if table.name == name:
                return table
        names = ", ".join(repr(t.name) for t in self.tables)
        raise WorkbenchError(f"model {self.name!r} has no table {name!r}; its tables: {names}")


# -- types of stored values ---------------------------------------------------------------------

#: Python types and the DynamoDB type dynorm stores them as (see dynorm/_codec.py); the first
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
    return found


# -- DynamoDB JSON ------------------------------------------------------------------------------


def _base64(value: object) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)  # already base64 text (a fast-path reply)


def _as_json(av: AttributeValue) -> AttributeValue:
    """An AttributeValue as the file holds it: binaries as base64, sets and maps sorted."""
    ((tag, value),) = av.items()
    if tag == "B":
        return {"B": _base64(value)}
    if tag == "BS":
        return {"BS": sorted(_base64(v) for v in value)}
    if tag in ("SS", "NS"):
        return {tag: sorted(value)}
    if tag == "M":
        return {"M": {k: _as_json(value[k]) for k in sorted(value)}}
    if tag == "L":
        return {"L": [_as_json(v) for v in value]}
    return {tag: value}


def _as_wire(av: AttributeValue) -> AttributeValue:
    """An AttributeValue of the file as a request sends it: binaries as bytes."""
    ((tag, value),) = av.items()
    if tag == "B":
        return {"B": base64.b64decode(value)}
    if tag == "BS":
        return {"BS": [base64.b64decode(v) for v in value]}
    if tag == "M":
        return {"M": {k: _as_wire(v) for k, v in value.items()}}
    if tag == "L":
        return {"L": [_as_wire(v) for v in value]}
    return {tag: value}


def _ordered(item: Mapping[str, AttributeValue], keys: Sequence[str]) -> Item:
    """``item`` for the file: key attributes first, then the others by name."""
    rest = sorted(a for a in item if a not in keys)
    return {a: _as_json(item[a]) for a in [*(k for k in keys if k in item), *rest]}


#: Enough digits to hold any DynamoDB number exactly (the default context keeps 28).
_EXACT: Final = decimal.Context(prec=2 * 38)


def _same_number(text: str) -> str:
    """One text for every spelling of a number (``"1"``, ``"1.0"``, ``"10E-1"``: ``"1"``)."""
    try:
        value = _EXACT.normalize(decimal.Decimal(text))
    except decimal.InvalidOperation:
        return text  # not a number: checked where the value is read
    return "0" if not value else str(value)


def _key_id(item: Mapping[str, AttributeValue], keys: Sequence[str]) -> str:
    """One text per primary key: number keys by value, as DynamoDB compares them."""
    values = []
    for k in keys:
        av = item.get(k)
        if av is not None and "N" in av:
            av = {"N": _same_number(str(av["N"]))}
        values.append(av)
    return json.dumps(values, sort_keys=True, default=_base64)


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
    in the table's own ``TableData``.

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
        by_key[_key_id(raw, primary)] = dict(raw)
    for item in _encoded(table, items or ()):
        by_key[_key_id(item, primary)] = item
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


# -- reading a file -----------------------------------------------------------------------------


def _missing(where: str) -> WorkbenchError:
    return WorkbenchError(f"{where} is missing")


def _get(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise _missing(f"{where}.{key}" if where else key)
    return obj[key]


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise WorkbenchError(f"{where} must be an object; got {type(value).__name__}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise WorkbenchError(f"{where} must be a list; got {type(value).__name__}")
    return value


def _text(value: object, where: str, *, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not empty):
        raise WorkbenchError(f"{where} must be a non-empty string; got {value!r}")
    return value


def _choice(value: object, where: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise WorkbenchError(f"{where} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)


def _attribute(obj: Mapping[str, Any], where: str, types: Sequence[str]) -> Attribute:
    obj = _mapping(obj, where)
    name = _name(_text(_get(obj, "AttributeName", where), f"{where}.AttributeName"), where)
    return Attribute(
        name, _choice(_get(obj, "AttributeType", where), f"{where}.AttributeType", types)
    )


def _keys(obj: object, where: str) -> tuple[Attribute, Attribute | None]:
    keys = _mapping(obj, where)
    pk = _attribute(_get(keys, "PartitionKey", where), f"{where}.PartitionKey", KEY_TYPES)
    _name(pk.name, f"{where}.PartitionKey.AttributeName", MAX_KEY_NAME_BYTES)
    sk = None
    if keys.get("SortKey") is not None:
        sk = _attribute(keys["SortKey"], f"{where}.SortKey", KEY_TYPES)
        _name(sk.name, f"{where}.SortKey.AttributeName", MAX_KEY_NAME_BYTES)
    return pk, sk


#: Number text as DynamoDB reads it (``decimal.Decimal`` also takes ``1_000`` and spaces).
_NUMBER_TEXT: Final = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _number(value: object, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            value = int_text(value)  # a huge int is refused without printing it (str() fails)
        except CodecError as exc:
            raise WorkbenchError(f"{where}: {exc}") from None
    elif isinstance(value, float | decimal.Decimal):
        value = str(value)  # a JSON number (load_model reads them as Decimal, exactly)
    if not isinstance(value, str):
        raise WorkbenchError(f"{where}: a number is written as text; got {value!r}")
    try:
        number = decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise WorkbenchError(f"{where}: {value!r} is not a number") from None
    try:
        check_decimal(number)  # finite, 38 significant digits, within DynamoDB's range
    except CodecError as exc:
        raise WorkbenchError(f"{where}: {exc}") from None
    if not _NUMBER_TEXT.fullmatch(value):
        raise WorkbenchError(f"{where}: {value!r} is not a number DynamoDB reads (e.g. -12.5E3)")
    return value


def _distinct(tag: str, members: list[str], where: str) -> list[str]:
    """``members`` of a set, refused if two are one value (numbers by value, binaries decoded)."""
    seen: dict[object, int] = {}
    for i, member in enumerate(members):
        same: object = member
        if tag == "NS":
            same = _same_number(member)
        elif tag == "BS":
            same = base64.b64decode(member)
        if same in seen:
            raise WorkbenchError(
                f"{where}[{i}]: {member!r} is the same value as [{seen[same]}] "
                f"({members[seen[same]]!r}); DynamoDB refuses a set holding one value twice"
            )
        seen[same] = i
    return members


def _binary(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise WorkbenchError(f"{where}: a binary value is base64 text; got {value!r}")
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        raise WorkbenchError(f"{where}: {value!r} is not base64 text") from None
    return value


def _tagged(values: Iterable[object]) -> bool:
    """Whether the values inside an ``M`` or ``L`` are DynamoDB JSON (each ``{"S": ...}``).

    NoSQL Workbench writes them as plain JSON (``"M": {"is_enabled": true}``); a map or list
    is read as DynamoDB JSON when every value in it is one ``{TYPE: value}`` object.
    """
    return all(
        isinstance(v, Mapping) and len(v) == 1 and next(iter(v)) in ATTRIBUTE_TYPES for v in values
    )


def _too_deep(where: str) -> WorkbenchError:
    return WorkbenchError(
        f"{where}: the value nests more than {MAX_DEPTH} maps and lists (MAX_DEPTH), which "
        "DynamoDB refuses; flatten it"
    )


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else f"{text[: width - 12]}...{text[-8:]}"


def _name(name: str, where: str, limit: int = MAX_ATTRIBUTE_NAME_BYTES) -> str:
    """An attribute name in ``where`` (an item, a map), held to DynamoDB's length limit.

    ``limit``: MAX_KEY_NAME_BYTES for the name of a key attribute or a projected attribute.
    """
    try:
        size = utf8_size(name) if len(name) * 4 > limit else 0
    except CodecError as exc:
        raise WorkbenchError(f"{where}: an attribute name: {exc}") from None
    if size > limit:
        what = "a key attribute's name" if limit == MAX_KEY_NAME_BYTES else "an attribute name"
        constant = (
            "MAX_KEY_NAME_BYTES" if limit == MAX_KEY_NAME_BYTES else "MAX_ATTRIBUTE_NAME_BYTES"
        )
        raise WorkbenchError(
            f"{where}: the attribute name {_clip(name)!r} is {size} bytes, over DynamoDB's "
            f"limit of {limit} bytes for {what} ({constant}); shorten it"
        )
    return name


def _plain(value: object, where: str, depth: int) -> AttributeValue:
    """A plain JSON value inside an ``M`` or ``L`` as NoSQL Workbench writes it, typed."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int | float | decimal.Decimal):
        return {"N": _number(value, where)}
    if depth >= MAX_DEPTH:
        raise _too_deep(where)
    if isinstance(value, list):
        return {"L": [_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]}
    if isinstance(value, Mapping):
        return {
            "M": {_name(k, where): _plain(v, f"{where}.{k}", depth + 1) for k, v in value.items()}
        }
    raise WorkbenchError(f"{where}: {value!r} is not a JSON value")  # pragma: no cover


def _value(av: object, where: str, depth: int = 0) -> AttributeValue:
    """One AttributeValue of an item, checked (numbers given as JSON numbers become text).

    Inside ``M`` and ``L``, values are DynamoDB JSON or plain JSON (see :func:`_tagged`).
    """
    if not isinstance(av, Mapping) or len(av) != 1:
        raise WorkbenchError(
            f'{where} must be one DynamoDB JSON value such as {{"S": "text"}}; got {av!r}'
        )
    ((tag, value),) = av.items()
    if tag not in ATTRIBUTE_TYPES:
        raise WorkbenchError(f"{where}: unknown type {tag!r}; types: {', '.join(ATTRIBUTE_TYPES)}")
    if tag == "S" and not isinstance(value, str):
        raise WorkbenchError(f"{where}: S holds text; got {value!r}")
    if tag == "BOOL" and not isinstance(value, bool):
        raise WorkbenchError(f"{where}: BOOL holds true or false; got {value!r}")
    if tag == "NULL" and value is not True:
        raise WorkbenchError(f"{where}: NULL holds true; got {value!r}")
    if tag == "N":
        return {"N": _number(value, where)}
    if tag == "B":
        return {"B": _binary(value, where)}
    if tag in ("M", "L") and depth >= MAX_DEPTH:
        raise _too_deep(where)
    if tag == "M":
        names = _mapping(value, where)
        if not _tagged(names.values()):
            return _plain(names, where, depth)
        return {
            "M": {_name(k, where): _value(v, f"{where}.{k}", depth + 1) for k, v in names.items()}
        }
    if tag == "L":
        values = _list(value, where)
        if not _tagged(values):
            return _plain(values, where, depth)
        return {"L": [_value(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(values)]}
    if tag in ("SS", "NS", "BS"):
        members = _list(value, where)
        if not members:
            raise WorkbenchError(f"{where}: DynamoDB has no empty sets")
        if tag == "SS":
            texts = [_text(v, f"{where}[{i}]", empty=True) for i, v in enumerate(members)]
        else:
            check = _number if tag == "NS" else _binary
            texts = [check(v, f"{where}[{i}]") for i, v in enumerate(members)]
        return {tag: _distinct(tag, texts, where)}
    return {tag: value}


@attrs.frozen
class _Keys:
    """What the items of a table are checked against: its key attributes."""

    #: the primary key's attributes (every item has them).
    primary: tuple[str, ...]
    #: every key attribute (table and indexes) -> its declared type.
    types: Mapping[str, str]
    #: every key attribute -> the most bytes its values may have (a sort key anywhere: the
    #: sort key's lower limit).
    limits: Mapping[str, int]

    @classmethod
    def of(cls, pk: Attribute, sk: Attribute | None, indexes: Sequence[WorkbenchIndex]) -> _Keys:
        types: dict[str, str] = {}
        limits: dict[str, int] = {}
        for index in (None, *indexes):
            key_pair = (pk, sk) if index is None else (index.pk, index.sk)
            for key, limit in zip(
                key_pair, (MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES), strict=True
            ):
                if key is not None:
                    types.setdefault(key.name, key.type)
                    limits[key.name] = min(limits.get(key.name, limit), limit)
        return cls((pk.name, *([sk.name] if sk else [])), types, limits)


def _check_key_value(attr: str, av: AttributeValue, limit: int, where: str) -> None:
    """Refuse a key value DynamoDB would: empty text or binary, or over the key size limit."""
    ((tag, value),) = av.items()
    if tag == "N":
        return
    try:
        size = len(base64.b64decode(value)) if tag == "B" else utf8_size(value)
    except CodecError as exc:
        raise WorkbenchError(f"{where}.{attr}: {exc}") from None
    if not size:
        raise WorkbenchError(
            f"{where}.{attr}: a key attribute (of the table or an index) cannot be empty; give "
            "it a value, or leave the attribute out where it is an index key"
        )
    if size > limit:
        kind = "partition" if limit == MAX_PARTITION_KEY_BYTES else "sort"
        raise WorkbenchError(
            f"{where}.{attr}: the key value is {size} bytes, over DynamoDB's {kind} key limit "
            f"of {limit} bytes; shorten it"
        )


def _item(obj: object, where: str, keys: _Keys) -> Item:
    """One item of the file, checked: its values, its key attributes' types and values."""
    item = {
        _name(attr, where): _value(av, f"{where}.{attr}")
        for attr, av in _mapping(obj, where).items()
    }
    if "" in item:
        raise WorkbenchError(f"{where} has an attribute named ''; DynamoDB names are not empty")
    for attr in keys.primary:
        if attr not in item:
            raise WorkbenchError(f"{where} lacks the key attribute {attr!r}")
    for attr, declared in keys.types.items():
        av = item.get(attr)
        if av is None:
            continue
        if declared not in av:
            raise WorkbenchError(
                f"{where}.{attr} is a key attribute of type {declared}; got {next(iter(av))}"
            )
        _check_key_value(attr, av, keys.limits[attr], where)
    return item


def _index(obj: object, where: str) -> WorkbenchIndex:
    index = _mapping(obj, where)
    name = _text(_get(index, "IndexName", where), f"{where}.IndexName")
    pk, sk = _keys(_get(index, "KeyAttributes", where), f"{where}.KeyAttributes")
    projection: Projection = "ALL"
    if index.get("Projection") is not None:
        spec = _mapping(index["Projection"], f"{where}.Projection")
        kind = _choice(
            _get(spec, "ProjectionType", f"{where}.Projection"),
            f"{where}.Projection.ProjectionType",
            ("ALL", "KEYS_ONLY", "INCLUDE"),
        )
        if kind == "INCLUDE":
            there = f"{where}.Projection.NonKeyAttributes"
            names = _list(_get(spec, "NonKeyAttributes", f"{where}.Projection"), there)
            projection = tuple(
                _name(_text(n, f"{there}[{i}]"), f"{there}[{i}]", MAX_KEY_NAME_BYTES)
                for i, n in enumerate(names)
            )
        else:
            projection = "ALL" if kind == "ALL" else "KEYS_ONLY"
    return WorkbenchIndex(name, pk, sk, projection)


def _table(obj: object, where: str) -> WorkbenchTable:
    table = _mapping(obj, where)
    name = _text(_get(table, "TableName", where), f"{where}.TableName")
    pk, sk = _keys(_get(table, "KeyAttributes", where), f"{where}.KeyAttributes")
    primary = [pk.name] + ([sk.name] if sk else [])
    attributes = tuple(
        _attribute(a, f"{where}.NonKeyAttributes[{i}]", ATTRIBUTE_TYPES)
        for i, a in enumerate(_list(table.get("NonKeyAttributes", []), f"{where}.NonKeyAttributes"))
    )
    gsi_where = f"{where}.GlobalSecondaryIndexes"
    indexes = tuple(
        _index(i, f"{gsi_where}[{n}]")
        for n, i in enumerate(_list(table.get("GlobalSecondaryIndexes", []), gsi_where))
    )
    names = [i.name for i in indexes]
    for n, index_name in enumerate(names):
        if index_name in names[:n]:
            raise WorkbenchError(f"{gsi_where}[{n}]: index {index_name!r} is declared twice")
    keys: dict[str, str] = {}
    for i, index in enumerate((None, *indexes)):
        key_pair = (pk, sk) if index is None else (index.pk, index.sk)
        for key in key_pair:
            if key is None:
                continue
            if keys.setdefault(key.name, key.type) != key.type:
                place = f"{gsi_where}[{i - 1}]" if index is not None else where
                raise WorkbenchError(
                    f"{place}: key attribute {key.name!r} is typed {key.type} here and "
                    f"{keys[key.name]} elsewhere; DynamoDB keeps one type per key attribute"
                )

    checked = _Keys.of(pk, sk, indexes)
    found: dict[str, tuple[Item, str]] = {}

    def items_of(value: object, there: str) -> tuple[Item, ...]:
        out = []
        for i, raw in enumerate(_list(value, there)):
            item = _item(raw, f"{there}[{i}]", checked)
            ident = _key_id(item, primary)
            if ident in found:
                first, place = found[ident]
                if first != item:
                    shown = ", ".join(f"{a}={item[a]}" for a in primary)
                    raise WorkbenchError(
                        f"{there}[{i}] and {place} hold different items with one key "
                        f"({shown}); keep one"
                    )
            else:
                found[ident] = (item, f"{there}[{i}]")
            out.append(item)
        return tuple(out)

    items_of(table.get("TableData", []), f"{where}.TableData")
    facets = []
    facet_where = f"{where}.TableFacets"
    for i, raw in enumerate(_list(table.get("TableFacets", []), facet_where)):
        there = f"{facet_where}[{i}]"
        facet = _mapping(raw, there)
        alias = _mapping(_get(facet, "KeyAttributeAlias", there), f"{there}.KeyAttributeAlias")
        sk_alias = alias.get("SortKeyAlias")
        attributes_there = f"{there}.NonKeyAttributes"
        facets.append(
            Facet(
                name=_text(_get(facet, "FacetName", there), f"{there}.FacetName"),
                pk_alias=_text(
                    _get(alias, "PartitionKeyAlias", f"{there}.KeyAttributeAlias"),
                    f"{there}.KeyAttributeAlias.PartitionKeyAlias",
                ),
                sk_alias=None
                if sk_alias is None
                else _text(sk_alias, f"{there}.KeyAttributeAlias.SortKeyAlias"),
                attributes=tuple(
                    _text(a, f"{attributes_there}[{n}]")
                    for n, a in enumerate(
                        _list(facet.get("NonKeyAttributes", []), attributes_there)
                    )
                ),
                items=items_of(facet.get("TableData", []), f"{there}.TableData"),
            )
        )
    billing = table.get("BillingMode")
    return WorkbenchTable(
        name=name,
        pk=pk,
        sk=sk,
        attributes=attributes,
        indexes=indexes,
        facets=tuple(facets),
        items=tuple(item for item, _ in found.values()),
        billing_mode=None if billing is None else _text(billing, f"{where}.BillingMode"),
    )


def read_model(data: Mapping[str, Any]) -> WorkbenchModel:
    """A NoSQL Workbench data model (the parsed JSON of its file) as typed values, checked.

    Every table's keys, global secondary indexes, facets and items (``TableData`` of the table
    and of its facets, one item per key) are checked as DynamoDB would: a WorkbenchError names
    what is wrong and where (``DataModel[0].KeyAttributes.PartitionKey is missing``).
    """
    root = _mapping(data, "the model")
    name = _text(_get(root, "ModelName", ""), "ModelName")
    meta = _mapping(root.get("ModelMetadata", {}), "ModelMetadata")
    # Every published format (1.0, 2.0, 3.0) holds tables in the same shape: the version is
    # kept for the record, not checked.
    version = str(meta.get("Version", WORKBENCH_VERSION))
    service = meta.get("AWSService", AWS_SERVICE)
    if service != AWS_SERVICE:
        raise WorkbenchError(
            f"ModelMetadata.AWSService is {service!r}; only {AWS_SERVICE!r} models hold tables"
        )
    tables = _list(_get(root, "DataModel", ""), "DataModel")
    if not tables:
        raise WorkbenchError("DataModel holds no table")
    return WorkbenchModel(
        name=name,
        tables=tuple(_table(t, f"DataModel[{i}]") for i, t in enumerate(tables)),
        author=str(meta.get("Author") or ""),
        description=str(meta.get("Description") or ""),
        version=version,
    )


class _Repeated(dict[str, Any]):
    """A JSON object that gives a name twice (the last value kept, as ``json`` does)."""

    repeated: str


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of :func:`load_model`: marks objects that give a name twice."""
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    seen: set[str] = set()
    marked = _Repeated(found)
    for name, _ in pairs:  # pragma: no branch - a name is repeated
        if name in seen:
            marked.repeated = name
            break
        seen.add(name)
    return marked


def _check_repeated(data: object) -> None:
    """WorkbenchError naming the JSON path of the first object that gives a name twice."""
    todo: list[tuple[object, str]] = [(data, "")]
    while todo:
        value, where = todo.pop()
        if isinstance(value, _Repeated):
            place = f"{where}.{value.repeated}" if where else value.repeated
            raise WorkbenchError(
                f"{place} is given twice in one object; JSON readers keep one of the two "
                "values, so say which one you mean and remove the other"
            )
        if isinstance(value, dict):
            children = [(v, f"{where}.{k}" if where else k) for k, v in value.items()]
        elif isinstance(value, list):
            children = [(v, f"{where}[{i}]") for i, v in enumerate(value)]
        else:
            continue
        todo += reversed(children)  # depth first, in the file's order


def load_model(path: str | Path) -> WorkbenchModel:
    """Read a NoSQL Workbench data model file (see :func:`read_model`).

    A file that cannot be read, is not UTF-8 JSON, or is not a valid model is a WorkbenchError
    naming the file and what is wrong. So is an object giving one name twice (named by its
    path); JSON numbers are read exactly, whatever their length.
    """
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise WorkbenchError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = json.loads(
            text.decode("utf-8"),
            object_pairs_hook=_object,
            parse_int=decimal.Decimal,  # no int-string conversion limit; checked as numbers
            parse_float=decimal.Decimal,
        )
    except UnicodeDecodeError as exc:
        raise WorkbenchError(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "NoSQL Workbench writes UTF-8, save the file as UTF-8"
        ) from None
    except json.JSONDecodeError as exc:
        raise WorkbenchError(f"{path}: not JSON ({exc})") from None
    except RecursionError:
        raise WorkbenchError(f"{path}: not JSON this reader can read (nested too deeply)") from None
    try:
        _check_repeated(data)
        return read_model(data)
    except WorkbenchError as exc:
        raise WorkbenchError(f"{path}: {exc}") from None


def table_from_model(model: WorkbenchModel | WorkbenchTable, *, source: str | None = None) -> Table:
    """A Table with the keys and global secondary indexes of a Workbench table (no models).

    ``source`` names the model's table (needed when it has several). Connect with it to create
    and fill the table: ``connect(table_from_model(model), ...)`` then :func:`import_model`.
    """
    found = model.table(source) if isinstance(model, WorkbenchModel) else model
    try:
        return Table(
            found.name,
            pk=found.pk.name,
            sk=found.sk.name if found.sk else None,
            indexes=[
                GSI(i.name, pk=i.pk.name, sk=i.sk.name if i.sk else None, projection=i.projection)
                for i in found.indexes
            ],
            # read_model allows S, N and B only.
            key_types={k.name: cast("KeyType", k.type) for k in found.key_attributes},
        )
    except DefinitionError as exc:
        raise WorkbenchError(f"table {found.name!r}: {exc}") from None


# -- import -------------------------------------------------------------------------------------


@attrs.frozen
class ImportedItem:
    """One item an import stored: its primary key and the model it maps to (None: none)."""

    key: Item
    model: str | None = None


@attrs.frozen
class ImportReport:
    """What :func:`import_model` did.

    ``items`` lists every item stored (its key, and with ``models=`` the model it maps to);
    ``classified`` says whether models were given. With ``workers=``, ``segments_finished``
    names the runs of items this worker stored (the others stored the rest).
    """

    table_name: str
    created: bool
    items: tuple[ImportedItem, ...]
    classified: bool = False
    segments_finished: tuple[int, ...] = ()

    @property
    def written(self) -> int:
        """How many items were stored."""
        return len(self.items)

    @property
    def unmapped(self) -> tuple[ImportedItem, ...]:
        """The items no model maps (empty without ``models=``)."""
        return tuple(i for i in self.items if self.classified and i.model is None)

    @property
    def by_model(self) -> dict[str, int]:
        """Model name -> how many of the items it maps (models in first-seen order)."""
        counts: dict[str, int] = {}
        for item in self.items:
            if item.model is not None:
                counts[item.model] = counts.get(item.model, 0) + 1
        return counts


def _key_text(found: WorkbenchTable, item: Mapping[str, AttributeValue]) -> str:
    return ", ".join(f"{a}={next(iter(v.values()))!r}" for a, v in found.key_of(item).items())


def _check_same_keys(table: Table, found: WorkbenchTable, what: str) -> None:
    theirs = (found.pk.name, found.sk.name if found.sk else None)
    if (table.pk, table.sk) != theirs:
        raise WorkbenchError(
            f"{what} Table {table.name!r} has keys pk={table.pk!r}, sk={table.sk!r}; the "
            f"model's table {found.name!r} has pk={theirs[0]!r}, sk={theirs[1]!r}. Use a Table "
            "with the same keys (table_from_model(model) makes one)"
        )


def _check_indexes(table: Table, found: WorkbenchTable) -> None:
    for index in found.indexes:
        mine = table.indexes.get(index.name)
        wanted = (index.pk.name, index.sk.name if index.sk else None)
        if not isinstance(mine, GSI) or (mine.pk, mine.sk) != wanted:
            raise WorkbenchError(
                f"the model's index {index.name!r} (pk={wanted[0]!r}, sk={wanted[1]!r}) is not "
                f"declared on Table {table.name!r}, which would create the table without it; "
                "connect with table_from_model(model)"
            )


def _check_live(described: Mapping[str, Any], found: WorkbenchTable, table_name: str) -> None:
    """Refuse to write into an existing table whose keys differ from the model's."""
    schema = {k["KeyType"]: k["AttributeName"] for k in described.get("KeySchema", [])}
    live = (schema.get("HASH"), schema.get("RANGE"))
    wanted = (found.pk.name, found.sk.name if found.sk else None)
    if live != wanted:
        raise WorkbenchError(
            f"table {table_name!r} exists with keys pk={live[0]!r}, sk={live[1]!r}; the "
            f"model's table has pk={wanted[0]!r}, sk={wanted[1]!r}. Import into another table"
        )
    types = {
        d["AttributeName"]: d["AttributeType"] for d in described.get("AttributeDefinitions", [])
    }
    for key in found.key_attributes:
        if key.name in types and types[key.name] != key.type:
            raise WorkbenchError(
                f"table {table_name!r} types key attribute {key.name!r} as "
                f"{types[key.name]}; the model as {key.type}. Import into another table"
            )


def _check_key_names(found: WorkbenchTable) -> None:
    """Again, for a WorkbenchTable not read from a file: key and projected attribute names."""
    for key in found.key_attributes:
        _name(key.name, f"table {found.name!r}", MAX_KEY_NAME_BYTES)
    for index in found.indexes:
        for name in index.projection if isinstance(index.projection, tuple) else ():
            _name(name, f"index {index.name!r} projection", MAX_KEY_NAME_BYTES)


async def _create(db: Database, found: WorkbenchTable, timeout: float) -> None:
    # The model's key types (read_model allows S, N and B only).
    types: dict[str, KeyType] = {k.name: cast("KeyType", k.type) for k in found.key_attributes}
    await db.create_table(timeout=timeout, key_types=types)


async def _write_all(
    db: Database, writes: list[dict[str, Any]], on_progress: Callable[[int, int], None] | None
) -> None:
    """Every write, a batch at a time, all batches at once; counts what is confirmed stored."""
    total = len(writes)
    stored = 0

    async def write(batch: Sequence[dict[str, Any]]) -> None:
        nonlocal stored
        await db.run(write_batch(batch))
        stored += len(batch)
        if on_progress is not None:
            on_progress(stored, total)

    outcomes = await asyncio.gather(
        *(write(batch) for batch in chunked(writes, BATCH_WRITE_MAX)), return_exceptions=True
    )
    failed = [e for e in outcomes if isinstance(e, BaseException)]
    for error in failed:
        if not isinstance(error, DynormError):
            raise error  # a bug, or a cancellation: as it is
    if failed:
        cause = failed[0]
        raise ImportIncompleteError(
            f"the import into {db.table_name!r} stopped part-way: {stored} of {total} items are "
            f"stored, {total - stored} may not be ({type(cause).__name__}: {cause}). Run the "
            "same import again to store the rest: it writes whole items, so the stored ones are "
            "rewritten unchanged",
            table_name=db.table_name,
            stored=stored,
            total=total,
        ) from cause


async def import_model(
    db: Database,
    model: WorkbenchModel | WorkbenchTable,
    *,
    source: str | None = None,
    create: bool = True,
    models: Table | None = None,
    timeout: float = 60.0,
    on_progress: Callable[[int, int], None] | None = None,
    workers: Workers | None = None,
) -> ImportReport:
    """Store a Workbench table's items in ``db``'s table, creating the table if it is missing.

    ``db`` is connected with :func:`table_from_model` (or any Table with the model's keys and
    global indexes); the live table is ``db.table_name``. ``source`` names the model's table
    when it has several. With ``create`` the table is created when missing (its indexes,
    on-demand billing) and waited for; an existing table must have the model's keys. Items are
    written with BatchWriteItem (25 a request, throttled ones retried), each as a whole item,
    so importing again overwrites the same keys. ``models``: a Table whose classifier reports
    which model each item maps to (``report.unmapped`` lists those no model maps).
    ``on_progress(stored, total)`` is called each time a batch of items is confirmed stored.

    ``workers=Workers(segments=N, ...)`` makes this call one of several processes importing
    the same file together: the items are cut in ``N`` runs of the file's order, each claimed
    under a lease in the progress table, as a migration's segments are (see
    dynorm.tools.migrate_workers); a dead worker's run is taken over from its last stored
    batch once its lease expires. The call returns once every run is stored
    (``report.segments_finished``: the runs this worker stored; ``on_progress`` counts them).

    When a write fails after its retries, the other batches are let finish, then
    :class:`ImportIncompleteError` says how many items are stored; importing again completes
    the table (items are written whole, so the stored ones are rewritten unchanged).

    Everything is checked before the first request that changes anything: the keys of
    ``db.table``, of ``models`` and of the live table against the model's, and every item
    against DynamoDB's limits (size, nesting).
    """
    found = model.table(source) if isinstance(model, WorkbenchModel) else model
    _check_same_keys(db.table, found, "the Database's")
    if models is not None:
        _check_same_keys(models, found, "models")
    _check_key_names(found)
    imported = tuple(
        ImportedItem(
            key=found.key_of(item),
            model=None if models is None or (info := models.model_of(item)) is None else info.name,
        )
        for item in found.items
    )
    keys = _Keys.of(found.pk, found.sk, found.indexes)
    writes = []
    for n, item in enumerate(found.items):
        # Again, for a WorkbenchTable not read from a file: values, key values, sets.
        _item(item, f"table {found.name!r} items[{n}]", keys)
        wire = {a: _as_wire(v) for a, v in item.items()}
        check_item(wire, f"item {_key_text(found, item)}", deep=True)  # size, depth, text
        writes.append({"PutRequest": {"Item": wire}})
    described = await db.describe_table()
    created = False
    if described is not None:
        _check_live(described, found, db.table_name)
    elif not create:
        raise TableNotFoundError(
            f"table {db.table_name!r} does not exist; import with create=True to create it",
            code="ResourceNotFoundException",
            operation="DescribeTable",
        )
    else:
        _check_indexes(db.table, found)
        try:
            await _create(db, found, timeout)
            created = True
        except DatabaseError as exc:
            # Another worker of a shared import created it first: wait until it is active.
            if workers is None or exc.code != "ResourceInUseException":
                raise
            deadline = asyncio.get_running_loop().time() + timeout
            while ((await db.describe_table()) or {}).get("TableStatus") != "ACTIVE":
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.2)
    finished: tuple[int, ...] = ()
    if workers is not None:
        finished = await _write_shared(db, found, writes, workers, on_progress)
    elif writes:
        await _write_all(db, writes, on_progress)
    return ImportReport(
        table_name=db.table_name,
        created=created,
        items=imported,
        classified=models is not None,
        segments_finished=finished,
    )


#: Items a worker of a shared import stores between two saves of its progress.
SHARED_STEP: Final = 100


async def _write_shared(
    db: Database,
    found: WorkbenchTable,
    writes: list[dict[str, Any]],
    workers: Workers,
    on_progress: Callable[[int, int], None] | None,
) -> tuple[int, ...]:
    """This worker's part of an import several run: runs of the items, claimed under leases."""
    count = workers.segments
    bounds = [len(writes) * n // count for n in range(count + 1)]
    digest = hashlib.sha256(
        json.dumps(writes, sort_keys=True, default=_base64).encode()
    ).hexdigest()[:16]
    name = workers.progress_table or progress_table_name(db.table_name)
    job = f"{db.table_name}:import:{found.name}:{count}:{digest}"
    progress = ProgressTable(db, workers, name, job)
    await progress.ensure_table()
    stored = 0

    async def work(segment: Segment) -> None:
        nonlocal stored
        run = writes[bounds[segment.number] : bounds[segment.number + 1]]
        start = int(segment.position["next"]["N"]) if segment.position else 0
        while True:
            step = run[start : start + SHARED_STEP]
            if step:
                await _write_all(db, step, None)
            start += len(step)
            stored += len(step)
            segment.counters.written += len(step)
            segment.counters.pages += 1
            left = start < len(run)
            await progress.save(segment, {"next": {"N": str(start)}} if left else None)
            if on_progress is not None:
                on_progress(stored, len(writes))
            if not left:
                return

    finished, _ = await work_segments(progress, job, work)
    return tuple(sorted(finished))
