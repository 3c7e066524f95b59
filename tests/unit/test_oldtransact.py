"""The placing of old copies' removals (``was=``) among a transaction's actions."""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import ExpressionError, LimitExceededError, Table
from dynorm.core.errors import CancellationReason, TransactionCanceledError
from dynorm.mapping.oldtransact import TransactActions

table = Table("t", pk="pk", sk="sk")
PARENT = {"pk": {"S": "O#1"}, "sk": {"S": "#O#1"}}


def removal(member: str) -> dict[str, Any]:
    return {"Update": {
        "TableName": "t", "Key": PARENT, "UpdateExpression": "REMOVE #n0.#n1",
        "ConditionExpression": "attribute_exists(#n0.#n1)",
        "ExpressionAttributeNames": {"#n0": "lines", "#n1": member},
    }}  # fmt: skip


def plain_delete(n: int) -> dict[str, Any]:
    return {"Delete": {"TableName": "t", "Key": {"pk": {"S": f"P#{n}"}, "sk": {"S": "X"}}}}


def put(n: int) -> dict[str, Any]:
    return {"Put": {"TableName": "t", "Item": {"pk": {"S": f"I#{n}"}, "sk": {"S": "X"}}}}


def test_two_removals_of_one_item_become_one_update() -> None:
    plan = TransactActions({"t": table})
    plan.removal(removal("a"), movable=False)
    plan.removal(removal("b"), movable=False)
    ((kind, params),) = plan.items[0].items()
    assert (kind, len(plan.items)) == ("Update", 1)
    names = params["ExpressionAttributeNames"]
    assert params["UpdateExpression"] == "REMOVE #n0.#n1, #n0_1.#n1_1"
    assert (names["#n1"], names["#n1_1"]) == ("a", "b")
    assert params["ConditionExpression"] == (
        "(attribute_exists(#n0.#n1)) AND (attribute_exists(#n0_1.#n1_1))"
    )


def test_a_removal_joins_the_parents_update_and_its_clauses() -> None:
    plan = TransactActions({"t": table})
    plan.user({"Update": {
        "TableName": "t", "Key": PARENT, "UpdateExpression": "SET #n0 = :v0 REMOVE #n1",
        "ConditionExpression": "#n0 = :v1",
        "ExpressionAttributeNames": {"#n0": "title", "#n1": "x"},
        "ExpressionAttributeValues": {":v0": {"S": "new"}, ":v1": {"S": "old"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }})  # fmt: skip
    plan.removal(removal("a"), movable=False)
    ((kind, params),) = plan.items[0].items()
    assert kind == "Update"
    assert params["UpdateExpression"] == "SET #n0 = :v0 REMOVE #n1, #n0_1.#n1_1"
    assert params["ConditionExpression"] == "(#n0 = :v1) AND (attribute_exists(#n0_1.#n1_1))"
    assert params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    refused = TransactionCanceledError(
        "x", reasons=[CancellationReason(0, "ConditionalCheckFailed", "")]
    )
    assert plan.only_old(refused)  # the removal is carried there: planned again


def test_a_check_of_the_parent_becomes_its_update() -> None:
    plan = TransactActions({"t": table})
    plan.user({"ConditionCheck": {
        "TableName": "t", "Key": PARENT, "ConditionExpression": "attribute_exists(#n0)",
        "ExpressionAttributeNames": {"#n0": "pk"},
    }})  # fmt: skip
    plan.removal(removal("a"), movable=False)
    ((kind, params),) = plan.items[0].items()
    assert kind == "Update"
    assert params["UpdateExpression"] == "REMOVE #n0_1.#n1_1"


def test_a_deleted_parent_needs_no_removal_and_a_put_one_is_refused() -> None:
    plan = TransactActions({"t": table})
    plan.user({"Delete": {"TableName": "t", "Key": PARENT}})
    plan.removal(removal("a"), movable=False)
    assert plan.items == [{"Delete": {"TableName": "t", "Key": PARENT}}]

    plan = TransactActions({"t": table})
    plan.user({"Put": {"TableName": "t", "Item": {**PARENT, "title": {"S": "x"}}}})
    with pytest.raises(ExpressionError, match="separate call"):
        plan.removal(removal("a"), movable=False)


def test_old_items_past_the_limit_go_after_the_commit_when_movable() -> None:
    plan = TransactActions({"t": table})
    for n in range(60):
        plan.user(put(n))
    for n in range(60):
        plan.removal(plain_delete(n), movable=True)
    items, later = plan.finish()
    assert (len(items), len(later)) == (60, 60)
    assert later[0] == ("t", {"pk": {"S": "P#0"}, "sk": {"S": "X"}})

    plan = TransactActions({"t": table})
    for n in range(60):
        plan.user(put(n))
    for n in range(60):
        plan.removal(plain_delete(n), movable=False)
    with pytest.raises(LimitExceededError, match="120 actions"):
        plan.finish()


def test_under_the_limit_every_removal_stays_in_the_transaction() -> None:
    plan = TransactActions({"t": table})
    plan.user(put(1))
    plan.removal(plain_delete(1), movable=True)
    items, later = plan.finish()
    assert (len(items), later) == (2, [])
