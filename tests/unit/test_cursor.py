"""Page cursors (``dynorm.core.cursor``): bound to their read, checked, signed on request."""

import base64
import hashlib
import hmac
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynorm import CursorError
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec, scope_fingerprint, secret_from
from dynorm.core.requests import CollectionRead, KeyRange, ScanRead

SECRET = b"0123456789abcdef0123456789abcdef"
UNSIGNED = CursorCodec()
SIGNED = CursorCodec(SECRET)

USERS = CollectionRead(
    table_name="app",
    index=None,
    pk_attr="pk",
    pk_value="ORG#MICROSOFT",
    sk_attr="sk",
    range=KeyRange("begins_with", ("USER#",)),
    key_attrs=("pk", "sk"),
    models=("User",),
)
KEY: Item = {"pk": {"S": "ORG#MICROSOFT"}, "sk": {"S": "USER#BILL/GATES+=?"}}

TICKETS = CollectionRead(
    table_name="app",
    index="GSI1",
    pk_attr="GSI1PK",
    pk_value="ORG#M#USER#BILL",
    sk_attr="GSI1SK",
    range=KeyRange("between", ("TICKET#100", "TICKET#200")),
    forward=False,
    key_attrs=("pk", "sk", "GSI1PK", "GSI1SK"),
    models=("Ticket",),
)
TICKET_KEY: Item = {
    "pk": {"S": "TICKET#150"},
    "sk": {"S": "TICKET#150"},
    "GSI1PK": {"S": "ORG#M#USER#BILL"},
    "GSI1SK": {"S": "TICKET#150"},
}

CODECS = pytest.mark.parametrize("codec", [UNSIGNED, SIGNED], ids=["unsigned", "signed"])


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _body(cursor: str) -> dict[str, Any]:
    text = cursor.split(".", maxsplit=1)[0]
    body: dict[str, Any] = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    return body


def _unsigned(body: Any) -> str:
    return _b64(orjson.dumps(body))


def _signed(body: Any, secret: bytes = SECRET) -> str:
    data = orjson.dumps(body)
    return _b64(data) + "." + _b64(hmac.new(secret, data, hashlib.sha256).digest())


def _edited(cursor: str, **key: str) -> str:
    """The cursor with some key attributes changed, re-encoded (a signature is kept as it was)."""
    body = _body(cursor)
    body["k"].update({name: {"S": value} for name, value in key.items()})
    _, dot, signature = cursor.partition(".")
    return _unsigned(body) + dot + signature


# -- round trips ---------------------------------------------------------------------------------


@CODECS
def test_round_trip(codec: CursorCodec) -> None:
    assert codec.decode(codec.encode(KEY, USERS), USERS) == KEY
    assert codec.decode(codec.encode(TICKET_KEY, TICKETS), TICKETS) == TICKET_KEY


@CODECS
def test_cursor_is_url_safe_text(codec: CursorCodec) -> None:
    cursor = codec.encode(KEY, USERS)
    assert cursor.isascii()
    assert not set(cursor) & set("+/= \n")


def test_a_signed_cursor_carries_an_hmac_of_its_body() -> None:
    unsigned = UNSIGNED.encode(KEY, USERS)
    signed = SIGNED.encode(KEY, USERS)
    body, mac = signed.split(".")
    assert body == unsigned
    data = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    assert base64.urlsafe_b64decode(mac + "=") == hmac.new(SECRET, data, hashlib.sha256).digest()


@given(
    st.dictionaries(
        st.text(min_size=1).filter(lambda n: n not in ("pk", "sk")),
        st.text().map(lambda s: {"S": s}),
        max_size=3,
    ),
    st.text(),
)
def test_any_key_round_trips(extra: Item, username: str) -> None:
    # dynorm's models write every key attribute, of the table and its indexes, as a string.
    key: Item = {**KEY, "sk": {"S": "USER#" + username}, **extra}
    read = msgspec.structs.replace(USERS, key_attrs=tuple(key))
    for codec in (UNSIGNED, SIGNED):
        assert codec.decode(codec.encode(key, read), read) == key


# -- bound to the read ---------------------------------------------------------------------------


@CODECS
@pytest.mark.parametrize(
    "change",
    [
        {"models": ("Ticket",)},
        {"index": "GSI1"},
        {"pk_value": "ORG#APPLE"},
        {"range": KeyRange("begins_with", ("TICKET#",))},
        {"range": None},
        {"forward": False},
    ],
)
def test_a_cursor_of_another_read_is_refused(codec: CursorCodec, change: dict[str, Any]) -> None:
    cursor = codec.encode(KEY, USERS)
    with pytest.raises(CursorError, match="made by a different query") as info:
        codec.decode(cursor, msgspec.structs.replace(USERS, **change))
    assert "pass it only to the query that returned it" in str(info.value)


def test_the_table_name_is_not_part_of_the_binding() -> None:
    # Tests (and stages) rename tables: the same read on another copy accepts the cursor.
    cursor = UNSIGNED.encode(KEY, USERS)
    assert UNSIGNED.decode(cursor, msgspec.structs.replace(USERS, table_name="app-1234")) == KEY


# -- edited keys, refused without a secret ------------------------------------------------------


@pytest.mark.parametrize(
    ("read", "key", "edit"),
    [
        (USERS, KEY, {"sk": "ZZZ"}),  # out of the begins_with range
        (USERS, KEY, {"sk": "USEQ#A"}),
        (USERS, KEY, {"pk": "ORG#APPLE"}),  # another partition
        (TICKETS, TICKET_KEY, {"GSI1SK": "TICKET#201"}),  # past the BETWEEN's top
        (TICKETS, TICKET_KEY, {"GSI1SK": "TICKET#0"}),  # below its bottom
        (TICKETS, TICKET_KEY, {"GSI1PK": "ORG#M#USER#STEVE"}),
    ],
)
def test_an_edited_key_outside_the_read_is_refused(
    read: CollectionRead, key: Item, edit: dict[str, str]
) -> None:
    cursor = _edited(UNSIGNED.encode(key, read), **edit)
    with pytest.raises(CursorError, match="points") as info:
        UNSIGNED.decode(cursor, read)
    assert "None to start over" in str(info.value)


def test_an_equality_read_accepts_only_its_own_key() -> None:
    read = msgspec.structs.replace(USERS, range=KeyRange("eq", ("USER#A",)))
    cursor = UNSIGNED.encode({"pk": KEY["pk"], "sk": {"S": "USER#A"}}, read)
    assert UNSIGNED.decode(cursor, read)["sk"] == {"S": "USER#A"}
    with pytest.raises(CursorError, match="outside its query"):
        UNSIGNED.decode(_edited(cursor, sk="USER#B"), read)


@pytest.mark.parametrize(
    "key",
    [
        {"pk": {"S": "ORG#MICROSOFT"}},  # an attribute missing
        {**KEY, "GSI1PK": {"S": "x"}},  # one too many
        {"pk": {"S": "ORG#MICROSOFT"}, "other": {"S": "USER#A"}},
    ],
)
def test_a_key_must_name_exactly_the_reads_key_attributes(key: Item) -> None:
    cursor = _unsigned({"v": 2, "q": USERS.fingerprint(), "k": key})
    with pytest.raises(CursorError, match="this query resumes from pk, sk"):
        UNSIGNED.decode(cursor, USERS)


@pytest.mark.parametrize(
    ("attr", "value"),
    [("pk", {"N": "1"}), ("sk", {"B": "YQ=="}), ("GSI1PK", {"N": "2"}), ("GSI1SK", {"B": ""})],
)
def test_a_key_attribute_of_another_type_is_refused(attr: str, value: dict[str, str]) -> None:
    for read, key in ((USERS, KEY), (TICKETS, TICKET_KEY)):
        if attr not in key:
            continue
        cursor = _unsigned({"v": 2, "q": read.fingerprint(), "k": {**key, attr: value}})
        with pytest.raises(
            CursorError, match=rf"holds {attr} as [NB], but that key attribute is a string \(S\)"
        ):
            UNSIGNED.decode(cursor, read)


def test_a_scan_cursor_key_of_another_type_is_refused() -> None:
    scan = ScanRead("app", key_attrs=("pk", "sk"))
    good = UNSIGNED.encode_scan(KEY, scan)
    assert UNSIGNED.decode_scan(good, scan) == KEY
    cursor = _unsigned({"v": 2, "q": scan.fingerprint(), "k": {**KEY, "pk": {"N": "1"}}})
    with pytest.raises(
        CursorError, match=r"holds pk as N, but that key attribute is a string \(S\)"
    ):
        UNSIGNED.decode_scan(cursor, scan)


@pytest.mark.parametrize("edit", ["!", "*", " ", "\n", "+", "/"])
def test_characters_outside_base64url_are_refused_not_dropped(edit: str) -> None:
    for codec in (UNSIGNED, SIGNED):
        cursor = codec.encode(KEY, USERS)
        with pytest.raises(CursorError, match="malformed cursor"):
            codec.decode(cursor[:4] + edit + cursor[4:], USERS)


def test_without_a_secret_an_edit_inside_the_range_goes_unnoticed() -> None:
    # What a secret is for: only the signature covers a key moved within the read's range.
    cursor = _edited(UNSIGNED.encode(KEY, USERS), sk="USER#ZZZ")
    assert UNSIGNED.decode(cursor, USERS)["sk"] == {"S": "USER#ZZZ"}
    with pytest.raises(CursorError, match="signature does not match"):
        SIGNED.decode(_edited(SIGNED.encode(KEY, USERS), sk="USER#ZZZ"), USERS)


# -- signatures ----------------------------------------------------------------------------------


def test_an_unsigned_cursor_is_refused_when_a_secret_is_set() -> None:
    with pytest.raises(CursorError, match="not signed") as info:
        SIGNED.decode(UNSIGNED.encode(KEY, USERS), USERS)
    assert "None to start over" in str(info.value)


def test_a_signed_cursor_is_refused_without_the_secret() -> None:
    with pytest.raises(CursorError, match="has no cursor_secret"):
        UNSIGNED.decode(SIGNED.encode(KEY, USERS), USERS)


def test_a_rotated_secret_refuses_the_old_cursors() -> None:
    old = SIGNED.encode(KEY, USERS)
    with pytest.raises(CursorError, match="signed with another cursor_secret"):
        CursorCodec(b"another secret, after rotation").decode(old, USERS)


def test_a_forged_signature_is_refused() -> None:
    body = {"v": 2, "q": USERS.fingerprint(), "k": {"pk": KEY["pk"], "sk": {"S": "USER#Z"}}}
    for forged in (
        _signed(body, b"a guessed secret"),
        _unsigned(body) + "." + _b64(b"\x00" * 32),
        _unsigned(body) + "." + _b64(b"short"),
        _unsigned(body) + ".",
    ):
        with pytest.raises(CursorError, match=r"signature does not match|not signed"):
            SIGNED.decode(forged, USERS)
    assert SIGNED.decode(_signed(body), USERS)["sk"] == {"S": "USER#Z"}


def test_the_signature_covers_version_and_fingerprint() -> None:
    cursor = SIGNED.encode(KEY, USERS)
    body = _body(cursor)
    signature = cursor.split(".")[1]
    body["q"] = msgspec.structs.replace(USERS, pk_value="ORG#APPLE").fingerprint()
    with pytest.raises(CursorError, match="signature does not match"):
        SIGNED.decode(
            _unsigned(body) + "." + signature, msgspec.structs.replace(USERS, pk_value="ORG#APPLE")
        )


@pytest.mark.parametrize("secret", [b"", "hunter2", bytearray(b"hunter2")])
def test_a_secret_must_be_non_empty_bytes(secret: Any) -> None:
    with pytest.raises(CursorError, match="cursor_secret") as info:
        CursorCodec(secret)
    if secret:
        assert "hunter2" not in str(info.value)  # a secret is never echoed


def test_the_secret_is_not_in_the_repr() -> None:
    assert "0123" not in repr(SIGNED)
    assert SIGNED.signed
    assert not UNSIGNED.signed


def test_secret_from_the_environment() -> None:
    assert secret_from(b"given", {"DYNORM_CURSOR_SECRET": "env"}) == b"given"
    assert secret_from(None, {"DYNORM_CURSOR_SECRET": "sécret"}) == "sécret".encode()
    assert secret_from(None, {}) is None
    with pytest.raises(CursorError, match="DYNORM_CURSOR_SECRET is set but empty"):
        secret_from(None, {"DYNORM_CURSOR_SECRET": ""})


# -- embedded offsets ----------------------------------------------------------------------------

SCOPE_A = scope_fingerprint("embedded", "Customer.addresses", {"pk": {"S": "CUSTOMER#a"}})
SCOPE_B = scope_fingerprint("embedded", "Customer.addresses", {"pk": {"S": "CUSTOMER#b"}})


@CODECS
def test_offset_round_trip(codec: CursorCodec) -> None:
    for offset in (0, 1, 20, 10**6):
        assert codec.decode_offset(codec.encode_offset(offset, SCOPE_A), SCOPE_A) == offset


@CODECS
def test_an_offset_of_another_parent_is_refused(codec: CursorCodec) -> None:
    assert SCOPE_A != SCOPE_B
    with pytest.raises(CursorError, match="different query"):
        codec.decode_offset(codec.encode_offset(2, SCOPE_A), SCOPE_B)


@pytest.mark.parametrize("offset", [-1, True, False, 1.0, "1", None, [1], {"N": "1"}])
def test_a_forged_offset_is_refused(offset: object) -> None:
    with pytest.raises(CursorError, match="malformed cursor"):
        UNSIGNED.decode_offset(_unsigned({"v": 2, "q": SCOPE_A, "o": offset}), SCOPE_A)
    # Signed with the right secret, it is still no offset.
    with pytest.raises(CursorError, match="malformed cursor"):
        SIGNED.decode_offset(_signed({"v": 2, "q": SCOPE_A, "o": offset}), SCOPE_A)


@CODECS
def test_a_map_position_round_trips_and_is_bound_to_its_parent(codec: CursorCodec) -> None:
    for key in ("", "home", "a#b", "\u00e9t\u00e9"):
        assert codec.decode_after(codec.encode_after(key, SCOPE_A), SCOPE_A) == key
    with pytest.raises(CursorError, match="different query"):
        codec.decode_after(codec.encode_after("home", SCOPE_A), SCOPE_B)


@pytest.mark.parametrize("key", [-1, True, 1.5, None, ["home"], {"S": "home"}])
def test_a_forged_map_position_is_refused(key: object) -> None:
    with pytest.raises(CursorError, match="malformed cursor"):
        UNSIGNED.decode_after(_unsigned({"v": 2, "q": SCOPE_A, "a": key}), SCOPE_A)
    # An offset cursor (a list's) is no map position, and back.
    with pytest.raises(CursorError, match="malformed cursor"):
        UNSIGNED.decode_after(UNSIGNED.encode_offset(2, SCOPE_A), SCOPE_A)
    with pytest.raises(CursorError, match="malformed cursor"):
        UNSIGNED.decode_offset(UNSIGNED.encode_after("home", SCOPE_A), SCOPE_A)


def test_a_key_cursor_is_no_offset_and_back() -> None:
    key_cursor = UNSIGNED.encode(KEY, USERS)
    with pytest.raises(CursorError):
        UNSIGNED.decode_offset(key_cursor, USERS.fingerprint())
    offset_cursor = UNSIGNED.encode_offset(3, USERS.fingerprint())
    with pytest.raises(CursorError, match="malformed cursor"):
        UNSIGNED.decode(offset_cursor, USERS)


def test_scope_fingerprint_is_stable() -> None:
    # Cursors outlive processes: no hash randomization in the binding.
    assert scope_fingerprint("embedded", "A.b", {"pk": {"S": "x"}}) == scope_fingerprint(
        "embedded", "A.b", {"pk": {"S": "x"}}
    )
    assert len(SCOPE_A) == 16


# -- malformed cursors ---------------------------------------------------------------------------


def test_empty_cursor() -> None:
    with pytest.raises(CursorError, match=r"non-empty string from Page\.cursor"):
        UNSIGNED.decode("", USERS)


FP = USERS.fingerprint()


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",  # decodes to bytes that are not JSON
        "!!!!",  # no base64 characters at all
        "abcde",  # impossible base64 length
        "é",  # not ASCII
        "Zm9v\x00",
        _unsigned([1, 2]),  # JSON, but a list
        _unsigned("text"),
        _unsigned({"v": 2, "q": FP}),  # no key
        _unsigned({"v": 2, "k": {}}),  # no fingerprint
        _unsigned({"v": 2, "q": FP, "k": []}),  # key not a map
        _unsigned({"v": 2, "q": FP, "k": {}}),  # empty key
        _unsigned({"v": 2, "q": FP, "k": {"pk": "x"}}),  # value not a map
        _unsigned({"v": 2, "q": FP, "k": {"pk": {"S": "a", "N": "1"}}}),
        _unsigned({"v": 2, "q": FP, "k": {"pk": {"SS": ["a"]}}}),
        _unsigned({"v": 2, "q": FP, "k": {"pk": {"S": 1}}}),
        _unsigned({"v": 2, "q": FP, "k": {"b": {"B": "not base64!"}}}),
    ],
)
def test_malformed_cursor_says_what_to_pass(cursor: str) -> None:
    with pytest.raises(CursorError, match="malformed cursor") as info:
        UNSIGNED.decode(cursor, USERS)
    assert "Page.cursor" in str(info.value)
    assert "None to start over" in str(info.value)


@pytest.mark.parametrize("version", [1, 3, 0, "2", None])
def test_other_versions_are_refused(version: object) -> None:
    cursor = _unsigned({"v": version, "q": FP, "k": {"pk": {"S": "x"}}})
    with pytest.raises(CursorError, match=r"cursor version .* is not supported; start from None"):
        UNSIGNED.decode(cursor, USERS)


def test_padding_is_optional() -> None:
    cursor = UNSIGNED.encode(KEY, USERS)
    padded = cursor + "=" * (-len(cursor) % 4)
    assert UNSIGNED.decode(padded, USERS) == KEY
