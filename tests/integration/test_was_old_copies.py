"""Denormalized copies in children still in a ``was=`` layout are kept equal to the parent.

Declared ``via=Denormalized(copy=..., where=Index(...))``, ``was=Denormalized(copy=...)``: a write
of the parent that changes a copied field rewrites the copies of the children still in the old
layout too, in place at their old keys; the migration then moves them with the parent's current
values; ``repair_copies`` repairs both layouts. Checked against the raw items.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import GSI, Denormalized, HasMany, Index, Table
from dynorm.migrations import migrate, repair_copies
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .raw import raw_item, raw_put, stored

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]


def _authors(name: str, via: Any, was: Any) -> tuple[Table, type[Any], type[Any]]:
    table = Table(name, pk="pk", sk="sk", indexes=INDEXES)

    @table.model(pk="A#{aid}", sk="#A#{aid}", GSI1=("A#{aid}", "#A#{aid}"))
    class Author:
        aid: str
        born: str = ""
        books = HasMany["ABook"](via=via, was=was)

    if isinstance(getattr(via, "where", None), Index) or isinstance(via, Index):
        keys: dict[str, Any] = {
            "pk": "B#{aid}#{title}",
            "sk": "B#{aid}#{title}",
            "GSI1": ("A#{aid}", "BOOK#{title}"),
        }
    else:
        keys = {"pk": "A#{aid}", "sk": "BOOK#{title}"}

    @table.model(**keys)
    class ABook:
        aid: str
        title: str
        author_born: str = ""

    return table, Author, ABook


old_t, OldAuthor, OldBook = _authors(
    "was-old-copies", Denormalized(copy={"born": "author_born"}), None
)
new_t, Author, _ = _authors(
    "was-old-copies",
    Denormalized(copy={"born": "author_born"}, where=Index("GSI1")),
    Denormalized(copy={"born": "author_born"}),
)


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


def _old_books(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(sort key, author_born) of the books still at their old keys (the author's partition)."""
    return [(i["sk"], i["author_born"]) for i in items if i["sk"].startswith("BOOK#")]


async def test_a_parent_write_rewrites_old_copies_in_place_at_their_old_keys(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        for title in ("t1", "t2"):
            await old.add(author, OldAuthor.books, OldBook("a", title))
        await db.update(Author("a", born="1900"), set={"born": "1901"})
        assert _old_books(await stored(db)) == [("BOOK#t1", "1901"), ("BOOK#t2", "1901")]
        assert not [i for i in await stored(db) if i["pk"].startswith("B#")]  # none moved


async def test_repair_copies_repairs_children_still_in_the_old_layout(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        await old.add(author, OldAuthor.books, OldBook("a", "t1"))
        raw = await raw_item(db, {"pk": "A#a", "sk": "#A#a"})
        assert raw is not None
        await raw_put(db, {**raw, "born": {"S": "1950"}})  # the parent, its copies left stale
        report = await repair_copies(db, Author.books)
        assert report.ok, report
        assert report.written == 1
        book = await raw_item(db, {"pk": "A#a", "sk": "BOOK#t1"})
        assert book is not None
        assert book["author_born"] == {"S": "1950"}
        assert "GSI1PK" not in book  # repaired in place, keys as the old layout has them
        loaded = await db.get(Author, aid="a", load=[Author.books])
        assert [(b.title, b.author_born) for b in loaded.books.loaded] == [("t1", "1950")]


async def test_a_transaction_updating_the_parent_rewrites_old_copies(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        author = await old.put(OldAuthor("a", born="1900"))
        await old.add(author, OldAuthor.books, OldBook("a", "t1"))
        async with db.transaction() as tx:
            tx.update(Author("a", born="1900"), set={"born": "1902"})
        assert _old_books(await stored(db)) == [("BOOK#t1", "1902")]


async def test_more_old_copies_than_one_transaction_holds_are_all_rewritten(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(new_t) as db,
        connect_to(dynorm_server.url, old_t, db.table_name) as old,
    ):
        await old.put(OldAuthor("a", born="1900"))
        await old.put_all([OldBook("a", f"t{n:03d}", author_born="1900") for n in range(100)])
        await db.update(Author("a", born="1900"), set={"born": "1903"})
        books = _old_books(await stored(db))
        assert len(books) == 100
        assert {born for _, born in books} == {"1903"}
        report = await migrate(db, Author.books)
        assert report.ok, report
        moved = [i for i in await stored(db) if i["pk"].startswith("B#")]
        assert len(moved) == 100
        assert {b["author_born"] for b in moved} == {"1903"}
