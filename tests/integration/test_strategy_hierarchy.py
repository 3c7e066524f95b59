"""Hierarchical sort keys (seed 003 §11.5): locations keyed ``<state>#<city>#<zip>``.

Every level of the hierarchy is one Query: the whole country, a state, a city, one zip code.
The prefix always ends at a component boundary, so ``SEATTLE`` never matches ``SEATTLEHEIGHTS``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import Database, Table
from dynorm.testing import Connect, count_requests

from .raw import raw_collection, strings

pytestmark = pytest.mark.integration

table = Table("rel-hierarchy", pk="pk", sk="sk")


@table.model(pk="{country}", sk="{state}#{city}#{zip}")
@attrs.define
class Location:
    country: str
    state: str
    city: str
    zip: str
    name: str = ""


@table.model(pk="{country}", sk="{state}#STATE")
@attrs.define
class State:
    """Another entity type in the same partition: never returned as a Location."""

    country: str
    state: str
    capital: str


SEATTLE = [Location("USA", "WA", "SEATTLE", "98101"), Location("USA", "WA", "SEATTLE", "98109")]
HEIGHTS = Location("USA", "WA", "SEATTLEHEIGHTS", "98000")
SPOKANE = Location("USA", "WA", "SPOKANE", "99201")
WA = [*SEATTLE, HEIGHTS, SPOKANE]
NY = [Location("USA", "NY", "NEW YORK", "10001")]
# A state whose name starts like another one: "WA" must not match "WAX".
WAX = [Location("USA", "WAX", "SEATTLE", "00001")]
CANADA = [Location("CAN", "BC", "VANCOUVER", "V5K")]
STATES = [State("USA", "WA", "OLYMPIA"), State("USA", "NY", "ALBANY")]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await database.put_all([*WA, *NY, *WAX, *CANADA, *STATES])
        yield database


def key(location: Location) -> tuple[str, str, str]:
    return (location.state, location.city, location.zip)


async def test_stored_sort_keys_are_the_hierarchy(db: Database) -> None:
    items = await raw_collection(db, "pk", "USA")
    assert [strings(i, "sk")[0] for i in items] == [
        "NY#NEW YORK#10001",
        "NY#STATE",
        "WA#SEATTLE#98101",
        "WA#SEATTLE#98109",
        "WA#SEATTLEHEIGHTS#98000",
        "WA#SPOKANE#99201",
        "WA#STATE",
        "WAX#SEATTLE#00001",
    ]


async def test_a_country_is_one_query(db: Database) -> None:
    with count_requests(db) as log:
        found = await db.query(Location, country="USA").all()
    assert log.operations == ["Query"]
    assert sorted(map(key, found)) == sorted(map(key, [*WA, *NY, *WAX]))
    assert all(type(f) is Location for f in found)


async def test_a_state_is_one_query_and_stops_at_the_boundary(db: Database) -> None:
    with count_requests(db) as log:
        found = await db.query(Location, country="USA", state="WA").all()
    assert log.operations == ["Query"]
    assert found == WA  # not WAX, not the WA state item
    (request,) = db.explain.query(Location, country="USA", state="WA")
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "WA#"}


async def test_a_city_is_one_query_and_never_matches_a_longer_name(db: Database) -> None:
    with count_requests(db) as log:
        found = await db.query(Location, country="USA", state="WA", city="SEATTLE").all()
    assert log.operations == ["Query"]
    assert found == SEATTLE
    assert HEIGHTS not in found
    (request,) = db.explain.query(Location, country="USA", state="WA", city="SEATTLE")
    assert "begins_with" in request.params["KeyConditionExpression"]
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "WA#SEATTLE#"}

    heights = await db.query(Location, country="USA", state="WA", city="SEATTLEHEIGHTS").all()
    assert heights == [HEIGHTS]


async def test_one_zip_code_is_one_query_with_an_equality(db: Database) -> None:
    with count_requests(db) as log:
        found = await db.query(
            Location, country="USA", state="WA", city="SEATTLE", zip="98101"
        ).all()
    assert log.operations == ["Query"]
    assert found == [SEATTLE[0]]
    (request,) = db.explain.query(Location, country="USA", state="WA", city="SEATTLE", zip="98101")
    assert "begins_with" not in request.params["KeyConditionExpression"]


async def test_another_country_is_another_partition(db: Database) -> None:
    found = await db.query(Location, country="CAN").all()
    assert found == CANADA
    assert await db.query(Location, country="MEX").all() == []


async def test_levels_page_by_children(db: Database) -> None:
    pages: list[list[Location]] = []
    cursor: str | None = None
    with count_requests(db) as log:
        while True:
            page = await db.query(Location, country="USA", state="WA").page(limit=2, cursor=cursor)
            pages.append(page.items)
            cursor = page.cursor
            if cursor is None:
                break
    # Every page is full but (maybe) the last; the WA state item shares the range and may
    # cost a last, empty page, never a child's place.
    assert [location for page in pages for location in page] == WA
    assert pages[:2] == [WA[:2], WA[2:]]
    assert all(page == [] for page in pages[2:])
    assert log.operations == ["Query"] * len(pages)


async def test_a_value_holding_the_delimiter_stays_in_its_level(db: Database) -> None:
    tricky = Location("USA", "WA", "SEATTLE#98101", "1")
    await db.put(tricky)
    assert await db.query(Location, country="USA", state="WA", city="SEATTLE").all() == SEATTLE
    assert await db.query(Location, country="USA", state="WA", city="SEATTLE#98101").all() == [
        tricky
    ]
