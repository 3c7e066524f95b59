"""Opaque page cursors: the key to resume after, tied to the query that made it."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from ._codec import Item
from ._errors import CursorError

__all__ = ["decode_cursor", "encode_cursor"]

_VERSION = 1


def _jsonable(key: Item) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, av in key.items():
        ((tag, value),) = av.items()
        out[name] = {tag: base64.b64encode(value).decode() if tag == "B" else value}
    return out


def encode_cursor(key: Item, fingerprint: str) -> str:
    """A URL-safe string holding ``key`` (an ExclusiveStartKey) and the query's fingerprint."""
    body = orjson.dumps({"v": _VERSION, "q": fingerprint, "k": _jsonable(key)})
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def decode_cursor(cursor: str, fingerprint: str) -> Item:
    """The ExclusiveStartKey in ``cursor``; CursorError if malformed or from another query."""
    if not cursor:
        raise CursorError(f"a cursor is a non-empty string from Page.cursor; got {cursor!r}")
    try:
        body = orjson.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if body["v"] != _VERSION:
            raise CursorError(f"cursor version {body['v']!r} is not supported; start from None")
        key = body["k"]
        query = body["q"]
        if not isinstance(key, dict) or not all(
            isinstance(av, dict) and len(av) == 1 for av in key.values()
        ):
            raise TypeError("key")
        start = {
            name: {"B": base64.b64decode(av["B"], validate=True)} if "B" in av else av
            for name, av in key.items()
        }
    except CursorError:
        raise
    # ValueError covers binascii.Error, orjson.JSONDecodeError, UnicodeDecodeError and the
    # error base64 raises for non-ASCII text.
    except (ValueError, KeyError, TypeError):
        raise CursorError(
            "malformed cursor; pass the Page.cursor string you received, or None to start over"
        ) from None
    if query != fingerprint:
        raise CursorError(
            "this cursor was made by a different query; pass it only to the query that returned it"
        )
    return start
