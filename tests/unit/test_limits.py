"""DynamoDB's limits as constants and pure checks (``dynorm.core.limits``)."""

import decimal
import math
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dynorm
from dynorm import GSI, CodecError, LimitExceededError, Table
from dynorm.core.limits import (
    MAX_DEPTH,
    MAX_ITEM_BYTES,
    MAX_NUMBER,
    MAX_NUMBER_DIGITS,
    MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES,
    MAX_TRANSACTION_BYTES,
    MIN_NUMBER,
    _json_bound,
    check_decimal,
    check_depth,
    check_float,
    check_item,
    check_key,
    check_value,
    int_text,
    item_size,
    request_bytes,
    utf8_size,
    value_depth,
)
from dynorm.mapping.model import info_of

D = decimal.Decimal


def test_the_limits_are_dynamodbs() -> None:
    assert MAX_ITEM_BYTES == 409_600
    assert MAX_PARTITION_KEY_BYTES == 2048
    assert MAX_SORT_KEY_BYTES == 1024
    assert MAX_NUMBER_DIGITS == 38
    assert str(MAX_NUMBER) == "9.9999999999999999999999999999999999999E+125"
    assert str(MIN_NUMBER) == "1E-130"
    assert MAX_DEPTH == 32
    assert MAX_TRANSACTION_BYTES == 4 * 1024 * 1024
    assert dynorm.MAX_ITEM_BYTES is MAX_ITEM_BYTES


# -- numbers -------------------------------------------------------------------------------------


def _storable(value: D) -> bool:
    """The reference rule, written independently: 38 significant digits, exponent in range."""
    if value.is_zero():
        return True
    magnitude = value.copy_abs()  # abs() would round to the context's 28 digits
    significant = "".join(map(str, magnitude.as_tuple().digits)).strip("0")
    return len(significant) <= MAX_NUMBER_DIGITS and MIN_NUMBER <= magnitude <= MAX_NUMBER


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (10**38 - 1, True),  # 38 nines
        (10**38, True),  # one significant digit
        (10**38 + 1, False),  # 39
        (-(10**38) - 1, False),
        ((10**38 - 1) * 10**88, True),  # MAX_NUMBER
        (10**125, True),
        (10**126, False),  # over MAX_NUMBER
        (-(10**126), False),
        (2**10_000, False),  # too big to print cheaply: refused by its size
        (0, True),
    ],
)
def test_int_text(value: int, ok: bool) -> None:
    if ok:
        assert int_text(value) == str(value)
    else:
        with pytest.raises(CodecError, match="MAX_NUMBER"):
            int_text(value)


@given(st.integers(min_value=-(10**140), max_value=10**140))
def test_int_text_agrees_with_the_rule(value: int) -> None:
    if _storable(D(value)):
        assert int_text(value) == str(value)
    else:
        with pytest.raises(CodecError):
            int_text(value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("9.9999999999999999999999999999999999999E+125", True),
        ("-9.9999999999999999999999999999999999999E+125", True),
        ("1E+126", False),
        ("1E-130", True),
        ("9.9E-131", False),
        ("1.0000000000000000000000000000000000000E-130", True),  # trailing zeros are free
        ("1." + "1" * 37, True),  # 38 digits
        ("1." + "1" * 38, False),  # 39 digits
        ("1" * 38 + "000", True),
        ("0E-200", True),  # zero whatever its exponent
        ("-0", True),
    ],
)
def test_check_decimal(value: str, ok: bool) -> None:
    if ok:
        assert check_decimal(D(value)) == str(D(value))
    else:
        with pytest.raises(CodecError, match="MAX_NUMBER"):
            check_decimal(D(value))


@pytest.mark.parametrize("value", ["NaN", "sNaN", "Infinity", "-Infinity"])
def test_check_decimal_refuses_non_finite(value: str) -> None:
    with pytest.raises(CodecError, match="cannot be"):
        check_decimal(D(value))


@given(
    st.builds(
        lambda digits, exponent: D(f"{digits}E{exponent}"),
        st.integers(min_value=-(10**42), max_value=10**42),
        st.integers(min_value=-180, max_value=140),
    )
)
def test_check_decimal_agrees_with_the_rule(value: D) -> None:
    if _storable(value):
        assert check_decimal(value) == str(value)
    else:
        with pytest.raises(CodecError):
            check_decimal(value)


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (0.0, True),
        (-0.0, True),
        (1e-130, True),
        (9.9e-131, False),
        (5e-324, False),
        (9.999999999999998e125, True),  # the largest float below 1e126
        (1e126, False),
        (-1e126, False),
        (1.7976931348623157e308, False),
    ],
)
def test_check_float(value: float, ok: bool) -> None:
    if ok:
        assert check_float(value) == repr(value)
    else:
        with pytest.raises(CodecError, match="range"):
            check_float(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_check_float_agrees_with_the_rule(value: float) -> None:
    if _storable(D(repr(value))):
        assert check_float(value) == repr(value)
    else:
        with pytest.raises(CodecError):
            check_float(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_check_float_refuses_non_finite(value: float) -> None:
    with pytest.raises(CodecError, match="cannot be"):
        check_float(value)


# -- text and sizes ------------------------------------------------------------------------------


def test_utf8_size_counts_bytes() -> None:
    assert utf8_size("abc") == 3
    assert utf8_size("é") == 2
    assert utf8_size("€") == 3
    assert utf8_size("😀") == 4


@pytest.mark.parametrize("text", ["\ud800", "ab\udc80c", "😀\udfff"])
def test_lone_surrogates_are_refused(text: str) -> None:
    with pytest.raises(CodecError, match="lone surrogate") as caught:
        utf8_size(text)
    assert "UTF-8" in str(caught.value)


def test_item_size_follows_the_published_rules() -> None:
    assert item_size({"name": {"S": "abc"}}) == 4 + 3
    assert item_size({"n": {"N": "12345"}}) == 1 + 4  # 5 digits: (5 + 1) // 2 + 1
    assert item_size({"n": {"N": "-0.001"}}) == 1 + 2
    assert item_size({"b": {"B": b"\x00\x01"}}) == 1 + 2
    assert item_size({"f": {"BOOL": True}, "z": {"NULL": True}}) == 2 + 2
    assert item_size({"m": {"M": {"k": {"S": "v"}}}}) == 1 + 3 + (1 + 1 + 1)
    assert item_size({"l": {"L": [{"S": "v"}, {"N": "1"}]}}) == 1 + 3 + (1 + 1) + (2 + 1)
    assert item_size({"s": {"SS": ["ab", "é"]}}) == 1 + 2 + 2


def test_item_size_names_the_attribute_with_bad_text() -> None:
    with pytest.raises(CodecError, match="attribute 'bad'"):
        item_size({"ok": {"S": "x"}, "bad": {"L": [{"S": "\ud800"}]}})


scalars = st.one_of(
    st.builds(lambda s: {"S": s}, st.text()),
    st.builds(lambda n: {"N": str(n)}, st.integers(-(10**37), 10**37)),
    st.builds(lambda b: {"B": b}, st.binary()),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
    st.just({"NULL": True}),
    st.builds(lambda ss: {"SS": sorted(ss)}, st.sets(st.text(), min_size=1)),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.builds(lambda m: {"M": m}, st.dictionaries(st.text(), inner))
        | st.builds(lambda items: {"L": items}, st.lists(inner))
    ),
    max_leaves=15,
)


@given(st.dictionaries(st.text(min_size=1), values))
def test_the_json_bound_is_never_below_the_size(item: dict[str, Any]) -> None:
    # The encode path trusts the cheap bound below the limit: it must never undercount.
    bound = _json_bound(item)
    assert bound is not None
    assert bound >= item_size(item)


def test_check_item_at_the_limit() -> None:
    exactly = {"a": {"S": "x" * (MAX_ITEM_BYTES - 1)}}
    assert item_size(exactly) == MAX_ITEM_BYTES
    check_item(exactly, "Thing")
    over = {"a": {"S": "x" * MAX_ITEM_BYTES}}
    with pytest.raises(LimitExceededError, match=r"Thing: the item is 409601 bytes.*MAX_ITEM"):
        check_item(over, "Thing")


def test_check_item_counts_bytes_not_characters() -> None:
    check_item({"a": {"S": "é" * 200_000}}, "Thing")  # 400,001 bytes: fits
    with pytest.raises(LimitExceededError):
        check_item({"a": {"S": "é" * 205_000}}, "Thing")  # 410,001 bytes
    with pytest.raises(LimitExceededError):
        check_item({"a": {"B": b"\xff" * (MAX_ITEM_BYTES + 1)}}, "Thing")


def test_check_item_names_the_attribute_with_a_lone_surrogate() -> None:
    with pytest.raises(CodecError, match=r"Thing\.title: 'a\\udc80' holds a lone surrogate"):
        check_item({"id": {"S": "1"}, "title": {"S": "a\udc80"}}, "Thing")


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"S": "leaf"}
    for i in range(levels):
        value = {"L": [value]} if i % 2 else {"M": {"k": value}}
    return value


def test_depth() -> None:
    assert value_depth({"S": "x"}) == 0
    assert value_depth(_nested(1)) == 1
    assert value_depth(_nested(MAX_DEPTH)) == MAX_DEPTH
    assert value_depth({"L": [{"N": "1"}, _nested(3), {"M": {}}]}) == 4
    check_depth({"a": _nested(MAX_DEPTH)}, "Thing")
    with pytest.raises(CodecError, match=r"Thing\.a: .*more than 32 .*MAX_DEPTH"):
        check_depth({"a": _nested(MAX_DEPTH + 1)}, "Thing")
    # Only items of models whose types can nest to any depth are walked.
    check_item({"a": _nested(MAX_DEPTH + 1)}, "Thing")
    with pytest.raises(CodecError, match="MAX_DEPTH"):
        check_item({"a": _nested(MAX_DEPTH + 1)}, "Thing", deep=True)


def test_value_depth_stops_counting_past_the_limit() -> None:
    assert value_depth(_nested(500)) <= MAX_DEPTH + 1


def test_check_value_counts_the_path_it_is_written_at() -> None:
    check_value(_nested(MAX_DEPTH), "Thing.a")
    check_value(_nested(MAX_DEPTH - 2), "Thing.a.b.c", room=MAX_DEPTH - 2)
    with pytest.raises(CodecError, match="MAX_DEPTH"):
        check_value(_nested(MAX_DEPTH - 1), "Thing.a.b.c", room=MAX_DEPTH - 2)
    with pytest.raises(LimitExceededError, match=r"Thing\.a: the value is"):
        check_value({"S": "x" * (MAX_ITEM_BYTES + 1)}, "Thing.a")
    with pytest.raises(CodecError, match="lone surrogate"):
        check_value({"L": [{"S": "\ud800"}]}, "Thing.a")


@pytest.mark.parametrize(
    ("text", "limit", "ok"),
    [
        ("p" * 2048, MAX_PARTITION_KEY_BYTES, True),
        ("p" * 2049, MAX_PARTITION_KEY_BYTES, False),
        ("s" * 1024, MAX_SORT_KEY_BYTES, True),
        ("s" * 1025, MAX_SORT_KEY_BYTES, False),
        ("é" * 513, MAX_SORT_KEY_BYTES, False),  # 513 characters, 1026 bytes
    ],
)
def test_check_key(text: str, limit: int, ok: bool) -> None:
    if ok:
        check_key(text, limit, "pk", "Thing")
        return
    name = "MAX_PARTITION_KEY_BYTES" if limit == MAX_PARTITION_KEY_BYTES else "MAX_SORT_KEY_BYTES"
    with pytest.raises(LimitExceededError, match=rf"Thing: key attribute 'pk' .*\({name}\)"):
        check_key(text, limit, "pk", "Thing")


def test_request_bytes_counts_items_keys_and_values() -> None:
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    assert request_bytes({"TableName": "t", "Item": {**key, "x": {"S": "12345"}}}) == 6 + 6
    assert request_bytes({"TableName": "t", "Key": key}) == 6
    update = {"Key": key, "ExpressionAttributeValues": {":v0": {"S": "123"}}}
    assert request_bytes(update) == 6 + 3  # placeholders are no attribute names


def test_a_key_attribute_has_the_limit_of_every_key_it_serves() -> None:
    # In an inverted index the table's partition key is the index's sort key: 1024 bytes.
    games = Table("games", pk="pk", sk="sk", indexes=[GSI("inverted", pk="sk", sk="pk")])

    @games.model(pk="{game}", sk="{user}")
    @attrs.define
    class Mapping:
        game: str
        user: str

    info = info_of(Mapping)
    info.encode(Mapping("g" * 1024, "u"))
    with pytest.raises(LimitExceededError, match=r"'pk' would be 1025 bytes.*MAX_SORT_KEY_BYTES"):
        info.encode(Mapping("g" * 1025, "u"))
    with pytest.raises(LimitExceededError, match=r"'sk' would be 1025 bytes.*MAX_SORT_KEY_BYTES"):
        info.primary_key({"game": "g", "user": "u" * 1025})
