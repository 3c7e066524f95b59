"""Batch reads and writes: chunking to DynamoDB's limits and retrying unprocessed work.

DynamoDB may answer a BatchGetItem or BatchWriteItem having done only part of it (throttling,
the 16 MB response cap) and returns the rest as ``UnprocessedKeys``/``UnprocessedItems``. The
loops here resend exactly that rest, with exponential backoff and full jitter, and give up with a
clear error after a bounded number of attempts. ``send`` and ``sleep`` are parameters, so the
loops are tested without a server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from dynorm.core.chunks import backoff
from dynorm.core.codec.converter import Item
from dynorm.core.errors import ThrottledError
from dynorm.core.requests import Decode, batch_get, batch_write

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
    decode: Decode | None = None,
) -> list[Item]:
    """Every item found for ``keys`` (at most BATCH_GET_MAX), retrying unprocessed keys.

    ``decode`` parses the replies on the fast path (the table's typed structures).
    """
    found: list[Item] = []
    pending: dict[str, Any] = {"Keys": list(keys)}
    if consistent:
        pending["ConsistentRead"] = True
    if projection:
        pending.update(projection)
    for attempt in range(max_attempts):
        response = await send(attrs.evolve(batch_get(table_name, pending), decode=decode))
        found += response.get("Responses", {}).get(table_name, [])
        rest = response.get("UnprocessedKeys", {}).get(table_name)
        if not rest or not rest.get("Keys"):
            return found
        pending = rest
        if attempt + 1 < max_attempts:  # no pause before giving up
            await sleep(backoff(attempt))
    raise ThrottledError(
        f"BatchGetItem left {len(pending['Keys'])} keys unprocessed after {max_attempts} "
        "attempts; raise max_attempts or the table's read capacity",
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
    """Send ``writes`` (at most BATCH_WRITE_MAX PutRequest/DeleteRequest), retrying the rest."""
    pending = list(writes)
    for attempt in range(max_attempts):
        response = await send(batch_write(table_name, pending))
        pending = response.get("UnprocessedItems", {}).get(table_name) or []
        if not pending:
            return
        if attempt + 1 < max_attempts:  # no pause before giving up
            await sleep(backoff(attempt))
    raise ThrottledError(
        f"BatchWriteItem left {len(pending)} writes unprocessed after {max_attempts} attempts; "
        "raise max_attempts or the table's write capacity",
        operation="BatchWriteItem",
    )
