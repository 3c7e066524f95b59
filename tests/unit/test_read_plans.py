"""Read requests planned without a server: TransactGetItems, query loads, projected indexes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from dynorm import TRANSACT_MAX, DefinitionError, KeyTemplateError, LimitExceededError, Request
from dynorm.core.requests import KeyRange, transact_get
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import info_of
from dynorm.mapping.readplan import QueryLoadReads, normalize_options, plan_query_load
from dynorm.mapping.writeplan import WritePlanner
from tests.seed_models import Org, User, app


def explain() -> Explain:
    return Explain(app, "app", WritePlanner(app, "app"))


# -- TransactGetItems ----------------------------------------------------------------------------


def test_transact_get_builds_one_get_per_item() -> None:
    key = {"pk": {"S": "ORG#A"}, "sk": {"S": "METADATA#A"}}
    assert transact_get("app", [key]) == Request(
        "TransactGetItems", {"TransactItems": [{"Get": {"TableName": "app", "Key": key}}]}
    )


def test_transact_get_plan_keeps_order_and_sends_each_item_once() -> None:
    bill = (User, {"org_name": "A", "username": "BILL"})
    plan = explain().transact_get_reads([(Org, {"name": "A"}), bill, (Org, {"name": "A"})])
    assert [info.name for info in plan.infos] == ["Org", "User", "Org"]
    assert plan.keys[0] == plan.keys[2] == {"pk": {"S": "ORG#A"}, "sk": {"S": "METADATA#A"}}
    sent = [e["Get"]["Key"] for e in plan.request.params["TransactItems"]]
    assert sent == [plan.keys[0], plan.keys[1]]


def test_transact_get_limits_are_checked_before_sending() -> None:
    many = [(Org, {"name": str(i)}) for i in range(TRANSACT_MAX + 1)]
    with pytest.raises(LimitExceededError, match=r"at most 100 .*db.get_many"):
        explain().transact_get(*many)
    assert len(explain().transact_get(*many[:-1])[0].params["TransactItems"]) == TRANSACT_MAX
    with pytest.raises(LimitExceededError, match="at least one"):
        explain().transact_get()


def test_transact_get_refuses_bad_pairs_and_partial_keys() -> None:
    with pytest.raises(KeyTemplateError, match="username"):
        explain().transact_get((User, {"org_name": "A"}))
    with pytest.raises(DefinitionError, match=r"\(Model, \{key field: value\}\) pairs"):
        explain().transact_get_reads([Org])  # type: ignore[list-item]


# -- db.query(..., load=[...]) --------------------------------------------------------------------


def query_plan(model: type[Any], load: list[Any], **components: object) -> QueryLoadReads:
    info = info_of(model)
    read = explain().query_read(info, None, components).read
    return plan_query_load(info, read, components, normalize_options(info, load))


def test_children_of_the_queried_partition_widen_the_range() -> None:
    plan = query_plan(Org, [Org.users], name="A")
    assert plan.read.range == KeyRange("between", ("METADATA#A", "USER$"))
    assert plan.parents == KeyRange("eq", ("METADATA#A",))  # parents are tested against it
    assert [o.relationship for o in plan.shared] == [Org.users]
    assert plan.separate == ()


def test_other_collections_and_parents_load_separately() -> None:
    plan = query_plan(User, [User.tickets, User.org], org_name="A")
    assert plan.shared == ()
    assert plan.read.range == KeyRange("begins_with", ("USER#",))
    assert plan.parents is None
    assert plan.costs() == {
        "User.tickets": "one Query per parent of a page, run concurrently",
        "User.org": "one BatchGetItem per 100 distinct parents of a page",
    }


def test_a_reverse_query_does_not_share_children_read_forwards() -> None:
    info = info_of(Org)
    read = msgspec.structs.replace(
        explain().query_read(info, None, {"name": "A"}).read, forward=False
    )
    plan = plan_query_load(info, read, {"name": "A"}, normalize_options(info, [Org.users]))
    assert plan.shared == ()
    assert plan.read == read
