"""Deleting a whole tree: ``db.delete(obj, cascade=True)`` against the server.

A marketplace (``tests/cascade_models.py``): sellers have listings (Partition), listings have
reviews (Partition) and favourites found through GSI1 (the buyers' side of a many-to-many link),
and photos Embedded. Deleting one seller removes its tree and every favourite pointing into it,
while the sibling seller's tree and the buyers stay; what is stored is checked item by item with a
raw Scan. The request counts are the ones docs/integrity.md states.
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import (
    CascadeReport,
    CodecError,
    ConditionFailedError,
    Database,
    DatabaseError,
    FromRead,
    LimitExceededError,
    ThrottledError,
    VersionConflictError,
)
from dynorm.core.expressions import Attr
from dynorm.testing import Connect, count_requests
from tests.cascade_models import (
    Buyer,
    Favourite,
    Group,
    Listing,
    Person,
    Photo,
    Review,
    Seller,
    Shelf,
    Shop,
    market,
    social,
)
from tests.faultproxy import FaultyConnect, Injected

from .raw import raw_put, raw_scan

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]


@pytest.fixture
async def shop(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(market) as database:
        yield database


async def fill(db: Database, listings: int = 2, reviews: int = 2) -> None:
    """Seller s1 with ``listings`` listings, seller s2 with one; buyers favouring both."""
    objs: list[Any] = [Seller("s1", "Ann"), Seller("s2", "Bo"), Buyer("b1"), Buyer("b2")]
    own = [f"l{i}" for i in range(1, listings + 1)]
    for seller, ids in (("s1", own), ("s2", ["x1"])):
        for listing in ids:
            objs.append(Listing(seller, listing, f"title {listing}"))
            objs += [Review(listing, f"{listing}-r{i}") for i in range(reviews)]
    objs += [Favourite("b1", "l1"), Favourite("b2", "l1"), Favourite("b1", "x1")]
    await db.put_all(objs)
    # Embedded children live inside their listing's item.
    await db.add(Listing("s1", "l1"), Listing.photos, Photo("l1.png"))
    await db.add(Listing("s2", "x1"), Listing.photos, Photo("x1.png"))


def keys(items: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(i["pk"]["S"], i["sk"]["S"]) for i in items}


#: What stays when seller s1's tree is deleted: the sibling tree, the buyers, b1's favourite of x1.
SIBLING = {
    ("SELLER#s2", "SELLER#s2"),
    ("SELLER#s2", "LISTING#x1"),
    ("LISTING#x1", "REVIEW#x1-r0"),
    ("LISTING#x1", "REVIEW#x1-r1"),
    ("BUYER#b1", "BUYER#b1"),
    ("BUYER#b2", "BUYER#b2"),
    ("BUYER#b1", "FAV#x1"),
}


async def test_a_three_level_tree_goes_whole_and_the_sibling_tree_stays(shop: Database) -> None:
    await fill(shop)
    before = {(i["pk"]["S"], i["sk"]["S"]): i for i in await raw_scan(shop)}
    with count_requests(shop) as log:
        report = await shop.delete(Seller("s1"), cascade=True)
    assert report == CascadeReport({Seller: 1, Listing: 2, Review: 4, Favourite: 2})
    assert report.total == 9
    after = await raw_scan(shop)
    assert keys(after) == SIBLING
    # Item by item, what stays is exactly what was stored (photos of x1 inside its item).
    for item in after:
        assert item == before[item["pk"]["S"], item["sk"]["S"]]
    (x1,) = [i for i in after if i["sk"]["S"] == "LISTING#x1"]
    assert "x1.png" in str(x1["photos"])
    # docs/integrity.md: one GetItem; one Query per parent per relationship (the seller's
    # listings, then each listing's reviews and favourites); one UpdateItem; one BatchWriteItem
    # per level (25 deletes a request); the root's DeleteItem.
    assert log.operations == [
        "GetItem",
        "Query",
        "Query",
        "Query",
        "Query",
        "Query",
        "UpdateItem",
        "BatchWriteItem",
        "BatchWriteItem",
        "DeleteItem",
    ]
    # A favourite now loads no listing that is gone: b1 keeps only its favourite of x1.
    buyer = await shop.get(Buyer, buyer_id="b1", load=[Buyer.favourites])
    assert buyer.favourites.loaded == [Favourite("b1", "x1")]


async def test_each_level_is_deleted_in_batches_of_25(shop: Database) -> None:
    await fill(shop, listings=30, reviews=1)
    with count_requests(shop) as log:
        report = await shop.delete(Seller, seller_id="s1", cascade=True)
    assert report == CascadeReport({Seller: 1, Listing: 30, Review: 30, Favourite: 2})
    counts = collections.Counter(log.operations)
    # The seller's listings, then two Queries per listing; 32 deletes below, 30 above.
    assert counts == {
        "GetItem": 1,
        "Query": 1 + 30 * 2,
        "UpdateItem": 1,
        "BatchWriteItem": 2 + 2,
        "DeleteItem": 1,
    }
    assert keys(await raw_scan(shop)) == SIBLING - {("LISTING#x1", "REVIEW#x1-r1")}


async def test_a_tree_larger_than_max_items_is_refused_with_nothing_written(
    shop: Database,
) -> None:
    await fill(shop)
    before = await raw_scan(shop)
    with count_requests(shop) as log, pytest.raises(LimitExceededError) as caught:
        await shop.delete(Seller("s1"), cascade=True, max_items=5)
    message = str(caught.value)
    assert "max_items=5" in message
    assert "nothing was deleted" in message
    assert "max_items=None" in message
    assert set(log.operations) <= {"GetItem", "Query"}
    assert await raw_scan(shop) == before
    # The whole tree is nine items: the bound that holds them deletes them.
    report = await shop.delete(Seller("s1"), cascade=True, max_items=9)
    assert report.total == 9


async def test_a_root_whose_condition_fails_keeps_its_whole_tree(shop: Database) -> None:
    await fill(shop)
    before = await raw_scan(shop)
    with count_requests(shop) as log, pytest.raises(ConditionFailedError):
        await shop.delete(Seller("s1"), cascade=True, condition=Attr("name") == "not Ann")
    assert "BatchWriteItem" not in log.operations
    assert "DeleteItem" not in log.operations
    assert await raw_scan(shop) == before
    report = await shop.delete(Seller("s1"), cascade=True, condition=Attr("name") == "Ann")
    assert report.total == 9


async def test_a_stale_versioned_root_keeps_its_whole_tree(shop: Database) -> None:
    stale = await shop.put(Shop("a", "A"))
    await shop.put_all([Shelf("a", n) for n in range(3)])
    fresh = await shop.get(Shop, shop_id="a")
    await shop.put(fresh)  # version 2; `stale` was read with 1
    before = await raw_scan(shop)
    stale.version = 1
    with count_requests(shop) as log, pytest.raises(VersionConflictError) as caught:
        await shop.delete(stale, cascade=True)
    assert (caught.value.expected, caught.value.stored) == (1, 2)
    assert "BatchWriteItem" not in log.operations
    assert await raw_scan(shop) == before
    report = await shop.delete(fresh, cascade=True)
    assert report == CascadeReport({Shop: 1, Shelf: 3})
    assert await raw_scan(shop) == []


async def test_a_root_not_stored_deletes_nothing(shop: Database) -> None:
    await fill(shop)
    with count_requests(shop) as log:
        report = await shop.delete(Seller("nobody"), cascade=True)
    assert report == CascadeReport()
    assert log.operations == ["GetItem", "DeleteItem"]
    assert len(await raw_scan(shop)) == 16


async def test_without_cascade_only_the_item_goes(shop: Database) -> None:
    await fill(shop)
    with count_requests(shop) as log:
        assert await shop.delete(Seller("s1")) is None  # type: ignore[func-returns-value]
    assert log.operations == ["DeleteItem"]
    assert len(await raw_scan(shop)) == 15
    with pytest.raises(TypeError, match="cascade=True"):
        await shop.delete(Seller("s2"), max_items=3)  # type: ignore[call-overload]


async def test_a_cycle_ends_and_each_item_is_deleted_once(dynorm_connect: Connect) -> None:
    async with dynorm_connect(social) as db:
        await db.put_all(
            [
                Person("ann", "g"),
                Person("bob", "g"),
                Person("cy", "g"),
                Group("ann", "g"),
                Person("dee", "h"),
            ]
        )
        with count_requests(db) as log:
            report = await db.delete(Person("ann", "g"), cascade=True)
        assert report == CascadeReport({Person: 3, Group: 1})
        assert keys(await raw_scan(db)) == {("PERSON#dee", "PERSON#dee")}
        # ann's friends (bob, cy, ann herself) and her group, then what they lead to, which is
        # all known already: seven Queries, one batch of three deletes.
        assert collections.Counter(log.operations) == {
            "GetItem": 1,
            "Query": 7,
            "UpdateItem": 1,
            "BatchWriteItem": 1,
            "DeleteItem": 1,
        }


async def test_an_interrupted_cascade_leaves_no_orphan_and_a_rerun_finishes(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(market) as faulty:
        await fill(faulty.direct, listings=5, reviews=2)
        # The deepest level (ten reviews, two favourites) is one batch: the first round deletes
        # about half of it, then five rounds delete nothing and the cascade gives up.
        faulty.proxy.inject("partial_batch", operation="BatchWriteItem")
        faulty.proxy.inject("unprocessed_batch", operation="BatchWriteItem", times=5)
        with pytest.raises(ThrottledError) as caught:
            await faulty.db.delete(Seller("s1"), cascade=True)
        assert len(faulty.proxy.injected) == 6
        # Given up: the mark is taken off the root (one more UpdateItem), and the error says so.
        assert faulty.proxy.requests[-1] == "UpdateItem"
        [note] = [n for n in caught.value.__notes__ if "cascade=True" in n]
        assert note.startswith(
            "delete of Seller pk='SELLER#s1', sk='SELLER#s1' with cascade=True stopped part-way: "
            "0 items under it were deleted (a level in progress may be deleted in part), the "
            "item itself was kept and its mark (dynorm:cascade) was removed."
        )
        assert "run the same delete again to finish" in note
        left = keys(await raw_scan(faulty.direct))
        # The seller and its listings are all there: a level waits for the one below it.
        assert ("SELLER#s1", "SELLER#s1") in left
        listings = {sk.removeprefix("LISTING#") for pk, sk in left if sk.startswith("LISTING#")}
        assert listings == {"l1", "l2", "l3", "l4", "l5", "x1"}
        # Every review or favourite left belongs to a listing still there (reachable from it).
        below = [(pk, sk) for pk, sk in left if sk.startswith(("REVIEW#", "FAV#"))]
        for pk, sk in below:
            listing = pk if sk.startswith("REVIEW#") else sk
            assert listing.split("#")[1] in listings
        survivors = len(below) - 3  # the sibling's two reviews and b1's favourite of x1
        assert 0 < survivors < 12  # some of the deepest level went, some did not
        # The seller is stored as it was, without the cascade's mark.
        assert not marked(await raw_scan(faulty.direct))
        assert await faulty.direct.get(Seller, seller_id="s1") == Seller("s1", "Ann")
        # Running it again finishes the job.
        report = await faulty.db.delete(Seller("s1"), cascade=True)
        assert report == CascadeReport({Seller: 1, Listing: 5, **_below(survivors, left)})
        assert keys(await raw_scan(faulty.direct)) == SIBLING


def marked(items: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """The keys of the items that hold the cascade's mark."""
    return {(i["pk"]["S"], i["sk"]["S"]) for i in items if "dynorm:cascade" in i}


def is_unmark(body: dict[str, Any]) -> bool:
    return body.get("UpdateExpression") == "REMOVE #mark"


async def test_a_mark_that_cannot_be_removed_stays_harmless_and_a_rerun_leaves_none(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(market, max_attempts=2) as faulty:
        await fill(faulty.direct, listings=2, reviews=1)
        faulty.proxy.inject("error_500", operation="BatchWriteItem", times=2)
        faulty.proxy.inject("error_500", operation="UpdateItem", times=2, when=is_unmark)
        with pytest.raises(DatabaseError) as caught:
            await faulty.db.delete(Seller("s1"), cascade=True)
        assert faulty.proxy.injected.count(Injected("UpdateItem", "error_500")) == 2
        [note] = [n for n in caught.value.__notes__ if "cascade=True" in n]
        assert "its mark (dynorm:cascade) stays, as removing it failed too" in note
        assert "reads leave it out" in note
        assert marked(await raw_scan(faulty.direct)) == {("SELLER#s1", "SELLER#s1")}
        # Reads leave the mark out; the cascade run again finishes and leaves no mark behind.
        assert await faulty.direct.get(Seller, seller_id="s1") == Seller("s1", "Ann")
        report = await faulty.db.delete(Seller("s1"), cascade=True)
        assert report == CascadeReport({Seller: 1, Listing: 2, Review: 2, Favourite: 2})
        after = await raw_scan(faulty.direct)
        assert not marked(after)
        assert keys(after) == {k for k in SIBLING if k != ("LISTING#x1", "REVIEW#x1-r1")}


# -- items that do not decode --------------------------------------------------------------------

#: Listing l1 of seller s1 as another tool may have written it: its title a map; or its
#: listing_id attribute a number (the listing_id its children link by is read from its key).
BROKEN: dict[str, dict[str, Any]] = {
    "title": {"title": {"M": {}}},
    "listing_id": {"listing_id": {"N": "7"}, "title": {"N": "1"}},
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
async def test_a_child_that_does_not_decode_goes_by_its_key_with_its_own_children(
    shop: Database, broken: str
) -> None:
    await fill(shop)
    [l1] = [
        i
        for i in await raw_scan(shop)
        if (i["pk"]["S"], i["sk"]["S"]) == ("SELLER#s1", "LISTING#l1")
    ]
    await raw_put(shop, {**l1, **BROKEN[broken]})
    with pytest.raises(CodecError):
        await shop.get(Listing, seller_id="s1", listing_id="l1")

    report = await shop.delete(Seller("s1"), cascade=True)

    assert report == CascadeReport({Seller: 1, Listing: 2, Review: 4, Favourite: 2})
    assert keys(await raw_scan(shop)) == SIBLING


async def test_an_item_whose_links_cannot_be_read_refuses_the_cascade_naming_it(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(social) as db:
        await db.put_all([Person("bob", "g"), Group("ann", "g")])
        # ann's group is a number and no GSI1 key holds it: her friends cannot be found.
        await raw_put(
            db, {"pk": {"S": "PERSON#ann"}, "sk": {"S": "PERSON#ann"}, "group": {"N": "1"}}
        )
        before = await raw_scan(db)
        with count_requests(db) as log, pytest.raises(CodecError) as caught:
            await db.delete(Person, name="ann", cascade=True)
        message = str(caught.value)
        assert message.startswith(
            "delete of Person pk='PERSON#ann', sk='PERSON#ann' with cascade=True refused, "
            "nothing was deleted: Person item pk='PERSON#ann', sk='PERSON#ann' in its tree does "
            "not decode, and Person.friends links its children by 'group', which cannot be read"
        )
        assert "Correct the stored item and run the cascade again" in message
        assert log.operations == ["GetItem"]  # refused before anything is written
        assert await raw_scan(db) == before


def _below(count: int, left: set[tuple[str, str]]) -> dict[type, int]:
    """The reviews and favourites of seller s1's listings among the items ``left``."""
    reviews = sum(1 for pk, sk in left if sk.startswith("REVIEW#") and pk != "LISTING#x1")
    favourites = sum(1 for _, sk in left if sk.startswith("FAV#l"))
    assert reviews + favourites == count
    return {cls: n for cls, n in ((Review, reviews), (Favourite, favourites)) if n}


async def test_explain_shows_what_a_one_listing_tree_sends(shop: Database) -> None:
    await fill(shop, listings=1)
    explained = shop.explain.delete(Seller("s1"), cascade=True)
    with count_requests(shop) as log:
        await shop.delete(Seller("s1"), cascade=True)
    # One parent a level: explain's one Query per relationship and level is what is sent.
    assert [r.operation for r in explained] == log.operations
    # The reviews' Query names the listing read before it.
    reviews = explained[2]
    assert isinstance(reviews.params["ExpressionAttributeValues"][":pk"], FromRead)
    assert reviews.params["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)"


async def test_a_lost_reply_to_the_roots_delete_is_settled_by_its_absence(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(market) as faulty:
        await fill(faulty.direct)
        # Applied by the server, then the connection closes: the retry finds no item (and no
        # mark), which is what the delete would have left.
        faulty.proxy.inject("lost_reply", operation="DeleteItem")
        report = await faulty.db.delete(Seller("s1"), cascade=True)
        assert [i.operation for i in faulty.proxy.injected] == ["DeleteItem"]
        assert report.total == 9
        assert keys(await raw_scan(faulty.direct)) == SIBLING
