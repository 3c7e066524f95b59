"""wire.retry: classifying failures, write tokens, and settling writes whose reply was lost."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from dynorm import (
    Attr,
    CancellationReason,
    ConditionFailedError,
    DatabaseError,
    DynormError,
    Table,
    ThrottledError,
    TransactionCanceledError,
    TransportError,
    ValidationError,
)
from dynorm.core.codec.converter import Item
from dynorm.core.expressions import Condition
from dynorm.core.requests import Request
from dynorm.mapping.embedded import EmbeddedCodec, add_request, remove_request
from dynorm.mapping.model import info_of
from dynorm.mapping.writes import UpdateOps, plan_delete, plan_put, plan_put_keeping, plan_update
from dynorm.wire.retry import (
    TOKEN_ATTRIBUTE,
    RetryQuota,
    applied,
    asking_for_old,
    classify,
    needs_token,
    prepare,
    same_value,
    settled_response,
    verification_read,
)

app = Table("app", pk="pk", sk="sk")


@app.model(pk="PAGE#{page_id}", sk="PAGE#{page_id}")
@attrs.define
class Page:
    page_id: str
    title: str = ""
    hits: int = 0
    tags: set[str] = attrs.field(factory=set)
    lines: list[str] = attrs.field(factory=list)
    note: str | None = None


@attrs.define
class Line:
    text: str


INFO = info_of(Page)
PAGE = Page("p1", "Home", 3, {"a"}, ["x", "y"], "hi")
KEY = {"pk": {"S": "PAGE#p1"}, "sk": {"S": "PAGE#p1"}}


def update(*, condition: Condition | None = None, **changes: Any) -> Request:
    ops = UpdateOps(**changes)
    return plan_update(INFO, INFO.values_of(PAGE), "app", ops, condition=condition)


# -- classify ------------------------------------------------------------------------------------


def cancelled(*codes: str) -> TransactionCanceledError:
    reasons = [CancellationReason(i, code, "") for i, code in enumerate(codes)]
    return TransactionCanceledError("cancelled", reasons=reasons)


@pytest.mark.parametrize(
    ("error", "retry", "outcome"),
    [
        (TransportError("refused", request_sent=False), True, "not_applied"),
        (TransportError("reset", request_sent=True), True, "unknown"),
        (ThrottledError("", code="ProvisionedThroughputExceededException"), True, "not_applied"),
        (ThrottledError("slow", code="ThrottlingException"), True, "not_applied"),
        (DatabaseError("busy", code="TransactionInProgressException"), True, "not_applied"),
        (DatabaseError("oops", code="InternalServerError"), True, "unknown"),
        (DatabaseError("oops", code="ServiceUnavailable"), True, "unknown"),
        (DatabaseError("oops", code="502"), True, "unknown"),
        (DatabaseError("bad", code="404"), False, "not_applied"),
        (ConditionFailedError("no", code="ConditionalCheckFailedException"), False, "not_applied"),
        (ValidationError("bad", code="ValidationException"), False, "not_applied"),
        (DynormError("no credentials"), False, "not_applied"),
        (cancelled("TransactionConflict", "None"), True, "not_applied"),
        (cancelled("TransactionConflict", "ConditionalCheckFailed"), False, "not_applied"),
        (cancelled("None", "ConditionalCheckFailed"), False, "not_applied"),
        (cancelled(), False, "not_applied"),
    ],
)
def test_classify(error: DynormError, retry: bool, outcome: str) -> None:
    verdict = classify(error)
    assert (verdict.retry, verdict.outcome) == (retry, outcome)
    assert (verdict.cost > 0) == retry


def test_a_lost_connection_costs_more_quota_than_throttling() -> None:
    lost = classify(TransportError("reset")).cost
    assert lost > classify(ThrottledError("slow", code="ThrottlingException")).cost


# -- RetryQuota ----------------------------------------------------------------------------------


def test_quota_is_spent_by_retries_and_refilled_by_successes_up_to_capacity() -> None:
    quota = RetryQuota(12)
    assert quota.acquire(5)
    assert quota.acquire(5)
    assert not quota.acquire(5)
    assert quota.available == 2
    quota.release(5)
    assert quota.available == 7
    quota.release(100)
    assert quota.available == 12


# -- which requests are marked how ---------------------------------------------------------------


def test_plain_writes_are_safe_to_repeat() -> None:
    assert plan_put(INFO, PAGE, "app").retry == "safe"
    assert plan_delete(INFO, KEY, "app").retry == "safe"
    assert update(set={"title": "New"}, remove=["note"]).retry == "safe"
    assert update(set={"title": "New", "lines": ["z"]}).retry == "safe"
    assert Request("GetItem", {}).retry == "safe"


def test_conditional_writes_are_verified() -> None:
    assert plan_put(INFO, PAGE, "app", overwrite=False).retry == "verify"
    assert plan_put(INFO, PAGE, "app", condition=Attr("hits") == 3).retry == "verify"
    assert plan_delete(INFO, KEY, "app", condition=Attr("hits") == 3).retry == "verify"
    assert update(set={"title": "New"}, condition=Attr("hits") == 3).retry == "verify"
    keeping = plan_put_keeping(INFO, PAGE, "app", embedded={}, overwrite=False)
    assert keeping.retry == "verify"
    assert plan_put_keeping(INFO, PAGE, "app", embedded={}).retry == "safe"


def test_writes_that_change_the_item_again_when_repeated_carry_a_token() -> None:
    assert update(add={"hits": 1}).retry == "token"
    assert update(add={"tags": {"b"}}, condition=Attr("hits") == 3).retry == "token"
    assert update(set={"lines[0]": "z"}).retry == "token"
    assert update(remove=["lines[1]"]).retry == "token"


def test_embedded_list_appends_carry_a_token_and_map_members_do_not() -> None:
    as_list = EmbeddedCodec.build("Page.lines", "lines", Line, None, None)
    as_map = EmbeddedCodec.build("Page.lines", "lines", Line, "text", 5)
    line = Line("a")
    assert add_request(as_list, "app", KEY, "pk", line, replacing=False).retry == "token"
    assert add_request(as_map, "app", KEY, "pk", line, replacing=False).retry == "safe"
    assert remove_request(as_list, "app", KEY, line, 0).retry == "token"
    assert remove_request(as_map, "app", KEY, line, 0).retry == "safe"


def test_the_retry_mark_is_not_part_of_a_requests_equality() -> None:
    # db.explain compares requests by what is sent; the mark only steers the transport.
    assert Request("PutItem", {"a": 1}, retry="verify") == Request("PutItem", {"a": 1})


# -- prepare: the token ----------------------------------------------------------------------------


def test_prepare_leaves_safe_and_verified_requests_alone() -> None:
    plain = update(set={"title": "New"})
    assert prepare(plain, "tok") is plain
    assert not needs_token(plain)
    put = plan_put(INFO, PAGE, "app", overwrite=False)
    assert prepare(put, "tok") is put


def test_prepare_adds_the_token_to_the_set_clause_and_guards_it() -> None:
    request = update(add={"hits": 1}, set={"title": "New"})
    assert needs_token(request)
    prepared = prepare(request, "tok")
    params = prepared.params
    assert params["UpdateExpression"].startswith("SET #dynormwt = :dynormwt, ")
    assert params["UpdateExpression"].count("SET") == 1
    assert params["ExpressionAttributeNames"]["#dynormwt"] == TOKEN_ATTRIBUTE
    assert params["ExpressionAttributeValues"][":dynormwt"] == {"S": "tok"}
    original = request.params["ConditionExpression"]
    assert params["ConditionExpression"] == (
        f"({original}) AND (attribute_not_exists(#dynormwt) OR #dynormwt <> :dynormwt)"
    )
    # Everything else is as planned, and the plan itself is untouched.
    assert (
        params["ExpressionAttributeNames"].items()
        >= request.params["ExpressionAttributeNames"].items()
    )
    assert "#dynormwt" not in request.params["ExpressionAttributeNames"]
    assert prepared.retry == "token"


def test_prepare_opens_a_set_clause_when_there_is_none() -> None:
    request = update(add={"hits": 1})
    expression = prepare(request, "tok").params["UpdateExpression"]
    assert expression == f"SET #dynormwt = :dynormwt {request.params['UpdateExpression']}"


def test_prepare_guards_a_request_without_a_condition() -> None:
    request = Request(
        "UpdateItem",
        {"TableName": "t", "Key": KEY, "UpdateExpression": "ADD #n0 :v0"},
        retry="token",
    )
    params = prepare(request, "tok").params
    assert params["ConditionExpression"] == (
        "(attribute_not_exists(#dynormwt) OR #dynormwt <> :dynormwt)"
    )
    assert params["ExpressionAttributeNames"] == {"#dynormwt": TOKEN_ATTRIBUTE}


def test_transactions_get_a_client_request_token_once() -> None:
    request = Request("TransactWriteItems", {"TransactItems": []})
    assert needs_token(request)
    assert prepare(request, "tok").params["ClientRequestToken"] == "tok"
    given = Request("TransactWriteItems", {"TransactItems": [], "ClientRequestToken": "mine"})
    assert not needs_token(given)
    assert prepare(given, "tok").params["ClientRequestToken"] == "mine"


def test_asking_for_old_only_touches_single_item_writes() -> None:
    put = plan_put(INFO, PAGE, "app", overwrite=False)
    assert asking_for_old(put).params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert "ReturnValuesOnConditionCheckFailure" not in put.params
    get = Request("GetItem", {"Key": KEY})
    assert asking_for_old(get) is get


def test_verification_read_is_a_consistent_get_of_the_written_key() -> None:
    put = plan_put(INFO, PAGE, "app")
    assert verification_read(put, ("pk", "sk")) == Request(
        "GetItem", {"TableName": "app", "Key": KEY, "ConsistentRead": True}
    )
    assert verification_read(update(add={"hits": 1}), ("pk", "sk")).params["Key"] == KEY


# -- same_value ----------------------------------------------------------------------------------


def test_same_value_follows_how_dynamodb_stores_values() -> None:
    assert same_value({"N": "1.50"}, {"N": "1.5"})
    assert same_value({"SS": ["a", "b"]}, {"SS": ["b", "a"]})
    assert same_value({"NS": ["1", "2.0"]}, {"NS": ["2", "1"]})
    assert same_value({"B": b"\x01\xff"}, {"B": "Af8="})
    assert same_value({"BS": [b"\x01"]}, {"BS": ["AQ=="]})
    assert same_value({"M": {"a": {"L": [{"N": "1"}]}}}, {"M": {"a": {"L": [{"N": "1.0"}]}}})
    assert not same_value({"N": "1"}, {"S": "1"})
    assert not same_value({"L": [{"N": "1"}, {"N": "2"}]}, {"L": [{"N": "2"}, {"N": "1"}]})
    assert not same_value({"M": {"a": {"S": "x"}}}, {"M": {"a": {"S": "x"}, "b": {"S": "y"}}})


# -- applied: is the stored item what the lost write would have left? ----------------------------


def stored_page(**changes: Any) -> Item:
    item = INFO.encode(PAGE)
    for name, value in changes.items():
        if value is None:
            item.pop(name, None)
        else:
            item[name] = value
    return item


def test_a_put_is_applied_when_the_stored_item_is_exactly_ours() -> None:
    put = plan_put(INFO, PAGE, "app", overwrite=False)
    assert applied(put, stored_page(hits={"N": "3.0"}), "")
    assert not applied(put, stored_page(hits={"N": "4"}), "")
    assert not applied(put, stored_page(extra={"S": "x"}), "")
    assert not applied(put, stored_page(note=None), "")
    assert not applied(put, None, "")


def test_a_delete_is_applied_when_the_item_is_gone() -> None:
    delete = plan_delete(INFO, KEY, "app", condition=Attr("hits") == 3)
    assert applied(delete, None, "")
    assert not applied(delete, stored_page(), "")


def test_an_update_is_applied_when_set_values_are_there_and_removed_ones_are_not() -> None:
    request = update(set={"title": "New", "hits": 4}, remove=["note"], condition=Attr("hits") == 3)
    assert applied(request, stored_page(title={"S": "New"}, hits={"N": "4"}, note=None), "")
    assert not applied(request, stored_page(title={"S": "New"}, hits={"N": "4"}), "")
    assert not applied(request, stored_page(title={"S": "Old"}, hits={"N": "4"}, note=None), "")
    assert not applied(request, stored_page(hits={"N": "4"}, title=None, note=None), "")
    assert not applied(request, None, "")


def test_an_update_reaching_into_maps_and_lists_is_compared_there() -> None:
    request = Request(
        "UpdateItem",
        {
            "TableName": "app",
            "Key": KEY,
            "UpdateExpression": "SET #n0.#n1 = :v0, #n2[1] = :v1 REMOVE #n0.#n3",
            "ExpressionAttributeNames": {"#n0": "m", "#n1": "a", "#n2": "l", "#n3": "gone"},
            "ExpressionAttributeValues": {":v0": {"S": "x"}, ":v1": {"N": "2"}},
        },
        retry="verify",
    )
    item: Item = {"m": {"M": {"a": {"S": "x"}}}, "l": {"L": [{"N": "1"}, {"N": "2"}]}}
    assert applied(request, item, "")
    assert not applied(request, {**item, "l": {"L": [{"N": "2"}]}}, "")
    assert not applied(request, {**item, "m": {"M": {"a": {"S": "x"}, "gone": {"S": "y"}}}}, "")
    assert not applied(request, {"l": item["l"]}, "")


def test_if_not_exists_only_asks_that_the_attribute_exists() -> None:
    keeping = plan_put_keeping(
        INFO, PAGE, "app", embedded={"kids": None}, empty={"kids": {"L": []}}, overwrite=False
    )
    assert "if_not_exists" in keeping.params["UpdateExpression"]
    item = stored_page()
    assert applied(keeping, {**item, "kids": {"L": [{"S": "someone's"}]}}, "")
    assert not applied(keeping, item, "")


def test_an_update_with_add_or_arithmetic_is_never_shown_applied_by_values() -> None:
    add = Request(
        "UpdateItem",
        {
            "UpdateExpression": "SET #n0 = :v0 ADD #n1 :v1",
            "ExpressionAttributeNames": {"#n0": "title", "#n1": "hits"},
            "ExpressionAttributeValues": {":v0": {"S": "Home"}, ":v1": {"N": "1"}},
        },
        retry="verify",
    )
    assert not applied(add, stored_page(), "")
    arithmetic = Request(
        "UpdateItem",
        {
            "UpdateExpression": "SET #n0 = #n0 + :v0",
            "ExpressionAttributeNames": {"#n0": "hits"},
            "ExpressionAttributeValues": {":v0": {"N": "0"}},
        },
        retry="verify",
    )
    assert not applied(arithmetic, stored_page(), "")


def test_a_token_write_is_applied_when_our_token_is_stored() -> None:
    request = prepare(update(add={"hits": 1}), "ours")
    assert applied(request, stored_page(**{TOKEN_ATTRIBUTE: {"S": "ours"}}), "ours")
    assert not applied(request, stored_page(**{TOKEN_ATTRIBUTE: {"S": "theirs"}}), "ours")
    assert not applied(request, stored_page(), "ours")
    assert not applied(request, None, "ours")


def test_other_operations_are_never_shown_applied() -> None:
    assert not applied(Request("TransactWriteItems", {}, retry="verify"), {}, "")


def test_settled_response_gives_back_what_all_new_would_have() -> None:
    item = stored_page()
    assert settled_response(update(add={"hits": 1}), item) == {"Attributes": item}
    assert settled_response(plan_put(INFO, PAGE, "app"), item) == {}
    assert settled_response(update(add={"hits": 1}), None) == {}
