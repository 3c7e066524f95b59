"""A connection's reads: gets, queries, scans, loads, and turning items into bound objects.

:class:`Reads` is the part of a :class:`~dynorm.io.database.Database` behind ``get``,
``get_many``, ``transact_get``, ``load``, ``query`` and ``scan``, and the
:class:`~dynorm.io.loaders.LoaderReader` that ``io/loading.py``, ``io/queryload.py`` and
``io/sharded.py`` read through. It plans each read with ``mapping/readplan.py`` and
``mapping/reading.py``, sends through the connection's send (pages through ``io/paging.py``,
reads by key through :class:`~dynorm.io.batching.Batches`), and decodes what comes back with
each model's generated decoder. Objects are bound to the Reads (a Database's ``db.reads``),
so their relationship loaders read through the connection they came from.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import msgspec

from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec
from dynorm.core.errors import DefinitionError
from dynorm.core.requests import CollectionRead, Request
from dynorm.mapping.model import ModelInfo, info_of
from dynorm.mapping.reading import (
    Finished,
    finish_query,
    finish_scan,
    narrowed,
    partial_of,
    scan_read,
)
from dynorm.mapping.readplan import (
    normalize_options,
    plan_get,
    query_read,
    transact_get_reads,
)
from dynorm.mapping.relations import LoadOption, Relationship, embedded_of, relationships_of
from dynorm.mapping.state import InstanceState, Loaded, bind
from dynorm.mapping.table import Table

from .batching import Batches
from .loading import execute_get, found_item, load_all
from .paging import Sender, iterate, read_page
from .query import Query, Scan
from .queryload import QueryLoad
from .tables import Connected, Tables, table_of

if TYPE_CHECKING:
    from .coalesce import Coalescer

__all__ = ["Reads"]

T = TypeVar("T")


class Reads:
    """Reads of one connection, and the Reader its loading code reads through.

    ``send`` is the connection's send, ``batches`` reads by key, ``cursors`` makes and checks
    page cursors, ``coalescer`` (``connect(coalesce=True)``, else None) is where plain gets
    wait to share a BatchGetItem. Decoded objects are bound to this Reads.
    """

    def __init__(
        self,
        send: Sender,
        tables: Tables,
        batches: Batches,
        *,
        cursors: CursorCodec,
        coalescer: Coalescer | None,
    ) -> None:
        self._tables = tables
        self._coalescer = coalescer
        #: The Reader's ports, as attributes: a read reaches them without a call of its own.
        self.send: Final = send
        self.fetch: Final = batches.fetch
        self.fetch_named: Final = batches.fetch_named
        self.cursors: Final = cursors
        self.name_of: Final = tables.name_of

    def acceptor(
        self,
        info: ModelInfo[T],
        index: str | None,
        *,
        items: Literal["collection", "any", "classified"] = "collection",
    ) -> Callable[[Item], T | None]:
        """Decodes ``info``'s items (binding them to this Reads) and drops all others (None).

        ``items`` says where they come from: ``"collection"``, one Query's results (or a read
        by key), where the sort key decides; ``"any"``, a scan, where both keys do;
        ``"classified"``, items the table's classifier already gave to this model.
        """
        tests = info.tests(index)
        matches = {"collection": tests.in_collection, "any": tests.whole}.get(items)
        decode, generated = info.decode, info.codec.decode
        adopt = self.adopt if relationships_of(info) else None
        shape = tests.shape if items == "collection" else None
        if shape is not None and adopt is None:
            # The hot loop's common case with every step inline (one call per item, not four).
            attr, prefix, delimiter, count = shape

            def accept_simple(raw: Item) -> T | None:
                value = raw.get(attr)
                text = None if value is None else value.get("S")
                if text is None or not text.startswith(prefix) or text.count(delimiter) != count:
                    return None
                try:
                    found: T = generated(raw)
                except Exception:  # noqa: BLE001 - the careful path below explains or recovers
                    found = decode(raw)
                return found

            return accept_simple

        def accept(raw: Item) -> T | None:
            if matches is not None and not matches(raw):
                return None
            try:
                obj: T = generated(raw)
            except Exception:  # noqa: BLE001 - the careful path below explains or recovers
                obj = decode(raw)
            if adopt is not None:
                adopt(info, obj, raw)
            return obj

        return accept

    async def settle(self) -> None:
        """Before the connection closes: pending coalesced gets are sent and answered."""
        if self._coalescer is not None:
            await self._coalescer.settle()

    def adopt(self, info: ModelInfo[Any], obj: object, item: Item) -> InstanceState:
        """Bind an object decoded from ``item`` and keep the children embedded in it."""
        state = bind(obj, self)
        for rel in embedded_of(info):
            codec = rel.embedded
            if codec is not None and codec.attribute in item:
                children = codec.decode(item, key=info.describe(item))
                state.loaded[rel.name] = Loaded(children, None, asked=False)  # see Loaded.asked
        return state

    def read_page(
        self,
        read: CollectionRead,
        accept: Callable[[Item], T | None],
        *,
        limit: int | None,
        start: Item | None,
        on_page: Callable[[list[Item]], None] | None = None,
        ahead: int = 0,
    ) -> Awaitable[tuple[list[T], Item | None]]:
        """Up to ``limit`` accepted items after ``start``, and the key to resume from."""
        send = self.reader(read.index, table=self._tables.of_name(read.table_name).table)
        return read_page(send, read, accept, limit=limit, start=start, on_page=on_page, ahead=ahead)

    def iterate(
        self, read: CollectionRead, accept: Callable[[Item], T | None], *, start: Item | None = None
    ) -> AsyncIterator[T]:
        """Every accepted item from ``start`` on, page by page (the next page prefetched)."""
        send = self.reader(read.index, table=self._tables.of_name(read.table_name).table)
        return iterate(send, read, accept, start=start)

    def reader(
        self,
        index: str | None,
        partial: frozenset[str] | None = None,
        *,
        table: Table | None = None,
    ) -> Sender:
        """What sends reads of ``index``, reading whole items where it holds them in part.

        Each page's items of the ``partial`` models (None: every model the index holds only in
        part, KEYS_ONLY or INCLUDE) are read whole by their table keys (BatchGetItem, 100 keys
        a request), in the page's order. ``table``: whose index (None: the only table's).
        """
        table = self._tables.only("reader()").table if table is None else table
        if partial is None:
            partial = partial_of(table, index, ())
        if index is None or not partial:
            return self.send
        return functools.partial(self._send_whole, table, index, partial)

    async def _send_whole(
        self, table: Table, index: str, partial: frozenset[str], request: Request
    ) -> dict[str, Any]:
        response = await self.send(request)
        items: list[Item] = response.get("Items") or []
        classify = table.classifier(index)
        wanted = [(info := classify(raw)) is not None and info.name in partial for raw in items]
        primary = table.primary_attributes
        keys = [{a: raw[a] for a in primary} for raw, w in zip(items, wanted, strict=True) if w]
        if not keys:
            return response
        found = await self.fetch(keys, table=table)
        index_keys = [a for a in table.key_attributes(index) if a]
        whole = []
        for raw, fetch in zip(items, wanted, strict=True):
            full = found.get(key_id({a: raw[a] for a in primary})) if fetch else raw
            # Gone since the index was read, or moved out of this index collection: left out.
            if full is not None and all(full.get(a) == raw.get(a) for a in index_keys):
                whole.append(full)
        return {**response, "Items": whole}

    def attach(self, obj: T) -> T:
        """Bind ``obj`` to the connection, so its relationship loaders read through it."""
        info_of(type(obj))
        bind(obj, self)
        return obj

    async def get(
        self,
        model: type[T],
        *,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        consistent: bool = False,
        **key: object,
    ) -> T:
        """``Database.get``."""
        connected = self._tables.connected(model)
        info = connected.table.info(model)
        options = normalize_options(info, load)
        plan = plan_get(
            info, key, options, connected.name, consistent=consistent, name_of=self._tables.name_of
        )
        if self._coalescer is not None and plan.single:
            raw = await self._coalescer.get(connected.name, plan.parent_key, consistent=consistent)
            return found_item(self, info, raw, key)[0]
        return await execute_get(self, info, plan, key)

    async def get_many(
        self,
        model: type[Any] | Sequence[tuple[type[Any], Mapping[str, object]]],
        keys: Sequence[Mapping[str, object]] | None = None,
        *,
        consistent: bool = False,
    ) -> list[Any]:
        """``Database.get_many``."""
        if isinstance(model, type):
            pairs: list[tuple[type[Any], Mapping[str, object]]] = [(model, k) for k in keys or ()]
        else:
            if keys is not None:
                raise TypeError(
                    "db.get_many takes (Model, keys) or a list of (Model, key) pairs, not both"
                )
            pairs = list(model)
        wanted: list[tuple[Connected, ModelInfo[Any], Item]] = []
        for i, entry in enumerate(pairs):
            shape: object = entry  # callers without a type checker pass anything
            if not (isinstance(shape, tuple) and len(shape) == 2 and isinstance(shape[1], Mapping)):
                raise DefinitionError(
                    "db.get_many takes (Model, [key, ...]) or [(Model, {key field: value}), "
                    f"...]; item {i} is {entry!r}"
                )
            connected = self._tables.connected(entry[0])
            info = connected.table.info(entry[0])
            info.check_key_values(entry[1])
            wanted.append((connected, info, info.primary_key(entry[1])))
        found = await self.fetch_named([(c.name, k) for c, _, k in wanted], consistent=consistent)
        accepts: dict[ModelInfo[Any], Callable[[Item], Any]] = {}
        out: list[Any] = []
        for connected, info, key in wanted:
            raw = found.get((connected.name, key_id(key)))
            if raw is None:
                out.append(None)
                continue
            accept = accepts.get(info)
            if accept is None:
                accept = accepts[info] = self.acceptor(info, None)
            out.append(accept(raw))
        return out

    async def transact_get(
        self, *wanted: tuple[type[Any], Mapping[str, object]]
    ) -> tuple[Any, ...]:
        """``Database.transact_get``."""
        plan = transact_get_reads(wanted, self._locate)
        gets = [e["Get"] for e in plan.request.params["TransactItems"]]
        names = {g["TableName"] for g in gets}
        request = plan.request
        if len(names) == 1:  # typed parsing is per table
            parse = self._tables.of_name(names.pop()).table.parser("TransactGetItems")
            request = msgspec.structs.replace(request, parse=parse)
        responses = (await self.send(request)).get("Responses", [])
        found = {
            (g["TableName"], key_id(g["Key"])): r["Item"]
            for g, r in zip(gets, responses, strict=True)
            if r.get("Item")
        }
        result: list[Any] = []
        for info, key in zip(plan.infos, plan.keys, strict=True):
            raw = found.get((self._tables.connected(info.cls).name, key_id(key)))
            result.append(None if raw is None else self.acceptor(info, None)(raw))
        return tuple(result)

    async def load(
        self, objs: Sequence[T], *relationships: Relationship[Any, T] | LoadOption[T]
    ) -> Sequence[T]:
        """``Database.load``."""
        if not objs:
            return objs
        model = type(objs[0])
        strays = {type(o).__name__ for o in objs if type(o) is not model}
        if strays:
            raise TypeError(
                f"db.load takes objects of one model; got {model.__name__} and {strays}"
            )
        info = self._tables.connected(model).table.info(model)
        options = normalize_options(info, relationships)
        await load_all(self, info, objs, options)
        return objs

    def query(
        self,
        model: type[T],
        index: str | None = None,
        *,
        consistent: bool = False,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        **components: object,
    ) -> Query[T]:
        """``Database.query``."""
        connected = self._tables.connected(model)
        info = connected.table.info(model)
        finished = query_read(info, index, components, connected.name, consistent=consistent)
        loads = None
        if load:
            loads = QueryLoad(self, info, dict(components), tuple(normalize_options(info, load)))
        return self._query(info, finished, loads)

    def query_collection(self, info: ModelInfo[T], read: CollectionRead) -> Query[T]:
        """The lazy Query of ``info``'s items in ``read`` (a relationship's ``.query()``)."""
        return self._query(info, finish_query(info, read))

    def _query(
        self,
        info: ModelInfo[T],
        finished: Finished[CollectionRead],
        loads: QueryLoad[T] | None = None,
    ) -> Query[T]:
        read = finished.read
        # With load=, the children a Query shares are read whole too.
        whole = finished.partial if loads is None else partial_of(info.table, read.index, ())
        accept = self.acceptor(info, read.index)
        return Query(
            _send=self.send,
            read=read,
            _accept=narrowed(accept, read),
            _cursors=self.cursors,
            _info=info,
            _where=finished.entity,
            _loads=loads,
            _whole=self.reader(read.index, whole, table=table_of(info)) if whole else None,
        )

    def scan(
        self,
        model: type[T] | None,
        *,
        segments: int = 1,
        index: str | None = None,
        consistent: bool = False,
        table: Table | None = None,
    ) -> Scan[Any]:
        """``Database.scan``."""
        if model is not None:
            connected = self._tables.connected(model)
        elif table is None:
            connected = self._tables.only("scan(None)", "name one: db.scan(None, table=table)")
        else:
            connected = self._tables.of_table(table)
        info = None if model is None else connected.table.info(model)
        models = () if info is None else (info.name,)
        read = scan_read(
            connected.table,
            connected.name,
            index,
            segments=segments,
            consistent=consistent,
            models=models,
        )
        finished = finish_scan(connected.table, info, read)
        whole = finished.partial
        return Scan(
            _send=self.send,
            read=finished.read,
            _accept=self._scan_acceptor(connected.table, info, index),
            _cursors=self.cursors,
            _table=connected.table,
            _info=info,
            _where=finished.entity,
            _whole=self.reader(index, whole, table=connected.table) if whole else None,
        )

    def _scan_acceptor(
        self, table: Table, info: ModelInfo[Any] | None, index: str | None
    ) -> Callable[[Item], Any]:
        if info is not None:
            return self.acceptor(info, index, items="any")
        classify = table.classifier(index)
        accepts: dict[ModelInfo[Any], Callable[[Item], Any]] = {}

        def accept_any(raw: Item) -> Any:
            found = classify(raw)
            if found is None:
                return None
            accept = accepts.get(found)
            if accept is None:
                accept = accepts[found] = self.acceptor(found, index, items="classified")
            return accept(raw)

        return accept_any

    def _locate(self, model: type[Any]) -> tuple[ModelInfo[Any], str]:
        """``model``'s info and the name its table has on this connection."""
        connected = self._tables.connected(model)
        return connected.table.info(model), connected.name
