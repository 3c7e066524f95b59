"""Scalar fields (str, bool, int, float, Decimal, bytes, UUID, date/datetime/time): their hooks.

Structure hooks read an AttributeValue (``{"N": "3"}``) as the field's type. Unstructure hooks
are strict, so that every value sent reads back as its field's type. Accepted besides the
declared type itself: its subclasses (an IntEnum member in an int field, a StrEnum member in a
str field: stored as the plain value); an int in a float or Decimal field; bytearray in a bytes
field. Refused: bool in int/float/Decimal fields, float in a Decimal field (it would not be the
number written), datetime in a date field, a plain value in an Enum field (give the member),
anything else of another type.

Which type each hook stores, and the expression templates the generated decoders and encoders
write instead of calling a default hook, are ``rules.RULES``' rows. A time to live is stored as
epoch seconds (``epoch_encoder``, ``epoch_decoder``).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
import uuid
from collections.abc import Callable
from typing import Any, Final, cast

from dynorm.core.limits import BIG_INT, check_decimal, check_float, int_text

from . import AttributeValue
from .enums import _enum_structure, _enum_unstructure
from .generic import _NEG_BIG_INT, _NULL, decode_any, decode_binary
from .hooks import HookSource
from .refusals import _mismatch, _RefusedError, _show
from .typeforms import _is_enum

__all__ = [
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


_STRUCTURE_STR: Final = _scalar_structure(str, "S")


_STRUCTURE_INT: Final = _scalar_structure(int, "N")


_STRUCTURE_FLOAT: Final = _scalar_structure(float, "N")


def _text_structure(
    parse: Callable[[str], object],
) -> Callable[[AttributeValue, object], object]:
    def structure(v: AttributeValue, _: object) -> object:
        return parse(v["S"])

    return structure


def is_enum_hook(hook: object, tp: object) -> bool:
    """Whether ``hook`` is dynorm's own structure hook for the Enum ``tp``."""
    if not _is_enum(tp):
        return False
    scalar = hook in (_STRUCTURE_STR, _STRUCTURE_INT, _STRUCTURE_FLOAT)
    return scalar or hook is _enum_structure(cast("type[enum.Enum]", tp))


def _structure_any(v: AttributeValue, _: object) -> Any:
    return decode_any(v)


#: The unstructure hooks ``rules.RULES`` registers by class: cattrs picks them for subclasses
#: too, Enums with a str/int/float mixin included; an Enum field gets its own strict hook
#: instead (see :func:`unstructure_hook`).
_MIXIN_HOOKS: Final[set[Callable[[Any], AttributeValue]]] = set()


def _by_class(hook: Callable[[Any], AttributeValue]) -> Callable[[Any], AttributeValue]:
    _MIXIN_HOOKS.add(hook)
    return hook


@_by_class
def _unstructure_str(v: Any) -> AttributeValue:
    if type(v) is str:
        return {"S": v}
    if isinstance(v, str):
        # str.__str__, not str(): a (str, Enum) member's str() is "Code.OK", not its value.
        return {"S": str.__str__(v)}
    raise _mismatch(v, "a str")


@_by_class
def _unstructure_bool(v: Any) -> AttributeValue:
    if v is True or v is False:
        return {"BOOL": v}
    raise _mismatch(v, "a bool")


def _int_av(v: Any, expected: str) -> AttributeValue:
    if isinstance(v, int) and not isinstance(v, bool):
        return {"N": int_text(v)}
    raise _mismatch(v, expected)


@_by_class
def _unstructure_int(v: Any) -> AttributeValue:
    if type(v) is int and _NEG_BIG_INT < v < BIG_INT:
        return {"N": int.__repr__(v)}
    return _int_av(v, "an int")  # int subclasses (IntEnum members), big ints, wrong values


@_by_class
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


@_by_class
def _unstructure_decimal(v: Any) -> AttributeValue:
    if isinstance(v, decimal.Decimal):
        return {"N": check_decimal(v)}
    if isinstance(v, float):
        raise _mismatch(v, "a Decimal", f"; give Decimal({float.__repr__(v)!r})")
    return _int_av(v, "a Decimal")


@_by_class
def _unstructure_bytes(v: Any) -> AttributeValue:
    if type(v) is bytes:
        return {"B": v}
    if isinstance(v, bytes | bytearray | memoryview):
        return {"B": bytes(v)}
    raise _mismatch(v, "bytes")


@_by_class
def _unstructure_uuid(v: Any) -> AttributeValue:
    if isinstance(v, uuid.UUID):
        return {"S": str(v)}
    raise _mismatch(v, "a UUID")


@_by_class
def _unstructure_datetime(v: Any) -> AttributeValue:
    if isinstance(v, datetime.datetime):
        return {"S": v.isoformat()}
    raise _mismatch(v, "a datetime")


@_by_class
def _unstructure_date(v: Any) -> AttributeValue:
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return {"S": v.isoformat()}
    hint = "; give value.date()" if isinstance(v, datetime.datetime) else ""
    raise _mismatch(v, "a date", hint)


@_by_class
def _unstructure_time(v: Any) -> AttributeValue:
    if isinstance(v, datetime.time):
        return {"S": v.isoformat()}
    raise _mismatch(v, "a time")


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
