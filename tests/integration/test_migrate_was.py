"""``migrate(db, rel)`` reading ``was=``, beside writers, and ``migration_status``.

The data is written in the OLD layout through a Database on an old declaration (a second Table
object of the same name); the current declaration says ``via=NEW, was=OLD``. Every check reads
the stored items raw.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Database, DefinitionError, Index, Partition, Table
from dynorm.migrations import MigrationError, migrate, migration_status
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .raw import raw_put, stored
from .was_models import (
    EOrder,
    Line,
    MOrder,
    OldItem,
    OldParent,
    Parent,
    RLine,
    ROrder,
    embedded,
    into_map,
    new_move,
    old_move,
    rows,
)

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the current declaration, db on the old one), one fresh stored table."""
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


def partition_item(parent_id: str, name: str, qty: int) -> dict[str, Any]:
    return {"pk": f"P#{parent_id}", "sk": f"ITEM#{name}", "parent_id": parent_id, "name": name,
            "qty": str(qty)}  # fmt: skip


def index_item(parent_id: str, name: str, qty: int) -> dict[str, Any]:
    return {
        "pk": f"I#{parent_id}#{name}",
        "sk": f"I#{parent_id}#{name}",
        "GSI1PK": f"P#{parent_id}",
        "GSI1SK": f"ITEM#{name}",
        "parent_id": parent_id,
        "name": name,
        "qty": str(qty),
    }


def parent_item(parent_id: str) -> dict[str, Any]:
    return {"pk": f"P#{parent_id}", "sk": f"#PARENT#{parent_id}", "GSI1PK": f"P#{parent_id}",
            "GSI1SK": f"#PARENT#{parent_id}", "parent_id": parent_id}  # fmt: skip


def by_key(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


async def write_old_move(old: Database) -> None:
    await old.put_all(
        [
            OldParent("a"),
            OldParent("b"),
            OldItem("a", "apple", 3),
            OldItem("a", "pear", 5),
            OldItem("b", "fig", 1),
        ]
    )


# -- migrate() reads was= -------------------------------------------------------------------------


@pytest.mark.transactions
async def test_migrate_without_from_moves_out_of_was_one_transaction_a_child(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await write_old_move(old)
        assert await migration_status(db, Parent.items) == 3

        with count_requests(db) as log:
            report = await migrate(db, Parent.items, verify=False)

        assert (report.kind, report.written, report.deleted, report.updated) == ("move", 3, 3, 2)
        assert report.subject == "Parent.items: Partition() -> Index('GSI1')"
        # Each child moved in one TransactWriteItems (put the new item, delete the old one);
        # the parents' index keys in an UpdateItem each, as without was=.
        writes = [o for o in log.operations if o not in ("Scan", "BatchGetItem", "DescribeTable")]
        assert sorted(writes) == ["TransactWriteItems"] * 3 + ["UpdateItem"] * 2
        assert await stored(db) == by_key(
            [
                parent_item("a"),
                parent_item("b"),
                index_item("a", "apple", 3),
                index_item("a", "pear", 5),
                index_item("b", "fig", 1),
            ]
        )
        with count_requests(db) as log:
            assert await migration_status(db, Parent.items) == 0
        assert log.operations == ["Scan"]


@pytest.mark.transactions
async def test_migrate_with_from_equal_to_was_is_the_same_run(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await write_old_move(old)
        report = await migrate(db, Parent.items, from_=Partition())
        assert report.ok
        assert (report.written, report.deleted) == (3, 3)
        assert await migration_status(db, Parent.items, from_=Partition()) == 0


@pytest.mark.transactions
async def test_a_new_copy_written_by_the_application_wins_over_the_old_one(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await write_old_move(old)
        # The application (reading both layouts, writing the new one) changed apple already.
        await raw_put(
            db, {k: {"S": v} for k, v in index_item("a", "apple", 9).items() if k != "qty"}
            | {"qty": {"N": "9"}}
        )  # fmt: skip

        report = await migrate(db, Parent.items)

        assert report.ok
        assert (report.written, report.deleted) == (2, 3)
        items = await stored(db)
        assert index_item("a", "apple", 9) in items
        assert partition_item("a", "apple", 3) not in items
        assert await migration_status(db, Parent.items) == 0


async def test_without_was_a_new_key_holding_another_item_is_still_refused(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await write_old_move(old)
        await raw_put(
            db, {k: {"S": v} for k, v in index_item("a", "apple", 9).items() if k != "qty"}
        )

        with pytest.raises(MigrationError, match="holds another item already"):
            await migrate(db, Parent.plain, from_=Partition())
        assert partition_item("a", "apple", 3) in await stored(db)


async def test_migrate_and_status_say_what_to_declare(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(new_move) as db:
        with count_requests(db) as log:
            await check_refusals(db)
    assert log.operations == []


async def check_refusals(db: Database) -> None:
    for call in (migrate, migration_status):
        with pytest.raises(DefinitionError, match=r"Declare it on the relationship.*was="):
            await call(db, Parent.plain)
        with pytest.raises(DefinitionError, match=r"declares was=Partition\(\); the chil"):
            await call(db, Parent.items, from_=Index("GSI1", shards=2))


# -- out of an embedded layout, and into one ------------------------------------------------------


def line_item(order_id: str, name: str, qty: int) -> dict[str, Any]:
    return {"pk": f"O#{order_id}", "sk": f"LINE#{name}", "order_id": order_id, "name": name,
            "qty": str(qty)}  # fmt: skip


@pytest.mark.transactions
async def test_unembedding_with_was_counts_entries_and_keeps_a_newer_item(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        o1, o2 = await old.put(EOrder("o1")), await old.put(EOrder("o2"))
        await old.add(o1, EOrder.lines, Line("a", 1))
        await old.add(o1, EOrder.lines, Line("b", 2))
        await old.add(o2, EOrder.lines, Line("c", 3))
        # A newer copy of b beside its entry (the application's put removes the entry with it:
        # written here raw, as a put racing the migration's read of the parent leaves it).
        await raw_put(db, {k: {"S": v} for k, v in line_item("o1", "b", 20).items() if k != "qty"}
                      | {"qty": {"N": "20"}})  # fmt: skip
        assert await migration_status(db, ROrder.lines) == 3

        with count_requests(db) as log:
            report = await migrate(db, ROrder.lines, verify=False)

        assert report.ok
        assert (report.written, report.updated) == (2, 2)
        # One TransactWriteItems a parent: its children's items and the attribute removed.
        assert [
            o for o in log.operations if o not in ("Scan", "BatchGetItem", "DescribeTable")
        ] == ["TransactWriteItems"] * 2
        assert await stored(db) == by_key(
            [
                {"pk": "O#o1", "sk": "#ORDER#o1", "order_id": "o1"},
                {"pk": "O#o2", "sk": "#ORDER#o2", "order_id": "o2"},
                line_item("o1", "a", 1),
                line_item("o1", "b", 20),
                line_item("o2", "c", 3),
            ]
        )
        assert await migration_status(db, ROrder.lines) == 0


@pytest.mark.transactions
async def test_embedding_with_was_counts_items_and_keeps_a_newer_entry(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, into_map, rows) as (db, old):
        await old.put_all([ROrder("o1"), RLine("o1", "a", 1), RLine("o1", "b", 2)])
        # The application's newer copy of b, embedded already (reads take it over the item).
        entry = {"order_id": {"S": "o1"}, "name": {"S": "b"}, "qty": {"N": "20"}}
        await raw_put(
            db,
            {
                "pk": {"S": "O#o1"},
                "sk": {"S": "#ORDER#o1"},
                "order_id": {"S": "o1"},
                "lines": {"M": {"b": {"M": entry}}},
            },
        )
        assert await migration_status(db, MOrder.lines) == 2

        with count_requests(db) as log:
            report = await migrate(db, MOrder.lines, verify=False)

        assert report.ok
        assert (report.updated, report.deleted) == (1, 2)
        # The parent's attribute set and both old items deleted: one TransactWriteItems.
        writes = [
            o for o in log.operations if o in ("TransactWriteItems", "UpdateItem", "DeleteItem")
        ]
        assert writes == ["TransactWriteItems"]
        lines = {"a": {"order_id": "o1", "name": "a", "qty": "1"},
                 "b": {"order_id": "o1", "name": "b", "qty": "20"}}  # fmt: skip
        assert await stored(db) == [
            {"pk": "O#o1", "sk": "#ORDER#o1", "order_id": "o1", "lines": lines}
        ]
        assert await migration_status(db, MOrder.lines) == 0


async def test_migration_status_counts_old_children_and_writes_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await write_old_move(old)
        # An item in the new layout (written raw: dynalite has no transactions): not counted.
        kiwi = {k: {"S": v} for k, v in index_item("a", "kiwi", 1).items() if k != "qty"}
        await raw_put(db, {**kiwi, "qty": {"N": "1"}})
        with count_requests(db) as log:
            assert await migration_status(db, Parent.items, page_size=2) == 3
        # Scan pages of 2 items: 2 parents, 3 old children and 1 new one, read whole (a server
        # may answer a full last page with a key to go on from: one more, empty, page).
        assert set(log.operations) == {"Scan"}
        assert len(log.operations) in (3, 4)
