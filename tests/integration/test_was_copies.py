"""``was=`` naming via='s own place: ``Partition()`` -> ``Denormalized(copy=...)``.

The children stay in the items they are in; only their copies of the parent's fields are missing.
Reads and writes take one layout (no extra request), and ``migrate``/``migration_status`` with
no ``from_=`` fill and count the missing copies.
"""

from __future__ import annotations

import pytest

from dynorm import DefinitionError, Denormalized, HasMany, Partition, Table
from dynorm.migrations import migrate, migration_status
from dynorm.testing import Connect, count_requests

from .raw import raw_put, stored

pytestmark = pytest.mark.integration

table = Table("was-copies", pk="pk", sk="sk")


@table.model(pk="A#{author_id}", sk="#A#{author_id}")
class Author:
    author_id: str
    name: str = ""
    books = HasMany["Book"](via=Denormalized(copy={"name": "author_name"}), was=Partition())


@table.model(pk="A#{author_id}", sk="B#{title}")
class Book:
    author_id: str
    title: str
    author_name: str = ""


def item(sk: str, **fields: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": "A#a1"}, "sk": {"S": sk}} | {k: {"S": v} for k, v in fields.items()}


def test_the_relationship_reads_one_layout_and_migrates_out_of_was() -> None:
    table.check()
    assert Author.books.was is None  # reads and writes: one layout
    assert Author.books.declared_was == Partition()  # the migration: fill the copies


async def test_copies_are_counted_then_filled_by_migrate(dynorm_connect: Connect) -> None:
    async with dynorm_connect(table) as db:
        await raw_put(db, item("#A#a1", author_id="a1", name="Ursula"))
        for title in ("Earthsea", "Lathe", "Tehanu"):  # as stored before: no copy
            await raw_put(db, item(f"B#{title}", author_id="a1", title=title))

        with count_requests(db) as log:
            author = await db.get(Author, author_id="a1", load=[Author.books])
        assert [b.title for b in author.books.loaded] == ["Earthsea", "Lathe", "Tehanu"]
        assert len(log) == 1  # the one Query of parent and children: no old layout to read

        assert await migration_status(db, Author.books) == 3
        report = await migrate(db, Author.books)
        assert report.ok, report
        assert (report.kind, report.written) == ("copies", 3)
        assert await migration_status(db, Author.books) == 0
        books = [i for i in await stored(db) if i["sk"].startswith("B#")]
        assert [b["author_name"] for b in books] == ["Ursula"] * 3


def test_was_in_the_same_place_with_no_copies_to_fill_says_to_delete_it() -> None:
    other = Table("was-nothing", pk="pk", sk="sk")

    @other.model(pk="A#{author_id}", sk="#A#{author_id}")
    class Writer:
        author_id: str
        name: str = ""
        books = HasMany["Volume"](via=Partition(), was=Denormalized(copy={"name": "author_name"}))

    @other.model(pk="A#{author_id}", sk="B#{title}")
    class Volume:
        author_id: str
        title: str

    other.check()
    assert Writer.books.was is None


async def test_migrate_of_a_same_place_was_without_copies_is_refused(
    dynorm_connect: Connect,
) -> None:
    other = Table("was-nothing2", pk="pk", sk="sk")

    @other.model(pk="A#{author_id}", sk="#A#{author_id}")
    class Writer:
        author_id: str
        name: str = ""
        books = HasMany["Volume"](via=Partition(), was=Denormalized(copy={"name": "author_name"}))

    @other.model(pk="A#{author_id}", sk="B#{title}")
    class Volume:
        author_id: str
        title: str
        author_name: str = ""

    async with dynorm_connect(other) as db:
        with count_requests(db) as log, pytest.raises(DefinitionError, match="delete was="):
            await migrate(db, Writer.books)
        assert log.operations == []  # refused before anything is sent
