"""db.scan: parallel segments, mixed models, filters, pages, counts, projections."""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import Attr, CursorError, Database, DefinitionError, LimitExceededError, Request
from dynorm.testing import Connect, count_requests

from .test_queries import FLAG, NOTES, Note, Reading, Sensor, reading, sensors

pytestmark = pytest.mark.integration

READINGS = [reading(i, sensor=f"s{i % 3}") for i in range(1, 31)]


@attrs.define
class NoteText:
    text: str


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(sensors) as database:
        await database.put_all([Sensor("s1"), *READINGS, *NOTES, FLAG])
        # an item of no declared model, written by another tool
        stranger = {"pk": {"S": "OTHER"}, "sk": {"S": "?"}}
        await database.send(
            Request("PutItem", {"TableName": database.table_name, "Item": stranger})
        )
        yield database


async def test_scan_of_one_model_is_typed_and_complete(db: Database) -> None:
    with count_requests(db) as log:
        found = await db.scan(Reading).all()
    assert log.operations == ["Scan"]
    assert sorted(r.value for r in found) == list(range(1, 31))
    assert all(isinstance(r, Reading) for r in found)


async def test_parallel_segments_read_every_item_once(db: Database) -> None:
    scan = db.scan(Reading, segments=4)
    requests = scan.explain()
    assert [r.params["Segment"] for r in requests] == [0, 1, 2, 3]
    assert {r.params["TotalSegments"] for r in requests} == {4}
    with count_requests(db) as log:
        values = [r.value async for r in scan]
    assert sorted(values) == list(range(1, 31))
    assert log.operations == ["Scan"] * 4


async def test_lazy_iteration_stops_early(db: Database) -> None:
    with count_requests(db) as log:
        async for _ in db.scan(Reading, segments=2):
            break
    assert len(log.operations) <= 2


async def test_scan_none_decodes_every_model_and_skips_strangers(db: Database) -> None:
    found = await db.scan(None, segments=3).all()
    kinds = sorted({type(o).__name__ for o in found})
    assert kinds == ["Flag", "Note", "Reading", "Sensor"]
    assert len(found) == 1 + 30 + len(NOTES) + 1
    assert await db.scan(None).count() == len(found)


async def test_filter_and_pages_with_a_cursor(db: Database) -> None:
    scan = db.scan(Reading).filter(Attr("value") > 20)
    assert "FilterExpression" in scan.explain()[0].params
    first = await scan.page(limit=4)
    assert len(first) == 4
    assert first.cursor is not None
    assert first.scanned >= 4
    rest = await scan.page(limit=100, cursor=first.cursor)
    assert rest.cursor is None
    assert sorted(r.value for r in [*first, *rest]) == list(range(21, 31))
    with pytest.raises(CursorError):
        await db.scan(Note).page(limit=1, cursor=first.cursor)


async def test_filter_on_scan_none_names_attributes(db: Database) -> None:
    found = await db.scan(None).filter(Attr("text") == "note 10").all()
    assert found == [Note("s1", 10, "note 10")]


async def test_count(db: Database) -> None:
    scan = db.scan(Reading)
    # other models share the table: keys are read and readings counted
    assert "Select" not in scan.explain(count=True)[0].params
    with count_requests(db) as log:
        assert await scan.count() == 30
    assert log.operations == ["Scan"]
    assert await db.scan(Reading, segments=3).filter(Attr("value") <= 10).count() == 10


async def test_index_scan(db: Database) -> None:
    found = await db.scan(Reading, index="GSI1").all()
    assert len(found) == 30


async def test_projection(db: Database) -> None:
    found = await db.scan(Note).project(NoteText).all()
    assert sorted(n.text for n in found) == sorted(n.text for n in NOTES)
    with pytest.raises(DefinitionError):
        db.scan(None).project(NoteText)


async def test_bad_arguments(db: Database) -> None:
    with pytest.raises(LimitExceededError):
        db.scan(Reading, segments=0)
    with pytest.raises(DefinitionError, match="segment"):
        await db.scan(Reading, segments=2).page(limit=1)
    one = await db.scan(Reading, segments=2).segment(1).page()
    assert all(isinstance(r, Reading) for r in one)
