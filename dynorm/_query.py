"""The lazy query returned by ``db.query(...)``: nothing is sent until it is iterated or paged."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Generic, TypeVar

import attrs

from ._codec import Item
from ._cursor import CursorCodec
from ._paging import Accept, Page, Sender, iterate, read_page
from ._plans import CollectionRead, Request, batch_get, check_limit
from ._queryload import QueryLoad

__all__ = ["Query"]

T = TypeVar("T")


@attrs.frozen
class Query(Generic[T]):
    """Items of one model in one item collection, read lazily.

    ``async for item in query`` reads page after page; ``await query.page(limit, cursor)`` reads
    exactly one page of ``limit`` items; ``await query.all()`` reads everything.
    """

    _send: Sender = attrs.field(alias="send")
    read: CollectionRead
    _accept: Accept[T] = attrs.field(alias="accept")
    _cursors: CursorCodec = attrs.field(alias="cursors")
    #: The relationships ``load=`` asked for, loaded for each page's parents.
    _loads: QueryLoad[T] | None = attrs.field(default=None, alias="loads")
    #: The index holds the items in part: each page's items are then read whole.
    _fetches: bool = attrs.field(default=False, alias="fetches")

    def reverse(self) -> Query[T]:
        """The same query read from the end of the collection backwards."""
        return attrs.evolve(self, read=attrs.evolve(self.read, forward=not self.read.forward))

    def explain(self) -> Request:
        """The Query request this would send first (without Limit or ExclusiveStartKey).

        With ``load=``, the Query that also reads the children it shares (see ``load_costs``).
        """
        if self._loads is not None:
            return self._loads.plan(self.read).read.request()
        return self.read.request()

    def requests(self) -> list[Request]:
        """The requests of one page: the Query, and the BatchGetItem that may follow it.

        On an index that holds the items in part (KEYS_ONLY, INCLUDE), a BatchGetItem reads them
        whole: its Keys, shown empty, are the table keys of the Query's items. ``load_costs``
        tells what ``load=`` adds.
        """
        query = self.explain()
        if not self._fetches:
            return [query]
        return [query, batch_get(self.read.table_name, {"Keys": []})]

    def load_costs(self) -> dict[str, str]:
        """How each relationship of ``load=`` is read: in the same Query, or what it costs."""
        return {} if self._loads is None else self._loads.plan(self.read).costs()

    async def page(self, limit: int | None = None, cursor: str | None = None) -> Page[T]:
        """One page of up to ``limit`` items after ``cursor`` (None: from the start).

        ``cursor`` must come from this query's own pages; any other is a CursorError.
        """
        check_limit(limit)
        start = None if cursor is None else self._cursors.decode(cursor, self.read)
        items, after = await self._read_page(limit, start)
        return Page(items, None if after is None else self._cursors.encode(after, self.read))

    def _read_page(
        self, limit: int | None, start: Item | None
    ) -> Awaitable[tuple[list[T], Item | None]]:
        if self._loads is not None:
            return self._loads.page(self._send, self.read, limit=limit, start=start)
        return read_page(self._send, self.read, self._accept, limit=limit, start=start)

    async def all(self) -> list[T]:
        """Every item, reading all pages."""
        return [item async for item in self]

    async def first(self) -> T | None:
        """The first item, or None when the collection holds none."""
        items, _ = await self._read_page(1, None)
        return items[0] if items else None

    def __aiter__(self) -> AsyncIterator[T]:
        if self._loads is not None:
            return self._loaded_pages()
        return iterate(self._send, self.read, self._accept)

    async def _loaded_pages(self) -> AsyncIterator[T]:
        # Page by page: each page's parents are handed out once their loads are done.
        start: Item | None = None
        while True:
            items, start = await self._read_page(None, start)
            for item in items:
                yield item
            if start is None:
                return
