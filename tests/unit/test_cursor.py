"""Opaque page cursors (``dynorm._cursor``)."""

import base64
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynorm import CursorError
from dynorm._codec import Item
from dynorm._cursor import decode_cursor, encode_cursor

FINGERPRINT = "0123456789abcdef"

KEY: Item = {
    "pk": {"S": "ORG#MICROSOFT"},
    "sk": {"S": "USER#BILL/GATES+=?"},
    "GSI1SK": {"N": "42"},
    "blob": {"B": b"\x00\xff\xfe"},
}


def _cursor_of(body: Any) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")


def test_round_trip_keeps_every_type() -> None:
    cursor = encode_cursor(KEY, FINGERPRINT)
    assert decode_cursor(cursor, FINGERPRINT) == KEY


def test_binary_values_come_back_as_bytes() -> None:
    back = decode_cursor(encode_cursor(KEY, FINGERPRINT), FINGERPRINT)
    assert back["blob"]["B"] == b"\x00\xff\xfe"
    assert type(back["blob"]["B"]) is bytes


def test_cursor_is_url_safe_text() -> None:
    cursor = encode_cursor(KEY, FINGERPRINT)
    assert cursor.isascii()
    assert not set(cursor) & set("+/= \n")


@given(
    st.dictionaries(
        st.text(min_size=1),
        st.one_of(
            st.text().map(lambda s: {"S": s}),
            st.integers().map(lambda n: {"N": str(n)}),
            st.binary().map(lambda b: {"B": b}),
        ),
        max_size=4,
    ),
    st.text(),
)
def test_any_key_round_trips(key: Item, fingerprint: str) -> None:
    assert decode_cursor(encode_cursor(key, fingerprint), fingerprint) == key


def test_cursor_of_another_query_is_refused() -> None:
    cursor = encode_cursor(KEY, FINGERPRINT)
    with pytest.raises(CursorError, match="made by a different query") as info:
        decode_cursor(cursor, "fedcba9876543210")
    assert "pass it only to the query that returned it" in str(info.value)


def test_empty_cursor() -> None:
    with pytest.raises(CursorError, match=r"non-empty string from Page\.cursor"):
        decode_cursor("", FINGERPRINT)


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",  # decodes to bytes that are not JSON
        "!!!!",  # no base64 characters at all
        "abcde",  # impossible base64 length
        "é",  # not ASCII
        "Zm9v\x00",
        _cursor_of([1, 2]),  # JSON, but a list
        _cursor_of("text"),
        _cursor_of({"v": 1, "q": FINGERPRINT}),  # no key
        _cursor_of({"v": 1, "k": {}}),  # no fingerprint
        _cursor_of({"q": FINGERPRINT, "k": {}}),  # no version
        _cursor_of({"v": 1, "q": FINGERPRINT, "k": []}),  # key not a map
        _cursor_of({"v": 1, "q": FINGERPRINT, "k": {"pk": "x"}}),  # value not a map
        _cursor_of({"v": 1, "q": FINGERPRINT, "k": {"pk": {"S": "a", "N": "1"}}}),
        _cursor_of({"v": 1, "q": FINGERPRINT, "k": {"b": {"B": "not base64!"}}}),
    ],
)
def test_malformed_cursor_says_what_to_pass(cursor: str) -> None:
    with pytest.raises(CursorError, match="malformed cursor") as info:
        decode_cursor(cursor, FINGERPRINT)
    assert "Page.cursor" in str(info.value)
    assert "None to start over" in str(info.value)


@pytest.mark.parametrize("version", [2, 0, "1", None])
def test_other_versions_are_refused(version: object) -> None:
    cursor = _cursor_of({"v": version, "q": FINGERPRINT, "k": {}})
    with pytest.raises(CursorError, match=r"cursor version .* is not supported; start from None"):
        decode_cursor(cursor, FINGERPRINT)


def test_padding_is_optional() -> None:
    cursor = encode_cursor({"pk": {"S": "x"}}, FINGERPRINT)
    padded = cursor + "=" * (-len(cursor) % 4)
    assert decode_cursor(padded, FINGERPRINT) == {"pk": {"S": "x"}}
