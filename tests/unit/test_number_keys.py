"""Number (N) and binary (B) key attributes: declaration, key encoding, ranges, cursors."""

from __future__ import annotations

import base64
import decimal
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dynorm
from dynorm import (
    GSI,
    CursorError,
    DefinitionError,
    ExpressionError,
    KeyTemplateError,
    Table,
    begins_with,
    between,
    ge,
    gt,
    le,
    lt,
)
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec
from dynorm.core.keys import key_text
from dynorm.core.requests import KeyRange
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import info_of
from dynorm.mapping.tabledef import create_table_request
from dynorm.mapping.writeplan import WritePlanner

scores = Table(
    "GameScores",
    pk="UserId",
    sk="Score",
    indexes=[GSI("ByGame", pk="GameTitle", sk="TopScore")],
    key_types={"Score": "N", "TopScore": "N"},
)


@scores.model(pk="{user_id}", sk="{score}", ByGame=("{game}", "{top}"))
class Score:
    user_id: str = dynorm.field(name="UserId")
    score: int = dynorm.field(name="Score")
    game: str = dynorm.field(name="GameTitle")
    top: int = dynorm.field(name="TopScore")


blobs = Table("Blobs", pk="pk", sk="sk", key_types={"pk": "B", "sk": "N"})


@blobs.model(pk="{digest}", sk="{part}")
class Chunk:
    digest: bytes = dynorm.field(key_only=True)
    part: decimal.Decimal = dynorm.field(key_only=True)
    data: bytes = b""


def explain(table: Table) -> Explain:
    return Explain(table, table.name, WritePlanner(table, table.name))


def query_params(table: Table, model: type, index: str | None = None, **values: Any) -> Any:
    finished = explain(table).query_read(info_of(model), index, values)
    return finished.read.request().params


# -- declaration -----------------------------------------------------------------------------------


def table_with(types: dict[str, Any]) -> Table:
    return Table("t", pk="pk", sk="sk", indexes=[GSI("GSI", pk="gpk", sk="gsk")], key_types=types)


@pytest.mark.parametrize(
    ("types", "message"),
    [
        ({"Sk": "N"}, r"key_types names 'Sk', which is no key attribute .* \(pk, sk, gpk, gsk\)"),
        ({"sk": "M"}, r"key_types\['sk'\] is 'M'; a key attribute is 'S' .*, 'N' .* or 'B'"),
        ({"sk": "n"}, r"key_types\['sk'\] is 'n'"),
    ],
)
def test_bad_key_types_are_refused_at_declaration(types: dict[str, Any], message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        table_with(types)


@pytest.mark.parametrize(
    "template", ["SCORE#{score}", "{score}#{user}", "META", "{score:06d}", "{score}x"]
)
def test_a_number_key_template_is_one_field_alone(template: str) -> None:
    table = table_with({"sk": "N"})
    with pytest.raises(
        DefinitionError,
        match=rf"M: key attribute 'sk' is a number \(N\), so its template must be one field "
        rf"alone, like '\{{\w+\}}'; '{template}' is not.*key_types=\{{'sk': 'S'\}}",
    ):

        @table.model(pk="{user}", sk=template)
        class M:
            user: str
            score: int


@pytest.mark.parametrize(
    ("kind", "tp", "hint"),
    [
        ("N", str, "declare it as int or Decimal"),
        ("N", float, r"declare it as int, or as Decimal \(floats do not round-trip exactly\)"),
        ("N", bool, "declare it as int or Decimal"),
        ("N", bytes, "declare it as int or Decimal"),
        ("B", str, "declare it as bytes"),
        ("B", int, "declare it as bytes"),
    ],
)
def test_a_field_type_that_cannot_be_the_key_is_refused(kind: str, tp: type, hint: str) -> None:
    table = table_with({"gsk": kind})
    cls = attrs.make_class("M", {"user": attrs.field(type=str), "value": attrs.field(type=tp)})
    with pytest.raises(
        DefinitionError, match=rf"M\.value \(\w+\) fills the .* key attribute 'gsk'.*{hint}"
    ):
        table.model(pk="{user}", sk="S#{user}", GSI=("{user}", "{value}"))(cls)
    assert "M" not in table.models


def test_a_field_stored_as_a_number_key_attribute_must_be_a_number() -> None:
    table = Table("t", pk="pk", sk="Score", key_types={"Score": "N"})
    with pytest.raises(DefinitionError, match=r"M\.score \(str\) fills the number key attribute"):

        @table.model(pk="{user}", sk="{score}")
        class M:
            user: str
            score: str = dynorm.field(name="Score")


def test_optional_and_decimal_fields_fill_number_keys() -> None:
    table = table_with({"sk": "N", "gsk": "N"})

    @table.model(pk="{user}", sk="{n}", GSI=("{user}", "{rank}"))
    class M:
        user: str
        n: decimal.Decimal
        rank: int | None = None

    info = info_of(M)
    assert info.encode(M("u", decimal.Decimal("1.5"))) == {
        "user": {"S": "u"},
        "n": {"N": "1.5"},
        "rank": {"NULL": True},
        "pk": {"S": "u"},
        "sk": {"N": "1.5"},
    }
    assert info.encode(M("u", decimal.Decimal(2), 7))["gsk"] == {"N": "7"}


def test_models_whose_number_sort_keys_overlap_need_a_type_attribute() -> None:
    table = Table("t", pk="pk", sk="at", key_types={"at": "N"})

    @table.model(pk="D#{device}", sk="{at}")
    class Ping:
        device: str
        at: int

    with pytest.raises(DefinitionError, match="cannot be told apart") as caught:

        @table.model(pk="D#{device}", sk="{at}")
        class Pong:
            device: str
            at: int

    # A number key takes no text prefix: the advice is the type attribute, and only that.
    message = str(caught.value)
    assert "the sort key is a number (N), which holds the value alone" in message
    assert "Table(..., type_attribute='type')" in message
    assert "literal prefix" not in message


def test_a_type_attribute_tells_models_with_number_sort_keys_apart() -> None:
    table = Table("t", pk="pk", sk="at", key_types={"at": "N"}, type_attribute="type")

    @table.model(pk="D#{device}", sk="{at}")
    class Ping:
        device: str
        at: int

    @table.model(pk="D#{device}", sk="{at}")
    class Pong:
        device: str
        at: int

    ping = info_of(Ping).encode(Ping("d", 5))
    pong = info_of(Pong).encode(Pong("d", 5))
    assert ping["at"] == {"N": "5"}
    assert table.model_of(ping) is info_of(Ping)
    assert table.model_of(pong) is info_of(Pong)
    params = query_params(table, Pong, device="d", at=ge(3))
    assert params["FilterExpression"]  # the type attribute's filter keeps Ping items out
    assert params["ExpressionAttributeValues"][":sk"] == {"N": "3"}


# -- keys ------------------------------------------------------------------------------------------


def test_number_keys_are_stored_and_read_as_numbers() -> None:
    info = info_of(Score)
    item = info.encode(Score("u1", 100, "Galaxy", 7))
    assert item == {
        "UserId": {"S": "u1"},
        "Score": {"N": "100"},
        "GameTitle": {"S": "Galaxy"},
        "TopScore": {"N": "7"},
    }
    assert info.key_of(Score("u1", 100, "Galaxy", 7)) == {
        "UserId": {"S": "u1"},
        "Score": {"N": "100"},
    }
    assert info.decode(item) == Score("u1", 100, "Galaxy", 7)
    assert info.matches(item)
    assert not info.matches({**item, "Score": {"S": "100"}})


def test_binary_keys_are_bytes_and_read_from_bytes_or_base64() -> None:
    info = info_of(Chunk)
    digest = b"\xff\x00#%"
    item = info.encode(Chunk(digest, decimal.Decimal(3), b"x"))
    assert item == {"data": {"B": b"x"}, "pk": {"B": digest}, "sk": {"N": "3"}}
    assert info.decode(item) == Chunk(digest, decimal.Decimal(3), b"x")
    # dynorm's fast path reads binaries as base64 text
    text = {"pk": {"B": base64.b64encode(digest).decode()}, "sk": {"N": "3"}, "data": {"B": "eA=="}}
    assert info.decode(text) == Chunk(digest, decimal.Decimal(3), b"x")
    assert key_text(item["pk"]) == key_text(text["pk"]) == base64.b64encode(digest).decode()


@pytest.mark.parametrize("value", ["100", 100.0, True, None, decimal.Decimal("NaN")])
def test_a_number_key_looked_up_by_another_type_is_refused(value: object) -> None:
    with pytest.raises(
        KeyTemplateError, match="number key attribute 'Score': give a finite int or Decimal"
    ):
        info_of(Score).primary_key({"user_id": "u1", "score": value})


def test_create_table_takes_the_tables_key_types() -> None:
    params = create_table_request(scores, "GameScores").params
    assert params["AttributeDefinitions"] == [
        {"AttributeName": "UserId", "AttributeType": "S"},
        {"AttributeName": "Score", "AttributeType": "N"},
        {"AttributeName": "GameTitle", "AttributeType": "S"},
        {"AttributeName": "TopScore", "AttributeType": "N"},
    ]
    same = create_table_request(scores, "GameScores", {"Score": "N", "GameTitle": "S"})
    assert same.params == params
    with pytest.raises(DefinitionError, match=r"key_types\['Score'\] is 'S', but Table"):
        create_table_request(scores, "GameScores", {"Score": "S"})


# -- ranges ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("marker", "condition", "values"),
    [
        (between(99, 1000), "#sk BETWEEN :sk AND :sk2", [{"N": "99"}, {"N": "1000"}]),
        (gt(99), "#sk > :sk", [{"N": "99"}]),
        (ge(decimal.Decimal("99.5")), "#sk >= :sk", [{"N": "99.5"}]),
        (lt(100), "#sk < :sk", [{"N": "100"}]),
        (le(-3), "#sk <= :sk", [{"N": "-3"}]),
        (100, "#sk = :sk", [{"N": "100"}]),
    ],
)
def test_ranges_on_a_number_key_send_numbers(marker: object, condition: str, values: Any) -> None:
    params = query_params(scores, Score, user_id="u1", score=marker)
    assert params["KeyConditionExpression"] == f"#pk = :pk AND {condition}"
    sent = params["ExpressionAttributeValues"]
    assert [sent[k] for k in (":sk", ":sk2") if k in sent] == values
    on_index = query_params(scores, Score, "ByGame", game="Galaxy", top=marker)
    assert on_index["ExpressionAttributeValues"] == {**sent, ":pk": {"S": "Galaxy"}}


def test_number_bounds_are_checked_by_value_not_as_text() -> None:
    query_params(scores, Score, user_id="u1", score=between(99, 1000))  # "99" > "1000" as text
    with pytest.raises(ExpressionError, match="low bound is greater than the high one"):
        query_params(scores, Score, user_id="u1", score=between(1000, 99))


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (begins_with("1"), "compares by value, not as text, so it has no prefix"),
        (gt("99"), r"score is a number \(N\) sort key: give a number .*not '99' \(str\)"),
        (between(1, True), r"not True \(bool\)"),  # noqa: FBT003 - the bad value
        (gt(float("nan")), "finite"),
    ],
)
def test_bad_conditions_on_a_number_key(marker: object, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        query_params(scores, Score, user_id="u1", score=marker)


def test_a_binary_partition_key_given_as_text_is_refused() -> None:
    with pytest.raises(
        KeyTemplateError, match=r"Chunk\.digest fills the binary key attribute 'pk'"
    ):
        query_params(blobs, Chunk, digest="AAE=")


def test_ranges_on_a_binary_partition_and_number_sort_key() -> None:
    params = query_params(blobs, Chunk, digest=b"\x00\xff", part=between(1, 10))
    assert params["ExpressionAttributeValues"] == {
        ":pk": {"B": b"\x00\xff"},
        ":sk": {"N": "1"},
        ":sk2": {"N": "10"},
    }


def test_number_ranges_contain_by_value() -> None:
    span = KeyRange("between", ("99", "1000"), "N")
    assert span.contains("100")
    assert not span.contains("1001")
    assert KeyRange("gt", ("99",), "N").contains("1E+3")
    assert not KeyRange("eq", ("1.50",), "N").contains("2")
    assert KeyRange("eq", ("1.50",), "N").contains("1.5")
    assert not span.contains("not a number")


# -- cursors ---------------------------------------------------------------------------------------


def test_cursors_carry_number_and_binary_keys_signed_and_checked() -> None:
    codec = CursorCodec(b"k" * 32)
    read = explain(blobs).query_read(info_of(Chunk), None, {"digest": b"\x01", "part": gt(1)}).read
    key: Item = {"pk": {"B": b"\x01"}, "sk": {"N": "5"}}
    assert codec.decode(codec.encode(key, read), read) == key
    # the fast path reads binaries as base64 text; the cursor is the same
    fast: Item = {"pk": {"B": "AQ=="}, "sk": {"N": "5"}}
    assert codec.decode(codec.encode(fast, read), read) == key

    plain = CursorCodec()

    def edited(key: dict[str, Any]) -> str:
        body = {"v": 2, "q": read.fingerprint(), "k": key}
        return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")

    assert plain.decode(edited({"pk": {"B": "AQ=="}, "sk": {"N": "5"}}), read) == key
    with pytest.raises(CursorError, match=r"holds sk as S, but that key attribute is a number"):
        plain.decode(edited({"pk": {"B": "AQ=="}, "sk": {"S": "5"}}), read)
    with pytest.raises(CursorError, match="outside its query"):
        plain.decode(edited({"pk": {"B": "AQ=="}, "sk": {"N": "1"}}), read)
    with pytest.raises(CursorError, match="another partition"):
        plain.decode(edited({"pk": {"B": "Ag=="}, "sk": {"N": "5"}}), read)


# -- stream records -------------------------------------------------------------------------------


def test_stream_records_with_number_and_binary_keys_decode() -> None:
    keys = {"pk": {"B": base64.b64encode(b"\x01").decode()}, "sk": {"N": "3"}}  # as Lambda gets
    image = {**keys, "data": {"B": "eA=="}}
    body = {"SequenceNumber": "1", "StreamViewType": "NEW_IMAGE", "Keys": keys, "NewImage": image}
    change = blobs.decode_record({"eventName": "INSERT", "dynamodb": body})
    assert change.model is Chunk
    assert change.new == Chunk(b"\x01", decimal.Decimal(3), b"x")


# -- round trips ----------------------------------------------------------------------------------


@given(
    score=st.integers(min_value=-(10**37), max_value=10**37),
    digest=st.binary(min_size=1, max_size=64),
    part=st.decimals(allow_nan=False, allow_infinity=False, places=3, max_value=10**9),
)
def test_number_and_binary_keys_round_trip(
    score: int, digest: bytes, part: decimal.Decimal
) -> None:
    info = info_of(Score)
    obj = Score("u", score, "g", score)
    assert info.decode(info.encode(obj)) == obj
    chunk = info_of(Chunk)
    item = chunk.encode(Chunk(digest, part, b""))
    as_fast_path = {**item, "pk": {"B": base64.b64encode(digest).decode()}}
    for stored in (item, as_fast_path):
        back = chunk.decode(stored)
        assert (back.digest, back.part) == (digest, part)


@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_number_ranges_order_as_numbers(low: int, high: int, key: int) -> None:
    span = KeyRange("between", (str(low), str(high)), "N")
    assert span.contains(str(key)) == (low <= key <= high)
    assert KeyRange("gt", (str(low),), "N").contains(str(key)) == (key > low)


def test_an_int_field_on_a_string_key_attribute_is_told_about_key_types() -> None:
    table = Table("t", pk="pk", sk="Score")
    with pytest.raises(
        DefinitionError,
        match=r"M\.score is stored as the key attribute 'Score', a string \(S\) key attribute; "
        r"declare it as str \(it is <class 'int'>\), or store it under another name, or make it "
        r"a number key: Table\(\.\.\., key_types=\{'Score': 'N'\}\)",
    ):

        @table.model(pk="{user}", sk="{score}")
        class M:
            user: str
            score: int = dynorm.field(name="Score")
