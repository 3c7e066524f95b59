"""Every value is checked before the first request of any kind, on every write that reads first.

A child that copies its parent's fields reads the parent before it is written; an update that
moves it reads the new parent. A value that fails a check must be refused before those reads:
the refused call sends nothing at all (0 requests), and nothing is stored.
"""

from __future__ import annotations

import decimal
from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import GSI, CodecError, Database, Denormalized, HasMany, Index, Table
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("checked-first", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="SHOP#{name}", sk="SHOP#{name}", GSI1=("SHOP#{name}", "#SHOP#{name}"))
@attrs.define
class Shop:
    name: str
    city: str = ""
    items = HasMany["Item"](
        "Item", via=Denormalized(copy={"city": "shop_city"}, where=Index("GSI1"))
    )


# The shop is an index field: an update that changes it moves the item to another shop.
@table.model(pk="ITEM#{sku}", sk="ITEM#{sku}", GSI1=("SHOP#{shop}", "ITEM#{sku}"))
@attrs.define
class Item:
    shop: str
    sku: str
    price: decimal.Decimal = decimal.Decimal(0)
    shop_city: str | None = None


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([Shop("north", "Oslo"), Shop("south", "Rome")])
        yield database


def bad(sku: str = "bad") -> Item:
    return Item("north", sku, price=1.5)  # type: ignore[arg-type]  # a float, not a Decimal


async def stored_items(db: Database) -> list[Item]:
    found = [
        *await db.query(Item, index="GSI1", shop="north").all(),
        *await db.query(Item, index="GSI1", shop="south").all(),
    ]
    return sorted(found, key=lambda i: i.sku)


async def test_put_of_a_child_refuses_a_bad_value_before_reading_its_parent(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(CodecError, match=r"Item\.price"):
        await db.put(bad())
    assert log.operations == []
    assert await stored_items(db) == []


async def test_put_all_refuses_a_bad_value_before_reading_any_parent(db: Database) -> None:
    good = [Item("north", f"ok{i}", price=decimal.Decimal(i)) for i in range(30)]
    with count_requests(db) as log, pytest.raises(CodecError, match=r"Item\.price"):
        await db.put_all([*good, bad()])
    assert log.operations == []
    assert await stored_items(db) == []


async def test_update_moving_a_child_refuses_a_bad_value_before_reading_the_new_parent(
    db: Database,
) -> None:
    item = await db.put(Item("north", "moved", price=decimal.Decimal(2)))
    with count_requests(db) as log, pytest.raises(CodecError, match=r"Item\.price"):
        await db.update(item, set={"shop": "south", "price": 2.5})  # type: ignore[arg-type]
    assert log.operations == []
    assert await stored_items(db) == [Item("north", "moved", decimal.Decimal(2), "Oslo")]


async def test_add_and_transactions_refuse_a_bad_value_before_any_request(db: Database) -> None:
    north = await db.get(Shop, name="north")
    with count_requests(db) as log:
        with pytest.raises(CodecError, match=r"Item\.price"):
            await db.add(north, Shop.items, bad())
        with pytest.raises(CodecError, match=r"Item\.price"):
            async with db.transaction() as tx:
                tx.put(bad())
        item = Item("north", "tx")
        with pytest.raises(CodecError, match=r"Item\.price"):
            async with db.transaction() as tx:
                tx.update(item, set={"shop": "south", "price": 2.5})  # type: ignore[arg-type]
    assert log.operations == []
    assert await stored_items(db) == []


async def test_put_all_of_parents_refuses_a_bad_value_before_reading_the_stored_ones(
    db: Database,
) -> None:
    # Parents with copies are read first (are their copied fields changing?): not on bad input.
    with count_requests(db) as log, pytest.raises(CodecError, match=r"Shop\.city"):
        await db.put_all([Shop("north", "Bergen"), Shop("east", 5)])  # type: ignore[arg-type]
    assert log.operations == []
    assert (await db.get(Shop, name="north")).city == "Oslo"
