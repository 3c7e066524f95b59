"""A versioned child moved out of ``Embedded(key=...)`` (``was=``): one shape, the current one.

A map entry written before the child model had versions (or at an older one) is read through
the union, moved by ``migrate`` and moved by an update of the child as the upgraded child: its
declared fields as the current version encodes them, the current version stamped, and the
attributes the model does not declare kept as stored.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from dynorm import Database, Embedded, HasMany, Partition, Table
from dynorm.migrations import migrate
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .raw import raw_put, raw_scan

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


def _qty_to_number(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "qty": int(item["qty"])}


vmap_old = Table("was-vmap", pk="pk", sk="sk")
vmap_new = Table("was-vmap", pk="pk", sk="sk")


@attrs.define
class TextLine:
    name: str
    qty: str = "0"


@vmap_old.model(pk="O#{oid}", sk="#O#{oid}")
class MapOrder:
    oid: str
    lines = HasMany[TextLine](TextLine, via=Embedded(key="name"))


@vmap_new.model(pk="O#{oid}", sk="#O#{oid}")
class RowOrder:
    oid: str
    lines = HasMany["RowLine"](via=Partition(), was=Embedded(key="name"))


@vmap_new.model(pk="O#{oid}", sk="LINE#{name}", schema_version=2, upgrades={1: _qty_to_number})
class RowLine:
    oid: str
    name: str
    qty: int = 0


async def _old_order(db: Database, old: Database) -> None:
    """Order ``o`` with the map entry ``a`` (qty "3", a text) and an undeclared ``note``."""
    order = await old.put(MapOrder("o"))
    await old.add(order, MapOrder.lines, TextLine("a", "3"))
    (raw,) = await raw_scan(db)
    raw["lines"]["M"]["a"]["M"]["note"] = {"S": "kept"}
    await raw_put(db, raw)


def _lines(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The line items, without dynorm's own markers (a write's token)."""
    return [
        {k: v for k, v in i.items() if not k.startswith("dynorm:")}
        for i in items
        if i["sk"]["S"].startswith("LINE#")
    ]


UPGRADED = {
    "pk": {"S": "O#o"},
    "sk": {"S": "LINE#a"},
    "oid": {"S": "o"},
    "name": {"S": "a"},
    "qty": {"N": "3"},
    "_v": {"N": "2"},
    "note": {"S": "kept"},
}


async def test_the_union_upgrades_an_old_map_entry_of_a_versioned_child(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(vmap_new) as db,
        connect_to(dynorm_server.url, vmap_old, db.table_name) as old,
    ):
        await _old_order(db, old)
        loaded = await db.get(RowOrder, oid="o", load=[RowOrder.lines])
        assert loaded.lines.loaded == [RowLine("o", "a", 3)]
        assert await loaded.lines.all() == [RowLine("o", "a", 3)]


async def test_a_versioned_child_moved_out_of_a_map_is_stored_in_one_shape(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(vmap_new) as db,
        connect_to(dynorm_server.url, vmap_old, db.table_name) as old,
    ):
        await _old_order(db, old)
        report = await migrate(db, RowOrder.lines)
        assert report.ok, report
        assert _lines(await raw_scan(db)) == [UPGRADED]
        again = await db.get(RowOrder, oid="o", load=[RowOrder.lines])
        assert again.lines.loaded == [RowLine("o", "a", 3)]


async def test_an_update_moving_a_versioned_child_out_of_a_map_stores_the_upgraded_shape(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(vmap_new) as db,
        connect_to(dynorm_server.url, vmap_old, db.table_name) as old,
    ):
        await _old_order(db, old)
        await db.update(RowLine("o", "a", 3), add={"qty": 1})
        items = await raw_scan(db)
        assert _lines(items) == [{**UPGRADED, "qty": {"N": "4"}}]
        (parent,) = [i for i in items if i["sk"]["S"] == "#O#o"]
        assert parent.get("lines", {"M": {}}) == {"M": {}}
