"""Reading a collection page by page, counting only the items that are asked for.

``limit=N`` means N accepted items (children of one model, say), however many other items share
the collection: the reader keeps requesting until it has N or the collection ends. It asks
DynamoDB for one item more than it still needs, so it knows whether anything follows without an
extra round trip, and resumes after the last item it handed out rather than after DynamoDB's
LastEvaluatedKey, so a skipped item is never lost.

Every Query and Scan pages through :func:`pages`; scans of several segments (a parallel
``db.scan``, its count, a migration's pass over the table) through :func:`segment_pages` on top.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing
from typing import Any, Final, Protocol, TypeVar

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.requests import Page, Request, Tally

__all__ = [
    "Page",
    "Read",
    "Sender",
    "count_items",
    "count_segments",
    "iterate",
    "iterate_segments",
    "pages",
    "read_page",
    "released",
    "segment_pages",
    "with_params",
]

T = TypeVar("T")

#: Sends one request and returns the parsed response (the Database's single I/O seam).
Sender = Callable[[Request], Awaitable[dict[str, Any]]]
#: Decodes a raw item into the wanted object, or None for items of other kinds.
Accept = Callable[[Item], T | None]

#: How much a filtered read's Limit may grow over the one it started with.
MAX_FILTER_SCALE: Final = 64


class Read(Protocol):
    """A Query or Scan read page by page (CollectionRead, ScanRead)."""

    @property
    def filtered(self) -> bool: ...

    def request(self) -> Request: ...

    def key_of(self, item: Item) -> Item: ...


def released(page: list[Item]) -> Iterator[Item]:
    """``page``'s items in order, each dropped from ``page`` as it is handed out (empties it).

    Why: CPython's garbage collector runs whenever container allocations outnumber frees by a
    threshold. A parsed item is a couple of dozen dicts and lists; the objects decoded from it are
    two or three. Releasing each raw item once it is decoded makes frees outrun allocations, so no
    collection runs while a page is decoded, and the page's memory is returned as it goes. Holding
    the whole page until the end instead cost the benchmark's hot loop 10-15% of its time (far
    more in a small process) in collections over objects that are garbage a moment later.
    """
    page.reverse()
    pop = page.pop
    for _ in range(len(page)):
        yield pop()


def with_params(request: Request, **extra: Any) -> Request:
    """``request`` with the parameters in ``extra`` that are not None (a page's start, limit)."""
    params = dict(request.params)
    params.update({k: v for k, v in extra.items() if v is not None})
    return msgspec.structs.replace(request, params=params)  # its decode (and retry) kept


async def pages(
    send: Sender,
    request: Request,
    *,
    start: Item | None = None,
    limit: Callable[[], int | None] | None = None,
    prefetch: bool = False,
) -> AsyncGenerator[dict[str, Any], None]:
    """Every response of the Query or Scan ``request`` from ``start`` on: the one paging loop.

    ``limit`` gives each request's Limit, asked just before it is sent (so it may depend on what
    the pages before it held). With ``prefetch`` the next page is requested as soon as a page
    arrives, so it is on its way while the caller works through this one; at most those two
    pages are held, and stopping the iteration (``break``, ``aclose()``, an exception) cancels
    the request in flight. Close it when leaving early (``contextlib.aclosing``).
    """

    def page(start: Item | None) -> Awaitable[dict[str, Any]]:
        want = None if limit is None else limit()
        return send(with_params(request, ExclusiveStartKey=start, Limit=want))

    if not prefetch:
        while True:
            response = await page(start)
            yield response
            start = response.get("LastEvaluatedKey")
            if start is None:
                return
    pending: asyncio.Future[dict[str, Any]] | None = asyncio.ensure_future(page(start))
    try:
        while pending is not None:
            response = await pending
            start = response.get("LastEvaluatedKey")
            pending = None if start is None else asyncio.ensure_future(page(start))
            yield response
    finally:
        if pending is not None:
            _discard(pending)


async def read_page(
    send: Sender,
    read: Read,
    accept: Accept[T],
    *,
    limit: int | None,
    start: Item | None,
    on_page: Callable[[list[Item]], None] | None = None,
    ahead: int = 0,
    tally: Tally | None = None,
) -> tuple[list[T], Item | None]:
    """Up to ``limit`` accepted items starting after ``start``, and the key to resume from.

    ``on_page`` sees each response's raw items (to spot a parent riding along, for instance). With
    ``limit=None`` one DynamoDB page is read. ``ahead`` counts items known to come first that
    will not be accepted (that parent): the first request asks for them on top, so its one-item
    look-ahead is not spent on them. ``tally`` adds up what the responses report.

    DynamoDB applies a Limit before a filter, so a filtered read that comes back short asks for
    twice as many items each time (up to MAX_FILTER_SCALE times): a selective filter then costs
    a few requests, not one per match.
    """
    items: list[T] = []
    last: Item | None = None
    scale = 1

    def want() -> int | None:
        nonlocal ahead, scale
        wanted = None if limit is None else (limit - len(items) + 1) * scale + ahead
        ahead = 0
        if read.filtered and scale < MAX_FILTER_SCALE:
            scale *= 2
        return wanted

    async with aclosing(pages(send, read.request(), start=start, limit=want)) as responses:
        async for response in responses:
            if tally is not None:
                tally.add(response)
            page = response.get("Items", [])
            if on_page is not None:
                on_page(page)
            if limit is None:
                # One whole page, nothing to count: the tightest loop Python has.
                items += [obj for obj in map(accept, released(page)) if obj is not None]
                return items, response.get("LastEvaluatedKey")
            for raw in released(page):
                obj = accept(raw)
                if obj is None:
                    continue
                if len(items) == limit:
                    return items, read.key_of(last) if last is not None else start
                items.append(obj)
                last = raw
            start = response.get("LastEvaluatedKey")
            if len(items) == limit and start is not None:
                # Full, and DynamoDB says more may follow: resume after what was handed out.
                return items, read.key_of(last) if last is not None else start
    return items, None


async def iterate(
    send: Sender, read: Read, accept: Accept[T], *, start: Item | None = None
) -> AsyncGenerator[T, None]:
    """Every accepted item from ``start`` to the end of the collection, a page at a time.

    The next page is requested as soon as the current one arrives, so it is on its way while
    the caller works through the current one; at most those two pages are held. Stopping the
    iteration (``break``, ``aclose()``, an exception) cancels the request in flight.
    """
    async with aclosing(pages(send, read.request(), start=start, prefetch=True)) as responses:
        async for response in responses:
            for raw in released(response.get("Items", [])):
                obj = accept(raw)
                if obj is not None:
                    yield obj


def _discard(pending: asyncio.Future[Any]) -> None:
    """Cancel a prefetch nobody will read; a failure it already met is not worth raising."""
    if pending.done():
        if not pending.cancelled():
            pending.exception()  # retrieved, so asyncio does not log it as forgotten
    else:
        pending.cancel()


async def count_items(
    send: Sender, request: Request, match: Callable[[Item], bool] | None, tally: Tally
) -> int:
    """How many items ``request`` reads, over every page.

    With ``match`` None the request is a Select=COUNT and DynamoDB counts; otherwise it reads
    (key attributes, say) and the items ``match`` accepts are counted.
    """
    return await count_segments(send, [request], match, tally)


async def count_segments(
    send: Sender, requests: Sequence[Request], match: Callable[[Item], bool] | None, tally: Tally
) -> int:
    """How many items the scan segments ``requests`` read, the segments counted concurrently.

    ``match`` as in :func:`count_items`.
    """
    total = 0

    async def counted(_: int, response: dict[str, Any]) -> None:
        nonlocal total
        tally.add(response)
        if match is None:
            total += response.get("Count", 0)
        else:
            total += sum(1 for raw in response.get("Items", []) if match(raw))

    await segment_pages(send, requests, counted)
    return total


#: Called with a segment's index in ``requests`` and each response of it, in order.
OnPage = Callable[[int, dict[str, Any]], Awaitable[None]]


async def segment_pages(
    send: Sender,
    requests: Sequence[Request],
    on_page: OnPage,
    *,
    starts: Sequence[Item | None] | None = None,
    limit: int | None = None,
) -> None:
    """Every response of several Scan segments, read concurrently: the one segment loop.

    Parallel scans, their counts and migrations (resumed, or shared among workers) all read
    through it. ``requests[i]`` is read from ``starts[i]`` on (a saved LastEvaluatedKey
    resumes a segment; None starts it), ``limit`` items a request. ``on_page(i, response)`` is
    awaited after each response, and segment ``i`` asks for its next page only once it has
    returned: what ``on_page`` saved is the position to resume from. A segment failing cancels
    the others' requests in flight, and the first failure is raised.
    """
    if starts is not None and len(starts) != len(requests):
        raise ValueError(f"{len(starts)} start keys for {len(requests)} segments")
    per_page = None if limit is None else (lambda: limit)

    async def segment(i: int) -> None:
        start = None if starts is None else starts[i]
        async with aclosing(pages(send, requests[i], start=start, limit=per_page)) as responses:
            async for response in responses:
                await on_page(i, response)

    if len(requests) == 1:
        await segment(0)
        return
    try:
        async with asyncio.TaskGroup() as group:  # one failing cancels the others
            for i in range(len(requests)):
                group.create_task(segment(i))
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None  # the first failure, as with one segment


_DONE: Final = object()


async def iterate_segments(
    send: Sender, reads: Sequence[Read], accept: Accept[T]
) -> AsyncGenerator[T, None]:
    """Every accepted item of several scan segments, the segments read concurrently.

    Each segment reads its next page only once its previous one was taken (one page ahead per
    segment at most); items come in the order pages arrive. Stopping the iteration, or a
    segment failing, cancels every request in flight; the failure is raised here.
    """
    if len(reads) == 1:
        async for obj in iterate(send, reads[0], accept):
            yield obj
        return
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=len(reads))

    async def taken(_: int, response: dict[str, Any]) -> None:
        await queue.put(response.get("Items", []))

    async def read_all() -> None:
        try:
            await segment_pages(send, [read.request() for read in reads], taken)
        except Exception as exc:  # noqa: BLE001 - handed to the reader, who raises it
            await queue.put(exc)
            return
        await queue.put(_DONE)

    task = asyncio.ensure_future(read_all())
    try:
        while (page := await queue.get()) is not _DONE:
            if isinstance(page, BaseException):
                raise page
            for raw in released(page):
                found = accept(raw)
                if found is not None:
                    yield found
    finally:
        _discard(task)
