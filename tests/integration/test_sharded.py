"""Sharded collections: ``Partition(shards=N)`` and ``Index(name, shards=N)`` against the server.

A post's likes are spread over 8 partitions (``POST#{post_id}#{shard}``). Each like is still
written, got and deleted by its own key in one request; a load of the post reads the 8 shards
together and merges them in sort key order; pages and ``async for`` go across shards with one
cursor. Every read is checked exactly against a raw scan of the table.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import orjson
import pytest

import dynorm
from dynorm import (
    GSI,
    CascadeReport,
    CursorError,
    Database,
    DefinitionError,
    Denormalized,
    HasMany,
    Index,
    ItemNotFoundError,
    KeyTemplateError,
    Partition,
    Table,
)
from dynorm.core.keys import shard_number
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
)
from tests.faultproxy import FaultyConnect

from .raw import raw_scan

pytestmark = pytest.mark.integration

SHARDS = 8

table = Table("sharded", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="POST#{post_id}", sk="POST#{post_id}")
@attrs.define
class Post:
    post_id: str
    title: str = ""
    likes = HasMany["Like"]("Like", via=Partition(shards=SHARDS))
    recent = HasMany["Like"]("Like", via=Partition(shards=SHARDS), newest_first=True)


@table.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
@attrs.define
class Like:
    post_id: str
    user_id: str
    weight: int = 1


@table.model(pk="USER#{username}", sk="USER#{username}")
@attrs.define
class Member:
    username: str
    events = HasMany["Event"]("Event", via=Index("GSI1", shards=4))


@table.model(
    pk="EVENT#{event_id}", sk="EVENT#{event_id}", GSI1=("USER#{username}#{shard}", "AT#{at}")
)
@attrs.define
class Event:
    event_id: str
    username: str
    at: str


@table.model(pk="BOARD#{board_id}", sk="BOARD#{board_id}")
@attrs.define
class Board:
    board_id: str
    title: str = ""
    pins = HasMany["Pin"](
        "Pin", via=Denormalized(copy={"title": "board_title"}, where=Partition(shards=4))
    )


@table.model(pk="BOARD#{board_id}#{shard}", sk="PIN#{pin_id}")
@attrs.define
class Pin:
    board_id: str
    pin_id: str
    board_title: str = ""


# Uneven on purpose: 8 shards, 37 likes (some shards hold more than others).
LIKES = [Like("p1", f"u{i:03d}", weight=i) for i in range(37)]
OTHER_LIKES = [Like("p2", f"u{i:03d}") for i in range(3)]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([Post("p1", "hello"), Post("p2"), *LIKES, *OTHER_LIKES])
        yield database


async def stored_likes(db: Database, post_id: str) -> list[Like]:
    """The post's likes as a raw scan finds them, in sort key order (the expected answer)."""
    found = [
        Like(item["post_id"]["S"], item["user_id"]["S"], int(item["weight"]["N"]))
        for item in await raw_scan(db)
        if item["sk"]["S"].startswith("LIKE#") and item["post_id"]["S"] == post_id
    ]
    return sorted(found, key=lambda like: "LIKE#" + like.user_id)


def shard_of(like: Like) -> int:
    return shard_number([like.post_id, like.user_id], SHARDS)


# -- writes by key ------------------------------------------------------------------------------


async def test_each_child_is_stored_in_its_shard(db: Database) -> None:
    items = [i for i in await raw_scan(db) if i["sk"]["S"].startswith("LIKE#")]
    assert len(items) == len(LIKES) + len(OTHER_LIKES)
    for item in items:
        like = Like(item["post_id"]["S"], item["user_id"]["S"])
        assert item["pk"]["S"] == f"POST#{like.post_id}#{shard_of(like)}"
    used = {i["pk"]["S"] for i in items if i["post_id"]["S"] == "p1"}
    assert len(used) > 4  # spread, not all in one partition
    assert "shard" not in items[0]  # the shard is in the key only, no attribute of its own


async def test_a_child_is_got_updated_and_deleted_by_its_own_key_in_one_request(
    db: Database,
) -> None:
    with count_requests(db) as log:
        like = await db.get(Like, post_id="p1", user_id="u009")
    assert log.operations == ["GetItem"]
    assert like == LIKES[9]
    with count_requests(db) as log:
        await db.update(like, set={"weight": 100})
        await db.delete(like)
    assert log.operations == ["UpdateItem", "DeleteItem"]
    with pytest.raises(ItemNotFoundError):
        await db.get(Like, post_id="p1", user_id="u009")
    assert LIKES[9] not in await stored_likes(db, "p1")


async def test_batch_reads_address_the_shard(db: Database) -> None:
    found = await db.get_many(
        Like, [{"post_id": "p1", "user_id": "u001"}, {"post_id": "p1", "user_id": "x"}]
    )
    assert found == [LIKES[1], None]


# -- loads ----------------------------------------------------------------------------------------


async def test_a_load_reads_every_shard_together_and_merges_them(db: Database) -> None:
    with count_requests(db) as log:
        post = await db.get(Post, post_id="p1", load=[Post.likes])
    assert sorted(log.operations) == ["GetItem"] + ["Query"] * SHARDS
    assert post == Post("p1", "hello")
    assert post.likes.loaded == await stored_likes(db, "p1")


async def test_limit_counts_merged_children_in_both_orders(db: Database) -> None:
    expected = await stored_likes(db, "p1")
    post = await db.get(Post, post_id="p1", load=[Post.likes.limit(5), Post.recent.limit(4)])
    assert post.likes.loaded == expected[:5]
    assert post.recent.loaded == expected[::-1][:4]


async def test_async_for_after_a_limited_load_yields_the_rest_once_in_order(db: Database) -> None:
    expected = await stored_likes(db, "p1")
    for rel in (Post.likes, Post.recent):
        post = await db.get(Post, post_id="p1", load=[rel.limit(3)])
        loader = post.likes if rel is Post.likes else post.recent
        want = expected if rel is Post.likes else expected[::-1]
        assert [like async for like in loader] == want


async def test_async_for_without_a_load_reads_every_shard(db: Database) -> None:
    post = await db.get(Post, post_id="p2")
    with count_requests(db) as log:
        seen = [like async for like in post.likes]
    assert seen == await stored_likes(db, "p2")
    assert log.operations == ["Query"] * SHARDS  # one small page each


async def test_many_parents_load_their_shards(db: Database) -> None:
    posts = await db.query(Post, post_id="p1", load=[Post.likes]).all()
    assert [p.post_id for p in posts] == ["p1"]
    assert posts[0].likes.loaded == await stored_likes(db, "p1")


# -- pages and cursors ----------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 3, 7, 40])
async def test_pages_walk_every_shard_exactly(db: Database, limit: int) -> None:
    expected = await stored_likes(db, "p1")
    post = await db.get(Post, post_id="p1")
    for loader, want in ((post.likes, expected), (post.recent, expected[::-1])):
        seen: list[Like] = []
        cursor: str | None = None
        pages = 0
        while True:
            with count_requests(db) as log:
                page = await loader.page(limit=limit, cursor=cursor)
            assert len(log) <= SHARDS
            assert len(page.items) <= limit
            seen += page.items
            pages += 1
            cursor = page.cursor
            if cursor is None:
                break
        assert seen == want
        assert pages <= -(-len(want) // limit) + 1


async def test_a_page_without_a_limit_is_in_order_and_complete(db: Database) -> None:
    post = await db.get(Post, post_id="p1")
    seen: list[Like] = []
    cursor: str | None = None
    while True:
        page = await post.likes.page(cursor=cursor)
        seen += page.items
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == await stored_likes(db, "p1")


def edit(cursor: str, change: Any) -> str:
    text, dot, signature = cursor.partition(".")
    body = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    change(body)
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=") + dot + signature


async def test_a_sharded_cursor_is_bound_to_its_parent_and_checked(db: Database) -> None:
    p1, p2 = await db.get(Post, post_id="p1"), await db.get(Post, post_id="p2")
    cursor = (await p1.likes.page(limit=5)).cursor
    assert cursor is not None
    with count_requests(db) as log:
        with pytest.raises(CursorError, match="different query"):
            await p2.likes.page(limit=5, cursor=cursor)
        with pytest.raises(CursorError, match="different query"):
            await p1.recent.page(limit=5, cursor=cursor)

        def other_partition(body: dict[str, Any]) -> None:
            body["p"]["k"]["pk"] = {"S": "POST#p2#0"}

        def another_shard(body: dict[str, Any]) -> None:
            body["p"]["s"] = (body["p"]["s"] + 1) % SHARDS  # the key is in its own shard only

        with pytest.raises(CursorError, match="another partition"):
            await p1.likes.page(limit=5, cursor=edit(cursor, other_partition))
        with pytest.raises(CursorError, match="another partition"):
            await p1.likes.page(limit=5, cursor=edit(cursor, another_shard))
        with pytest.raises(CursorError, match="malformed"):
            await p1.likes.page(limit=5, cursor=edit(cursor, lambda b: b["p"].pop("s")))
        with pytest.raises(CursorError, match="malformed"):
            await p1.likes.page(limit=5, cursor=edit(cursor, lambda b: b["p"].update(s=SHARDS)))
    assert len(log) == 0


async def test_signed_sharded_cursors_refuse_any_edit(
    db: Database, dynorm_server: RunningServer
) -> None:
    expected = await stored_likes(db, "p1")
    async with dynorm.connect(
        table,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=db.table_name,
        cursor_secret=b"s" * 32,
    ) as signed:
        post = await signed.get(Post, post_id="p1")
        page = await post.likes.page(limit=10)
        assert page.cursor is not None
        assert "." in page.cursor

        def another_shard(body: dict[str, Any]) -> None:
            body["p"]["s"] = (body["p"]["s"] + 1) % SHARDS

        def another_count(body: dict[str, Any]) -> None:
            body["n"] = 4

        with pytest.raises(CursorError, match="signature does not match"):
            await post.likes.page(limit=10, cursor=edit(page.cursor, another_shard))
        with pytest.raises(CursorError, match="signature does not match"):
            await post.likes.page(limit=10, cursor=edit(page.cursor, another_count))
        with pytest.raises(CursorError, match="not signed"):
            await post.likes.page(limit=10, cursor=page.cursor.partition(".")[0])
        rest = await post.likes.page(limit=100, cursor=page.cursor)
        assert page.items + rest.items == expected


# -- an index collection --------------------------------------------------------------------------


async def test_index_shards_load_and_page_in_order(db: Database) -> None:
    events = [Event(f"e{i:02d}", "ann", f"2026-01-{i % 28 + 1:02d}T{i:02d}") for i in range(20)]
    await db.put_all([Member("ann"), *events])
    expected = sorted(events, key=lambda e: e.at)
    with count_requests(db) as log:
        ann = await db.get(Member, username="ann", load=[Member.events.limit(6)])
    assert sorted(log.operations) == ["GetItem"] + ["Query"] * 4
    assert ann.events.loaded == expected[:6]
    assert [e async for e in ann.events] == expected
    page = await ann.events.page(limit=15)
    rest = await ann.events.page(limit=15, cursor=page.cursor)
    assert page.items + rest.items == expected
    assert rest.cursor is None


# -- writes through the relationship --------------------------------------------------------------


async def test_add_and_remove_are_one_write_each_in_the_childs_shard(db: Database) -> None:
    post = await db.get(Post, post_id="p1")
    like = Like("p1", "newcomer")
    with count_requests(db) as log:
        await db.add(post, Post.likes, like)
    assert log.operations == ["PutItem"]
    assert await db.get(Like, post_id="p1", user_id="newcomer") == like
    stored = [i for i in await raw_scan(db) if i["sk"]["S"] == "LIKE#newcomer"]
    assert [i["pk"]["S"] for i in stored] == [f"POST#p1#{shard_of(like)}"]
    assert like in [x async for x in post.likes]
    with count_requests(db) as log:
        await db.remove(post, Post.likes, like)
    assert log.operations == ["DeleteItem"]
    assert await stored_likes(db, "p1") == LIKES


async def test_a_cascade_delete_removes_the_children_of_every_shard(db: Database) -> None:
    with count_requests(db) as log:
        report = await db.delete(Post("p1"), cascade=True)
    assert report == CascadeReport({Post: 1, Like: len(LIKES)})
    # One Query per shard for each of the post's two relationships to its likes (each like is
    # deleted once all the same).
    assert log.count("Query") == 2 * SHARDS
    assert await stored_likes(db, "p1") == []
    assert await stored_likes(db, "p2") == OTHER_LIKES
    assert await db.get(Post, post_id="p2") == Post("p2")


@pytest.mark.transactions  # copies are rewritten with TransactWriteItems
async def test_copies_are_filled_and_rewritten_in_every_shard(db: Database) -> None:
    board = Board("b1", "Before")
    await db.put(board)
    for i in range(12):
        await db.add(board, Board.pins, Pin("b1", f"pin{i:02d}"))
    titles = {i["board_title"]["S"] for i in await raw_scan(db) if i["sk"]["S"].startswith("PIN#")}
    assert titles == {"Before"}
    await db.put(Board("b1", "After"))
    pins = [i for i in await raw_scan(db) if i["sk"]["S"].startswith("PIN#")]
    assert len(pins) == 12
    assert len({i["pk"]["S"] for i in pins}) > 1  # spread over shards
    assert {i["board_title"]["S"] for i in pins} == {"After"}
    loaded = await db.get(Board, board_id="b1", load=[Board.pins])
    assert [p.pin_id for p in loaded.pins.loaded] == [f"pin{i:02d}" for i in range(12)]


@pytest.mark.transactions
async def test_a_transaction_writes_and_deletes_children_in_their_shards(db: Database) -> None:
    added = Like("p2", "tx-user")
    async with db.transaction() as tx:
        tx.put(added)
        tx.delete(OTHER_LIKES[0])
    assert await db.get(Like, post_id="p2", user_id="tx-user") == added
    assert await stored_likes(db, "p2") == [added, *OTHER_LIKES[1:]]  # "t" sorts before "u"
    stored = [i for i in await raw_scan(db) if i["sk"]["S"] == "LIKE#tx-user"]
    assert [i["pk"]["S"] for i in stored] == [f"POST#p2#{shard_of(added)}"]


async def test_reads_of_one_partition_are_refused_saying_what_to_use(db: Database) -> None:
    post = await db.get(Post, post_id="p1")
    with count_requests(db) as log:
        with pytest.raises(DefinitionError, match=r"sharded \(Partition\(shards=8\)\)"):
            post.likes.query()
        with pytest.raises(KeyTemplateError, match="read the sharded collection"):
            await db.query(Like, post_id="p1").all()
    assert len(log) == 0


async def test_explain_shows_the_get_and_every_shards_query(db: Database) -> None:
    planned = db.explain.get(Post, post_id="p1", load=[Post.likes])
    with count_requests(db) as log:
        await db.get(Post, post_id="p1", load=[Post.likes])
    assert sorted(r.operation for r in planned) == sorted(log.operations)
    pks = [r.params["ExpressionAttributeValues"][":pk"]["S"] for r in planned[1:]]
    assert pks == [f"POST#p1#{shard}" for shard in range(SHARDS)]


async def test_the_shards_and_the_parent_are_in_flight_together(
    faulty_connect: FaultyConnect,
) -> None:
    """One round trip: every request of the load is held at once, none waits for another."""
    async with faulty_connect(table) as faulty:
        await faulty.direct.put_all([Post("p1"), *LIKES])
        proxy = faulty.proxy
        held = [proxy.pause("GetItem")] + [
            proxy.pause("Query", when=_queries_shard(shard)) for shard in range(SHARDS)
        ]
        load = asyncio.ensure_future(faulty.db.get(Post, post_id="p1", load=[Post.likes]))
        try:
            # Every request arrives while all of them are held: none waited for another's reply.
            await asyncio.wait_for(asyncio.gather(*(h.arrived.wait() for h in held)), timeout=30)
        finally:
            for h in held:
                h.release()
        post = await load
    assert post.likes.loaded == sorted(LIKES, key=lambda like: like.user_id)


def _queries_shard(shard: int) -> Callable[[dict[str, Any]], bool]:
    def test(body: dict[str, Any]) -> bool:
        value = body.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S")
        return bool(value == f"POST#p1#{shard}")

    return test
