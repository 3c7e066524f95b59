"""Review probes (issue 29): reads, copies and migrations while ``was=`` is declared."""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import GSI, Denormalized, HasMany, Index, Table
from dynorm.migrations import migrate
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .raw import stored

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]


def _authors(name: str, via: Any, was: Any) -> tuple[Table, type[Any], type[Any]]:
    table = Table(name, pk="pk", sk="sk", indexes=INDEXES)

    @table.model(pk="A#{aid}", sk="#A#{aid}", GSI1=("A#{aid}", "#A#{aid}"))
    class Author:
        aid: str
        born: str = ""
        books = HasMany["Book"](via=via, was=was)

    if isinstance(getattr(via, "where", None), Index) or isinstance(via, Index):
        keys: dict[str, Any] = {
            "pk": "B#{aid}#{title}",
            "sk": "B#{aid}#{title}",
            "GSI1": ("A#{aid}", "BOOK#{title}"),
        }
    else:
        keys = {"pk": "A#{aid}", "sk": "BOOK#{title}"}

    @table.model(**keys)
    class Book:
        aid: str
        title: str
        author_born: str = ""

    return table, Author, Book


old_t, OldAuthor, OldBook = _authors(
    "probe-denorm", Denormalized(copy={"born": "author_born"}), None
)
new_t, Author, Book = _authors(
    "probe-denorm",
    Denormalized(copy={"born": "author_born"}, where=Index("GSI1")),
    Denormalized(copy={"born": "author_born"}),
)


@pytest.mark.xfail(strict=True, reason="update(parent) leaves stale copies in was= children")
async def test_an_update_of_a_parent_rewrites_the_copies_of_old_layout_children(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        await old.add(author, OldAuthor.books, OldBook("a", "t1"))
        await db.update(Author("a", born="1900"), set={"born": "1901"})

        loaded = await db.get(Author, aid="a", load=[Author.books])
        assert [(b.title, b.author_born) for b in loaded.books.loaded] == [("t1", "1901")]
        # and once migrated, the copy stays stale for good
        report = await migrate(db, Author.books)
        assert report.ok, report
        books = [i for i in await stored(db) if i["pk"].startswith("B#")]
        assert [b["author_born"] for b in books] == ["1901"]


@pytest.mark.xfail(strict=True, reason="put(parent) leaves stale copies in was= children")
async def test_a_put_of_a_parent_rewrites_the_copies_of_old_layout_children(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        await old.add(author, OldAuthor.books, OldBook("a", "t1"))
        await db.put(Author("a", born="1901"))

        loaded = await db.get(Author, aid="a", load=[Author.books])
        assert [(b.title, b.author_born) for b in loaded.books.loaded] == [("t1", "1901")]


@pytest.mark.xfail(strict=True, reason="migration moves the stale copy as stored")
async def test_a_migrated_child_does_not_keep_a_copy_its_parent_changed_since(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        await old.add(author, OldAuthor.books, OldBook("a", "t1"))
        await db.update(Author("a", born="1900"), set={"born": "1901"})
        report = await migrate(db, Author.books)
        assert report.ok, report
        books = [i for i in await stored(db) if i["pk"].startswith("B#")]
        assert [b["author_born"] for b in books] == ["1901"]
