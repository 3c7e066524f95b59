"""OldPartition: how a move reads an old partition key when the number of shards changes."""

from __future__ import annotations

from dynorm.core.keys import KeyTemplate
from dynorm.tools.migrate_shards import OldPartition, Reading

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
