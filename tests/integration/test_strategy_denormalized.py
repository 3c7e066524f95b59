"""``Denormalized``: children carry copies of parent fields (seed 003 §11.2).

Each book carries its author's birthdate, so every read path of a book (its author's partition,
the genre index) has it without a second request. ``db.add`` fills the copy; a change to the
author rewrites every stale copy (with the author in one transaction when it fits), refuses past
``max_fanout`` with nothing written, and ``db.sync_copies`` repairs copies on demand.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    ConditionFailedError,
    Database,
    Denormalized,
    ExpressionError,
    HasMany,
    Index,
    ItemNotFoundError,
    KeyTemplateError,
    LimitExceededError,
    Request,
    Table,
)
from dynorm.core.requests import PENDING
from dynorm.testing import Connect, count_requests

from .raw import raw_collection, raw_item, raw_put

pytestmark = pytest.mark.integration

table = Table(
    "rel-denormalized",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
)


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    birthdate: datetime.date
    country: str = "US"
    books = HasMany["Book"]("Book", via=Denormalized(copy={"birthdate": "author_birthdate"}))


@table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}", GSI1=("GENRE#{genre}", "BOOK#{title}"))
@attrs.define
class Book:
    author_name: str
    title: str
    genre: str
    author_birthdate: datetime.date | None = None


@table.model(pk="PUBLISHER#{name}", sk="PUBLISHER#{name}")
@attrs.define
class Publisher:
    name: str
    country: str
    editions = HasMany["Edition"](
        "Edition", via=Denormalized(copy={"country": "publisher_country"}, max_fanout=3)
    )


@table.model(pk="PUBLISHER#{publisher}", sk="EDITION#{isbn}")
@attrs.define
class Edition:
    publisher: str
    isbn: str
    publisher_country: str | None = None


@table.model(pk="SERIES#{name}", sk="SERIES#{name}")
@attrs.define
class Series:
    name: str
    tagline: str
    episodes = HasMany["Episode"](
        "Episode", via=Denormalized(copy={"tagline": "series_tagline"}, max_fanout=200)
    )


@table.model(pk="SERIES#{series}", sk="EPISODE#{number:04d}")
@attrs.define
class Episode:
    series: str
    number: int
    series_tagline: str | None = None


# Children found through an index: albums live in their own partitions.
@table.model(pk="LABEL#{name}", sk="LABEL#{name}", GSI2=("LABEL#{name}", "#LABEL#{name}"))
@attrs.define
class Label:
    name: str
    city: str
    albums = HasMany["Album"](
        "Album", via=Denormalized(copy={"city": "label_city"}, where=Index("GSI2"))
    )


@table.model(
    pk="ALBUM#{album_id}", sk="ALBUM#{album_id}", GSI2=("LABEL#{label}", "ALBUM#{album_id}")
)
@attrs.define
class Album:
    album_id: str
    label: str
    label_city: str | None = None


BORN = datetime.date(1929, 10, 21)
CORRECTED = datetime.date(1929, 10, 22)
LE_GUIN = Author("Ursula K. Le Guin", BORN)
TITLES = [("A Wizard of Earthsea", "fantasy"), ("The Dispossessed", "scifi"), ("Tehanu", "fantasy")]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


@pytest.fixture
async def shelf(db: Database) -> Database:
    """Le Guin and three books added through the relationship (copies filled)."""
    author = await db.put(attrs.evolve(LE_GUIN))
    for title, genre in TITLES:
        await db.add(author, Author.books, Book(author.name, title, genre))
    return db


async def set_copy(db: Database, title: str, birthdate: datetime.date | None) -> None:
    """Give one stored book another copy, as a tool that knows nothing of the copies would."""
    book = await db.get(Book, author_name=LE_GUIN.name, title=title)
    item = db.table.info(Book).encode(attrs.evolve(book, author_birthdate=birthdate))
    await raw_put(db, item)


def publisher_key(name: str) -> dict[str, Any]:
    return {"pk": {"S": f"PUBLISHER#{name}"}, "sk": {"S": f"PUBLISHER#{name}"}}


async def set_edition_copy(db: Database, isbn: str, country: str) -> None:
    edition = await db.get(Edition, publisher="Gollancz", isbn=isbn)
    await raw_put(
        db, db.table.info(Edition).encode(attrs.evolve(edition, publisher_country=country))
    )


async def set_episode_copy(db: Database, number: int, tagline: str) -> None:
    episode = await db.get(Episode, series="Expanse", number=number)
    await raw_put(db, db.table.info(Episode).encode(attrs.evolve(episode, series_tagline=tagline)))


async def stored_books(db: Database) -> list[Book]:
    return await db.query(Book, author_name=LE_GUIN.name).all()


async def stored_author(db: Database) -> Author:
    return await db.get(Author, name=LE_GUIN.name)


# -- filling and reading copies -------------------------------------------------------------------


async def test_add_fills_the_copy_in_one_put(db: Database) -> None:
    author = await db.put(attrs.evolve(LE_GUIN))
    book = Book(author.name, "Tehanu", "fantasy")
    with count_requests(db) as log:
        stored = await db.add(author, Author.books, book)
    assert log.operations == ["PutItem"]
    assert stored.author_birthdate == BORN
    item = await raw_item(db, {"pk": f"AUTHOR#{LE_GUIN.name}", "sk": "BOOK#Tehanu"})
    assert item is not None
    assert item["author_birthdate"] == {"S": "1929-10-21"}


async def test_add_overwrites_a_wrong_copy(db: Database) -> None:
    author = await db.put(attrs.evolve(LE_GUIN))
    stored = await db.add(author, Author.books, Book(author.name, "Tehanu", "fantasy", CORRECTED))
    assert stored.author_birthdate == BORN
    assert (await stored_books(db))[0].author_birthdate == BORN


async def test_remove_is_one_delete(shelf: Database) -> None:
    author = await shelf.get(Author, name=LE_GUIN.name, load=[Author.books])
    book = author.books.loaded[0]
    with count_requests(shelf) as log:
        await shelf.remove(author, Author.books, book)
    assert log.operations == ["DeleteItem"]
    assert book not in await stored_books(shelf)
    assert len(await stored_books(shelf)) == len(TITLES) - 1


async def test_add_refuses_a_book_of_another_author_before_sending(db: Database) -> None:
    author = await db.put(attrs.evolve(LE_GUIN))
    with count_requests(db) as log, pytest.raises(KeyTemplateError, match=r"Author\.books"):
        await db.add(author, Author.books, Book("Someone Else", "Dune", "scifi"))
    assert len(log) == 0
    assert await raw_collection(db, "pk", "AUTHOR#Someone Else") == []


async def test_another_index_returns_the_copy_without_a_second_read(shelf: Database) -> None:
    with count_requests(shelf) as log:
        fantasy = await shelf.query(Book, index="GSI1", genre="fantasy").all()
    assert log.operations == ["Query"]
    assert [b.title for b in fantasy] == ["A Wizard of Earthsea", "Tehanu"]
    assert all(b.author_birthdate == BORN for b in fantasy)


async def test_author_and_books_in_one_query(shelf: Database) -> None:
    with count_requests(shelf) as log:
        author = await shelf.get(Author, name=LE_GUIN.name, load=[Author.books])
    assert log.operations == ["Query"]
    assert author == LE_GUIN
    assert [b.title for b in author.books.loaded] == sorted(t for t, _ in TITLES)
    assert all(b.author_birthdate == BORN for b in author.books.loaded)


# -- rewriting copies -----------------------------------------------------------------------------


@pytest.mark.transactions
async def test_put_with_a_changed_field_rewrites_every_copy_in_one_transaction(
    shelf: Database,
) -> None:
    fixed = attrs.evolve(LE_GUIN, birthdate=CORRECTED)
    with count_requests(shelf) as log:
        await shelf.put(fixed)
    # The put is first tried on the condition that no copied field changed; it did, so the
    # children are read and rewritten with the parent in one transaction.
    assert log.operations == ["PutItem", "Query", "TransactWriteItems"]
    assert (await stored_author(shelf)).birthdate == CORRECTED
    books = await stored_books(shelf)
    assert len(books) == len(TITLES)
    assert all(b.author_birthdate == CORRECTED for b in books)
    fantasy = await shelf.query(Book, index="GSI1", genre="fantasy").all()
    assert all(b.author_birthdate == CORRECTED for b in fantasy)


@pytest.mark.transactions
async def test_put_rewrites_only_stale_copies_and_reports_how_many(
    shelf: Database, caplog: pytest.LogCaptureFixture
) -> None:
    # One book already carries the new value (written by hand): it is not rewritten.
    await set_copy(shelf, "Tehanu", CORRECTED)
    with caplog.at_level(logging.INFO, logger="dynorm"), count_requests(shelf) as log:
        await shelf.put(attrs.evolve(LE_GUIN, birthdate=CORRECTED))
    assert log.operations == ["PutItem", "Query", "TransactWriteItems"]
    assert [r.getMessage() for r in caplog.records] == ["rewrote 2 denormalized copies"]
    assert all(b.author_birthdate == CORRECTED for b in await stored_books(shelf))
    assert await shelf.sync_copies(attrs.evolve(LE_GUIN, birthdate=CORRECTED)) == 0


async def test_put_with_nothing_copied_changed_rewrites_nothing(shelf: Database) -> None:
    # No child is read: the put holds on the condition that the copied fields are unchanged.
    with count_requests(shelf) as log:
        await shelf.put(attrs.evolve(LE_GUIN))
    assert log.operations == ["PutItem"]
    with count_requests(shelf) as log:
        await shelf.put(attrs.evolve(LE_GUIN, country="UK"))  # not a copied field
    assert log.operations == ["PutItem"]
    assert (await stored_author(shelf)).country == "UK"
    assert all(b.author_birthdate == BORN for b in await stored_books(shelf))


@pytest.mark.transactions
async def test_update_of_a_copied_field_rewrites_every_copy(shelf: Database) -> None:
    author = await stored_author(shelf)
    with count_requests(shelf) as log:
        updated = await shelf.update(author, set={"birthdate": CORRECTED})
    # The update is tried on the condition that the copy is unchanged (refused, nothing
    # written), then sent in one transaction with the copies and read back.
    assert log.operations == ["UpdateItem", "Query", "TransactWriteItems", "GetItem"]
    assert updated.birthdate == CORRECTED
    assert (await stored_author(shelf)).birthdate == CORRECTED
    assert all(b.author_birthdate == CORRECTED for b in await stored_books(shelf))


@pytest.mark.transactions
async def test_update_of_a_copied_field_of_a_missing_parent_is_item_not_found(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(ItemNotFoundError, match="Author"):
        await db.update(LE_GUIN, set={"birthdate": CORRECTED})
    # Refused (nothing written), then refused in the transaction; one read shows the author is
    # missing.
    assert log.operations == ["UpdateItem", "Query", "TransactWriteItems", "GetItem"]
    assert (
        await raw_item(db, {"pk": f"AUTHOR#{LE_GUIN.name}", "sk": f"AUTHOR#{LE_GUIN.name}"}) is None
    )


@pytest.mark.transactions
async def test_update_of_a_missing_parent_with_orphaned_children_is_item_not_found(
    shelf: Database,
) -> None:
    await shelf.delete(LE_GUIN)  # the books stay behind
    with pytest.raises(ItemNotFoundError, match="Author"):
        await shelf.update(LE_GUIN, set={"birthdate": CORRECTED})
    assert all(b.author_birthdate == BORN for b in await stored_books(shelf))  # none rewritten


@pytest.mark.transactions
async def test_a_refused_condition_on_the_parent_is_condition_failed_with_nothing_written(
    shelf: Database,
) -> None:
    with count_requests(shelf) as log, pytest.raises(ConditionFailedError) as caught:
        await shelf.update(LE_GUIN, set={"birthdate": CORRECTED}, condition=Attr("country") == "UK")
    # The transaction was refused; one consistent read shows the author exists.
    assert log.operations == ["UpdateItem", "Query", "TransactWriteItems", "GetItem"]
    assert not isinstance(caught.value, ItemNotFoundError)
    assert caught.value.operation == "UpdateItem"
    with pytest.raises(ConditionFailedError):
        await shelf.put(attrs.evolve(LE_GUIN, birthdate=CORRECTED), overwrite=False)
    assert (await stored_author(shelf)).birthdate == BORN
    assert all(b.author_birthdate == BORN for b in await stored_books(shelf))


async def test_update_of_a_path_inside_a_copied_field_is_refused_before_sending(
    shelf: Database,
) -> None:
    with count_requests(shelf) as log, pytest.raises(ExpressionError, match="whole 'birthdate'"):
        await shelf.update(LE_GUIN, set={"birthdate.year": 1930})
    assert len(log) == 0


async def test_update_of_another_field_is_one_update(shelf: Database) -> None:
    author = await stored_author(shelf)
    with count_requests(shelf) as log:
        updated = await shelf.update(author, set={"country": "UK"})
    assert log.operations == ["UpdateItem"]
    assert updated.country == "UK"
    assert all(b.author_birthdate == BORN for b in await stored_books(shelf))


# -- the fan-out limit ----------------------------------------------------------------------------


@pytest.fixture
async def publisher(db: Database) -> Database:
    """A publisher whose four editions carry its country; max_fanout is 3."""
    parent = await db.put(Publisher("Gollancz", "UK"))
    for i in range(4):
        await db.add(parent, Publisher.editions, Edition("Gollancz", f"isbn-{i}"))
    return db


async def assert_publisher_unchanged(db: Database) -> None:
    assert (await db.get(Publisher, name="Gollancz")).country == "UK"
    editions = await db.query(Edition, publisher="Gollancz").all()
    assert len(editions) == 4
    assert all(e.publisher_country == "UK" for e in editions)


async def test_put_past_max_fanout_is_refused_with_nothing_written(publisher: Database) -> None:
    with count_requests(publisher) as log, pytest.raises(LimitExceededError) as caught:
        await publisher.put(Publisher("Gollancz", "US"))
    # The conditional put was refused (the country changed): nothing written, then the children
    # are counted.
    assert log.operations == ["PutItem", "Query"]
    message = str(caught.value)
    assert "Publisher.editions" in message
    assert "max_fanout=3" in message
    assert "nothing was written" in message
    await assert_publisher_unchanged(publisher)


async def test_update_past_max_fanout_is_refused_with_nothing_written(publisher: Database) -> None:
    parent = await publisher.get(Publisher, name="Gollancz")
    with count_requests(publisher) as log, pytest.raises(LimitExceededError, match="max_fanout"):
        await publisher.update(parent, set={"country": "US"})
    assert log.operations == ["UpdateItem", "Query"]
    await assert_publisher_unchanged(publisher)


async def test_sync_copies_past_max_fanout_is_refused(publisher: Database) -> None:
    await raw_put(
        publisher, {**publisher_key("Gollancz"), "name": {"S": "Gollancz"}, "country": {"S": "US"}}
    )
    with count_requests(publisher) as log, pytest.raises(LimitExceededError):
        await publisher.sync_copies(Publisher("Gollancz", "UK"))
    # sync_copies follows the stored parent (US), whatever the object passed holds.
    assert log.operations == ["GetItem", "Query"]
    editions = await publisher.query(Edition, publisher="Gollancz").all()
    assert all(e.publisher_country == "UK" for e in editions)


@pytest.mark.transactions
async def test_max_fanout_counts_only_stale_copies(publisher: Database) -> None:
    await set_edition_copy(publisher, "isbn-0", "US")  # already carries the new value
    with count_requests(publisher) as log:
        await publisher.put(Publisher("Gollancz", "US"))
    assert log.operations == ["PutItem", "Query", "TransactWriteItems"]
    editions = await publisher.query(Edition, publisher="Gollancz").all()
    assert all(e.publisher_country == "US" for e in editions)


# -- sync_copies ----------------------------------------------------------------------------------


@pytest.mark.transactions
async def test_sync_copies_repairs_and_counts(shelf: Database) -> None:
    # Two books written by another tool with a wrong copy.
    await set_copy(shelf, "Tehanu", None)
    await set_copy(shelf, "The Dispossessed", CORRECTED)
    author = await stored_author(shelf)
    with count_requests(shelf) as log:
        rewritten = await shelf.sync_copies(author)
    assert rewritten == 2
    # The stored parent, its children, then the stale copies in one transaction.
    assert log.operations == ["GetItem", "Query", "TransactWriteItems"]
    assert all(b.author_birthdate == BORN for b in await stored_books(shelf))
    assert await stored_author(shelf) == LE_GUIN


async def test_sync_copies_with_nothing_stale_reads_once_and_returns_zero(shelf: Database) -> None:
    author = await stored_author(shelf)
    with count_requests(shelf) as log:
        assert await shelf.sync_copies(author) == 0
    assert log.operations == ["GetItem", "Query"]


# -- more writes than a transaction holds ----------------------------------------------------------


async def store_series(db: Database, episodes: int, tagline: str = "old") -> Series:
    series = await db.put(Series("Expanse", tagline))
    await db.put_all([Episode("Expanse", n, tagline) for n in range(episodes)])
    return series


async def episode_taglines(db: Database) -> set[str | None]:
    return {e.series_tagline for e in await db.query(Episode, series="Expanse").all()}


@pytest.mark.transactions
async def test_put_beyond_a_transaction_writes_the_parent_then_checked_batches(
    db: Database,
) -> None:
    await store_series(db, 120)
    with count_requests(db) as log:
        await db.put(Series("Expanse", "new"))
    # Refused conditional put; the children counted; the parent alone (marked pending); the
    # children read again after it; the 120 copies in two transactions that each check the
    # parent's value; the pending mark removed.
    assert log.operations == [
        *["PutItem", "Query", "PutItem", "Query"],
        *["TransactWriteItems"] * 2,
        "UpdateItem",
    ]
    assert (await db.get(Series, name="Expanse")).tagline == "new"
    assert await episode_taglines(db) == {"new"}


@pytest.mark.transactions
async def test_update_beyond_a_transaction_writes_the_parent_then_the_copies(db: Database) -> None:
    series = await store_series(db, 120)
    with count_requests(db) as log:
        updated = await db.update(series, set={"tagline": "newer"})
    assert updated.tagline == "newer"
    # Refused on the unchanged-copy condition, sent, and its pending mark removed at the end.
    assert log.count("UpdateItem") == 3
    assert log.count("TransactWriteItems") == 2
    assert "GetItem" not in log.operations  # the update itself returned the item
    assert await episode_taglines(db) == {"newer"}


@pytest.mark.transactions
async def test_sync_copies_beyond_a_transaction_counts_every_rewrite(db: Database) -> None:
    await store_series(db, 120, tagline="stale")
    series = await db.put(Series("Expanse", "fresh"))  # rewrites them all already
    assert await episode_taglines(db) == {"fresh"}
    for n in range(110):
        await set_episode_copy(db, n, "stale")
    with count_requests(db) as log:
        assert await db.sync_copies(series) == 110
    assert log.count("TransactWriteItems") == 2
    assert await episode_taglines(db) == {"fresh"}


@pytest.mark.transactions
async def test_ninety_nine_copies_and_the_parent_fit_one_transaction(db: Database) -> None:
    await store_series(db, 99)
    with count_requests(db) as log:
        await db.put(Series("Expanse", "new"))
    assert log.operations == ["PutItem", "Query", "TransactWriteItems"]
    assert await episode_taglines(db) == {"new"}


@pytest.mark.transactions
async def test_one_hundred_copies_and_the_parent_do_not(db: Database) -> None:
    await store_series(db, 100)
    with count_requests(db) as log:
        await db.put(Series("Expanse", "new"))
    assert log.operations == [
        *["PutItem", "Query", "PutItem", "Query"],
        *["TransactWriteItems"] * 2,
        "UpdateItem",
    ]
    assert await episode_taglines(db) == {"new"}


# -- children found through an index ---------------------------------------------------------------


@pytest.mark.transactions
async def test_put_all_of_a_parent_left_pending_repairs_its_copies(shelf: Database) -> None:
    # A rename that failed part-way: the author holds the new value and dynorm's pending mark,
    # one book still holds the old copy. Writing the author again (here in a batch, whose
    # parents are read back first, on either request path) must finish the fan-out.
    author = await shelf.put(attrs.evolve(LE_GUIN, birthdate=CORRECTED))
    await set_copy(shelf, TITLES[0][0], BORN)
    key = {"pk": {"S": f"AUTHOR#{LE_GUIN.name}"}, "sk": {"S": f"AUTHOR#{LE_GUIN.name}"}}
    await shelf.send(
        Request(
            "UpdateItem",
            {
                "TableName": shelf.table_name,
                "Key": key,
                "UpdateExpression": "SET #pending = :token",
                "ExpressionAttributeNames": {"#pending": PENDING},
                "ExpressionAttributeValues": {":token": {"S": "a-lost-rename"}},
            },
        )
    )
    assert [b.author_birthdate for b in await stored_books(shelf)].count(BORN) == 1

    await shelf.put_all([author])

    assert all(b.author_birthdate == CORRECTED for b in await stored_books(shelf))
    stored = await raw_item(shelf, {"pk": key["pk"]["S"], "sk": key["sk"]["S"]})
    assert stored is not None
    assert PENDING not in stored


@pytest.fixture
async def label(db: Database) -> Database:
    parent = await db.put(Label("Sub Pop", "Seattle"))
    for album_id in ("a1", "a2"):
        await db.add(parent, Label.albums, Album(album_id, "Sub Pop"))
    await db.put(Label("Other Label", "Elsewhere"))
    await db.put(Album("a3", "Other Label"))  # its copy is filled from its label
    return db


async def test_index_placed_children_get_copies_and_load_in_one_query(label: Database) -> None:
    with count_requests(label) as log:
        parent = await label.get(Label, name="Sub Pop", load=[Label.albums])
    assert log.operations == ["Query"]
    assert parent == Label("Sub Pop", "Seattle")
    assert parent.albums.loaded == [
        Album("a1", "Sub Pop", "Seattle"),
        Album("a2", "Sub Pop", "Seattle"),
    ]


@pytest.mark.transactions
async def test_index_placed_copies_are_rewritten(label: Database) -> None:
    with count_requests(label) as log:
        await label.put(Label("Sub Pop", "Tacoma"))
    assert log.operations == ["PutItem", "Query", "TransactWriteItems"]
    albums = [await label.get(Album, album_id=a) for a in ("a1", "a2", "a3")]
    assert [a.label_city for a in albums] == ["Tacoma", "Tacoma", "Elsewhere"]
