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

import attrs

from dynorm.core.chunks import backoff
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ThrottledError
from dynorm.core.requests import Parse, batch_get, batch_write

from .paging import Sender

__all__ = ["Sleep", "drain_get", "drain_write"]

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
        response = await send(attrs.evolve(batch_get(table_name, pending), parse=parse))
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

    Only rounds that leave every write they were sent unprocessed count against
    ``max_attempts``; at most ``len(writes) + max_attempts - 1`` requests are sent.
    """
    pending = list(writes)
    stalls = rounds = 0
    while True:
        response = await send(batch_write(table_name, pending))
        rounds += 1
        rest = response.get("UnprocessedItems", {}).get(table_name) or []
        if not rest:
            return
        if len(rest) >= len(pending):
            stalls += 1
            if stalls >= max_attempts:  # no pause before giving up
                break
        pending = rest
        await sleep(backoff(rounds - 1))
    raise ThrottledError(
        f"BatchWriteItem left {len(rest)} writes unprocessed after {stalls} rounds that stored "
        f"none of them ({rounds} requests in all; {len(writes) - len(rest)} of {len(writes)} "
        "in this batch are stored, and writing them again is safe); raise max_attempts or the "
        "table's write capacity",
        operation="BatchWriteItem",
    )
