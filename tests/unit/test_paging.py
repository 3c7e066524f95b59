"""Reading a collection page by page, counting only accepted items (``dynorm.io.paging``)."""

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynorm.core.codec.converter import Item
from dynorm.core.requests import CollectionRead, KeyRange, Request, ScanRead, Tally
from dynorm.io.paging import Page, count_segments, iterate, read_page, released, segment_pages

READ = CollectionRead(
    table_name="app",
    index=None,
    pk_attr="pk",
    pk_value="ORG#M",
    sk_attr="sk",
    range=KeyRange("begins_with", ("USER#",)),
    key_attrs=("pk", "sk"),
)


def raw(sk: str) -> Item:
    return {"pk": {"S": "ORG#M"}, "sk": {"S": sk}, "extra": {"S": "x"}}


class FakeCollection:
    """A sorted collection answering Query the way DynamoDB does.

    A page ends after ``Limit`` items or after ``page_size`` items (the 1 MB cap), and carries a
    LastEvaluatedKey whenever it ended early, even when nothing follows.
    """

    def __init__(self, items: list[Item], page_size: int = 1000) -> None:
        self.items = items
        self.page_size = page_size
        self.requests: list[Request] = []

    async def send(self, request: Request) -> dict[str, Any]:
        self.requests.append(request)
        start = request.params.get("ExclusiveStartKey")
        position = 0
        if start is not None:
            position = next(i for i, it in enumerate(self.items) if it["sk"] == start["sk"]) + 1
        count = min(request.params.get("Limit", self.page_size), self.page_size)
        page = self.items[position : position + count]
        response: dict[str, Any] = {"Items": page}
        if len(page) == count:
            response["LastEvaluatedKey"] = {"pk": page[-1]["pk"], "sk": page[-1]["sk"]}
        return response


def accept_users(item: Item) -> str | None:
    sk: str = item["sk"]["S"]
    return sk if sk.startswith("USER#") else None


async def test_limit_counts_only_accepted_items() -> None:
    collection = FakeCollection(
        [raw("METADATA#M"), raw("USER#a"), raw("NOTE#1"), raw("USER#b"), raw("USER#c")]
    )
    items, after = await read_page(collection.send, READ, accept_users, limit=2, start=None)
    assert items == ["USER#a", "USER#b"]
    assert after == {"pk": {"S": "ORG#M"}, "sk": {"S": "USER#b"}}  # resumes after the last one
    # One more than needed is asked for, so the reader knows whether anything follows.
    assert [r.params["Limit"] for r in collection.requests] == [3, 2]
    assert collection.requests[1].params["ExclusiveStartKey"] == {
        "pk": {"S": "ORG#M"},
        "sk": {"S": "NOTE#1"},
    }


async def test_end_of_collection_gives_no_cursor() -> None:
    collection = FakeCollection([raw("USER#a"), raw("USER#b")])
    items, after = await read_page(collection.send, READ, accept_users, limit=5, start=None)
    assert items == ["USER#a", "USER#b"]
    assert after is None


async def test_lookahead_item_is_not_skipped() -> None:
    collection = FakeCollection([raw("USER#a"), raw("USER#b"), raw("USER#c")])
    first, after = await read_page(collection.send, READ, accept_users, limit=2, start=None)
    assert first == ["USER#a", "USER#b"]
    assert len(collection.requests) == 1  # the third item came in the same page
    second, end = await read_page(collection.send, READ, accept_users, limit=2, start=after)
    assert second == ["USER#c"]
    assert end is None


async def test_unlimited_reads_one_dynamodb_page() -> None:
    collection = FakeCollection([raw(f"USER#{i}") for i in range(5)], page_size=2)
    items, after = await read_page(collection.send, READ, accept_users, limit=None, start=None)
    assert items == ["USER#0", "USER#1"]
    assert after == {"pk": {"S": "ORG#M"}, "sk": {"S": "USER#1"}}
    assert "Limit" not in collection.requests[0].params


async def test_on_page_sees_every_response_page() -> None:
    collection = FakeCollection([raw("METADATA#M"), raw("USER#a"), raw("USER#b")])
    seen: list[list[str]] = []
    await read_page(
        collection.send,
        READ,
        accept_users,
        limit=1,
        start=None,
        on_page=lambda page: seen.append([item["sk"]["S"] for item in page]),
    )
    # The parent riding along is seen though not accepted; nothing past the page is read.
    assert seen == [["METADATA#M", "USER#a"]]


async def test_iterate_reads_every_page() -> None:
    collection = FakeCollection(
        [raw("USER#a"), raw("NOTE#1"), raw("USER#b"), raw("USER#c"), raw("NOTE#2")], page_size=2
    )
    assert [x async for x in iterate(collection.send, READ, accept_users)] == [
        "USER#a",
        "USER#b",
        "USER#c",
    ]
    assert len(collection.requests) == 3
    assert all("Limit" not in r.params for r in collection.requests)


async def test_iterate_from_a_start_key() -> None:
    collection = FakeCollection([raw("USER#a"), raw("USER#b")])
    start = {"pk": {"S": "ORG#M"}, "sk": {"S": "USER#a"}}
    assert [x async for x in iterate(collection.send, READ, accept_users, start=start)] == [
        "USER#b"
    ]


def test_released_hands_out_items_in_order_and_empties_the_page() -> None:
    page = [raw("USER#a"), raw("USER#b"), raw("USER#c")]
    left: list[int] = []
    order = []
    for item in released(page):
        order.append(item["sk"]["S"])
        left.append(len(page))
    assert order == ["USER#a", "USER#b", "USER#c"]
    assert left == [2, 1, 0]  # each item is out of the page by the time it is handed out


class KeptResponses(FakeCollection):
    """Remembers every page it answered with, to see what the reader leaves in it."""

    def __init__(self, items: list[Item], page_size: int = 1000) -> None:
        super().__init__(items, page_size)
        self.pages: list[list[Item]] = []

    async def send(self, request: Request) -> dict[str, Any]:
        response = await super().send(request)
        self.pages.append(response["Items"])
        return response


async def test_read_page_releases_each_raw_item_before_decoding_the_next() -> None:
    collection = KeptResponses([raw("USER#a"), raw("NOTE#1"), raw("USER#b")])
    held: list[int] = []

    def accept(item: Item) -> str | None:
        held.append(len(collection.pages[-1]))
        return accept_users(item)

    items, _ = await read_page(collection.send, READ, accept, limit=None, start=None)
    assert items == ["USER#a", "USER#b"]
    # The page never holds an item already decoded: memory and the collector see it go.
    assert held == [2, 1, 0]


async def test_iterate_releases_raw_items_as_it_goes() -> None:
    collection = KeptResponses([raw("USER#a"), raw("USER#b"), raw("USER#c")], page_size=2)
    async for _ in iterate(collection.send, READ, accept_users):
        assert len(collection.pages[0]) < 2  # the first page shrinks as it is consumed
    assert [len(page) for page in collection.pages] == [0, 0]


def test_page_is_a_sized_iterable() -> None:
    page = Page(["a", "b"], cursor="c")
    assert len(page) == 2
    assert list(page) == ["a", "b"]


@settings(max_examples=60)
@given(
    st.lists(st.booleans(), max_size=30),
    st.integers(min_value=1, max_value=6),
    st.integers(min_value=1, max_value=5),
)
def test_paging_with_cursors_returns_every_child_once_in_full_pages(
    kinds: list[bool], limit: int, page_size: int
) -> None:
    items = [
        raw(f"USER#{i:03d}" if is_child else f"NOTE#{i:03d}") for i, is_child in enumerate(kinds)
    ]
    children = [it["sk"]["S"] for it in items if it["sk"]["S"].startswith("USER#")]
    collection = FakeCollection(items, page_size=page_size)

    async def read_all() -> list[list[str]]:
        pages: list[list[str]] = []
        start: Item | None = None
        while True:
            found, start = await read_page(
                collection.send, READ, accept_users, limit=limit, start=start
            )
            pages.append(found)
            if start is None:
                return pages
            assert len(pages) <= len(items) + 1, "paging does not terminate"

    pages = asyncio.run(read_all())
    assert [sk for page in pages for sk in page] == children
    assert all(len(page) == limit for page in pages[:-1])
    assert len(pages[-1]) <= limit


class GatedCollection(FakeCollection):
    """Pages after the first wait for ``release``: shows what is in flight meanwhile."""

    def __init__(self, items: list[Item], page_size: int) -> None:
        super().__init__(items, page_size)
        self.release = asyncio.Event()
        self.cancelled = 0
        self.started = 0

    async def send(self, request: Request) -> dict[str, Any]:
        self.started += 1
        if "ExclusiveStartKey" in request.params:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return await super().send(request)


async def test_iterate_requests_the_next_page_while_the_current_one_is_consumed() -> None:
    collection = GatedCollection([raw(f"USER#{i}") for i in range(4)], page_size=2)
    items = iterate(collection.send, READ, accept_users)
    assert await anext(items) == "USER#0"
    await asyncio.sleep(0)  # let the prefetch task start
    # The second page is already asked for, though only one item of the first was consumed.
    assert collection.started == 2
    assert await anext(items) == "USER#1"
    collection.release.set()
    assert [item async for item in items] == ["USER#2", "USER#3"]
    assert len(collection.requests) == 3  # pages 1 and 2, and the empty page after LEK


async def test_stopping_the_iteration_cancels_the_prefetch() -> None:
    collection = GatedCollection([raw(f"USER#{i}") for i in range(4)], page_size=2)
    items = iterate(collection.send, READ, accept_users)
    assert await anext(items) == "USER#0"
    await asyncio.sleep(0)  # the prefetch is now waiting inside send()
    assert collection.started == 2
    await items.aclose()
    await asyncio.sleep(0)  # let the cancellation reach it
    assert collection.cancelled == 1
    assert len(collection.requests) == 1  # the cancelled page never completed


class FakeSegments:
    """Scan segments answering the way DynamoDB does: segment ``n`` holds ``segments[n]``."""

    def __init__(self, segments: list[list[Item]], page_size: int = 1000) -> None:
        self.segments = [FakeCollection(items, page_size) for items in segments]
        self.failing: int | None = None

    async def send(self, request: Request) -> dict[str, Any]:
        number = request.params.get("Segment", 0)
        if number == self.failing:
            raise RuntimeError(f"segment {number} failed")
        await asyncio.sleep(0)  # let the other segments run in between
        segment: FakeCollection = self.segments[number]
        return await segment.send(request)


def scans(count: int) -> list[Request]:
    return [
        ScanRead("app", segment=n, segments=count).request()
        if count > 1
        else ScanRead("app").request()
        for n in range(count)
    ]


async def test_segment_pages_resumes_each_segment_from_its_start() -> None:
    fake = FakeSegments([[raw(f"USER#{s}{i}") for i in range(5)] for s in "ab"])
    seen: dict[int, list[str]] = {0: [], 1: []}
    afters: dict[int, list[object]] = {0: [], 1: []}

    async def on_page(i: int, response: dict[str, Any]) -> None:
        seen[i] += [item["sk"]["S"] for item in response["Items"]]
        afters[i].append(response.get("LastEvaluatedKey"))

    start = {"pk": {"S": "ORG#M"}, "sk": {"S": "USER#b1"}}
    await segment_pages(fake.send, scans(2), on_page, starts=[None, start], limit=2)
    assert seen == {0: [f"USER#a{i}" for i in range(5)], 1: ["USER#b2", "USER#b3", "USER#b4"]}
    # Each page's LastEvaluatedKey is what a caller saves to resume from; the last page has none.
    assert afters[1][0] == {"pk": {"S": "ORG#M"}, "sk": {"S": "USER#b3"}}
    assert afters[0][-1] is None
    assert afters[1][-1] is None
    for segment in fake.segments:
        assert {r.params["Limit"] for r in segment.requests} == {2}


async def test_segment_pages_waits_for_on_page_before_the_next_page() -> None:
    fake = FakeSegments([[raw(f"USER#{i}") for i in range(6)]])
    sent_before: list[int] = []

    async def on_page(_: int, response: dict[str, Any]) -> None:
        sent_before.append(len(fake.segments[0].requests))

    await segment_pages(fake.send, scans(1), on_page, limit=2)
    assert sent_before == [1, 2, 3, 4]  # never a page ahead of what on_page saved


async def test_segment_pages_raises_the_first_failure_and_stops_the_others() -> None:
    fake = FakeSegments([[raw(f"USER#{i}") for i in range(50)] for _ in range(3)])
    fake.failing = 1

    async def on_page(_: int, response: dict[str, Any]) -> None:
        await asyncio.sleep(0)

    with pytest.raises(RuntimeError, match="segment 1 failed"):
        await segment_pages(fake.send, scans(3), on_page, limit=1)
    sent = sum(len(s.requests) for s in fake.segments)
    assert sent < 100  # the others stopped rather than reading their 50 pages each


async def test_count_segments_adds_up_every_segment() -> None:
    fake = FakeSegments([[raw(f"USER#{s}{i}") for i in range(7)] for s in "abc"], page_size=3)
    total = await count_segments(
        fake.send, scans(3), lambda item: "1" not in item["sk"]["S"], Tally()
    )
    assert total == 3 * 6
