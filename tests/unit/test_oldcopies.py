"""The writes a child's write plans while its relationship declares ``was=``, pair by pair.

Each plan is driven with canned answers; the steps it sends are compared, request by request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from dynorm import GSI, Denormalized, Embedded, HasMany, Index, Partition, Table
from dynorm.core.chunks import key_id
from dynorm.core.errors import CancellationReason, DynormError, TransactionCanceledError
from dynorm.core.steps import Fetch, Plan, Send, WriteBatch
from dynorm.mapping.writeplan import WritePlanner
from dynorm.mapping.writes import UpdateOps

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]


def s(text: str) -> dict[str, str]:
    return {"S": text}


# -- the pairs ------------------------------------------------------------------------------------

to_index = Table("to-index", pk="pk", sk="sk", indexes=INDEXES)


@to_index.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
class IParent:
    pid: str
    kids = HasMany["IKid"](via=Index("GSI1"), was=Partition())


@to_index.model(pk="K#{pid}#{name}", sk="K#{pid}#{name}", GSI1=("P#{pid}", "KID#{name}"))
class IKid:
    pid: str
    name: str
    n: int = 0


@to_index.model(pk="X#{x}", sk="X#{x}")
class Plain:  # no was= concerns it
    x: str


to_partition = Table("to-partition", pk="pk", sk="sk", indexes=INDEXES)


@to_partition.model(pk="P#{pid}", sk="#P#{pid}")
class PParent:
    pid: str
    kids = HasMany["PKid"](via=Partition(), was=Index("GSI1"))


@to_partition.model(pk="P#{pid}", sk="KID#{name}")
class PKid:
    pid: str
    name: str


sharded = Table("to-shards", pk="pk", sk="sk")


@sharded.model(pk="P#{pid}", sk="#P#{pid}")
class SParent:
    pid: str
    kids = HasMany["SKid"](via=Partition(shards=2), was=Partition())


@sharded.model(pk="P#{pid}#{shard}", sk="KID#{name}")
class SKid:
    pid: str
    name: str


unsharded = Table("from-shards", pk="pk", sk="sk")


@unsharded.model(pk="P#{pid}", sk="#P#{pid}")
class UParent:
    pid: str
    kids = HasMany["UKid"](via=Partition(), was=Partition(shards=4))


@unsharded.model(pk="P#{pid}", sk="KID#{name}")
class UKid:
    pid: str
    name: str


unembedded = Table("unembedded", pk="pk", sk="sk")


@unembedded.model(pk="O#{oid}", sk="#O#{oid}")
class Order:
    oid: str
    lines = HasMany["Line"](via=Partition(), was=Embedded(key="name"))


@unembedded.model(pk="O#{oid}", sk="LINE#{name}")
class Line:
    oid: str
    name: str


embedded = Table("embedded", pk="pk", sk="sk")


@embedded.model(pk="O#{oid}", sk="#O#{oid}")
class MOrder:
    oid: str
    lines = HasMany["MLine"](via=Embedded(key="name"), was=Partition())


@embedded.model(pk="O#{oid}", sk="LINE#{name}")
class MLine:
    oid: str
    name: str


denormalized = Table("denormalized", pk="pk", sk="sk", indexes=INDEXES)


@denormalized.model(pk="A#{aid}", sk="#A#{aid}", GSI1=("A#{aid}", "#A#{aid}"))
class Author:
    aid: str
    born: str = ""
    books = HasMany["Book"](
        via=Denormalized(copy={"born": "author_born"}, where=Index("GSI1")), was=Partition()
    )


@denormalized.model(pk="B#{aid}#{title}", sk="B#{aid}#{title}", GSI1=("A#{aid}", "B#{title}"))
class Book:
    aid: str
    title: str
    author_born: str = ""


for t in (to_index, to_partition, sharded, unsharded, unembedded, embedded, denormalized):
    t.check()


# -- driving --------------------------------------------------------------------------------------


@attrs.define
class Fake:
    """Answers steps from canned replies by operation, and logs what was sent."""

    replies: dict[str, list[Any]] = attrs.field(factory=dict)
    sent: list[Any] = attrs.field(factory=list)
    #: what a Fetch (consistent BatchGetItem) finds
    stored: list[dict[str, Any]] = attrs.field(factory=list)

    def answer(self, step: Any) -> Any:
        self.sent.append(step)
        if isinstance(step, Send):
            queue = self.replies.get(step.request.operation)
            return queue.pop(0) if queue else {}
        if isinstance(step, WriteBatch):
            return None
        if isinstance(step, Fetch):
            return {key_id({"pk": i["pk"], "sk": i["sk"]}): i for i in self.stored}
        return {}

    def operations(self) -> list[str]:
        return [
            st.request.operation if isinstance(st, Send) else type(st).__name__ for st in self.sent
        ]

    def actions(self, at: int) -> list[tuple[str, dict[str, Any]]]:
        """(kind, key) of each action of the transaction sent at step ``at``."""
        step = self.sent[at]
        found = []
        for action in step.request.params["TransactItems"]:
            ((kind, params),) = action.items()
            key = params.get("Key") or {
                a: params["Item"][a] for a in ("pk", "sk")
            }  # a Put names its item
            found.append((kind, key))
        return found


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


def key(pk: str, sk: str) -> dict[str, Any]:
    return {"pk": s(pk), "sk": s(sk)}


# -- collections ----------------------------------------------------------------------------------


def test_into_an_index_the_old_item_is_the_templates_on_the_table_key() -> None:
    fake = Fake()
    drive(WritePlanner(to_index, "t").put(IKid("a", "x")), fake.answer)
    assert fake.operations() == ["TransactWriteItems"]
    assert fake.actions(0) == [("Put", key("K#a#x", "K#a#x")), ("Delete", key("P#a", "KID#x"))]

    fake = Fake()
    drive(WritePlanner(to_index, "t").delete(IKid("a", "x")), fake.answer)
    assert fake.actions(0) == [("Delete", key("K#a#x", "K#a#x")), ("Delete", key("P#a", "KID#x"))]


def test_a_model_no_was_concerns_plans_what_it_did() -> None:
    fake = Fake()
    drive(WritePlanner(to_index, "t").put(Plain("1")), fake.answer)
    drive(WritePlanner(to_index, "t").delete(Plain("1")), fake.answer)
    drive(WritePlanner(to_index, "t").put(IParent("a")), fake.answer)
    assert fake.operations() == ["PutItem", "DeleteItem", "PutItem"]


def test_out_of_an_index_the_old_item_is_found_by_a_query() -> None:
    old = {"pk": s("OLD#a#x"), "sk": s("OLD#a#x"), "GSI1PK": s("P#a"), "GSI1SK": s("KID#x")}
    fake = Fake({"Query": [{"Items": [old]}]})
    drive(WritePlanner(to_partition, "t").put(PKid("a", "x")), fake.answer)
    assert fake.operations() == ["Query", "TransactWriteItems"]
    query = fake.sent[0].request.params
    assert query["IndexName"] == "GSI1"
    assert sorted(query["ExpressionAttributeValues"].values(), key=str) == [s("KID#x"), s("P#a")]
    assert fake.actions(1) == [("Put", key("P#a", "KID#x")), ("Delete", key("OLD#a#x", "OLD#a#x"))]
    # Deleted only while it is still that child's old copy.
    (_, delete) = fake.sent[1].request.params["TransactItems"]
    assert "ConditionExpression" in delete["Delete"]

    fake = Fake({"Query": [{"Items": []}]})
    drive(WritePlanner(to_partition, "t").put(PKid("a", "x")), fake.answer)
    assert fake.operations() == ["Query", "PutItem"]


def test_into_and_out_of_shards_the_old_partition_key() -> None:
    fake = Fake()
    drive(WritePlanner(sharded, "t").put(SKid("a", "x")), fake.answer)
    assert fake.actions(0)[1] == ("Delete", key("P#a", "KID#x"))

    fake = Fake()
    drive(WritePlanner(unsharded, "t").put(UKid("a", "x")), fake.answer)
    ((_, new), (_, old)) = fake.actions(0)
    assert new == key("P#a", "KID#x")
    # Back from shards: the {shard} segment is taken to be last (as the reads take it).
    assert old["pk"]["S"].startswith("P#a#")
    assert old["pk"]["S"][len("P#a#") :] in {"0", "1", "2", "3"}


def test_denormalized_children_move_like_any_collection() -> None:
    fake = Fake(stored=[{**key("A#a", "#A#a"), "aid": s("a"), "born": s("1")}])
    drive(WritePlanner(denormalized, "t").put(Book("a", "t")), fake.answer)
    # The parent read for the copy, the put and the old item's deletion together, the parent
    # read again (the copy's check, as without was=).
    assert fake.operations() == ["Fetch", "TransactWriteItems", "Fetch"]
    assert fake.actions(1)[1] == ("Delete", key("A#a", "B#t"))


def test_an_update_is_conditioned_on_the_new_item_and_moves_an_old_one_first() -> None:
    refused = TransactionCanceledError(
        "cancelled",
        reasons=[
            CancellationReason(0, "ConditionalCheckFailed", "no"),
            CancellationReason(1, "None", ""),
        ],
    )
    old = {**key("P#a", "KID#x"), "pid": s("a"), "name": s("x"), "n": {"N": "1"}, "more": s("y")}
    fake = Fake(
        {
            "TransactWriteItems": [refused, {}],
            "GetItem": [{"Item": old}],
            "UpdateItem": [{"Attributes": {}}],
        }
    )
    ops = UpdateOps(add={"n": 1})
    drive(WritePlanner(to_index, "t").update(IKid("a", "x"), ops), fake.answer)
    assert fake.operations() == [
        "TransactWriteItems",  # the update and the old item's deletion: refused, no new item
        "GetItem",  # the old one
        "TransactWriteItems",  # moved: put as stored with its new keys, deleted while as read
        "UpdateItem",  # the update again
    ]
    (update, _) = fake.sent[0].request.params["TransactItems"]
    assert "attribute_exists(#dynorm_exists)" in update["Update"]["ConditionExpression"]
    # The refusal carries the stored item: none, so no new item (nothing read to tell).
    assert update["Update"]["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    (put, delete) = fake.sent[2].request.params["TransactItems"]
    assert put["Put"]["Item"]["more"] == s("y")
    assert put["Put"]["Item"]["GSI1SK"] == s("KID#x")
    assert "attribute_not_exists" in put["Put"]["ConditionExpression"]
    assert delete["Delete"]["Key"] == key("P#a", "KID#x")


# -- Embedded -------------------------------------------------------------------------------------


def test_out_of_a_map_the_entry_is_read_then_removed_with_the_put() -> None:
    there = {"Item": {"lines": {"M": {"x": {"M": {"name": s("x")}}}}}}
    fake = Fake({"GetItem": [there]})
    drive(WritePlanner(unembedded, "t").put(Line("a", "x")), fake.answer)
    assert fake.operations() == ["GetItem", "TransactWriteItems"]
    (_, removal) = fake.sent[1].request.params["TransactItems"]
    assert removal["Update"]["Key"] == key("O#a", "#O#a")
    assert removal["Update"]["UpdateExpression"].startswith("REMOVE ")

    fake = Fake({"GetItem": [{"Item": {}}]})
    drive(WritePlanner(unembedded, "t").put(Line("a", "x")), fake.answer)
    assert fake.operations() == ["GetItem", "PutItem"]


def test_into_a_map_add_and_remove_delete_the_old_item_with_the_parent_update() -> None:
    planner = WritePlanner(embedded, "t")
    for plan in (
        planner.add(MOrder("a"), MOrder.lines, MLine("a", "x")),
        planner.remove(MOrder("a"), MOrder.lines, MLine("a", "x")),
    ):
        fake = Fake()
        drive(plan, fake.answer)
        assert fake.operations() == ["TransactWriteItems"]
        assert fake.actions(0) == [("Update", key("O#a", "#O#a")), ("Delete", key("O#a", "LINE#x"))]


def test_a_removal_refused_because_the_entry_went_meanwhile_is_planned_again() -> None:
    there = {"Item": {"lines": {"M": {"x": {"M": {"name": s("x")}}}}}}
    gone = TransactionCanceledError(
        "cancelled",
        reasons=[
            CancellationReason(0, "None", ""),
            CancellationReason(1, "ConditionalCheckFailed", "no"),
        ],
    )
    # The migration moved x between the read of the entry and the transaction.
    fake = Fake({"GetItem": [there, {"Item": {}}], "TransactWriteItems": [gone]})
    drive(WritePlanner(unembedded, "t").put(Line("a", "x")), fake.answer)
    assert fake.operations() == ["GetItem", "TransactWriteItems", "GetItem", "PutItem"]


def test_an_update_whose_move_another_writer_made_first_goes_on() -> None:
    refused = TransactionCanceledError(
        "cancelled",
        reasons=[
            CancellationReason(0, "ConditionalCheckFailed", "no"),
            CancellationReason(1, "None", ""),
        ],
    )
    old = {**key("P#a", "KID#x"), "pid": s("a"), "name": s("x"), "n": {"N": "1"}}
    fake = Fake(
        {
            # the update (no new item yet); the move (the migration moved it first)
            "TransactWriteItems": [refused, refused],
            "GetItem": [{}, {"Item": old}],
            "UpdateItem": [{"Attributes": {}}],
        }
    )
    drive(WritePlanner(to_index, "t").update(IKid("a", "x"), UpdateOps(add={"n": 1})), fake.answer)
    assert fake.operations()[-1] == "UpdateItem"
