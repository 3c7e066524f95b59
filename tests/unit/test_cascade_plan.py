"""The cascading delete's plan (``mapping/cascade.py``), fed the replies of a fake table.

The fake keeps items in memory and answers each step as the Database would (GetItem, the
Queries of the tree, the marking UpdateItem, the BatchWriteItems and the root's DeleteItem), so
the plan's order and its refusals are checked without a server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    CascadeReport,
    ConditionFailedError,
    DynormError,
    FromRead,
    HasMany,
    Index,
    LimitExceededError,
    Partition,
)
from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.expressions import Attr
from dynorm.core.steps import Fetch, Plan, ReadAll, ReadEach, Send, WriteBatch
from dynorm.mapping.cascade import DEFAULT_MAX_ITEMS, MARK
from dynorm.mapping.explain import Explain
from dynorm.mapping.table import Table
from dynorm.mapping.writeplan import WritePlanner
from tests.cascade_models import (
    Buyer,
    Favourite,
    Group,
    Listing,
    Person,
    Review,
    Seller,
    market,
    social,
)


class FakeTable:
    """Items in memory; each step answered as the Database answers it, and logged."""

    def __init__(self, table: Table, objs: list[object]) -> None:
        self.table = table
        self.items: dict[Any, Item] = {}
        self.log: list[str] = []
        #: The keys each BatchWriteItem step deleted, in order.
        self.batches: list[list[Item]] = []
        #: An error to answer the first request of this operation with.
        self.fail: dict[str, DynormError] = {}
        for obj in objs:
            item = table.info(type(obj)).encode(obj)
            self.items[self.ident(item)] = item

    def ident(self, item: Item) -> Any:
        return key_id({a: item[a] for a in self.table.primary_attributes})

    def answer(self, step: Any) -> Any:
        if isinstance(step, Send):
            operation = step.request.operation
            self.log.append(operation)
            if operation in self.fail:
                return self.fail.pop(operation)
            params = step.request.params
            ident = key_id(params["Key"])
            if operation == "GetItem":
                found = self.items.get(ident)
                return {"Item": found} if found is not None else {}
            if operation == "UpdateItem":
                assert params["UpdateExpression"] == "SET #n0 = :v0"
                self.items[ident] = {**self.items[ident], MARK: {"BOOL": True}}
                return {}
            if operation == "DeleteItem":
                stored = self.items.get(ident)
                marked = MARK in params.get("ExpressionAttributeNames", {}).values()
                if marked and (stored is None or MARK not in stored):
                    return ConditionFailedError("mark gone", code="ConditionalCheckFailed")
                self.items.pop(ident, None)
                return {}
            raise AssertionError(operation)
        if isinstance(step, ReadAll):
            self.log.append("Query")
            return self.query(step.request.params)
        if isinstance(step, ReadEach):
            self.log.extend("Query" for _ in step.requests)
            return [self.query(r.params) for r in step.requests]
        if isinstance(step, WriteBatch):
            self.log.append("BatchWriteItem")
            keys = [w["DeleteRequest"]["Key"] for w in step.writes]
            self.batches.append(keys)
            for k in keys:
                self.items.pop(key_id(k), None)
            return None
        if isinstance(step, Fetch):
            self.log.append("BatchGetItem")
            return {key_id(k): self.items[key_id(k)] for k in step.keys if key_id(k) in self.items}
        raise AssertionError(step)

    def query(self, params: Mapping[str, Any]) -> list[Item]:
        names, values = params["ExpressionAttributeNames"], params["ExpressionAttributeValues"]
        pk, sk = names["#pk"], names["#sk"]
        prefix = values[":sk"]["S"]
        return sorted(
            (
                item
                for item in self.items.values()
                if item.get(pk) == values[":pk"]
                and item.get(sk, {}).get("S", "").startswith(prefix)
            ),
            key=lambda item: item[sk]["S"],
        )

    def models(self) -> list[object]:
        """Every stored item, decoded by the model it matches."""
        out = []
        for item in self.items.values():
            for info in self.table.models.values():
                if info.matches(item):
                    out.append(info.decode(item))
                    break
        return out


def drive(plan: Plan[Any], answer: Callable[[Any], Any]) -> Any:
    """Run a plan as Database.run does: a DynormError an answer returns is thrown into it."""
    result: Any = None
    error: DynormError | None = None
    while True:
        try:
            step = plan.send(result) if error is None else plan.throw(error)
        except StopIteration as stop:
            return stop.value
        out = answer(step)
        result, error = (None, out) if isinstance(out, DynormError) else (out, None)


def marketplace() -> list[object]:
    """Two sellers' trees; buyers whose favourites point at listings of both."""
    objs: list[object] = [Seller("s1"), Seller("s2"), Buyer("b1"), Buyer("b2")]
    for seller, listings in (("s1", ["l1", "l2"]), ("s2", ["l3"])):
        for listing in listings:
            objs.append(Listing(seller, listing))
            objs += [Review(listing, f"{listing}-r{i}") for i in range(2)]
    objs += [Favourite("b1", "l1"), Favourite("b2", "l1"), Favourite("b1", "l3")]
    return objs


def test_a_tree_is_read_level_by_level_then_deleted_leaves_first() -> None:
    fake = FakeTable(market, marketplace())
    report = drive(WritePlanner(market, "market").delete(Seller("s1"), cascade=True), fake.answer)
    assert fake.log == [
        "GetItem",
        "Query",  # the seller's listings
        "Query",  # l1's reviews
        "Query",  # l1's favourites (GSI1)
        "Query",  # l2's reviews
        "Query",  # l2's favourites
        "UpdateItem",  # the seller's conditions, checked before anything is deleted
        "BatchWriteItem",  # reviews and favourites
        "BatchWriteItem",  # listings
        "DeleteItem",  # the seller, last
    ]
    deepest, listings = fake.batches
    assert sorted(k["sk"]["S"] for k in listings) == ["LISTING#l1", "LISTING#l2"]
    assert len(deepest) == 6  # four reviews, two favourites of l1
    assert sorted(map(repr, fake.models())) == sorted(
        map(
            repr,
            [
                Seller("s2"),
                Buyer("b1"),
                Buyer("b2"),
                Listing("s2", "l3"),
                Review("l3", "l3-r0"),
                Review("l3", "l3-r1"),
                Favourite("b1", "l3"),
            ],
        )
    )
    assert report == CascadeReport({Seller: 1, Listing: 2, Review: 4, Favourite: 2})
    assert report.total == 9
    assert report[Buyer] == 0
    assert str(report) == "deleted 9 items (1 Seller, 2 Listing, 4 Review, 2 Favourite)"


def test_each_level_is_read_in_one_step_of_concurrent_queries() -> None:
    fake = FakeTable(market, marketplace())
    reads: list[int] = []

    def answer(step: Any) -> Any:
        if isinstance(step, ReadEach):
            reads.append(len(step.requests))
        return fake.answer(step)

    drive(WritePlanner(market, "market").delete(Seller("s1"), cascade=True), answer)
    # the seller's listings; then both listings' reviews and favourites at once
    assert reads == [1, 4]


def test_more_items_than_max_items_is_refused_before_anything_is_written() -> None:
    fake = FakeTable(market, marketplace())
    before = dict(fake.items)
    plan = WritePlanner(market, "market").delete(Seller("s1"), cascade=True, max_items=8)
    with pytest.raises(LimitExceededError, match=r"max_items=8 .*max_items=None") as caught:
        drive(plan, fake.answer)
    assert "nothing was deleted" in str(caught.value)
    assert set(fake.log) <= {"GetItem", "Query"}
    assert fake.items == before
    # Nine items (the root included) fit in max_items=9.
    plan = WritePlanner(market, "market").delete(Seller("s1"), cascade=True, max_items=9)
    assert drive(plan, fake.answer).total == 9


def test_max_items_must_be_positive() -> None:
    fake = FakeTable(market, marketplace())
    plan = WritePlanner(market, "market").delete(Seller("s1"), cascade=True, max_items=0)
    with pytest.raises(ValueError, match="positive"):
        drive(plan, fake.answer)
    assert fake.log == []
    assert DEFAULT_MAX_ITEMS == 1000


def test_a_refused_condition_on_the_root_deletes_nothing() -> None:
    fake = FakeTable(market, marketplace())
    before = dict(fake.items)
    fake.fail["UpdateItem"] = ConditionFailedError("no", code="ConditionalCheckFailed")
    plan = WritePlanner(market, "market").delete(
        Seller("s1"), cascade=True, condition=Attr("name") == "someone"
    )
    with pytest.raises(ConditionFailedError, match="nothing was deleted"):
        drive(plan, fake.answer)
    assert "BatchWriteItem" not in fake.log
    assert "DeleteItem" not in fake.log
    assert fake.items == before


def test_the_condition_is_sent_with_the_mark() -> None:
    requests = Explain(market, "market", WritePlanner(market, "market")).delete(
        Seller("s1"), cascade=True, condition=Attr("name") == "Ann"
    )
    (mark,) = [r for r in requests if r.operation == "UpdateItem"]
    assert mark.params["ConditionExpression"] == "attribute_exists(#n1) AND (#n2 = :v1)"
    assert mark.params["ExpressionAttributeNames"] == {
        "#n0": MARK,
        "#n1": "pk",
        "#n2": "name",
    }
    assert mark.params["ExpressionAttributeValues"] == {
        ":v0": {"BOOL": True},
        ":v1": {"S": "Ann"},
    }
    assert requests[-1].params["ConditionExpression"] == "attribute_exists(#n0)"


def test_a_root_replaced_during_the_cascade_is_kept_and_said_so() -> None:
    fake = FakeTable(market, marketplace())
    answer = fake.answer

    def replacing(step: Any) -> Any:
        out = answer(step)
        if isinstance(step, WriteBatch) and len(fake.batches) == 2:
            # Someone puts the seller again, between the listings' batch and its delete.
            item = market.info(Seller).encode(Seller("s1", "new"))
            fake.items[fake.ident(item)] = item
        return out

    with pytest.raises(ConditionFailedError, match="8 items under it are deleted"):
        drive(WritePlanner(market, "market").delete(Seller("s1"), cascade=True), replacing)
    assert Seller("s1", "new") in fake.models()


def test_a_root_not_stored_sends_its_delete_alone() -> None:
    fake = FakeTable(market, marketplace())
    report = drive(
        WritePlanner(market, "market").delete(Seller("nobody"), cascade=True), fake.answer
    )
    assert fake.log == ["GetItem", "DeleteItem"]
    assert report == CascadeReport()
    assert report.total == 0


def test_a_cycle_ends_each_item_read_and_deleted_once() -> None:
    people = [Person(n, "g") for n in ("ann", "bob", "cy")]
    fake = FakeTable(social, [*people, Group("ann", "g"), Person("dee", "other")])
    report = drive(WritePlanner(social, "social").delete(people[0], cascade=True), fake.answer)
    # ann's friends (ann herself, bob, cy) and her group; the group's members are known already.
    assert report == CascadeReport({Person: 3, Group: 1})
    deleted = [key_id(k) for batch in fake.batches for k in batch]
    assert len(deleted) == len(set(deleted)) == 3
    assert fake.models() == [Person("dee", "other")]


def test_without_cascade_a_delete_is_one_request_and_returns_none() -> None:
    fake = FakeTable(market, marketplace())
    assert drive(WritePlanner(market, "market").delete(Seller("s1")), fake.answer) is None
    assert fake.log == ["DeleteItem"]


def test_items_an_index_holds_in_part_are_read_whole_when_their_children_are_needed() -> None:
    partial = Table(
        "partial",
        pk="pk",
        sk="sk",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK", projection="KEYS_ONLY")],
    )

    @partial.model(pk="P#{p}", sk="P#{p}", GSI1=("P#{p}", "P#{p}"))
    @attrs.define
    class Parent:
        p: str
        kids = HasMany["Kid"]("Kid", via=Index("GSI1"))

    @partial.model(pk="K#{k}", sk="K#{k}", GSI1=("P#{p}", "K#{k}"))
    @attrs.define
    class Kid:
        k: str
        p: str
        note: str = ""
        toys = HasMany["Toy"]("Toy", via=Partition())

    @partial.model(pk="K#{k}", sk="TOY#{t}")
    @attrs.define
    class Toy:
        k: str
        t: str

    fake = FakeTable(partial, [Parent("a"), Kid("k1", "a", "n"), Toy("k1", "t1")])
    answer = fake.answer

    def keys_only(step: Any) -> Any:
        out = answer(step)
        if isinstance(step, ReadEach):
            return [
                [{a: i[a] for a in ("pk", "sk", "GSI1PK", "GSI1SK")} for i in items]
                if request.params.get("IndexName") == "GSI1"
                else items
                for request, items in zip(step.requests, out, strict=True)
            ]
        return out

    report = drive(WritePlanner(partial, "partial").delete(Parent("a"), cascade=True), keys_only)
    assert fake.log[:4] == ["GetItem", "Query", "BatchGetItem", "Query"]
    assert report == CascadeReport({Parent: 1, Kid: 1, Toy: 1})
    assert fake.items == {}


def test_explain_shows_each_level_once_per_relationship_then_the_deletes() -> None:
    requests = Explain(market, "market", WritePlanner(market, "market")).delete(
        Seller("s1"), cascade=True
    )
    assert [r.operation for r in requests] == [
        "GetItem",
        "Query",
        "Query",
        "Query",
        "UpdateItem",
        "BatchWriteItem",
        "BatchWriteItem",
        "DeleteItem",
    ]
    _, listings, reviews, favourites, *_ = requests
    assert listings.params["ExpressionAttributeValues"][":pk"] == {"S": "SELLER#s1"}
    placeholder = FromRead("'LISTING#<Listing.listing_id>' for each Listing read")
    assert reviews.params["ExpressionAttributeValues"] == {
        ":pk": placeholder,
        ":sk": {"S": "REVIEW#"},
    }
    assert favourites.params["IndexName"] == "GSI1"
    assert favourites.params["ExpressionAttributeValues"][":pk"] == placeholder
    deepest = requests[5].params["RequestItems"]["market"]
    assert [d["DeleteRequest"]["Key"] for d in deepest] == [
        FromRead("the keys of the Review items read"),
        FromRead("the keys of the Favourite items read"),
    ]


def test_explain_of_a_cycle_ends() -> None:
    requests = Explain(social, "social", WritePlanner(social, "social")).delete(
        Person("ann", "g"), cascade=True
    )
    # Person.friends and Person.group_of, then Group.members: each shown once.
    assert [r.operation for r in requests].count("Query") == 3
