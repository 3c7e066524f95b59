"""Reads of a relationship declared with ``was=``: the union of both layouts, each child once.

For each pair of strategies, the stored table holds children in the old layout only, in the
new layout only, and in both (a child caught between a move's put and its delete, its new copy
holding other values: the new copy wins). Old-layout children are written through a Database on
the old declaration, new-layout ones through a Database on the new declaration without
``was=`` (both second Table objects of the same name, on the same stored table); every read path
of the declaration with ``was=`` must return the union in the new strategy's order, with the
requests it promises.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
    DefinitionError,
    Denormalized,
    Embedded,
    HasMany,
    Index,
    Partition,
    Table,
)
from dynorm.mapping.strategies import Strategy
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

pytestmark = pytest.mark.integration

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]

#: Each strategy's child key templates (the parent is always P#{pid} / #P#{pid}, also on GSI1).
TEMPLATES: dict[str, dict[str, Any]] = {
    "partition": {"pk": "P#{pid}", "sk": "KID#{name}"},
    "partition3": {"pk": "P#{pid}#{shard}", "sk": "KID#{name}"},
    "index": {"pk": "K#{pid}#{name}", "sk": "K#{pid}#{name}", "GSI1": ("P#{pid}", "KID#{name}")},
    "index3": {
        "pk": "K#{pid}#{name}",
        "sk": "K#{pid}#{name}",
        "GSI1": ("P#{pid}#{shard}", "KID#{name}"),
    },
}

STRATEGIES: dict[str, Strategy] = {
    "partition": Partition(),
    "partition3": Partition(shards=3),
    "index": Index("GSI1"),
    "index3": Index("GSI1", shards=3),
    "denormalized": Denormalized(copy={"title": "title"}),
    "denormalized_index": Denormalized(copy={"title": "title"}, where=Index("GSI1")),
    "denormalized3": Denormalized(copy={"title": "title"}, where=Partition(shards=3)),
    "embedded": Embedded(key="name"),
}
#: Where a Denormalized strategy's children live: that strategy's child templates.
WHERE = {"denormalized": "partition", "denormalized_index": "index", "denormalized3": "partition3"}


@attrs.define
class PlainKid:  # an embedded child as the old layout stored it (no parent id)
    name: str
    qty: int = 0


def declare(
    name: str, via: str, *, was: str | None = None, child_templates: str | None = None
) -> tuple[Table, type[Any], type[Any]]:
    """(table, Parent, Kid) declared with ``via`` (and ``was``), on a stored table ``name``.

    ``child_templates`` names the Kid's key templates (default: ``via``'s own; an Embedded via
    keeps the Kid of the collection it came from).
    """
    table = Table(name, pk="pk", sk="sk", indexes=INDEXES)
    strategy = STRATEGIES[via]
    old = None if was is None else STRATEGIES[was]
    kid_keys = TEMPLATES[WHERE.get(child_templates or via, child_templates or via)]

    @table.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
    class Parent:
        pid: str
        title: str = ""
        kids = HasMany["Kid"](via=strategy, was=old)

    @table.model(**kid_keys)
    class Kid:
        pid: str
        name: str
        qty: int = 0
        title: str = ""

    return table, Parent, Kid


def declare_embedded_old(name: str) -> tuple[Table, type[Any]]:
    """(table, Parent) whose kids are embedded plain children, keyed by name."""
    table = Table(name, pk="pk", sk="sk", indexes=INDEXES)

    @table.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
    class Parent:
        pid: str
        title: str = ""
        kids = HasMany[PlainKid](PlainKid, via=Embedded(key="name"))

    return table, Parent


#: (old strategy, new strategy): every pair read here.
PAIRS = [
    ("partition", "index"),
    ("index", "partition"),
    ("partition", "partition3"),
    ("partition3", "partition"),
    ("index", "index3"),
    ("index3", "partition"),
    ("partition", "denormalized"),
    ("embedded", "partition"),
    ("embedded", "index3"),
    ("partition", "embedded"),
    ("index", "embedded"),
    ("index3", "index"),
    ("partition3", "index3"),
    ("index", "partition3"),
    ("embedded", "partition3"),
    ("partition", "denormalized3"),
    ("index", "denormalized_index"),
    ("denormalized_index", "partition"),
    ("embedded", "denormalized"),
]

OLD_ONLY = [("n1", 1), ("n3", 1), ("n5", 1)]
NEW_ONLY = [("n2", 2), ("n4", 2)]
#: in both layouts: (name, old qty, new qty)
BOTH = [("n0", 0, 7), ("n6", 0, 9)]
EXPECTED = sorted([*OLD_ONLY, *NEW_ONLY, *((n, q) for n, _, q in BOTH)])


@contextlib.asynccontextmanager
async def layouts(
    dynorm_connect: Connect, server: RunningServer, old: str, new: str
) -> AsyncIterator[tuple[Database, type[Any], type[Any]]]:
    """A table holding the three kinds of children of parent "a" (and a parent "b" with one).

    Yields (db on the declaration with was=, its Parent, its Kid).
    """
    kid_templates = old if new == "embedded" else None
    name = f"was-{old}-{new}"
    union_table, parent, kid = declare(name, new, was=old, child_templates=kid_templates)
    plain_table, plain_parent, plain_kid = declare(name, new, child_templates=kid_templates)
    async with dynorm_connect(union_table) as db:
        # Old first: where both layouts share a table key (an index's shards changing), the
        # new copy replaces the old item, as the move's rewrite in place does.
        if old == "embedded":
            old_table, old_parent = declare_embedded_old(name)
            async with connect_to(server.url, old_table, db.table_name) as old_db:
                await write_embedded_old(old_db, old_parent)
        else:
            old_table, old_parent, old_kid = declare(name, old)
            async with connect_to(server.url, old_table, db.table_name) as old_db:
                if old in WHERE:  # copies need their parent stored
                    await old_db.put_all([old_parent("a"), old_parent("b")])
                old_kids = [old_kid("a", n, q) for n, q in OLD_ONLY]
                old_kids += [old_kid("a", n, q) for n, q, _ in BOTH]
                await old_db.put_all([*old_kids, old_kid("b", "z", 5)])
        async with connect_to(server.url, plain_table, db.table_name) as plain:
            await write_new(plain, plain_parent, plain_kid, new)
        yield db, parent, kid


async def write_new(db: Database, parent: type[Any], kid: type[Any], new: str) -> None:
    new_kids = [kid("a", n, q) for n, q in NEW_ONLY] + [kid("a", n, q) for n, _, q in BOTH]
    if new == "embedded":
        a = await db.put(parent("a"))
        for child in new_kids:
            await db.add(a, parent.kids, child)
        await db.put(parent("b"))
        return
    if (await db.get_many(parent, [{"pid": "a"}]))[0] is None:  # none of the old layout's
        await db.put_all([parent("a"), parent("b")])
    await db.put_all(new_kids)


async def write_embedded_old(db: Database, parent: type[Any]) -> None:
    a = await db.put(parent("a"))
    await db.put(parent("b"))
    for n, q in OLD_ONLY:
        await db.add(a, parent.kids, PlainKid(n, q))
    for n, q, _ in BOTH:
        await db.add(a, parent.kids, PlainKid(n, q))
    await db.add(parent("b"), parent.kids, PlainKid("z", 5))


def pairs(children: list[Any]) -> list[tuple[str, int]]:
    return [(c.name, c.qty) for c in children]


@pytest.mark.parametrize(("old", "new"), PAIRS, ids=[f"{o}-to-{n}" for o, n in PAIRS])
async def test_every_read_returns_the_union_in_the_new_order(
    dynorm_connect: Connect, dynorm_server: RunningServer, old: str, new: str
) -> None:
    async with layouts(dynorm_connect, dynorm_server, old, new) as (db, parent, _):
        loaded = await db.get(parent, pid="a", load=[parent.kids])
        assert pairs(loaded.kids.loaded) == EXPECTED
        assert pairs(await loaded.kids.all()) == EXPECTED

        plain = await db.get(parent, pid="a")
        assert pairs(await plain.kids.all()) == EXPECTED
        assert pairs([k async for k in plain.kids]) == EXPECTED
        assert await plain.kids.count() == len(EXPECTED)

        limited = await db.get(parent, pid="a", load=[parent.kids.limit(3)])
        assert pairs(limited.kids.loaded) == EXPECTED[:3]
        assert pairs(await limited.kids.all()) == EXPECTED

        for size in (1, 2, 3, 10):
            seen: list[Any] = []
            cursor = None
            while True:
                page = await plain.kids.page(limit=size, cursor=cursor)
                assert len(page.items) <= size
                seen += page.items
                cursor = page.cursor
                if cursor is None:
                    break
            assert pairs(seen) == EXPECTED, size

        both = await db.query(parent, pid="b").all()
        await db.load(both, parent.kids)
        assert pairs(both[0].kids.loaded) == [("z", 5)]
        if parent.kids.was is None:  # was= names via='s own place (copies only): one layout
            assert pairs(await plain.kids.query().all()) == EXPECTED
        else:
            with pytest.raises(DefinitionError, match="reads one layout"):
                plain.kids.query()


ROUNDS = {
    ("partition", "index"): (["GetItem", "Query"], ["Query"]),
    ("index", "partition"): (["GetItem", "Query"], ["Query"]),
    ("partition", "partition3"): (["GetItem", "Query"], ["Query"] * 3),
    ("partition3", "partition"): (["GetItem"] + ["Query"] * 3, ["Query"]),
    ("embedded", "partition"): (["GetItem", "GetItem"], ["Query"]),
    ("index3", "index"): (["GetItem"] + ["Query"] * 3, ["Query"]),
    ("embedded", "index3"): (["GetItem", "GetItem"], ["Query"] * 3),
}


@pytest.mark.parametrize(("old", "new"), list(ROUNDS), ids=[f"{o}-to-{n}" for o, n in ROUNDS])
async def test_a_load_sends_the_old_layout_first_then_the_new(
    dynorm_connect: Connect, dynorm_server: RunningServer, old: str, new: str
) -> None:
    first, then = ROUNDS[old, new]
    async with layouts(dynorm_connect, dynorm_server, old, new) as (db, parent, _):
        reads = db.explain.get_reads(parent, pid="a", load=[parent.kids])
        assert sorted(r.operation for r in reads.requests) == sorted(first)
        assert [r.operation for r in reads.then] == then
        assert "then" in reads.costs()[f"{parent.__name__}.kids"]
        with count_requests(db) as log:
            loaded = await db.get(parent, pid="a", load=[parent.kids])
        assert pairs(loaded.kids.loaded) == EXPECTED
        # (The order, old layout answered before the new read is sent, is checked in
        # tests/unit/test_was_union.py: here the parent's own read runs beside them.)
        assert sorted(log.operations) == sorted(first + then)


async def test_a_relationship_without_was_costs_what_it_did(
    dynorm_connect: Connect,
) -> None:
    table, parent, kid = declare("was-none", "partition")
    async with dynorm_connect(table) as db:
        await db.put_all([parent("a"), kid("a", "x", 1)])
        with count_requests(db) as log:
            loaded = await db.get(parent, pid="a", load=[parent.kids])
            assert pairs(await loaded.kids.all()) == [("x", 1)]
        assert log.operations == ["Query"]


async def test_parents_found_by_a_query_load_the_union(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with layouts(dynorm_connect, dynorm_server, "partition", "index") as (db, parent, _):
        (found,) = await db.query(parent, pid="a", load=[parent.kids]).all()
        assert pairs(found.kids.loaded) == EXPECTED


# -- a hierarchy, newest first: the order the new strategy promises --------------------------------

hier_old = Table("was-hierarchy", pk="pk", sk="sk", indexes=INDEXES)
hier_new = Table("was-hierarchy", pk="pk", sk="sk", indexes=INDEXES)
hier_plain = Table("was-hierarchy", pk="pk", sk="sk", indexes=INDEXES)


@hier_old.model(pk="C#{country}", sk="S#{state}")
class OldState:
    country: str
    state: str
    cities = HasMany["OldCity"](via=Partition(), newest_first=True)


@hier_old.model(pk="C#{country}", sk="S#{state}#CITY#{city}")
class OldCity:
    country: str
    state: str
    city: str
    size: int = 0


def _new_hierarchy(table: Table, was: Strategy | None) -> tuple[type[Any], type[Any]]:
    @table.model(pk="C#{country}", sk="S#{state}", GSI1=("C#{country}", "S#{state}"))
    class State:
        country: str
        state: str
        cities = HasMany["City"](via=Index("GSI1"), was=was, newest_first=True)

    @table.model(
        pk="CITY#{country}#{state}#{city}",
        sk="CITY#{country}#{state}#{city}",
        GSI1=("C#{country}", "S#{state}#CITY#{city}"),
    )
    class City:
        country: str
        state: str
        city: str
        size: int = 0

    return State, City


HierState, HierCity = _new_hierarchy(hier_new, Partition())
PlainState, PlainCity = _new_hierarchy(hier_plain, None)


async def test_a_hierarchy_reads_its_nested_children_from_both_layouts_newest_first(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(hier_new) as db:
        async with connect_to(dynorm_server.url, hier_old, db.table_name) as old:
            await old.put_all(
                [OldState("US", "WA"), OldState("US", "WAX"), OldCity("US", "WAX", "x", 1)]
                + [OldCity("US", "WA", c, 1) for c in ("a", "c", "e")]
            )
        async with connect_to(dynorm_server.url, hier_plain, db.table_name) as plain:
            await plain.put_all([PlainCity("US", "WA", c, 2) for c in ("b", "c", "d")])
        expected = [("e", 1), ("d", 2), ("c", 2), ("b", 2), ("a", 1)]
        wa = await db.get(HierState, country="US", state="WA", load=[HierState.cities])
        assert [(c.city, c.size) for c in wa.cities.loaded] == expected
        page = await wa.cities.page(limit=2)
        assert [c.city for c in page.items] == ["e", "d"]
        rest = await wa.cities.page(cursor=page.cursor)
        assert [c.city for c in rest.items] == ["c", "b", "a"]
        assert rest.cursor is None
        assert await wa.cities.count() == 5


LIVE = [
    ("partition", "partition3"),
    ("partition3", "partition"),
    ("partition", "index"),
    ("index", "partition"),
    ("embedded", "partition"),
]


@pytest.mark.transactions  # a migration out of was= moves each child in a TransactWriteItems
@pytest.mark.parametrize(("old", "new"), LIVE, ids=[f"{o}-to-{n}" for o, n in LIVE])
async def test_reads_during_a_migration_never_miss_a_child(
    dynorm_connect: Connect, dynorm_server: RunningServer, old: str, new: str
) -> None:
    """A migration moves every child (put the new copy, then delete the old one) while readers
    read the whole collection again and again: every read returns every child, once.

    (Reading the two layouts at once, or the new one first, fails this test.)
    """
    from dynorm.migrations import migrate  # noqa: PLC0415 - this test only

    name = f"was-live-{old}-{new}"
    union_table, parent, _ = declare(name, new, was=old)
    names = [f"n{i:02}" for i in range(30)]
    async with dynorm_connect(union_table) as db:
        if old == "embedded":
            old_table, old_parent = declare_embedded_old(name)
            async with connect_to(dynorm_server.url, old_table, db.table_name) as old_db:
                a_old = await old_db.put(old_parent("a"))
                for n in names:
                    await old_db.add(a_old, old_parent.kids, PlainKid(n, 1))
        else:
            old_table, _, old_kid = declare(name, old)
            async with connect_to(dynorm_server.url, old_table, db.table_name) as old_db:
                await old_db.put_all([old_kid("a", n, 1) for n in names])
            await db.put(parent("a"))
        a = await db.get(parent, pid="a")
        done = False
        reads = 0

        async def read_until_done() -> None:
            nonlocal reads
            while not done:
                assert [k.name for k in await a.kids.all()] == names
                page = await a.kids.page(limit=7)
                assert [k.name for k in page.items] == names[:7]
                reads += 1

        async def run() -> None:
            nonlocal done
            try:
                report = await migrate(db, parent.kids, from_=STRATEGIES[old], page_size=4)
                assert report.ok, report
            finally:
                done = True

        await asyncio.gather(run(), read_until_done(), read_until_done())
        assert reads > 1
        assert [k.name for k in await a.kids.all()] == names


# -- an index whose sort key repeats: pages may end inside a run of equal sort keys ----------------

ties_old = Table("was-ties", pk="pk", sk="sk", indexes=INDEXES)
ties_new = Table("was-ties", pk="pk", sk="sk", indexes=INDEXES)
ties_plain = Table("was-ties", pk="pk", sk="sk", indexes=INDEXES)


@attrs.define
class PlainEvent:
    name: str
    n: int = 0
    day: str = ""


@ties_old.model(pk="P#{pid}", sk="#P#{pid}")
class OldTrip:
    pid: str
    events = HasMany[PlainEvent](PlainEvent, via=Embedded(key="name"))


def _trip(table: Table, was: Strategy | None) -> tuple[type[Any], type[Any]]:
    @table.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
    class Trip:
        pid: str
        events = HasMany["Event"](via=Index("GSI1"), was=was)

    # The table key orders n as a number (001, 010), the identity as text ("10" < "4"): a
    # server that orders equal index sort keys by table key does not follow the union's order.
    @table.model(pk="E#{pid}#{n:03d}", sk="E#{pid}#{n:03d}", GSI1=("P#{pid}", "AT#{day}"))
    class Event:
        pid: str
        n: int
        name: str = ""
        day: str = ""

    return Trip, Event


Trip, TripEvent = _trip(ties_new, Embedded(key="name"))
_, PlainEventItem = _trip(ties_plain, None)


async def test_pages_ending_inside_equal_index_sort_keys_miss_nothing(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    days = {i: f"d{i % 3}" for i in range(14)}
    async with dynorm_connect(ties_new) as db:
        async with connect_to(dynorm_server.url, ties_old, db.table_name) as old:
            trip = await old.put(OldTrip("t"))
            for i in range(8):  # 0..7 embedded, 6 and 7 in both layouts
                await old.add(trip, OldTrip.events, PlainEvent(f"e{i}", i, days[i]))
        async with connect_to(dynorm_server.url, ties_plain, db.table_name) as plain:
            await plain.put_all([PlainEventItem("t", i, f"e{i}", days[i]) for i in range(6, 14)])
        expected = sorted(days, key=lambda i: (days[i], str(i)))
        t = await db.get(Trip, pid="t")
        assert [e.n for e in await t.events.all()] == expected
        for size in (1, 2, 3, 5):
            seen: list[int] = []
            cursor = None
            while True:
                page = await t.events.page(limit=size, cursor=cursor)
                seen += [e.n for e in page.items]
                if (cursor := page.cursor) is None:
                    break
            assert seen == expected, size
        assert await t.events.count() == len(days)


# -- an old index that holds the children in part: read whole before they are moved ---------------

KEYS_ONLY = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK", projection="KEYS_ONLY")]
part_old = Table("was-part", pk="pk", sk="sk", indexes=KEYS_ONLY)
part_new = Table("was-part", pk="pk", sk="sk", indexes=KEYS_ONLY)


@part_old.model(pk="P#{pid}", sk="#P#{pid}", GSI1=("P#{pid}", "#P#{pid}"))
class PartOldParent:
    pid: str
    kids = HasMany["PartOldKid"](via=Index("GSI1"))


@part_old.model(pk="K#{pid}#{name}", sk="K#{pid}#{name}", GSI1=("P#{pid}", "KID#{name}"))
class PartOldKid:
    pid: str
    name: str
    qty: int = 0


@part_new.model(pk="P#{pid}", sk="#P#{pid}")
class PartParent:
    pid: str
    kids = HasMany["PartKid"](via=Partition(), was=Index("GSI1"))


@part_new.model(pk="P#{pid}", sk="KID#{name}")
class PartKid:
    pid: str
    name: str
    qty: int = 0


async def test_an_old_index_holding_items_in_part_is_read_whole(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with dynorm_connect(part_new) as db:
        async with connect_to(dynorm_server.url, part_old, db.table_name) as old:
            await old.put_all([PartOldParent("a"), *(PartOldKid("a", n, 3) for n in "bdf")])
        await db.put_all([PartKid("a", n, 4) for n in "ce"])
        a = await db.get(PartParent, pid="a")
        expected = [("b", 3), ("c", 4), ("d", 3), ("e", 4), ("f", 3)]
        with count_requests(db) as log:
            assert pairs(await a.kids.all()) == expected
        assert log.operations == ["Query", "BatchGetItem", "Query"]
        page = await a.kids.page(limit=2)
        rest = await a.kids.page(cursor=page.cursor)
        assert pairs([*page.items, *rest.items]) == expected
        reads = db.explain.get_reads(PartParent, pid="a", load=[PartParent.kids])
        assert [r.operation for r in reads.requests] == ["GetItem", "Query"]
        assert [r.operation for r in reads.then] == ["BatchGetItem", "Query"]
        assert "1 BatchGetItem per page" in reads.costs()["PartParent.kids"]
        with count_requests(db) as log:
            loaded = await db.get(PartParent, pid="a", load=[PartParent.kids])
        assert pairs(loaded.kids.loaded) == expected
        assert sorted(log.operations) == ["BatchGetItem", "GetItem", "Query", "Query"]
