"""Sharded pages resume from the last child returned: the merge, the per-shard reads, the cursor.

No server: ``merge_page`` (merge order, ties by shard, where a page ends), ``ShardedRead.starts``
(each shard's Query for the page after a position: the position's own shard by its key, every
other shard from the position's sort key on), and the cursor that carries the position (signed,
checked, and refused with what to do after a shard-count change or in the old per-shard form).
"""

from __future__ import annotations

import base64
from typing import Any

import attrs
import msgspec
import orjson
import pytest

from dynorm import GSI, HasMany, Index, Partition, Table
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec, scope_fingerprint
from dynorm.core.errors import CursorError
from dynorm.core.requests import CollectionRead, KeyRange
from dynorm.mapping.sharded import Position, ShardedRead, ShardResult, merge_page


def declare(
    shards: int, *, index: bool = False, newest_first: bool = False, kind: str = "S"
) -> ShardedRead:
    """The reads of one parent's sharded children (post p1's likes)."""
    key_types: dict[str, Any] = {"GSI1SK": kind} if index else {"sk": kind}
    table = Table(
        "t",
        pk="pk",
        sk="sk",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
        key_types=key_types if kind != "S" else None,
    )
    via = Index("GSI1", shards=shards) if index else Partition(shards=shards)

    # A number or binary sort key of the table holds one field, the parent's too.
    typed = kind != "S" and not index
    parent_sk = "{version}" if typed else "POST#{post_id}"
    version: type[Any] = bytes if kind == "B" and typed else int
    post = table.model(pk="POST#{post_id}", sk=parent_sk)(
        _model(
            "Post",
            {"post_id": (str, attrs.NOTHING), "version": (version, version())},
            {"likes": HasMany("Like", via=via, newest_first=newest_first)},
        )
    )
    fields = {
        "post_id": (str, attrs.NOTHING),
        "user_id": (str, ""),
        "at": (str, ""),
        "rank": (int, 0),
        "blob": (bytes, b""),
    }
    if index:
        sort = "{rank}" if kind != "S" else "AT#{at}"
        table.model(
            pk="LIKE#{user_id}", sk="LIKE#{user_id}", GSI1=("POST#{post_id}#{shard}", sort)
        )(_model("Like", fields))
    else:
        child_sk = {"S": "LIKE#{user_id}", "N": "{rank}", "B": "{blob}"}[kind]
        table.model(pk="POST#{post_id}#{shard}", sk=child_sk)(_model("Like", fields))
    return ShardedRead(post.likes.children_reads("t", {"post_id": "p1"}))


def _model(name: str, fields: dict[str, Any], extra: dict[str, Any] | None = None) -> type[Any]:
    """A model class named ``name`` with ``fields`` (name: (type, default)) and ``extra``."""
    namespace: dict[str, Any] = {"__module__": __name__, "__annotations__": {}}
    for field, (tp, default) in fields.items():
        namespace["__annotations__"][field] = tp
        if default is not attrs.NOTHING:
            namespace[field] = default
    namespace.update(extra or {})
    return attrs.define(type(name, (), namespace))


def item(read: CollectionRead, sort: str, user: str = "u") -> Item:
    """A raw child of ``read``'s shard whose sort key is ``sort`` (S)."""
    if read.index is None:
        return {"pk": {"S": read.pk_value}, "sk": {"S": sort}}
    return {
        "pk": {"S": f"LIKE#{user}"},
        "sk": {"S": f"LIKE#{user}"},
        "GSI1PK": {"S": read.pk_value},
        "GSI1SK": {"S": sort},
    }


def result(read: CollectionRead, sorts: list[str], *, more: bool) -> ShardResult[str]:
    found = [(s, item(read, s)) for s in sorts]
    return ShardResult(found, read.key_of(found[-1][1]) if more and found else None)


# -- the merge --------------------------------------------------------------------------------


def test_a_limited_page_ends_at_its_last_child_whatever_each_shard_read() -> None:
    sharded = declare(3)
    reads = sharded.reads
    results = [
        result(reads[0], ["LIKE#a", "LIKE#d"], more=True),
        result(reads[1], ["LIKE#b"], more=False),
        result(reads[2], ["LIKE#c", "LIKE#e"], more=False),
    ]
    items, end, more = merge_page(sharded, results, limit=2)
    assert items == ["LIKE#a", "LIKE#b"]
    assert end == Position(1, {"pk": {"S": "POST#p1#1"}, "sk": {"S": "LIKE#b"}})
    assert more
    # The last page: every shard at its end and nothing cut, so nothing follows.
    items, end, more = merge_page(sharded, [result(r, [], more=False) for r in reads], limit=2)
    assert (items, end, more) == ([], None, False)


def test_a_page_without_a_limit_stops_at_the_nearest_page_end() -> None:
    sharded = declare(2)
    reads = sharded.reads
    results = [
        result(reads[0], ["LIKE#a", "LIKE#c"], more=True),
        result(reads[1], ["LIKE#b", "LIKE#d"], more=False),
    ]
    items, end, more = merge_page(sharded, results, limit=None)
    assert items == ["LIKE#a", "LIKE#b", "LIKE#c"]  # "d" may follow shard 0's next page
    assert end is not None
    assert end.shard == 0
    assert more


def test_a_page_that_returns_nothing_yet_has_more_ends_at_the_shards_page_end() -> None:
    sharded = declare(2)
    reads = sharded.reads
    page_end = reads[0].key_of(item(reads[0], "LIKE#m"))
    results = [ShardResult([], page_end), result(reads[1], ["LIKE#x"], more=False)]
    items, end, more = merge_page(sharded, results, limit=None)
    assert items == []
    assert end == Position(0, page_end)  # progress: the next page starts after LIKE#m
    assert more


@pytest.mark.parametrize("newest_first", [False, True])
def test_equal_sort_keys_merge_by_shard_in_both_directions(newest_first: bool) -> None:
    sharded = declare(3, index=True, newest_first=newest_first)
    reads = sharded.reads
    # One child per shard, all with the same index sort key (the users sort the other way).
    found = [
        ShardResult([(f"s{shard}", item(reads[shard], "AT#1", f"u{9 - shard}"))], None)
        for shard in range(3)
    ]
    items, end, _ = merge_page(sharded, found, limit=2)
    assert items == ["s0", "s1"]
    assert end is not None
    assert end.shard == 1


# -- each shard's read after a position -------------------------------------------------------


def test_the_positions_shard_resumes_after_its_key_and_the_others_from_its_sort_key() -> None:
    sharded = declare(3)
    key = {"pk": {"S": "POST#p1#1"}, "sk": {"S": "LIKE#k"}}
    starts = sharded.starts(Position(1, key))
    assert starts[1].read == sharded.reads[1]
    assert starts[1].start == key
    for shard in (0, 2):
        start = starts[shard]
        assert start.start is None
        assert start.read is not None
        # begins_with("LIKE#") from LIKE#k on: one BETWEEN up to the prefix's top.
        assert start.read.range == KeyRange("between", ("LIKE#k", "LIKE$"))
        assert start.drop is not None
        assert start.drop(item(sharded.reads[shard], "LIKE$"))  # the top is no child
        assert not start.drop(item(sharded.reads[shard], "LIKE#l"))
    # An equal sort key follows the position in a later shard only.
    assert starts[0].drop is not None
    assert starts[2].drop is not None
    assert starts[0].drop(item(sharded.reads[0], "LIKE#k"))
    assert not starts[2].drop(item(sharded.reads[2], "LIKE#k"))


def test_newest_first_shards_read_down_from_the_position() -> None:
    sharded = declare(2, newest_first=True)
    key = {"pk": {"S": "POST#p1#0"}, "sk": {"S": "LIKE#k"}}
    start = sharded.starts(Position(0, key))[1]
    assert start.read is not None
    assert start.read.range == KeyRange("between", ("LIKE#", "LIKE#k"))
    assert not start.read.forward
    params = start.read.request().params
    assert params["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk2"
    assert params["ScanIndexForward"] is False


@pytest.mark.parametrize(("newest_first", "op"), [(False, "ge"), (True, "le")])
def test_number_sort_keys_narrow_by_value(newest_first: bool, op: Any) -> None:
    sharded = declare(2, newest_first=newest_first, kind="N")
    key: Item = {"pk": {"S": "POST#p1#0"}, "sk": {"N": "100"}}
    later = sharded.starts(Position(0, key))[1]
    assert later.read is not None
    assert later.read.range == KeyRange(op, ("100",), "N")  # no prefix: the partition from 100
    assert later.read.request().params["ExpressionAttributeValues"][":sk"] == {"N": "100"}
    assert later.drop is None  # an equal sort key in a later shard is kept: nothing to drop
    earlier = ShardedRead(sharded.reads).starts(Position(1, {**key, "pk": {"S": "POST#p1#1"}}))
    assert earlier[0].drop is not None
    assert earlier[0].drop({"sk": {"N": "1E+2"}})  # equal by value, in an earlier shard


def test_binary_sort_keys_narrow_by_their_bytes() -> None:
    sharded = declare(2, kind="B")
    key: Item = {"pk": {"S": "POST#p1#1"}, "sk": {"B": b"\x01\xff"}}
    earlier = sharded.starts(Position(1, key))[0]
    assert earlier.read is not None
    assert earlier.read.range == KeyRange("ge", (base64.b64encode(b"\x01\xff").decode(),), "B")
    assert earlier.drop is not None
    assert earlier.drop({"sk": {"B": base64.b64encode(b"\x01\xff").decode()}})  # fast path text
    assert not earlier.drop({"sk": {"B": b"\x02"}})


def test_an_index_collection_resumes_its_own_shard_by_the_table_and_index_keys() -> None:
    sharded = declare(2, index=True)
    raw = item(sharded.reads[0], "AT#5", "ann")
    position = sharded.position_of(0, raw)
    assert set(position.key) == {"pk", "sk", "GSI1PK", "GSI1SK"}
    starts = sharded.starts(position)
    assert starts[0].start == position.key
    assert starts[1].read is not None
    assert starts[1].read.index == "GSI1"
    assert starts[1].read.range == KeyRange("between", ("AT#5", "AT$"))


# -- the cursor ---------------------------------------------------------------------------------


SCOPE = scope_fingerprint("sharded", "Post.likes", "p1")


def body_of(cursor: str) -> dict[str, Any]:
    text = cursor.partition(".")[0]
    loaded: dict[str, Any] = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    return loaded


def sealed(body: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")


@pytest.mark.parametrize("secret", [None, b"k" * 32])
def test_a_position_round_trips_signed_or_not(secret: bytes | None) -> None:
    reads = declare(3).reads
    key = {"pk": {"S": "POST#p1#2"}, "sk": {"S": "LIKE#a"}}
    codec = CursorCodec(secret)
    cursor = codec.encode_position(2, key, reads, SCOPE)
    assert ("." in cursor) == (secret is not None)
    assert codec.decode_position(cursor, reads, SCOPE, "Post.likes") == (2, key)
    assert body_of(cursor)["n"] == 3


def test_binary_and_number_keys_round_trip() -> None:
    reads = declare(2, index=True, kind="N").reads
    raw = {
        "pk": {"S": "LIKE#u"},
        "sk": {"S": "LIKE#u"},
        "GSI1PK": {"S": "POST#p1#1"},
        "GSI1SK": {"N": "12345678901234567890123456789012345678"},
    }
    codec = CursorCodec()
    key = reads[1].key_of(raw)
    cursor = codec.encode_position(1, key, reads, SCOPE)
    assert codec.decode_position(cursor, reads, SCOPE, "x") == (1, key)
    binary = declare(2, kind="B").reads
    bkey: Item = {"pk": {"S": "POST#p1#0"}, "sk": {"B": b"\x00\xfe"}}
    cursor = codec.encode_position(0, bkey, binary, SCOPE)
    assert codec.decode_position(cursor, binary, SCOPE, "x") == (0, bkey)


def test_a_cursor_is_bound_to_its_reads_and_its_key_to_its_shard() -> None:
    sharded = declare(2)
    # Post p2's likes: the same reads in other partitions.
    other = ShardedRead(
        tuple(
            msgspec.structs.replace(r, pk_value=r.pk_value.replace("p1", "p2"))
            for r in sharded.reads
        )
    )
    codec = CursorCodec()
    key = {"pk": {"S": "POST#p1#0"}, "sk": {"S": "LIKE#a"}}
    cursor = codec.encode_position(0, key, sharded.reads, SCOPE)
    with pytest.raises(CursorError, match="different query"):
        codec.decode_position(cursor, other.reads, scope_fingerprint("p2"), "Post.likes")
    swapped = codec.encode_position(1, key, sharded.reads, SCOPE)  # shard 0's key as shard 1's
    with pytest.raises(CursorError, match="another partition"):
        codec.decode_position(swapped, sharded.reads, SCOPE, "Post.likes")
    outside = codec.encode_position(0, {**key, "sk": {"S": "POST#p1"}}, sharded.reads, SCOPE)
    with pytest.raises(CursorError, match="outside its query"):
        codec.decode_position(outside, sharded.reads, SCOPE, "Post.likes")


def test_a_shard_count_change_says_so_and_what_to_do() -> None:
    codec = CursorCodec()
    key = {"pk": {"S": "POST#p1#5"}, "sk": {"S": "LIKE#a"}}
    cursor = codec.encode_position(5, key, declare(8).reads, SCOPE)
    with pytest.raises(CursorError, match=r"changed from 8 to 16 .*cursor=None") as raised:
        codec.decode_position(cursor, declare(16).reads, SCOPE, "Post.likes")
    assert "Post.likes" in str(raised.value)
    # Another collection's cursor (another scope) is another query, whatever its count.
    with pytest.raises(CursorError, match="different query"):
        codec.decode_position(cursor, declare(16).reads, "other", "Post.likes")


def test_a_cursor_in_the_old_per_shard_form_is_refused_saying_to_start_again() -> None:
    reads = declare(2).reads
    key = {"pk": {"S": "POST#p1#0"}, "sk": {"S": "LIKE#a"}}
    fresh = body_of(CursorCodec().encode_position(0, key, reads, SCOPE))
    old = {"v": fresh["v"], "q": fresh["q"], "s": [fresh["p"]["k"], None]}
    with pytest.raises(CursorError, match=r"each shard's own read position.*cursor=None"):
        CursorCodec().decode_position(sealed(old), reads, SCOPE, "Post.likes")


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.pop("p"),
        lambda b: b["p"].update(s=True),
        lambda b: b["p"].update(s=-1),
        lambda b: b["p"].update(s=2),
        lambda b: b["p"].update(k={}),
        lambda b: b["p"].update(k={"pk": {"S": "POST#p1#0"}}),
    ],
)
def test_an_edited_position_is_refused(change: Any) -> None:
    reads = declare(2).reads
    key = {"pk": {"S": "POST#p1#0"}, "sk": {"S": "LIKE#a"}}
    body = body_of(CursorCodec().encode_position(0, key, reads, SCOPE))
    change(body)
    with pytest.raises(CursorError):
        CursorCodec().decode_position(sealed(body), reads, SCOPE, "Post.likes")


def test_a_change_between_sharded_and_unsharded_says_what_may_have_happened() -> None:
    codec = CursorCodec()
    sharded = declare(8).reads
    key: Item = {"pk": {"S": "POST#p1#5"}, "sk": {"S": "LIKE#a"}}
    unsharded = msgspec.structs.replace(sharded[0], pk_value="POST#p1")
    cursor = codec.encode_position(5, key, sharded, SCOPE)
    with pytest.raises(CursorError, match=r"sharded over 8 shards.*from 8 to 1.*cursor=None"):
        codec.decode(cursor, unsharded)
    plain = codec.encode({"pk": {"S": "POST#p1"}, "sk": {"S": "LIKE#a"}}, unsharded)
    with pytest.raises(CursorError, match=r"unsharded read.*from 1, unsharded, to 8.*cursor=None"):
        codec.decode_position(plain, sharded, SCOPE, "Post.likes")
