"""Batch reads and writes: chunking to DynamoDB's limits and retrying unprocessed work.

DynamoDB may answer a BatchGetItem or BatchWriteItem having done only part of it (throttling,
the 16 MB response cap) and returns the rest as ``UnprocessedKeys``/``UnprocessedItems``. The
loops here resend exactly that rest, with exponential backoff and full jitter. Only a round that
stores (or reads) nothing counts against ``max_attempts``: a throttled bulk write that keeps
making progress is never given up. A batch of n entries therefore takes at most
``n + max_attempts - 1`` requests (each round with progress settles at least one entry), and is
given up with a clear error after ``max_attempts`` rounds without progress. ``send`` and
``sleep`` are parameters, so the loops are tested without a server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from dynorm.core.chunks import backoff
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ThrottledError
from dynorm.core.requests import (
    Parse,
    batch_get,
    batch_get_tables,
    batch_write_tables,
)

from .paging import Sender

__all__ = ["Sleep", "drain_get", "drain_get_tables", "drain_write", "drain_write_tables"]

Sleep = Callable[[float], Awaitable[None]]


async def drain_get(
    send: Sender,
    table_name: str,
    keys: Sequence[Item],
    *,
    projection: dict[str, Any] | None = None,
    consistent: bool = False,
    max_attempts: int = 8,
    sleep: Sleep,
    parse: Parse | None = None,
) -> list[Item]:
    """Every item found for ``keys`` (at most BATCH_GET_MAX), retrying unprocessed keys.

    Only rounds that leave every key they were sent unprocessed count against
    ``max_attempts``; at most ``len(keys) + max_attempts - 1`` requests are sent.
    ``parse`` parses the replies on the fast path (the table's typed structures).
    """
    found: list[Item] = []
    pending: dict[str, Any] = {"Keys": list(keys)}
    if consistent:
        pending["ConsistentRead"] = True
    if projection:
        pending.update(projection)
    stalls = rounds = 0
    while True:
        response = await send(msgspec.structs.replace(batch_get(table_name, pending), parse=parse))
        rounds += 1
        found += response.get("Responses", {}).get(table_name, [])
        rest = response.get("UnprocessedKeys", {}).get(table_name)
        if not rest or not rest.get("Keys"):
            return found
        if len(rest["Keys"]) >= len(pending["Keys"]):
            stalls += 1
            if stalls >= max_attempts:  # no pause before giving up
                break
        pending = rest
        await sleep(backoff(rounds - 1))
    raise ThrottledError(
        f"BatchGetItem left {len(rest['Keys'])} keys unprocessed after {stalls} rounds that "
        f"read none of them ({rounds} requests in all); raise max_attempts or the table's read "
        "capacity",
        operation="BatchGetItem",
    )


async def drain_write(
    send: Sender,
    table_name: str,
    writes: Sequence[dict[str, Any]],
    *,
    max_attempts: int = 8,
    sleep: Sleep,
) -> None:
    """Send ``writes`` (at most BATCH_WRITE_MAX PutRequest/DeleteRequest), retrying the rest.

    One table's :func:`drain_write_tables`: only rounds that leave every write they were sent
    unprocessed count against ``max_attempts``; at most ``len(writes) + max_attempts - 1``
    requests are sent.
    """
    await drain_write_tables(
        send, {table_name: list(writes)}, max_attempts=max_attempts, sleep=sleep
    )


async def drain_get_tables(
    send: Sender,
    keys: dict[str, list[Item]],
    *,
    consistent: bool = False,
    max_attempts: int = 8,
    sleep: Sleep,
) -> dict[str, list[Item]]:
    """Every item found for ``keys`` of several tables (at most BATCH_GET_MAX in all).

    One BatchGetItem carries every table; the unprocessed keys of each table are sent again
    together, with the same rule as :func:`drain_get` for rounds without progress.
    """
    found: dict[str, list[Item]] = {name: [] for name in keys}
    extra = {"ConsistentRead": True} if consistent else {}
    pending: dict[str, dict[str, Any]] = {
        name: {"Keys": list(k), **extra} for name, k in keys.items() if k
    }
    stalls = rounds = 0
    while True:
        response = await send(batch_get_tables(pending))
        rounds += 1
        for name, items in response.get("Responses", {}).items():
            found.setdefault(name, []).extend(items)
        rest = {n: e for n, e in (response.get("UnprocessedKeys") or {}).items() if e.get("Keys")}
        if not rest:
            return found
        left = sum(len(e["Keys"]) for e in rest.values())
        if left >= sum(len(e["Keys"]) for e in pending.values()):
            stalls += 1
            if stalls >= max_attempts:  # no pause before giving up
                break
        pending = rest
        await sleep(backoff(rounds - 1))
    raise ThrottledError(
        f"BatchGetItem left {left} keys unprocessed after {stalls} rounds that read none of "
        f"them ({rounds} requests in all); raise max_attempts or the tables' read capacity",
        operation="BatchGetItem",
    )


async def drain_write_tables(
    send: Sender,
    writes: dict[str, list[dict[str, Any]]],
    *,
    max_attempts: int = 8,
    sleep: Sleep,
) -> None:
    """Send the writes of several tables (at most BATCH_WRITE_MAX in all) in one BatchWriteItem.

    Each table's unprocessed writes are sent again, together. Only rounds that leave every write
    they were sent unprocessed count against ``max_attempts``.
    """
    pending = {name: list(w) for name, w in writes.items() if w}
    total = sum(len(w) for w in pending.values())
    stalls = rounds = 0
    while True:
        response = await send(batch_write_tables(pending))
        rounds += 1
        rest = {n: list(w) for n, w in (response.get("UnprocessedItems") or {}).items() if w}
        if not rest:
            return
        left = sum(len(w) for w in rest.values())
        if left >= sum(len(w) for w in pending.values()):
            stalls += 1
            if stalls >= max_attempts:  # no pause before giving up
                break
        pending = rest
        await sleep(backoff(rounds - 1))
    whose = "table's" if len(writes) == 1 else "tables'"
    raise ThrottledError(
        f"BatchWriteItem left {left} writes unprocessed after {stalls} rounds that stored none "
        f"of them ({rounds} requests in all; {total - left} of {total} in this batch are "
        f"stored, and writing them again is safe); raise max_attempts or the {whose} write "
        "capacity",
        operation="BatchWriteItem",
    )
