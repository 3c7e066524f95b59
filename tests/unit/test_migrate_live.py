"""A migration out of the layout ``was=`` declares: planned for writers working beside it."""

from __future__ import annotations

from dynorm import GSI, HasMany, Index, Partition, Table
from dynorm.core.chunks import key_id
from dynorm.tools.migrate_kinds import Move
from dynorm.tools.migrate_status import old_children

table = Table("live", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="U#{user}", sk="#U#{user}", GSI1=("U#{user}", "#U#{user}"))
class User:
    user: str
    tickets = HasMany["Ticket"](via=Index("GSI1"), was=Partition())
    plain = HasMany["Ticket"](via=Index("GSI1"))


@table.model(pk="T#{tid}", sk="T#{tid}", GSI1=("U#{user}", "T#{tid}"))
class Ticket:
    user: str
    tid: str
    body: str = ""


table.check()


def s(text: str) -> dict[str, str]:
    return {"S": text}


OLD = {"pk": s("U#a"), "sk": s("T#1"), "user": s("a"), "tid": s("1"), "body": s("old")}
NEW_KEY = {"pk": s("T#1"), "sk": s("T#1")}


def test_out_of_was_each_move_is_one_transaction_and_a_newer_copy_wins() -> None:
    kind = Move(User.tickets, Partition())
    assert kind.live
    plan, moves = kind.plan_page(table, "t", [OLD])
    ((_, new),) = moves
    (unit,) = kind.settle(table, plan, moves, {}).units
    assert (unit.creates, unit.deletes, unit.atomic, unit.parent) == ([new], [OLD], True, {
        "pk": s("U#a"), "sk": s("T#1")})  # fmt: skip

    # The application wrote the ticket's new copy (another body): it wins, the old one goes.
    newer = {**new, "body": s("newer")}
    plan, moves = Move(User.tickets, Partition()).plan_page(table, "t", [OLD])
    settled = Move(User.tickets, Partition()).settle(table, plan, moves, {key_id(NEW_KEY): newer})
    assert settled.refused == []
    ((unit),) = settled.units
    assert (unit.creates, unit.deletes, unit.atomic) == ([], [OLD], True)


def test_with_from_alone_a_new_key_holding_another_item_is_refused_as_before() -> None:
    kind = Move(User.plain, Partition())
    assert not kind.live
    plan, moves = kind.plan_page(table, "t", [OLD])
    ((_, new),) = moves
    (unit,) = kind.settle(table, plan, moves, {}).units
    assert not unit.atomic
    plan, moves = kind.plan_page(table, "t", [OLD])
    settled = kind.settle(table, plan, moves, {key_id(NEW_KEY): {**new, "body": s("x")}})
    assert settled.units == []
    assert "holds another item" in settled.refused[0]


def test_old_children_counts_only_old_layout_children() -> None:
    kind = Move(User.tickets, Partition())
    _, moves = kind.plan_page(table, "t", [OLD])
    ((_, new),) = moves
    parent = {"pk": s("U#a"), "sk": s("#U#a"), "user": s("a")}
    assert [old_children(kind, table, raw) for raw in (OLD, new, parent)] == [1, 0, 0]
    # An old-layout child that does not decode is still in the old layout: counted.
    assert old_children(kind, table, {**OLD, "body": {"N": "1"}}) == 1
