"""The migration kinds' page planning, pure: what a page writes, and what it refuses."""

from __future__ import annotations

from typing import Any

from dynorm import GSI, Embedded, HasMany, Index, Partition, Table
from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.expressions import ExpressionBuilder
from dynorm.core.limits import MAX_ITEM_BYTES
from dynorm.core.unchanged import MAX_EXPRESSION, Unchanged
from dynorm.tools.migrate_kinds import Embed, Move, PagePlan, Unit

table = Table("kinds", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="U#{user}", sk="#U#{user}", GSI1=("U#{user}", "#U#{user}"))
class User:
    user: str
    tickets = HasMany["Ticket"](via=Index("GSI1"))


@table.model(pk="T#{tid}", sk="T#{tid}", GSI1=("U#{user}", "T#{tid}"))
class Ticket:
    user: str
    tid: str
    body: str = ""


embedded = Table("kinds-embed", pk="pk", sk="sk")


@embedded.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class Order:
    order_id: str
    lines = HasMany["Line"](via=Embedded(key="sku"))


@embedded.model(pk="O#{order_id}", sk="LINE#{line_no}")
class Line:
    order_id: str
    line_no: str
    sku: str
    qty: int = 0


table.check()
embedded.check()


def s(text: str) -> dict[str, str]:
    return {"S": text}


def old_ticket(user: str, tid: str, body: str, **extra: Any) -> Item:
    """A ticket stored in its user's partition (the old layout)."""
    return {
        "pk": s(f"U#{user}"),
        "sk": s(f"T#{tid}"),
        "user": s(user),
        "tid": s(tid),
        "body": s(body),
        **extra,
    }


def move() -> Move:
    return Move(User.tickets, Partition())


def test_a_moved_item_keeps_every_attribute_but_its_keys() -> None:
    old = old_ticket("a", "1", "x", legacy=s("keep"), GSI9=s("stale"))
    assert move().moved_item(old) == {
        "pk": s("T#1"),
        "sk": s("T#1"),
        "GSI1PK": s("U#a"),
        "GSI1SK": s("T#1"),
        "user": s("a"),
        "tid": s("1"),
        "body": s("x"),
        "legacy": s("keep"),
        "GSI9": s("stale"),  # not a key attribute of this table: another tool's, kept
    }


def test_two_children_meeting_at_one_new_key_are_both_refused() -> None:
    kind = move()
    page = [old_ticket("a", "1", "from a"), old_ticket("b", "1", "from b")]
    plan, moves = kind.plan_page(table, "t", page)
    assert len(moves) == 2
    settled = kind.settle(table, plan, moves, {})
    assert settled.units == []
    assert len(settled.refused) == 2
    assert all("T#1" in r and "also the new key" in r for r in settled.refused)


def test_a_new_key_holding_another_item_is_refused_and_its_own_is_not() -> None:
    kind = move()
    page = [old_ticket("a", "1", "mine"), old_ticket("a", "2", "two")]
    plan, moves = kind.plan_page(table, "t", page)
    mine = {n["tid"]["S"]: n for _, n in moves}
    other = {**mine["1"], "body": s("someone else's")}
    stored = {
        key_id({"pk": s("T#1"), "sk": s("T#1")}): other,
        key_id({"pk": s("T#2"), "sk": s("T#2")}): mine["2"],  # a re-run finds its own
    }
    settled = kind.settle(table, plan, moves, stored)
    assert len(settled.refused) == 1
    assert "holds another item" in settled.refused[0]
    # Its own new item is stored already: only the old one is left to delete (as read).
    ((unit,),) = [settled.units]
    assert unit.creates == []
    assert unit.deletes == [page[1]]


def order_item(held: dict[str, Any] | None = None) -> Item:
    item: Item = {"pk": s("O#1"), "sk": s("#ORDER#1"), "order_id": s("1")}
    if held is not None:
        item["lines"] = {"M": held}
    return item


def line(line_no: str, sku: str, qty: int) -> tuple[Item, Line]:
    raw = {"pk": s("O#1"), "sk": s(f"LINE#{line_no}")}
    return raw, Line("1", line_no, sku, qty)


def embed() -> Embed:
    return Embed(Order.lines, Partition(), Order.lines.via_strategy(Partition()))


def test_children_sharing_a_map_key_refuse_their_parent() -> None:
    plan = PagePlan()
    embed().plan_parent(
        embedded, "t", order_item(), [line("1", "pen", 2), line("2", "pen", 5)], plan
    )
    assert plan.units == []
    assert len(plan.refused) == 1
    assert "share the map key 'pen'" in plan.refused[0]


def test_a_child_differing_from_the_one_held_under_its_key_refuses_the_parent() -> None:
    kind = embed()
    held = {"pen": kind.codec.encode_child(Line("1", "9", "pen", 9))}
    plan = PagePlan()
    kind.plan_parent(embedded, "t", order_item(held), [line("1", "pen", 2)], plan)
    assert len(plan.refused) == 1
    assert "differs from the child embedded" in plan.refused[0]


def test_the_same_child_held_already_is_a_rerun_not_a_clash() -> None:
    kind = embed()
    held = {"pen": kind.codec.encode_child(Line("1", "1", "pen", 2))}
    plan = PagePlan()
    kind.plan_parent(
        embedded, "t", order_item(held), [line("1", "pen", 2), line("2", "ink", 1)], plan
    )
    assert plan.refused == []
    ((unit,),) = [plan.units]
    assert unit.update is not None
    assert [d["sk"] for d in unit.deletes] == [s("LINE#1"), s("LINE#2")]
    ((_, digests),) = plan.embedded.values()
    assert len(digests) == 2  # verification checks both are there


def test_an_embedded_entry_is_the_child_item_without_its_keys() -> None:
    raw: Item = {
        "pk": s("O#1"),
        "sk": s("LINE#1"),
        "order_id": s("1"),
        "line_no": s("1"),
        "sku": s("pen"),
        "qty": {"N": "2"},
        "Rating #": {"N": "4"},
        "legacy": {"M": {"nested": {"L": [s("kept")]}}},
    }
    assert embed().entry(raw, Line("1", "1", "pen", 2)) == {
        "M": {k: v for k, v in raw.items() if k not in ("pk", "sk")}
    }


def test_a_parent_update_is_conditioned_on_the_attribute_as_read() -> None:
    kind = embed()
    fresh, held = PagePlan(), PagePlan()
    kind.plan_parent(embedded, "t", order_item(), [line("1", "pen", 2)], fresh)
    pen = kind.codec.encode_child(Line("1", "1", "pen", 2))
    kind.plan_parent(embedded, "t", order_item({"pen": pen}), [line("2", "ink", 1)], held)
    ((first,), (second,)) = fresh.units, held.units
    assert first.update is not None
    assert second.update is not None
    # No map read: it must still be missing. A map read: it must still hold what was read.
    names = {v: k for k, v in first.update.params["ExpressionAttributeNames"].items()}
    assert f"attribute_not_exists({names['lines']})" in first.update.params["ConditionExpression"]
    names = {v: k for k, v in second.update.params["ExpressionAttributeNames"].items()}
    condition = second.update.params["ConditionExpression"]
    assert "attribute_not_exists" not in condition
    assert f"size({names['lines']}) = " in condition
    assert {"N": "2"} in second.update.params["ExpressionAttributeValues"].values()


def test_an_unchanged_condition_too_long_for_one_expression_is_made_shallower() -> None:
    members = {f"m{i}": {"M": {"a": s("x"), "b": {"L": [s("y")] * 5}}} for i in range(60)}
    item: Item = {"pk": s("p"), "big": {"M": members}}
    deep = Unchanged(item, ("big",))._render(ExpressionBuilder(), 2)
    assert len(deep) > MAX_EXPRESSION
    builder = ExpressionBuilder()
    rendered = Unchanged(item, ("big",)).render(builder)
    assert len(rendered) < MAX_EXPRESSION
    assert rendered.startswith("attribute_exists(#n0) AND size(#n0) = :v0")
    assert builder.values[":v0"] == {"N": "60"}
    assert len(builder.names) == 61  # the map and each member's name, checked to exist


def test_a_page_writing_an_item_a_put_would_refuse_is_refused_naming_it() -> None:
    # The model's encoder checks what it encodes; attributes no model declares, kept as stored,
    # can still push the item as written over 400 KB: checked whole, as a put checks it.
    info = table.model_of({"pk": s("T#1"), "sk": s("T#1")})
    assert info is not None
    fine = old_ticket("ann", "1", "hi")
    big = old_ticket("ann", "2", "hi", blob=s("x" * MAX_ITEM_BYTES))
    plan = PagePlan(
        units=[
            Unit(info, rewrites=[(fine, {**fine, "GSI1PK": s("U#ann")})]),
            Unit(info, creates=[big]),
        ]
    )

    plan.check_writes()

    assert len(plan.units) == 1
    (refused,) = plan.refused
    assert refused.startswith("pk='U#ann', sk='T#2': Ticket: the item is 4096")
    assert "over DynamoDB's item limit of 409600 bytes" in refused
