"""Requests as plain values: what dynorm will send, decided without sending anything."""

from __future__ import annotations

import base64
import hashlib
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Generic, Literal, TypeVar

import msgspec

from .codec.converter import AttributeValue, Item
from .errors import DefinitionError, LimitExceededError
from .keys import KeyTemplate, KeyType, key_attribute_value, number_order

__all__ = [
    "PENDING",
    "CollectionRead",
    "KeyRange",
    "Page",
    "Parse",
    "ReadOptions",
    "Rendered",
    "Request",
    "Retry",
    "ScanRead",
    "Tally",
    "batch_get_tables",
    "batch_write_tables",
    "check_limit",
    "consistent_get",
    "time_to_live",
    "transact_get",
    "transact_get_items",
    "upper_bound",
    "whole_item_reads",
]

T = TypeVar("T")

#: How the transport may repeat a write whose earlier attempt got no reply (see Request.retry).
Retry = Literal["safe", "verify", "token"]
#: Parses a successful response body (see Request.parse).
Parse = Callable[[bytes], dict[str, Any]]

#: The attribute a parent carries while the copies its write changed are being rewritten in
#: batches after it; removed once they all are. A write of the parent while it is
#: there reads the children again, so writing the parent again repairs a fan-out that failed
#: part-way. Every read must keep it: typed page parsing lists it among the generic attributes.
PENDING: Final = "dynorm:copies"


class Request(msgspec.Struct, frozen=True, eq=False):
    """One DynamoDB API call: the action name and its exact parameters.

    ``retry`` says how the transport repeats it after an attempt whose reply was lost:
    ``"safe"`` (the default) resends it as is, since applying it twice changes nothing;
    ``"verify"`` (a conditional write) resends it, and if the condition then fails, reads the
    item to see whether the first attempt stored it; ``"token"`` (ADD, list appends) also writes
    a token unique to the call and refuses a second application of it.

    ``parse``, when given, parses a successful response body in the fast response path instead
    of ``orjson.loads``: reads of items parse them into typed wire structures
    (``dynorm.wire.structs``); the result is the same response, items readable as mappings.
    """

    operation: str
    params: Mapping[str, Any]
    retry: Retry = "safe"
    parse: Parse | None = None

    # Two requests are equal when they make the same call: how it is retried or parsed is not
    # part of the call, and a parser (a function) has no useful repr.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return self.operation == other.operation and self.params == other.params

    def __hash__(self) -> int:
        return hash((self.operation, self.params))

    def __repr__(self) -> str:
        return (
            f"Request(operation={self.operation!r}, params={self.params!r}, retry={self.retry!r})"
        )

    def __str__(self) -> str:
        return f"{self.operation} {dict(self.params)}"

    def as_json(self) -> dict[str, Any]:
        """The request as JSON data: ``{"operation": ..., "params": ...}``.

        ``params`` as DynamoDB's JSON reads them (binary values as base64 text, sets as
        lists); an ``explain`` placeholder stays the object ``{"from_read": ...}``. For
        logging what ``explain`` shows: ``json.dumps([r.as_json() for r in requests])``.
        """
        return {"operation": self.operation, "params": _jsonable(self.params)}


def _jsonable(value: object) -> Any:
    """``value`` with what JSON cannot hold written as DynamoDB's JSON writes it."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)  # a Decimal: its digits, as a number travels in DynamoDB's JSON


def upper_bound(prefix: str) -> str:
    """The smallest string greater than every string that starts with ``prefix``.

    Used as the inclusive top of a BETWEEN: an item whose sort key *equals* the bound may be read,
    and is then dropped because it does not fit the child template.
    """
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return "\U0010ffff" * 4
    following = ord(stripped[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:
        following = 0xE000  # surrogates cannot be sent as UTF-8; the next character is U+E000
    return stripped[:-1] + chr(following)


#: The one-bound sort key conditions, as Python compares values of a number or binary key.
_COMPARE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "eq": operator.eq,
    "gt": operator.gt,
    "ge": operator.ge,
    "lt": operator.lt,
    "le": operator.le,
}


class KeyRange(msgspec.Struct, frozen=True):
    """A sort key condition as sent: equality, a prefix, an inclusive range or one bound."""

    op: Literal["eq", "begins_with", "between", "gt", "ge", "lt", "le"]
    #: The bounds as key text: for a number (N) key the number's digits, for binary (B) base64.
    values: tuple[str, ...]
    #: The sort key attribute's type, which the values are sent as and compared by.
    kind: KeyType = "S"

    @classmethod
    def from_template(
        cls, template: KeyTemplate, values: Mapping[str, object], kind: KeyType = "S"
    ) -> KeyRange | None:
        """Equality when every field is given, a boundary-ending prefix when some are, or None."""
        if template.covers(values):
            return cls("eq", (template.format(values),), kind)
        prefix = template.prefix(values)
        return cls("begins_with", (prefix,)) if prefix else None

    def contains(self, value: str) -> bool:
        """Whether a sort key ``value`` meets this condition (as DynamoDB compares strings).

        Python orders strings by code point, which is the order of their UTF-8 bytes. Number
        keys compare by value, binary keys by their bytes.
        """
        if self.kind != "S":
            return self._contains_typed(value)
        low, high = self.span()
        if self.op == "begins_with":
            return value.startswith(low)
        if self.op == "gt":
            return value > low
        if self.op == "lt":
            return value < high
        return low <= value <= high

    def _contains_typed(self, value: str) -> bool:
        order: Callable[[str], Any] = number_order if self.kind == "N" else base64.b64decode
        try:
            key: Any = order(value)
            bounds: list[Any] = [order(v) for v in self.values]
        except (ValueError, ArithmeticError):  # binascii.Error is a ValueError
            return False
        if self.op == "between":
            return bool(bounds[0] <= key <= bounds[1])
        if self.op == "begins_with":  # a binary key's bytes (a number key has no prefix)
            return isinstance(key, bytes) and key.startswith(bounds[0])
        compare = _COMPARE.get(self.op)
        return compare is not None and bool(compare(key, bounds[0]))

    def span(self) -> tuple[str, str]:
        """The smallest and largest sort key the condition may let through (both included)."""
        first = self.values[0]
        if self.op == "eq":
            return first, first
        if self.op == "begins_with":
            return first, upper_bound(first)
        if self.op == "between":
            return first, self.values[1]
        if self.op in ("gt", "ge"):
            return first, upper_bound("")
        return "", first

    def render(self) -> tuple[str, dict[str, AttributeValue]]:
        """The condition on ``#sk`` and the values it names."""
        kind = self.kind
        values = {":sk": key_attribute_value(kind, self.values[0])}
        if self.op == "between":
            values[":sk2"] = key_attribute_value(kind, self.values[1])
            return "#sk BETWEEN :sk AND :sk2", values
        if self.op == "begins_with":
            return "begins_with(#sk, :sk)", values
        return f"#sk {_OPERATORS[self.op]} :sk", values


_OPERATORS: Final = {"eq": "=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}


class Rendered(msgspec.Struct, frozen=True):
    """An expression rendered with its placeholders (a filter), ready to merge into a request."""

    text: str
    names: Mapping[str, str] = msgspec.field(default_factory=dict)
    values: Mapping[str, AttributeValue] = msgspec.field(default_factory=dict)

    def __repr__(self) -> str:
        # Part of cursor fingerprints: the text, the attribute names and the values, in order.
        return repr((self.text, sorted(self.names.items()), sorted(self.values.items())))


def _read_options(
    params: dict[str, Any],
    *,
    filter_: Rendered | None,
    projection: tuple[str, ...] | None,
    capacity: bool,
) -> dict[str, Any]:
    """Add a FilterExpression, a ProjectionExpression and ReturnConsumedCapacity to ``params``."""
    names = params.setdefault("ExpressionAttributeNames", {})
    if filter_ is not None:
        params["FilterExpression"] = filter_.text
        names.update(filter_.names)
        params.setdefault("ExpressionAttributeValues", {}).update(filter_.values)
    if projection:
        placeholders = [f"#p{i}" for i in range(len(projection))]
        names.update(zip(placeholders, projection, strict=True))
        params["ProjectionExpression"] = ", ".join(placeholders)
    if not names:
        del params["ExpressionAttributeNames"]
    if capacity:
        params["ReturnConsumedCapacity"] = "TOTAL"
    return params


def _counting(request: Request) -> Request:
    """The same read asking for the number of matching items only (Select=COUNT)."""
    params = dict(request.params)
    projection = params.pop("ProjectionExpression", None)
    if projection is not None:
        names = dict(params["ExpressionAttributeNames"])
        for placeholder in projection.split(", "):
            del names[placeholder]
        if names:
            params["ExpressionAttributeNames"] = names
        else:
            del params["ExpressionAttributeNames"]
    params["Select"] = "COUNT"
    return Request(request.operation, params)


class ReadOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What a Query and a Scan share: start keys, models, filter, projection, capacity."""

    #: attributes that make up an ExclusiveStartKey (table keys, then the index's).
    key_attrs: tuple[str, ...] = ()
    #: the types of those of ``key_attrs`` that are no strings (number or binary keys).
    key_types: tuple[tuple[str, KeyType], ...] = ()
    #: the models whose items the read returns (part of a cursor's fingerprint; () for all).
    models: tuple[str, ...] = ()
    filter: Rendered | None = None
    #: the attributes to read (None: whole items).
    projection: tuple[str, ...] | None = None
    #: ask for ReturnConsumedCapacity=TOTAL, so pages report what they consumed.
    capacity: bool = False
    #: parses the responses' bodies (Request.parse; None: orjson.loads).
    parse: Parse | None = None

    def __repr__(self) -> str:
        # Every field but the parser, a function whose repr says nothing about the read.
        fields = (f"{n}={getattr(self, n)!r}" for n in self.__struct_fields__ if n != "parse")
        return f"{type(self).__name__}({', '.join(fields)})"

    @property
    def filtered(self) -> bool:
        """Whether DynamoDB may drop items it read (so a page can hold fewer than its Limit)."""
        return self.filter is not None

    def request(self) -> Request:  # pragma: no cover - each kind of read builds its own
        raise NotImplementedError

    def count_request(self) -> Request:
        """The same read counting the items (Select=COUNT) instead of returning them."""
        return _counting(self.request())

    def key_of(self, item: Item) -> Item:
        """The ExclusiveStartKey that resumes right after ``item``."""
        return {name: item[name] for name in self.key_attrs if name in item}

    def _with_options(self, operation: str, params: dict[str, Any]) -> Request:
        if self.filter is None and self.projection is None and not self.capacity:
            return Request(operation, params, parse=self.parse)
        return Request(
            operation,
            _read_options(
                params, filter_=self.filter, projection=self.projection, capacity=self.capacity
            ),
            parse=self.parse,
        )


class CollectionRead(ReadOptions, frozen=True):
    """A Query over one item collection of the table or an index."""

    table_name: str
    index: str | None
    pk_attr: str
    pk_value: str
    sk_attr: str | None
    range: KeyRange | None = None
    forward: bool = True
    consistent: bool = False
    #: a sort key ``range`` lets through that the query excludes (``gt``/``lt`` in a prefix).
    excluded: str | None = None
    #: the partition key attribute's type (``pk_value`` is its key text).
    pk_kind: KeyType = "S"

    def request(self) -> Request:
        names = {"#pk": self.pk_attr}
        pk = {"S": self.pk_value} if self.pk_kind == "S" else None
        values: dict[str, Any] = {":pk": pk or key_attribute_value(self.pk_kind, self.pk_value)}
        condition = "#pk = :pk"
        if self.range is not None and self.sk_attr is not None:
            names["#sk"] = self.sk_attr
            text, range_values = self.range.render()
            condition += " AND " + text
            values.update(range_values)
        params: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
        if self.index is not None:
            params["IndexName"] = self.index
        if not self.forward:
            params["ScanIndexForward"] = False
        if self.consistent:
            params["ConsistentRead"] = True
        return self._with_options("Query", params)

    def fingerprint(self) -> str:
        """Identifies the query for cursors (the table name is left out: tests rename tables)."""
        parts: tuple[object, ...] = (
            self.models,
            self.index,
            self.pk_value,
            self.range,
            self.forward,
        )
        if self.filter is not None:
            parts += (self.filter,)
        text = repr(parts)
        return hashlib.blake2s(text.encode(), digest_size=8).hexdigest()


class ScanRead(ReadOptions, frozen=True):
    """A Scan of the table or an index, one segment of ``segments`` (parallel scans)."""

    table_name: str
    index: str | None = None
    segment: int = 0
    segments: int = 1
    consistent: bool = False

    def request(self) -> Request:
        params: dict[str, Any] = {"TableName": self.table_name}
        if self.index is not None:
            params["IndexName"] = self.index
        if self.segments > 1:
            params["Segment"] = self.segment
            params["TotalSegments"] = self.segments
        if self.consistent:
            params["ConsistentRead"] = True
        return self._with_options("Scan", params)

    def fingerprint(self) -> str:
        """Identifies the scan and segment for cursors (the table name is left out)."""
        parts = (self.models, self.index, self.segment, self.segments, self.filter)
        return hashlib.blake2s(repr(parts).encode(), digest_size=8).hexdigest()


# -- the one builder of each request kind not built by a planner of its own ----------------------
#
# Query: CollectionRead.request; PutItem, UpdateItem, DeleteItem: dynorm/mapping/writes.py.


def get_item(
    table_name: str,
    key: Item,
    *,
    consistent: bool = False,
    attribute: str | None = None,
    parse: Parse | None = None,
) -> Request:
    """GetItem of the item with ``key`` (only ``attribute`` of it, when given).

    ``parse`` parses the response body (see Request.parse).
    """
    params: dict[str, Any] = {"TableName": table_name, "Key": key}
    if consistent:
        params["ConsistentRead"] = True
    if attribute is not None:
        params["ProjectionExpression"] = "#a"
        params["ExpressionAttributeNames"] = {"#a": attribute}
    return Request("GetItem", params, parse=parse)


def consistent_get(key: Item, table_name: str) -> Request:
    """A consistent GetItem of the whole item with ``key``."""
    return get_item(table_name, key, consistent=True)


def batch_get(table_name: str, entry: Mapping[str, Any]) -> Request:
    """BatchGetItem of one table's ``entry`` (``{"Keys": [...], "ConsistentRead": ...}``)."""
    return Request("BatchGetItem", {"RequestItems": {table_name: dict(entry)}})


def whole_item_reads(table_name: str) -> Request:
    """The BatchGetItem that follows a page read through an index holding items in part.

    Shown by ``explain`` with empty Keys: they are the table keys of the page's items.
    """
    return batch_get(table_name, {"Keys": []})


def batch_write(table_name: str, writes: Sequence[Mapping[str, Any]]) -> Request:
    """BatchWriteItem of PutRequest/DeleteRequest entries (at most BATCH_WRITE_MAX)."""
    return batch_write_tables({table_name: writes})


def transact_get(table_name: str, keys: Sequence[Item]) -> Request:
    """TransactGetItems of whole items by primary key (at most TRANSACT_MAX, each key once)."""
    return transact_get_items([(table_name, key) for key in keys])


def transact_get_items(keys: Sequence[tuple[str, Item]]) -> Request:
    """TransactGetItems of (table name, primary key) pairs: one point in time across tables."""
    items = [{"Get": {"TableName": name, "Key": key}} for name, key in keys]
    return Request("TransactGetItems", {"TransactItems": items})


def batch_get_tables(entries: Mapping[str, Mapping[str, Any]]) -> Request:
    """BatchGetItem of several tables' entries (table name -> ``{"Keys": [...], ...}``)."""
    return Request("BatchGetItem", {"RequestItems": {n: dict(e) for n, e in entries.items()}})


def batch_write_tables(writes: Mapping[str, Sequence[Mapping[str, Any]]]) -> Request:
    """BatchWriteItem of several tables' PutRequest/DeleteRequest entries (table name -> list)."""
    return Request("BatchWriteItem", {"RequestItems": {n: list(w) for n, w in writes.items()}})


def time_to_live(table_name: str, attributes: Mapping[str, str]) -> Request | None:
    """UpdateTimeToLive on the attribute models name with ``ttl=`` (model -> stored attribute).

    None when no model names one; DefinitionError when models name different ones (DynamoDB
    reads one per table).
    """
    names = set(attributes.values())
    if len(names) > 1:
        named = ", ".join(f"{model}: {attr}" for model, attr in sorted(attributes.items()))
        raise DefinitionError(
            f"table {table_name!r}: models name different ttl attributes ({named}); DynamoDB "
            "reads one per table, so give them one"
        )
    if not names:
        return None
    spec = {"Enabled": True, "AttributeName": names.pop()}
    return Request("UpdateTimeToLive", {"TableName": table_name, "TimeToLiveSpecification": spec})


def create_table(params: Mapping[str, Any]) -> Request:
    """CreateTable with ``params`` (``mapping/tabledef.py`` makes them from a Table)."""
    return Request("CreateTable", dict(params))


def describe_table(table_name: str) -> Request:
    """DescribeTable of ``table_name``: its keys, indexes, status and item count."""
    return Request("DescribeTable", {"TableName": table_name})


def delete_table(table_name: str) -> Request:
    """DeleteTable of ``table_name``."""
    return Request("DeleteTable", {"TableName": table_name})


def condition_check(table_name: str, key: Item, condition: str, **params: Any) -> Request:
    """ConditionCheck of the item with ``key`` (a transaction action): ``condition`` must hold.

    ``params`` are the placeholders the condition uses.
    """
    return Request(
        "ConditionCheck",
        {"TableName": table_name, "Key": key, "ConditionExpression": condition, **params},
    )


def update_item(
    table_name: str, key: Item, update: str, *, retry: Retry = "safe", **params: Any
) -> Request:
    """UpdateItem of the item with ``key``: the UpdateExpression ``update``.

    ``params`` are the call's other parameters (ConditionExpression, the placeholders its
    expressions use, ReturnValues ...); ``retry`` as :class:`Request` says.
    """
    return Request(
        "UpdateItem",
        {"TableName": table_name, "Key": key, "UpdateExpression": update, **params},
        retry=retry,
    )


def transact_write(actions: Sequence[Mapping[str, Any]]) -> Request:
    """TransactWriteItems of Put/Update/Delete/ConditionCheck actions (at most TRANSACT_MAX)."""
    return Request("TransactWriteItems", {"TransactItems": list(actions)})


class Page(msgspec.Struct, Generic[T], frozen=True):
    """One page of results and the cursor for the next (None when nothing follows).

    ``scanned`` is how many items DynamoDB read for it (ScannedCount, summed over the requests
    the page took; more than ``len(items)`` when a filter or other models' items were skipped);
    ``consumed`` the capacity units those requests consumed, when the query asked for them
    (``.with_capacity()``), else None.
    """

    items: list[T]
    cursor: str | None
    scanned: int = 0
    consumed: float | None = None

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """``Page[Model]`` as a pydantic type (FastAPI ``response_model=Page[Org]``)."""
        from .pydantic_page import page_core_schema  # noqa: PLC0415 - only when pydantic asks

        return page_core_schema(cls, source, handler)


class Tally(msgspec.Struct):
    """What the responses of one page (or count) report: items read and capacity consumed."""

    scanned: int = 0
    consumed: float | None = None

    def add(self, response: Mapping[str, Any]) -> None:
        self.scanned += response.get("ScannedCount", 0)
        capacity = response.get("ConsumedCapacity")
        if capacity is not None:
            self.consumed = (self.consumed or 0.0) + float(capacity.get("CapacityUnits", 0.0))


def check_limit(limit: int | None) -> None:
    # Checked at run time too: a float or bool slipping through would confuse DynamoDB's Limit.
    if limit is not None and (type(limit) is not int or limit < 1):
        raise LimitExceededError(f"limit must be a positive int or None; got {limit!r}")
