"""Sharded collections, declared and keyed: ``Partition(shards=N)`` and ``{shard}`` in templates.

No server: the shard hash, the key templates that hold ``{shard}``, the keys a sharded child is
written and addressed by, and the declarations refused with what to write instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    BelongsTo,
    DefinitionError,
    Denormalized,
    HasMany,
    Index,
    KeyTemplateError,
    Partition,
    Table,
)
from dynorm.cli._strategy import StrategyError, parse_strategy
from dynorm.core.keys import KeyTemplate, shard_number
from dynorm.mapping.model import info_of
from dynorm.mapping.readplan import plan_get
from dynorm.mapping.relations import LoadOption


@pytest.fixture
def table() -> Table:
    return Table("shards", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# -- the hash ---------------------------------------------------------------------------------


def test_shard_number_is_fixed_crc32_of_the_key_texts() -> None:
    # Fixed values: a salted hash (Python's hash of a str) would differ between processes.
    assert shard_number(["p1", "u9"], 8) == 5
    assert shard_number(["p1", "u1"], 8) == 7
    assert shard_number(["p1", "u9"], 16) == 13
    assert shard_number(["a"], 4) == 3
    assert shard_number(["anything"], 1) == 0


def test_shard_number_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = "from dynorm.core.keys import shard_number; print(shard_number(['p1', 'u9'], 8))"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "5"


def test_shards_are_spread_over_every_shard() -> None:
    counts = [0] * 8
    for i in range(800):
        counts[shard_number(["p1", f"user{i}"], 8)] += 1
    assert all(60 < c < 140 for c in counts), counts


# -- templates --------------------------------------------------------------------------------


def test_a_sharded_template_formats_with_its_shard_and_parses_back_without_it() -> None:
    t = KeyTemplate("POST#{post_id}#{shard}")
    assert t.sharded
    assert t.fields == ("post_id",)
    assert t.format({"post_id": "p1"}, 3) == "POST#p1#3"
    assert t.format({"post_id": "a#b"}, 0) == "POST#a%23b#0"
    assert t.parse("POST#a%23b#7") == {"post_id": "a#b"}
    assert t.texts("POST#p1#12") == ("p1",)
    assert t.shard_of("POST#p1#12") == 12
    assert t.matches("POST#p1#3")
    assert not t.matches("POST#p1#x")  # a shard is a number
    assert not t.matches("POST#p1")
    assert t.without_shard().source == "POST#{post_id}"
    assert t.prefix({"post_id": "p1"}) == "POST#p1#"


def test_a_sharded_template_refuses_to_format_without_a_shard() -> None:
    with pytest.raises(KeyTemplateError, match="holds \\{shard\\}, which dynorm fills"):
        KeyTemplate("POST#{post_id}#{shard}").format({"post_id": "p1"})


def test_the_shard_may_sit_anywhere_and_carry_a_format_spec() -> None:
    t = KeyTemplate("S{shard:02d}#POST#{post_id}")
    assert t.format({"post_id": "p1"}, 4) == "S04#POST#p1"
    assert t.parse("S04#POST#p1") == {"post_id": "p1"}
    assert t.shard_of("S04#POST#p1") == 4
    assert t.without_shard().source == "POST#{post_id}"


def test_an_unsharded_template_is_as_before() -> None:
    t = KeyTemplate("POST#{post_id}")
    assert not t.sharded
    assert t.shard_at is None
    assert t.without_shard() is t


# -- models -----------------------------------------------------------------------------------


def declare_posts(table: Table, shards: int = 8) -> tuple[type[Any], type[Any]]:
    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Partition(shards=shards))

    @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
    class Like:
        post_id: str
        user_id: str

    return Post, Like


def test_every_key_of_a_sharded_child_holds_its_shard(table: Table) -> None:
    post_cls, like_cls = declare_posts(table)
    info: Any = info_of(like_cls)
    like = like_cls(post_id="p1", user_id="u9")
    expected = {"pk": {"S": "POST#p1#5"}, "sk": {"S": "LIKE#u9"}}
    assert info.shards == {"pk": 8}
    assert {k: v for k, v in info.encode(like).items() if k in ("pk", "sk")} == expected
    assert info.key_of(like) == expected  # update, delete, batch and transaction keys
    assert info.primary_key({"post_id": "p1", "user_id": "u9"}) == expected  # db.get
    assert info.decode(info.encode(like)) == like
    assert post_cls.likes.link == {"post_id": "post_id"}
    assert post_cls.likes.via.describe() == "Partition(shards=8)"


def test_the_shard_depends_on_every_key_field(table: Table) -> None:
    _, like_cls = declare_posts(table)
    info: Any = info_of(like_cls)
    shards = {info.key_of(like_cls(post_id="p1", user_id=f"u{i}"))["pk"]["S"] for i in range(40)}
    assert shards == {f"POST#p1#{i}" for i in range(8)}


def test_index_shards_a_secondary_index_collection(table: Table) -> None:
    @table.model(pk="USER#{username}", sk="USER#{username}", GSI1=("USER#{username}", "USER"))
    class Member:
        username: str
        events = HasMany["Event"](via=Index("GSI1", shards=4))

    @table.model(
        pk="EVENT#{event_id}",
        sk="EVENT#{event_id}",
        GSI1=("USER#{username}#{shard}", "EVENT#{event_id}"),
    )
    class Event:
        event_id: str
        username: str

    info = info_of(Event)
    item = info.encode(Event(event_id="e1", username="ann"))
    assert item["pk"] == {"S": "EVENT#e1"}
    assert item["GSI1PK"] == {"S": f"USER#ann#{shard_number(['e1'], 4)}"}
    assert info.shards == {"GSI1PK": 4}
    assert Member.events.via.describe() == "Index('GSI1', shards=4)"


def test_denormalized_children_may_be_sharded(table: Table) -> None:
    @table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
    class Author:
        name: str
        country: str = ""
        books = HasMany[Any](
            "Book", via=Denormalized(copy={"country": "country"}, where=Partition(shards=2))
        )

    @table.model(pk="AUTHOR#{name}#{shard}", sk="BOOK#{title}")
    class Book:
        name: str
        title: str
        country: str = ""

    assert Author.books.via.shards == 2
    assert info_of(Book).shards == {"pk": 2}


# -- refused declarations ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "8"])
def test_the_shard_count_is_a_positive_int(bad: object) -> None:
    with pytest.raises(DefinitionError, match=r"Partition\(shards=\.\.\.\) takes a positive int"):
        Partition(shards=bad)  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match=r"Index\(shards=\.\.\.\) takes a positive int"):
        Index("GSI1", shards=bad)  # type: ignore[arg-type]


def test_a_sharded_relationship_needs_shard_in_the_child_template(table: Table) -> None:
    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Partition(shards=8))

    with pytest.raises(DefinitionError, match="has no \\{shard\\}; write 'POST#\\{post_id\\}#"):

        @table.model(pk="POST#{post_id}", sk="LIKE#{user_id}")
        class Like:
            post_id: str
            user_id: str


def test_an_unsharded_relationship_refuses_a_sharded_child(table: Table) -> None:
    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Partition())

    with pytest.raises(DefinitionError, match="not sharded; declare the number of shards"):

        @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
        class Like:
            post_id: str
            user_id: str


def test_two_relationships_cannot_disagree_on_the_shard_count(table: Table) -> None:
    declare_posts(table, shards=8)
    with pytest.raises(DefinitionError, match="already spread over 8 shards"):

        @table.model(pk="POST#{post_id}", sk="#META#{post_id}")
        class PostStats:
            post_id: str
            likes = HasMany[Any]("Like", via=Partition(shards=4))


def test_shard_goes_only_in_a_partition_key(table: Table) -> None:
    with pytest.raises(DefinitionError, match="not a string partition key"):

        @table.model(pk="POST#{post_id}", sk="LIKE#{user_id}#{shard}")
        class Like:
            post_id: str
            user_id: str


def test_shard_is_no_field_name_of_a_sharded_model(table: Table) -> None:
    with pytest.raises(DefinitionError, match="no field may be named 'shard'"):

        @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
        class Like:
            post_id: str
            user_id: str
            shard: int = 0


def test_a_sharded_child_without_its_relationship_says_what_to_declare(table: Table) -> None:
    @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
    class Like:
        post_id: str
        user_id: str

    with pytest.raises(DefinitionError, match="via=Partition\\(shards=N\\)"):
        info_of(Like).encode(Like(post_id="p1", user_id="u1"))
    with pytest.raises(DefinitionError, match="via=Partition\\(shards=N\\)"):
        info_of(Like).primary_key({"post_id": "p1", "user_id": "u1"})


def test_a_sharded_child_stays_a_plain_attrs_class(table: Table) -> None:
    _, like_cls = declare_posts(table)
    assert attrs.asdict(like_cls(post_id="p", user_id="u")) == {"post_id": "p", "user_id": "u"}


# -- reads, planned -----------------------------------------------------------------------------


def test_a_get_with_a_sharded_load_plans_a_get_and_one_query_per_shard(table: Table) -> None:
    post_cls, _ = declare_posts(table, shards=4)
    plan = plan_get(info_of(post_cls), {"post_id": "p1"}, [LoadOption(post_cls.likes)], "t")
    sent = plan.requests
    assert [r.operation for r in sent] == ["GetItem", "Query", "Query", "Query", "Query"]
    pks = [r.params["ExpressionAttributeValues"][":pk"]["S"] for r in sent[1:]]
    assert pks == ["POST#p1#0", "POST#p1#1", "POST#p1#2", "POST#p1#3"]
    assert not plan.single


def test_table_check_refuses_a_sharded_child_no_relationship_holds(table: Table) -> None:
    @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
    class Like:
        post_id: str
        user_id: str

    with pytest.raises(DefinitionError, match="no relationship says over how many shards"):
        table.check()

    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Partition(shards=2))

    table.check()
    assert info_of(Like).shards == {"pk": 2}


def test_a_sharded_child_finds_its_parent_by_belongs_to(table: Table) -> None:
    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Partition(shards=4))

    @table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
    class Like:
        post_id: str
        user_id: str
        post = BelongsTo(Post)

    assert Like.post.parent_key(Like("p1", "u1")) == {
        "pk": {"S": "POST#p1"},
        "sk": {"S": "POST#p1"},
    }


def test_the_command_line_reads_sharded_strategies() -> None:
    assert parse_strategy("Partition(shards=8)") == Partition(shards=8)
    assert parse_strategy("Index('GSI1', shards=4)") == Index("GSI1", shards=4)
    with pytest.raises(StrategyError, match="takes a whole number of shards"):
        parse_strategy("Partition(shards='8')")
    with pytest.raises(DefinitionError, match="takes a positive int"):
        parse_strategy("Partition(shards=0)")
