"""Adding to and removing from ``Embedded(key=...)`` children of a parent stored without the map.

Moving children into ``Embedded`` (``was=`` a collection), the old code stored the parents
without the embedded attribute; another tool may store a plain ``via=Embedded`` parent without
it too. An add sets a path inside that map, which DynamoDB refuses while the map is missing: the
add creates it first (``if_not_exists``, so a map another add has just created is kept), and a
remove finds nothing there to remove. The migration afterwards embeds every child once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

from dynorm import Embedded, HasMany, LimitExceededError, Partition, Table
from dynorm.migrations import migrate, migration_status
from dynorm.testing import RunningServer
from tests.faultproxy import FaultyConnect, connect_to

from .raw import raw_item, raw_put

pytestmark = pytest.mark.integration

rows = Table("missing-map", pk="pk", sk="sk")
maps = Table("missing-map", pk="pk", sk="sk")


@rows.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class ROrder:
    """The old declaration: the parent stored without any map."""

    order_id: str
    lines = HasMany["RLine"](via=Partition())


@rows.model(pk="O#{order_id}", sk="LINE#{name}")
class RLine:
    order_id: str
    name: str
    qty: int = 0


@maps.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class MOrder:
    order_id: str
    lines = HasMany["MLine"](via=Embedded(key="name"), was=Partition())


@maps.model(pk="O#{order_id}", sk="LINE#{name}")  # where the old items are
class MLine:
    order_id: str
    name: str
    qty: int = 0


@attrs.define
class Note:
    name: str
    text: str = ""


@maps.model(pk="B#{board_id}", sk="#BOARD#{board_id}")
class Board:
    """A plain ``via=Embedded`` parent (no ``was=``)."""

    board_id: str
    notes = HasMany[Note](Note, via=Embedded(key="name", max_items=2))


KEY = {"pk": "O#o1", "sk": "#ORDER#o1"}
BOARD_KEY = {"pk": "B#b1", "sk": "#BOARD#b1"}


async def names(db: Any, order_id: str = "o1") -> list[str]:
    loaded = await db.get(MOrder, order_id=order_id, load=[MOrder.lines])
    return [line.name for line in loaded.lines.loaded or []]


async def stored_map(db: Any, key: dict[str, str], attribute: str) -> list[str]:
    raw = await raw_item(db, key)
    assert raw is not None
    return sorted(raw[attribute]["M"])


@pytest.mark.transactions
async def test_add_and_remove_into_a_parent_the_old_code_stored_then_migrate_embeds_each_once(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    async with (
        faulty_connect(maps) as faulty,
        connect_to(dynorm_server.url, rows, faulty.db.table_name) as old,
    ):
        db = faulty.direct
        order = await old.put(ROrder("o1"))
        for name in "xyz":
            await old.add(order, ROrder.lines, RLine("o1", name, 1))
        parent = MOrder("o1")

        await db.add(parent, MOrder.lines, MLine("o1", "w", 2))  # a new child
        await db.add(parent, MOrder.lines, MLine("o1", "x", 3))  # one in the old layout
        await db.remove(parent, MOrder.lines, MLine("o1", "y"))  # only in the old layout
        assert await stored_map(db, KEY, "lines") == ["w", "x"]
        assert await names(db) == ["w", "x", "z"]

        report = await migrate(db, MOrder.lines)
        assert report.ok, report
        assert await stored_map(db, KEY, "lines") == ["w", "x", "z"]
        assert await migration_status(db, MOrder.lines) == 0
        loaded = await db.get(MOrder, order_id="o1", load=[MOrder.lines])
        assert [(c.name, c.qty) for c in loaded.lines.loaded or []] == [
            ("w", 2),
            ("x", 3),
            ("z", 1),
        ]


@pytest.mark.transactions
async def test_an_add_creating_the_map_keeps_the_map_another_add_created_meanwhile(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    async with (
        faulty_connect(maps) as faulty,
        connect_to(dynorm_server.url, rows, faulty.db.table_name) as old,
    ):
        await old.put(ROrder("o1"))
        held = faulty.proxy.pause(
            when=lambda body: "if_not_exists" in body.get("UpdateExpression", "")
        )
        first = asyncio.ensure_future(faulty.db.add(MOrder("o1"), MOrder.lines, MLine("o1", "a")))
        arrived = asyncio.ensure_future(held.arrived.wait())
        await asyncio.wait({first, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), "the add did not create the missing map"
        try:
            # The other add finds no map either, creates it and adds its child.
            await faulty.direct.add(MOrder("o1"), MOrder.lines, MLine("o1", "b"))
        finally:
            held.release()
        await first

        assert await stored_map(faulty.direct, KEY, "lines") == ["a", "b"]


async def test_plain_embedded_add_and_remove_on_a_parent_stored_without_the_map(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(maps) as faulty:
        db = faulty.direct
        await raw_put(db, {**{k: {"S": v} for k, v in BOARD_KEY.items()}, "board_id": {"S": "b1"}})

        await db.remove(Board("b1"), Board.notes, Note("a"))  # nothing there: nothing to do
        await db.add(Board("b1"), Board.notes, Note("a", "first"))
        await db.add(Board("b1"), Board.notes, Note("b", "second"))
        assert await stored_map(db, BOARD_KEY, "notes") == ["a", "b"]
        with pytest.raises(LimitExceededError, match="max_items"):
            await db.add(Board("b1"), Board.notes, Note("c"))
        await db.remove(Board("b1"), Board.notes, Note("a"))
        assert await stored_map(db, BOARD_KEY, "notes") == ["b"]


async def test_plain_embedded_add_to_a_parent_not_stored_is_refused_and_stores_nothing(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(maps) as faulty:
        with pytest.raises(LimitExceededError, match=r"not stored \(db\.put it first\)"):
            await faulty.direct.add(Board("b9"), Board.notes, Note("a"))
        assert await raw_item(faulty.direct, {"pk": "B#b9", "sk": "#BOARD#b9"}) is None
