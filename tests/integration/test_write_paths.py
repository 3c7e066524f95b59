"""Every write path keeps a strategy's rules: copies on put_all, transactions and child moves;
children's copies filled on their own writes; cascading deletes; explain for batches.

Request counts are asserted where the planner promises them. The stored data is read back
through the mapper after each write.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import pytest

import dynorm.io.runner
from dynorm import (
    GSI,
    Database,
    Denormalized,
    DynormError,
    HasMany,
    Index,
    ItemNotFoundError,
    LimitExceededError,
    Request,
    Table,
)
from dynorm.core.steps import Plan, Step, request_of
from dynorm.testing import Connect, count_requests
from tests.seed_models import Org, Ticket, User

from .raw import raw_item

pytestmark = pytest.mark.integration

table = Table(
    "write-paths",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
)


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    birthdate: datetime.date
    books = HasMany["Book"](
        "Book", via=Denormalized(copy={"birthdate": "author_birthdate"}, max_fanout=500)
    )


@table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}")
@attrs.define
class Book:
    author_name: str
    title: str
    author_birthdate: datetime.date | None = None


@table.model(pk="LABEL#{name}", sk="LABEL#{name}", GSI1=("LABEL#{name}", "#LABEL#{name}"))
@attrs.define
class Label:
    name: str
    city: str
    albums = HasMany["Album"](
        "Album", via=Denormalized(copy={"city": "label_city"}, where=Index("GSI1"))
    )


@table.model(
    pk="ALBUM#{album_id}", sk="ALBUM#{album_id}", GSI1=("LABEL#{label}", "ALBUM#{album_id}")
)
@attrs.define
class Album:
    album_id: str
    label: str
    label_city: str | None = None


BORN = datetime.date(1929, 10, 21)
LATER = datetime.date(1930, 1, 1)
LATEST = datetime.date(1931, 1, 1)


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def births(db: Database, author: str = "Le Guin") -> set[datetime.date | None]:
    return {b.author_birthdate for b in await db.query(Book, author_name=author).all()}


async def set_copy(db: Database, title: str, birthdate: datetime.date) -> None:
    """Change one book's copy as a tool that knows nothing of copies would."""
    book = Book("Le Guin", title, birthdate)
    await db.send(
        Request("PutItem", {"TableName": db.table_name, "Item": db.table.info(Book).encode(book)})
    )


async def shelf(db: Database, books: int = 3) -> Author:
    author = await db.put(Author("Le Guin", BORN))
    await db.put_all([Book("Le Guin", f"T{i:03d}") for i in range(books)])
    return author


# -- children written on their own get their copies ---------------------------------------------


async def test_put_of_a_child_fills_its_copy_from_the_stored_parent(db: Database) -> None:
    await db.put(Author("Le Guin", BORN))
    with count_requests(db) as log:
        await db.put(Book("Le Guin", "Tehanu", author_birthdate=LATER))  # a wrong copy given
    # The parent read, the child written, the parent read again: a rename that landed between
    # the two would have its value rewritten into the copy.
    assert log.operations == ["BatchGetItem", "PutItem", "BatchGetItem"]
    assert (await db.get(Book, author_name="Le Guin", title="Tehanu")).author_birthdate == BORN


async def test_put_all_of_children_reads_their_parents_in_one_batch(db: Database) -> None:
    await db.put_all([Author("Le Guin", BORN), Author("Butler", LATER)])
    books = [Book(a, f"T{i}") for a in ("Le Guin", "Butler") for i in range(30)]
    with count_requests(db) as log:
        assert await db.put_all(books) == 60
    assert log.operations == ["BatchGetItem", *["BatchWriteItem"] * 3, "BatchGetItem"]
    assert await births(db, "Le Guin") == {BORN}
    assert await births(db, "Butler") == {LATER}


async def test_put_all_of_a_parent_and_its_children_reads_nothing(db: Database) -> None:
    with count_requests(db) as log:
        await db.put_all([Author("Le Guin", BORN), *(Book("Le Guin", f"T{i}") for i in range(3))])
    # The author is taken from the batch itself; one consistent read asks whether it is stored
    # already (its copies might need rewriting), and it is not.
    assert log.operations == ["BatchGetItem", "BatchWriteItem"]
    assert await births(db) == {BORN}


async def test_a_child_of_a_parent_that_is_not_stored_is_refused_with_nothing_written(
    db: Database,
) -> None:
    with pytest.raises(ItemNotFoundError, match=r"put the parent first"):
        await db.put_all([Book("Nobody", "Ghost"), Book("Nobody", "Ghost 2")])
    with pytest.raises(ItemNotFoundError, match=r"Author\.books"):
        await db.put(Book("Nobody", "Ghost"))
    assert await db.query(Book, author_name="Nobody").all() == []


async def test_an_update_that_moves_a_child_takes_its_new_parents_values(db: Database) -> None:
    sub_pop = await db.put(Label("Sub Pop", "Seattle"))
    await db.put(Label("4AD", "London"))
    album = await db.add(sub_pop, Label.albums, Album("a1", "Sub Pop"))
    assert album.label_city == "Seattle"
    with count_requests(db) as log:
        moved = await db.update(album, set={"label": "4AD"})
    assert log.operations == ["GetItem", "UpdateItem"]
    assert moved.label_city == "London"
    london = await db.get(Label, name="4AD", load=[Label.albums])
    assert london.albums.loaded == [Album("a1", "4AD", "London")]


async def test_a_move_to_a_parent_that_is_not_stored_is_refused(db: Database) -> None:
    sub_pop = await db.put(Label("Sub Pop", "Seattle"))
    album = await db.add(sub_pop, Label.albums, Album("a1", "Sub Pop"))
    with count_requests(db) as log, pytest.raises(ItemNotFoundError, match="not stored"):
        await db.update(album, set={"label": "Nowhere"})
    assert log.operations == ["GetItem"]
    assert (await db.get(Album, album_id="a1")).label == "Sub Pop"


# -- parents written by any path rewrite the copies ---------------------------------------------


@pytest.mark.transactions
async def test_put_all_of_a_changed_parent_rewrites_its_copies(db: Database) -> None:
    await shelf(db)
    with count_requests(db) as log:
        await db.put_all([Author("Le Guin", LATER)])
    # Stored copied values read; children counted; the batch (the author marked pending);
    # children read again; one transaction that checks the parent and rewrites the three
    # copies; the pending mark removed.
    assert log.operations == [
        "BatchGetItem",
        "Query",
        "BatchWriteItem",
        "Query",
        "TransactWriteItems",
        "UpdateItem",
    ]
    assert await births(db) == {LATER}


async def test_put_all_of_an_unchanged_parent_reads_no_child(db: Database) -> None:
    await shelf(db)
    with count_requests(db) as log:
        await db.put_all([Author("Le Guin", BORN)])
    assert log.operations == ["BatchGetItem", "BatchWriteItem"]


@pytest.mark.transactions
async def test_a_transaction_rewrites_the_copies_its_put_changes(db: Database) -> None:
    await shelf(db)
    with count_requests(db) as log:
        async with db.transaction() as tx:
            tx.put(Author("Le Guin", LATER))
    # The stored author shows the copied field changes; its children join the transaction.
    assert log.operations == ["BatchGetItem", "Query", "TransactWriteItems"]
    assert await births(db) == {LATER}


@pytest.mark.transactions
async def test_a_transaction_rewrites_the_copies_its_update_changes(db: Database) -> None:
    author = await shelf(db)
    async with db.transaction() as tx:
        tx.update(author, set={"birthdate": LATER})
    assert (await db.get(Author, name="Le Guin")).birthdate == LATER
    assert await births(db) == {LATER}


@pytest.mark.transactions
async def test_a_transaction_puts_a_child_with_its_copy(db: Database) -> None:
    await db.put(Author("Le Guin", BORN))
    async with db.transaction() as tx:
        tx.put(Book("Le Guin", "Tehanu"))
    assert await births(db) == {BORN}


@pytest.mark.transactions
async def test_a_transaction_too_small_for_the_copies_is_refused_before_sending(
    db: Database,
) -> None:
    await shelf(db, books=100)
    with count_requests(db) as log, pytest.raises(LimitExceededError, match=r"db\.put"):
        async with db.transaction() as tx:
            tx.put(Author("Le Guin", LATER))
    assert log.operations == ["BatchGetItem", "Query"]
    assert await births(db) == {BORN}


class Stepper:
    """Runs a write plan one step at a time against the server, to interleave two writers.

    moto's server does not isolate concurrent transactions (a refused one restores the whole
    table as it was when it began), so races are played out step by step instead, exactly as
    DynamoDB would order them.
    """

    def __init__(self, db: Database, plan: Plan[Any]) -> None:
        self.db, self.plan, self.done = db, plan, False
        self.step: Step = next(plan)

    def _next(self, send: Callable[[], Step]) -> None:
        try:
            self.step = send()
        except StopIteration:
            self.done = True

    async def advance(self) -> None:
        error: DynormError | None = None
        try:
            value = await self.db._runner.step(self.step)
        except DynormError as exc:
            error = exc
        if error is not None:
            failure = error
            self._next(lambda: self.plan.throw(failure))
        else:
            self._next(lambda: self.plan.send(value))

    async def until(self, operation: str) -> None:
        """Run up to (not including) the first step that sends ``operation``."""
        while not self.done and operation not in [r.operation for r in request_of(self.step)]:
            await self.advance()
        assert not self.done, f"the plan ended before sending {operation}"

    async def finish(self) -> None:
        while not self.done:
            await self.advance()


@pytest.mark.transactions
async def test_an_older_renames_copies_never_overwrite_a_newer_ones(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # moto applies a refused transaction's writes and then restores the whole table as it was;
    # two refused transactions at once can restore each other's writes. Send them one by one.
    monkeypatch.setattr(dynorm.io.runner, "SEND_ALL_WINDOW", 1)
    await shelf(db, books=150)
    older = Stepper(db, db.writes.put(Author("Le Guin", LATER)))
    await older.until("TransactWriteItems")  # its parent is written; its copies are not yet
    newer = Stepper(db, db.writes.put(Author("Le Guin", LATEST)))
    await newer.finish()
    assert await births(db) == {LATEST}
    await older.finish()  # its copy transactions check the parent: they are refused
    assert (await db.get(Author, name="Le Guin")).birthdate == LATEST
    assert await births(db) == {LATEST}


@pytest.mark.transactions
async def test_a_rename_that_lands_last_rewrites_what_an_earlier_one_wrote(db: Database) -> None:
    await shelf(db, books=150)
    late = Stepper(db, db.writes.put(Author("Le Guin", LATER)))
    await late.until("PutItem")  # tried, refused (the value changes), children counted
    await late.advance()
    early = Stepper(db, db.writes.put(Author("Le Guin", LATEST)))
    await early.finish()
    await late.finish()  # its parent write lands last, then it reads the children again
    assert (await db.get(Author, name="Le Guin")).birthdate == LATER
    assert await births(db) == {LATER}


@pytest.mark.transactions
async def test_a_child_changed_between_the_read_and_the_transaction_is_read_again(
    db: Database,
) -> None:
    await shelf(db, books=10)
    await set_copy(db, "T003", LATER)  # already holds the new value: checked, not rewritten
    writer = Stepper(db, db.writes.put(Author("Le Guin", LATER)))
    await writer.until("TransactWriteItems")  # children read
    await set_copy(db, "T003", LATEST)  # another writer changes that copy meanwhile
    with count_requests(db) as log:
        await writer.finish()
    # Every child is in the transaction (rewritten or checked): it is refused, read again, sent.
    assert log.operations == ["TransactWriteItems", "Query", "TransactWriteItems"]
    assert await births(db) == {LATER}


# -- cascading deletes ---------------------------------------------------------------------------


async def stored_keys(db: Database, *keys: dict[str, str]) -> list[bool]:
    return [await raw_item(db, key) is not None for key in keys]


async def test_delete_with_cascade_removes_partition_children_in_batches(
    dynorm_connect: Connect,
) -> None:
    from tests.seed_models import app  # noqa: PLC0415 - the seed table, only for this test

    async with dynorm_connect(app) as seed:
        org = await seed.put(Org("ACME"))
        await seed.put_all([User("ACME", f"u{i:02d}") for i in range(30)])
        await seed.put(Org("OTHER"))
        await seed.put(User("OTHER", "keep"))
        with count_requests(seed) as log:
            report = await seed.delete(org, cascade=True)
        assert report.total == 31
        # The org's users, then each user's tickets (none here); 30 deletes, then the org.
        # Requests, not attempts: on a loaded machine one of the 30 concurrent Queries may time
        # out and be sent again, which is the retry policy at work, not another request.
        sent = [event.operation for event in log.events if event.attempt == 1]
        assert sent == [
            "GetItem",
            "Query",
            *["Query"] * 30,
            "UpdateItem",
            "BatchWriteItem",
            "BatchWriteItem",
            "DeleteItem",
        ]
        assert await seed.query(User, org_name="ACME").all() == []
        assert await seed.query(User, org_name="OTHER").all() == [User("OTHER", "keep")]


async def test_delete_with_cascade_removes_index_children(dynorm_connect: Connect) -> None:
    from tests.seed_models import app  # noqa: PLC0415 - the seed table, only for this test

    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    async with dynorm_connect(app) as seed:
        user = await seed.put(User("ACME", "wile"))
        await seed.put_all([Ticket(f"t{i}", "ACME", "wile", when) for i in range(3)])
        await seed.put(Ticket("other", "ACME", "road", when))
        await seed.delete(User, org_name="ACME", username="wile", cascade=True)
        assert await stored_keys(
            seed,
            {"pk": "TICKET#t0", "sk": "TICKET#t0"},
            {"pk": "TICKET#other", "sk": "TICKET#other"},
            {"pk": "ORG#ACME", "sk": "USER#wile"},
        ) == [False, True, False]
        del user


async def test_delete_without_cascade_leaves_the_children(db: Database) -> None:
    author = await shelf(db)
    with count_requests(db) as log:
        await db.delete(author)
    assert log.operations == ["DeleteItem"]
    assert len(await db.query(Book, author_name="Le Guin").all()) == 3


# -- explain -------------------------------------------------------------------------------------


async def test_explain_shows_the_batches_put_all_and_delete_all_send(db: Database) -> None:
    books = [Author(f"A{i:02d}", BORN) for i in range(30)]
    requests = db.explain.put_all(books)
    # Parents with copies: one consistent read tells whether their copied fields change.
    assert [r.operation for r in requests] == ["BatchGetItem", "BatchWriteItem", "BatchWriteItem"]
    assert [len(r.params["RequestItems"][db.table_name]) for r in requests[1:]] == [25, 5]
    deletes = db.explain.delete_all(books)
    assert [len(r.params["RequestItems"][db.table_name]) for r in deletes] == [25, 5]
    with count_requests(db) as log:
        await db.put_all(books)
    assert log.operations == [r.operation for r in requests]


@pytest.mark.transactions
async def test_explain_shows_a_transaction_as_sent(db: Database) -> None:
    async with db.transaction() as tx:
        tx.delete(Author("Le Guin", BORN))
        (request,) = tx.explain()
        assert request.operation == "TransactWriteItems"
        assert [next(iter(a)) for a in request.params["TransactItems"]] == ["Delete"]
