"""Generic values: any AttributeValue as its natural Python value, and any value by its type.

What fields typed ``Any`` (and ``dict[str, Any]``), condition operands and the members of
Literals and Enums go through: ``decode_any`` reads N as int when integral, else Decimal;
``encode_any`` picks the DynamoDB type from the value's runtime type and refuses what DynamoDB
cannot hold (``dynorm.core.limits``). ``_value_key`` tells stored values apart whatever form
they came in.
"""

from __future__ import annotations

import base64
import collections.abc
import datetime
import decimal
import enum
import uuid
from collections.abc import Mapping
from typing import Any, Final, cast

import attrs

from dynorm.core.errors import CodecError
from dynorm.core.limits import (
    BIG_INT,
    check_decimal,
    check_float,
    int_text,
)

from . import AttributeValue
from .refusals import _a, _RefusedError, _show

__all__ = ["decode_any", "decode_binary", "encode_any"]


_NULL: Final = {"NULL": True}


def _number(text: str) -> int | decimal.Decimal:
    try:
        return int(text)
    except ValueError:
        return decimal.Decimal(text)


def decode_binary(value: bytes | str) -> bytes:
    """A binary value as bytes; CodecError for text that is not base64 (nothing is dropped)."""
    # botocore hands over bytes; a raw JSON body (or a stream record) carries base64 text.
    if isinstance(value, str):
        try:
            # validate=True: without it, characters outside the alphabet are dropped ("!!" is b'').
            return base64.b64decode(value, validate=True)
        except ValueError:  # binascii.Error is one; non-ASCII text raises ValueError itself
            raise CodecError(
                f"{_show(value)} is not base64 text, so it is no binary value"
            ) from None
    if isinstance(value, bytes):
        return value
    raise CodecError(f"a binary value is base64 text or bytes; got {_show(value)}")


def decode_any(av: AttributeValue) -> Any:
    """Any AttributeValue as its natural Python value (N: int when integral, else Decimal)."""
    ((tag, value),) = av.items()
    if tag in {"S", "BOOL"}:
        return value
    if tag == "N":
        return _number(value)
    if tag == "M":
        return {k: decode_any(v) for k, v in value.items()}
    if tag == "L":
        return [decode_any(v) for v in value]
    if tag == "NULL":
        return None
    if tag == "SS":
        return set(value)
    if tag == "NS":
        return {_number(v) for v in value}
    if tag == "B":
        return decode_binary(value)
    if tag == "BS":
        return {decode_binary(v) for v in value}
    raise CodecError(f"unknown DynamoDB type tag {tag!r}")


_NEG_BIG_INT: Final = -BIG_INT


def _number_av(value: int | float | decimal.Decimal) -> AttributeValue:
    if isinstance(value, int):
        return {"N": int.__repr__(value) if _NEG_BIG_INT < value < BIG_INT else int_text(value)}
    if isinstance(value, float):
        return {"N": check_float(value)}
    return {"N": check_decimal(value)}


def encode_any(value: object) -> AttributeValue:
    """The AttributeValue for a Python value, chosen by its runtime type.

    CodecError for what DynamoDB cannot hold (see ``dynorm.core.limits``) and for maps whose keys
    are not strings (they would read back as strings, a different value).
    """
    if value is None:
        return _NULL
    if isinstance(value, enum.Enum):
        # First: str() of an (int, Enum) member is "Code.OK", not its value.
        return encode_any(value.value)
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int | float | decimal.Decimal):
        return _number_av(value)
    if isinstance(value, bytes | bytearray):
        return {"B": bytes(value)}
    if isinstance(value, datetime.date | datetime.time):
        return {"S": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {"S": str(value)}
    if attrs.has(type(value)):
        return {
            "M": {
                k: encode_any(v) for k, v in attrs.asdict(cast("Any", value), recurse=False).items()
            }
        }
    if isinstance(value, Mapping):
        return {"M": {_map_key(k): encode_any(v) for k, v in value.items()}}
    if isinstance(value, set | frozenset):
        return _encode_set(value)
    if isinstance(value, list | tuple):
        return {"L": [encode_any(v) for v in value]}
    raise CodecError(f"cannot store a {type(value).__name__} in DynamoDB")


def _map_key(key: object) -> str:
    if type(key) is str:
        return key
    if isinstance(key, str):
        return str.__str__(key)
    raise _RefusedError(
        f"map key {_show(key)} is {_a(type(key).__name__)}; DynamoDB map keys are strings, "
        "and it would read back as one: convert the keys with str()"
    )


def _encode_set(value: collections.abc.Set[Any]) -> AttributeValue:
    if not value:
        return _NULL  # DynamoDB has no empty sets; NULL reads back as an empty set
    kinds = {_set_kind(v) for v in value}
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind == "SS":
            return {"SS": sorted(value)}
        if kind == "BS":
            return {"BS": sorted(value)}
        if kind == "NS":
            return {"NS": sorted(encode_any(v)["N"] for v in value)}
    names = sorted({type(v).__name__ for v in value})
    raise CodecError(
        f"DynamoDB sets hold only strings, only numbers or only bytes, not {', '.join(names)}"
    )


def _set_kind(value: object) -> str | None:
    if isinstance(value, str):
        return "SS"
    if isinstance(value, bytes):
        return "BS"
    if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
        return "NS"
    return None


def _value_key(av: AttributeValue) -> object:
    """What tells stored values apart, whatever form they came in; None when ``av`` is malformed.

    Numbers by value (DynamoDB sends ``1.0`` back as ``"1"``), binaries as bytes (base64 text
    on the fast path, bytes from botocore), sets regardless of order, lists and maps member by
    member: two AttributeValues have one key exactly when they hold one value of one type.
    """
    try:
        ((tag, value),) = av.items()
        if tag == "S":
            return (tag, value) if isinstance(value, str) else None
        if tag in ("BOOL", "NULL"):
            return (tag, value) if isinstance(value, bool) else None
        if tag == "N":
            return tag, decimal.Decimal(value)
        if tag == "B":
            return tag, decode_binary(value)
        if tag == "L":
            return tag, tuple([_value_key(v) for v in value])
        if tag == "M":
            return tag, frozenset([(k, _value_key(v)) for k, v in value.items()])
        if tag in ("SS", "NS", "BS"):
            member = {"SS": "S", "NS": "N", "BS": "B"}[tag]
            return tag, frozenset([_value_key({member: v}) for v in value])
    except (AttributeError, TypeError, ValueError, ArithmeticError, CodecError):
        return None
    return None
