"""Batch reads and writes: chunking to DynamoDB's limits and retrying unprocessed work.

DynamoDB may answer a BatchGetItem or BatchWriteItem having done only part of it (throttling,
the 16 MB response cap) and returns the rest as ``UnprocessedKeys``/``UnprocessedItems``. The
loops here resend exactly that rest, with exponential backoff and full jitter, and give up with a
clear error after a bounded number of attempts. ``send`` and ``sleep`` are parameters, so the
loops are tested without a server.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

from ._codec import Item
from ._errors import LimitExceededError, ThrottledError
from ._paging import Send
from ._plans import Request

__all__ = [
    "BATCH_GET_MAX",
    "BATCH_WRITE_MAX",
    "TRANSACT_MAX",
    "backoff",
    "chunked",
    "drain_get",
    "drain_write",
    "key_id",
]

#: Keys one BatchGetItem may carry.
BATCH_GET_MAX: Final = 100
#: Put/delete requests one BatchWriteItem may carry.
BATCH_WRITE_MAX: Final = 25
#: Actions one TransactWriteItems may carry.
TRANSACT_MAX: Final = 100

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


def chunked(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    if size < 1:
        raise LimitExceededError(f"chunk size must be at least 1; got {size}")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def backoff(attempt: int, *, base: float = 0.05, cap: float = 2.0) -> float:
    """Full-jitter exponential backoff: a random delay in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap, base * (2**attempt)))  # noqa: S311 - jitter, not crypto


def key_id(key: Item) -> tuple[tuple[str, str], ...]:
    """A hashable identity for a key, to de-duplicate and to match responses to requests."""
    return tuple(sorted((name, repr(av)) for name, av in key.items()))


async def drain_get(
    send: Send,
    table_name: str,
    keys: Sequence[Item],
    *,
    projection: dict[str, Any] | None = None,
    consistent: bool = False,
    max_attempts: int = 8,
    sleep: Sleep,
) -> list[Item]:
    """Every item found for ``keys`` (at most BATCH_GET_MAX), retrying unprocessed keys."""
    found: list[Item] = []
    pending: dict[str, Any] = {"Keys": list(keys)}
    if consistent:
        pending["ConsistentRead"] = True
    if projection:
        pending.update(projection)
    for attempt in range(max_attempts):
        response = await send(Request("BatchGetItem", {"RequestItems": {table_name: pending}}))
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
    send: Send,
    table_name: str,
    writes: Sequence[dict[str, Any]],
    *,
    max_attempts: int = 8,
    sleep: Sleep,
) -> None:
    """Send ``writes`` (at most BATCH_WRITE_MAX PutRequest/DeleteRequest), retrying the rest."""
    pending = list(writes)
    for attempt in range(max_attempts):
        response = await send(Request("BatchWriteItem", {"RequestItems": {table_name: pending}}))
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
