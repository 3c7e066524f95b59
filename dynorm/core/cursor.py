"""Opaque page cursors: where to resume, bound to the read that made them, signed on request.

A cursor is ``base64url(body)``, or ``base64url(body) + "." + base64url(hmac)`` when the codec has
a secret. The body is JSON: the format version ``v``, the read's fingerprint ``q`` and either the
ExclusiveStartKey ``k``, for embedded children an offset ``o``, for a sharded collection the
position ``p`` of the last child returned (its shard ``s`` and key ``k``) with the shard count
``n`` and the collection's scope ``r``, or for a relationship read from two layouts (``was=``)
the last child's place ``u`` (its new sort key ``s`` and its key fields ``i``).

Every cursor is checked against the read it is handed to, signed or not: its fingerprint (models,
index, partition, key range, direction), and its key (exactly the read's key attributes, the
read's partition value, a sort key inside the read's range). An edited key that points elsewhere
is therefore refused without a secret; with a secret, so is any edit at all, since the HMAC
covers the whole body.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec
import orjson

from .codec.converter import Item
from .errors import CursorError
from .keys import key_text, number_order
from .requests import CollectionRead, ScanRead

__all__ = ["CURSOR_SECRET_ENV", "CursorCodec", "scope_fingerprint", "secret_from"]

#: The environment variable ``connect`` reads the secret from when none is passed.
CURSOR_SECRET_ENV: Final = "DYNORM_CURSOR_SECRET"  # noqa: S105 - a variable's name, no secret

#: Version 2 added signatures and the models to the fingerprint; version 1 cursors are refused.
_VERSION: Final = 2
_SEPARATOR: Final = "."
_RESTART: Final = "pass the Page.cursor string you received, or None to start over"
#: What cursors are written with: base64url (without its padding, which is accepted).
#: Compiled on first use (``re``'s cache), not at import.
_BASE64URL: Final = r"[A-Za-z0-9_-]*={0,2}"


def scope_fingerprint(*parts: object) -> str:
    """A stable short digest of ``parts`` (their repr): what a cursor is bound to."""
    return hashlib.blake2s(repr(parts).encode(), digest_size=8).hexdigest()


def secret_from(secret: bytes | None, environ: Mapping[str, str]) -> bytes | None:
    """``secret``, or when it is None ``environ``'s ``DYNORM_CURSOR_SECRET`` (as UTF-8)."""
    if secret is not None:
        return secret
    text = environ.get(CURSOR_SECRET_ENV)
    if text is None:
        return None
    if not text:
        raise CursorError(
            f"{CURSOR_SECRET_ENV} is set but empty; set it to a long random string "
            "(python -c 'import secrets; print(secrets.token_urlsafe(32))'), or unset it"
        )
    return text.encode()


def _check_secret(secret: bytes | None) -> None:
    if secret is None:
        return
    if not isinstance(secret, bytes):
        # The value itself is never shown: it is a secret.
        raise CursorError(
            f"cursor_secret must be bytes, got {type(secret).__name__}; pass e.g. "
            "secrets.token_bytes(32), or text.encode()"
        )
    if not secret:
        raise CursorError(
            "cursor_secret is empty; pass at least 32 random bytes (secrets.token_bytes(32)), "
            "or None for unsigned cursors"
        )


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64decode(text: str) -> bytes:
    # Checked first: urlsafe_b64decode drops characters outside the alphabet, so an edited
    # cursor ("A!B") would read as another (and a signature over it still match).
    if re.fullmatch(_BASE64URL, text) is None:
        raise ValueError(text)
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _jsonable(key: Item) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, av in key.items():
        ((tag, value),) = av.items()
        # A binary is bytes from botocore, base64 text already from dynorm's fast path.
        binary = tag == "B" and isinstance(value, bytes | bytearray)
        out[name] = {tag: base64.b64encode(value).decode() if binary else value}
    return out


def _mac(secret: bytes, data: bytes) -> bytes:
    return hmac.new(secret, data, hashlib.sha256).digest()


def _malformed() -> CursorError:
    return CursorError(f"malformed cursor; {_RESTART}")


class CursorCodec(msgspec.Struct, frozen=True):
    """Makes and checks page cursors; HMAC-SHA256 signs them when ``secret`` is given."""

    secret: bytes | None = None

    def __post_init__(self) -> None:
        _check_secret(self.secret)

    def __repr__(self) -> str:
        return "CursorCodec(signed)" if self.signed else "CursorCodec()"  # never the secret

    @property
    def signed(self) -> bool:
        """Whether cursors are signed (and unsigned ones refused)."""
        return self.secret is not None

    # -- keys of a collection read -------------------------------------------------------------

    def encode(self, key: Item, read: CollectionRead) -> str:
        """A cursor resuming ``read`` after ``key`` (an ExclusiveStartKey)."""
        return self._seal({"v": _VERSION, "q": read.fingerprint(), "k": _jsonable(key)})

    def decode(self, cursor: str, read: CollectionRead) -> Item:
        """The ExclusiveStartKey in ``cursor``; CursorError unless ``read`` made it, unedited."""
        body = self._open(cursor, None)
        _refuse_union(body)
        made = body.get("n")
        if "p" in body and type(made) is int:
            raise CursorError(
                f"this cursor was made by a read of a collection sharded over {made} shards, and "
                "this read is not sharded: if the collection's shard count changed (from "
                f"{made} to 1, unsharded), start again without a cursor (cursor=None); otherwise "
                "pass it only to the query that returned it"
            )
        _check_fingerprint(body, read.fingerprint())
        key = _start_key(body.get("k"))
        _check_names(key, read.key_attrs, "query", dict(read.key_types))
        _check_position(key, read)
        return key

    # -- a position in a sharded collection -----------------------------------------------------

    def encode_position(
        self, shard: int, key: Item, reads: Sequence[CollectionRead], scope: str
    ) -> str:
        """A cursor resuming a sharded read (one ``read`` per shard) after ``key`` of ``shard``.

        ``key`` is the last returned child's ExclusiveStartKey in its shard; the next page reads
        every shard from that child's sort key on. ``scope`` names the collection whatever its
        shard count (relationship, parent, direction), so a cursor of the same collection made
        with another number of shards is told apart from one of another query.
        """
        body = {
            "v": _VERSION,
            "q": _shards_fingerprint(reads),
            "r": scope,
            "n": len(reads),
            "p": {"s": shard, "k": _jsonable(key)},
        }
        return self._seal(body)

    def decode_position(
        self, cursor: str, reads: Sequence[CollectionRead], scope: str, what: str
    ) -> tuple[int, Item]:
        """The shard and key in ``cursor``; CursorError unless ``reads`` made it, unedited.

        ``what`` names the collection in messages (``"Post.likes"``).
        """
        body = self._open(cursor, None)
        _refuse_union(body)
        if "s" in body and "p" not in body:
            raise CursorError(
                f"this cursor of {what} holds each shard's own read position, the form dynorm "
                "wrote before sharded cursors resumed from the last child returned; it is no "
                "longer read (it could skip or repeat children added between pages): start again "
                "without a cursor (cursor=None)"
            )
        if "k" in body and "p" not in body:
            raise CursorError(
                f"this cursor was made by an unsharded read, and {what} is spread over "
                f"{len(reads)} shards: if its shard count changed (from 1, unsharded, to "
                f"{len(reads)}), start again without a cursor (cursor=None); otherwise pass it "
                "only to the query that returned it"
            )
        made = body.get("n")
        if body.get("r") == scope and made != len(reads) and type(made) is int:
            raise CursorError(
                f"the shard count of {what} changed from {made} to {len(reads)} since this cursor "
                "was made, so the shard its position names no longer holds those children; start "
                "again without a cursor (cursor=None)"
            )
        _check_fingerprint(body, _shards_fingerprint(reads))
        position = body.get("p")
        if not isinstance(position, dict):
            raise _malformed()
        shard = position.get("s")
        if type(shard) is not int or not 0 <= shard < len(reads):
            raise _malformed()
        key = _start_key(position.get("k"))
        read = reads[shard]
        _check_names(key, read.key_attrs, "query", dict(read.key_types))
        _check_position(key, read)
        return shard, key

    # -- a position in a relationship read from two layouts (was=) ----------------------------

    def encode_union(
        self, sort: Mapping[str, Any], identity: Sequence[str] | None, scope: str
    ) -> str:
        """A cursor resuming a ``was=`` union after the child of new sort key ``sort``.

        ``sort`` is that child's sort key attribute value in the new layout, ``identity`` its
        key fields as text (None: before every child of that sort key): both layouts are read
        again from there (dynorm.mapping.union).
        """
        body = {
            "v": _VERSION,
            "q": scope,
            "u": {
                "s": _jsonable({"s": dict(sort)})["s"],
                "i": None if identity is None else list(identity),
            },
        }
        return self._seal(body)

    def decode_union(
        self, cursor: str, scope: str
    ) -> tuple[dict[str, Any], tuple[str, ...] | None]:
        """The sort key value and identity in ``cursor``; CursorError unless ``scope`` made it."""
        body = self._open(cursor, None)
        if "u" not in body:
            raise CursorError(
                "this cursor was made by a read of one layout, and this relationship is read "
                "from two while it declares was=: start again without a cursor (cursor=None)"
            )
        _check_fingerprint(body, scope)
        position = body["u"]
        if not isinstance(position, dict):
            raise _malformed()
        identity = position.get("i")
        sort = _start_key({"s": position.get("s")})["s"]
        if identity is None:
            return sort, None  # before every child of that sort key
        if not isinstance(identity, list) or not all(isinstance(t, str) for t in identity):
            raise _malformed()
        return sort, tuple(identity)

    # -- keys of a scan segment -----------------------------------------------------------------

    def encode_scan(self, key: Item, read: ScanRead) -> str:
        """A cursor resuming the scan segment ``read`` after ``key`` (a LastEvaluatedKey)."""
        return self._seal({"v": _VERSION, "q": read.fingerprint(), "k": _jsonable(key)})

    def decode_scan(self, cursor: str, read: ScanRead) -> Item:
        """The ExclusiveStartKey in ``cursor``; CursorError unless ``read`` made it, unedited."""
        key = _start_key(self._open(cursor, read.fingerprint()).get("k"))
        _check_names(key, read.key_attrs, "scan", dict(read.key_types))
        return key

    # -- offsets into embedded children --------------------------------------------------------

    def encode_offset(self, offset: int, scope: str) -> str:
        """A cursor resuming at child ``offset`` of the list ``scope`` names."""
        return self._seal({"v": _VERSION, "q": scope, "o": offset})

    def decode_offset(self, cursor: str, scope: str) -> int:
        """The offset in ``cursor``; CursorError unless it was made for ``scope``."""
        offset = self._open(cursor, scope).get("o")
        # bool is an int subclass: `true` is no offset.
        if type(offset) is not int or offset < 0:
            raise _malformed()
        return offset

    def encode_after(self, key: str, scope: str) -> str:
        """A cursor resuming after the child whose map key is ``key``, in the map ``scope`` names.

        Embedded children keyed by a field (``Embedded(key=...)``) are read in key order; as a
        Query's cursor does, this one holds the last child returned, not a count, so a child
        added or removed before it between two pages moves no other child in or out of the
        next page.
        """
        return self._seal({"v": _VERSION, "q": scope, "a": key})

    def decode_after(self, cursor: str, scope: str) -> str:
        """The map key in ``cursor``; CursorError unless it was made for ``scope``."""
        key = self._open(cursor, scope).get("a")
        if type(key) is not str:
            raise _malformed()
        return key

    # -- the envelope --------------------------------------------------------------------------

    def _seal(self, body: dict[str, Any]) -> str:
        data = orjson.dumps(body)
        if self.secret is None:
            return _b64encode(data)
        return _b64encode(data) + _SEPARATOR + _b64encode(_mac(self.secret, data))

    def _open(self, cursor: str, fingerprint: str | None) -> dict[str, Any]:
        """The body of ``cursor``, checked; its fingerprint too unless ``fingerprint`` is None."""
        value: object = cursor  # typed str, but a caller's bytes or dict must not get further
        if not isinstance(value, str) or not value:
            raise CursorError(f"a cursor is a non-empty string from Page.cursor; got {cursor!r}")
        text, _, signature = cursor.partition(_SEPARATOR)
        try:
            data = _b64decode(text)
            given = _b64decode(signature) if signature else None
        # ValueError covers binascii.Error and the error base64 raises for non-ASCII text.
        except ValueError:
            raise _malformed() from None
        self._verify(data, given, has_separator=_SEPARATOR in cursor)
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise _malformed() from None
        if not isinstance(body, dict) or "q" not in body:
            raise _malformed()
        if body.get("v") != _VERSION:
            raise CursorError(f"cursor version {body.get('v')!r} is not supported; start from None")
        if fingerprint is not None:
            _check_fingerprint(body, fingerprint)
        return body

    def _verify(self, data: bytes, given: bytes | None, *, has_separator: bool) -> None:
        if self.secret is None:
            if has_separator:
                raise CursorError(
                    "this cursor is signed, but this Database has no cursor_secret; connect with "
                    "the secret that signed it, or start from None"
                )
            return
        if given is None:
            raise CursorError(
                "this cursor is not signed, and this Database signs its cursors (cursor_secret); "
                f"{_RESTART}"
            )
        if not hmac.compare_digest(_mac(self.secret, data), given):
            raise CursorError(
                "cursor signature does not match: the cursor was edited, or signed with another "
                f"cursor_secret; {_RESTART}"
            )


def _refuse_union(body: dict[str, Any]) -> None:
    if "u" in body:
        raise CursorError(
            "this cursor was made while the relationship declared was= (read from two "
            "layouts), and this read is of one layout: was= was removed (or this is another "
            "query); start again without a cursor (cursor=None)"
        )


def _check_fingerprint(body: dict[str, Any], fingerprint: str) -> None:
    if body["q"] != fingerprint:
        raise CursorError(
            "this cursor was made by a different query (another model, index, partition, "
            "key range, direction or parent); pass it only to the query that returned it"
        )


def _shards_fingerprint(reads: Sequence[CollectionRead]) -> str:
    return scope_fingerprint("shards", *(read.fingerprint() for read in reads))


def _start_key(key: object) -> Item:
    """The ExclusiveStartKey of a body's ``k``, binary values decoded."""
    if not isinstance(key, dict) or not key:
        raise _malformed()
    start: Item = {}
    for name, av in key.items():
        if not isinstance(av, dict) or len(av) != 1:
            raise _malformed()
        ((tag, value),) = av.items()
        if tag not in ("S", "N", "B") or not isinstance(value, str):
            raise _malformed()
        if tag == "B":
            try:
                start[name] = {"B": base64.b64decode(value, validate=True)}
            except ValueError:  # binascii.Error is one
                raise _malformed() from None
        else:
            start[name] = {tag: value}
    return start


def _check_names(
    key: Item, key_attrs: tuple[str, ...], read: str, types: Mapping[str, str]
) -> None:
    """Refuse a key of other attributes than the read's, or of other types than declared.

    dynorm's models write every key attribute, of the table and of its indexes, as the type the
    table declares (``key_types``; a string, S, by default), so a key the read produced holds
    those types only: anything else was edited.
    """
    if key_attrs and set(key) != set(key_attrs):
        raise CursorError(
            f"this cursor's key names {', '.join(sorted(key))}, but this {read} resumes from "
            f"{', '.join(sorted(key_attrs))}; {_RESTART}"
        )
    for name, av in key.items():
        kind = types.get(name, "S")
        if kind not in av:
            raise CursorError(
                f"this cursor's key holds {name} as {next(iter(av))}, but that key attribute "
                f"is {_KIND_NAMES[kind]} ({kind}); {_RESTART}"
            )


_KIND_NAMES: Final = {"S": "a string", "N": "a number", "B": "binary"}


def _same_key(text: str | None, expected: str, kind: str) -> bool:
    if kind != "N" or text is None:
        return text == expected
    try:  # DynamoDB gives numbers back in its own form ("1.5" for "1.50")
        return number_order(text) == number_order(expected)
    except ArithmeticError:
        return False


def _check_position(key: Item, read: CollectionRead) -> None:
    """Refuse a key that the read cannot have produced: the cursor was edited."""
    if not _same_key(key_text(key.get(read.pk_attr)), read.pk_value, read.pk_kind):
        raise CursorError(
            f"this cursor points into another partition than {read.pk_attr}={read.pk_value!r}; "
            f"{_RESTART}"
        )
    if read.sk_attr is None or read.range is None:
        return
    sort = key_text(key.get(read.sk_attr))
    if not isinstance(sort, str) or not read.range.contains(sort):
        raise CursorError(
            f"this cursor points outside its query ({read.sk_attr}={sort!r} is not in "
            f"{read.range.op} {list(read.range.values)!r}); {_RESTART}"
        )
