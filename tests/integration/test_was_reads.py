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

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
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
    "embedded": Embedded(key="name"),
}


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
    kid_keys = TEMPLATES[child_templates or ("partition" if via == "denormalized" else via)]

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
            old_table, _, old_kid = declare(name, old)
            async with connect_to(server.url, old_table, db.table_name) as old_db:
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


ROUNDS = {
    ("partition", "index"): (["GetItem", "Query"], ["Query"]),
    ("index", "partition"): (["GetItem", "Query"], ["Query"]),
    ("partition", "partition3"): (["GetItem", "Query"], ["Query"] * 3),
    ("partition3", "partition"): (["GetItem"] + ["Query"] * 3, ["Query"]),
    ("embedded", "partition"): (["GetItem", "GetItem"], ["Query"]),
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


State, City = _new_hierarchy(hier_new, Partition())
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
        wa = await db.get(State, country="US", state="WA", load=[State.cities])
        assert [(c.city, c.size) for c in wa.cities.loaded] == expected
        page = await wa.cities.page(limit=2)
        assert [c.city for c in page.items] == ["e", "d"]
        rest = await wa.cities.page(cursor=page.cursor)
        assert [c.city for c in rest.items] == ["c", "b", "a"]
        assert rest.cursor is None
        assert await wa.cities.count() == 5
