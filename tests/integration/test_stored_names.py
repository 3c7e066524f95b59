"""Fields stored under other attribute names, key-only fields and a type attribute, end to end.

Every write path (put, update, put_all, transactions, denormalized copies, embedded children)
must write the stored names and every read path must read them back; the raw items are checked
as DynamoDB holds them.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator

import attrs
import pytest

import dynorm
from dynorm import (
    GSI,
    Attr,
    ConditionFailedError,
    Database,
    Denormalized,
    Embedded,
    HasMany,
    Index,
    ItemNotFoundError,
    Partition,
    Table,
)
from dynorm.testing import Connect, count_requests

from .raw import raw_item

pytestmark = pytest.mark.integration

table = Table(
    "stored-names",
    pk="PK",
    sk="SK",
    indexes=[GSI("GSI1", pk="GSI1-PK", sk="GSI1-SK")],
    type_attribute="Entity Type",
)


@attrs.define
class Address:
    nickname: str = dynorm.field(name="Nick")
    city: str = dynorm.field(name="City.Name")


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}", entity="author")
@attrs.define
class Author:
    name: str = dynorm.field(name="Name")
    born: datetime.date = dynorm.field(name="Born")
    books = HasMany["Book"]("Book", via=Denormalized(copy={"born": "author_born"}))
    addresses = HasMany[Address](Address, via=Embedded(key="nickname"))
    drafts = HasMany["Draft"]("Draft", via=Partition())


@table.model(
    pk="AUTHOR#{author}",
    sk="BOOK#{title}",
    GSI1=("GENRE#{genre}", "BOOK#{title}"),
    entity="book",
)
@attrs.define
class Book:
    author: str = dynorm.field(key_only=True)
    title: str = dynorm.field(name="Title")
    genre: str = dynorm.field(key_only=True)
    author_born: datetime.date | None = dynorm.field(name="Author-Born", default=None)
    pages: int = dynorm.field(name="Page Count", default=0)


# Same templates as Book, told apart only by the type attribute.
@table.model(pk="AUTHOR#{author}", sk="BOOK#{title}", entity="draft")
@attrs.define
class Draft:
    author: str
    title: str


@table.model(pk="GENRE#{genre}", sk="GENRE#{genre}", GSI1=("GENRE#{genre}", "#"), entity="genre")
@attrs.define
class Genre:
    genre: str = dynorm.field(name="Genre")
    books = HasMany[Book](Book, via=Index("GSI1"))


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


BORN = datetime.date(1950, 1, 2)


async def test_items_are_written_under_stored_names(db: Database) -> None:
    author = Author("ann", BORN)
    await db.put(author)
    await db.add(author, Author.books, Book("ann", "Dune", "scifi", pages=300))
    book = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "BOOK#Dune"})
    assert book == {
        "PK": {"S": "AUTHOR#ann"},
        "SK": {"S": "BOOK#Dune"},
        "GSI1-PK": {"S": "GENRE#scifi"},
        "GSI1-SK": {"S": "BOOK#Dune"},
        "Entity Type": {"S": "book"},
        "Title": {"S": "Dune"},
        "Author-Born": {"S": "1950-01-02"},
        "Page Count": {"N": "300"},
    }
    assert await db.get(Book, author="ann", title="Dune") == Book("ann", "Dune", "scifi", BORN, 300)


async def test_updates_and_conditions_name_fields(db: Database) -> None:
    await db.put_all([Author("ann", BORN), Book("ann", "Dune", "scifi", pages=300)])
    book = await db.get(Book, author="ann", title="Dune")
    updated = await db.update(
        book, set={"pages": 320, "genre": "classic"}, condition=Attr("pages") == 300
    )
    assert updated.pages == 320
    assert updated.genre == "classic"
    raw = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "BOOK#Dune"})
    assert raw is not None
    assert raw["Page Count"] == {"N": "320"}
    assert raw["GSI1-PK"] == {"S": "GENRE#classic"}
    assert "genre" not in raw
    with pytest.raises(ConditionFailedError):
        await db.update(updated, set={"pages": 1}, condition=Attr("pages") == 300)


@pytest.mark.transactions  # dynalite has no transactions
async def test_denormalized_copies_follow_stored_names(db: Database) -> None:
    author = Author("ann", BORN)
    await db.put(author)
    await db.add(author, Author.books, Book("ann", "Dune", "scifi"))
    author.born = datetime.date(1951, 3, 4)
    await db.put(author)
    raw = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "BOOK#Dune"})
    assert raw is not None
    assert raw["Author-Born"] == {"S": "1951-03-04"}
    parent = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "AUTHOR#ann"})
    assert parent is not None
    assert parent["Born"] == {"S": "1951-03-04"}


async def test_embedded_children_keep_nested_stored_names(db: Database) -> None:
    author = Author("ann", BORN)
    await db.put(author)
    await db.add(author, Author.addresses, Address("home", "Paris"))
    raw = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "AUTHOR#ann"})
    assert raw is not None
    assert raw["addresses"] == {
        "M": {"home": {"M": {"Nick": {"S": "home"}, "City.Name": {"S": "Paris"}}}}
    }
    loaded = await db.get(Author, name="ann", load=[Author.addresses])
    assert loaded.addresses.loaded == [Address("home", "Paris")]


async def test_index_children_decode_key_only_fields(db: Database) -> None:
    authors = [Author("ann", BORN), Author("bob", BORN)]
    books = [Book("ann", "Dune", "scifi"), Book("bob", "Solaris", "scifi")]
    await db.put_all([*authors, Genre("scifi"), *books])
    with count_requests(db) as log:
        genre = await db.get(Genre, genre="scifi", load=[Genre.books])
    assert len(log) == 1
    assert sorted(b.title for b in genre.books.loaded) == ["Dune", "Solaris"]
    assert {b.author for b in genre.books.loaded} == {"ann", "bob"}


@pytest.mark.transactions  # dynalite has no transactions
async def test_the_type_attribute_tells_models_with_one_template_apart(db: Database) -> None:
    await db.put(Author("ann", BORN))
    async with db.transaction() as tx:
        tx.put(Book("ann", "Dune", "scifi"))
        tx.put(Draft("ann", "Dune 2"))
    await db.put_all([Draft("ann", f"Draft {i}") for i in range(3)])
    books = await db.query(Book, author="ann").all()
    assert [b.title for b in books] == ["Dune"]
    drafts = await db.query(Draft, author="ann").page(limit=2)
    assert [d.title for d in drafts.items] == ["Draft 0", "Draft 1"]
    assert len(await db.query(Draft, author="ann").all()) == 4


async def test_a_parent_loads_only_its_models_children_from_a_shared_template(
    db: Database,
) -> None:
    author = Author("ann", BORN)
    await db.put_all([author, Book("ann", "A", "scifi"), Draft("ann", "B"), Draft("ann", "C")])
    with count_requests(db) as log:
        loaded = await db.get(Author, name="ann", load=[Author.drafts])
    assert len(log) == 1
    assert [d.title for d in loaded.drafts.loaded] == ["B", "C"]


async def test_get_of_one_model_does_not_return_another_models_item(db: Database) -> None:
    await db.put(Draft("ann", "Dune"))
    with pytest.raises(ItemNotFoundError):
        await db.get(Book, author="ann", title="Dune")
    assert await db.get_many(Book, [{"author": "ann", "title": "Dune"}]) == [None]
    assert await db.get(Draft, author="ann", title="Dune") == Draft("ann", "Dune")


@attrs.define
class DraftTitle:
    title: str


async def test_a_query_of_one_model_filters_on_the_type_attribute(db: Database) -> None:
    await db.put(Author("ann", BORN))
    books = [Book("ann", f"Book {i}", "scifi") for i in range(3)]
    await db.put_all([*books, *(Draft("ann", f"Draft {i}") for i in range(3))])
    query = db.query(Draft, author="ann")
    (request,) = query.explain()
    assert request.params["FilterExpression"] == "#n0 = :v0 OR attribute_not_exists(#n0)"
    assert request.params["ExpressionAttributeNames"]["#n0"] == "Entity Type"
    page = await query.page(limit=2)
    assert [d.title for d in page.items] == ["Draft 0", "Draft 1"]
    # Other models' items were dropped by DynamoDB: the page scanned them but did not send them.
    assert page.scanned >= 5
    with count_requests(db) as log:
        count = await query.count()
        titles = await query.project(DraftTitle).all()
        scanned = await db.scan(Draft).all()
    assert count == 3
    assert [t.title for t in titles] == ["Draft 0", "Draft 1", "Draft 2"]
    assert sorted(d.title for d in scanned) == ["Draft 0", "Draft 1", "Draft 2"]
    assert log.operations == ["Query", "Query", "Scan"]
    assert await db.query(Book, author="ann").filter(Attr("pages") == 0).count() == 3


readings = Table(
    "stored-names-readings",
    pk="SensorID",
    sk="Status#Time",
    indexes=[GSI("GSI1", pk="Site", sk="Time")],
)


@readings.model(pk="{sensor_id}", sk="{status}#{time}", GSI1=("{site}", "{time}"))
@attrs.define
class Reading:
    sensor_id: str = dynorm.field(name="SensorID")
    status: str = dynorm.field(name="Status")
    time: str | None = dynorm.field(name="Time", default=None)
    site: str | None = dynorm.field(name="Site", default=None)


@pytest.fixture
async def rdb(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(readings) as database:
        yield database


async def test_a_key_that_is_the_field_holds_the_value_unescaped(rdb: Database) -> None:
    odd = Reading("a#b", "OK", "t%1", "x#y%z")
    await rdb.put(odd)
    raw = await raw_item(rdb, {"SensorID": "a#b", "Status#Time": "OK#t%251"})
    assert raw is not None
    assert raw["SensorID"] == {"S": "a#b"}
    assert raw["Time"] == {"S": "t%1"}
    assert raw["Site"] == {"S": "x#y%z"}
    assert await rdb.get(Reading, sensor_id="a#b", status="OK", time="t%1") == odd
    assert await rdb.query(Reading, index="GSI1", site="x#y%z").all() == [odd]
    assert await rdb.query(Reading, sensor_id="a#b").filter(Attr("site") == "x#y%z").all() == [odd]


async def test_an_identity_field_updates_and_becomes_none(rdb: Database) -> None:
    reading = await rdb.put(Reading("s1", "OK", "t1", "north"))
    moved = await rdb.update(reading, set={"site": "south"})
    assert moved.site == "south"
    assert [r.site for r in await rdb.query(Reading, index="GSI1", site="south").all()] == ["south"]
    gone = await rdb.update(moved, set={"site": None})
    assert gone.site is None
    raw = await raw_item(rdb, {"SensorID": "s1", "Status#Time": "OK#t1"})
    assert raw is not None
    assert "Site" not in raw
    assert raw["Time"] == {"S": "t1"}  # the partner is the time field itself: it stays
    assert await rdb.get(Reading, sensor_id="s1", status="OK", time="t1") == gone


async def test_a_none_sort_key_field_is_refused(rdb: Database) -> None:
    reading = Reading("s3", "OK", None, "north")
    with pytest.raises(dynorm.KeyTemplateError):
        await rdb.put(reading)  # time is part of the table's sort key


async def test_writes_of_one_model_never_touch_another_models_item(db: Database) -> None:
    await db.put(Author("ann", BORN))
    draft = await db.put(Draft("ann", "Dune"))
    impostor = Book("ann", "Dune", "scifi")
    with pytest.raises(ConditionFailedError, match=r"is another model's .*'draft', not 'book'"):
        await db.update(impostor, set={"pages": 5})
    with pytest.raises(ConditionFailedError, match="is another model's"):
        await db.delete(Book, author="ann", title="Dune")
    assert await db.get(Draft, author="ann", title="Dune") == draft
    raw = await raw_item(db, {"PK": "AUTHOR#ann", "SK": "BOOK#Dune"})
    assert raw is not None
    assert "Page Count" not in raw
    await db.delete(Draft, author="ann", title="Dune")
    assert await raw_item(db, {"PK": "AUTHOR#ann", "SK": "BOOK#Dune"}) is None
