"""Writes of a parent whose relationship declares ``was=``: the old layout is kept as stored.

A parent moving its children out of ``Embedded(key=...)`` still holds the children not yet moved
in its own item. Every write of the parent (put, put_all, a transaction's put, conditional puts,
updates, a versioned model's put) must leave that attribute exactly as stored, at the cost of
the put that keeps ``via=Embedded`` children; the migration then still moves every child.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    Attr,
    ConditionFailedError,
    Database,
    Embedded,
    HasMany,
    Partition,
    Request,
    StaleItemError,
    Table,
    TransactionCanceledError,
    VersionConflictError,
    field,
)
from dynorm.migrations import migrate, migration_status, upgrade_items
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .raw import raw_item, raw_put, raw_scan
from .was_models import (
    Line,
    MLine,
    MOrder,
    OldItem,
    OldParent,
    Parent,
    RLine,
    ROrder,
    into_map,
    new_move,
    old_move,
    rows,
)

pytestmark = pytest.mark.integration

# -- the old declaration (children in the parent's map) and the new one ---------------------------

old_table = Table("was-parent", pk="pk", sk="sk")
new_table = Table("was-parent", pk="pk", sk="sk")
versioned = Table("was-parent", pk="pk", sk="sk")


@old_table.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class WOrder:
    order_id: str
    title: str = ""
    lines = HasMany[Line](Line, via=Embedded(key="name"))


@new_table.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class POrder:
    order_id: str
    title: str = ""
    lines = HasMany["PLine"](via=Partition(), was=Embedded(key="name"))


@new_table.model(pk="O#{order_id}", sk="LINE#{name}")
class PLine:
    order_id: str
    name: str
    qty: int = 0


def to_v2(item: dict[str, Any]) -> dict[str, Any]:
    """Version 1 had no title."""
    return {**item, "title": item.get("title", "untitled")}


@versioned.model(pk="O#{order_id}", sk="#ORDER#{order_id}", schema_version=2, upgrades={1: to_v2})
class SOrder:
    order_id: str
    title: str = field(default="")
    lines = HasMany["SLine"](via=Partition(), was=Embedded(key="name"))


@versioned.model(pk="O#{order_id}", sk="LINE#{name}")
class SLine:
    order_id: str
    name: str
    qty: int = 0


locked = Table("was-parent", pk="pk", sk="sk")


@locked.model(pk="O#{order_id}", sk="#ORDER#{order_id}", version="version")
class KOrder:
    order_id: str
    title: str = ""
    version: int = 0
    lines = HasMany["KLine"](via=Partition(), was=Embedded(key="name"))


@locked.model(pk="O#{order_id}", sk="LINE#{name}")
class KLine:
    order_id: str
    name: str
    qty: int = 0


KEY = {"pk": "O#o1", "sk": "#ORDER#o1"}


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table = new_table, old: Table = old_table
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the current declaration, db on the old one), one fresh stored table."""
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


async def old_order(old: Database, order_id: str = "o1", names: str = "xyz") -> dict[str, Any]:
    """A parent stored by the old code, its children in its map; returns its raw map."""
    order = await old.put(WOrder(order_id, "old"))
    for qty, name in enumerate(names, 1):
        await old.add(order, WOrder.lines, Line(name, qty))
    raw = await raw_item(old, {"pk": f"O#{order_id}", "sk": f"#ORDER#{order_id}"})
    assert raw is not None
    lines: dict[str, Any] = raw["lines"]
    assert sorted(lines["M"]) == sorted(names)
    return lines


async def embedded_put_cost(old: Database, obj: object) -> list[str]:
    """What the put that keeps via=Embedded children (not held) sends: the cost to match."""
    with count_requests(old) as log:
        await old.put(obj)
    return log.operations


async def lines_of(db: Database, order_id: str = "o1") -> list[PLine]:
    loaded = await db.get(POrder, order_id=order_id, load=[POrder.lines])
    return list(loaded.lines.loaded or [])


def line_item(order_id: str, name: str, qty: int) -> dict[str, Any]:
    """A child's item in the new layout (Partition()), as stored."""
    return {"pk": {"S": f"O#{order_id}"}, "sk": {"S": f"LINE#{name}"},
            "order_id": {"S": order_id}, "name": {"S": name}, "qty": {"N": str(qty)}}  # fmt: skip


def every_line(names: str = "xyz") -> list[PLine]:
    return [PLine("o1", name, qty) for qty, name in enumerate(names, 1)]


# -- db.put ----------------------------------------------------------------------------------------


async def test_put_keeps_the_old_map_as_stored(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        before = await old_order(old)
        cost = await embedded_put_cost(old, WOrder("o1", "old"))

        explained = db.explain.put(POrder("o1", "built in code"))
        with count_requests(db) as log:
            await db.put(POrder("o1", "built in code"))
        assert log.operations == cost == [r.operation for r in explained] == ["UpdateItem"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert raw["lines"] == before
        assert raw["title"] == {"S": "built in code"}

        # A parent loaded through the union (its children in memory) keeps the map too.
        loaded = await db.get(POrder, order_id="o1", load=[POrder.lines])
        assert loaded.lines.loaded == every_line()
        with count_requests(db) as log:
            await db.put(loaded)
        assert log.operations == ["UpdateItem"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert raw["lines"] == before
        assert await lines_of(db) == every_line()


async def test_a_new_parent_gets_no_old_attribute(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, _):
        with count_requests(db) as log:
            await db.put(POrder("o1", "new"))
        assert log.operations == ["UpdateItem"]
        assert await raw_item(db, KEY) == {
            "pk": {"S": "O#o1"}, "sk": {"S": "#ORDER#o1"}, "order_id": {"S": "o1"},
            "title": {"S": "new"},
        }  # fmt: skip
        assert await lines_of(db) == []


async def test_conditional_puts_keep_the_old_map(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        before = await old_order(old)

        with count_requests(db) as log:
            await db.put(POrder("o1", "checked"), condition=Attr("title") == "old")
        assert log.operations == ["UpdateItem"]
        with pytest.raises(ConditionFailedError):
            await db.put(POrder("o1", "refused"), overwrite=False)
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], raw["title"]) == (before, {"S": "checked"})
        assert await lines_of(db) == every_line()


async def test_update_leaves_the_old_map_alone(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        before = await old_order(old)

        with count_requests(db) as log:
            await db.update(POrder("o1"), set={"title": "updated"})
            await db.update(POrder("o2"), set={"title": "upserted"}, upsert=True)
        assert log.operations == ["UpdateItem", "UpdateItem"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], raw["title"]) == (before, {"S": "updated"})
        created = await raw_item(db, {"pk": "O#o2", "sk": "#ORDER#o2"})
        assert created is not None
        assert "lines" not in created
        assert await lines_of(db) == every_line()


# -- db.put_all ------------------------------------------------------------------------------------


async def test_put_all_keeps_each_stored_map(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        first = await old_order(old, "o1", "xyz")
        second = await old_order(old, "o2", "ab")
        with count_requests(old) as log:
            await old.put_all([WOrder("o1"), WOrder("o2")])
        cost = log.operations
        loaded = await db.get(POrder, order_id="o2", load=[POrder.lines])

        explained = db.explain.put_all([POrder("o1", "one"), loaded, POrder("o3", "new")])
        assert [r.operation for r in explained] == ["UpdateItem"] * 3
        with count_requests(db) as log:
            await db.put_all([POrder("o1", "one"), loaded, POrder("o3", "new")])
        # One UpdateItem per parent that may hold the old map, as via=Embedded costs (no read:
        # a read, then a batch writing the maps back, would undo a change made in between).
        assert cost == ["UpdateItem"] * 2
        assert log.operations == ["UpdateItem"] * 3
        stored = {i["pk"]["S"]: i for i in await raw_scan(db)}
        assert stored["O#o1"]["lines"] == first
        assert stored["O#o1"]["title"] == {"S": "one"}
        assert stored["O#o2"]["lines"] == second
        assert "lines" not in stored["O#o3"]
        assert await lines_of(db, "o1") == every_line("xyz")


# -- transactions, and the migration after every kind of put ------------------------------------


@pytest.mark.transactions
async def test_transaction_put_keeps_the_old_map(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        before = await old_order(old)

        with count_requests(db) as log:
            async with db.transaction() as tx:
                tx.put(POrder("o1", "in a transaction"))
                tx.put(PLine("o1", "w", 9))
        # The GetItem is the child's (whether its entry is in the map): the parent adds none.
        assert log.operations == ["GetItem", "TransactWriteItems"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], raw["title"]) == (before, {"S": "in a transaction"})
        assert await lines_of(db) == [PLine("o1", "w", 9), *every_line()]


@pytest.mark.transactions
async def test_the_migration_moves_every_child_after_the_parent_is_written(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        await old_order(old, "o1", "xyz")
        await old_order(old, "o2", "ab")
        await db.put(POrder("o1", "put"))
        await db.put_all([POrder("o2", "put_all")])
        async with db.transaction() as tx:
            tx.put(POrder("o1", "tx"))
        assert await migration_status(db, POrder.lines) == 5

        report = await migrate(db, POrder.lines)
        assert report.ok
        assert await migration_status(db, POrder.lines) == 0
        assert await lines_of(db, "o1") == every_line("xyz")
        loaded = await db.get(POrder, order_id="o2", load=[POrder.lines])
        assert loaded.lines.loaded == [PLine("o2", "a", 1), PLine("o2", "b", 2)]
        assert (loaded.title, (await db.get(POrder, order_id="o1")).title) == ("put_all", "tx")


# -- versioned parents -----------------------------------------------------------------------------


async def test_an_optimistically_locked_put_keeps_the_map_and_checks_the_version(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, locked) as (db, old):
        before = await old_order(old)
        await db.send(  # the old code kept no version: as if it had written version 1
            Request(
                "UpdateItem",
                {
                    "TableName": db.table_name,
                    "Key": {k: {"S": v} for k, v in KEY.items()},
                    "UpdateExpression": "SET #v = :one",
                    "ExpressionAttributeNames": {"#v": "version"},
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                },
            )
        )
        read = await db.get(KOrder, order_id="o1")

        with count_requests(db) as log:
            stored = await db.put(attrs.evolve(read, title="locked"))
        assert log.operations == ["UpdateItem"]
        assert stored.version == read.version + 1
        with pytest.raises(VersionConflictError):
            await db.put(attrs.evolve(read, title="stale"))
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], raw["title"]) == (before, {"S": "locked"})


async def test_a_versioned_put_is_refused_over_an_older_item_and_keeps_the_map(
    dynorm_connect: Connect, dynorm_server: RunningServer, dynorm_backend: str
) -> None:
    async with both(dynorm_connect, dynorm_server, versioned) as (db, old):
        before = await old_order(old)  # stored by code without a version: version 1

        # Kept under the current version, the map would be version 1's: refused, nothing written
        # (moto sends the stored item back with the refusal; dynalite does not: it is read).
        with count_requests(db) as log, pytest.raises(StaleItemError):
            await db.put(SOrder("o1", "v2"))
        refusal_reads = [] if dynorm_backend == "moto" else ["GetItem"]
        assert log.operations == ["UpdateItem", *refusal_reads]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], "_v" in raw) == (before, False)

        await upgrade_items(db, SOrder)
        with count_requests(db) as log:
            await db.put(SOrder("o1", "v2"))
        assert log.operations == ["UpdateItem"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], raw["_v"], raw["title"]) == (before, {"N": "2"}, {"S": "v2"})
        loaded = await db.get(SOrder, order_id="o1", load=[SOrder.lines])
        assert loaded.lines.loaded == [SLine("o1", n, q) for q, n in enumerate("xyz", 1)]


# -- cascading deletes -----------------------------------------------------------------------------


async def test_a_cascading_delete_removes_both_layouts(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server) as (db, old):
        await old_order(old)
        parent = await db.get(POrder, order_id="o1")
        for name in "xw":  # x in both layouts (a move half seen), w only in the new one
            await raw_put(db, line_item("o1", name, 1))

        await db.delete(parent, cascade=True)
        assert await raw_scan(db) == []


# -- the other way: via=Embedded, was=Partition() ------------------------------------------------


@pytest.mark.transactions
async def test_into_a_map_a_put_of_the_loaded_parent_writes_the_old_children(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, into_map, rows) as (db, old):
        await old.put_all([ROrder("o1"), RLine("o1", "a", 1), RLine("o1", "b", 2)])
        loaded = await db.get(MOrder, order_id="o1", load=[MOrder.lines])
        assert loaded.lines.loaded == [MLine("o1", "a", 1), MLine("o1", "b", 2)]

        # The union's children are written into the map; their old items stay until migrated,
        # and reads show each child once (the map's copy wins).
        with count_requests(db) as log:
            await db.put(loaded)
        assert log.operations == ["UpdateItem"]
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert sorted(raw["lines"]["M"]) == ["a", "b"]
        assert len(await raw_scan(db)) == 3
        again = await db.get(MOrder, order_id="o1", load=[MOrder.lines])
        assert again.lines.loaded == [MLine("o1", "a", 1), MLine("o1", "b", 2)]

        report = await migrate(db, MOrder.lines)
        assert report.ok
        assert await migration_status(db, MOrder.lines) == 0
        assert [i["sk"]["S"] for i in await raw_scan(db)] == ["#ORDER#o1"]
        final = await db.get(MOrder, order_id="o1", load=[MOrder.lines])
        assert final.lines.loaded == [MLine("o1", "a", 1), MLine("o1", "b", 2)]


async def test_into_a_map_a_cascading_delete_removes_the_old_items(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, into_map, rows) as (db, old):
        await old.put_all([ROrder("o1"), RLine("o1", "a", 1), RLine("o1", "b", 2)])
        parent = await db.put(MOrder("o1"))  # its map: empty, created by the put

        explained = db.explain.delete(parent, cascade=True)
        with count_requests(db) as log:
            await db.delete(parent, cascade=True)
        # The old items' Query (the map goes with the parent), as explain shows it.
        assert log.operations == [r.operation for r in explained] == [
            "GetItem", "Query", "UpdateItem", "BatchWriteItem", "DeleteItem",
        ]  # fmt: skip
        assert await raw_scan(db) == []


async def test_between_collections_a_cascading_delete_removes_the_old_items(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3), OldItem("a", "fig", 1)])
        await raw_put(db, {  # kiwi, in the new layout (the index)
            "pk": {"S": "I#a#kiwi"}, "sk": {"S": "I#a#kiwi"}, "GSI1PK": {"S": "P#a"},
            "GSI1SK": {"S": "ITEM#kiwi"}, "parent_id": {"S": "a"}, "name": {"S": "kiwi"},
            "qty": {"N": "1"},
        })  # fmt: skip
        parent = await db.get(Parent, parent_id="a")

        explained = db.explain.delete(parent, cascade=True)
        with count_requests(db) as log:
            await db.delete(parent, cascade=True)
        assert sorted(r.operation for r in explained) == sorted(log.operations)
        # The root read, then the level's Queries at once: Parent.items in the new layout (the
        # index) and in the old one (the table), Parent.plain in the index; then the mark, the
        # children's deletions in one batch, and the root's.
        sent = [(e.operation, e.index or "") for e in log.events]
        assert sent[0] == ("GetItem", "")
        assert sorted(sent[1:4]) == [("Query", ""), ("Query", "GSI1"), ("Query", "GSI1")]
        assert [op for op, _ in sent[4:]] == ["UpdateItem", "BatchWriteItem", "DeleteItem"]
        assert await raw_scan(db) == []


@pytest.mark.transactions
async def test_a_versioned_put_in_a_transaction_is_refused_over_an_older_item(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, versioned) as (db, old):
        before = await old_order(old)

        # The same condition as db.put's, in the transaction: cancelled, nothing written.
        with pytest.raises(TransactionCanceledError):
            async with db.transaction() as tx:
                tx.put(SOrder("o1", "v2"))
        raw = await raw_item(db, KEY)
        assert raw is not None
        assert (raw["lines"], "_v" in raw) == (before, False)
