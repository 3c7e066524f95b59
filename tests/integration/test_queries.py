"""Key conditions, filters, counts and projections on queries and relationship reads."""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    Database,
    ExpressionError,
    HasMany,
    KeyTemplateError,
    Partition,
    Table,
    begins_with,
    between,
    ge,
    gt,
    le,
    lt,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

# GSI1 is keyed on the plain attributes site and time (templates that are exactly "{field}").
sensors = Table("Readings", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="site", sk="time")])


@sensors.model(pk="SENSOR#{sensor_id}", sk="META")
@attrs.define
class Sensor:
    sensor_id: str
    site: str = "north"
    readings = HasMany["Reading"]("Reading", via=Partition())


@sensors.model(pk="SENSOR#{sensor_id}", sk="R#{status}#{time}", GSI1=("{site}", "{time}"))
@attrs.define
class Reading:
    sensor_id: str
    status: str
    time: str
    site: str
    value: int = 0


@sensors.model(pk="SENSOR#{sensor_id}", sk="R#{status}#{time}#FLAG")
@attrs.define
class Flag:
    """Sorts among readings (a longer key under the same prefix): counts must skip it."""

    sensor_id: str
    status: str
    time: str


@sensors.model(pk="SENSOR#{sensor_id}", sk="N#{n:04d}")
@attrs.define
class Note:
    sensor_id: str
    n: int
    text: str = ""


@attrs.define
class ReadingValue:
    time: str
    value: int


def reading(i: int, status: str = "OK", sensor: str = "s1", site: str = "north") -> Reading:
    return Reading(sensor, status, f"2026-04-{i:02d}T00", site, value=i)


OK_READINGS = [reading(i) for i in range(1, 21)]
ALARMS = [reading(i, "ALARM") for i in (3, 7, 27)]
FLAG = Flag("s1", "ALARM", "2026-04-07T00")
NOTES = [Note("s1", n, f"note {n}") for n in (1, 2, 10, 200)]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(sensors) as database:
        await database.put_all(
            [Sensor("s1"), *OK_READINGS, *ALARMS, *NOTES, reading(5, sensor="s2"), FLAG]
        )
        yield database


async def times(query: object) -> list[str]:
    return [r.time async for r in query]  # type: ignore[attr-defined]


async def test_range_markers_on_the_last_component(db: Database) -> None:
    q = db.query(Reading, sensor_id="s1", status="OK", time=between("2026-04-05", "2026-04-07T00"))
    with count_requests(db) as log:
        found = await q.all()
    assert [r.value for r in found] == [5, 6, 7]
    assert log.operations == ["Query"]
    assert [
        r.value
        for r in await db.query(
            Reading, sensor_id="s1", status="OK", time=gt("2026-04-18T00")
        ).all()
    ] == [19, 20]
    assert [
        r.value
        for r in await db.query(
            Reading, sensor_id="s1", status="OK", time=ge("2026-04-19T00")
        ).all()
    ] == [19, 20]
    assert [
        r.value
        for r in await db.query(
            Reading, sensor_id="s1", status="OK", time=lt("2026-04-03T00")
        ).all()
    ] == [1, 2]
    assert [
        r.value
        for r in await db.query(
            Reading, sensor_id="s1", status="OK", time=le("2026-04-02T00")
        ).all()
    ] == [1, 2]
    # gt/lt stay inside the status's prefix: no ALARM reading, no Note, no Sensor
    assert [
        r.status
        for r in await db.query(
            Reading, sensor_id="s1", status="ALARM", time=gt("2026-04-03T00")
        ).all()
    ] == ["ALARM", "ALARM"]


async def test_begins_with_a_partial_component(db: Database) -> None:
    found = await db.query(
        Reading, sensor_id="s1", status="OK", time=begins_with("2026-04-1")
    ).all()
    assert [r.value for r in found] == list(range(10, 20))


async def test_format_spec_applies_to_bounds(db: Database) -> None:
    found = await db.query(Note, sensor_id="s1", n=between(2, 100)).all()
    assert [n.n for n in found] == [2, 10]
    q = db.query(Note, sensor_id="s1", n=gt(2))
    assert q.explain()[0].params["ExpressionAttributeValues"][":sk"] == {"S": "N#0002"}
    assert [n.n for n in await q.all()] == [10, 200]


async def test_range_on_an_index(db: Database) -> None:
    q = db.query(Reading, index="GSI1", site="north", time=gt("2026-04-19T00"))
    assert q.explain()[0].params["KeyConditionExpression"] == "#pk = :pk AND #sk > :sk"
    assert sorted(r.value for r in await q.all()) == [20, 27]


async def test_bad_markers_are_refused_before_sending(db: Database) -> None:
    with count_requests(db) as log:
        with pytest.raises(KeyTemplateError, match="last sort key component given"):
            db.query(Reading, sensor_id="s1", status=gt("A"), time="x")
        with pytest.raises(KeyTemplateError, match="give sensor_id"):
            db.query(Reading, status=gt("A"))
        with pytest.raises(KeyTemplateError, match="partition key"):
            db.query(Reading, sensor_id=gt("s"))
        with pytest.raises(ExpressionError, match="a str"):
            begins_with(5)  # type: ignore[arg-type]
        with pytest.raises(ExpressionError, match="swap"):
            db.query(Note, sensor_id="s1", n=between(5, 1))
        with pytest.raises(ExpressionError, match="key attribute 'site'"):
            db.query(Reading, index="GSI1", site="north").filter(Attr("site") == "north")
    assert log.operations == []


async def test_filter_limit_counts_matches(db: Database) -> None:
    q = db.query(Reading, sensor_id="s1", status="OK").filter(Attr("value") >= 15)
    assert "FilterExpression" in q.explain()[0].params
    with count_requests(db) as log:
        page = await q.page(limit=3)
    assert [r.value for r in page] == [15, 16, 17]
    assert page.scanned > 3
    assert page.cursor is not None
    assert len(log.operations) >= 2  # the first request's Limit is spent on non-matches
    rest = await q.page(limit=10, cursor=page.cursor)
    assert [r.value for r in rest] == [18, 19, 20]
    assert rest.cursor is None


async def test_filter_on_a_whole_partition_and_combined(db: Database) -> None:
    q = (
        db.query(Reading, sensor_id="s1")
        .filter(Attr("status") == "ALARM")
        .filter(Attr("value") > 5)
    )
    assert [r.value for r in await q.all()] == [7, 27]


async def test_count(db: Database) -> None:
    notes = db.query(Note, sensor_id="s1")
    # no other model's keys start with N#: DynamoDB counts (Select=COUNT)
    assert notes.explain(count=True)[0].params["Select"] == "COUNT"
    with count_requests(db) as log:
        assert await notes.count() == 4
    assert log.operations == ["Query"]
    assert await notes.filter(Attr("text") == "note 10").count() == 1
    # a Flag's key can sort among readings: keys are read and only readings counted
    alarms = db.query(Reading, sensor_id="s1", status="ALARM")
    (request,) = alarms.explain(count=True)
    assert "Select" not in request.params
    assert "ProjectionExpression" in request.params
    with count_requests(db) as log:
        assert await alarms.count() == 3
    assert log.operations == ["Query"]
    assert len(await alarms.all()) == 3
    assert await db.query(Reading, sensor_id="s1").count() == 23
    ok = db.query(Reading, sensor_id="s1", status="OK")
    assert await ok.filter(Attr("value") > 10).count() == 10
    # gt inside a prefix lets the bound through: it is not counted
    assert (
        await db.query(Reading, sensor_id="s1", status="OK", time=gt("2026-04-18T00")).count() == 2
    )


async def test_page_reports_capacity_when_asked(db: Database) -> None:
    q = db.query(Reading, sensor_id="s1", status="OK")
    plain = await q.page(limit=5)
    assert plain.consumed is None
    assert plain.scanned == 6
    measured = await q.with_capacity().page(limit=5)
    assert q.with_capacity().explain()[0].params["ReturnConsumedCapacity"] == "TOTAL"
    assert measured.consumed is not None
    assert measured.consumed > 0


async def test_projection_reads_only_the_view(db: Database) -> None:
    q = db.query(Reading, sensor_id="s1", status="ALARM").project(ReadingValue)
    params = q.explain()[0].params
    projected = {
        params["ExpressionAttributeNames"][p] for p in params["ProjectionExpression"].split(", ")
    }
    assert projected == {"pk", "sk", "time", "value"}
    found = await q.all()
    assert found == [
        ReadingValue("2026-04-03T00", 3),
        ReadingValue("2026-04-07T00", 7),
        ReadingValue("2026-04-27T00", 27),
    ]
    page = await q.page(limit=2)
    assert len(page) == 2
    assert page.cursor is not None
    assert [v.value for v in (await q.page(limit=2, cursor=page.cursor))] == [27]


async def test_relationship_query(db: Database) -> None:
    sensor = await db.get(Sensor, sensor_id="s1")
    q = sensor.readings.query(status="ALARM", time=ge("2026-04-07"))
    with count_requests(db) as log:
        assert [r.value for r in await q.all()] == [7, 27]
    assert log.operations == ["Query"]
    assert await sensor.readings.query(status="OK").filter(Attr("value") < 3).count() == 2
