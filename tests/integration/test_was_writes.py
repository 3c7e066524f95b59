"""Writes of a child while its relationship declares ``was=``: the new copy, the old one gone.

Every check reads the stored items raw, and counts the requests each write sends.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Database, ItemNotFoundError, LimitExceededError, Table, VersionConflictError
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .raw import raw_item, raw_put
from .raw import stored as every_item
from .was_models import (
    BItem,
    EOrder,
    IItem,
    IParent,
    Item,
    Line,
    LOrder,
    MLine,
    MOrder,
    NLine,
    NOrder,
    OldItem,
    OldParent,
    OneItem,
    OneParent,
    Parent,
    RLine,
    ROrder,
    ShardItem,
    VItem,
    embedded,
    from_index,
    into_map,
    listed,
    new_move,
    old_move,
    one_partition,
    rows,
    to_partition,
    two_shards,
    unlisted,
    versioned,
)

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the current declaration, db on the old one), one fresh stored table."""
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


async def stored(db: Database) -> list[dict[str, Any]]:
    """Every stored item, flattened, without the write tokens of non-idempotent updates."""
    return [{k: v for k, v in i.items() if k != "dynorm:wt"} for i in await every_item(db)]


def keys(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(i["pk"], i["sk"]) for i in items]


# -- Partition() -> Index("GSI1") ------------------------------------------------------------------

OLD_APPLE = ("P#a", "ITEM#apple")
NEW_APPLE = ("I#a#apple", "I#a#apple")


async def test_add_writes_the_new_item_and_deletes_the_old_one_in_one_transaction(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3)])
        parent = await db.get(Parent, parent_id="a")

        with count_requests(db) as log:
            await db.add(parent, Parent.items, Item("a", "apple", 4))

        assert log.operations == ["TransactWriteItems"]
        items = await stored(db)
        assert OLD_APPLE not in keys(items)
        assert {"pk": "I#a#apple", "sk": "I#a#apple", "GSI1PK": "P#a", "GSI1SK": "ITEM#apple",
                "parent_id": "a", "name": "apple", "qty": "4"} in items  # fmt: skip

        # A put of a child never stored in the old layout: the same one transaction (the
        # deletion of a missing old item changes nothing).
        with count_requests(db) as log:
            await db.put(Item("a", "pear", 1))
        assert log.operations == ["TransactWriteItems"]
        assert ("I#a#pear", "I#a#pear") in keys(await stored(db))
        # Read through both layouts: each child once, as written.
        found = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert found.items.loaded == [Item("a", "apple", 4), Item("a", "pear", 1)]


async def test_remove_and_delete_take_both_copies(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3), OldItem("a", "fig", 1)])
        await db.put(Item("a", "fig", 1))
        await old.put(OldItem("a", "fig", 1))  # both copies of fig
        parent = await db.get(Parent, parent_id="a")

        with count_requests(db) as log:
            await db.remove(parent, Parent.items, Item("a", "apple", 3))
            await db.delete(Item("a", "fig", 1))

        assert log.operations == ["TransactWriteItems"] * 2
        assert keys(await stored(db)) == [("P#a", "#PARENT#a")]


async def test_an_update_of_a_child_in_the_old_layout_moves_it_first(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put(OldParent("a"))
        # Stored by the old code, with an attribute no model declares: the move keeps it.
        legacy = {"legacy": {"S": "kept"}, "qty": {"N": "3"}}
        await raw_put(db, {"pk": {"S": "P#a"}, "sk": {"S": "ITEM#apple"}, "parent_id": {"S": "a"},
                           "name": {"S": "apple"}, **legacy})  # fmt: skip

        with count_requests(db) as log:
            updated = await db.update(Item("a", "apple", 3), add={"qty": 2})

        assert updated == Item("a", "apple", 5)
        # Refused (no new item: the refusal carries none), the old one read and moved, the
        # update sent again.
        assert log.operations == [
            "TransactWriteItems",
            "GetItem",
            "TransactWriteItems",
            "UpdateItem",
        ]
        assert await stored(db) == [
            {"pk": "I#a#apple", "sk": "I#a#apple", "GSI1PK": "P#a", "GSI1SK": "ITEM#apple",
             "parent_id": "a", "name": "apple", "qty": "5", "legacy": "kept"},
            {"pk": "P#a", "sk": "#PARENT#a", "parent_id": "a"},
        ]  # fmt: skip

        # Once moved: one transaction (the update, the old item's deletion), the item read back.
        with count_requests(db) as log:
            await db.update(Item("a", "apple", 5), set={"qty": 6})
        assert log.operations == ["TransactWriteItems", "GetItem"]
        with count_requests(db) as log:
            await db.update(Item("a", "apple", 6), set={"qty": 7}, returns=None)
        assert log.operations == ["TransactWriteItems"]


async def test_an_update_of_a_child_in_neither_layout_creates_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(new_move) as db:
        with pytest.raises(ItemNotFoundError):
            await db.update(Item("a", "ghost", 1), set={"qty": 2})
        assert await stored(db) == []
        # upsert= creates it, whole, in the new layout.
        await db.update(Item("a", "ghost", 1), set={"qty": 2}, upsert=True)
        assert keys(await stored(db)) == [("I#a#ghost", "I#a#ghost")]


async def test_a_model_no_was_concerns_costs_what_it_did(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(new_move) as db:
        with count_requests(db) as log:
            await db.put(Parent("a"))
            await db.update(Parent("a"), set={"title": "A"}, returns=None)
            await db.delete(Parent("a"))
        assert log.operations == ["PutItem", "UpdateItem", "DeleteItem"]


# -- Embedded(key="name") -> Partition() -----------------------------------------------------------


async def test_out_of_a_map_a_write_removes_the_entry_with_it(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        await old.add(order, EOrder.lines, Line("a", 1))
        await old.add(order, EOrder.lines, Line("b", 2))
        await old.add(order, EOrder.lines, Line("c", 3))
        current = await db.get(ROrder, order_id="o1")

        with count_requests(db) as log:
            await db.add(current, ROrder.lines, RLine("o1", "a", 10))
        # Whether the entry is there (one GetItem of it), then the put and its removal.
        assert log.operations == ["GetItem", "TransactWriteItems"]
        parent = await raw_item(db, {"pk": "O#o1", "sk": "#ORDER#o1"})
        assert parent is not None
        assert sorted(parent["lines"]["M"]) == ["b", "c"]

        with count_requests(db) as log:
            await db.remove(current, ROrder.lines, RLine("o1", "b", 2))
        assert log.operations == ["GetItem", "TransactWriteItems"]

        # c, only in the map: the update moves it (every attribute of the entry), then applies.
        updated = await db.update(RLine("o1", "c", 3), add={"qty": 1})
        assert updated == RLine("o1", "c", 4)
        assert await stored(db) == [
            {"pk": "O#o1", "sk": "#ORDER#o1", "order_id": "o1", "lines": {}},
            {"pk": "O#o1", "sk": "LINE#a", "order_id": "o1", "name": "a", "qty": "10"},
            {"pk": "O#o1", "sk": "LINE#c", "order_id": "o1", "name": "c", "qty": "4"},
        ]

        loaded = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert loaded.lines.loaded == [RLine("o1", "a", 10), RLine("o1", "c", 4)]

        # No entry left: the GetItem and a plain put.
        with count_requests(db) as log:
            await db.put(RLine("o1", "d", 1))
        assert log.operations == ["GetItem", "PutItem"]


# -- Partition() -> Embedded(key="name") -----------------------------------------------------------


async def test_into_a_map_add_and_remove_delete_the_old_item_in_the_same_transaction(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, into_map, rows) as (db, old):
        await old.put_all([ROrder("o1"), RLine("o1", "a", 1), RLine("o1", "b", 2)])
        order = await db.put(MOrder("o1"))  # the parent written by the new code: an empty map

        with count_requests(db) as log:
            await db.add(order, MOrder.lines, MLine("o1", "a", 5))
            await db.remove(order, MOrder.lines, MLine("o1", "b", 2))
        assert log.operations == ["TransactWriteItems"] * 2

        assert await stored(db) == [
            {"pk": "O#o1", "sk": "#ORDER#o1", "order_id": "o1",
             "lines": {"a": {"order_id": "o1", "name": "a", "qty": "5"}}},
        ]  # fmt: skip


# -- Index("GSI1") -> Partition(), and shards -----------------------------------------------------


async def test_out_of_an_index_the_old_item_is_found_by_its_index_key(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, to_partition, from_index) as (db, old):
        await old.put_all([IParent("a"), IItem("a", "apple", 3), IItem("a", "fig", 1)])

        with count_requests(db) as log:
            await db.put(BItem("a", "apple", 4))
            await db.delete(BItem("a", "fig", 1))
        # A Query of the old index finds the old item; the write and its deletion go together.
        assert log.operations == ["Query", "TransactWriteItems"] * 2
        assert keys(await stored(db)) == [("P#a", "#PARENT#a"), ("P#a", "ITEM#apple")]


async def test_into_shards_the_old_item_is_the_unsharded_key(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, two_shards, one_partition) as (db, old):
        await old.put_all([OneParent("a"), OneItem("a", "x"), OneItem("a", "y")])

        with count_requests(db) as log:
            await db.put(ShardItem("a", "x"))
        assert log.operations == ["TransactWriteItems"]
        found = keys(await stored(db))
        assert ("S#a", "ITEM#x") not in found
        assert [k for k in found if k[1] == "ITEM#x"] == [(db.table.info(ShardItem).key_of(
            ShardItem("a", "x"))["pk"]["S"], "ITEM#x")]  # fmt: skip


# -- many items, transactions ---------------------------------------------------------------------


async def test_put_all_writes_every_new_item_before_deleting_old_ones(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3), OldItem("a", "fig", 1)])

        with count_requests(db) as log:
            await db.put_all([Item("a", "apple", 4), Item("a", "fig", 2), Item("a", "kiwi", 1)])
        # The new items in one batch, then the old keys' deletions in another.
        assert log.operations == ["BatchWriteItem", "BatchWriteItem"]
        assert keys(await stored(db)) == [
            ("I#a#apple", "I#a#apple"),
            ("I#a#fig", "I#a#fig"),
            ("I#a#kiwi", "I#a#kiwi"),
            ("P#a", "#PARENT#a"),
        ]

        await old.put(OldItem("a", "apple", 3))
        with count_requests(db) as log:
            assert await db.delete_all([Item("a", "apple", 4), Item("a", "fig", 2)]) == 2
        # The items and their old copies in one batch.
        assert log.operations == ["BatchWriteItem"]
        assert keys(await stored(db)) == [("I#a#kiwi", "I#a#kiwi"), ("P#a", "#PARENT#a")]


async def test_a_transaction_removes_the_old_copies_of_what_it_writes(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all(
            [
                OldParent("a"),
                OldItem("a", "apple", 3),
                OldItem("a", "fig", 1),
                OldItem("a", "kiwi", 1),
            ]
        )

        with count_requests(db) as log:
            async with db.transaction() as tx:
                tx.put(Item("a", "apple", 4))
                tx.delete(Item("a", "fig", 1))
                tx.update(Item("a", "kiwi", 1), add={"qty": 1})
        # kiwi, only in the old layout, is moved first (its new item read, the old one read and
        # moved); then one transaction of the three writes and the old copies' deletions.
        assert log.operations == ["GetItem", "GetItem", "TransactWriteItems", "TransactWriteItems"]
        assert await stored(db) == [
            {"pk": "I#a#apple", "sk": "I#a#apple", "GSI1PK": "P#a", "GSI1SK": "ITEM#apple",
             "parent_id": "a", "name": "apple", "qty": "4"},
            {"pk": "I#a#kiwi", "sk": "I#a#kiwi", "GSI1PK": "P#a", "GSI1SK": "ITEM#kiwi",
             "parent_id": "a", "name": "kiwi", "qty": "2"},
            {"pk": "P#a", "sk": "#PARENT#a", "parent_id": "a"},
        ]  # fmt: skip


async def test_an_exactly_once_update_moves_a_child_in_the_old_layout_first(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3)])

        with count_requests(db) as log:
            updated = await db.update(Item("a", "apple", 3), add={"qty": 2}, exactly_once=True)

        assert updated == Item("a", "apple", 5)
        # The new item read (not there), the old one read and moved, the update as a one-action
        # transaction, the item read back.
        assert log.operations == [
            "GetItem",
            "GetItem",
            "TransactWriteItems",
            "TransactWriteItems",
            "GetItem",
        ]
        assert keys(await stored(db)) == [("I#a#apple", "I#a#apple"), ("P#a", "#PARENT#a")]


async def test_out_of_a_list_the_members_that_are_the_child_are_removed(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, unlisted, listed) as (db, old):
        order = await old.put(LOrder("o1"))
        for name, qty in (("a", 1), ("b", 2), ("c", 3)):
            await old.add(order, LOrder.lines, Line(name, qty))
        current = await db.get(NOrder, order_id="o1")

        with count_requests(db) as log:
            await db.remove(current, NOrder.lines, NLine("o1", "a", 1))
        # The parent read whole (a list member has no key), then the removal of the member
        # and the item's deletion together.
        assert log.operations == ["GetItem", "TransactWriteItems"]

        updated = await db.update(NLine("o1", "b", 2), add={"qty": 5})
        assert updated == NLine("o1", "b", 7)
        assert await stored(db) == [
            {"pk": "O#o1", "sk": "#ORDER#o1", "order_id": "o1",
             "lines": [{"name": "c", "qty": "3"}]},
            {"pk": "O#o1", "sk": "LINE#b", "order_id": "o1", "name": "b", "qty": "7"},
        ]  # fmt: skip


async def test_a_delete_by_key_takes_both_copies(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3)])
        await db.put(Item("a", "pear", 1))
        await old.put(OldItem("a", "pear", 1))

        with count_requests(db) as log:
            await db.delete(Item, parent_id="a", name="apple")
            await db.delete(Item, parent_id="a", name="pear")
        assert log.operations == ["TransactWriteItems"] * 2
        assert keys(await stored(db)) == [("P#a", "#PARENT#a")]


async def test_explain_shows_the_old_copy_removed_with_the_write(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(new_move) as db:
        (put,) = db.explain.put(Item("a", "apple", 4))
        (add,) = db.explain.add(Parent("a"), Parent.items, Item("a", "apple", 4))
        for request in (put, add):
            assert request.operation == "TransactWriteItems"
            put_action, delete_action = request.params["TransactItems"]
            assert put_action["Put"]["Item"]["pk"] == {"S": "I#a#apple"}
            assert delete_action["Delete"]["Key"] == {"pk": {"S": "P#a"}, "sk": {"S": "ITEM#apple"}}
        with count_requests(db) as log:
            db.explain.put(Item("a", "apple", 4))
        assert log.operations == []


async def test_a_transaction_over_100_actions_only_by_old_items_deletes_them_after_it(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """60 puts and 60 old items' deletions: the puts commit, then the deletions in batches."""
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), *(OldItem("a", f"i{n:02}", n) for n in range(30))])
        with count_requests(db) as log:
            await put_in_one_transaction(db, [Item("a", f"i{n:02}", n + 1) for n in range(60)])
        assert log.operations == ["TransactWriteItems"] + ["BatchWriteItem"] * 3
        assert sorted(keys(await stored(db))) == sorted(
            [("P#a", "#PARENT#a"), *((f"I#a#i{n:02}", f"I#a#i{n:02}") for n in range(60))]
        )
        found = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert [(i.name, i.qty) for i in found.items.loaded][:2] == [("i00", 1), ("i01", 2)]


async def test_a_transaction_over_100_actions_with_deletes_old_copies_is_refused_before_sending(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """A delete's old copy goes in its transaction (a reader must not see it come back)."""
    async with dynorm_connect(new_move) as db:
        with count_requests(db) as log, pytest.raises(LimitExceededError, match="120 actions"):
            await delete_in_one_transaction(db, [Item("a", f"i{n}", n) for n in range(60)])
        assert log.operations == []


async def delete_in_one_transaction(db: Database, objs: list[Item]) -> None:
    async with db.transaction() as tx:
        for obj in objs:
            tx.delete(obj)


async def put_in_one_transaction(db: Database, objs: list[Item]) -> None:
    async with db.transaction() as tx:
        for obj in objs:
            tx.put(obj)


async def test_a_stale_versioned_child_is_refused_as_without_was_and_nothing_is_written(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(versioned) as db:
        first = await db.put(VItem("a", "apple", 1))
        await db.put(first)  # version 2 now stored
        with pytest.raises(VersionConflictError):
            await db.put(VItem("a", "apple", 9, version=1))
        with pytest.raises(VersionConflictError):
            await db.delete(VItem("a", "apple", 9, version=1))
        found = await db.get(VItem, parent_id="a", name="apple")
        assert (found.qty, found.version) == (1, 2)
