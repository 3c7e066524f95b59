"""Sharded collections read back as one: the order of the merge and where each shard resumes.

A relationship declared ``Partition(shards=N)`` (or ``Index(name, shards=N)``) keeps its children
in N partitions; a page of them is read by N Queries sent together (one per shard, each from its
own position) and merged here, purely, in sort key order. ``dynorm/io/sharded.py`` sends them.

A position (a *start*) per shard: an ExclusiveStartKey to resume after, ``{}`` for the shard's
first item, or None once the shard was read to its end.
"""

from __future__ import annotations

import base64
import decimal
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.keys import key_text
from dynorm.core.requests import CollectionRead

__all__ = ["ShardResult", "ShardedRead", "merge_page"]

T = TypeVar("T")

#: A shard's position: resume after this key, from its first item ({}), or nothing left (None).
Start = Item | None


def _sort_order(kind: str) -> Callable[[Any], Any]:
    """How a sort key attribute's values compare, as DynamoDB compares them."""
    if kind == "N":
        return lambda value: decimal.Decimal(key_text(value) or "0")
    if kind == "B":
        # bytes from botocore, base64 text from the fast path: compared as the bytes.
        def binary(value: Any) -> bytes:
            raw = value.get("B") if isinstance(value, dict) else None
            return raw if isinstance(raw, bytes) else base64.b64decode(raw or "")

        return binary
    # Strings compare by their UTF-8 bytes, which is code point order: Python's str order.
    return lambda value: key_text(value) or ""


class ShardResult(msgspec.Struct, Generic[T], frozen=True):
    """What one shard's read gave: accepted (object, raw item) pairs, and where it resumes."""

    found: list[tuple[T, Item]]
    #: the key to resume after, None when the shard was read to its end.
    after: Item | None


class ShardedRead(msgspec.Struct, frozen=True):
    """The Queries of a sharded collection, one per shard, read as one collection."""

    reads: tuple[CollectionRead, ...]

    @property
    def forward(self) -> bool:
        return self.reads[0].forward

    def first_starts(self) -> list[Start]:
        """Every shard from its first item."""
        return [{} for _ in self.reads]

    def order(self) -> Callable[[Item], Any]:
        """The merge order of a raw item: its sort key (then the shard breaks no tie: none)."""
        read = self.reads[0]
        attr = read.sk_attr
        if attr is None:
            return lambda raw: ""
        compare = _sort_order(dict(read.key_types).get(attr, "S"))
        return lambda raw: compare(raw.get(attr))


def merge_page(
    sharded: ShardedRead,
    starts: Sequence[Start],
    results: Sequence[ShardResult[T] | None],
    limit: int | None,
) -> tuple[list[T], list[Start]]:
    """The first ``limit`` children over every shard, in sort key order, and the new starts.

    ``results`` holds, per shard, its read from its start (None for a shard already read to its
    end). Each shard read up to ``limit`` children, so the first ``limit`` of the merge are the
    collection's next ``limit``. Without a limit each shard read one DynamoDB page: only children
    up to the nearest page end of a shard that has more are certain to come next, and the rest
    are read again next time. A shard whose children were all taken resumes where its read
    stopped; one that gave some resumes after the last it gave; one that gave none where it was.
    """
    order = sharded.order()
    forward = sharded.forward
    merged = sorted(
        (
            (order(raw), shard, position, obj)
            for shard, result in enumerate(results)
            if result is not None
            for position, (obj, raw) in enumerate(result.found)
        ),
        key=lambda entry: (entry[0], entry[1]),
        reverse=not forward,
    )
    if limit is not None:
        merged = merged[:limit]
    else:
        ends = [
            order(result.after)
            for result in results
            if result is not None and result.after is not None
        ]
        if ends:
            bound = min(ends) if forward else max(ends)
            merged = [e for e in merged if (e[0] <= bound if forward else e[0] >= bound)]
    taken = [0] * len(results)
    for _, shard, position, _ in merged:
        taken[shard] = max(taken[shard], position + 1)
    new_starts: list[Start] = []
    for shard, result in enumerate(results):
        if result is None:
            new_starts.append(None)
        elif taken[shard] == len(result.found):
            new_starts.append(result.after)
        elif taken[shard]:
            _, raw = result.found[taken[shard] - 1]
            new_starts.append(sharded.reads[shard].key_of(raw))
        else:
            new_starts.append(starts[shard])
    return [entry[3] for entry in merged], new_starts
