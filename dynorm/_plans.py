"""Requests as plain values: what dynorm will send, decided without sending anything."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

import attrs

from ._codec import Item
from ._errors import LimitExceededError
from ._keys import KeyTemplate

__all__ = [
    "CollectionRead",
    "KeyRange",
    "Page",
    "Request",
    "Retry",
    "check_limit",
    "consistent_get",
    "existence_check",
    "transact_get",
    "upper_bound",
]

T = TypeVar("T")

#: How the transport may repeat a write whose earlier attempt got no reply (see Request.retry).
Retry = Literal["safe", "verify", "token"]


@attrs.frozen
class Request:
    """One DynamoDB API call: the action name and its exact parameters.

    ``retry`` says how the transport repeats it after an attempt whose reply was lost:
    ``"safe"`` (the default) resends it as is, since applying it twice changes nothing;
    ``"verify"`` (a conditional write) resends it, and if the condition then fails, reads the
    item to see whether the first attempt stored it; ``"token"`` (ADD, list appends) also writes
    a token unique to the call and refuses a second application of it.
    """

    operation: str
    params: Mapping[str, Any]
    retry: Retry = attrs.field(default="safe", eq=False, kw_only=True)

    def __str__(self) -> str:
        return f"{self.operation} {dict(self.params)}"


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


@attrs.frozen
class KeyRange:
    """A sort key condition: equality, a prefix, or an inclusive range."""

    op: Literal["eq", "begins_with", "between"]
    values: tuple[str, ...]

    @classmethod
    def from_template(cls, template: KeyTemplate, values: Mapping[str, object]) -> KeyRange | None:
        """Equality when every field is given, a boundary-ending prefix when some are, or None."""
        if template.covers(values):
            return cls("eq", (template.format(values),))
        prefix = template.prefix(values)
        return cls("begins_with", (prefix,)) if prefix else None

    def contains(self, value: str) -> bool:
        """Whether a sort key ``value`` meets this condition (as DynamoDB compares strings).

        Python orders strings by code point, which is the order of their UTF-8 bytes.
        """
        if self.op == "eq":
            return value == self.values[0]
        if self.op == "begins_with":
            return value.startswith(self.values[0])
        return self.values[0] <= value <= self.values[1]


@attrs.frozen
class CollectionRead:
    """A Query over one item collection of the table or an index."""

    table_name: str
    index: str | None
    pk_attr: str
    pk_value: str
    sk_attr: str | None
    range: KeyRange | None = None
    forward: bool = True
    consistent: bool = False
    #: attributes that make up an ExclusiveStartKey (table keys, then the index's).
    key_attrs: tuple[str, ...] = ()
    #: the models whose items the read returns (part of a cursor's fingerprint).
    models: tuple[str, ...] = ()

    def request(self) -> Request:
        names = {"#pk": self.pk_attr}
        values: dict[str, Any] = {":pk": {"S": self.pk_value}}
        condition = "#pk = :pk"
        if self.range is not None and self.sk_attr is not None:
            names["#sk"] = self.sk_attr
            if self.range.op == "eq":
                condition += " AND #sk = :sk"
            elif self.range.op == "begins_with":
                condition += " AND begins_with(#sk, :sk)"
            else:
                condition += " AND #sk BETWEEN :sk AND :sk2"
                values[":sk2"] = {"S": self.range.values[1]}
            values[":sk"] = {"S": self.range.values[0]}
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
        return Request("Query", params)

    def fingerprint(self) -> str:
        """Identifies the query for cursors (the table name is left out: tests rename tables)."""
        text = repr((self.models, self.index, self.pk_value, self.range, self.forward))
        return hashlib.blake2s(text.encode(), digest_size=8).hexdigest()

    def key_of(self, item: Item) -> Item:
        """The ExclusiveStartKey that resumes right after ``item``."""
        return {name: item[name] for name in self.key_attrs if name in item}


# -- the one builder of each request kind not built by a planner of its own ----------------------
#
# Query: CollectionRead.request; PutItem, UpdateItem, DeleteItem: dynorm/_writes.py.


def get_item(
    table_name: str, key: Item, *, consistent: bool = False, attribute: str | None = None
) -> Request:
    """GetItem of the item with ``key`` (only ``attribute`` of it, when given)."""
    params: dict[str, Any] = {"TableName": table_name, "Key": key}
    if consistent:
        params["ConsistentRead"] = True
    if attribute is not None:
        params["ProjectionExpression"] = "#a"
        params["ExpressionAttributeNames"] = {"#a": attribute}
    return Request("GetItem", params)


def consistent_get(key: Item, table_name: str) -> Request:
    """A consistent GetItem of the whole item with ``key``."""
    return get_item(table_name, key, consistent=True)


def existence_check(table_name: str, key: Item, key_attr: str) -> Request:
    """A consistent GetItem that reads back only ``key_attr``: is the item with ``key`` stored?"""
    return get_item(table_name, key, consistent=True, attribute=key_attr)


def batch_get(table_name: str, entry: Mapping[str, Any]) -> Request:
    """BatchGetItem of one table's ``entry`` (``{"Keys": [...], "ConsistentRead": ...}``)."""
    return Request("BatchGetItem", {"RequestItems": {table_name: dict(entry)}})


def batch_write(table_name: str, writes: Sequence[Mapping[str, Any]]) -> Request:
    """BatchWriteItem of PutRequest/DeleteRequest entries (at most BATCH_WRITE_MAX)."""
    return Request("BatchWriteItem", {"RequestItems": {table_name: list(writes)}})


def transact_get(table_name: str, keys: Sequence[Item]) -> Request:
    """TransactGetItems of whole items by primary key (at most TRANSACT_MAX, each key once)."""
    items = [{"Get": {"TableName": table_name, "Key": key}} for key in keys]
    return Request("TransactGetItems", {"TransactItems": items})


def transact_write(actions: Sequence[Mapping[str, Any]]) -> Request:
    """TransactWriteItems of Put/Update/Delete/ConditionCheck actions (at most TRANSACT_MAX)."""
    return Request("TransactWriteItems", {"TransactItems": list(actions)})


@attrs.frozen
class Page(Generic[T]):
    """One page of results and the cursor for the next (None when nothing follows)."""

    items: list[T]
    cursor: str | None

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def check_limit(limit: int | None) -> None:
    # Checked at run time too: a float or bool slipping through would confuse DynamoDB's Limit.
    if limit is not None and (type(limit) is not int or limit < 1):
        raise LimitExceededError(f"limit must be a positive int or None; got {limit!r}")
