"""Reading a sharded collection: every shard's Query sent together, merged in sort key order.

The merge and the positions are planned in ``dynorm.mapping.sharded``; this module sends. A page
reads every shard that has more concurrently (one round trip); ``iterate_sharded`` holds one
buffered page per shard and reads a shard again only when its buffer runs out.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any, TypeVar

from dynorm.core.codec.converter import Item
from dynorm.core.requests import CollectionRead
from dynorm.mapping.sharded import ShardedRead, ShardResult, Start, merge_page

from .reader import Reader

__all__ = ["iterate_sharded", "read_sharded_page"]

T = TypeVar("T")


def _with_raw(accept: Callable[[Item], T | None]) -> Callable[[Item], tuple[T, Item] | None]:
    def pair(raw: Item) -> tuple[T, Item] | None:
        obj = accept(raw)
        return None if obj is None else (obj, raw)

    return pair


async def read_sharded_page(
    reader: Reader,
    sharded: ShardedRead,
    accept: Callable[[Item], T | None],
    *,
    limit: int | None,
    starts: Sequence[Start],
) -> tuple[list[T], list[Start]]:
    """The next ``limit`` children over every shard, merged, and each shard's new start."""
    pair = _with_raw(accept)

    async def one(read: CollectionRead, start: Start) -> ShardResult[T] | None:
        if start is None:
            return None  # read to its end already
        found, after = await reader.read_page(read, pair, limit=limit, start=start or None)
        return ShardResult(found, after)

    results = await asyncio.gather(*(one(r, s) for r, s in zip(sharded.reads, starts, strict=True)))
    return merge_page(sharded, starts, results, limit)


async def iterate_sharded(
    reader: Reader,
    sharded: ShardedRead,
    accept: Callable[[Item], T | None],
    *,
    starts: Sequence[Start] | None = None,
) -> AsyncGenerator[T, None]:
    """Every child from ``starts`` on (default: every shard's first), in sort key order.

    Each shard is a lazy iteration of its own pages; the first page of every shard is read
    concurrently, then a shard is read again only once its buffered items are used up.
    Stopping the iteration cancels every request in flight.
    """
    order = sharded.order()
    forward = sharded.forward
    pair = _with_raw(accept)
    if starts is None:
        starts = sharded.first_starts()
    shards: list[AsyncIterator[tuple[T, Item]]] = [
        reader.iterate(read, pair, start=start or None)
        for read, start in zip(sharded.reads, starts, strict=True)
        if start is not None
    ]

    async def head(shard: AsyncIterator[tuple[T, Item]]) -> tuple[T, Item] | None:
        try:
            return await anext(shard)
        except StopAsyncIteration:
            return None

    try:
        heads: list[tuple[T, Item] | None] = list(await asyncio.gather(*map(head, shards)))
        keys: list[Any] = [None if h is None else order(h[1]) for h in heads]
        while True:
            best: int | None = None
            for i, key in enumerate(keys):
                if key is None:
                    continue
                if best is None or (key < keys[best] if forward else key > keys[best]):
                    best = i
            if best is None:
                return
            current = heads[best]
            assert current is not None  # noqa: S101 - a head with a key is there
            yield current[0]
            heads[best] = following = await head(shards[best])
            keys[best] = None if following is None else order(following[1])
    finally:
        for shard in shards:
            closing = getattr(shard, "aclose", None)
            if closing is not None:
                await closing()
