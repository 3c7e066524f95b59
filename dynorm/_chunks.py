"""Named limits of multi-item requests, chunking to them, and identities of keys.

Pure values and functions shared by the planners (which size batches and transactions) and the
I/O layer (which sends them and retries what DynamoDB leaves unprocessed).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Final, TypeVar

from ._codec import Item
from ._errors import LimitExceededError

__all__ = [
    "BATCH_GET_MAX",
    "BATCH_WRITE_MAX",
    "TRANSACT_MAX",
    "backoff",
    "chunked",
    "key_id",
]

T = TypeVar("T")

#: Keys one BatchGetItem may carry.
BATCH_GET_MAX: Final = 100
#: Put/delete requests one BatchWriteItem may carry.
BATCH_WRITE_MAX: Final = 25
#: Actions one TransactWriteItems may carry.
TRANSACT_MAX: Final = 100


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
