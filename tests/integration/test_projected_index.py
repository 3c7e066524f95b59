"""Indexes that hold items in part (KEYS_ONLY, INCLUDE): the items are then read whole.

A relationship or a query read through such an index gets each page's items of a model the
index does not hold whole by their table keys, with one BatchGetItem after the Query. Models
whose every field the index holds (stored, or parsed from a projected key) need no second read.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import GSI, Attr, Database, ExpressionError, HasMany, Index, Table
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table(
    "projected",
    pk="PK",
    sk="SK",
    indexes=[
        GSI("KEYS", pk="K1PK", sk="K1SK", projection="KEYS_ONLY"),
        GSI("SOME", pk="S1PK", sk="S1SK", projection=("title",)),
    ],
)


@table.model(
    pk="MEMBER#{member_id}",
    sk="MEMBER#{member_id}",
    KEYS=("MEMBER#{member_id}", "#MEMBER#{member_id}"),
)
@attrs.define
class Member:
    member_id: str
    name: str = ""
    posts = HasMany["Post"]("Post", via=Index("KEYS"))
    likes = HasMany["Like"]("Like", via=Index("KEYS"))


@table.model(
    pk="POST#{post_id}",
    sk="POST#{post_id}",
    KEYS=("MEMBER#{member_id}", "POST#{post_id}"),
    SOME=("MEMBER#{member_id}", "POST#{post_id}"),
)
@attrs.define
class Post:
    post_id: str
    member_id: str
    title: str = ""
    body: str = ""


@table.model(
    pk="LIKE#{post_id}#{member_id}",
    sk="LIKE#{post_id}#{member_id}",
    KEYS=("MEMBER#{member_id}", "LIKE#{post_id}"),
)
@attrs.define
class Like:
    """Every field is in its keys: a KEYS_ONLY index holds it whole."""

    post_id: str
    member_id: str


ANN = Member("ann", "Ann")
POSTS = [Post(f"p{i}", "ann", f"title {i}", f"body {i}") for i in range(3)]
LIKES = [Like(f"p{i}", "ann") for i in range(2)]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([ANN, *POSTS, *LIKES, Post("x", "bo", "other", "not ann's")])
        yield database


def test_which_models_an_index_holds_in_part() -> None:
    assert table.partial_models("KEYS") == {"Member", "Post"}
    assert table.partial_models("SOME") == {"Post"}  # body is not projected


async def test_a_parent_and_children_through_a_keys_only_index(db: Database) -> None:
    assert [r.operation for r in db.explain.get(Member, member_id="ann", load=[Member.posts])] == [
        "Query",
        "BatchGetItem",
    ]
    with count_requests(db) as log:
        member = await db.get(Member, member_id="ann", load=[Member.posts])
    assert log.operations == ["Query", "BatchGetItem"]
    assert member == ANN  # read whole too: the index held only its keys
    assert member.posts.loaded == POSTS


async def test_children_held_whole_need_no_second_read(db: Database) -> None:
    with count_requests(db) as log:
        assert await db.query(Like, index="KEYS", member_id="ann").all() == LIKES
    assert log.operations == ["Query"]
    assert db.query(Like, index="KEYS", member_id="ann").requests()[1:] == []


async def test_a_query_of_an_include_index_reads_whole_items(db: Database) -> None:
    query = db.query(Post, index="SOME", member_id="ann")
    assert [r.operation for r in query.requests()] == ["Query", "BatchGetItem"]
    with count_requests(db) as log:
        assert await query.all() == POSTS
    assert log.operations == ["Query", "BatchGetItem"]


async def test_pages_and_lazy_reads_read_whole_items(db: Database) -> None:
    member = await db.get(Member, member_id="ann")
    with count_requests(db) as log:
        page = await member.posts.page(limit=2)
    assert log.operations == ["Query", "BatchGetItem"]
    assert page.items == POSTS[:2]
    rest = await member.posts.page(limit=2, cursor=page.cursor)
    assert rest.items == POSTS[2:]
    assert [p async for p in member.posts] == POSTS
    assert [like async for like in member.likes] == LIKES


@attrs.define
class PostKeys:
    """Fields the KEYS index holds in its keys."""

    post_id: str
    member_id: str


@attrs.define
class PostText:
    post_id: str
    body: str


async def test_a_scan_of_a_partial_index_reads_whole_items(db: Database) -> None:
    scan = db.scan(Post, index="KEYS")
    with count_requests(db) as log:
        found = sorted(await scan.all(), key=lambda p: p.post_id)
    assert log.operations == ["Scan", "BatchGetItem"]
    assert found == [*POSTS, Post("x", "bo", "other", "not ann's")]  # no field left at a default
    with count_requests(db) as log:
        everything = await db.scan(None, index="KEYS").all()
    assert log.operations == ["Scan", "BatchGetItem"]
    assert ANN in everything
    assert all(post in everything for post in POSTS)


async def test_a_view_the_index_holds_needs_no_second_read(db: Database) -> None:
    query = db.query(Post, index="KEYS", member_id="ann").project(PostKeys)
    assert [r.operation for r in query.requests()] == ["Query"]
    with count_requests(db) as log:
        assert await query.all() == [PostKeys(p.post_id, "ann") for p in POSTS]
    assert log.operations == ["Query"]
    with count_requests(db) as log:
        scanned = await db.scan(Post, index="KEYS").project(PostKeys).all()
    assert log.operations == ["Scan"]
    assert len(scanned) == 4


async def test_a_view_the_index_lacks_reads_whole_items(db: Database) -> None:
    query = db.query(Post, index="KEYS", member_id="ann").project(PostText)
    assert [r.operation for r in query.requests()] == ["Query", "BatchGetItem"]
    with count_requests(db) as log:
        assert await query.all() == [PostText(p.post_id, p.body) for p in POSTS]
    assert log.operations == ["Query", "BatchGetItem"]
    with count_requests(db) as log:
        scanned = await db.scan(Post, index="KEYS").project(PostText).all()
    assert log.operations == ["Scan", "BatchGetItem"]
    assert PostText("p1", "body 1") in scanned


async def test_a_filter_on_an_attribute_the_index_lacks_is_refused(db: Database) -> None:
    with count_requests(db) as log:
        with pytest.raises(ExpressionError, match="'body', which index 'SOME' does not project"):
            db.query(Post, index="SOME", member_id="ann").filter(Attr("body") == "body 1")
        with pytest.raises(ExpressionError, match="does not project"):
            db.scan(Post, index="SOME").filter(Attr("body") == "body 1")
    assert log.operations == []
    # An attribute the index projects filters there.
    titled = db.query(Post, index="SOME", member_id="ann").filter(Attr("title") == "title 1")
    assert [p.post_id for p in await titled.all()] == ["p1"]
