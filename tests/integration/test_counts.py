"""``.count()`` counts exactly the items ``.all()`` returns: queries, scans, relationships.

On a table with a type attribute, items of another entity (one this program does not declare,
written by another service) and items whose keys fit no template may sit in a read's key
range; ``.all()`` drops them, and so must ``.count()``, with a filter or without.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import Attr, Database, HasMany, Partition, Request, Scan, Table
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

market = Table("counts", pk="PK", sk="SK", type_attribute="ItemType")


@market.model(pk="SELLER#{seller}", sk="PROFILE", entity="seller")
@attrs.define
class Seller:
    seller: str
    listings = HasMany["Listing"]("Listing", via=Partition())


@market.model(pk="SELLER#{seller}", sk="LISTING#{listing_id}", entity="listing")
@attrs.define
class Listing:
    seller: str
    listing_id: str
    price: int = 0


single = Table("counts-single", pk="PK", sk="SK", type_attribute="ItemType")


@single.model(pk="L#{listing_id}", sk="L#{listing_id}", entity="listing")
@attrs.define
class Lone:
    listing_id: str
    price: int = 0


def _foreign(pk: str, sk: str, item_type: str | None, price: int) -> dict[str, Any]:
    item: dict[str, Any] = {"PK": {"S": pk}, "SK": {"S": sk}, "price": {"N": str(price)}}
    if item_type is not None:
        item["ItemType"] = {"S": item_type}
    return item


async def _put_raw(db: Database, items: list[dict[str, Any]]) -> None:
    for item in items:
        await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(market) as database:
        await database.put_all(
            [Seller("s1"), Seller("s2"), *(Listing("s1", f"l{i}", price=i) for i in range(4))]
        )
        await database.put(Listing("s2", "l9", price=9))
        await _put_raw(
            database,
            [
                # Another service's entity in s1's listing range, as the issue found it.
                _foreign("SELLER#s1", "LISTING#promo", "promotion", 2),
                # Written without the type attribute, with keys that fit no template.
                _foreign("SELLER#s1", "LISTING#a#b", None, 3),
            ],
        )
        yield database


async def test_a_query_counts_what_all_returns(db: Database) -> None:
    queries = [
        db.query(Listing, seller="s1"),
        db.query(Listing, seller="s1").filter(Attr("price") >= 2),
        (await db.get(Seller, seller="s1")).listings.query(),
        (await db.get(Seller, seller="s1")).listings.query().filter(Attr("price") < 3),
    ]
    for query in queries:
        items = await query.all()
        with count_requests(db) as log:
            assert await query.count() == len(items)
        assert log.operations == ["Query"]
    assert len(await queries[0].all()) == 4
    assert len(await queries[1].all()) == 2


async def test_a_scan_counts_what_all_returns(db: Database) -> None:
    scans: list[Scan[Any]] = [
        db.scan(Listing),
        db.scan(Listing, segments=2),
        db.scan(Listing).filter(Attr("price") >= 2),
        db.scan(Seller),
        db.scan(None),
    ]
    for scan in scans:
        assert await scan.count() == len(await scan.all())
    assert await db.scan(Listing).count() == 5


async def test_one_model_tables_count_only_their_entity(dynorm_connect: Connect) -> None:
    # With one model declared there is no other model's template to warn of the promotion.
    async with dynorm_connect(single) as db:
        await db.put_all([Lone("1"), Lone("2", price=5)])
        await _put_raw(db, [_foreign("L#3", "L#3", "promotion", 5)])
        for read in (
            db.scan(Lone),
            db.scan(Lone).filter(Attr("price") == 5),
            db.query(Lone, listing_id="3"),
        ):
            assert await read.count() == len(await read.all())
        assert await db.scan(Lone).count() == 2
