"""OldPartition: how a move reads an old partition key when the number of shards changes."""

from __future__ import annotations

from dynorm import HasMany, Partition, Table
from dynorm.core.codec.converter import Item
from dynorm.core.keys import KeyTemplate, shard_number
from dynorm.mapping.oldlayout import OldPartition, Reading
from dynorm.tools.migrate_kinds import Move

PARSERS = {"post_id": str}


def test_same_shape_reads_the_key_as_it_is() -> None:
    old = OldPartition(KeyTemplate("POST#{post_id}#{shard}"), 4)
    assert old.readings("POST#p1#3", PARSERS) == [Reading({"S": "POST#p1#3"})]
    assert old.readings("OTHER#p1", PARSERS) == []


def test_to_shards_the_old_key_is_the_template_without_its_shard() -> None:
    old = OldPartition(KeyTemplate("POST#{shard}#{post_id}"), 1)
    assert old.readings("POST#p1", PARSERS) == [Reading({"S": "POST#0#p1"})]
    assert old.readings("POST#3#p1", PARSERS) == []


def test_back_from_shards_the_shard_may_be_any_part() -> None:
    declared = KeyTemplate("POST#{post_id}")
    old = OldPartition(declared, 8)
    assert old.readings("POST#3#x", PARSERS) == [Reading({"S": "POST#x"}, 3)]
    assert old.readings("POST#x#3", PARSERS) == [Reading({"S": "POST#x"}, 3)]
    assert old.readings("S05#POST#x", PARSERS) == [Reading({"S": "POST#x"}, 5)]
    # Each part that could hold the shard is a reading; the move keeps the one its child
    # confirms (the same key back, and that shard under the old count).
    assert old.readings("POST#3#p1", PARSERS) == [
        Reading({"S": "POST#p1"}, 3),
        Reading({"S": "POST#3"}, 1),
    ]
    assert old.readings("POST#3#7", PARSERS) == [
        Reading({"S": "POST#7"}, 3),
        Reading({"S": "POST#3"}, 7),
    ]
    assert old.readings("POST#p1", PARSERS) == []  # no part left over to be the shard


def test_back_from_shards_as_the_reads_of_was_look_the_shard_is_last() -> None:
    old = OldPartition(KeyTemplate("POST#{post_id}"), 8, anywhere=False)
    assert old.readings("POST#x#3", PARSERS) == [Reading({"S": "POST#x"}, 3)]
    assert old.readings("POST#3#p1", PARSERS) == [Reading({"S": "POST#3"}, 1)]
    assert old.readings("POST#3#x", PARSERS) == []
    assert old.readings("S05#POST#x", PARSERS) == []
    assert old.keys({"post_id": "x"}) == [f"POST#x#{n}" for n in range(8)]


# -- the move back from shards, on items another tool wrote (fields only inside the keys) -------

flat = Table("shards-back", pk="pk", sk="sk")


@flat.model(pk="POST#{post_id}", sk="POST#{post_id}")
class Post:
    post_id: str
    likes = HasMany["Like"](via=Partition())


@flat.model(pk="POST#{post_id}", sk="LIKE#{user_id}")
class Like:
    post_id: str
    user_id: str


def old_like(pk: str, user: str) -> Item:
    """A child of the old ``POST#{shard}#{post_id}`` layout holding its fields in its keys only."""
    return {"pk": {"S": pk}, "sk": {"S": f"LIKE#{user}"}}


def move_back(*items: Item, shards: int = 8) -> tuple[list[Item], list[str]]:
    plan, moves = Move(Post.likes, Partition(shards=shards)).plan_page(flat, "t", items)
    return [new for _, new in moves], plan.skipped


def test_the_reading_whose_shard_the_child_confirms_is_taken() -> None:
    user = "u1"
    shard = shard_number(["p9", user], 8)
    moved, skipped = move_back(old_like(f"POST#{shard}#p9", user))
    assert skipped == []
    # Rewritten as stored: only its partition key changes.
    assert moved == [{"pk": {"S": "POST#p9"}, "sk": {"S": "LIKE#u1"}}]


def test_a_key_that_reads_as_two_children_is_skipped_and_says_why() -> None:
    # Over 16 shards, "POST#3#10" of user u1 reads both ways: post 10 in shard 3, post 3 in 10.
    assert shard_number(["10", "u1"], 16) == 3
    assert shard_number(["3", "u1"], 16) == 10
    moved, skipped = move_back(old_like("POST#3#10", "u1"), shards=16)
    assert moved == []
    [why] = skipped
    assert "reads as 2 different Like children of Partition(shards=16)" in why
    assert "which of its parts is the shard cannot be told" in why


def test_a_key_whose_shard_does_not_confirm_is_no_old_child() -> None:
    user = "u1"
    wrong = (shard_number(["p9", user], 8) + 1) % 8
    assert move_back(old_like(f"POST#{wrong}#p9", user)) == ([], [])
