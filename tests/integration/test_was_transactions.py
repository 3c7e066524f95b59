"""Transactions writing children while ``was=`` is declared, beside their parents.

A TransactWriteItems names an item once: a child's old map entry (or list member) is removed in
the action the transaction already has on its parent, and several children's entries in one
UpdateItem of it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from dynorm import (
    Attr,
    Condition,
    Database,
    Embedded,
    HasMany,
    Partition,
    Table,
    TransactionCanceledError,
)
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .raw import stored
from .was_models import Line, LOrder, NLine, NOrder, listed, unlisted

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

old_shop = Table("was-tx", pk="pk", sk="sk")
new_shop = Table("was-tx", pk="pk", sk="sk")


@old_shop.model(pk="S#{shop_id}", sk="#SHOP#{shop_id}")
class Shop0:
    shop_id: str
    title: str = ""
    lines = HasMany[Line](Line, via=Embedded(key="name"))


@new_shop.model(pk="S#{shop_id}", sk="#SHOP#{shop_id}")
class Shop:
    shop_id: str
    title: str = ""
    lines = HasMany["SLine"](via=Partition(), was=Embedded(key="name"))


@new_shop.model(pk="S#{shop_id}", sk="LINE#{name}")
class SLine:
    shop_id: str
    name: str
    qty: int = 0


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


async def three_lines(old: Database) -> None:
    shop = await old.put(Shop0("s", "old"))
    for line in (Line("a", 1), Line("b", 2), Line("c", 3)):
        await old.add(shop, Shop0.lines, line)


async def lines_of(db: Database) -> list[tuple[str, int]]:
    shop = await db.get(Shop, shop_id="s", load=[Shop.lines])
    return [(x.name, x.qty) for x in shop.lines.loaded]


async def test_an_update_of_the_parent_carries_its_children_entries_removals(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_shop, old_shop) as (db, old):
        await three_lines(old)
        with count_requests(db) as log:
            async with db.transaction() as tx:
                tx.update(Shop("s"), set={"title": "new"}, condition=Attr("title") == "old")
                tx.delete(SLine("s", "a", 1))
                tx.put(SLine("s", "b", 5))
        # Each entry read, then one transaction: the parent's update removing both entries.
        assert log.operations == ["GetItem", "GetItem", "TransactWriteItems"]
        assert await lines_of(db) == [("b", 5), ("c", 3)]
        (parent,) = [i for i in await stored(db) if i["sk"] == "#SHOP#s"]
        assert parent["title"] == "new"
        assert sorted(parent["lines"]) == ["c"]


async def test_the_parents_own_condition_still_refuses_the_transaction(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_shop, old_shop) as (db, old):
        await three_lines(old)
        with count_requests(db) as log, pytest.raises(TransactionCanceledError):
            await check_and_delete(db, Attr("title") == "other")
        # Refused where the entry's removal is: read again, the entry is still there, so the
        # parent's own condition refused it (not sent again).
        assert log.operations == ["GetItem", "TransactWriteItems", "GetItem"]
        assert await lines_of(db) == [("a", 1), ("b", 2), ("c", 3)]


async def check_and_delete(db: Database, condition: Condition) -> None:
    async with db.transaction() as tx:
        tx.check(Shop("s"), condition)
        tx.delete(SLine("s", "a", 1))


async def test_a_deleted_parent_takes_the_entry_with_it(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_shop, old_shop) as (db, old):
        await three_lines(old)
        async with db.transaction() as tx:
            tx.delete(Shop("s"))
            tx.delete(SLine("s", "a", 1))
        assert await stored(db) == []


async def test_a_put_of_the_parent_beside_its_child(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """The parent's put keeps the map (an UpdateItem), and removes the child's entry from it."""
    async with both(dynorm_connect, dynorm_server, new_shop, old_shop) as (db, old):
        await three_lines(old)
        async with db.transaction() as tx:
            tx.put(Shop("s", "new"))
            tx.put(SLine("s", "a", 7))
        assert await lines_of(db) == [("a", 7), ("b", 2), ("c", 3)]
        (parent,) = [i for i in await stored(db) if i["sk"] == "#SHOP#s"]
        assert (parent["title"], sorted(parent["lines"])) == ("new", ["b", "c"])


async def test_two_members_of_one_old_list_in_one_transaction(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, unlisted, listed) as (db, old):
        order = await old.put(LOrder("o1"))
        for line in (Line("a", 1), Line("b", 2), Line("c", 3)):
            await old.add(order, LOrder.lines, line)
        async with db.transaction() as tx:
            tx.delete(NLine("o1", "a", 1))
            tx.put(NLine("o1", "c", 9))
        found = await db.get(NOrder, order_id="o1", load=[NOrder.lines])
        assert [(x.name, x.qty) for x in found.lines.loaded] == [("b", 2), ("c", 9)]
