"""Reads, copies and migrations while ``was=`` is declared."""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import GSI, HasMany, Index, Partition, Table
from dynorm.migrations import migrate
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]


# (denormalized copies in old-layout children: tests/integration/test_was_old_copies.py)


# -- a cursor across a migration that finishes between two pages --------------------------------


@pytest.mark.parametrize("size", [1, 2, 3])
async def test_pages_across_a_migration_finishing_between_them_miss_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer, size: int
) -> None:
    from .was_models import Item, OldItem, OldParent, Parent, new_move, old_move  # noqa: PLC0415

    names = ["a1", "b2", "c3", "d4", "e5"]
    async with (
        dynorm_connect(new_move) as db,
        connect_to(dynorm_server.url, old_move, db.table_name) as old,
    ):
        await old.put_all([OldParent("a"), *(OldItem("a", n, 1) for n in names)])
        await db.put(Item("a", "c3", 2))  # one in both layouts
        parent = await db.get(Parent, parent_id="a")
        first = await parent.items.page(limit=size)
        report = await migrate(db, Parent.items)
        assert report.ok, report
        seen = [i.name for i in first.items]
        cursor = first.cursor
        while cursor is not None:
            page = await parent.items.page(limit=size, cursor=cursor)
            seen += [i.name for i in page.items]
            cursor = page.cursor
        assert seen == names
        assert await parent.items.count() == len(names)


async def test_newest_first_with_was_reads_the_union_newest_first(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    table = Table("probe-newest", pk="pk", sk="sk", indexes=INDEXES)
    old_table = Table("probe-newest", pk="pk", sk="sk", indexes=INDEXES)

    @old_table.model(pk="N#{pid}", sk="#N#{pid}")
    class OldFeed:
        pid: str
        posts = HasMany["OldPost"](via=Partition(), newest_first=True)

    @old_table.model(pk="N#{pid}", sk="POST#{n:03d}")
    class OldPost:
        pid: str
        n: int

    @table.model(pk="N#{pid}", sk="#N#{pid}", GSI1=("N#{pid}", "#N#{pid}"))
    class Feed:
        pid: str
        posts = HasMany["Post"](via=Index("GSI1"), was=Partition(), newest_first=True)

    @table.model(pk="Q#{pid}#{n:03d}", sk="Q#{pid}#{n:03d}", GSI1=("N#{pid}", "POST#{n:03d}"))
    class Post:
        pid: str
        n: int

    async with (
        dynorm_connect(table) as db,
        connect_to(dynorm_server.url, old_table, db.table_name) as old,
    ):
        await old.put_all([OldFeed("f"), *(OldPost("f", n) for n in (1, 3, 5))])
        await db.put_all([Post("f", n) for n in (2, 3, 4)])
        feed = await db.get(Feed, pid="f", load=[Feed.posts])
        assert [p.n for p in feed.posts.loaded] == [5, 4, 3, 2, 1]
        for size in (1, 2, 4):
            seen: list[int] = []
            cursor = None
            while True:
                page = await feed.posts.page(limit=size, cursor=cursor)
                seen += [p.n for p in page.items]
                cursor = page.cursor
                if cursor is None:
                    break
            assert seen == [5, 4, 3, 2, 1], size
        assert await feed.posts.count() == 5
        limited = await db.get(Feed, pid="f", load=[Feed.posts.limit(2)])
        assert [p.n for p in limited.posts.loaded] == [5, 4]


# (a versioned child moved out of an embedded map: tests/integration/test_was_versioned_map.py)


async def test_many_parents_loaded_at_once_each_get_their_union(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    from .was_models import (  # noqa: PLC0415
        EOrder,
        Item,
        Line,
        OldItem,
        OldParent,
        Parent,
        RLine,
        ROrder,
        embedded,
        new_move,
        old_move,
        rows,
    )

    async with (
        dynorm_connect(new_move) as db,
        connect_to(dynorm_server.url, old_move, db.table_name) as old,
    ):
        ids = [f"p{i}" for i in range(12)]
        await old.put_all([OldParent(p) for p in ids])
        await old.put_all([OldItem(p, f"{p}-old", 1) for p in ids])
        await db.put_all([Item(p, f"{p}-new", 1) for p in ids])
        found = await db.get_many(Parent, [{"parent_id": p} for p in ids])
        parents = [p for p in found if p is not None]
        assert len(parents) == len(ids)
        await db.load(parents, Parent.items)
        for p in parents:
            assert sorted(i.name for i in p.items.loaded) == [
                f"{p.parent_id}-new",
                f"{p.parent_id}-old",
            ]

    async with (
        dynorm_connect(rows) as db,
        connect_to(dynorm_server.url, embedded, db.table_name) as old,
    ):
        for o in ("o1", "o2", "o3"):
            stored_order = await old.put(EOrder(o))
            await old.add(stored_order, EOrder.lines, Line(f"{o}-a", 1))
            await db.put(RLine(o, f"{o}-b", 2))
        got = await db.get_many(ROrder, [{"order_id": o} for o in ("o1", "o2", "o3")])
        orders = [o for o in got if o is not None]
        await db.load(orders, ROrder.lines)
        for order in orders:
            assert sorted(x.name for x in order.lines.loaded) == [
                f"{order.order_id}-a",
                f"{order.order_id}-b",
            ]


async def test_a_list_holding_one_child_twice_reads_it_once(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    from .was_models import Line, LOrder, NLine, NOrder, listed, unlisted  # noqa: PLC0415

    async with (
        dynorm_connect(unlisted) as db,
        connect_to(dynorm_server.url, listed, db.table_name) as old,
    ):
        order = await old.put(LOrder("o"))
        for line in (Line("a", 1), Line("b", 2), Line("a", 3)):
            await old.add(order, LOrder.lines, line)
        found = await db.get(NOrder, order_id="o", load=[NOrder.lines])
        names = [x.name for x in found.lines.loaded]
        assert names == ["a", "b"], names
        assert await found.lines.count() == 2
        await db.remove(found, NOrder.lines, NLine("o", "a"))
        again = await db.get(NOrder, order_id="o", load=[NOrder.lines])
        assert [x.name for x in again.lines.loaded] == ["b"]


def _cursor_models(table: Table, was: Any) -> tuple[type[Any], type[Any]]:
    @table.model(pk="C#{pid}", sk="#C#{pid}", GSI1=("C#{pid}", "#C#{pid}"))
    class CParent:
        pid: str
        kids = HasMany["CKid"](via=Index("GSI1"), was=was)

    @table.model(pk="K#{pid}#{name}", sk="K#{pid}#{name}", GSI1=("C#{pid}", "KID#{name}"))
    class CKid:
        pid: str
        name: str

    return CParent, CKid


cur_plain = Table("probe-cursor", pk="pk", sk="sk", indexes=INDEXES)
cur_was = Table("probe-cursor", pk="pk", sk="sk", indexes=INDEXES)
PlainP, PlainK = _cursor_models(cur_plain, None)
WasP, WasK = _cursor_models(cur_was, Partition())


@pytest.mark.parametrize("direction", ["into", "out of"])
async def test_a_cursor_across_declaring_was_is_refused_with_what_to_do(
    dynorm_connect: Connect, dynorm_server: RunningServer, direction: str
) -> None:
    from dynorm import DynormError  # noqa: PLC0415

    async with (
        dynorm_connect(cur_was) as db,
        connect_to(dynorm_server.url, cur_plain, db.table_name) as plain,
    ):
        await plain.put_all([PlainP("a"), *(PlainK("a", f"n{i}") for i in range(4))])
        first, then = (plain, db) if direction == "into" else (db, plain)
        first_p, then_p = (PlainP, WasP) if direction == "into" else (WasP, PlainP)
        page = await (await first.get(first_p, pid="a")).kids.page(limit=2)
        assert page.cursor is not None
        with pytest.raises(DynormError, match="was="):
            await (await then.get(then_p, pid="a")).kids.page(limit=2, cursor=page.cursor)


async def test_an_old_item_that_does_not_decode_is_a_codec_error_naming_it(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    from dynorm import CodecError  # noqa: PLC0415

    from .raw import raw_put  # noqa: PLC0415
    from .was_models import Parent, new_move  # noqa: PLC0415

    async with dynorm_connect(new_move) as db:
        await db.put(Parent("a"))
        await raw_put(db, {"pk": {"S": "P#a"}, "sk": {"S": "ITEM#bad"}, "parent_id": {"S": "a"},
                           "name": {"S": "bad"}, "qty": {"S": "many"}})  # fmt: skip
        with pytest.raises(CodecError, match="ITEM#bad"):
            await db.get(Parent, parent_id="a", load=[Parent.items])
        parent = await db.get(Parent, parent_id="a")
        with pytest.raises(CodecError, match="ITEM#bad"):
            await parent.items.all()
        with pytest.raises(CodecError, match="ITEM#bad"):
            await parent.items.count()


# (back from shards, the old {shard} segment not last: tests/integration/test_was_shard_position.py)
