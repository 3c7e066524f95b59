"""The strategy-switch matrix: one loader-level test body, three declarations of one relationship.

``Partition()``, ``Index("GSI1")`` and ``Embedded(key="name")`` store a parent's items in very
different places; the calls that write, load, iterate and page them are the same. The body below
never looks at the strategy: the only per-strategy data is the requests each call costs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Database,
    Embedded,
    HasMany,
    Index,
    Partition,
    RelationLoader,
    Table,
)
from dynorm.mapping.relations import HasManyRelation  # the type db.add takes; not re-exported
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("rel-switch", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# -- Partition(): items share the parent's partition ----------------------------------------------


@table.model(pk="PP#{parent_id}", sk="#PARENT#{parent_id}")
@attrs.define
class PartitionParent:
    parent_id: str
    title: str = ""
    items = HasMany["PartitionItem"]("PartitionItem", via=Partition())


@table.model(pk="PP#{parent_id}", sk="ITEM#{name}")
@attrs.define
class PartitionItem:
    parent_id: str
    name: str
    qty: int = 0


# -- Index("GSI1"): items live in their own partitions, collected by the index ---------------------


@table.model(
    pk="IP#{parent_id}", sk="#PARENT#{parent_id}", GSI1=("IP#{parent_id}", "#PARENT#{parent_id}")
)
@attrs.define
class IndexParent:
    parent_id: str
    title: str = ""
    items = HasMany["IndexItem"]("IndexItem", via=Index("GSI1"))


@table.model(
    pk="II#{parent_id}#{name}", sk="II#{parent_id}#{name}", GSI1=("IP#{parent_id}", "ITEM#{name}")
)
@attrs.define
class IndexItem:
    parent_id: str
    name: str
    qty: int = 0


# -- Embedded(key="name"): items are a map inside the parent item ----------------------------------


@attrs.define
class EmbeddedItem:
    parent_id: str
    name: str
    qty: int = 0


@table.model(pk="EP#{parent_id}", sk="#PARENT#{parent_id}")
@attrs.define
class EmbeddedParent:
    parent_id: str
    title: str = ""
    items = HasMany[EmbeddedItem](EmbeddedItem, via=Embedded(key="name"))


# -- the matrix -----------------------------------------------------------------------------------


class Case:
    """One declaration of "a parent has items", and what each call costs with it."""

    # A plain class: as attrs fields typed Relationship, type checkers would read the attribute
    # through the descriptor protocol (and see a RelationLoader).
    def __init__(
        self,
        parent_cls: type[Any],
        item_cls: type[Any],
        rel: HasManyRelation[Any],
        costs: Mapping[str, Sequence[str]],
    ) -> None:
        self.parent_cls = parent_cls
        self.item_cls = item_cls
        self.rel = rel
        self.costs = costs

    def parent(self, parent_id: str) -> Any:
        return self.parent_cls(parent_id=parent_id, title=f"parent {parent_id}")

    def item(self, parent_id: str, name: str, qty: int) -> Any:
        return self.item_cls(parent_id=parent_id, name=name, qty=qty)

    def items_of(self, parent: object) -> RelationLoader[Any, Any]:
        loader: RelationLoader[Any, Any] = getattr(parent, self.rel.name)
        return loader


def collection_costs(*, page: Sequence[str]) -> dict[str, Sequence[str]]:
    return {"add": ["PutItem"], "load": ["Query"], "page": page, "remove": ["DeleteItem"]}


def partition() -> Case:
    return Case(
        PartitionParent,
        PartitionItem,
        PartitionParent.items,
        collection_costs(page=["Query"]),
    )


def index() -> Case:
    return Case(
        IndexParent,
        IndexItem,
        IndexParent.items,
        collection_costs(page=["Query"]),
    )


def embedded() -> Case:
    # The parent's GetItem brings the items, so pages of a loaded parent cost nothing.
    costs = {"add": ["UpdateItem"], "load": ["GetItem"], "page": [], "remove": ["UpdateItem"]}
    return Case(
        EmbeddedParent,
        EmbeddedItem,
        EmbeddedParent.items,
        costs,
    )


@pytest.fixture(
    params=[
        pytest.param(partition, id="Partition"),
        pytest.param(index, id="Index"),
        pytest.param(embedded, id="Embedded"),
    ]
)
def case(request: pytest.FixtureRequest) -> Case:
    factory: Callable[[], Case] = request.param
    return factory()


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def test_the_same_calls_work_for_every_strategy(case: Case, db: Database) -> None:
    parent = await db.put(case.parent("p1"))
    neighbour = await db.put(case.parent("p2"))
    items = [
        case.item("p1", "apple", 3),
        case.item("p1", "banana", 5),
        case.item("p1", "cherry", 7),
    ]

    # db.add: one write per item, the item returned as stored.
    for item in items:
        with count_requests(db) as log:
            assert await db.add(parent, case.rel, item) == item
        assert log.operations == case.costs["add"]
    await db.add(neighbour, case.rel, case.item("p2", "apple", 1))

    # db.get(..., load=[rel]): the parent and its items in one request.
    with count_requests(db) as log:
        loaded = await db.get(case.parent_cls, parent_id="p1", load=[case.rel])
    assert log.operations == case.costs["load"]
    assert loaded == case.parent("p1")
    assert case.items_of(loaded).loaded == items

    # async for: every item once, nothing sent (all were loaded).
    with count_requests(db) as log:
        seen = [item async for item in case.items_of(loaded)]
    assert seen == items
    assert len(log) == 0

    # .page(limit=2), then the next page by cursor: every item exactly once.
    with count_requests(db) as log:
        first = await case.items_of(loaded).page(limit=2)
    assert log.operations == case.costs["page"]
    assert first.items == items[:2]
    assert first.cursor is not None
    with count_requests(db) as log:
        second = await case.items_of(loaded).page(limit=2, cursor=first.cursor)
    assert log.operations == case.costs["page"]
    assert second.items == items[2:]
    assert second.cursor is None

    # .all()
    assert await case.items_of(loaded).all() == items

    # db.remove: one write; the loaded items and the stored ones both lose it.
    with count_requests(db) as log:
        await db.remove(loaded, case.rel, items[1])
    assert log.operations == case.costs["remove"]
    assert case.items_of(loaded).loaded == [items[0], items[2]]
    again = await db.get(case.parent_cls, parent_id="p1", load=[case.rel])
    assert case.items_of(again).loaded == [items[0], items[2]]

    # The neighbour's items were never touched.
    other = await db.get(case.parent_cls, parent_id="p2", load=[case.rel])
    assert case.items_of(other).loaded == [case.item("p2", "apple", 1)]


async def test_pages_of_a_parent_read_without_load_for_every_strategy(
    case: Case, db: Database
) -> None:
    parent = await db.put(case.parent("p1"))
    items = [case.item("p1", f"item{i}", i) for i in range(5)]
    for item in items:
        await db.add(parent, case.rel, item)

    fresh = await db.get(case.parent_cls, parent_id="p1")
    seen: list[Any] = []
    cursor: str | None = None
    while True:
        page = await case.items_of(fresh).page(limit=2, cursor=cursor)
        assert len(page.items) <= 2
        seen += page.items
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == items
    assert [item async for item in case.items_of(fresh)] == items
    assert await case.items_of(fresh).all() == items


async def test_a_limited_load_then_the_rest_for_every_strategy(case: Case, db: Database) -> None:
    parent = await db.put(case.parent("p1"))
    items = [case.item("p1", f"item{i}", i) for i in range(3)]
    for item in items:
        await db.add(parent, case.rel, item)

    with count_requests(db) as log:
        loaded = await db.get(case.parent_cls, parent_id="p1", load=[case.rel.limit(2)])
    assert log.operations == case.costs["load"]
    assert case.items_of(loaded).loaded == items[:2]
    assert [item async for item in case.items_of(loaded)] == items
    assert await case.items_of(loaded).all() == items
