"""DynamoDB's JSON protocol without botocore: request bodies, error bodies, checksums, clocks.

What the fast request path needs that does not touch the network: a request body is
``Request.params`` as JSON (binary values as base64 text, sets as lists); an error reply is a
JSON object naming its type in ``__type``; a reply carries a CRC32 of its body; a server that
finds the request's signature too old or too new says so, and its ``Date`` header tells how far
this machine's clock is off. Pure.
"""

from __future__ import annotations

import base64
import collections.abc
import datetime
import decimal
import zlib
from collections.abc import Mapping
from typing import Any, Final

import msgspec
import orjson

__all__ = [
    "CONTROL_PLANE",
    "DATA_PLANE",
    "ErrorReply",
    "clock_offset",
    "crc32_matches",
    "encode_body",
    "is_clock_skew",
    "parse_error",
    "target_of",
    "with_datetimes",
]

#: The data-plane operations the fast request path sends. Their replies hold items, keys and
#: capacities, which parse to the same values as botocore's except binaries (base64 text, which
#: every consumer in dynorm accepts).
DATA_PLANE: Final = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)

#: The table administration the fast request path sends too. Their replies go through
#: :func:`with_datetimes`, so that their timestamps are datetimes, as botocore makes them. Any
#: other operation (backups, exports, tags ...) goes through botocore.
CONTROL_PLANE: Final = frozenset(
    {
        "CreateTable",
        "DescribeTable",
        "DeleteTable",
        "UpdateTable",
        "ListTables",
        "UpdateTimeToLive",
        "DescribeTimeToLive",
    }
)

#: The timestamp members of those replies (every one of DynamoDB's ends in ``DateTime``):
#: epoch seconds on the wire.
_TIMESTAMP_SUFFIX: Final = "DateTime"

_TARGET_PREFIX: Final = "DynamoDB_20120810."


def with_datetimes(reply: Any) -> Any:
    """``reply`` with its timestamps (``CreationDateTime`` ...) as aware UTC datetimes.

    DynamoDB's JSON carries them as epoch seconds; botocore's parser turns them into datetimes,
    and a table administration reply on the fast path must read the same.
    """
    if isinstance(reply, dict):
        return {
            key: (
                datetime.datetime.fromtimestamp(value, datetime.UTC)
                if key.endswith(_TIMESTAMP_SUFFIX)
                and isinstance(value, int | float)
                and not isinstance(value, bool)
                else with_datetimes(value)
            )
            for key, value in reply.items()
        }
    if isinstance(reply, list):
        return [with_datetimes(value) for value in reply]
    return reply


#: Error codes a server answers when the request's time is outside its window.
_SKEW_CODES: Final = frozenset(
    {"RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture", "InvalidSignatureException"}
)
#: InvalidSignatureException also means a wrong secret key: only these messages are about time.
_SKEW_MESSAGES: Final = ("signature expired", "signature not yet current", "too skewed")


def target_of(operation: str) -> str:
    """The ``X-Amz-Target`` header value of ``operation``."""
    return _TARGET_PREFIX + operation


def _default(value: object) -> object:
    """What orjson cannot write itself: binaries as base64, sets as lists, Decimals as text."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, collections.abc.Set):
        return list(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError  # orjson names the type in the error it raises


def encode_body(params: Mapping[str, Any]) -> bytes:
    """``params`` as the JSON body DynamoDB reads; TypeError for a value JSON cannot hold."""
    return orjson.dumps(params, default=_default)


class ErrorReply(msgspec.Struct, frozen=True):
    """An error reply: its code, its message and the whole parsed body (reasons, items).

    ``code`` is e.g. ``ConditionalCheckFailedException``, or the HTTP status when the body
    names none.
    """

    code: str
    message: str
    body: Mapping[str, Any]


def parse_error(status: int, body: bytes, error_type: str | None = None) -> ErrorReply:
    """The error in a reply of ``status`` with ``body``; ``error_type`` is x-amzn-ErrorType."""
    try:
        parsed = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        parsed = {}
    if not isinstance(parsed, dict):
        parsed = {}
    kind = str(parsed.get("__type") or parsed.get("code") or error_type or "")
    # "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"; the header form
    # may end in ":http://internal.amazon.com/..."
    code = kind.rpartition("#")[2].partition(":")[0] or str(status)
    message = parsed.get("message")
    if message is None:
        message = parsed.get("Message", "")
    if not message and not parsed and body:
        message = body[:200].decode("utf-8", "replace")
    return ErrorReply(code, str(message), parsed)


def crc32_matches(body: bytes, header: str | None) -> bool:
    """Whether ``body`` matches the reply's ``x-amz-crc32`` header (no header: nothing to check)."""
    if header is None:
        return True
    try:
        return zlib.crc32(body) == int(header)
    except ValueError:
        return False


def is_clock_skew(code: str, message: str) -> bool:
    """Whether an error says the request's signing time is outside the server's window."""
    if code not in _SKEW_CODES:
        return False
    if code != "InvalidSignatureException":
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in _SKEW_MESSAGES)


def clock_offset(date_header: str | None, now: float) -> float | None:
    """Seconds to add to this machine's clock to match a server's ``Date`` header (HTTP date).

    None when the header is absent or unreadable.
    """
    if not date_header:
        return None
    # Imported here: only a clock-skew error needs it, and it costs milliseconds at start-up.
    import email.utils  # noqa: PLC0415

    try:
        server = email.utils.parsedate_to_datetime(date_header)
    except (TypeError, ValueError):
        return None
    if server.tzinfo is None:  # "-0000": UTC, but parsed without a zone
        server = server.replace(tzinfo=datetime.UTC)
    return server.timestamp() - now
