"""Scalar fields (str, bool, int, float, Decimal, bytes, UUID, date/datetime/time): their hooks.

Structure hooks read an AttributeValue (``{"N": "3"}``) as the field's type. Unstructure hooks
are strict, so that every value sent reads back as its field's type. Accepted besides the
declared type itself: its subclasses (an IntEnum member in an int field, a StrEnum member in a
str field: stored as the plain value); an int in a float or Decimal field; bytearray in a bytes
field. Refused: bool in int/float/Decimal fields, float in a Decimal field (it would not be the
number written), datetime in a date field, a plain value in an Enum field (give the member),
anything else of another type.

``INLINE_STRUCTURE`` and ``INLINE_UNSTRUCTURE`` give the generated decoders and encoders each
default hook's work as an expression template; a hook a user registers instead is called.
A time to live is stored as epoch seconds (``epoch_encoder``, ``epoch_decoder``).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from dynorm.core.limits import (
    BIG_INT,
    FLOAT_TOO_BIG,
    FLOAT_TOO_SMALL,
    check_decimal,
    check_float,
    int_text,
)

from . import AttributeValue
from .enums import _enum_structure, _enum_unstructure
from .generic import _NEG_BIG_INT, _NULL, decode_any, decode_binary
from .hooks import HookSource
from .refusals import _mismatch, _RefusedError, _show
from .typeforms import _is_enum

__all__ = [
    "INLINE_STRUCTURE",
    "INLINE_UNSTRUCTURE",
    "TEXT_STRUCTURE",
    "epoch_decoder",
    "epoch_encoder",
    "is_enum_hook",
    "unstructure_hook",
]


def _scalar_structure(base: type, tag: str) -> Callable[[AttributeValue, object], object]:
    # cattrs dispatches on str/int/float by class (subclasses included) before any factory, so
    # `class Code(int, Enum)` and IntEnum/StrEnum fields arrive here too: hand them on.
    def structure(v: AttributeValue, tp: object) -> object:
        if tp is base:
            return base(v[tag])
        if _is_enum(tp):
            return _enum_structure(cast("type[enum.Enum]", tp))(v, tp)
        return cast("type", tp)(base(v[tag]))

    return structure


def _structure_bool(v: AttributeValue, _: object) -> bool:
    return bool(v["BOOL"])


def _structure_decimal(v: AttributeValue, _: object) -> decimal.Decimal:
    return decimal.Decimal(v["N"])


def _structure_bytes(v: AttributeValue, _: object) -> bytes:
    return decode_binary(v["B"])


_INLINE_HELPERS: Final = {"__Decimal": decimal.Decimal, "__binary": decode_binary}


_STRUCTURE_STR: Final = _scalar_structure(str, "S")


_STRUCTURE_INT: Final = _scalar_structure(int, "N")


_STRUCTURE_FLOAT: Final = _scalar_structure(float, "N")


#: The default hooks whose work the generated decoders write inline, as expression templates
#: (``{v}`` is the AttributeValue). A hook a user registers instead is called as usual.
INLINE_STRUCTURE: Final[Mapping[type, tuple[object, str]]] = {
    str: (_STRUCTURE_STR, '{v}["S"]'),
    bool: (_structure_bool, '{v}["BOOL"]'),
    int: (_STRUCTURE_INT, 'int({v}["N"])'),
    float: (_STRUCTURE_FLOAT, 'float({v}["N"])'),
    decimal.Decimal: (_structure_decimal, '__Decimal({v}["N"])'),
    bytes: (_structure_bytes, '__binary({v}["B"])'),
}


def _text_structure(
    parse: Callable[[str], object],
) -> Callable[[AttributeValue, object], object]:
    def structure(v: AttributeValue, _: object) -> object:
        return parse(v["S"])

    return structure


#: Types stored as text and read back by a parser of their own: the default hook, the parser
#: (wire decoding reads the text and calls the parser while that hook is in place).
TEXT_STRUCTURE: Final[
    Mapping[type, tuple[Callable[[AttributeValue, object], object], Callable[[str], object]]]
] = {
    tp: (_text_structure(parse), parse)
    for tp, parse in (
        (uuid.UUID, uuid.UUID),
        (datetime.datetime, datetime.datetime.fromisoformat),
        (datetime.date, datetime.date.fromisoformat),
        (datetime.time, datetime.time.fromisoformat),
    )
}


def is_enum_hook(hook: object, tp: object) -> bool:
    """Whether ``hook`` is dynorm's own structure hook for the Enum ``tp``."""
    if not _is_enum(tp):
        return False
    scalar = hook in (_STRUCTURE_STR, _STRUCTURE_INT, _STRUCTURE_FLOAT)
    return scalar or hook is _enum_structure(cast("type[enum.Enum]", tp))


def _structure_any(v: AttributeValue, _: object) -> Any:
    return decode_any(v)


def _unstructure_str(v: Any) -> AttributeValue:
    if type(v) is str:
        return {"S": v}
    if isinstance(v, str):
        # str.__str__, not str(): a (str, Enum) member's str() is "Code.OK", not its value.
        return {"S": str.__str__(v)}
    raise _mismatch(v, "a str")


def _unstructure_bool(v: Any) -> AttributeValue:
    if v is True or v is False:
        return {"BOOL": v}
    raise _mismatch(v, "a bool")


def _int_av(v: Any, expected: str) -> AttributeValue:
    if isinstance(v, int) and not isinstance(v, bool):
        return {"N": int_text(v)}
    raise _mismatch(v, expected)


def _unstructure_int(v: Any) -> AttributeValue:
    if type(v) is int and _NEG_BIG_INT < v < BIG_INT:
        return {"N": int.__repr__(v)}
    return _int_av(v, "an int")  # int subclasses (IntEnum members), big ints, wrong values


def _unstructure_float(v: Any) -> AttributeValue:
    if isinstance(v, float):
        return {"N": check_float(v)}
    stored = _int_av(v, "a float")
    # Stored exactly, but read back as a float: an int no float holds would come back changed.
    if float(v) != v:
        raise _RefusedError(
            f"{_show(v)} has no exact float value, so it would read back as {float(v)!r}; "
            "declare the field int or Decimal, or give float(value)"
        )
    return stored


def _unstructure_decimal(v: Any) -> AttributeValue:
    if isinstance(v, decimal.Decimal):
        return {"N": check_decimal(v)}
    if isinstance(v, float):
        raise _mismatch(v, "a Decimal", f"; give Decimal({float.__repr__(v)!r})")
    return _int_av(v, "a Decimal")


def _unstructure_bytes(v: Any) -> AttributeValue:
    if type(v) is bytes:
        return {"B": v}
    if isinstance(v, bytes | bytearray | memoryview):
        return {"B": bytes(v)}
    raise _mismatch(v, "bytes")


def _unstructure_uuid(v: Any) -> AttributeValue:
    if isinstance(v, uuid.UUID):
        return {"S": str(v)}
    raise _mismatch(v, "a UUID")


def _unstructure_datetime(v: Any) -> AttributeValue:
    if isinstance(v, datetime.datetime):
        return {"S": v.isoformat()}
    raise _mismatch(v, "a datetime")


def _unstructure_date(v: Any) -> AttributeValue:
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return {"S": v.isoformat()}
    hint = "; give value.date()" if isinstance(v, datetime.datetime) else ""
    raise _mismatch(v, "a date", hint)


def _unstructure_time(v: Any) -> AttributeValue:
    if isinstance(v, datetime.time):
        return {"S": v.isoformat()}
    raise _mismatch(v, "a time")


#: cattrs picks these for subclasses too, Enums with a str/int/float mixin included; an Enum
#: field gets its own strict hook instead (see :func:`unstructure_hook`).
_SCALAR_UNSTRUCTURE: Final[Mapping[type, Callable[[Any], AttributeValue]]] = {
    str: _unstructure_str,
    bool: _unstructure_bool,
    int: _unstructure_int,
    float: _unstructure_float,
    decimal.Decimal: _unstructure_decimal,
    bytes: _unstructure_bytes,
    uuid.UUID: _unstructure_uuid,
    datetime.datetime: _unstructure_datetime,
    datetime.date: _unstructure_date,
    datetime.time: _unstructure_time,
}


_MIXIN_HOOKS: Final = frozenset(_SCALAR_UNSTRUCTURE.values())


_ENCODE_HELPERS: Final = {
    "__NULL": _NULL,
    "__BIG": BIG_INT,
    "__NEG_BIG": _NEG_BIG_INT,
    "__FLOAT_MIN": FLOAT_TOO_SMALL,
    "__FLOAT_MAX": FLOAT_TOO_BIG,
    "__check_decimal": check_decimal,
    "__Decimal": decimal.Decimal,
    "__UUID": uuid.UUID,
    "__datetime": datetime.datetime,
    "__date": datetime.date,
    "__time": datetime.time,
}


#: The default hooks whose work the generated encoders write inline: (hook, guard, expression)
#: on ``{v}``. The guard admits only the exact type, for which the expression returns what the
#: hook would; anything else (subclasses, wrong values) is handed to the hook.
INLINE_UNSTRUCTURE: Final[Mapping[object, tuple[object, str, str]]] = {
    str: (_unstructure_str, "type({v}) is str", '{{"S": {v}}}'),
    bool: (_unstructure_bool, "({v} is True or {v} is False)", '{{"BOOL": {v}}}'),
    int: (
        _unstructure_int,
        "(type({v}) is int and __NEG_BIG < {v} < __BIG)",
        '{{"N": int.__repr__({v})}}',
    ),
    float: (
        _unstructure_float,
        # check_float's range test, inline: NaN, infinities and out-of-range go to the hook.
        "(type({v}) is float and (__FLOAT_MIN <= abs({v}) < __FLOAT_MAX or {v} == 0.0))",
        '{{"N": float.__repr__({v})}}',
    ),
    decimal.Decimal: (
        _unstructure_decimal,
        "type({v}) is __Decimal",
        '{{"N": __check_decimal({v})}}',
    ),
    bytes: (_unstructure_bytes, "type({v}) is bytes", '{{"B": {v}}}'),
    uuid.UUID: (_unstructure_uuid, "type({v}) is __UUID", '{{"S": str({v})}}'),
    datetime.datetime: (
        _unstructure_datetime,
        "type({v}) is __datetime",
        '{{"S": {v}.isoformat()}}',
    ),
    datetime.date: (_unstructure_date, "type({v}) is __date", '{{"S": {v}.isoformat()}}'),
    datetime.time: (_unstructure_time, "type({v}) is __time", '{{"S": {v}.isoformat()}}'),
}


def unstructure_hook(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    """The converter's unstructure hook for ``tp``, strict for Enum fields.

    cattrs dispatches an ``IntEnum``/``StrEnum`` (any Enum with a mixin) to the int/str hook,
    which would accept a plain value that is no member; a hook a user registered is kept.
    """
    hook: Callable[[Any], AttributeValue] = c.get_unstructure_hook(tp)
    if _is_enum(tp) and (hook in _MIXIN_HOOKS or not isinstance(tp, type)):
        return _enum_unstructure(cast("type[enum.Enum]", tp))
    return hook


def epoch_encoder(*, optional: bool) -> Callable[[Any], AttributeValue]:
    """Encodes an aware datetime as whole epoch seconds (``{"N": "1767225600"}``).

    DynamoDB's time to live reads a number of seconds. A naive datetime is refused: its
    instant depends on the machine's time zone, and an item would expire hours early or late.
    Sub-second parts are dropped (rounded down), as TTL works in whole seconds.
    """

    def encode_epoch(value: Any) -> AttributeValue:
        if value is None and optional:
            return _NULL
        if not isinstance(value, datetime.datetime):
            raise _mismatch(value, "a datetime")
        if value.tzinfo is None or value.utcoffset() is None:
            raise _RefusedError(
                f"{_show(value)} is a naive datetime; a time-to-live field is stored as epoch "
                "seconds, so give an aware one, e.g. datetime.datetime.now(datetime.UTC)"
            )
        return {"N": str(math.floor(value.timestamp()))}

    return encode_epoch


def epoch_decoder(*, optional: bool) -> Callable[[AttributeValue], Any]:
    """Reads epoch seconds back as an aware UTC datetime (``NULL`` as None when ``optional``)."""
    utc = datetime.UTC

    def decode_epoch(av: AttributeValue) -> Any:
        if optional and "NULL" in av:
            return None
        return datetime.datetime.fromtimestamp(int(decimal.Decimal(av["N"])), utc)

    return decode_epoch
