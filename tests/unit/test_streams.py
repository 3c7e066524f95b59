"""DynamoDB Streams records decode into model instances, purely (no server)."""

from __future__ import annotations

import base64
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynorm import Change, CodecError, HasMany, Partition, Table

table = Table("streams", pk="PK", sk="SK")


@table.model(pk="ORDER#{order_id}", sk="CUSTOMER#{customer_id}")
@attrs.define
class Order:
    order_id: str
    customer_id: str
    total: int = 0
    lines = HasMany["Line"]("Line", via=Partition())


@table.model(pk="ORDER#{order_id}", sk="LINE#{n:03d}")
@attrs.define
class Line:
    order_id: str
    n: int
    sku: str
    blob: bytes = b""


ORDER_KEYS = {"PK": {"S": "ORDER#1"}, "SK": {"S": "CUSTOMER#c9"}}


def order_image(total: int) -> dict[str, Any]:
    return {
        **ORDER_KEYS,
        "order_id": {"S": "1"},
        "customer_id": {"S": "c9"},
        "total": {"N": str(total)},
    }


def record(event: str, **body: Any) -> dict[str, Any]:
    """A record as a Lambda handler receives it (the fields dynorm reads, and a few more)."""
    return {
        "eventID": "1",
        "eventName": event,
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": {"SequenceNumber": "100", "StreamViewType": "NEW_AND_OLD_IMAGES", **body},
    }


def test_a_modify_gives_both_images_as_instances() -> None:
    change = table.decode_record(
        record("MODIFY", Keys=ORDER_KEYS, OldImage=order_image(3), NewImage=order_image(4))
    )
    assert change == Change("MODIFY", Order, ORDER_KEYS, Order("1", "c9", 3), Order("1", "c9", 4))
    assert change.of(Order) is change
    assert change.of(Line) is None


def test_insert_has_no_old_and_remove_no_new() -> None:
    inserted = table.decode_record(record("INSERT", Keys=ORDER_KEYS, NewImage=order_image(1)))
    assert (inserted.event, inserted.old, inserted.new) == ("INSERT", None, Order("1", "c9", 1))
    removed = table.decode_record(record("REMOVE", Keys=ORDER_KEYS, OldImage=order_image(1)))
    assert (removed.event, removed.old, removed.new) == ("REMOVE", Order("1", "c9", 1), None)
    assert not removed.expired


def test_a_keys_only_stream_tells_the_model_by_its_keys() -> None:
    keys = {"PK": {"S": "ORDER#1"}, "SK": {"S": "LINE#007"}}
    change = table.decode_record(record("REMOVE", Keys=keys))
    assert (change.model, change.old, change.new, change.keys) == (Line, None, None, keys)


def test_fields_stored_only_in_keys_and_base64_binary_are_read() -> None:
    # Lambda's JSON carries binary values as base64 text; Line.order_id and n live in the keys.
    image = {
        "PK": {"S": "ORDER#1"},
        "SK": {"S": "LINE#002"},
        "sku": {"S": "A-1"},
        "blob": {"B": base64.b64encode(b"\x00\xff").decode()},
    }
    change = table.decode_record(record("INSERT", Keys={}, NewImage=image))
    assert change.new == Line("1", 2, "A-1", b"\x00\xff")


def test_an_item_of_no_model_gives_a_change_without_one() -> None:
    keys = {"PK": {"S": "SOMETHING#1"}, "SK": {"S": "ELSE"}}
    change = table.decode_record(record("INSERT", Keys=keys, NewImage={**keys, "x": {"N": "1"}}))
    assert change == Change("INSERT", None, keys)


def test_a_ttl_deletion_is_marked_expired() -> None:
    rec = record("REMOVE", Keys=ORDER_KEYS, OldImage=order_image(1))
    rec["userIdentity"] = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
    assert table.decode_record(rec).expired


@pytest.mark.parametrize(
    "bad",
    [
        {"Records": [record("INSERT", Keys=ORDER_KEYS)]},  # the whole event, not one record
        {"eventName": "UPSERT", "dynamodb": {"Keys": ORDER_KEYS}},
        {"eventName": "INSERT"},
    ],
)
def test_something_else_than_a_record_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(CodecError, match="Records"):
        table.decode_record(bad)


def test_a_malformed_image_of_a_model_says_which() -> None:
    image = {**ORDER_KEYS, "total": {"S": "many"}}
    with pytest.raises(CodecError, match="Order"):
        table.decode_record(record("INSERT", Keys=ORDER_KEYS, NewImage=image))


def test_model_of_decides_by_keys_per_index() -> None:
    info = table.model_of(order_image(1))
    assert info is not None
    assert info.cls is Order
    assert table.model_of({"PK": {"S": "ORDER#1"}}) is None  # no sort key: no model fits


# -- hostile records: anything malformed is a CodecError saying where ----------------------------


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (None, "got None"),
        ([record("INSERT", Keys=ORDER_KEYS)], "got \\[\\{"),
        ("INSERT", "got 'INSERT'"),
        (record("INSERT", Keys=ORDER_KEYS, NewImage=[order_image(1)]), r"dynamodb\.NewImage is"),
        (record("MODIFY", Keys=[1], OldImage=order_image(1)), r"dynamodb\.Keys is"),
        (record("INSERT", Keys=ORDER_KEYS, NewImage="x"), r"dynamodb\.NewImage is"),
        (record("INSERT", Keys={"PK": "ORDER#1"}), r"dynamodb\.Keys\.PK is no attribute value"),
        (record("INSERT", Keys={"PK": {"S": 1}}), r"dynamodb\.Keys\.PK: 1 is no S value"),
        (record("INSERT", Keys={"PK": {"X": "1"}}), r"dynamodb\.Keys\.PK: 'X' with '1'"),
        (record("INSERT", Keys={"PK": {"S": "a", "N": "1"}}), r"Keys\.PK is no attribute value"),
        (
            record("INSERT", Keys=ORDER_KEYS, NewImage={**order_image(1), "total": {"N": "many"}}),
            r"dynamodb\.NewImage\.total: 'many' is not a number",
        ),
        (
            record("INSERT", Keys=ORDER_KEYS, NewImage={**order_image(1), "x": {"M": {"y": []}}}),
            r"dynamodb\.NewImage\.x\.y is no attribute value",
        ),
        (
            record(
                "INSERT", Keys=ORDER_KEYS, NewImage={**order_image(1), "x": {"L": [{"NS": [1]}]}}
            ),
            r"dynamodb\.NewImage\.x\[0\]\[0\]: 1 is no N value",
        ),
    ],
)
def test_a_malformed_record_is_a_codec_error_saying_where(bad: Any, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        table.decode_record(bad)


@pytest.mark.parametrize("text", ["!!", "AA=A", "äÄ==", "YQ", " YQ=="])
def test_a_binary_value_that_is_not_base64_is_refused_naming_the_attribute(text: str) -> None:
    image = {
        "PK": {"S": "ORDER#1"},
        "SK": {"S": "LINE#002"},
        "sku": {"S": "A"},
        "blob": {"B": text},
    }
    with pytest.raises(CodecError, match=r"NewImage\.blob: .* is not base64 text"):
        table.decode_record(record("INSERT", Keys={}, NewImage=image))
    sets = {**image, "blob": {"S": "x"}, "other": {"BS": ["YQ==", text]}}
    with pytest.raises(CodecError, match=r"NewImage\.other\[1\]: .* is not base64 text"):
        table.decode_record(record("INSERT", Keys={}, NewImage=sets))


def test_a_wrong_type_for_a_field_names_the_model_and_the_field() -> None:
    image = {"PK": {"S": "ORDER#1"}, "SK": {"S": "LINE#002"}, "sku": {"L": []}}
    with pytest.raises(
        CodecError, match=r"Line: item PK='ORDER#1', SK='LINE#002': attribute 'sku' \(field 'sku'"
    ):
        table.decode_record(record("INSERT", Keys={}, NewImage=image))


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4) | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)
tags = st.sampled_from(["S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS", "X"])
attribute_values = st.recursive(
    st.builds(lambda tag, value: {tag: value}, tags, json_like),
    lambda inner: (
        st.builds(lambda v: {"M": v}, st.dictionaries(st.text(max_size=3), inner, max_size=3))
        | st.builds(lambda v: {"L": v}, st.lists(inner, max_size=3))
    ),
    max_leaves=8,
)
images = st.one_of(
    json_like,
    st.dictionaries(
        st.sampled_from(["PK", "SK", "sku", "n", "blob", "total", "x"]), attribute_values
    ),
    st.builds(
        lambda extra: {**order_image(1), **extra},
        st.dictionaries(st.sampled_from(["total", "order_id", "x"]), attribute_values),
    ),
)


@settings(max_examples=300, deadline=None)
@given(
    whole=json_like,
    event=st.sampled_from(["INSERT", "MODIFY", "REMOVE", "X"]) | json_like,
    keys=images,
    new=images,
    old=images,
    identity=json_like,
)
def test_any_record_is_a_change_or_a_codec_error(  # noqa: PLR0917 - hypothesis gives them
    whole: Any, event: Any, keys: Any, new: Any, old: Any, identity: Any
) -> None:
    body = {"Keys": keys, "NewImage": new, "OldImage": old}
    for rec in (whole, {"eventName": event, "dynamodb": body, "userIdentity": identity}):
        try:
            change = table.decode_record(rec)
        except CodecError:
            continue
        assert isinstance(change, Change)
