"""Pages and cursors: ``limit=N`` means N children, cursors resume exactly, big collections page."""

from __future__ import annotations

import base64
from typing import Any

import pytest

import dynorm
from dynorm import Database, Page
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User

from .models import Book, Post, Reaction, Shelf, Sticker, Thread
from .raw import raw_collection
from .seed import BILLGATES, TICKET_123, load_seed

pytestmark = pytest.mark.integration

THREAD = Thread(thread_id="t1", title="paging")


def posts(n: int, *, body: str = "") -> list[Post]:
    return [Post(thread_id="t1", seq=i, post_id=f"p{i}", body=body) for i in range(n)]


def reactions(n: int) -> list[Reaction]:
    # Same sequence numbers as the posts, so a reaction sorts right after each post.
    return [Reaction(thread_id="t1", seq=i, reaction_id=f"r{i}") for i in range(n)]


@pytest.fixture
async def forum(forum_db: Database) -> Database:
    """Thread t1: the thread item, then 10 posts, each followed by a reaction."""
    await forum_db.put_all([THREAD, *posts(10), *reactions(10)])
    return forum_db


async def thread(db: Database) -> Thread:
    return await db.get(Thread, thread_id="t1")


async def test_the_collection_interleaves_entity_types(forum: Database) -> None:
    items = await raw_collection(forum, "pk", "THREAD#t1")
    assert [i["sk"]["S"] for i in items[:4]] == [
        "#METADATA#t1",
        "000000#POST#p0",
        "000000#REACTION#r0",
        "000001#POST#p1",
    ]


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 10])
async def test_a_page_holds_limit_children_whatever_else_is_in_the_collection(
    forum: Database, limit: int
) -> None:
    parent = await thread(forum)
    page = await parent.posts.page(limit=limit)
    assert page.items == posts(limit)
    assert all(type(p) is Post for p in page.items)

    query_page = await forum.query(Post, thread_id="t1").page(limit=limit)
    assert query_page.items == posts(limit)


async def test_a_page_of_a_prefix_collection_costs_one_request(seeded_org: Database) -> None:
    org = await seeded_org.get(Org, name="BIG")
    with count_requests(seeded_org) as log:
        page = await org.users.page(limit=4)
    assert log.operations == ["Query"]
    assert [u.username for u in page.items] == ["U00", "U01", "U02", "U03"]
    assert page.cursor is not None


@pytest.mark.parametrize("limit", [1, 3, 4, 10, 11])
async def test_a_cursor_chain_visits_every_child_once(forum: Database, limit: int) -> None:
    parent = await thread(forum)
    seen: list[Post] = []
    cursor: str | None = None
    pages = 0
    while True:
        page: Page[Post] = await parent.posts.page(limit=limit, cursor=cursor)
        pages += 1
        assert len(page.items) <= limit
        seen += page.items
        if page.cursor is None:
            break
        assert len(page.items) == limit  # only a full page promises more
        cursor = page.cursor
        assert pages <= 10, "the chain does not end"
    assert seen == posts(10)


async def test_a_query_cursor_chain_visits_every_item_once(seeded_org: Database) -> None:
    query = seeded_org.query(User, org_name="BIG")
    seen: list[str] = []
    page = await query.page(limit=5)
    seen += [u.username for u in page.items]
    while page.cursor is not None:
        page = await query.page(limit=5, cursor=page.cursor)
        seen += [u.username for u in page.items]
    assert seen == [f"U{i:02d}" for i in range(12)]
    assert page.cursor is None


async def test_the_last_page_has_no_cursor(seeded_org: Database) -> None:
    page = await seeded_org.query(User, org_name="BIG").page(limit=100)
    assert len(page.items) == 12
    assert page.cursor is None
    empty = await seeded_org.query(User, org_name="NOBODY").page(limit=5)
    assert empty.items == []
    assert empty.cursor is None


async def test_a_malformed_cursor_is_refused_before_sending(forum: Database) -> None:
    parent = await thread(forum)
    good = (await parent.posts.page(limit=2)).cursor
    assert good is not None
    bad_cursors = [
        "",
        "not a cursor",
        good[:-3],
        base64.urlsafe_b64encode(b'{"v": 1}').decode(),
        base64.urlsafe_b64encode(b"[1, 2, 3]").decode(),
    ]
    with count_requests(forum) as log:
        for bad in bad_cursors:
            with pytest.raises(dynorm.CursorError):
                await parent.posts.page(limit=2, cursor=bad)
            with pytest.raises(dynorm.CursorError):
                await forum.query(Post, thread_id="t1").page(limit=2, cursor=bad)
    assert len(log) == 0


async def test_a_cursor_from_another_query_is_refused(
    forum: Database, seeded_org: Database
) -> None:
    parent = await thread(forum)
    cursor = (await parent.posts.page(limit=2)).cursor
    assert cursor is not None
    other = Thread(thread_id="t2")
    await forum.put(other)
    with count_requests(forum) as log:
        with pytest.raises(dynorm.CursorError, match="different query"):
            await other.posts.page(limit=2, cursor=cursor)
        with pytest.raises(dynorm.CursorError, match="different query"):
            await forum.query(Post, thread_id="t1").reverse().page(limit=2, cursor=cursor)
        with pytest.raises(dynorm.CursorError, match="different query"):
            await forum.query(Reaction, thread_id="t2").page(limit=2, cursor=cursor)
    assert len(log) == 0

    users_cursor = (await seeded_org.query(User, org_name="BIG").page(limit=2)).cursor
    assert users_cursor is not None
    with pytest.raises(dynorm.CursorError):
        await parent.posts.page(limit=2, cursor=users_cursor)


async def test_a_cursor_survives_a_new_database_object(forum: Database) -> None:
    # Cursors are plain strings: a later request (another loader object) resumes where it left.
    first = await (await thread(forum)).posts.page(limit=4)
    assert first.cursor is not None
    rest = await (await thread(forum)).posts.page(limit=100, cursor=first.cursor)
    assert [*first.items, *rest.items] == posts(10)
    assert rest.cursor is None


async def test_bad_limits_are_refused_before_sending(forum: Database) -> None:
    parent = await thread(forum)
    with count_requests(forum) as log:
        for bad in (0, -1):
            with pytest.raises(dynorm.LimitExceededError):
                await parent.posts.page(limit=bad)
            with pytest.raises(dynorm.LimitExceededError):
                await forum.query(Post, thread_id="t1").page(limit=bad)
            with pytest.raises(dynorm.LimitExceededError):
                Thread.posts.limit(bad)
    assert len(log) == 0


# ~4 KB a post: 300 of them are ~1.2 MB, more than DynamoDB returns in one Query page (1 MB).
BIG_BODY = "x" * 4000
BIG_COUNT = 300


async def test_async_for_reads_past_dynamodbs_1mb_pages_in_order(forum_db: Database) -> None:
    stored = posts(BIG_COUNT, body=BIG_BODY)
    await forum_db.put_all([THREAD, *stored, *reactions(BIG_COUNT)])
    parent = await thread(forum_db)

    with count_requests(forum_db) as log:
        seen = [p async for p in parent.posts]
    assert [p.seq for p in seen] == list(range(BIG_COUNT))
    assert seen == stored
    # More than one page was needed, and each page was read once.
    # ~1.2 MB: one full 1 MB page, then the rest; no page is read twice, none ahead of need.
    assert len(log) == 2
    assert set(log.operations) == {"Query"}

    with count_requests(forum_db) as query_log:
        via_query = [p async for p in forum_db.query(Post, thread_id="t1")]
    assert via_query == stored
    assert query_log.operations == log.operations


async def test_a_page_larger_than_1mb_of_children_is_still_complete(forum_db: Database) -> None:
    stored = posts(BIG_COUNT, body=BIG_BODY)
    await forum_db.put_all([THREAD, *stored])
    parent = await thread(forum_db)
    page = await parent.posts.page(limit=BIG_COUNT - 1)
    assert page.items == stored[:-1]
    assert page.cursor is not None
    rest = await parent.posts.page(limit=BIG_COUNT, cursor=page.cursor)
    assert rest.items == stored[-1:]
    assert rest.cursor is None


# -- loaded children first, then the rest ------------------------------------------------------


@pytest.fixture
async def seeded_org(db: Database) -> Database:
    """Org BIG with 12 users U00..U11, and a neighbouring org whose users must never show."""
    await db.put_all(
        [
            Org(name="BIG"),
            *[User(org_name="BIG", username=f"U{i:02d}") for i in range(12)],
            Org(name="BIGGER"),
            User(org_name="BIGGER", username="U99"),
        ]
    )
    return db


async def test_a_limited_load_then_async_for_yields_every_child_once(
    seeded_org: Database,
) -> None:
    with count_requests(seeded_org) as log:
        org = await seeded_org.get(Org, name="BIG", load=[Org.users.limit(3)])
    assert log.operations == ["Query"]
    assert [u.username for u in org.users.loaded] == ["U00", "U01", "U02"]

    with count_requests(seeded_org) as log:
        every = [u async for u in org.users]
    assert [u.username for u in every] == [f"U{i:02d}" for i in range(12)]
    assert every[:3] == org.users.loaded
    # The loaded three cost nothing more; the other nine came in one Query.
    assert log.operations == ["Query"]

    # Iterating again gives the same children again, each once.
    assert [u async for u in org.users] == every
    assert await org.users.all() == every


async def test_a_full_load_then_async_for_sends_nothing(seeded_org: Database) -> None:
    org = await seeded_org.get(Org, name="BIG", load=[Org.users])
    assert len(org.users.loaded) == 12
    with count_requests(seeded_org) as log:
        every = [u async for u in org.users]
    assert every == org.users.loaded
    assert len(log) == 0


async def test_a_load_limit_larger_than_the_collection(seeded_org: Database) -> None:
    with count_requests(seeded_org) as log:
        org = await seeded_org.get(Org, name="BIG", load=[Org.users.limit(50)])
    assert log.operations == ["Query"]
    assert len(org.users.loaded) == 12
    with count_requests(seeded_org) as log:
        assert len(await org.users.all()) == 12
    assert len(log) == 0


async def test_a_limited_load_where_other_entities_sit_between_parent_and_children(
    forum: Database,
) -> None:
    parent = await forum.get(Thread, thread_id="t1", load=[Thread.posts.limit(3)])
    assert parent == THREAD
    assert parent.posts.loaded == posts(3)
    assert [p async for p in parent.posts] == posts(10)


async def test_children_without_a_sort_key_prefix_load_with_their_parent_in_one_query(
    forum: Database,
) -> None:
    # The posts' read spans the whole partition, so it passes the thread item too.
    with count_requests(forum) as log:
        parent = await forum.get(Thread, thread_id="t1", load=[Thread.posts])
    assert log.operations == ["Query"]
    assert parent == THREAD
    assert parent.posts.loaded == posts(10)
    with count_requests(forum) as log, pytest.raises(dynorm.ItemNotFoundError):
        await forum.get(Thread, thread_id="nope", load=[Thread.posts])
    assert log.operations == ["Query"]


# -- index collections page too ----------------------------------------------------------------


@pytest.fixture
async def many_tickets(db: Database) -> list[Ticket]:
    """BILLGATES with 12 tickets T00..T11 (seed items too); returned newest first."""
    await load_seed(db)
    created = TICKET_123.created
    tickets = [
        Ticket(ticket_id=f"T{i:02d}", org_name="MICROSOFT", username="BILLGATES", created=created)
        for i in range(12)
    ]
    await db.put_all(tickets)
    # Newest first by sort key: T11 … T00, then the seed's 456 and 123.
    every = await db.query(Ticket, "GSI1", org_name="MICROSOFT", username="BILLGATES").all()
    return list(reversed(every))


async def test_an_index_relationship_pages_newest_first(
    db: Database, many_tickets: list[Ticket]
) -> None:
    assert [t.ticket_id for t in many_tickets[:2]] == ["T11", "T10"]
    user = await db.get(User, org_name="MICROSOFT", username="BILLGATES")
    seen: list[Ticket] = []
    with count_requests(db) as log:
        page = await user.tickets.page(limit=5)
        seen += page.items
        while page.cursor is not None:
            page = await user.tickets.page(limit=5, cursor=page.cursor)
            seen += page.items
    assert seen == many_tickets
    assert set(log.operations) == {"Query"}
    assert len(log) == 3  # 14 tickets in pages of 5


async def test_an_index_load_with_a_limit_then_the_rest(
    db: Database, many_tickets: list[Ticket]
) -> None:
    with count_requests(db) as log:
        user = await db.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(4)]
        )
    assert log.operations == ["Query"]
    assert user == BILLGATES
    assert user.tickets.loaded == many_tickets[:4]
    with count_requests(db) as log:
        assert [t async for t in user.tickets] == many_tickets
    assert log.operations == ["Query"]


# -- a parent that sorts after its children, or before them, with more than a page of them ------

SHELF = Shelf(shelf_id="s1")


def books(n: int, *, body: str = "") -> list[Book]:
    return [Book(shelf_id="s1", title=f"T{i:04d}", body=body) for i in range(n)]


def stickers(n: int, *, body: str = "") -> list[Sticker]:
    return [Sticker(shelf_id="s1", n=i, body=body) for i in range(n)]


async def test_a_parent_after_its_children_loads_in_one_query(library_db: Database) -> None:
    await library_db.put_all([SHELF, *books(5), *stickers(2)])
    with count_requests(library_db) as log:
        shelf = await library_db.get(Shelf, shelf_id="s1", load=[Shelf.books])
    assert log.operations == ["Query"]
    assert shelf == SHELF
    assert shelf.books.loaded == books(5)
    with count_requests(library_db) as log:
        assert await shelf.books.all() == books(5)
    assert len(log) == 0


async def test_a_parent_before_its_children_loads_in_one_query(library_db: Database) -> None:
    await library_db.put_all([SHELF, *books(2), *stickers(5)])
    with count_requests(library_db) as log:
        shelf = await library_db.get(Shelf, shelf_id="s1", load=[Shelf.stickers])
    assert log.operations == ["Query"]
    assert shelf.stickers.loaded == stickers(5)


async def test_a_missing_parent_after_its_children_is_not_found(library_db: Database) -> None:
    await library_db.put_all(books(3))  # children whose parent item was never stored
    with pytest.raises(dynorm.ItemNotFoundError):
        await library_db.get(Shelf, shelf_id="s1", load=[Shelf.books])
    with pytest.raises(dynorm.ItemNotFoundError):
        await library_db.get(Shelf, shelf_id="s1", load=[Shelf.books.limit(1)])


@pytest.mark.parametrize("limit", [1, 3, 5, 6])
async def test_a_limited_load_of_children_before_their_parent(
    library_db: Database, limit: int
) -> None:
    await library_db.put_all([SHELF, *books(5), *stickers(2)])
    shelf = await library_db.get(Shelf, shelf_id="s1", load=[Shelf.books.limit(limit)])
    assert shelf == SHELF
    assert shelf.books.loaded == books(5)[:limit]
    assert [b async for b in shelf.books] == books(5)


async def test_both_relationships_in_one_load(library_db: Database) -> None:
    await library_db.put_all([SHELF, *books(4), *stickers(3)])
    shelf = await library_db.get(Shelf, shelf_id="s1", load=[Shelf.books, Shelf.stickers])
    assert shelf == SHELF
    assert shelf.books.loaded == books(4)
    assert shelf.stickers.loaded == stickers(3)
    with count_requests(library_db) as log:
        assert [b async for b in shelf.books] == books(4)
        assert [s async for s in shelf.stickers] == stickers(3)
    assert len(log) == 0


@pytest.mark.parametrize(
    "load",
    [
        [Shelf.books],
        [Shelf.stickers],
        [Shelf.books, Shelf.stickers],
        [Shelf.books.limit(200)],
        [Shelf.stickers.limit(200)],
    ],
    ids=["books", "stickers", "both", "books-limit", "stickers-limit"],
)
async def test_a_load_of_more_than_a_page_then_the_rest_visits_each_child_once(
    library_db: Database, load: list[Any]
) -> None:
    # 250 books and 250 stickers of ~4 KB: about 2 MB, at least two DynamoDB pages.
    every_book = books(250, body=BIG_BODY)
    every_sticker = stickers(250, body=BIG_BODY)
    await library_db.put_all([SHELF, *every_book, *every_sticker])

    shelf = await library_db.get(Shelf, shelf_id="s1", load=load)
    assert shelf == SHELF
    # Whatever came with the load is where the children start ...
    if shelf.books.is_loaded:
        assert shelf.books.loaded == every_book[: len(shelf.books.loaded)]
    if shelf.stickers.is_loaded:
        assert shelf.stickers.loaded == every_sticker[: len(shelf.stickers.loaded)]
    # ... and iterating goes on from there: every child once, in order.
    assert [b async for b in shelf.books] == every_book
    assert [s async for s in shelf.stickers] == every_sticker


# -- a limit that is exactly the number of children ---------------------------------------------


async def test_a_load_limited_to_exactly_all_children_knows_it_has_them_all(
    seeded_org: Database,
) -> None:
    # The parent rides along first; it must not use up the read's one-item look-ahead, or
    # iterating later costs a Query that finds nothing (DynamoDB returns a LastEvaluatedKey
    # whenever a page stops at its Limit, even at the end of the collection).
    with count_requests(seeded_org) as log:
        org = await seeded_org.get(Org, name="BIG", load=[Org.users.limit(12)])
    assert log.operations == ["Query"]
    assert len(org.users.loaded) == 12
    with count_requests(seeded_org) as log:
        assert [u async for u in org.users] == org.users.loaded
    assert len(log) == 0


async def test_an_index_load_limited_to_exactly_all_children(seeded: Database) -> None:
    with count_requests(seeded) as log:
        user = await seeded.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(2)]
        )
    assert log.operations == ["Query"]
    assert len(user.tickets.loaded) == 2
    with count_requests(seeded) as log:
        assert await user.tickets.all() == user.tickets.loaded
    assert len(log) == 0


async def test_a_page_of_exactly_the_rest_has_no_cursor(seeded_org: Database) -> None:
    org = await seeded_org.get(Org, name="BIG")
    with count_requests(seeded_org) as log:
        page = await org.users.page(limit=12)
    assert log.operations == ["Query"]
    assert len(page.items) == 12
    assert page.cursor is None


# -- cursors keep working while the collection changes ------------------------------------------


async def test_a_cursor_resumes_after_its_item_was_deleted(seeded_org: Database) -> None:
    query = seeded_org.query(User, org_name="BIG")
    first = await query.page(limit=3)
    assert [u.username for u in first.items] == ["U00", "U01", "U02"]
    await seeded_org.delete_all([*first.items[1:], User(org_name="BIG", username="U03")])
    second = await query.page(limit=3, cursor=first.cursor)
    assert [u.username for u in second.items] == ["U04", "U05", "U06"]


async def test_a_reverse_cursor_chain(seeded_org: Database) -> None:
    seen: list[str] = []
    page = await seeded_org.query(User, org_name="BIG").reverse().page(limit=5)
    seen += [u.username for u in page.items]
    while page.cursor is not None:
        # A new Query object for the same read accepts the cursor.
        again = seeded_org.query(User, org_name="BIG").reverse()
        page = await again.page(limit=5, cursor=page.cursor)
        seen += [u.username for u in page.items]
    assert seen == [f"U{i:02d}" for i in reversed(range(12))]
