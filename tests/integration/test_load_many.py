"""``db.load(parents, Parent.children)``: one Query per parent, run concurrently and bounded.

Concurrency is measured, not assumed: a request is *in flight* from the moment it is sent until
its children are decoded. Each box records its shelf when it is built, so at every send the
number of shelves sent for but not yet answered is known.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import Database, HasMany, Partition, RequestEvent, Table
from dynorm.io.database import DEFAULT_MAX_CONCURRENCY
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("rel-load-many", pk="pk", sk="sk")


@table.model(pk="SHELF#{shelf_id}", sk="#SHELF#{shelf_id}")
@attrs.define
class Shelf:
    shelf_id: str
    boxes = HasMany["Box"]("Box", via=Partition())


@table.model(pk="SHELF#{shelf_id}", sk="BOX#{box_id}")
@attrs.define
class Box:
    shelf_id: str
    box_id: str


PARENTS = 50
BOXES_PER_SHELF = 5


def shelf_id(i: int) -> str:
    return f"s{i:02d}"


def boxes_of(shelf: str) -> list[Box]:
    return [Box(shelf, f"b{j}") for j in range(BOXES_PER_SHELF)]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        shelves = [Shelf(shelf_id(i)) for i in range(PARENTS)]
        await database.put_all([*shelves, *(box for s in shelves for box in boxes_of(s.shelf_id))])
        yield database


async def shelves(db: Database) -> list[Shelf]:
    found = await db.get_many(Shelf, [{"shelf_id": shelf_id(i)} for i in range(PARENTS)])
    assert all(s is not None for s in found)
    return [s for s in found if s is not None]


async def test_one_query_per_parent_run_concurrently(db: Database) -> None:
    parents = await shelves(db)
    # Each request's time on the wire, from its event (reported when it completed).
    spans: list[tuple[float, float]] = []

    def on_request(event: RequestEvent) -> None:
        assert event.operation == "Query"
        done = time.perf_counter()
        spans.append((done - event.latency, done))

    unsubscribe = db.on_request(on_request)
    try:
        with count_requests(db) as log:
            await db.load(parents, Shelf.boxes)
    finally:
        unsubscribe()

    assert log.operations == ["Query"] * PARENTS
    most = max(sum(start <= at < end for start, end in spans) for at, _ in spans)
    # Sequential loading would never have two requests out at once.
    assert most > 1
    # ... and the Database bounds how many are (max_concurrency).
    assert most <= DEFAULT_MAX_CONCURRENCY
    for parent in parents:
        assert parent.boxes.loaded == boxes_of(parent.shelf_id)


async def test_load_then_iterating_sends_nothing_more(db: Database) -> None:
    parents = await shelves(db)
    await db.load(parents, Shelf.boxes)
    with count_requests(db) as log:
        for parent in parents:
            assert await parent.boxes.all() == boxes_of(parent.shelf_id)
    assert len(log) == 0


async def test_a_limit_per_parent_then_all_continues(db: Database) -> None:
    parents = await shelves(db)
    with count_requests(db) as log:
        await db.load(parents, Shelf.boxes.limit(2))
    assert log.operations == ["Query"] * PARENTS
    for parent in parents:
        assert parent.boxes.loaded == boxes_of(parent.shelf_id)[:2]

    first, second = parents[0], parents[1]
    with count_requests(db) as log:
        seen = [box async for box in first.boxes]
    assert seen == boxes_of(first.shelf_id)
    assert log.operations == ["Query"]
    with count_requests(db) as log:
        page = await second.boxes.page(limit=10)
    assert page.items == boxes_of(second.shelf_id)
    assert log.operations == ["Query"]


async def test_parents_without_children_load_empty(db: Database) -> None:
    empty = [Shelf("empty-1"), Shelf("empty-2")]
    await db.put_all(empty)
    with count_requests(db) as log:
        await db.load(empty, Shelf.boxes)
    assert log.operations == ["Query", "Query"]
    with count_requests(db) as log:
        assert [await s.boxes.all() for s in empty] == [[], []]
        assert empty[0].boxes.loaded == []
    assert len(log) == 0


async def test_load_takes_objects_of_one_model(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(TypeError, match="one model"):
        await db.load([Shelf("s00"), Box("s00", "b0")], Shelf.boxes)  # type: ignore[misc]
    assert len(log) == 0
