"""DynamoDB Streams records decode into model instances, purely (no server)."""

from __future__ import annotations

import base64
from typing import Any

import attrs
import pytest

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
