"""``await parent.rel.count()``: the children stored now, whatever the relationship's strategy.

Switching a strategy changes its declaration, never the code that counts: the same call counts
a partition or an index (the Query ``rel.query().count()`` sends), a sharded collection (one
such Query per shard, sent together, added up) and embedded children (a GetItem of the parent's
embedded attribute). Only the children's entity is counted where another entity shares the key
range. Hierarchies, adjacency lists, Denormalized and relationships across tables are counted in
the composition matrix (``test_matrix.py``, the ``count`` column).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
    DetachedError,
    Embedded,
    HasMany,
    Index,
    ItemNotFoundError,
    Partition,
    Request,
    Table,
)
from dynorm.testing import Connect, count_requests
from tests.faultproxy import FaultyConnect

pytestmark = pytest.mark.integration

table = Table(
    "relcount",
    pk="pk",
    sk="sk",
    type_attribute="kind",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
)


@attrs.define
class Tag:
    label: str
    colour: str = "red"


@table.model(pk="POST#{post_id}", sk="POST#{post_id}", entity="post")
@attrs.define
class Post:
    post_id: str
    comments = HasMany["Comment"]("Comment", via=Partition())
    likes2 = HasMany["Like2"]("Like2", via=Partition(shards=2))
    likes3 = HasMany["Like3"]("Like3", via=Partition(shards=3))
    views = HasMany["View"]("View", via=Index("GSI1", shards=3))
    reads = HasMany["Read"]("Read", via=Index("GSI1"))
    tags = HasMany[Tag](Tag, via=Embedded(key="label"))
    notes = HasMany[Tag](Tag, via=Embedded())


@table.model(pk="POST#{post_id}", sk="C#{n}", entity="comment")
@attrs.define
class Comment:
    post_id: str
    n: str


@table.model(pk="POST#{post_id}#{shard}", sk="L#{user}", entity="like2")
@attrs.define
class Like2:
    post_id: str
    user: str


@table.model(pk="POST3#{post_id}#{shard}", sk="L#{user}", entity="like3")
@attrs.define
class Like3:
    post_id: str
    user: str


@table.model(pk="V#{view_id}", sk="V#{view_id}", GSI1=("VIEWS#{post_id}#{shard}", "V#{at}"))
@attrs.define
class View:
    view_id: str
    post_id: str
    at: str


@table.model(pk="R#{read_id}", sk="R#{read_id}", GSI1=("READS#{post_id}", "R#{at}"))
@attrs.define
class Read:
    read_id: str
    post_id: str
    at: str


def _foreign(pk: str, sk: str) -> dict[str, Any]:
    """Another service's entity (a type attribute no model declares) in a key range of ours."""
    return {"pk": {"S": pk}, "sk": {"S": sk}, "kind": {"S": "bookmark"}}


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def _post(db: Database, post_id: str = "p1") -> Post:
    await db.put(Post(post_id))
    return await db.get(Post, post_id=post_id)


async def _put_raw(db: Database, items: list[dict[str, Any]]) -> None:
    for item in items:
        await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))


async def test_partition_and_index_count_with_the_query_count_sends(db: Database) -> None:
    post = await _post(db)
    other = await _post(db, "p2")
    await db.put_all([Comment("p1", f"{i}") for i in range(5)])
    await db.put_all([Comment("p2", "0"), Read("r9", "p2", "t9")])
    await db.put_all([Read(f"r{i}", "p1", f"t{i}") for i in range(4)])
    await _put_raw(db, [_foreign("POST#p1", "C#promo")])

    with count_requests(db) as log:
        assert await post.comments.count() == 5
        assert await post.reads.count() == 4
    assert log.operations == ["Query", "Query"]
    assert await post.comments.count() == await post.comments.query().count()
    assert await other.comments.count() == 1
    assert await other.reads.count() == 1
    assert post.comments.explain_count() == post.comments.query().explain(count=True)
    assert post.reads.explain_count() == post.reads.query().explain(count=True)


@pytest.mark.parametrize(("rel", "model", "shards"), [("likes2", Like2, 2), ("likes3", Like3, 3)])
async def test_a_sharded_partition_counts_every_shard_once(
    db: Database, rel: str, model: type[Any], shards: int
) -> None:
    post = await _post(db)
    await db.put_all([model("p1", f"u{i:02d}") for i in range(11)])
    await db.put_all([model("p2", f"u{i:02d}") for i in range(3)])
    loader = getattr(post, rel)
    explained = loader.explain_count()
    assert [r.operation for r in explained] == ["Query"] * shards
    partitions = {r.params["ExpressionAttributeValues"][":pk"]["S"] for r in explained}
    assert len(partitions) == shards
    # Another entity in every shard's range: not counted.
    await _put_raw(db, [_foreign(pk, "L#zz") for pk in sorted(partitions)])

    with count_requests(db) as log:
        assert await loader.count() == 11
    assert log.operations == ["Query"] * shards
    assert await loader.count() == len(await loader.all())

    await db.remove(post, getattr(Post, rel), model("p1", "u00"))
    assert await loader.count() == 10


async def test_a_sharded_index_counts_every_shard(db: Database) -> None:
    post = await _post(db)
    await db.put_all([View(f"v{i}", "p1", f"t{i:02d}") for i in range(7)])
    await db.put(View("v99", "p2", "t99"))
    with count_requests(db) as log:
        assert await post.views.count() == 7
    assert log.operations == ["Query"] * 3
    assert all(r.params["IndexName"] == "GSI1" for r in post.views.explain_count())


async def test_sharded_counts_are_sent_together(faulty_connect: FaultyConnect) -> None:
    """Every shard's Query is on its way before any of them is answered."""
    async with faulty_connect(table) as faulty:
        await faulty.direct.put(Post("p1"))
        await faulty.direct.put_all([Like3("p1", f"u{i}") for i in range(6)])
        post = await faulty.db.get(Post, post_id="p1")
        held = [faulty.proxy.pause("Query") for _ in range(3)]
        counting = asyncio.ensure_future(post.likes3.count())
        try:
            await asyncio.wait_for(asyncio.gather(*(h.arrived.wait() for h in held)), 30)
        finally:
            for h in held:
                h.release()
        assert await counting == 6


async def test_embedded_children_are_counted_in_the_stored_parent(db: Database) -> None:
    post = await _post(db)
    for label in ("a", "b", "c"):
        await db.add(post, Post.tags, Tag(label))
    await db.add(post, Post.notes, Tag("n"))
    loaded = await db.get(Post, post_id="p1", load=[Post.tags])
    assert len(loaded.tags.loaded) == 3

    with count_requests(db) as log:
        assert await loaded.tags.count() == 3
        assert await loaded.notes.count() == 1
    assert log.operations == ["GetItem", "GetItem"]
    (request,) = loaded.tags.explain_count()
    assert request.operation == "GetItem"
    assert request.params["ProjectionExpression"]

    # What is stored now, not what the parent was loaded with.
    await db.add(post, Post.tags, Tag("d"))
    assert await loaded.tags.count() == 4
    assert len(loaded.tags.loaded) == 3  # counting loads nothing

    empty = await _post(db, "p2")
    assert await empty.tags.count() == 0
    await db.delete(empty)
    with pytest.raises(ItemNotFoundError, match="not stored"):
        await empty.tags.count()


async def test_a_detached_parent_says_how_to_attach() -> None:
    with pytest.raises(DetachedError, match="attach"):
        await Post("p1").comments.count()
    with pytest.raises(DetachedError, match="attach"):
        Post("p1").likes3.explain_count()
