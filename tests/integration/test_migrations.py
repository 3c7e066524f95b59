"""dynorm.migrations: live data moved between strategies, checked item by item.

Each test writes data in the OLD layout through a Database on an old declaration (a second
Table object of the same name, on the same stored table), runs the migration through a
Database on the current declaration, then reads every stored item back with a raw Scan and
reads the children through the loaders.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
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
from dynorm.migrations import (
    CheckpointError,
    MigrationError,
    MigrationProgress,
    backfill_index,
    migrate,
    repair_copies,
)
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import FaultPlan, connect_through, connect_to

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


async def stored(db: Database) -> list[dict[str, Any]]:
    """Every stored item (consistent raw Scan), values flattened, sorted by table key."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"TableName": db.table_name, "ConsistentRead": True}
    while True:
        page = await db.send(Request("Scan", params))
        items += [{k: _flat(v) for k, v in raw.items()} for raw in page.get("Items", [])]
        if not page.get("LastEvaluatedKey"):
            break
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


def _flat(value: Mapping[str, Any]) -> Any:
    ((kind, inner),) = value.items()
    if kind == "M":
        return {k: _flat(v) for k, v in inner.items()}
    if kind == "L":
        return [_flat(v) for v in inner]
    return inner


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
