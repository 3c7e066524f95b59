"""Reading a NoSQL Workbench data model file, checked as DynamoDB would check it.

:func:`load_model` reads the file (exact numbers, a name given twice refused),
:func:`read_model` checks it and gives typed values (see dynorm.tools.workbench_model):
every key, index, facet and item value against DynamoDB's limits, a WorkbenchError naming the
place. :func:`table_from_model` makes the Table that creates the file's table.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, cast

import attrs

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, DefinitionError, DynormError
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
from dynorm.mapping.table import GSI, Table

from .workbench_model import (
    ATTRIBUTE_TYPES,
    AWS_SERVICE,
    KEY_TYPES,
    WORKBENCH_VERSION,
    Attribute,
    Facet,
    KeyType,
    Projection,
    WorkbenchError,
    WorkbenchIndex,
    WorkbenchModel,
    WorkbenchTable,
    key_id,
    same_number,
)

__all__ = [
    "load_model",
    "read_model",
    "table_from_model",
]


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
    name = attribute_name(_text(_get(obj, "AttributeName", where), f"{where}.AttributeName"), where)
    return Attribute(
        name, _choice(_get(obj, "AttributeType", where), f"{where}.AttributeType", types)
    )


def _keys(obj: object, where: str) -> tuple[Attribute, Attribute | None]:
    keys = _mapping(obj, where)
    pk = _attribute(_get(keys, "PartitionKey", where), f"{where}.PartitionKey", KEY_TYPES)
    attribute_name(pk.name, f"{where}.PartitionKey.AttributeName", MAX_KEY_NAME_BYTES)
    sk = None
    if keys.get("SortKey") is not None:
        sk = _attribute(keys["SortKey"], f"{where}.SortKey", KEY_TYPES)
        attribute_name(sk.name, f"{where}.SortKey.AttributeName", MAX_KEY_NAME_BYTES)
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
            same = same_number(member)
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


def attribute_name(name: str, where: str, limit: int = MAX_ATTRIBUTE_NAME_BYTES) -> str:
    """An attribute name in ``where`` (an item, a map), held to DynamoDB's length limit.

    ``limit``: MAX_KEY_NAME_BYTES for the name of a key attribute or a projected attribute.
    Every name is measured, short ones too: one with no UTF-8 form (a lone surrogate) is
    refused here, before any message gives it as part of a path it could not be printed in.
    """
    try:
        size = utf8_size(name)
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
            "M": {
                attribute_name(k, where): _plain(v, f"{where}.{k}", depth + 1)
                for k, v in value.items()
            }
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
            "M": {
                attribute_name(k, where): _value(v, f"{where}.{k}", depth + 1)
                for k, v in names.items()
            }
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
class TableKeys:
    """What the items of a table are checked against: its key attributes."""

    #: the primary key's attributes (every item has them).
    primary: tuple[str, ...]
    #: every key attribute (table and indexes) -> its declared type.
    types: Mapping[str, str]
    #: every key attribute -> the most bytes its values may have (a sort key anywhere: the
    #: sort key's lower limit).
    limits: Mapping[str, int]

    @classmethod
    def of(
        cls, pk: Attribute, sk: Attribute | None, indexes: Sequence[WorkbenchIndex]
    ) -> TableKeys:
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


def read_item(obj: object, where: str, keys: TableKeys) -> Item:
    """One item of the file, checked: its values, its key attributes' types and values."""
    item = {
        attribute_name(attr, where): _value(av, f"{where}.{attr}")
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
    try:
        # What a put checks, by the same rules: the item's size and text with no UTF-8 form
        # (a JSON file can hold a lone surrogate, "\ud800"), in values and names alike.
        check_item(item, where)
    except DynormError as exc:  # CodecError, LimitExceededError: the message names the place
        raise WorkbenchError(str(exc)) from exc
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
                attribute_name(_text(n, f"{there}[{i}]"), f"{there}[{i}]", MAX_KEY_NAME_BYTES)
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

    checked = TableKeys.of(pk, sk, indexes)
    found: dict[str, tuple[Item, str]] = {}

    def items_of(value: object, there: str) -> tuple[Item, ...]:
        out = []
        for i, raw in enumerate(_list(value, there)):
            item = read_item(raw, f"{there}[{i}]", checked)
            ident = key_id(item, primary)
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
