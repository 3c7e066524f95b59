"""Two migration runs at once, and items no model fully declares: every item kept, once, whole.

The data is stored raw, with attributes no model declares (another tool's ``legacy``, an
attribute named ``Rating #``, nested maps and lists, inside embedded maps too). Two runs of
one migration start on two connections, the first through the fault proxy, which holds one
of its requests until the second run has finished: the first then writes from what it read
before. Afterwards every stored item is read back with a raw Scan and compared, attribute by
attribute, with the layout the declaration writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from dynorm import GSI, Database, Denormalized, Embedded, HasMany, Index, Partition, Table
from dynorm.migrations import MigrationReport, backfill_index, migrate, repair_copies
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import FaultPlan, FaultyConnect, Pause, connect_to

from .race_models import (
    EXTRA,
    LINES,
    MAP_LAYOUT,
    ORDERS,
    ROW_LAYOUT,
    MapLine,
    MapOrder,
    Raw,
    RowOrder,
    by_key,
    maps,
    n,
    rows,
    s,
)
from .raw import raw_put, raw_scan

pytestmark = pytest.mark.integration


async def put_raw(db: Database, items: list[Raw]) -> None:
    await asyncio.gather(*(raw_put(db, item) for item in items))


async def layout(db: Database) -> list[Raw]:
    """Every stored item as DynamoDB holds it, by table key."""
    return by_key(await raw_scan(db))


async def while_held(
    held: Pause, first: Awaitable[MigrationReport], second: Callable[[], Awaitable[MigrationReport]]
) -> tuple[MigrationReport, MigrationReport]:
    """Start ``first``; once its held request arrives, run ``second`` whole, then let it go on."""
    task = asyncio.ensure_future(first)
    arrived = asyncio.ensure_future(held.arrived.wait())
    await asyncio.wait({task, arrived}, return_when=asyncio.FIRST_COMPLETED)
    assert arrived.done(), f"the first run ended without the held request: {await task}"
    try:
        other = await second()
    finally:
        held.release()
    return await task, other


def assert_ok(*reports: MigrationReport) -> None:
    for report in reports:
        assert report.ok, report
        assert report.skipped == ()


async def test_two_embed_runs_at_once_embed_every_child_once_with_every_attribute(
    faulty_connect: FaultyConnect,
) -> None:
    """The first run reads the page, then its children reads wait while the second embeds all."""
    async with faulty_connect(maps) as faulty:
        await put_raw(faulty.direct, ROW_LAYOUT)
        held = faulty.proxy.pause("Query")

        first, second = await while_held(
            held,
            migrate(faulty.db, MapOrder.lines, from_=Partition()),
            lambda: migrate(faulty.direct, MapOrder.lines, from_=Partition()),
        )

        assert await layout(faulty.direct) == MAP_LAYOUT
        assert_ok(first, second)
        assert second.deleted == len(ORDERS) * len(LINES)
        order = await faulty.direct.get(MapOrder, order_id="07", load=[MapOrder.lines])
        assert order.lines.loaded == [MapLine("07", name, q) for name, q in LINES]


async def test_two_embed_runs_at_once_one_meeting_lost_replies_and_errors_keep_every_child(
    faulty_connect: FaultyConnect,
) -> None:
    """Writes applied whose replies are lost, 500s after applying, throttling: all retried."""
    async with faulty_connect(maps, max_attempts=10) as faulty:
        await put_raw(faulty.direct, ROW_LAYOUT)
        faulty.proxy.use(
            FaultPlan(
                seed=17,
                rates={"lost_reply": 0.15, "error_500_after": 0.1, "throttle": 0.1},
            )
        )

        reports = await asyncio.gather(
            migrate(faulty.db, MapOrder.lines, from_=Partition(), page_size=15),
            migrate(faulty.direct, MapOrder.lines, from_=Partition(), page_size=15),
        )
        faulty.proxy.use(None)

        assert await layout(faulty.direct) == MAP_LAYOUT
        assert_ok(*reports)
        assert {"lost_reply", "error_500_after"} <= {e.fault for e in faulty.proxy.injected}
        assert faulty.proxy.errors == []


async def test_two_unembed_runs_at_once_one_meeting_lost_replies_and_errors_keep_every_child(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(rows, max_attempts=10) as faulty:
        await put_raw(faulty.direct, MAP_LAYOUT)
        faulty.proxy.use(
            FaultPlan(
                seed=5,
                rates={"lost_reply": 0.15, "error_500_after": 0.1, "throttle": 0.1},
            )
        )

        reports = await asyncio.gather(
            migrate(faulty.db, RowOrder.lines, from_=Embedded(key="name"), page_size=4),
            migrate(faulty.direct, RowOrder.lines, from_=Embedded(key="name"), page_size=4),
        )
        faulty.proxy.use(None)

        assert await layout(faulty.direct) == ROW_LAYOUT
        assert_ok(*reports)
        assert {"lost_reply", "error_500_after"} <= {e.fault for e in faulty.proxy.injected}
        assert faulty.proxy.errors == []


async def test_two_unembed_runs_at_once_make_every_child_once_with_every_attribute(
    faulty_connect: FaultyConnect,
) -> None:
    """The first run reads what is stored at the new keys after the second made them all."""
    async with faulty_connect(rows) as faulty:
        await put_raw(faulty.direct, MAP_LAYOUT)
        held = faulty.proxy.pause("BatchGetItem")

        first, second = await while_held(
            held,
            migrate(faulty.db, RowOrder.lines, from_=Embedded(key="name")),
            lambda: migrate(faulty.direct, RowOrder.lines, from_=Embedded(key="name")),
        )

        assert await layout(faulty.direct) == ROW_LAYOUT
        assert_ok(first, second)
        assert second.written == len(ORDERS) * len(LINES)


async def test_an_embed_cancelled_between_a_parent_and_its_deletions_resumes_whole(
    faulty_connect: FaultyConnect, tmp_path: Path
) -> None:
    """Cancelled while a line's deletion is on its way: its order holds the line already."""
    checkpoint = tmp_path / "embed.json"
    async with faulty_connect(maps) as faulty:
        await put_raw(faulty.direct, ROW_LAYOUT)
        held = faulty.proxy.pause("DeleteItem", skip=5)
        run = asyncio.ensure_future(
            migrate(faulty.db, MapOrder.lines, from_=Partition(), checkpoint=checkpoint)
        )
        arrived = asyncio.ensure_future(held.arrived.wait())
        await asyncio.wait({run, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), await run
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        held.release()  # the deletion lands after all, as one already sent would
        assert await layout(faulty.direct) not in (ROW_LAYOUT, MAP_LAYOUT)
        assert checkpoint.exists()

        report = await migrate(faulty.db, MapOrder.lines, from_=Partition(), checkpoint=checkpoint)

        assert report.resumed
        assert_ok(report)
        assert await layout(faulty.direct) == MAP_LAYOUT
        assert not checkpoint.exists()


async def test_embed_then_unembed_gives_back_every_item_as_it_was(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(maps) as db,
        connect_to(dynorm_server.url, rows, db.table_name) as back,
    ):
        await put_raw(db, ROW_LAYOUT)
        assert_ok(await migrate(db, MapOrder.lines, from_=Partition()))
        assert await layout(db) == MAP_LAYOUT
        assert_ok(await migrate(back, RowOrder.lines, from_=Embedded(key="name")))
        assert await layout(db) == ROW_LAYOUT


# -- Partition() -> Index("GSI1"), and a backfill of GSI2 -----------------------------------------

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")]
in_partition = Table("race-move", pk="pk", sk="sk", indexes=INDEXES)
in_index = Table("race-move", pk="pk", sk="sk", indexes=INDEXES)


@in_partition.model(pk="P#{pid}", sk="#P#{pid}")
class OldParent:
    pid: str
    title: str = ""
    items = HasMany["OldItem"](via=Partition())


@in_partition.model(pk="P#{pid}", sk="ITEM#{name}")
class OldItem:
    pid: str
    name: str
    qty: int = 0


@in_index.model(
    pk="P#{pid}",
    sk="#P#{pid}",
    GSI1=("P#{pid}", "#P#{pid}"),
    GSI2=("T#{title}", "P#{pid}"),
)
class Parent:
    pid: str
    title: str = ""
    items = HasMany["Item"](via=Index("GSI1"))


@in_index.model(pk="I#{pid}#{name}", sk="I#{pid}#{name}", GSI1=("P#{pid}", "ITEM#{name}"))
class Item:
    pid: str
    name: str
    qty: int = 0


PARENTS = [f"{i:02}" for i in range(10)]
ITEMS = [("nut", 1), ("bolt", 2), ("gear", 3)]


def old_parent(pid: str) -> Raw:
    return {"pk": s(f"P#{pid}"), "sk": s(f"#P#{pid}"), "pid": s(pid), "title": s(f"t{pid}")}


def old_item(pid: str, name: str, qty: int) -> Raw:
    return {
        "pk": s(f"P#{pid}"),
        "sk": s(f"ITEM#{name}"),
        "pid": s(pid),
        "name": s(name),
        "qty": n(qty),
        **EXTRA,
    }


def new_parent(pid: str, *, gsi1: bool = True, gsi2: bool = False) -> Raw:
    item = old_parent(pid)
    if gsi1:
        item |= {"GSI1PK": s(f"P#{pid}"), "GSI1SK": s(f"#P#{pid}")}
    if gsi2:
        item |= {"GSI2PK": s(f"T#t{pid}"), "GSI2SK": s(f"P#{pid}")}
    return item


def new_item(pid: str, name: str, qty: int) -> Raw:
    return {
        **old_item(pid, name, qty),
        "pk": s(f"I#{pid}#{name}"),
        "sk": s(f"I#{pid}#{name}"),
        "GSI1PK": s(f"P#{pid}"),
        "GSI1SK": s(f"ITEM#{name}"),
    }


OLD_MOVE_LAYOUT = by_key(
    [{**old_parent(p), **EXTRA} for p in PARENTS]
    + [old_item(p, name, q) for p in PARENTS for name, q in ITEMS]
)


def moved_layout(*, gsi1: bool = True, gsi2: bool = False) -> list[Raw]:
    return by_key(
        [{**new_parent(p, gsi1=gsi1, gsi2=gsi2), **EXTRA} for p in PARENTS]
        + [new_item(p, name, q) for p in PARENTS for name, q in ITEMS]
    )


async def test_two_move_runs_at_once_move_every_child_once_with_every_attribute(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(in_index) as faulty:
        await put_raw(faulty.direct, OLD_MOVE_LAYOUT)
        held = faulty.proxy.pause("BatchGetItem")

        first, second = await while_held(
            held,
            migrate(faulty.db, Parent.items, from_=Partition()),
            lambda: migrate(faulty.direct, Parent.items, from_=Partition()),
        )

        assert await layout(faulty.direct) == moved_layout()
        assert_ok(first, second)


async def test_two_backfills_and_a_move_at_once_leave_every_item_once_and_whole(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    """Two kinds on one table at once: a backfill of the parents' GSI2, a move of the children."""
    async with (
        faulty_connect(in_index) as faulty,
        connect_to(dynorm_server.url, in_index, faulty.db.table_name) as third,
    ):
        await put_raw(faulty.direct, OLD_MOVE_LAYOUT)

        reports = await asyncio.gather(
            backfill_index(faulty.db, Parent, "GSI2"),
            migrate(faulty.direct, Parent.items, from_=Partition()),
            backfill_index(third, Parent, "GSI2"),
        )

        assert await layout(faulty.direct) == moved_layout(gsi2=True)
        assert all(r.skipped == () for r in reports)
        # Runs that met another's writes may see them only in their verification: a second
        # run of each finds nothing to do.
        again = [
            await backfill_index(third, Parent, "GSI2"),
            await migrate(third, Parent.items, from_=Partition()),
        ]
        assert_ok(*again)
        assert [r.changes for r in again] == [0, 0]


# -- Denormalized copies ---------------------------------------------------------------------------

books = Table("race-books", pk="pk", sk="sk")


@books.model(pk="A#{author}", sk="#AUTHOR#{author}")
class Author:
    author: str
    born: str
    books = HasMany["Book"](via=Denormalized(copy={"born": "author_born"}))


@books.model(pk="A#{author}", sk="BOOK#{title}")
class Book:
    author: str
    title: str
    author_born: str = ""


AUTHORS = [f"{i:02}" for i in range(8)]
TITLES = ["one", "two", "three"]


def book(author: str, title: str, born: str | None) -> Raw:
    item = {
        "pk": s(f"A#{author}"),
        "sk": s(f"BOOK#{title}"),
        "author": s(author),
        "title": s(title),
        **EXTRA,
    }
    return item if born is None else item | {"author_born": s(born)}


def author(name: str) -> Raw:
    return {
        "pk": s(f"A#{name}"),
        "sk": s(f"#AUTHOR#{name}"),
        "author": s(name),
        "born": s(f"19{name}"),
        **EXTRA,
    }


async def test_two_copy_repairs_at_once_fill_every_copy_and_keep_the_rest(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(books) as faulty:
        await put_raw(
            faulty.direct,
            [author(a) for a in AUTHORS] + [book(a, t, None) for a in AUTHORS for t in TITLES],
        )

        reports = await asyncio.gather(
            repair_copies(faulty.db, Author.books), repair_copies(faulty.direct, Author.books)
        )

        assert await layout(faulty.direct) == by_key(
            [author(a) for a in AUTHORS] + [book(a, t, f"19{a}") for a in AUTHORS for t in TITLES]
        )
        assert_ok(*reports)
        assert sum(r.written for r in reports) == len(AUTHORS) * len(TITLES)


# -- items that do not decode ---------------------------------------------------------------------

FOREIGN_ITEM = {
    "pk": s("P#03"),
    "sk": s("ITEM#odd"),
    "pid": s("03"),
    "name": s("odd"),
    "qty": s("many"),  # another tool's item fitting the template, holding a text
}


async def test_a_move_skips_an_item_that_does_not_decode_lists_it_and_moves_the_rest(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(in_index) as db:
        await put_raw(db, [*OLD_MOVE_LAYOUT, FOREIGN_ITEM])

        report = await migrate(db, Parent.items, from_=Partition(), page_size=7)

        assert await layout(db) == by_key([*moved_layout(), FOREIGN_ITEM])
        assert report.ok, report
        [skipped] = report.skipped
        assert skipped.startswith("pk='P#03', sk='ITEM#odd': ")
        assert "qty" in skipped


FOREIGN_LINE = {
    "pk": s("O#05"),
    "sk": s("LINE#odd"),
    "order_id": s("05"),
    "name": s("odd"),
    "qty": s("many"),
}


async def test_embedding_skips_a_child_that_does_not_decode_and_embeds_the_rest(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(maps) as db:
        await put_raw(db, [*ROW_LAYOUT, FOREIGN_LINE])

        report = await migrate(db, MapOrder.lines, from_=Partition())

        assert await layout(db) == by_key([*MAP_LAYOUT, FOREIGN_LINE])
        assert [line.split(": ")[0] for line in report.skipped] == ["pk='O#05', sk='LINE#odd'"]
        assert report.verification is not None
        assert report.verification.ok
