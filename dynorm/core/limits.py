"""DynamoDB's limits on values, keys, items and transactions: named constants and pure checks.

Every write is held to these before it is sent, so a value DynamoDB would refuse (or, worse,
store and then fail to read back) is an error that names the limit, and nothing is sent.
Unstorable values are :class:`CodecError`; sizes over a limit are :class:`LimitExceededError`.

The checks are shaped for the encode path: numbers are checked by cheap comparisons with a
slow path for the rare large ones, and an item's size and text are bounded by one serialization
in C (``orjson``), with the exact walk only for items near the limit or holding bad text.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import orjson

from .errors import CodecError, LimitExceededError

__all__ = [
    "FLOAT_TOO_BIG",
    "FLOAT_TOO_SMALL",
    "MAX_ATTRIBUTE_NAME_BYTES",
    "MAX_DEPTH",
    "MAX_ITEM_BYTES",
    "MAX_KEY_NAME_BYTES",
    "MAX_NUMBER",
    "MAX_NUMBER_DIGITS",
    "MAX_PARTITION_KEY_BYTES",
    "MAX_SORT_KEY_BYTES",
    "MAX_TRANSACTION_BYTES",
    "MIN_NUMBER",
    "check_decimal",
    "check_depth",
    "check_float",
    "check_item",
    "check_key",
    "check_value",
    "int_text",
    "item_size",
    "json_bound",
    "request_bytes",
    "utf8_size",
    "value_depth",
]

#: The largest item DynamoDB stores (attribute names count, see :func:`item_size`).
MAX_ITEM_BYTES: Final = 400 * 1024
#: The largest partition key value, table or index, in UTF-8 bytes.
MAX_PARTITION_KEY_BYTES: Final = 2048
#: The largest sort key value, table or index, in UTF-8 bytes.
MAX_SORT_KEY_BYTES: Final = 1024
#: The longest attribute name (of an item, or inside a map), in UTF-8 bytes.
MAX_ATTRIBUTE_NAME_BYTES: Final = 65535
#: The longest name of a key attribute (table or index) or of an attribute an index projects.
MAX_KEY_NAME_BYTES: Final = 255
#: Significant digits a DynamoDB number holds (leading and trailing zeros do not count).
MAX_NUMBER_DIGITS: Final = 38
#: The largest magnitude of a DynamoDB number.
MAX_NUMBER: Final = decimal.Decimal("9.9999999999999999999999999999999999999E+125")
#: The smallest magnitude of a DynamoDB number other than zero.
MIN_NUMBER: Final = decimal.Decimal("1E-130")
#: How many maps and lists DynamoDB lets a value nest inside each other.
MAX_DEPTH: Final = 32
#: The aggregate size of the items one TransactWriteItems may write.
MAX_TRANSACTION_BYTES: Final = 4 * 1024 * 1024

_MAX_EXPONENT: Final = MAX_NUMBER.adjusted()  # 125
_MIN_EXPONENT: Final = MIN_NUMBER.adjusted()  # -130
#: Integers strictly between -BIG_INT and BIG_INT have at most 38 digits: no further check.
BIG_INT: Final = 10**MAX_NUMBER_DIGITS
#: Floats of a magnitude below FLOAT_TOO_BIG print at or below MAX_NUMBER; nonzero ones below
#: FLOAT_TOO_SMALL are under MIN_NUMBER.
FLOAT_TOO_BIG: Final = 1e126
FLOAT_TOO_SMALL: Final = 1e-130
#: Keys this long (in characters) fit every key limit whatever their UTF-8 size (4 bytes each).
SHORT_KEY: Final = MAX_SORT_KEY_BYTES // 4


# -- numbers -------------------------------------------------------------------------------------


def _digits_error(text: str, digits: int) -> CodecError:
    return CodecError(
        f"{_clip(text)} has {digits} significant digits; DynamoDB numbers hold at most "
        f"{MAX_NUMBER_DIGITS} (MAX_NUMBER_DIGITS). Round it, or store it as a str"
    )


def _range_error(text: str) -> CodecError:
    return CodecError(
        f"{_clip(text)} is outside DynamoDB's number range: magnitudes from {MIN_NUMBER} "
        f"(MIN_NUMBER) to {MAX_NUMBER} (MAX_NUMBER), or zero. Store it as a str"
    )


def int_text(value: int) -> str:
    """The decimal text of an int DynamoDB can store; CodecError naming the limit otherwise.

    The encode path calls this only for ints at or beyond ``BIG_INT`` (38 digits).
    """
    if value.bit_length() > 420:  # beyond 10**126: out of range, and too long to print cheaply
        raise _range_error(f"an int of {value.bit_length()} bits")
    text = int.__repr__(value)
    digits = text.lstrip("-")
    if len(digits) - 1 > _MAX_EXPONENT:
        raise _range_error(text)
    significant = len(digits.rstrip("0"))
    if significant > MAX_NUMBER_DIGITS:
        raise _digits_error(text, significant)
    return text


def check_float(value: float) -> str:
    """``float.__repr__(value)`` if DynamoDB can store it (finite, in range)."""
    magnitude = abs(value)
    if magnitude < FLOAT_TOO_BIG and (magnitude >= FLOAT_TOO_SMALL or magnitude == 0):
        return float.__repr__(value)  # not repr(): a float-valued Enum member reprs as "<E.A: 0.5>"
    if value != value or magnitude == float("inf"):  # noqa: PLR0124 - NaN is not equal to itself
        raise CodecError(f"DynamoDB numbers cannot be {value!r}; store None or a sentinel instead")
    raise _range_error(float.__repr__(value))


def check_decimal(value: decimal.Decimal) -> str:
    """``str(value)`` if DynamoDB can store it: finite, 38 significant digits, in range."""
    if not value.is_finite():
        raise CodecError(f"DynamoDB numbers cannot be {value!r}; store None or a sentinel instead")
    text = str(value)
    if len(text) <= MAX_NUMBER_DIGITS and "E" not in text:
        return text  # at most 38 digits, and plain notation is well inside the range
    if not value:
        return text  # zero, whatever its exponent
    digits = value.as_tuple().digits
    if len(digits) > MAX_NUMBER_DIGITS:
        significant = len(digits)
        while digits[significant - 1] == 0:
            significant -= 1
        if significant > MAX_NUMBER_DIGITS:
            raise _digits_error(text, significant)
    if not _MIN_EXPONENT <= value.adjusted() <= _MAX_EXPONENT:
        raise _range_error(text)
    return text


# -- text and sizes ------------------------------------------------------------------------------


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else f"{text[: width - 12]}...{text[-8:]}"


def utf8_size(text: str) -> int:
    """The UTF-8 size of ``text``; CodecError if it holds a lone surrogate (no UTF-8 form)."""
    if text.isascii():
        return len(text)
    try:
        return len(text.encode())
    except UnicodeEncodeError as exc:
        raise CodecError(
            f"{_clip(text)!r} holds a lone surrogate ({text[exc.start]!r} at index {exc.start}), "
            "which has no UTF-8 form, so DynamoDB cannot store it; fix the text's decoding "
            "(e.g. bytes.decode('utf-8') instead of 'surrogateescape')"
        ) from None


def _binary_size(value: Any) -> int:
    if isinstance(value, str):  # a raw JSON body carries binary values as base64 text
        return len(value) * 3 // 4 - value.count("=")
    return len(value)


def _value_size(av: Mapping[str, Any]) -> int:
    ((tag, value),) = av.items()
    if tag == "S":
        return utf8_size(value)
    if tag == "N":
        text = str(value)
        digits = len(text.lstrip("-").replace(".", "").lstrip("0")) or 1
        return (digits + 1) // 2 + 1
    if tag == "B":
        return _binary_size(value)
    if tag in {"BOOL", "NULL"}:
        return 1
    if tag == "M":
        return 3 + sum(utf8_size(k) + _value_size(v) + 1 for k, v in value.items())
    if tag == "L":
        return 3 + sum(_value_size(v) + 1 for v in value)
    if tag == "SS":
        return sum(utf8_size(v) for v in value)
    if tag == "NS":
        return sum(_value_size({"N": v}) for v in value)
    return sum(_binary_size(v) for v in value)  # BS


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """DynamoDB's size of an item in bytes, by its published rules (names count too).

    CodecError (naming the attribute) if some text has no UTF-8 form.
    """
    return _measured(item, lambda name: f"attribute {name!r}")


def _measured(item: Mapping[str, Mapping[str, Any]], where: Callable[[str], str]) -> int:
    """The item's size; a CodecError for text of no UTF-8 form says ``where(attribute)``."""
    total = 0
    for name, av in item.items():
        try:
            total += utf8_size(name) + _value_size(av)
        except CodecError as exc:
            raise CodecError(f"{where(name)}: {exc}") from None
    return total


def _bytes_as_text(value: object) -> str:
    # For the size bound only: one character (1 or 2 UTF-8 bytes, or an escape) per byte.
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1")
    raise TypeError(type(value).__name__)


def _json_bound(value: object) -> int | None:
    """An upper bound of DynamoDB's size of ``value``: its JSON form is never smaller.

    None when it cannot be serialized (lone surrogates, odd values): then measure exactly.
    """
    try:
        return len(orjson.dumps(value, default=_bytes_as_text))
    except orjson.JSONEncodeError:
        return None


# -- nesting -------------------------------------------------------------------------------------


def value_depth(av: Mapping[str, Any], limit: int = MAX_DEPTH) -> int:
    """How many maps and lists nest in ``av`` (0 for a scalar); stops counting past ``limit``."""
    inner: Iterable[Mapping[str, Any]]
    if "M" in av:
        inner = av["M"].values()
    elif "L" in av:
        inner = av["L"]
    else:
        return 0
    if limit <= 0:
        return 1  # deeper than the caller asked to know
    deepest = 0
    for child in inner:
        if "M" in child or "L" in child:
            deepest = max(deepest, value_depth(child, limit - 1))
            if deepest >= limit:
                break
    return 1 + deepest


def check_depth(values: Mapping[str, Mapping[str, Any]], what: str) -> None:
    """CodecError if a value nests more than MAX_DEPTH maps and lists."""
    for name, av in values.items():
        if ("M" in av or "L" in av) and value_depth(av) > MAX_DEPTH:
            raise CodecError(
                f"{what}.{name}: the value nests more than {MAX_DEPTH} maps and lists (MAX_DEPTH), "
                "which DynamoDB refuses; flatten it or store it as a JSON str"
            )


# -- items, keys, requests -----------------------------------------------------------------------


def check_item(item: Mapping[str, Mapping[str, Any]], what: str, *, deep: bool = False) -> None:
    """Refuse an item DynamoDB would not store: over MAX_ITEM_BYTES, or with text of no UTF-8.

    With ``deep`` (types that can nest to any depth), also values nested over MAX_DEPTH.
    """
    bound = _json_bound(item)
    if bound is None or bound > MAX_ITEM_BYTES:
        size = _measured(item, lambda name: f"{what}.{name}")
        if size > MAX_ITEM_BYTES:
            raise LimitExceededError(
                f"{what}: the item is {size} bytes, over DynamoDB's item limit of "
                f"{MAX_ITEM_BYTES} bytes (MAX_ITEM_BYTES); nothing was sent. Move large "
                "values to their own items (or to S3) and store a reference"
            )
    if deep:
        check_depth(item, what)


def check_value(av: Mapping[str, Any], what: str, room: int = MAX_DEPTH) -> None:
    """Refuse one value no item could hold.

    That is text with no UTF-8 form, more than MAX_ITEM_BYTES, or more than ``room`` nested maps
    and lists (MAX_DEPTH less the levels of the path the value is written at).
    """
    bound = _json_bound(av)
    if bound is None or bound > MAX_ITEM_BYTES:
        try:
            size = _value_size(av)
        except CodecError as exc:
            raise CodecError(f"{what}: {exc}") from None
        if size > MAX_ITEM_BYTES:
            raise LimitExceededError(
                f"{what}: the value is {size} bytes, over DynamoDB's item limit of "
                f"{MAX_ITEM_BYTES} bytes (MAX_ITEM_BYTES); nothing was sent"
            )
    if ("M" in av or "L" in av) and value_depth(av) > room:
        raise CodecError(
            f"{what}: the value nests more than {MAX_DEPTH} maps and lists with the path it is "
            f"written at (MAX_DEPTH), which DynamoDB refuses; flatten it"
        )


def check_key(text: str, limit: int, attribute: str, what: str) -> None:
    """LimitExceededError if the key value ``text`` is over ``limit`` UTF-8 bytes.

    Callers skip keys of at most SHORT_KEY characters, which fit every limit.
    """
    try:
        size = utf8_size(text)
    except CodecError as exc:
        raise CodecError(f"{what}: key attribute {attribute!r}: {exc}") from None
    if size > limit:
        kind = "partition" if limit == MAX_PARTITION_KEY_BYTES else "sort"
        name = "MAX_PARTITION_KEY_BYTES" if kind == "partition" else "MAX_SORT_KEY_BYTES"
        raise LimitExceededError(
            f"{what}: key attribute {attribute!r} would be {size} bytes ({_clip(text)!r}), over "
            f"DynamoDB's {kind} key limit of {limit} bytes ({name}); shorten the values its "
            "template is built from"
        )


def request_bytes(params: Mapping[str, Any]) -> int:
    """What one write counts toward a transaction's MAX_TRANSACTION_BYTES.

    The item a Put writes, else its key and the values it writes or compares: a lower bound for
    an Update, whose item DynamoDB measures after the change.
    """
    total = sum(item_size(params[part]) for part in ("Item", "Key") if part in params)
    values = params.get("ExpressionAttributeValues", {})
    return total + sum(_value_size(av) for av in values.values())


def json_bound(params: Mapping[str, Any]) -> int:
    """A cheap upper bound of :func:`request_bytes` (exact measuring only when it is large)."""
    bound = _json_bound(params)
    return request_bytes(params) if bound is None else bound
