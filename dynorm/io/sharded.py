"""Reading a sharded collection: every shard's Query sent together, merged in sort key order.

The merge and the positions are planned in ``dynorm.mapping.sharded``; this module sends. A page
reads every shard concurrently (one round trip), each from the position the page starts at;
``iterate_sharded`` holds one buffered page per shard and reads a shard again only when its
buffer runs out.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, TypeVar

from dynorm.core.codec.converter import Item
from dynorm.mapping.sharded import Position, ShardedRead, ShardResult, ShardStart, merge_page

from .reader import Reader

__all__ = ["iterate_sharded", "read_sharded_page"]

T = TypeVar("T")


def _with_raw(
    accept: Callable[[Item], T | None], drop: Callable[[Item], bool] | None
) -> Callable[[Item], tuple[T, Item] | None]:
    def pair(raw: Item) -> tuple[T, Item] | None:
        obj = accept(raw)
        return None if obj is None else (obj, raw)

    if drop is None:
        return pair
    return lambda raw: None if drop(raw) else pair(raw)


async def read_sharded_page(
    reader: Reader,
    sharded: ShardedRead,
    accept: Callable[[Item], T | None],
    *,
    limit: int | None,
    after: Position | None,
) -> tuple[list[T], Position | None, bool]:
    """The next ``limit`` children after ``after`` over every shard, merged.

    Also where the page ends and whether more may follow (see ``merge_page``).
    """

    async def one(start: ShardStart) -> ShardResult[T] | None:
        if start.read is None:
            return None  # nothing of this shard follows the position
        pair = _with_raw(accept, start.drop)
        found, resume = await reader.read_page(start.read, pair, limit=limit, start=start.start)
        return ShardResult(found, resume)

    results = await asyncio.gather(*map(one, sharded.starts(after)))
    return merge_page(sharded, results, limit)


async def iterate_sharded(
    reader: Reader,
    sharded: ShardedRead,
    accept: Callable[[Item], T | None],
    *,
    after: Position | None = None,
) -> AsyncGenerator[T, None]:
    """Every child after ``after`` (default: from the first), in merge order.

    Each shard is a lazy iteration of its own pages; the first page of every shard is read
    concurrently, then a shard is read again only once its buffered items are used up.
    Stopping the iteration cancels every request in flight.
    """
    order = sharded.order()
    forward = sharded.forward
    shards: list[AsyncIterator[tuple[T, Item]]] = [
        reader.iterate(start.read, _with_raw(accept, start.drop), start=start.start)
        for start in sharded.starts(after)
        if start.read is not None
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
            # Equal sort keys go to the lowest shard first, as in merge_page.
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
