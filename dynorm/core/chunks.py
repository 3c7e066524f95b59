"""Named limits of multi-item requests, chunking to them, and identities of keys.

Pure values and functions shared by the planners (which size batches and transactions) and the
I/O layer (which sends them and retries what DynamoDB leaves unprocessed).
"""

from __future__ import annotations

import base64
import contextlib
import decimal
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

from .errors import LimitExceededError

__all__ = [
    "BATCH_GET_MAX",
    "BATCH_WRITE_MAX",
    "DEFAULT_MAX_ITEMS",
    "TRANSACT_MAX",
    "KeyId",
    "backoff",
    "chunked",
    "item_key_id",
    "key_id",
]

T = TypeVar("T")

#: Keys one BatchGetItem may carry.
BATCH_GET_MAX: Final = 100
#: Put/delete requests one BatchWriteItem may carry.
BATCH_WRITE_MAX: Final = 25
#: Actions one TransactWriteItems may carry.
TRANSACT_MAX: Final = 100
#: How many items (the root included) ``db.delete(obj, cascade=True)`` deletes at most by default.
DEFAULT_MAX_ITEMS: Final = 1000


def chunked(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    if size < 1:
        raise LimitExceededError(f"chunk size must be at least 1; got {size}")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def backoff(attempt: int, *, base: float = 0.05, cap: float = 2.0) -> float:
    """Full-jitter exponential backoff: a random delay in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap, base * (2**attempt)))  # noqa: S311 - jitter, not crypto


#: What :func:`key_id` returns: (attribute name, value identity) pairs in name order.
KeyId = tuple[tuple[str, object], ...]


def _value_id(av: Mapping[str, Any]) -> object:
    # A key attribute holds one S, N or B: its (type, value) pair is hashable and tells values
    # and types apart, as the repr of the whole dict (the fallback for anything else) does.
    # Numbers by value ("10.0" is stored, and read back, as "10"), binaries as bytes (base64
    # text on dynorm's fast path, bytes from botocore).
    if len(av) == 1:
        ((tag, value),) = av.items()
        if tag == "S" and type(value) is str:
            return (tag, value)
        if tag == "N" and type(value) is str:
            with contextlib.suppress(ArithmeticError):
                return (tag, decimal.Decimal(value))
        elif tag == "B" and type(value) is str:
            with contextlib.suppress(ValueError):  # binascii.Error is one
                return (tag, base64.b64decode(value, validate=True))
        if type(value) is str or type(value) is bytes:
            return (tag, value)
    return repr(av)


def key_id(key: Mapping[str, Mapping[str, Any]]) -> KeyId:
    """A hashable identity for a key, to de-duplicate and to match responses to requests.

    Two keys get the same identity when they name the same attributes with equal values of
    the same types, whatever the order of their attributes.
    """
    return tuple(sorted([(name, _value_id(av)) for name, av in key.items()]))


def item_key_id(item: Mapping[str, Mapping[str, Any]], names: Sequence[str]) -> KeyId:
    """``key_id`` of the attributes ``names`` of ``item`` (``names`` sorted: one item's key).

    What ``key_id({n: item[n] for n in names})`` is, without the dict and the sort.
    """
    return tuple([(name, _value_id(item[name])) for name in names])
