"""The composition matrix: every relationship strategy through every operation, against a raw scan.

As SQLAlchemy's ``test/orm/inheritance/`` runs one set of assertions over every inheritance
mapping, this module runs one body per operation over every declaration of "a parent has
children" in ``matrix_models.py``: ``Partition``, ``Index``, ``Embedded``, ``Denormalized``, a
hierarchy and an adjacency list, sharded and unsharded, with string and number sort keys. The
operations: load (``db.get`` and ``db.query`` with ``load=``), paging with a cursor while children
are added and removed between pages, count, explain against what is sent, cascade delete,
``dynorm.jsonable`` and migration from each strategy to each other. Every body checks what is
stored with a raw Scan against where the layout says, by hand, its children go.

A combination that cannot apply is a row of :data:`CASES` (or :data:`MIGRATIONS`) that says why;
one that fails today because of a known bug carries a strict xfail naming it, so that the fix
turns it into an error and the mark is removed. A new feature joins the matrix with a layout in
``matrix_models.py`` and a row here (docs/testing.md, "The composition matrix").
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest

import dynorm
from dynorm import Database, DefinitionError, ItemNotFoundError, Request
from dynorm.migrations import migrate, repair_copies
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import FaultyConnect, connect_to

from . import matrix_models as m
from .raw import flat, stored
from .test_explain_sent import TRANSPORT_ADDS, compare, fits, placeholders

pytestmark = pytest.mark.integration

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}


@attrs.frozen
class Case:
    """A row of the matrix: a layout, and what of it does not apply or fails today."""

    id: str
    layout: Callable[[], m.Layout] | None
    #: Why the whole row cannot apply (a layout of None).
    not_applicable: str = ""
    #: Operation -> why it is skipped ("does not apply: ..." where it cannot).
    skip: Mapping[str, str] = attrs.field(factory=dict)
    #: Operation -> the known bug it fails on (a strict xfail).
    xfail: Mapping[str, str] = attrs.field(factory=dict)

    def param(self, operation: str) -> Any:
        marks: list[pytest.MarkDecorator] = []
        reason = f"does not apply: {self.not_applicable}" if self.not_applicable else ""
        reason = reason or self.skip.get(operation, "")
        if reason:
            marks.append(pytest.mark.skip(reason=reason))
        elif operation in self.xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=self.xfail[operation]))
        return pytest.param(self, id=self.id, marks=marks)


CASES = [
    Case("Partition", m.partition),
    Case(
        "Partition-sharded",
        lambda: m.partition(m.PARTITION_SHARDS),
    ),
    Case("Partition-number", m.partition_number),
    Case(
        "Partition-sharded-number",
        lambda: m.partition_number(m.PARTITION_SHARDS),
    ),
    Case("Index", m.index),
    Case(
        "Index-sharded",
        lambda: m.index(m.INDEX_SHARDS),
    ),
    Case("Index-number", m.index_number),
    Case(
        "Index-sharded-number",
        lambda: m.index_number(m.INDEX_SHARDS),
    ),
    Case("Embedded", m.embedded),
    Case(
        "Embedded-sharded",
        None,
        not_applicable="embedded children live inside one item: there is no partition to shard",
    ),
    Case(
        "Embedded-number",
        None,
        not_applicable="embedded children are map entries keyed by text (Embedded(key=) takes a "
        "str field); there is no key attribute to type",
    ),
    Case("Denormalized", m.denormalized),
    Case(
        "Denormalized-sharded",
        lambda: m.denormalized(m.INDEX_SHARDS),
    ),
    Case("Denormalized-number", m.denormalized_number),
    Case("hierarchy", m.hierarchy),
    Case(
        "hierarchy-sharded",
        lambda: m.hierarchy(m.INDEX_SHARDS),
    ),
    Case(
        "hierarchy-number",
        None,
        not_applicable="a hierarchy's sort key has several components joined as text; a number "
        "key attribute holds one number",
    ),
    Case("adjacency", m.adjacency),
    Case(
        "cross-table",
        m.cross_table,
    ),
    Case(
        "adjacency-sharded",
        None,
        not_applicable="the inverted index's partition key is the mapping item's own sort key; a "
        "{shard} there would change which item it is",
    ),
    Case(
        "adjacency-number",
        None,
        not_applicable="the inverted index swaps the table's keys, so a number sort key would be "
        "a number partition key of the index holding text (USER#<name>) and game keys",
    ),
]


def cases(operation: str) -> list[Any]:
    return [case.param(operation) for case in CASES]


# -- the data and the raw truth -------------------------------------------------------------------

PID = "p1"
#: A neighbour whose id begins like the parent's: never read with it.
NEIGHBOUR = "p10"


def layout_of(case: Case) -> m.Layout:
    assert case.layout is not None
    return case.layout()


async def seed(
    db: Database, lay: m.Layout, numbers: list[int], *, neighbour: int = 2
) -> tuple[Any, list[Any]]:
    """The parent with children ``numbers``, and a neighbour with ``neighbour`` children."""
    parent = await db.put(lay.make_parent(PID))
    other = await db.put(lay.make_parent(NEIGHBOUR))
    children = [lay.make_child(PID, i) for i in numbers]
    for child in children:
        await db.add(parent, lay.rel, child)
    for i in range(neighbour):
        await db.add(other, lay.rel, lay.make_child(NEIGHBOUR, i))
    return parent, ordered(lay, children)


def ordered(lay: m.Layout, children: list[Any]) -> list[Any]:
    return sorted(children, key=lay.order)


def expected_rows(lay: m.Layout, children: list[Any]) -> list[dict[str, Any]]:
    return sorted(
        ({**lay.stored_as(c), "qty": str(c.qty)} for c in children), key=lambda r: sorted(r.items())
    )


async def scanned(db: Database, lay: m.Layout) -> list[dict[str, Any]]:
    """Every item of every table of the layout, values flattened (a raw, consistent Scan)."""
    if not lay.others:
        return await stored(db)
    items: list[dict[str, Any]] = []
    for table in (lay.table, *lay.others):
        params: dict[str, Any] = {"TableName": db.name_of(table), "ConsistentRead": True}
        while True:
            page = await db.send(Request("Scan", params))
            items += [{k: flat(v) for k, v in raw.items()} for raw in page.get("Items", [])]
            if not page.get("LastEvaluatedKey"):
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return items


async def stored_rows(db: Database, lay: m.Layout) -> list[dict[str, Any]]:
    """Where each child is stored, from a raw Scan (the fields ``stored_as`` names, and qty)."""
    items = await scanned(db, lay)
    rows: list[dict[str, Any]] = []
    for item in items:
        if lay.embedded:
            for name, entry in item.get("items", {}).items():
                rows.append(
                    {"pk": item["pk"], "sk": item["sk"], "items": name, "qty": entry["qty"]}
                )
        elif "qty" in item:
            rows.append(item)
    return rows


async def assert_stored(db: Database, lay: m.Layout, children: list[Any]) -> None:
    """The raw Scan holds exactly ``children``, each where the layout puts it."""
    expected = expected_rows(lay, children)
    names = set().union(*(r.keys() for r in expected)) if expected else {"pk", "sk", "qty"}
    rows = await stored_rows(db, lay)
    actual = sorted(
        ({k: r.get(k) for k in names} for r in rows), key=lambda r: sorted(r.items(), key=str)
    )
    expected = sorted(expected, key=lambda r: sorted(r.items(), key=str))
    assert actual == expected


def neighbours(lay: m.Layout, count: int = 2) -> list[Any]:
    return [lay.make_child(NEIGHBOUR, i) for i in range(count)]


def children_of(parent: Any, lay: m.Layout) -> Any:
    return getattr(parent, lay.rel.name)


# -- load -----------------------------------------------------------------------------------------


@asynccontextmanager
async def opened(dynorm_connect: Connect, lay: m.Layout) -> AsyncIterator[Database]:
    async with dynorm_connect(lay.table, *lay.others) as db:
        yield db


@pytest.mark.parametrize("case", cases("load_get"))
async def test_load_with_get(case: Case, dynorm_connect: Connect) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        _, children = await seed(db, lay, [0, 3, 1, 4, 2])
        await assert_stored(db, lay, [*children, *neighbours(lay)])

        loaded = await db.get(lay.parent_cls, **lay.parent_key(PID), load=[lay.rel])
        assert loaded == lay.make_parent(PID)
        assert children_of(loaded, lay).loaded == children
        assert await children_of(loaded, lay).all() == children
        limited = await db.get(lay.parent_cls, **lay.parent_key(PID), load=[lay.rel.limit(2)])
        assert children_of(limited, lay).loaded == children[:2]
        assert [c async for c in children_of(limited, lay)] == children


@pytest.mark.parametrize("case", cases("load_query"))
async def test_load_with_query(case: Case, dynorm_connect: Connect) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        _, children = await seed(db, lay, [2, 0, 1, 3])
        await assert_stored(db, lay, [*children, *neighbours(lay)])
        parents = await db.query(lay.parent_cls, **lay.query_key(PID), load=[lay.rel]).all()
        want = {PID: children, NEIGHBOUR: ordered(lay, neighbours(lay))}
        assert parents
        for parent in parents:
            assert parent == lay.make_parent(parent.parent_id)
            assert children_of(parent, lay).loaded == want[parent.parent_id]


# -- paging with writes between pages -------------------------------------------------------------

SEEDED = [0, 8, 16, 24]
#: After page k, these children are added and removed (numbers as make_child takes them):
#: some sort before the page's end (not returned), some after it (returned), one is removed
#: before it is returned. Sharded, the first page reads most shards to their end (each holds
#: fewer than a page), and the additions are spread so that each shard gets some.
ROUNDS: list[tuple[list[int], list[int]]] = [
    ([1, 2, 5, 9, 10, 13, 17, 20, 25, 26], [24]),
    ([3, 11, 14, 18, 27, 29, 30], [26]),
    ([4, 28, 31], []),
]


@pytest.mark.parametrize("case", cases("paging"))
async def test_paging_while_children_are_added_and_removed(
    case: Case, dynorm_connect: Connect
) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        parent, _ = await seed(db, lay, SEEDED)
        current = {i: lay.make_child(PID, i) for i in SEEDED}
        cursor: str | None = None
        last: Any = None
        returned: list[Any] = []
        for round_ in range(20):
            # Each page by a parent read afresh, as a web API serves one page a request.
            fresh = await db.get(lay.parent_cls, **lay.parent_key(PID))
            page = await children_of(fresh, lay).page(limit=3, cursor=cursor)
            now = ordered(lay, list(current.values()))
            after = [c for c in now if last is None or lay.order(c) > last]
            # A page ends at the last child returned; the next returns what sorts after it now.
            assert page.items == after[:3], f"page {round_}"
            returned += page.items
            if page.cursor is None:
                assert len(after) <= 3, f"page {round_} ended the collection early"
                break
            last = lay.order(page.items[-1])
            added, removed = ROUNDS[round_] if round_ < len(ROUNDS) else ([], [])
            for i in added:
                current[i] = await db.add(parent, lay.rel, lay.make_child(PID, i))
            for i in removed:
                await db.remove(parent, lay.rel, current.pop(i))
            cursor = page.cursor
        keys = [lay.order(c) for c in returned]
        assert keys == sorted(set(keys))  # in order, each once
        await assert_stored(db, lay, [*current.values(), *neighbours(lay)])


# -- count ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("count"))
async def test_count(case: Case, dynorm_connect: Connect) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        parent, children = await seed(db, lay, [0, 1, 2, 3, 4, 5], neighbour=3)
        await assert_stored(db, lay, [*children, *neighbours(lay, 3)])
        fresh = await db.get(lay.parent_cls, **lay.parent_key(PID))
        # One Query per shard (sent together), a GetItem of an embedding parent.
        sent = ["GetItem"] if lay.embedded else ["Query"] * getattr(lay.strategy, "shards", 1)
        assert [r.operation for r in children_of(fresh, lay).explain_count()] == sent
        with count_requests(db) as log:
            assert await children_of(fresh, lay).count() == len(children)
        assert log.operations == sent
        if not lay.embedded and not lay.rel.sharded:
            assert await children_of(fresh, lay).query().count() == len(children)
        await db.remove(parent, lay.rel, children[0])
        assert await children_of(fresh, lay).count() == len(children) - 1


# -- explain against what is sent -----------------------------------------------------------------


@pytest.mark.parametrize("case", cases("explain"))
async def test_explain_is_what_is_sent(case: Case, faulty_connect: FaultyConnect) -> None:
    lay = layout_of(case)
    async with faulty_connect(lay.table, *lay.others) as faulty:
        db = faulty.db
        parent, children = await seed(faulty.direct, lay, [0, 1, 2])
        key = lay.parent_key(PID)
        new = lay.make_child(PID, 5)
        counted = children_of(await db.get(lay.parent_cls, **key), lay)
        steps: list[tuple[str, Callable[[], list[Any]], Callable[[], Any]]] = [
            (
                "get with load",
                lambda: db.explain.get(lay.parent_cls, **key, load=[lay.rel]),
                lambda: db.get(lay.parent_cls, **key, load=[lay.rel]),
            ),
            ("count", counted.explain_count, counted.count),
            (
                "add",
                lambda: db.explain.add(parent, lay.rel, new),
                lambda: db.add(parent, lay.rel, new),
            ),
            (
                "remove",
                lambda: db.explain.remove(parent, lay.rel, children[0]),
                lambda: db.remove(parent, lay.rel, children[0]),
            ),
            (
                "cascade delete",
                lambda: db.explain.delete(parent, cascade=True),
                lambda: db.delete(parent, cascade=True),
            ),
        ]
        for name, explain, call in steps:
            faulty.proxy.reset()
            explained = explain()
            assert faulty.proxy.requests == [], name  # explain sends nothing
            await call()
            sent = list(zip(faulty.proxy.requests, faulty.proxy.bodies, strict=True))
            if name.endswith("with load") or name == "count":
                # A load's (a sharded count's) requests go out at once, in no set order.
                explained = sorted(explained, key=lambda r: request_order(r.operation, r.params))
                sent = sorted(sent, key=lambda s: request_order(*s))
            assert [r.operation for r in explained] == [op for op, _ in sent], name
            compare(db, explained, [body for _, body in sent])
        await assert_stored(faulty.direct, lay, neighbours(lay))


def request_order(operation: str, params: Any) -> str:
    return operation + json.dumps(params, sort_keys=True, default=repr)


@pytest.mark.parametrize("case", cases("explain_query"))
async def test_explain_of_a_query_with_load_is_what_is_sent(
    case: Case, faulty_connect: FaultyConnect
) -> None:
    lay = layout_of(case)
    async with faulty_connect(lay.table, *lay.others) as faulty:
        await seed(faulty.direct, lay, [0, 1, 2])
        query = faulty.db.query(lay.parent_cls, **lay.query_key(PID), load=[lay.rel])
        explained = query.explain()
        faulty.proxy.reset()
        parents = await query.all()
        assert faulty.proxy.requests[0] == "Query"  # the page first, then each parent's loads
        # The page's requests, then what is sent for each parent it returns (the values each
        # parent gives are placeholders).
        (query_request, *each) = explained
        assert not placeholders(query_request.params)
        assert all(placeholders(r.params) for r in each if r.operation == "Query")
        assert bool(each) == reads_apart(lay)
        expected = [query_request, *(each * len(parents))]
        recorded = zip(faulty.proxy.requests, faulty.proxy.bodies, strict=True)
        sent = in_order_of(expected, list(recorded))
        assert [r.operation for r in expected] == [op for op, _ in sent]
        compare(faulty.db, expected, [body for _, body in sent])


def reads_apart(lay: m.Layout) -> bool:
    """Whether the layout's children are read apart from the parents' Query (by hand)."""
    if lay.embedded:
        return False
    return lay.strategy.index is not None or lay.strategy.shards > 1 or bool(lay.others)


def in_order_of(
    explained: list[Request], sent: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """``sent`` with each request at the place of the explained one it fits (sent at once)."""
    left = list(sent)
    found: list[tuple[str, dict[str, Any]]] = []
    for request in explained:
        params = without_transport(dict(request.params))
        at = next(
            (
                i
                for i, (op, body) in enumerate(left)
                if op == request.operation and fits(params, without_transport(body))
            ),
            None,
        )
        if at is None:
            break
        found.append(left.pop(at))
    return found + left


def without_transport(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k not in TRANSPORT_ADDS}


# -- cascade --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("cascade"))
async def test_cascade_delete(case: Case, dynorm_connect: Connect) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        parent, _ = await seed(db, lay, [0, 1, 2, 3, 4, 5, 6])
        await db.delete(parent, cascade=True)
        await assert_stored(db, lay, neighbours(lay))  # the neighbour's children stay
        with pytest.raises(ItemNotFoundError):
            await db.get(lay.parent_cls, **lay.parent_key(PID))
        assert await db.get(lay.parent_cls, **lay.parent_key(NEIGHBOUR))


# -- jsonable -------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases("jsonable"))
async def test_jsonable(case: Case, dynorm_connect: Connect) -> None:
    lay = layout_of(case)
    async with opened(dynorm_connect, lay) as db:
        _, children = await seed(db, lay, [2, 0, 1])
        await assert_stored(db, lay, [*children, *neighbours(lay)])
        loaded = await db.get(lay.parent_cls, **lay.parent_key(PID), load=[lay.rel])
        shown = dynorm.jsonable(loaded)
        assert shown[lay.rel.name] == [dynorm.jsonable(c) for c in children]
        assert dynorm.from_jsonable(lay.parent_cls, shown) == loaded
        # Not loaded: the same shape whatever the strategy (that of a Partition parent).
        plain = await db.get(lay.parent_cls, **lay.parent_key(PID))
        reference = dynorm.jsonable(m.partition().make_parent(PID))
        assert (lay.rel.name in dynorm.jsonable(plain)) == (lay.rel.name in reference)


# -- migration from each strategy to each other ---------------------------------------------------

STRING_LAYOUTS: dict[str, Callable[[], m.Layout]] = {
    "Partition": m.partition,
    "Index": m.index,
    "Embedded": m.embedded,
    "Denormalized": m.denormalized,
    "Partition-sharded": lambda: m.partition(m.PARTITION_SHARDS),
    "Index-sharded": lambda: m.index(m.INDEX_SHARDS),
}


@attrs.frozen
class Migration:
    """A row of the migration table: from one string layout to another, and how."""

    source: str
    target: str
    #: "migrate"; or, where both layouts store children in the same place (migrate refuses
    #: with advice), "repair_copies" (copies to fill) or "nothing" (copies left, unread).
    how: str = "migrate"
    xfail: str = ""

    def param(self) -> Any:
        marks = [pytest.mark.xfail(strict=True, reason=self.xfail)] if self.xfail else []
        return pytest.param(self, id=f"{self.source}->{self.target}", marks=marks)


SAME_PLACE = {
    ("Partition", "Denormalized"): "repair_copies",
    ("Denormalized", "Partition"): "nothing",
}
MIGRATIONS = [
    Migration(
        source,
        target,
        how=SAME_PLACE.get((source, target), "migrate"),
    )
    for source in STRING_LAYOUTS
    for target in STRING_LAYOUTS
    if source != target
]


def target_layout(migration: Migration) -> m.Layout:
    if migration.target == "Embedded":
        return m.embedded(like=migration.source)  # the child items' templates, to find them
    return STRING_LAYOUTS[migration.target]()


@pytest.mark.parametrize("migration", [mig.param() for mig in MIGRATIONS])
async def test_migration(
    migration: Migration, dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    old = STRING_LAYOUTS[migration.source]()
    new = target_layout(migration)
    async with (
        dynorm_connect(new.table) as db,
        connect_to(dynorm_server.url, old.table, db.table_name) as old_db,
    ):
        await seed(old_db, old, [0, 1, 2, 3, 4])
        await move(db, new, old, migration.how)
        children = [carried(old, new, new.make_child(PID, i)) for i in range(5)]
        await assert_stored(db, new, [*children, *neighbours(new)])
        loaded = await db.get(new.parent_cls, **new.parent_key(PID), load=[new.rel])
        assert children_of(loaded, new).loaded == ordered(new, children)
        with count_requests(db) as log:
            await move(db, new, old, migration.how)
        assert not WRITES & set(log.operations), log.operations  # a second run writes nothing


def carried(old: m.Layout, new: m.Layout, child: Any) -> Any:
    """``child`` as a migration from ``old`` leaves it: a copy stored before is carried."""
    if old.strategy.copies and hasattr(child, "parent_title"):
        return attrs.evolve(child, parent_title=f"title of {child.parent_id}")
    return child


async def move(db: Database, new: m.Layout, old: m.Layout, how: str) -> None:
    if how != "migrate":
        with pytest.raises(DefinitionError, match="live in the same place, so nothing moves"):
            await migrate(db, new.rel, from_=old.strategy)
        if how == "repair_copies":
            assert (await repair_copies(db, new.rel)).ok
        return
    report = await migrate(db, new.rel, from_=old.strategy)
    assert report.ok, report
    if new.strategy.copies:
        assert (await repair_copies(db, new.rel)).ok
