"""Ranges on an inner sort key component: the components before it given, those after it free.

``sk="REVIEW#{year}#{month:02d}#{review_id}"``: "reviews of March to May", "reviews since
2023", on the table, on an index and on a relationship's children, each one Query whose bounds
end at component boundaries.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import GSI, Database, HasMany, Partition, Table, begins_with, between, ge, gt, le, lt
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

market = Table("Market", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="gsi1pk", sk="gsi1sk")])


@market.model(pk="LISTING#{listing_id}", sk="LISTING#{listing_id}")
@attrs.define
class Listing:
    listing_id: str
    reviews = HasMany["Review"]("Review", via=Partition())


@market.model(
    pk="LISTING#{listing_id}",
    sk="REVIEW#{year}#{month:02d}#{review_id}",
    GSI1=("AUTHOR#{author}", "{year}#{month:02d}#{review_id}"),
)
@attrs.define
class Review:
    listing_id: str
    year: int
    month: int
    review_id: str
    author: str = "ann"


@market.model(pk="LISTING#{listing_id}", sk="REVIEWX#{n}")
@attrs.define
class Stray:
    """Opens with the reviews' literal: a range on reviews must never reach it."""

    listing_id: str
    n: str


@market.model(pk="LISTING#{listing_id}", sk="VISIT#{day}#{visit_id}")
@attrs.define
class Visit:
    """An unpadded number: day 1's block must not open day 10's or 11's."""

    listing_id: str
    day: int
    visit_id: str


# Months 1..12 of 2025 (zero-padded in the key), a few of 2022-2024, and ids holding the
# delimiter and the escape character (escaped in the key, so they cannot cross a boundary).
REVIEWS = [
    *(Review("l1", 2025, m, f"r{m}") for m in range(1, 13)),
    Review("l1", 2022, 12, "old"),
    Review("l1", 2023, 6, "mid#year"),
    Review("l1", 2024, 1, "100%"),
    Review("l2", 2025, 4, "other-listing"),
    Review("l1", 2025, 4, "bob-1", author="bob"),
]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(market) as database:
        await database.put_all([Listing("l1"), *REVIEWS, Stray("l1", "z"), Stray("l1", "2026")])
        await database.put_all([Visit("l1", d, f"v{d}") for d in (1, 2, 10, 11, 21)])
        yield database


def ids(found: list[Review]) -> list[str]:
    return [r.review_id for r in found]


async def test_months_of_a_year_in_one_query(db: Database) -> None:
    q = db.query(Review, listing_id="l1", year=2025, month=between(3, 5))
    assert q.explain()[0].params["ExpressionAttributeValues"][":sk2"] == {"S": "REVIEW#2025#05$"}
    with count_requests(db) as log:
        found = await q.all()
    assert log.operations == ["Query"]
    assert ids(found) == ["r3", "bob-1", "r4", "r5"]  # in sort key order


async def test_month_1_never_matches_month_10(db: Database) -> None:
    # "REVIEW#2025#1" would prefix "REVIEW#2025#10..." with an unpadded, unbounded template
    found = await db.query(Review, listing_id="l1", year=2025, month=between(1, 1)).all()
    assert ids(found) == ["r1"]
    found = await db.query(Review, listing_id="l1", year=2025, month=ge(10)).all()
    assert ids(found) == ["r10", "r11", "r12"]
    visits = await db.query(Visit, listing_id="l1", day=between(1, 1)).all()
    assert [v.visit_id for v in visits] == ["v1"]
    # unpadded numbers compare as key text: 10 and 11 sort before 2 (docs/queries.md says so)
    visits = await db.query(Visit, listing_id="l1", day=le(1)).all()
    assert [v.visit_id for v in visits] == ["v1"]
    visits = await db.query(Visit, listing_id="l1", day=gt(1)).all()
    assert [v.visit_id for v in visits] == ["v10", "v11", "v2", "v21"]


async def test_every_marker_on_the_year(db: Database) -> None:
    async def years(marker: object) -> list[tuple[int, int]]:
        found = await db.query(Review, listing_id="l1", year=marker).all()  # type: ignore[arg-type]
        return sorted({(r.year, r.month) for r in found})

    assert await years(gt(2023)) == [(2024, 1)] + [(2025, m) for m in range(1, 13)]
    assert await years(ge(2024)) == [(2024, 1)] + [(2025, m) for m in range(1, 13)]
    assert await years(lt(2024)) == [(2022, 12), (2023, 6)]
    assert await years(le(2023)) == [(2022, 12), (2023, 6)]
    assert await years(between(2023, 2024)) == [(2023, 6), (2024, 1)]
    # no Stray ("REVIEWX#...") and nothing of listing l2 came back
    assert await years(gt(0)) == sorted(
        {(r.year, r.month) for r in REVIEWS if r.listing_id == "l1"}
    )


async def test_escaped_values_stay_inside_their_component(db: Database) -> None:
    found = await db.query(Review, listing_id="l1", year=2023, month=between(6, 6)).all()
    assert ids(found) == ["mid#year"]
    found = await db.query(Review, listing_id="l1", year=2024, month=le(1)).all()
    assert ids(found) == ["100%"]


async def test_on_an_index(db: Database) -> None:
    q = db.query(Review, index="GSI1", author="ann", year=2025, month=between(11, 12))
    assert ids(await q.all()) == ["r11", "r12"]
    q = db.query(Review, index="GSI1", author="bob", year=gt(2024))
    assert ids(await q.all()) == ["bob-1"]


async def test_on_a_relationship(db: Database) -> None:
    listing = await db.get(Listing, listing_id="l1")
    with count_requests(db) as log:
        found = await listing.reviews.query(year=2025, month=between(2, 3)).all()
    assert log.operations == ["Query"]
    assert ids(found) == ["r2", "r3"]
    assert ids(await listing.reviews.query(year=lt(2023)).all()) == ["old"]
    assert ids(await listing.reviews.query(year=2025, month=begins_with("1")).all()) == [
        "r10",
        "r11",
        "r12",
    ]


async def test_pages_and_cursors_across_a_range(db: Database) -> None:
    q = db.query(Review, listing_id="l1", year=ge(2023))
    seen: list[str] = []
    cursor = None
    while True:
        page = await q.page(limit=4, cursor=cursor)
        seen += ids(page.items)
        cursor = page.cursor
        if cursor is None:
            break
    assert seen == ids(await q.all())
    assert len(seen) == 15
