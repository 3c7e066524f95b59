"""dynorm.migrations: live data moved between strategies, checked item by item.

Each test writes data in the OLD layout through a Database on an old declaration (a second
Table object of the same name, on the same stored table), runs the migration through a
Database on the current declaration, then reads every stored item back with a raw Scan and
reads the children through the loaders.
"""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
    DefinitionError,
    Denormalized,
    Embedded,
    HasMany,
    Index,
    Partition,
    Request,
    Table,
)
from dynorm.core.chunks import key_id
from dynorm.migrations import (
    CheckpointError,
    MigrationError,
    MigrationProgress,
    backfill_index,
    migrate,
    repair_copies,
)
from dynorm.testing import Connect, RunningServer, count_requests
from dynorm.tools.migrate_kinds import Embed, child_digest
from tests.faultproxy import FaultPlan, connect_through, connect_to

from .raw import stored

pytestmark = pytest.mark.integration

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

# -- Partition() <-> Index("GSI1"): the same templates, on the table key or on the index key ------

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]
in_partition = Table("migr-move", pk="pk", sk="sk", indexes=INDEXES)
in_index = Table("migr-move", pk="pk", sk="sk", indexes=INDEXES)


@in_partition.model(pk="P#{parent_id}", sk="#PARENT#{parent_id}")
class PParent:
    parent_id: str
    title: str = ""
    items = HasMany["PItem"](via=Partition())


@in_partition.model(pk="P#{parent_id}", sk="ITEM#{name}")
class PItem:
    parent_id: str
    name: str
    qty: int = 0


@in_partition.model(pk="OTHER#{n}", sk="OTHER#{n}")
class POther:
    n: str


@in_index.model(
    pk="P#{parent_id}", sk="#PARENT#{parent_id}", GSI1=("P#{parent_id}", "#PARENT#{parent_id}")
)
class IParent:
    parent_id: str
    title: str = ""
    items = HasMany["IItem"](via=Index("GSI1"))


@in_index.model(
    pk="I#{parent_id}#{name}", sk="I#{parent_id}#{name}", GSI1=("P#{parent_id}", "ITEM#{name}")
)
class IItem:
    parent_id: str
    name: str
    qty: int = 0


@in_index.model(pk="OTHER#{n}", sk="OTHER#{n}")
class IOther:
    n: str


# -- Embedded(key="name") <-> Partition() ---------------------------------------------------------

embedded_plain = Table("migr-embed", pk="pk", sk="sk")
collection = Table("migr-embed", pk="pk", sk="sk")
embedded_model = Table("migr-embed", pk="pk", sk="sk")


@attrs.define
class PlainLine:  # stored inside the order, without the order's id
    name: str
    qty: int = 0


@embedded_plain.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class EOrder:
    order_id: str
    lines = HasMany[PlainLine](PlainLine, via=Embedded(key="name"))


@collection.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class COrder:
    order_id: str
    lines = HasMany["CLine"](via=Partition())


@collection.model(pk="O#{order_id}", sk="LINE#{name}")
class CLine:
    order_id: str
    name: str
    qty: int = 0


@embedded_model.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class MOrder:
    order_id: str
    lines = HasMany["MLine"](via=Embedded(key="name", max_items=3))


@embedded_model.model(pk="O#{order_id}", sk="LINE#{name}")  # where the old items are
class MLine:
    order_id: str
    name: str
    qty: int = 0


# -- an index template backfilled ----------------------------------------------------------------

users_before = Table("migr-users", pk="pk", sk="sk", indexes=INDEXES)
users_after = Table("migr-users", pk="pk", sk="sk", indexes=INDEXES)


@users_before.model(pk="U#{uid}", sk="U#{uid}")
class OldUser:
    uid: str
    email: str | None = None


@users_before.model(pk="T#{tid}", sk="T#{tid}")
class OldTeam:
    tid: str


@users_after.model(pk="U#{uid}", sk="U#{uid}", GSI2=("EMAIL#{email}", "U#{uid}"))
class User:
    uid: str
    email: str | None = None


@users_after.model(pk="T#{tid}", sk="T#{tid}")
class Team:
    tid: str


# -- denormalized copies added -------------------------------------------------------------------

books_before = Table("migr-books", pk="pk", sk="sk")
books_after = Table("migr-books", pk="pk", sk="sk")


@books_before.model(pk="A#{author}", sk="#AUTHOR#{author}")
class OldAuthor:
    author: str
    born: str
    books = HasMany["OldBook"](via=Partition())


@books_before.model(pk="A#{author}", sk="BOOK#{title}")
class OldBook:
    author: str
    title: str


@books_after.model(pk="A#{author}", sk="#AUTHOR#{author}")
class Author:
    author: str
    born: str
    books = HasMany["Book"](via=Denormalized(copy={"born": "author_born"}))


@books_after.model(pk="A#{author}", sk="BOOK#{title}")
class Book:
    author: str
    title: str
    author_born: str = ""


# -- helpers --------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the current declaration, db on the old one), one fresh stored table."""
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


def index_items(parent_id: str, names: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [
        {
            "pk": f"I#{parent_id}#{n}",
            "sk": f"I#{parent_id}#{n}",
            "GSI1PK": f"P#{parent_id}",
            "GSI1SK": f"ITEM#{n}",
            "parent_id": parent_id,
            "name": n,
            "qty": str(q),
        }
        for n, q in names
    ]


def partition_items(parent_id: str, names: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [
        {
            "pk": f"P#{parent_id}",
            "sk": f"ITEM#{n}",
            "parent_id": parent_id,
            "name": n,
            "qty": str(q),
        }
        for n, q in names
    ]


A_ITEMS = [("apple", 3), ("banana", 5), ("cherry", 7)]
B_ITEMS = [("apple", 1)]


def sorted_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


INDEX_LAYOUT = sorted_items(
    [
        {
            "pk": "P#a",
            "sk": "#PARENT#a",
            "GSI1PK": "P#a",
            "GSI1SK": "#PARENT#a",
            "parent_id": "a",
            "title": "A",
        },
        {
            "pk": "P#b",
            "sk": "#PARENT#b",
            "GSI1PK": "P#b",
            "GSI1SK": "#PARENT#b",
            "parent_id": "b",
            "title": "B",
        },
        *index_items("a", A_ITEMS),
        *index_items("b", B_ITEMS),
        {"pk": "OTHER#x", "sk": "OTHER#x", "n": "x"},
    ]
)
PARTITION_LAYOUT = sorted_items(
    [
        {"pk": "P#a", "sk": "#PARENT#a", "parent_id": "a", "title": "A"},
        {"pk": "P#b", "sk": "#PARENT#b", "parent_id": "b", "title": "B"},
        *partition_items("a", A_ITEMS),
        *partition_items("b", B_ITEMS),
        {"pk": "OTHER#x", "sk": "OTHER#x", "n": "x"},
    ]
)


async def write_partition_layout(db: Database) -> None:
    await db.put_all(
        [PParent("a", "A"), PParent("b", "B"), POther("x")]
        + [PItem("a", n, q) for n, q in A_ITEMS]
        + [PItem("b", n, q) for n, q in B_ITEMS]
    )


async def write_index_layout(db: Database) -> None:
    await db.put_all(
        [IParent("a", "A"), IParent("b", "B"), IOther("x")]
        + [IItem("a", n, q) for n, q in A_ITEMS]
        + [IItem("b", n, q) for n, q in B_ITEMS]
    )


async def assert_second_run_writes_nothing(db: Database, run: Any) -> None:
    with count_requests(db) as log:
        report = await run()
    assert report.changes == 0
    assert report.verification is not None
    assert report.verification.ok
    assert log.operations
    assert not WRITES & set(log.operations), log.operations


# -- Partition() <-> Index() ----------------------------------------------------------------------


async def test_partition_to_index_moves_every_child_and_backfills_parents(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await write_partition_layout(old)
        assert await stored(db) == PARTITION_LAYOUT

        report = await migrate(db, IParent.items, from_=Partition())

        assert (report.kind, report.written, report.deleted, report.updated) == ("move", 4, 4, 2)
        assert report.ok
        assert report.verification is not None
        assert report.verification.leftovers == 0
        assert report.verification.children == 4
        assert report.verification.parents == 2
        assert await stored(db) == INDEX_LAYOUT
        parent = await db.get(IParent, parent_id="a", load=[IParent.items])
        assert parent.items.loaded == [IItem("a", n, q) for n, q in A_ITEMS]
        await assert_second_run_writes_nothing(
            db, lambda: migrate(db, IParent.items, from_=Partition())
        )


async def test_index_to_partition_moves_every_child_back(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, in_partition, in_index) as (db, old):
        await write_index_layout(old)
        assert await stored(db) == INDEX_LAYOUT

        report = await migrate(db, PParent.items, from_=Index("GSI1"))

        assert (report.written, report.deleted, report.updated) == (4, 4, 0)
        assert report.ok
        # The parents keep the GSI1 attributes they had (the Partition code never reads them).
        parents = {i["sk"]: i for i in INDEX_LAYOUT if i["sk"].startswith("#PARENT")}
        expected = [parents.get(i["sk"], i) for i in PARTITION_LAYOUT]
        assert await stored(db) == expected
        parent = await db.get(PParent, parent_id="b", load=[PParent.items])
        assert parent.items.loaded == [PItem("b", "apple", 1)]
        await assert_second_run_writes_nothing(
            db, lambda: migrate(db, PParent.items, from_=Index("GSI1"))
        )


async def test_a_dry_run_counts_and_writes_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await write_partition_layout(old)
        seen: list[MigrationProgress] = []
        with count_requests(db) as log:
            report = await migrate(
                db, IParent.items, from_=Partition(), dry_run=True, on_progress=seen.append
            )
        assert not WRITES & set(log.operations)
        assert (report.dry_run, report.written, report.deleted, report.updated) == (True, 4, 4, 2)
        assert report.scanned == len(PARTITION_LAYOUT)
        assert report.verification is None
        assert seen
        assert seen[-1].dry_run
        assert seen[-1].scanned == len(PARTITION_LAYOUT)
        # DescribeTable's ItemCount: exact on moto; dynalite (like DynamoDB for hours) says 0.
        assert seen[-1].total in (len(PARTITION_LAYOUT), None)
        assert await stored(db) == PARTITION_LAYOUT


class StopRunError(Exception):
    pass


async def test_an_interrupted_run_resumes_from_its_checkpoint(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "move.json"
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await write_partition_layout(old)

        def stop(progress: MigrationProgress) -> None:
            if progress.pages == 2:
                raise StopRunError

        with pytest.raises(StopRunError):
            await migrate(
                db,
                IParent.items,
                from_=Partition(),
                checkpoint=checkpoint,
                on_progress=stop,
                page_size=2,
            )
        saved = json.loads(checkpoint.read_text())
        assert saved["fingerprint"]["kind"] == "move"
        # Where it ran: a checkpoint of another endpoint or region is another migration's.
        assert saved["fingerprint"]["endpoint"] == db.endpoint
        assert saved["fingerprint"]["region"] == db.region
        assert db.endpoint == dynorm_server.url
        assert saved["counters"]["pages"] == 2
        assert saved["counters"]["scanned"] == 4
        assert saved["positions"][0] is not None
        middle = await stored(db)
        assert middle != PARTITION_LAYOUT  # the first pages were written

        # Another migration refuses this checkpoint, before sending anything.
        with count_requests(db) as log, pytest.raises(CheckpointError, match="another migration"):
            await migrate(db, IParent.items, from_=Partition(), checkpoint=checkpoint, segments=2)
        assert len(log) == 0

        report = await migrate(
            db, IParent.items, from_=Partition(), checkpoint=checkpoint, page_size=2
        )
        assert report.resumed
        assert report.ok
        assert (report.written, report.deleted, report.updated) == (4, 4, 2)
        assert report.verification is not None
        # Pages of 2 items split the children of "a": each parent still counts once.
        assert (report.verification.parents, report.verification.children) == (2, 4)
        assert not checkpoint.exists()
        assert await stored(db) == INDEX_LAYOUT
        await assert_second_run_writes_nothing(
            db, lambda: migrate(db, IParent.items, from_=Partition(), checkpoint=checkpoint)
        )


async def test_parallel_segments_move_every_child(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await old.put_all(
            [PParent(f"p{i}", f"P{i}") for i in range(10)]
            + [PItem(f"p{i}", f"n{j}", j) for i in range(10) for j in range(5)]
        )
        report = await migrate(
            db,
            IParent.items,
            from_=Partition(),
            segments=3,
            page_size=7,
            checkpoint=tmp_path / "c.json",
        )
        assert (report.written, report.deleted, report.updated) == (50, 50, 10)
        assert report.ok
        items = await stored(db)
        assert len(items) == 60
        assert all(i["pk"].startswith("I#") for i in items if "name" in i)
        for i in range(10):
            parent = await db.get(IParent, parent_id=f"p{i}", load=[IParent.items])
            assert parent.items.loaded == [IItem(f"p{i}", f"n{j}", j) for j in range(5)]


async def test_throttling_and_partial_batches_still_move_every_item(
    dynorm_server: RunningServer,
) -> None:
    async with (
        connect_through(dynorm_server.url, in_index, max_attempts=10) as faulty,
        connect_to(dynorm_server.url, in_partition, faulty.db.table_name) as old,
    ):
        await old.put_all(
            [PParent(f"p{i}", f"P{i}") for i in range(6)]
            + [PItem(f"p{i}", f"n{j}", j) for i in range(6) for j in range(10)]
        )
        faulty.proxy.use(
            FaultPlan(seed=11, rates={"throttle": 0.15, "provisioned": 0.05, "partial_batch": 0.5})
        )
        report = await migrate(faulty.db, IParent.items, from_=Partition(), page_size=25)
        faulty.proxy.use(None)
        assert report.ok
        assert (report.written, report.deleted) == (60, 60)
        kinds = {e.fault for e in faulty.proxy.injected}
        assert {"partial_batch", "throttle"} <= kinds
        items = await stored(faulty.direct)
        children = [i for i in items if "name" in i]
        assert len(children) == 60
        assert all(i["pk"] == f"I#{i['parent_id']}#{i['name']}" for i in children)
        assert all(i["GSI1PK"] == f"P#{i['parent_id']}" for i in children)
        assert faulty.proxy.errors == []


# -- Embedded <-> Partition ------------------------------------------------------------------------


async def test_embedded_to_partition_makes_items_and_removes_the_attribute(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, collection, embedded_plain) as (db, old):
        first = await old.put(EOrder("1"))
        await old.add(first, EOrder.lines, PlainLine("pen", 2))
        await old.add(first, EOrder.lines, PlainLine("ink", 1))
        await old.put(EOrder("2"))  # an empty map: nothing to move, the attribute goes

        dry = await migrate(db, COrder.lines, from_=Embedded(key="name"), dry_run=True)
        assert (dry.kind, dry.written, dry.deleted, dry.updated) == ("unembed", 2, 0, 2)
        report = await migrate(db, COrder.lines, from_=Embedded(key="name"))

        assert (report.written, report.deleted, report.updated) == (2, 0, 2)
        assert report.ok
        assert await stored(db) == [
            {"pk": "O#1", "sk": "#ORDER#1", "order_id": "1"},
            {"pk": "O#1", "sk": "LINE#ink", "order_id": "1", "name": "ink", "qty": "1"},
            {"pk": "O#1", "sk": "LINE#pen", "order_id": "1", "name": "pen", "qty": "2"},
            {"pk": "O#2", "sk": "#ORDER#2", "order_id": "2"},
        ]
        order = await db.get(COrder, order_id="1", load=[COrder.lines])
        assert order.lines.loaded == [CLine("1", "ink", 1), CLine("1", "pen", 2)]
        await assert_second_run_writes_nothing(
            db, lambda: migrate(db, COrder.lines, from_=Embedded(key="name"))
        )


async def test_partition_to_embedded_moves_children_into_the_parent(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, embedded_model, collection) as (db, old):
        await old.put_all(
            [COrder("1"), CLine("1", "pen", 2), CLine("1", "ink", 1), COrder("2"), COrder("3")]
            + [CLine("3", f"x{i}", i) for i in range(4)]  # more than max_items=3
        )
        dry = await migrate(db, MOrder.lines, from_=Partition(), dry_run=True)
        assert (dry.kind, dry.written, dry.deleted, dry.updated) == ("embed", 0, 2, 2)
        assert len(dry.refused) == 1
        assert "O#3" in dry.refused[0]
        assert "max_items" in dry.refused[0]
        assert not dry.ok

        before = await stored(db)
        with pytest.raises(MigrationError, match="max_items"):
            await migrate(db, MOrder.lines, from_=Partition())
        assert await stored(db) == before  # one page: nothing of it written

        await old.delete(CLine("3", "x3", 3))
        report = await migrate(db, MOrder.lines, from_=Partition())
        assert (report.written, report.deleted, report.updated) == (0, 5, 3)
        assert report.ok
        assert report.verification is not None
        assert report.verification.children == 5
        assert await stored(db) == [
            {
                "pk": "O#1",
                "sk": "#ORDER#1",
                "order_id": "1",
                "lines": {
                    "ink": {"order_id": "1", "name": "ink", "qty": "1"},
                    "pen": {"order_id": "1", "name": "pen", "qty": "2"},
                },
            },
            {"pk": "O#2", "sk": "#ORDER#2", "order_id": "2", "lines": {}},
            {
                "pk": "O#3",
                "sk": "#ORDER#3",
                "order_id": "3",
                "lines": {
                    f"x{i}": {"order_id": "3", "name": f"x{i}", "qty": str(i)} for i in range(3)
                },
            },
        ]
        order = await db.get(MOrder, order_id="1", load=[MOrder.lines])
        assert order.lines.loaded == [MLine("1", "ink", 1), MLine("1", "pen", 2)]
        await db.add(order, MOrder.lines, MLine("1", "cap", 0))  # the new code writes on
        await assert_second_run_writes_nothing(
            db, lambda: migrate(db, MOrder.lines, from_=Partition())
        )


# -- index backfill and copies --------------------------------------------------------------------


async def test_backfill_index_writes_the_new_index_keys(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, users_after, users_before) as (db, old):
        await old.put_all([OldUser("u1", "a@x"), OldUser("u2", "b@x"), OldUser("u3"), OldTeam("t")])
        await db.put(User("u4", "d@x"))  # written by the new code already
        await db.send(  # a stale index key, from templates since changed
            Request(
                "UpdateItem",
                {
                    "TableName": db.table_name,
                    "Key": {"pk": {"S": "U#u2"}, "sk": {"S": "U#u2"}},
                    "UpdateExpression": "SET GSI2PK = :p, GSI2SK = :s",
                    "ExpressionAttributeValues": {":p": {"S": "MAIL#b@x"}, ":s": {"S": "U#u2"}},
                },
            )
        )
        dry = await backfill_index(db, User, "GSI2", dry_run=True)
        assert (dry.kind, dry.written) == ("backfill", 2)

        report = await backfill_index(db, User, "GSI2")

        assert (report.written, report.deleted, report.updated) == (2, 0, 0)
        assert report.ok
        assert await stored(db) == [
            {"pk": "T#t", "sk": "T#t", "tid": "t"},
            *(
                {"pk": f"U#{u}", "sk": f"U#{u}", "uid": u, "email": e}
                | {"GSI2PK": f"EMAIL#{e}", "GSI2SK": f"U#{u}"}
                for u, e in [("u1", "a@x"), ("u2", "b@x")]
            ),
            {"pk": "U#u3", "sk": "U#u3", "uid": "u3", "email": True},  # NULL
            {"pk": "U#u4", "sk": "U#u4", "uid": "u4", "email": "d@x"}
            | {"GSI2PK": "EMAIL#d@x", "GSI2SK": "U#u4"},
        ]
        assert await db.query(User, index="GSI2", email="b@x").all() == [User("u2", "b@x")]
        await assert_second_run_writes_nothing(db, lambda: backfill_index(db, User))


async def test_a_backfill_dynamodb_would_refuse_names_the_item_and_writes_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    # The checks a put makes hold for what a migration writes: here an index key over
    # DynamoDB's limit once the new template builds it (whole items: test_migrate_kinds).
    async with both(dynorm_connect, dynorm_server, users_after, users_before) as (db, old):
        await old.put_all([OldUser("u1", "a@x"), OldUser("u2", "b" * 3000)])
        before = await stored(db)

        dry = await backfill_index(db, User, "GSI2", dry_run=True)

        assert not dry.ok
        (refused,) = dry.refused
        assert refused.startswith("pk='U#u2', sk='U#u2': User: key attribute 'GSI2PK' would be")
        assert "over DynamoDB's partition key limit of 2048 bytes" in refused
        assert dry.written == 1  # u1 only
        with count_requests(db) as log, pytest.raises(MigrationError) as info:
            await backfill_index(db, User, "GSI2")
        assert "nothing was written for this page" in str(info.value)
        assert "pk='U#u2', sk='U#u2': User: key attribute 'GSI2PK'" in str(info.value)
        assert set(log.operations) <= {"Scan", "DescribeTable"}  # no write sent
        assert await stored(db) == before


async def test_repair_copies_fills_every_stale_copy(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, books_after, books_before) as (db, old):
        await old.put_all(
            [
                OldAuthor("ann", "1950"),
                OldBook("ann", "one"),
                OldBook("ann", "two"),
                OldAuthor("bob", "1960"),
                OldBook("bob", "three"),
            ]
        )
        await db.put(Book("bob", "four", "1960"))  # right already
        report = await repair_copies(db, Author.books)
        assert (report.kind, report.written, report.deleted, report.updated) == ("copies", 3, 0, 0)
        assert report.ok
        books = [i for i in await stored(db) if i["sk"].startswith("BOOK#")]
        assert [(b["title"], b["author_born"]) for b in books] == [
            ("one", "1950"),
            ("two", "1950"),
            ("four", "1960"),
            ("three", "1960"),
        ]
        await assert_second_run_writes_nothing(db, lambda: repair_copies(db, Author.books))


# -- nonsense refused before anything is sent -----------------------------------------------------


async def test_nonsense_is_refused_before_sending(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, _),
        connect_to(dynorm_server.url, books_after, db.table_name) as books,
        connect_to(dynorm_server.url, users_after, db.table_name) as users,
        connect_to(dynorm_server.url, embedded_plain, db.table_name) as plain,
    ):
        with count_requests(db) as log:
            with pytest.raises(DefinitionError, match="declared with Index"):
                await migrate(db, IParent.items, from_=Index("GSI1"))
            with pytest.raises(DefinitionError, match="'GSI9' is not declared"):
                await migrate(db, IParent.items, from_=Index("GSI9"))
            with pytest.raises(DefinitionError, match="takes a HasMany"):
                await migrate(db, "IParent.items", from_=Partition())  # type: ignore[arg-type]
            with pytest.raises(DefinitionError, match="keeps no copies"):
                await repair_copies(db, IParent.items)
            with pytest.raises(MigrationError, match="segments"):
                await migrate(db, IParent.items, from_=Partition(), segments=0)
        assert len(log) == 0
        with count_requests(books) as log, pytest.raises(DefinitionError, match="same place"):
            await migrate(books, Author.books, from_=Partition())
        assert len(log) == 0
        with count_requests(users) as log:
            with pytest.raises(DefinitionError, match="no key templates for 'GSI1'"):
                await backfill_index(users, User, "GSI1")
            with pytest.raises(DefinitionError, match="templates for no index"):
                await backfill_index(users, Team)
        assert len(log) == 0
        with (
            count_requests(plain) as log,
            pytest.raises(DefinitionError, match="must still be declared"),
        ):
            await migrate(plain, EOrder.lines, from_=Partition())
        assert len(log) == 0


# -- nothing lost: undeclared attributes, timestamps, versions, key clashes ----------------------

T0 = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
stamped_before = Table("migr-stamped", pk="pk", sk="sk", indexes=INDEXES)
stamped_after = Table("migr-stamped", pk="pk", sk="sk", indexes=INDEXES)


@stamped_before.model(pk="P#{pid}", sk="#P#{pid}")
class SOldParent:
    pid: str
    notes = HasMany["SOldNote"](via=Partition())


@stamped_before.model(
    pk="P#{pid}", sk="N#{nid}", created="created", updated="updated", version="version"
)
class SOldNote:
    pid: str
    nid: str
    body: str = ""
    version: int = 0
    created: datetime.datetime | None = None
    updated: datetime.datetime | None = None


@stamped_after.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
class SParent:
    pid: str
    notes = HasMany["SNote"](via=Index("GSI1"))


@stamped_after.model(
    pk="N#{nid}",  # not unique per parent: two parents' notes "1" meet at one new key
    sk="N#{nid}",
    GSI1=("P#{pid}", "N#{nid}"),
    created="created",
    updated="updated",
    version="version",
)
class SNote:
    pid: str
    nid: str
    body: str = ""
    version: int = 0
    created: datetime.datetime | None = None
    updated: datetime.datetime | None = None


async def put_each(db: Database, objs: list[Any]) -> None:
    """One db.put each: versioned models refuse batch writes."""
    for obj in objs:
        await db.put(obj)


async def set_raw(db: Database, key: dict[str, str], **values: dict[str, Any]) -> None:
    """Attributes written by another tool (raw UpdateItem), whatever the models declare."""
    names = {f"#a{i}": a for i, a in enumerate(values)}
    params = {
        "TableName": db.table_name,
        "Key": {k: {"S": v} for k, v in key.items()},
        "UpdateExpression": "SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(values))),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {f":v{i}": v for i, v in enumerate(values.values())},
    }
    await db.send(Request("UpdateItem", params))


async def test_a_move_keeps_every_stored_attribute_timestamps_and_versions(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, stamped_after, stamped_before) as (db, old):
        await put_each(old, [SOldParent("a"), SOldNote("a", "1", "one"), SOldNote("a", "2", "two")])
        await set_raw(
            db,
            {"pk": "P#a", "sk": "N#1"},
            legacy={"S": "keep me"},
            created={"S": T0.isoformat()},
            updated={"S": T0.isoformat()},
            version={"N": "7"},
        )
        before = {i["nid"]: i for i in await stored(db) if "nid" in i}

        report = await migrate(db, SParent.notes, from_=Partition())

        assert report.ok
        assert (report.written, report.deleted) == (2, 2)
        after = {i["nid"]: i for i in await stored(db) if "nid" in i}
        keys = {"pk", "sk", "GSI1PK", "GSI1SK"}
        for nid in ("1", "2"):
            assert {k: v for k, v in after[nid].items() if k not in keys} == {
                k: v for k, v in before[nid].items() if k not in keys
            }
            assert (after[nid]["pk"], after[nid]["GSI1PK"]) == (f"N#{nid}", "P#a")
        assert after["1"]["legacy"] == "keep me"
        assert after["1"]["version"] == "7"
        assert after["1"]["updated"] == T0.isoformat()
        parent = await db.get(SParent, pid="a", load=[SParent.notes])
        assert parent.notes.loaded[0] == SNote("a", "1", "one", 7, T0, T0)


@pytest.mark.parametrize("page_size", [100, 1])
async def test_a_move_refuses_two_children_meeting_at_one_new_key(
    dynorm_connect: Connect, dynorm_server: RunningServer, page_size: int
) -> None:
    async with both(dynorm_connect, dynorm_server, stamped_after, stamped_before) as (db, old):
        await put_each(
            old,
            [SOldParent("a"), SOldParent("b"), SOldNote("a", "1", "A"), SOldNote("b", "1", "B")],
        )
        dry = await migrate(db, SParent.notes, from_=Partition(), dry_run=True)
        assert len(dry.refused) == 2
        assert all("N#1" in r for r in dry.refused)
        assert not dry.ok

        with pytest.raises(MigrationError, match="new key"):
            await migrate(db, SParent.notes, from_=Partition(), page_size=page_size)
        bodies = sorted(i["body"] for i in await stored(db) if "nid" in i)
        assert bodies == ["A", "B"]  # one may have moved; neither is lost


async def test_a_move_refuses_a_new_key_that_holds_another_item_but_resumes_its_own(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, stamped_after, stamped_before) as (db, old):
        await put_each(old, [SOldParent("a"), SOldNote("a", "1", "old"), SOldNote("a", "2", "two")])
        new_two = {i["nid"]: i for i in await stored(db) if "nid" in i}["2"]
        # "2" was moved by an interrupted run (new item written, old one not deleted yet) ...
        await db.send(
            Request(
                "PutItem",
                {
                    "TableName": db.table_name,
                    "Item": {
                        **{k: {"S": v} for k, v in new_two.items() if k != "version"},
                        "version": {"N": new_two["version"]},
                        "pk": {"S": "N#2"},
                        "sk": {"S": "N#2"},
                        "GSI1PK": {"S": "P#a"},
                        "GSI1SK": {"S": "N#2"},
                    },
                },
            )
        )
        # ... and "1"'s new key holds another item, written by the new code.
        await db.put(SNote("z", "1", "someone else's"))
        before = await stored(db)
        with count_requests(db) as log, pytest.raises(MigrationError, match="holds another item"):
            await migrate(db, SParent.notes, from_=Partition())
        assert log.operations.count("BatchGetItem") == 1
        assert not WRITES & set(log.operations)
        assert await stored(db) == before

        await db.delete(await db.get(SNote, nid="1"))
        report = await migrate(db, SParent.notes, from_=Partition())
        assert report.ok
        # "2"'s new item was stored already: only "1" is written, both old items deleted.
        assert (report.written, report.deleted) == (1, 2)
        parent = await db.get(SParent, pid="a", load=[SParent.notes])
        assert [(n.nid, n.body) for n in parent.notes.loaded] == [("1", "old"), ("2", "two")]


# Embedded(key="sku"): the map key is not unique among the old children.
lines_items = Table("migr-lines", pk="pk", sk="sk")
lines_embedded = Table("migr-lines", pk="pk", sk="sk")


@lines_items.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class LOrder:
    order_id: str
    lines = HasMany["LLine"](via=Partition())


@lines_items.model(pk="O#{order_id}", sk="LINE#{line_no}")
class LLine:
    order_id: str
    line_no: str
    sku: str
    qty: int = 0


@lines_embedded.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class KOrder:
    order_id: str
    lines = HasMany["KLine"](via=Embedded(key="sku"))


@lines_embedded.model(pk="O#{order_id}", sk="LINE#{line_no}")
class KLine:
    order_id: str
    line_no: str
    sku: str
    qty: int = 0


async def test_embedding_refuses_children_sharing_a_map_key(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, lines_embedded, lines_items) as (db, old):
        await put_each(
            old,
            [
                LOrder("1"),
                LLine("1", "1", "pen", 2),
                LLine("1", "2", "pen", 5),
                LOrder("2"),
                LLine("2", "1", "ink", 1),
            ],
        )
        dry = await migrate(db, KOrder.lines, from_=Partition(), dry_run=True)
        assert len(dry.refused) == 1
        assert "O#1" in dry.refused[0]
        assert "'pen'" in dry.refused[0]
        before = await stored(db)
        with pytest.raises(MigrationError, match="share the map key 'pen'"):
            await migrate(db, KOrder.lines, from_=Partition())
        assert await stored(db) == before

        # A child embedded already under "ink" that differs from the item moving in: refused.
        await set_raw(
            db,
            {"pk": "O#2", "sk": "#ORDER#2"},
            lines={
                "M": {
                    "ink": {
                        "M": {
                            "order_id": {"S": "2"},
                            "line_no": {"S": "9"},
                            "sku": {"S": "ink"},
                            "qty": {"N": "9"},
                        }
                    }
                }
            },
        )
        await old.delete(LLine("1", "2", "pen", 5))
        with pytest.raises(MigrationError, match="differs from the child embedded"):
            await migrate(db, KOrder.lines, from_=Partition())

        # The same child embedded already (a re-run after an interruption) is no clash.
        await set_raw(
            db,
            {"pk": "O#2", "sk": "#ORDER#2"},
            lines={
                "M": {
                    "ink": {
                        "M": {
                            "order_id": {"S": "2"},
                            "line_no": {"S": "1"},
                            "sku": {"S": "ink"},
                            "qty": {"N": "1"},
                        }
                    }
                }
            },
        )
        report = await migrate(db, KOrder.lines, from_=Partition())
        assert report.ok
        assert report.verification is not None
        assert (report.verification.parents, report.verification.children) == (2, 2)
        order = await db.get(KOrder, order_id="1", load=[KOrder.lines])
        assert order.lines.loaded == [KLine("1", "1", "pen", 2)]


async def test_embed_verification_compares_what_was_embedded_with_what_is_stored(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, lines_embedded, lines_items) as (db, old):
        await put_each(old, [LOrder("1"), LLine("1", "1", "pen", 2)])
        assert (await migrate(db, KOrder.lines, from_=Partition())).ok
        kind = Embed(KOrder.lines, Partition(), KOrder.lines.via_strategy(Partition()))
        raw = list((await db.send(Request("Scan", {"TableName": db.table_name})))["Items"])
        key = {"pk": {"S": "O#1"}, "sk": {"S": "#ORDER#1"}}
        pen, lost = KLine("1", "1", "pen", 2), KLine("1", "2", "cap", 1)
        digests = frozenset(child_digest(kind.codec, c) for c in (pen, lost))
        reach = await kind.reach(db, raw, {key_id(key): (key, digests)})
        assert (reach.unreachable, len(reach.parents), reach.children) == (1, 1, 1)
        assert "not there" in reach.problems[0]
        ok = await kind.reach(
            db, raw, {key_id(key): (key, digests - {child_digest(kind.codec, lost)})}
        )
        assert ok.unreachable == 0


# Denormalized copies on versioned, stamped children with attributes of another tool.
vbooks_before = Table("migr-vbooks", pk="pk", sk="sk")
vbooks_after = Table("migr-vbooks", pk="pk", sk="sk")


@vbooks_before.model(pk="A#{author}", sk="#AUTHOR#{author}")
class VOldAuthor:
    author: str
    born: str
    books = HasMany["VOldBook"](via=Partition())


@vbooks_before.model(pk="A#{author}", sk="BOOK#{title}", version="version", updated="updated")
class VOldBook:
    author: str
    title: str
    version: int = 0
    updated: datetime.datetime | None = None


@vbooks_after.model(pk="A#{author}", sk="#AUTHOR#{author}")
class VAuthor:
    author: str
    born: str
    books = HasMany["VBook"](via=Denormalized(copy={"born": "author_born"}))


@vbooks_after.model(pk="A#{author}", sk="BOOK#{title}", version="version", updated="updated")
class VBook:
    author: str
    title: str
    author_born: str = ""
    version: int = 0
    updated: datetime.datetime | None = None


async def test_repair_copies_rewrites_only_the_copies(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, vbooks_after, vbooks_before) as (db, old):
        await put_each(old, [VOldAuthor("ann", "1950"), VOldBook("ann", "one")])
        await set_raw(db, {"pk": "A#ann", "sk": "BOOK#one"}, legacy={"S": "keep me"})
        (before,) = [i for i in await stored(db) if i["sk"] == "BOOK#one"]

        report = await repair_copies(db, VAuthor.books)

        assert report.ok
        assert report.written == 1
        (after,) = [i for i in await stored(db) if i["sk"] == "BOOK#one"]
        assert after == {**before, "author_born": "1950"}  # version, updated, legacy as stored
        await assert_second_run_writes_nothing(db, lambda: repair_copies(db, VAuthor.books))


# -- checkpoints that cannot be used --------------------------------------------------------------


async def test_a_checkpoint_path_that_cannot_be_written_fails_before_any_write(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await write_partition_layout(old)
        with count_requests(db) as log, pytest.raises(CheckpointError, match="cannot be written"):
            await migrate(
                db, IParent.items, from_=Partition(), checkpoint=tmp_path / "no" / "c.json"
            )
        assert len(log) == 0
        assert await stored(db) == PARTITION_LAYOUT


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("counters"),
        lambda d: d.update(extra=1),
        lambda d: d.update(counters={"pages": "x"}),
        lambda d: d.update(positions=None),
        lambda d: d.update(done=[True, False, True]),
    ],
    ids=["no-counters", "unknown-key", "bad-counters", "bad-positions", "bad-done"],
)
async def test_a_malformed_checkpoint_is_refused_with_what_to_do(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path, damage: Any
) -> None:
    checkpoint = tmp_path / "move.json"
    async with both(dynorm_connect, dynorm_server, in_index, in_partition) as (db, old):
        await write_partition_layout(old)

        def stop(progress: MigrationProgress) -> None:
            raise StopRunError

        with pytest.raises(StopRunError):
            await migrate(
                db,
                IParent.items,
                from_=Partition(),
                checkpoint=checkpoint,
                on_progress=stop,
                page_size=2,
            )
        data = json.loads(checkpoint.read_text())
        damage(data)
        checkpoint.write_text(json.dumps(data))
        with count_requests(db) as log, pytest.raises(CheckpointError, match="delete it"):
            await migrate(db, IParent.items, from_=Partition(), checkpoint=checkpoint)
        assert len(log) == 0


# -- children whose link does not name a whole parent ----------------------------------------------

groups_before = Table("migr-groups", pk="pk", sk="sk")
groups_after = Table("migr-groups", pk="pk", sk="sk")


@groups_before.model(pk="G#{g}", sk="#G#{g}#{v}")
class OldGroup:
    g: str
    v: str
    members = HasMany["OldMember"](via=Partition())


@groups_before.model(pk="G#{g}", sk="M#{m}")
class OldMember:
    g: str
    m: str


@groups_after.model(pk="G#{g}", sk="#G#{g}#{v}")
class Group:
    g: str
    v: str
    members = HasMany["Member"](via=Denormalized(copy={"g": "group"}))


@groups_after.model(pk="G#{g}", sk="M#{m}")
class Member:
    g: str
    m: str
    group: str = ""


async def test_children_that_cannot_be_checked_are_counted_not_passed(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, groups_after, groups_before) as (db, old):
        await put_each(old, [OldGroup("x", "1"), OldMember("x", "a"), OldMember("x", "b")])
        report = await repair_copies(db, Group.members, page_size=1)
        assert report.written == 2
        assert report.verification is not None
        assert report.verification.unchecked == 2
        assert isinstance(report.verification.problems, tuple)
        assert report.verification.children == 0
        assert any("not checked" in p for p in report.verification.problems)


# -- clashes across pages and segments; unembedding over stored items -----------------------------


async def test_a_move_refuses_new_keys_met_across_segments_and_pages(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, stamped_after, stamped_before) as (db, old):
        notes = [SOldNote(p, str(i), f"{p}{i}") for i in range(40) for p in "ab"]
        await put_each(old, [SOldParent("a"), SOldParent("b"), *notes])
        # Notes "a"/i and "b"/i meet at one new key. Pages of one item: a dry run sees every
        # new key free in the table, and must refuse the second note met all the same.
        dry = await migrate(db, SParent.notes, from_=Partition(), dry_run=True, page_size=1)
        assert not dry.ok
        assert dry.refused
        assert all("another page of this run" in r for r in dry.refused)
        # Segments plan their pages concurrently: each reads the new keys before any writes.
        with pytest.raises(MigrationError, match="new key"):
            await migrate(db, SParent.notes, from_=Partition(), segments=4, page_size=5)
        # Some moved, some stopped halfway (put, not yet deleted: a re-run finds its own); none
        # is lost.
        assert {i["body"] for i in await stored(db) if "nid" in i} == {n.body for n in notes}


async def test_unembedding_refuses_a_child_key_that_holds_another_item(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, collection, embedded_plain) as (db, old):
        order = await old.put(EOrder("1"))
        await old.add(order, EOrder.lines, PlainLine("pen", 2))
        await old.add(order, EOrder.lines, PlainLine("ink", 1))
        # An interrupted run put the children, but not yet the parent update; since then the
        # new code changed "pen".
        await db.put_all([CLine("1", "pen", 50), CLine("1", "ink", 1)])
        before = await stored(db)

        dry = await migrate(db, COrder.lines, from_=Embedded(key="name"), dry_run=True)
        assert len(dry.refused) == 1
        assert "LINE#pen" in dry.refused[0]
        assert "LINE#ink" not in dry.refused[0]
        with count_requests(db) as log, pytest.raises(MigrationError, match="holds another"):
            await migrate(db, COrder.lines, from_=Embedded(key="name"))
        assert not WRITES & set(log.operations)
        assert await stored(db) == before

        # Once that item is settled (here: as the embedded child), the re-run finds its own.
        await db.put(CLine("1", "pen", 2))
        report = await migrate(db, COrder.lines, from_=Embedded(key="name"))
        assert report.ok
        order_now = await db.get(COrder, order_id="1", load=[COrder.lines])
        assert order_now.lines.loaded == [CLine("1", "ink", 1), CLine("1", "pen", 2)]


list_embedded = Table("migr-list", pk="pk", sk="sk")
list_items = Table("migr-list", pk="pk", sk="sk")


@attrs.define
class ListLine:
    name: str
    qty: int = 0


@list_embedded.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class ListOrder:
    order_id: str
    lines = HasMany[ListLine](ListLine, via=Embedded())


@list_items.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class ItemOrder:
    order_id: str
    lines = HasMany["ItemLine"](via=Partition())


@list_items.model(pk="O#{order_id}", sk="LINE#{name}")
class ItemLine:
    order_id: str
    name: str
    qty: int = 0


async def test_unembedding_a_list_refuses_children_that_become_one_item(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, list_items, list_embedded) as (db, old):
        order = await old.put(ListOrder("1"))
        for line in (ListLine("pen", 2), ListLine("pen", 5), ListLine("ink", 1)):
            await old.add(order, ListOrder.lines, line)
        await old.put(ListOrder("2"))
        await old.add(await old.get(ListOrder, order_id="2"), ListOrder.lines, ListLine("pen", 9))
        before = await stored(db)

        dry = await migrate(db, ItemOrder.lines, from_=Embedded(), dry_run=True)
        assert len(dry.refused) == 1
        assert "#ORDER#1" in dry.refused[0]
        assert "2 of its children" in dry.refused[0]
        with pytest.raises(MigrationError, match="become the one item"):
            await migrate(db, ItemOrder.lines, from_=Embedded(), page_size=1)
        after = {i["sk"]: i for i in await stored(db) if i["pk"] == "O#1"}
        assert after == {i["sk"]: i for i in before if i["pk"] == "O#1"}  # nothing of it written
