"""``put_all`` of parents whose stored embedded children no object carries, racing other writes.

A parent built in code does not carry its ``via=Embedded`` children, and no parent carries the
old embedded layout of a ``was=`` relationship: ``put_all`` must leave those as stored. It once
read them (BatchGetItem) and wrote them back in the batch, so a child removed, added or moved
between the read and the write came back, or was lost. Here the fault proxy holds put_all's
write of the parent until another connection has changed the children, then lets it go on:
the stored children must be the ones that other write left.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import pytest

from dynorm import Embedded, HasMany, Partition, Table
from dynorm.migrations import migrate
from dynorm.testing import RunningServer
from tests.faultproxy import FaultyConnect, Pause, connect_to

from .raw import raw_item

pytestmark = pytest.mark.integration

old_table = Table("keep-race", pk="pk", sk="sk")
new_table = Table("keep-race", pk="pk", sk="sk")


@attrs.define
class Line:
    name: str
    qty: int = 0


@old_table.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class Order:
    """The old declaration, and a plain ``via=Embedded`` parent."""

    order_id: str
    title: str = ""
    lines = HasMany[Line](Line, via=Embedded(key="name"))


@new_table.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class NOrder:
    order_id: str
    title: str = ""
    lines = HasMany["NLine"](via=Partition(), was=Embedded(key="name"))


@new_table.model(pk="O#{order_id}", sk="LINE#{name}")
class NLine:
    order_id: str
    name: str
    qty: int = 0


KEY = {"pk": "O#o1", "sk": "#ORDER#o1"}


def writes_parent(body: dict[str, Any]) -> bool:
    """Whether a request writes the parent: a batch with a PutRequest, or an UpdateItem."""
    if "UpdateExpression" in body:
        return bool(body["Key"]["sk"] == {"S": "#ORDER#o1"})
    batches = body.get("RequestItems", {}).values()
    return any("PutRequest" in w for ws in batches if isinstance(ws, list) for w in ws)


async def while_held(
    held: Pause, first: Awaitable[Any], between: Callable[[], Awaitable[Any]]
) -> None:
    """Start ``first``; once its held request arrives, run ``between`` whole, then let it go."""
    task = asyncio.ensure_future(first)
    arrived = asyncio.ensure_future(held.arrived.wait())
    await asyncio.wait({task, arrived}, return_when=asyncio.FIRST_COMPLETED)
    assert arrived.done(), f"put_all ended without writing the parent: {await task}"
    try:
        await between()
    finally:
        held.release()
    await task


async def stored_names(faulty_direct: Any) -> list[str]:
    raw = await raw_item(faulty_direct, KEY)
    assert raw is not None
    return sorted(raw["lines"]["M"])


async def test_plain_embedded_put_all_keeps_a_child_removed_and_one_added_meanwhile(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(old_table) as faulty:
        order = await faulty.direct.put(Order("o1", "old"))
        for name in "xyz":
            await faulty.direct.add(order, Order.lines, Line(name, 1))
        held = faulty.proxy.pause(when=writes_parent)

        async def change() -> None:
            await faulty.direct.remove(order, Order.lines, Line("x"))
            await faulty.direct.add(order, Order.lines, Line("w", 2))

        await while_held(held, faulty.db.put_all([Order("o1", "renamed")]), change)

        assert await stored_names(faulty.direct) == ["w", "y", "z"]
        got = await faulty.direct.get(Order, order_id="o1", load=[Order.lines])
        assert got.title == "renamed"


async def test_was_embedded_put_all_keeps_a_child_the_old_code_removed_meanwhile(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    async with (
        faulty_connect(new_table) as faulty,
        connect_to(dynorm_server.url, old_table, faulty.db.table_name) as old,
    ):
        order = await old.put(Order("o1", "old"))
        for name in "xyz":
            await old.add(order, Order.lines, Line(name, 1))
        held = faulty.proxy.pause(when=writes_parent)
        await while_held(
            held,
            faulty.db.put_all([NOrder("o1", "new"), NOrder("o2", "other")]),
            lambda: old.remove(order, Order.lines, Line("x")),
        )

        assert await stored_names(faulty.direct) == ["y", "z"]
        got = await faulty.direct.get(NOrder, order_id="o1", load=[NOrder.lines])
        assert (got.title, [c.name for c in got.lines.loaded or []]) == ("new", ["y", "z"])


@pytest.mark.transactions
async def test_was_embedded_put_all_keeps_a_child_db_remove_removed_meanwhile(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    async with (
        faulty_connect(new_table) as faulty,
        connect_to(dynorm_server.url, old_table, faulty.db.table_name) as old,
    ):
        order = await old.put(Order("o1", "old"))
        for name in "xyz":
            await old.add(order, Order.lines, Line(name, 1))
        parent = NOrder("o1", "old")
        held = faulty.proxy.pause(when=writes_parent)
        await while_held(
            held,
            faulty.db.put_all([NOrder("o1", "new")]),
            lambda: faulty.direct.remove(parent, NOrder.lines, NLine("o1", "x")),
        )

        got = await faulty.direct.get(NOrder, order_id="o1", load=[NOrder.lines])
        assert (got.title, [c.name for c in got.lines.loaded or []]) == ("new", ["y", "z"])


@pytest.mark.transactions
async def test_was_embedded_put_all_keeps_no_child_migrate_moved_meanwhile(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    async with (
        faulty_connect(new_table) as faulty,
        connect_to(dynorm_server.url, old_table, faulty.db.table_name) as old,
    ):
        order = await old.put(Order("o1", "old"))
        for name in "xyz":
            await old.add(order, Order.lines, Line(name, 1))
        held = faulty.proxy.pause(when=writes_parent)
        await while_held(
            held,
            faulty.db.put_all([NOrder("o1", "new")]),
            lambda: migrate(faulty.direct, NOrder.lines),
        )

        raw = await raw_item(faulty.direct, KEY)
        assert raw is not None
        assert raw.get("lines", {"M": {}}) == {"M": {}}, "a moved child came back in the old map"
        assert raw["title"] == {"S": "new"}
        got = await faulty.direct.get(NOrder, order_id="o1", load=[NOrder.lines])
        assert [c.name for c in got.lines.loaded or []] == ["x", "y", "z"]
