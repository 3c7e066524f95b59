"""DynamoDB's JSON protocol without botocore: bodies, error replies, checksums, clock offsets."""

from __future__ import annotations

import base64
import datetime
import decimal
import zlib

import orjson
import pytest

from dynorm import Request
from dynorm.core.errors import DatabaseError, DynormError, TransportError
from dynorm.core.events import TRANSPORT, outcome_of, targets_of
from dynorm.wire.protocol import (
    clock_offset,
    crc32_matches,
    encode_body,
    is_clock_skew,
    parse_error,
    target_of,
    with_datetimes,
)
from dynorm.wire.retry import classify


def test_a_body_is_the_params_as_json() -> None:
    params = {
        "TableName": "app",
        "Key": {"pk": {"S": "ORG#ä"}, "sk": {"N": "1.50"}},
        "ConsistentRead": True,
        "Limit": 10,
    }
    assert orjson.loads(encode_body(params)) == params


def test_binaries_are_base64_wherever_they_are() -> None:
    raw = bytes(range(256))
    params = {
        "Item": {
            "b": {"B": raw},
            "bs": {"BS": [b"\x00", bytearray(b"\x01"), memoryview(b"\x02")]},
            "m": {"M": {"deep": {"L": [{"B": b"\xff\xfe"}]}}},
        }
    }
    body = orjson.loads(encode_body(params))
    item = body["Item"]
    assert item["b"] == {"B": base64.b64encode(raw).decode()}
    assert item["bs"] == {"BS": ["AA==", "AQ==", "Ag=="]}
    assert item["m"] == {"M": {"deep": {"L": [{"B": "//4="}]}}}


def test_sets_are_lists_and_decimals_text() -> None:
    params = {
        "a": {"SS": {"x"}},
        "b": {"NS": frozenset({"1"})},
        "c": {"BS": {b"\x01"}},
        "d": {"N": decimal.Decimal("1.10")},
        "e": ("t", "u"),
    }
    assert orjson.loads(encode_body(params)) == {
        "a": {"SS": ["x"]},
        "b": {"NS": ["1"]},
        "c": {"BS": ["AQ=="]},
        "d": {"N": "1.10"},
        "e": ["t", "u"],
    }


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(TypeError, match="not JSON serializable: object"):
        encode_body({"x": object()})


def test_target() -> None:
    assert target_of("GetItem") == "DynamoDB_20120810.GetItem"


def test_an_error_reply_names_its_code_and_message() -> None:
    body = orjson.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": "The conditional request failed",
            "Item": {"pk": {"S": "a"}},
        }
    )
    error = parse_error(400, body)
    assert error.code == "ConditionalCheckFailedException"
    assert error.message == "The conditional request failed"
    assert error.body["Item"] == {"pk": {"S": "a"}}


def test_message_with_a_capital_m_and_a_bare_type() -> None:
    body = orjson.dumps({"__type": "ValidationException", "Message": "bad"})
    error = parse_error(400, body)
    assert (error.code, error.message) == ("ValidationException", "bad")


def test_transaction_reasons_are_kept() -> None:
    reasons = [{"Code": "None"}, {"Code": "ConditionalCheckFailed", "Item": {"a": {"S": "1"}}}]
    body = orjson.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled",
            "CancellationReasons": reasons,
        }
    )
    error = parse_error(400, body)
    assert error.code == "TransactionCanceledException"
    assert error.body["CancellationReasons"] == reasons


def test_a_bare_server_error_is_named_by_its_status() -> None:
    error = parse_error(503, b"<html>Service Unavailable</html>")
    assert error.code == "503"
    assert "Service Unavailable" in error.message
    assert parse_error(500, b"").code == "500"


def test_the_error_type_header_names_an_error_without_a_body() -> None:
    header = "ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.service/"
    assert parse_error(400, b"", header).code == "ThrottlingException"


def test_crc32() -> None:
    body = b'{"Item":{}}'
    assert crc32_matches(body, str(zlib.crc32(body)))
    assert not crc32_matches(body, str(zlib.crc32(body) ^ 1))
    assert not crc32_matches(body, "not a number")
    assert crc32_matches(body, None)


@pytest.mark.parametrize(
    ("code", "message", "skew"),
    [
        ("InvalidSignatureException", "Signature expired: 20240517T134507Z is now earlier", True),
        ("InvalidSignatureException", "Signature not yet current: 20240517T134507Z", True),
        ("InvalidSignatureException", "The request signature we calculated does not match", False),
        ("RequestTimeTooSkewed", "", True),
        ("RequestExpired", "", True),
        ("ThrottlingException", "Signature expired", False),
    ],
)
def test_clock_skew_errors(code: str, message: str, skew: bool) -> None:
    assert is_clock_skew(code, message) is skew


def test_a_skew_error_is_retried_as_not_applied() -> None:
    error = DatabaseError(
        "GetItem: Signature expired: 20240517T134507Z", code="InvalidSignatureException"
    )
    verdict = classify(error)
    assert (verdict.retry, verdict.outcome) == (True, "not_applied")
    wrong_key = DatabaseError("GetItem: signature does not match", code="InvalidSignatureException")
    assert not classify(wrong_key).retry


def test_clock_offset_from_the_date_header() -> None:
    now = 1715953507.0  # Fri, 17 May 2024 13:45:07 GMT
    assert clock_offset("Fri, 17 May 2024 14:45:07 GMT", now) == 3600
    assert clock_offset("Fri, 17 May 2024 13:44:07 -0000", now) == -60
    assert clock_offset(None, now) is None
    assert clock_offset("yesterday", now) is None


def test_targets_of_each_request_kind() -> None:
    assert targets_of(Request("Query", {"TableName": "t", "IndexName": "GSI1"})) == (("t",), "GSI1")
    assert targets_of(Request("GetItem", {"TableName": "t"})) == (("t",), None)
    batch = Request("BatchGetItem", {"RequestItems": {"a": {}, "b": {}}})
    assert targets_of(batch) == (("a", "b"), None)
    actions = [
        {"Put": {"TableName": "a"}},
        {"ConditionCheck": {"TableName": "b"}},
        {"Delete": {"TableName": "a"}},
    ]
    assert targets_of(Request("TransactWriteItems", {"TransactItems": actions})) == (
        ("a", "b"),
        None,
    )
    assert targets_of(Request("ListTables", {})) == ((), None)


def test_outcomes() -> None:
    assert outcome_of(DatabaseError("x", code="ThrottlingException")) == "ThrottlingException"
    assert outcome_of(TransportError("reset")) == TRANSPORT
    assert outcome_of(DynormError("no credentials")) == TRANSPORT


def test_table_replies_carry_their_timestamps_as_datetimes_as_botocore_parses_them() -> None:
    reply = orjson.loads(
        b'{"Table": {"TableName": "t", "CreationDateTime": 1700000000.5, "ItemCount": 3,'
        b' "ProvisionedThroughput": {"LastIncreaseDateTime": 0, "ReadCapacityUnits": 1},'
        b' "Replicas": [{"ReplicaInaccessibleDateTime": 1700000001}],'
        b' "DeletionProtectionEnabled": true}}'
    )
    table = with_datetimes(reply)["Table"]
    utc = datetime.UTC
    assert table["CreationDateTime"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 500000, utc)
    assert table["ProvisionedThroughput"] == {
        "LastIncreaseDateTime": datetime.datetime(1970, 1, 1, tzinfo=utc),
        "ReadCapacityUnits": 1,
    }
    assert table["Replicas"][0]["ReplicaInaccessibleDateTime"].timestamp() == 1700000001
    assert table["ItemCount"] == 3  # numbers that are no timestamps stay numbers
    assert table["DeletionProtectionEnabled"] is True
