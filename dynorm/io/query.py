"""Lazy reads: ``db.query()`` and ``db.scan()`` send nothing until iterated, paged or counted."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec
from dynorm.core.errors import DefinitionError, ExpressionError
from dynorm.core.expressions import Condition
from dynorm.core.requests import (
    CollectionRead,
    ReadOptions,
    Request,
    ScanRead,
    Tally,
    check_limit,
    whole_item_reads,
)
from dynorm.mapping.model import ModelInfo, ModelTable
from dynorm.mapping.reading import (
    count_match,
    identifying,
    narrowed,
    render_filter,
    scan_match,
    view_of,
    view_reads_whole,
)
from dynorm.mapping.table import Table

from .paging import (
    Accept,
    Page,
    Sender,
    count_items,
    count_segments,
    iterate,
    iterate_segments,
    read_page,
)
from .queryload import QueryLoad

__all__ = ["Query", "Scan"]

T = TypeVar("T")
V = TypeVar("V")
R = TypeVar("R", bound=ReadOptions)

#: How a read is counted: the request, and which items of its responses count (None: the
#: request is a Select=COUNT, DynamoDB counts).
Counting = tuple[Request, Callable[[Item], bool] | None]


def _with_filter(
    info: ModelInfo[Any] | None,
    read: R,
    where: Condition | None,
    condition: Condition,
    *,
    keys: tuple[str, ...] = (),
    index: str | None = None,
) -> tuple[R, Condition]:
    """``read`` filtered by ``condition`` too (``&`` with the filter ``where`` it has)."""
    combined = condition if where is None else where & condition
    rendered = render_filter(info, combined, keys=keys, index=index)
    return msgspec.structs.replace(read, filter=rendered), combined


def _counting(
    read: ReadOptions, match: Callable[[Item], bool] | None, table: ModelTable
) -> Counting:
    """Select=COUNT when DynamoDB's count is exact; else the identifying attributes, matched."""
    if match is None:
        return read.count_request(), None
    return msgspec.structs.replace(
        read, projection=identifying(table, read.key_attrs)
    ).request(), match


def _page(
    items: list[T], after: Item | None, encode: Callable[[Item], str], tally: Tally
) -> Page[T]:
    cursor = None if after is None else encode(after)
    return Page(items, cursor, scanned=tally.scanned, consumed=tally.consumed)


def _requests(first: list[Request], whole: Sender | None, table_name: str) -> list[Request]:
    """``first``, and the BatchGetItem that reads items whole when the index holds them in part."""
    return first if whole is None else [*first, whole_item_reads(table_name)]


class Query(msgspec.Struct, Generic[T], frozen=True):
    """Items of one model in one item collection, read lazily.

    ``async for item in query`` reads page after page; ``await query.page(limit, cursor)`` reads
    exactly one page of ``limit`` items; ``await query.all()`` reads everything;
    ``await query.count()`` counts. ``filter``, ``project``, ``reverse`` and ``with_capacity``
    return a new query.
    """

    _send: Sender
    read: CollectionRead
    _accept: Accept[T]
    _cursors: CursorCodec
    _info: ModelInfo[Any] | None = None
    #: The filter the read carries (the type attribute's, then the caller's).
    _where: Condition | None = None
    #: Whether the caller filtered (not only the type attribute).
    _filtered: bool = False
    #: The relationships ``load=`` asked for, loaded for each page's parents.
    _loads: QueryLoad[T] | None = None
    #: Sends the Query and reads whole the items the index holds in part (None: not needed).
    _whole: Sender | None = None

    @property
    def _sender(self) -> Sender:
        return self._send if self._whole is None else self._whole

    def reverse(self) -> Query[T]:
        """The same query read from the end of the collection backwards."""
        reversed_ = msgspec.structs.replace(
            self, read=msgspec.structs.replace(self.read, forward=not self.read.forward)
        )
        reversed_._plan()  # a filter is refused where the reversed Query shares children
        return reversed_

    def _model(self, call: str) -> ModelInfo[Any]:
        if self._info is None:  # pragma: no cover - every Query dynorm builds has its model
            raise DefinitionError(f"{call} needs the query's model")
        return self._info

    def filter(self, condition: Condition) -> Query[T]:
        """Only items that meet ``condition`` (a FilterExpression; ``&`` with earlier filters).

        DynamoDB still reads the items it drops: pages report it in ``Page.scanned``. ``limit=N``
        means N matching items. The key attributes this query addresses cannot be filtered on.
        With ``load=``, children read by the same Query would be dropped too: an
        ExpressionError then (filter in Python, or query without ``load=`` and ``db.load``).
        """
        info = self._model(".filter()")
        keys = tuple(a for a in (self.read.pk_attr, self.read.sk_attr) if a)
        read, where = _with_filter(
            info, self.read, self._where, condition, keys=keys, index=self.read.index
        )
        filtered = msgspec.structs.replace(self, read=read, _where=where, _filtered=True)
        filtered._plan()
        return filtered

    def project(self, view: type[V]) -> Query[V]:
        """The same items read as ``view``: an attrs class with some of the model's fields.

        Only those fields' attributes are read (ProjectionExpression), plus the key attributes
        needed to tell models apart and to resume; fields kept only inside keys are parsed. On
        an index that holds the items in part, they are read whole unless the index holds
        every field of ``view``. Not with ``load=`` (a view has no relationships).
        """
        info = self._model(".project()")
        if self._loads is not None:
            raise ExpressionError(
                f"project() reads {info.name} items as {view.__name__}, which loads no "
                "relationships: drop load= from db.query, or drop .project()"
            )
        found = view_of(info, view)
        matches, decode = info.sort_key_matcher(self.read.index), found.decode

        def accept(raw: Item) -> V | None:
            return decode(raw) if matches(raw) else None

        # A view is read by the careful decoder, which would take wire items the slow way.
        read = msgspec.structs.replace(
            self.read, projection=found.projection(self.read.key_attrs), parse=None
        )
        reads_whole = view_reads_whole(info, view, read.index)
        return Query(
            _send=self._send,
            read=read,
            _accept=narrowed(accept, read),
            _cursors=self._cursors,
            _info=info,
            _where=self._where,
            _filtered=self._filtered,
            _whole=self._whole if reads_whole else None,
        )

    def with_capacity(self) -> Query[T]:
        """The same query asking for ReturnConsumedCapacity=TOTAL: ``Page.consumed`` is set."""
        return msgspec.structs.replace(self, read=msgspec.structs.replace(self.read, capacity=True))

    def _plan(self) -> CollectionRead:
        """The Query sent: with ``load=``, widened to the children it shares."""
        if self._loads is None:
            return self.read
        return self._loads.plan(self.read, filtered=self._filtered).read

    def explain(self, *, count: bool = False) -> list[Request]:
        """The requests a page of this query sends (without Limit or ExclusiveStartKey).

        The Query first, in a list as every explain (``Scan.explain()``, ``db.explain.*``).
        ``count=True``: the request ``count()`` sends. With ``load=``: the Query that also reads
        the children it shares, then what is sent for each parent the page returns (each
        separate relationship's Query, one a shard, and a BatchGetItem of BelongsTo parents),
        their parent-derived values :class:`~dynorm.FromRead` placeholders (see ``load_costs``).
        """
        if count:
            return [self._counting()[0]]
        return [self._plan().request(), *self._after_page()]

    def requests(self) -> list[Request]:
        """The requests of one page: the Query, the BatchGetItem that may follow it, the loads.

        On an index that holds the items in part (KEYS_ONLY, INCLUDE), a BatchGetItem reads them
        whole: its Keys, shown empty, are the table keys of the Query's items. With ``load=``,
        what is sent for each parent follows (as in :meth:`explain`).
        """
        first = _requests([self._plan().request()], self._whole, self.read.table_name)
        return [*first, *self._after_page()]

    def _after_page(self) -> list[Request]:
        """What ``load=`` sends for each parent of a page (nothing without ``load=``)."""
        if self._loads is None:
            return []
        return self._loads.after_page(self._loads.plan(self.read, filtered=self._filtered))

    def load_costs(self) -> dict[str, str]:
        """How each relationship of ``load=`` is read: in the same Query, or what it costs."""
        if self._loads is None:
            return {}
        return self._loads.plan(self.read, filtered=self._filtered).costs()

    def _counting(self) -> Counting:
        info = self._model(".count()")
        return _counting(self.read, count_match(info, self.read), info.table)

    async def page(self, limit: int | None = None, cursor: str | None = None) -> Page[T]:
        """One page of up to ``limit`` items after ``cursor`` (None: from the start).

        ``cursor`` must come from this query's own pages; any other is a CursorError.
        """
        check_limit(limit)
        start = None if cursor is None else self._cursors.decode(cursor, self.read)
        tally = Tally()
        items, after = await self._read_page(limit, start, tally)
        return _page(items, after, lambda key: self._cursors.encode(key, self.read), tally)

    def _read_page(
        self, limit: int | None, start: Item | None, tally: Tally | None = None
    ) -> Awaitable[tuple[list[T], Item | None]]:
        if self._loads is not None:
            plan = self._loads.plan(self.read, filtered=self._filtered)
            return self._loads.page(self._sender, plan, limit=limit, start=start, tally=tally)
        return read_page(
            self._sender, self.read, self._accept, limit=limit, start=start, tally=tally
        )

    async def all(self) -> list[T]:
        """Every item, reading all pages."""
        return [item async for item in self]

    async def first(self) -> T | None:
        """The first item, or None when the collection holds none."""
        items, _ = await self._read_page(1, None)
        return items[0] if items else None

    async def count(self) -> int:
        """How many items the query holds (filter applied), over every page.

        Select=COUNT when the key range holds only this model's items; where another model's
        items may share it, the key attributes are read and the model's items counted.
        """
        request, match = self._counting()
        return await count_items(self._send, request, match, Tally())

    def __aiter__(self) -> AsyncIterator[T]:
        if self._loads is not None:
            return self._loaded_pages()
        return iterate(self._sender, self.read, self._accept)

    async def _loaded_pages(self) -> AsyncIterator[T]:
        # Page by page: each page's parents are handed out once their loads are done.
        start: Item | None = None
        while True:
            items, start = await self._read_page(None, start)
            for item in items:
                yield item
            if start is None:
                return


class Scan(msgspec.Struct, Generic[T], frozen=True):
    """Every item of one model (or of every model) in the table or an index, read lazily.

    With ``segments=N`` the table is read in N parallel segments. ``async for`` reads them all
    concurrently, a page ahead per segment; ``page`` reads one segment (``segment(i)``).
    """

    _send: Sender
    read: ScanRead
    _accept: Accept[T]
    _cursors: CursorCodec
    _table: Table
    _info: ModelInfo[Any] | None = None
    _where: Condition | None = None
    #: The segments this scan reads (all of them unless ``segment(i)`` chose one).
    _only: int | None = None
    #: Sends the Scan and reads whole the items the index holds in part (None: not needed).
    _whole: Sender | None = None

    @property
    def _sender(self) -> Sender:
        return self._send if self._whole is None else self._whole

    def _reads(self) -> list[ScanRead]:
        if self._only is not None:
            return [msgspec.structs.replace(self.read, segment=self._only)]
        return [msgspec.structs.replace(self.read, segment=i) for i in range(self.read.segments)]

    def segment(self, number: int) -> Scan[T]:
        """Only segment ``number`` of ``segments`` (to share a scan among workers)."""
        if type(number) is not int or not 0 <= number < self.read.segments:
            raise DefinitionError(
                f"segment must be an int from 0 to {self.read.segments - 1} (segments="
                f"{self.read.segments}); got {number!r}"
            )
        return msgspec.structs.replace(self, _only=number)

    def filter(self, condition: Condition) -> Scan[T]:
        """Only items that meet ``condition`` (a FilterExpression; ``&`` with earlier filters).

        ``db.scan(Model)``: paths are the model's field paths (``Attr("shelf.room")``), sent as
        the attributes the fields are stored under. ``db.scan(None)`` reads items of every
        model, so no field names apply: paths there name stored attributes as they are
        (``Attr("Email")``, ``Attr("GSI1-PK")``). ``limit=N`` means N matching items.
        """
        read, where = _with_filter(
            self._info, self.read, self._where, condition, index=self.read.index
        )
        return msgspec.structs.replace(self, read=read, _where=where)

    def project(self, view: type[V]) -> Scan[V]:
        """The model's items read as ``view`` (see Query.project); not on ``db.scan(None)``."""
        if self._info is None:
            raise DefinitionError(
                "project() needs the scan's model: db.scan(Model).project(View), not db.scan(None)"
            )
        info, index = self._info, self.read.index
        found = view_of(info, view)
        decode = found.decode

        def accept(raw: Item) -> V | None:
            return decode(raw) if info.matches(raw, index) else None

        return Scan(
            _send=self._send,
            read=msgspec.structs.replace(
                self.read, projection=found.projection(self.read.key_attrs), parse=None
            ),
            _accept=accept,
            _cursors=self._cursors,
            _table=self._table,
            _info=info,
            _where=self._where,
            _only=self._only,
            _whole=self._whole if view_reads_whole(info, view, index) else None,
        )

    def with_capacity(self) -> Scan[T]:
        """The same scan asking for ReturnConsumedCapacity=TOTAL: ``Page.consumed`` is set."""
        return msgspec.structs.replace(self, read=msgspec.structs.replace(self.read, capacity=True))

    def explain(self, *, count: bool = False) -> list[Request]:
        """The first Scan request of each segment (``count=True``: what ``count()`` sends)."""
        return (
            [request for request, _ in self._counting()]
            if count
            else [read.request() for read in self._reads()]
        )

    def requests(self) -> list[Request]:
        """The first Scan of each segment, and the BatchGetItem that may follow each page.

        On an index that holds the items in part (KEYS_ONLY, INCLUDE), each page's items are
        read whole by their table keys (shown with empty Keys).
        """
        return _requests(self.explain(), self._whole, self.read.table_name)

    def _counting(self) -> list[Counting]:
        index = self.read.index
        if self._info is None:
            table = self._table

            def any_model(raw: Item) -> bool:
                return table.model_of(raw, index) is not None

            match: Callable[[Item], bool] | None = any_model
        else:
            match = scan_match(self._info, index)
        return [_counting(read, match, self._table) for read in self._reads()]

    async def page(self, limit: int | None = None, cursor: str | None = None) -> Page[T]:
        """One page of up to ``limit`` items of one segment after ``cursor`` (None: the start)."""
        check_limit(limit)
        reads = self._reads()
        if len(reads) != 1:
            raise DefinitionError(
                f"a scan of {len(reads)} segments has a page in each; read one with "
                "scan.segment(i).page(...), or iterate the whole scan with async for"
            )
        (read,) = reads
        start = None if cursor is None else self._cursors.decode_scan(cursor, read)
        tally = Tally()
        items, after = await read_page(
            self._sender, read, self._accept, limit=limit, start=start, tally=tally
        )
        return _page(items, after, lambda key: self._cursors.encode_scan(key, read), tally)

    async def all(self) -> list[T]:
        """Every item, reading all segments."""
        return [item async for item in self]

    async def count(self) -> int:
        """How many items the scan holds (filter applied); segments are counted concurrently."""
        countings = self._counting()
        match = countings[0][1]  # the same for every segment
        requests = [request for request, _ in countings]
        return await count_segments(self._send, requests, match, Tally())

    def __aiter__(self) -> AsyncIterator[T]:
        return iterate_segments(self._sender, self._reads(), self._accept)
