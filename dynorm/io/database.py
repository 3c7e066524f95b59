"""The Database: the public face of dynorm's I/O.

Everything else in dynorm decides *what* to send as plain
:class:`~dynorm.core.requests.Request` values; this module sequences them, retries batch
remainders, and sends each through the transport (``transport``), which talks to DynamoDB,
retries, and maps every failure to dynorm's errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast, overload

import msgspec

from dynorm.core.chunks import (
    BATCH_GET_MAX,
    BATCH_WRITE_MAX,
    DEFAULT_MAX_ITEMS,
    chunked,
    key_id,
)
from dynorm.core.codec.converter import Item
from dynorm.core.cursor import CursorCodec, secret_from
from dynorm.core.errors import (
    DatabaseError,
    DefinitionError,
    DynormError,
    LimitExceededError,
    TableNotFoundError,
    TransactionCanceledError,
)
from dynorm.core.expressions import Condition
from dynorm.core.requests import (
    CollectionRead,
    Request,
    delete_table,
    describe_table,
    get_item,
)
from dynorm.core.steps import (
    CANCELLED,
    Fetch,
    Plan,
    ReadAll,
    ReadEach,
    Send,
    SendAll,
    Step,
    Together,
    WriteBatch,
    together_fetches,
    together_writes,
)
from dynorm.mapping.cancellation import named_cancellation
from dynorm.mapping.model import ModelInfo, ModelTable, info_of
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
from dynorm.mapping.relations import (
    HasManyRelation,
    LoadOption,
    Relationship,
    embedded_of,
    relationships_of,
)
from dynorm.mapping.state import InstanceState, Loaded, bind, state_of
from dynorm.mapping.table import Table
from dynorm.wire.retry import QUOTA_CAPACITY, RetryQuota

from .connection import Connection, open_connection
from .loading import execute_get, found_item, load_all
from .paging import Sender, iterate, pages, read_page
from .query import Query, Scan
from .queryload import QueryLoad
from .tablecreate import table_status
from .tables import Connected, Tables, name_tables, table_of
from .transport import RequestListener, Transport

# The write side, explain, transactions, batches, coalescing and rate limits are imported on
# first use (``_Writing``, ``_Batches``, ``Database.explain``, the options of ``connect``): a
# process that only gets and queries never loads them (tests/integration/test_lean_connection.py).
if TYPE_CHECKING:
    from typing_extensions import Unpack

    from dynorm.core.throughput import RateLimit, Stats
    from dynorm.mapping.cascade import CascadeReport
    from dynorm.mapping.writeplan import Action, WritePlanner
    from dynorm.mapping.writes import Returns, UpdateOptions

    from .coalesce import Coalescer, FetchKeys, Found
    from .explaining import DatabaseExplain
    from .ratelimit import Limiter
    from .transaction import Transaction

__all__ = ["Database", "connect"]

T = TypeVar("T")
P = TypeVar("P")
A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")

#: How many requests one Database keeps in flight at most (and its HTTP connection pool size):
#: enough for `db.load` of a typical page of parents to go out in one round trip.
DEFAULT_MAX_CONCURRENCY: Final = 64
#: Attempts per request (the first and its retries), and rounds without progress per batch
#: (a batch round that stores or reads anything does not count; see ``_batch``).
DEFAULT_MAX_ATTEMPTS: Final = 5
#: How many requests of one SendAll step (a fan-out of copy transactions) are in flight at once:
#: after a failure, the ones not yet sent are not sent at all.
SEND_ALL_WINDOW: Final = 16
#: Retry tokens one Database holds (see ``connect(retry_quota=...)``).
DEFAULT_RETRY_QUOTA: Final = QUOTA_CAPACITY


def _update_loaded(
    parent: object, rel: HasManyRelation[Any], child: object, *, adding: bool, position: int | None
) -> None:
    """Keep a parent's loaded children in step with an add or remove that was just written."""
    state = state_of(parent)
    loaded = None if state is None else state.loaded.get(rel.name)
    if loaded is None:
        return
    codec = rel.embedded
    if not adding and codec is not None and codec.key is None:
        # A list has no keys: drop exactly the entry that was removed from the item.
        if position is not None and position < len(loaded.items):
            del loaded.items[position]
        return

    def same(other: object) -> bool:
        if codec is not None:
            return codec.same_child(other, child)
        info = rel.target_info
        return bool(info.key_of(other) == info.key_of(child))

    kept = [c for c in loaded.items if not same(c)]
    if not adding:
        loaded.items = kept
    elif codec is not None and codec.key is not None:
        # A map's children are read in key order: an added one takes its place among them.
        loaded.items = sorted([*kept, child], key=attrgetter(codec.key))
    else:
        loaded.items = [*kept, child]


def _limiter(rate_limit: RateLimit | Literal["adaptive"]) -> Limiter:
    """``connect(rate_limit=...)``'s limiter (its module imported only when one is asked for)."""
    from .ratelimit import Limiter  # noqa: PLC0415 - once per connection, when asked for

    return Limiter(rate_limit)


def _coalescer(fetch: FetchKeys, batch_get_size: int) -> Coalescer:
    """``connect(coalesce=True)``'s coalescer (its module imported only then)."""
    from .coalesce import Coalescer  # noqa: PLC0415 - once per connection, when asked for

    return Coalescer(fetch, batch_get_size)


def _nothing_planned() -> Plan[None]:
    """The plan of no writes: it sends nothing."""
    yield from ()


class _Writing:
    """What a Database's updates and transactions use, imported on the first of them.

    One per Database (``Database._writing``, a cached property): after the first call each
    name is an attribute lookup away, and a process that only gets and queries never imports
    the write side (the write planner, copies, cascades, update expressions, difflib).
    """

    def __init__(self) -> None:
        # Imported here on purpose: once per Database (see the class docstring).
        from dynorm.mapping.writeplan import returned_fields  # noqa: PLC0415
        from dynorm.mapping.writes import UpdateOps, return_values  # noqa: PLC0415

        from .transaction import Transaction  # noqa: PLC0415

        self.update_ops = UpdateOps
        self.return_values = return_values
        self.returned_fields = returned_fields
        self.transaction = Transaction


class _Batches:
    """The BatchGetItem/BatchWriteItem loops (``io/batch.py``), imported on a first batch."""

    def __init__(self) -> None:
        from .batch import (  # noqa: PLC0415 - once per Database (see _Writing)
            drain_get,
            drain_get_tables,
            drain_write,
            drain_write_tables,
        )

        self.drain_get = drain_get
        self.drain_get_tables = drain_get_tables
        self.drain_write = drain_write
        self.drain_write_tables = drain_write_tables


class Database:
    """A connection to one table, or to several. Create it with :func:`connect`.

    Every call routes by the model's table: ``db.get(AuditEntry, ...)`` reads the audit table,
    and transactions, ``transact_get``, ``get_many`` and ``put_all`` span tables.
    """

    def __init__(
        self,
        table: Table | Sequence[Table],
        connection: Connection,
        *,
        table_name: str | None = None,
        table_names: Mapping[Table, str] | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        batch_get_size: int = BATCH_GET_MAX,
        batch_write_size: int = BATCH_WRITE_MAX,
        cursor_secret: bytes | None = None,
        retry_quota: int | None = DEFAULT_RETRY_QUOTA,
        coalesce: bool = False,
        exactly_once: bool = False,
        rate_limit: RateLimit | Literal["adaptive"] | None = None,
    ) -> None:
        if not 1 <= batch_get_size <= BATCH_GET_MAX:
            raise LimitExceededError(
                f"batch_get_size must be 1..{BATCH_GET_MAX}; got {batch_get_size}"
            )
        if not 1 <= batch_write_size <= BATCH_WRITE_MAX:
            raise LimitExceededError(
                f"batch_write_size must be 1..{BATCH_WRITE_MAX}; got {batch_write_size}"
            )
        self._tables: Final = Tables(
            table,
            table_name=table_name,
            table_names=table_names,
            batch_get_size=batch_get_size,
            batch_write_size=batch_write_size,
        )
        #: The tables of this connection, in the order given.
        self.tables: Final = self._tables.tables
        connected = self._tables.connected_tables()
        self._transport = Transport.for_connection(
            connection,
            key_attributes={c.name: c.table.primary_attributes for c in connected},
            max_attempts=max_attempts,
            max_concurrency=max_concurrency,
            quota=None if retry_quota is None else RetryQuota(retry_quota),
            limiter=None if rate_limit is None else _limiter(rate_limit),
        )
        self._max_attempts = max_attempts
        self._batch_get_size = batch_get_size
        self._batch_write_size = batch_write_size
        #: Makes and checks page cursors (HMAC-signed when ``cursor_secret`` is given).
        self.cursors: Final = CursorCodec(cursor_secret)
        #: Where plain gets wait to share a BatchGetItem (``connect(coalesce=True)``), or None.
        self._coalescer: Final = _coalescer(self._fetch_keys, batch_get_size) if coalesce else None
        #: ``update``'s ``exactly_once`` when a call does not say (``connect(exactly_once=)``).
        self._exactly_once = exactly_once
        #: ``explain``, built on first use.
        self._explain: DatabaseExplain | None = None

    @property
    def explain(self) -> DatabaseExplain:
        """The exact requests a call would send (``db.explain.put(obj)``), without sending them."""
        found = self._explain
        if found is None:
            from .explaining import DatabaseExplain  # noqa: PLC0415 - once per Database

            found = self._explain = DatabaseExplain(self._tables, exactly_once=self._exactly_once)
        return found

    @functools.cached_property
    def _writing(self) -> _Writing:
        return _Writing()

    @functools.cached_property
    def _batches(self) -> _Batches:
        return _Batches()

    def __repr__(self) -> str:
        if len(self.tables) == 1:
            return f"<Database table={self.table_name!r}>"
        return f"<Database tables={[c.name for c in self._tables.connected_tables()]!r}>"

    # -- which table -----------------------------------------------------------------------------

    @property
    def table(self) -> Table:
        """The table of a one-table connection (DefinitionError with several: see ``tables``)."""
        return self._tables.only("table").table

    @property
    def table_name(self) -> str:
        """The table's name on a one-table connection (``connect(table_name=...)`` or its own)."""
        return self._tables.only("table_name").name

    @property
    def writes(self) -> WritePlanner:
        """The write planner of a one-table connection's table."""
        return self._tables.only("writes").writes

    def name_of(self, table: ModelTable) -> str:
        """The name ``table`` has on this connection (``table_names=``, else its own)."""
        return self._tables.name_of(table)

    def connected(self, model: type[Any]) -> Connected:
        """The table ``model`` is declared on, as this connection holds it.

        DefinitionError, before anything is sent, when that table was not passed to
        :func:`connect`.
        """
        return self._tables.connected(model)

    def focused(self, table: Table) -> Database:
        """This connection with ``table`` as its one table, for tools written for one table.

        ``db.table``, ``db.table_name``, ``db.tables``, ``db.scan(None)``, a plan's batch
        steps and ``create_table()``/``delete_table()`` without an argument mean ``table``;
        every other call still routes by model. It shares this connection: close this one, not
        the view. A migration of a relationship into another table runs on it.
        """
        view = copy.copy(self)
        tables = self._tables.focused(table)
        view.__dict__.update(_tables=tables, tables=(table,), _explain=None)
        return view

    def connected_tables(self) -> list[Connected]:
        """Every table of this connection, in the order given to :func:`connect` (a view's one)."""
        return self._tables.connected_tables()

    def _locate(self, model: type[Any]) -> tuple[ModelInfo[Any], str]:
        """``model``'s info and the name its table has on this connection."""
        connected = self._tables.connected(model)
        return connected.table.info(model), connected.name

    @property
    def fast_path(self) -> bool:
        """Whether data-plane requests go out on dynorm's fast request path.

        False after ``connect(fast_path=False)``, and when the installed aiobotocore lacks what
        the fast path needs (``connect`` then warns): every request then goes through botocore.
        """
        return self._transport.fast_path

    @property
    def endpoint(self) -> str | None:
        """The endpoint URL requests go to (``https://dynamodb.eu-west-1.amazonaws.com``)."""
        return self._transport.endpoint

    @property
    def region(self) -> str | None:
        """The AWS region requests are signed for."""
        return self._transport.region

    # -- the I/O seam --------------------------------------------------------------------------

    def on_request(self, listener: RequestListener) -> Callable[[], None]:
        """Call ``listener(event)`` after every HTTP request sent; returns an unsubscribe.

        ``event`` is a :class:`~dynorm.RequestEvent`: the operation, table and index, which
        attempt it was, its latency, consumed capacity and outcome, and whether a retry
        follows. Every attempt is one event, so the events count the requests that went over
        the wire (nothing refused before sending, such as missing credentials, is one).
        """
        listeners = self._transport.listeners
        listeners.append(listener)
        return lambda: listeners.remove(listener)

    def stats(self) -> Stats:
        """Requests sent, throttles by table and partition key, and the limiter's rates.

        Counted since the connection opened: every HTTP request (attempt) sent, the attempts
        DynamoDB throttled (in all and by table), the partition key values throttled most
        (a hot partition shows here before it is a problem), and with ``rate_limit=`` each
        bucket's current rate and how often requests waited for it.
        """
        transport = self._transport
        return transport.counts.stats(transport.limiter)

    async def send(self, request: Request) -> dict[str, Any]:
        """Send one request, retried as it allows; every failure is a DynormError subclass.

        A cancelled transaction's reasons name each action's model, table and key.
        """
        try:
            return await self._transport.send(request)
        except TransactionCanceledError as exc:
            raise named_cancellation(exc, request, self._tables.table_named) from exc.__cause__

    def acceptor(
        self,
        info: ModelInfo[T],
        index: str | None,
        *,
        items: Literal["collection", "any", "classified"] = "collection",
    ) -> Callable[[Item], T | None]:
        """Decodes ``info``'s items (binding them here) and drops all others (None).

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
        """Attach an object built in code, so its relationship loaders can read through this db."""
        info_of(type(obj))
        bind(obj, self)
        return obj

    # -- tables --------------------------------------------------------------------------------

    async def create_table(
        self,
        table: Table | None = None,
        /,
        *,
        timeout: float = 60.0,
        key_types: Mapping[str, Literal["S", "N", "B"]] | None = None,
        exists_ok: bool = False,
    ) -> list[Table]:
        """Create every table of the connection (or only ``table``) and wait until each is active.

        Each table is created with every declared index, on-demand billing.
        Key attributes (of the table and its indexes) have the types the Table declares
        (``Table(..., key_types={"Score": "N"})``; strings, ``S``, by default), which its models
        write. ``key_types`` here may give further attributes, that no model fills, their type
        (attribute name -> ``"S"``, ``"N"`` or ``"B"``); declaring them on the Table is better,
        and one contradicting the Table's is a DefinitionError. When a model
        declares ``ttl=``, time to live is then enabled on that attribute (a server without
        UpdateTimeToLive, such as dynalite, is tolerated: nothing expires there).
        A table that exists already is a DatabaseError (ResourceInUseException) unless
        ``exists_ok``: then it is waited for until active and its time to live enabled as
        creating it would (see ``dynorm/io/tablecreate.py``). Returns the tables it created
        (without those that existed).
        """
        chosen = self._chosen(table)
        if key_types is None or len(chosen) == 1:
            made = await asyncio.gather(
                *(self._create(c, timeout, key_types, exists_ok=exists_ok) for c in chosen)
            )
            return [c.table for c, created in zip(chosen, made, strict=True) if created]
        # Several tables: each takes the entries that name its own key attributes.
        held = {c.table: set(c.table.attribute_names()) for c in chosen}
        strays = [name for name in key_types if not any(name in h for h in held.values())]
        if strays:
            raise DefinitionError(
                f"key_types names {strays[0]!r}, which is no key attribute of the tables "
                f"created ({', '.join(repr(c.table.name) for c in chosen)})"
            )
        made = await asyncio.gather(
            *(
                self._create(
                    c,
                    timeout,
                    {k: v for k, v in key_types.items() if k in held[c.table]},
                    exists_ok=exists_ok,
                )
                for c in chosen
            )
        )
        return [c.table for c, created in zip(chosen, made, strict=True) if created]

    def _chosen(self, table: Table | None) -> list[Connected]:
        return self._tables.connected_tables() if table is None else [self._tables.of_table(table)]

    async def _create(
        self,
        connected: Connected,
        timeout: float,
        key_types: Mapping[str, Literal["S", "N", "B"]] | None,
        *,
        exists_ok: bool,
    ) -> bool:
        from .tablecreate import create_one  # noqa: PLC0415 - not on a data path

        return await create_one(
            self.send,
            self._wait_for,
            connected,
            timeout=timeout,
            key_types=key_types,
            exists_ok=exists_ok,
        )

    async def delete_table(self, table: Table | None = None, /, *, timeout: float = 60.0) -> None:
        """Delete every table of the connection (or only ``table``) and wait until it is gone."""

        async def delete(name: str) -> None:
            await self.send(delete_table(name))
            await self._wait_for(name, lambda status: status is None, timeout)

        await asyncio.gather(*(delete(c.name) for c in self._chosen(table)))

    async def describe_table(self, table: Table | None = None, /) -> dict[str, Any] | None:
        """DescribeTable's ``Table`` (keys, indexes, status, item count), or None if missing.

        ``table``: which table of the connection (None: the only one).
        """
        if table is None:
            name = self._tables.only("describe_table()", "name one: db.describe_table(table)").name
        else:
            name = self.name_of(table)
        return await self._describe(name)

    async def _describe(self, name: str) -> dict[str, Any] | None:
        try:
            described = await self.send(describe_table(name))
        except TableNotFoundError:
            return None
        found: dict[str, Any] = described["Table"]
        return found

    async def _wait_for(
        self, name: str, done: Callable[[str | None], bool], timeout: float
    ) -> None:
        delay = 0.01
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            status = table_status(await self._describe(name))
            if done(status):
                return
            if asyncio.get_running_loop().time() > deadline:
                raise DatabaseError(f"table {name!r} is still {status} after {timeout}s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    # -- single items --------------------------------------------------------------------------

    async def get(
        self,
        model: type[T],
        *,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        consistent: bool = False,
        **key: object,
    ) -> T:
        """The item with this key (GetItem), or with ``load=`` the item and its children.

        Raises ItemNotFoundError when there is no such item. On a ``connect(coalesce=True)``
        connection a get without ``load=`` waits for the next turn of the event loop and shares
        a BatchGetItem with the other gets started meanwhile (see docs/performance.md).
        """
        connected = self.connected(model)
        info = connected.table.info(model)
        options = normalize_options(info, load)
        plan = plan_get(
            info, key, options, connected.name, consistent=consistent, name_of=self.name_of
        )
        if self._coalescer is not None and plan.single:
            raw = await self._coalescer.get(connected.name, plan.parent_key, consistent=consistent)
            return found_item(self, info, raw, key)[0]
        return await execute_get(self, info, plan, key)

    async def put(self, obj: T, *, condition: Condition | None = None, overwrite: bool = True) -> T:
        """Store ``obj``. ``overwrite=False`` refuses to replace an existing item.

        A parent with ``Denormalized`` children also rewrites every copy its write changes (and
        reads no child when no copied field changed); a child of one gets its copies filled from
        its parent; a parent with ``Embedded`` children keeps them. See docs/integrity.md.
        """
        connected = self.connected(type(obj))
        plan = connected.writes.put(obj, condition=condition, overwrite=overwrite)
        stored, _ = await self.run(plan, connected.table)
        if relationships_of(connected.table.info(type(obj))):
            bind(stored, self)
        return cast("T", stored)

    async def sync_copies(self, parent: object) -> int:
        """Make every denormalized copy of ``parent``'s fields equal the stored parent's.

        The repair after a :class:`~dynorm.CopiesIncompleteError` (``db.put`` rewrites copies
        itself). Returns how many children were rewritten (also logged on the ``dynorm`` logger).
        """
        connected = self.connected(type(parent))
        return await self.run(connected.writes.sync_copies(parent), connected.table)

    @overload
    async def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: Literal[False] = False,
    ) -> None: ...
    @overload
    async def delete(
        self,
        target: type[Any],
        /,
        *,
        condition: Condition | None = None,
        cascade: Literal[False] = False,
        **key: object,
    ) -> None: ...
    @overload
    async def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: Literal[True],
        max_items: int | None = DEFAULT_MAX_ITEMS,
    ) -> CascadeReport: ...
    @overload
    async def delete(
        self,
        target: type[Any],
        /,
        *,
        condition: Condition | None = None,
        cascade: Literal[True],
        max_items: int | None = DEFAULT_MAX_ITEMS,
        **key: object,
    ) -> CascadeReport: ...
    @overload
    async def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: bool,
        max_items: int | None = DEFAULT_MAX_ITEMS,
    ) -> CascadeReport | None: ...
    @overload
    async def delete(
        self,
        target: type[Any],
        /,
        *,
        condition: Condition | None = None,
        cascade: bool,
        max_items: int | None = DEFAULT_MAX_ITEMS,
        **key: object,
    ) -> CascadeReport | None: ...
    async def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: bool = False,
        max_items: Any = DEFAULT_MAX_ITEMS,
        **key: object,
    ) -> CascadeReport | None:
        """Delete one item: ``db.delete(obj)`` or ``db.delete(Model, **key)``; returns None.

        ``cascade=True`` deletes the whole tree under the item too and returns a
        :class:`~dynorm.CascadeReport` (how many items of each model went): every child its
        ``Partition``, ``Index`` and ``Denormalized`` relationships store as an item of its
        own, their children in turn, and so on (``Embedded`` children go with their parent's
        item). The tree is read first (one Query per parent per relationship); more than
        ``max_items`` items (root included; None: no bound) is refused with nothing deleted.
        The root's ``condition`` and version are checked before anything is deleted; then the
        items go in batches, deepest level first, and the root last, so an interrupted
        cascade leaves no item its surviving parent cannot reach, and calling it again
        finishes the job. See docs/integrity.md, "Cascading deletes".
        """
        if not cascade and max_items is not DEFAULT_MAX_ITEMS:
            raise TypeError("max_items= bounds a cascade; pass it with cascade=True")
        connected = self.connected(target if isinstance(target, type) else type(target))
        plan = connected.writes.delete(
            target, condition=condition, cascade=cascade, key=key, max_items=max_items
        )
        return await self.run(plan, connected.table)

    @overload
    async def update(
        self,
        obj: T,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Literal["new"] = "new",
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> T: ...
    @overload
    async def update(
        self,
        obj: T,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Literal["old"],
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> T | None: ...
    @overload
    async def update(
        self,
        obj: object,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Literal["updated_new", "updated_old"],
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> dict[str, object]: ...
    @overload
    async def update(
        self,
        obj: object,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: None,
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> None: ...
    @overload
    async def update(  # returns= not a literal: any of the above
        self,
        obj: T,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Returns,
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> T | dict[str, object] | None: ...
    async def update(
        self,
        obj: T,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Returns = "new",
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> T | dict[str, object] | None:
        """Change some fields of a stored item (UpdateItem); returns what ``returns`` asks for.

        The operations are keywords (:class:`~dynorm.mapping.writes.UpdateOptions`), mapping field
        paths (``"address.city"``, ``"tags[0]"``) to values encoded as the fields are typed:
        ``set`` replaces values, ``remove`` (a list of paths) deletes them, ``add`` adds to
        numbers and sets, ``append``/``prepend`` add elements at the end/start of lists (a
        missing list counts as empty), ``discard`` takes elements out of sets, and
        ``if_not_exists`` sets values only where the item has none. The item must exist
        (ItemNotFoundError), unless ``upsert=True``: then an absent item is created from
        ``obj`` with the changes applied.

        ``returns``: ``"new"`` the item as stored now (default), ``"old"`` as it was (None when
        the upsert created it), ``"updated_new"``/``"updated_old"`` a dict of the changed
        fields after/before (field name -> value decoded as the field is typed; a field the
        update removed is absent), None nothing (the cheapest reply).

        ``exactly_once`` (None: the connection's ``connect(exactly_once=...)``, False unless
        set) sends the update as a TransactWriteItems of one action with a
        ``ClientRequestToken`` kept across every retry, so DynamoDB applies it once whatever
        happens to the replies (an ``add=`` or ``append=`` never raises OutcomeUnknownError
        for a lost reply that a retry can settle). It costs two write units per KB, like any
        transaction, and returns no item: ``"new"`` and ``"updated_new"`` read it back with
        one consistent GetItem after the write (so another writer's change in between may
        show), None reads nothing, and ``"old"``/``"updated_old"`` are refused
        (ExpressionError). An update that rewrites children's copies is refused too: write
        it with ``db.transaction()``, whose ``tx.update`` is exactly-once.
        """
        connected = self.connected(type(obj))
        info = connected.table.info(type(obj))
        writing = self._writing
        update = writing.update_ops(**ops)
        wire = writing.return_values(returns, update)
        once = self._exactly_once if exactly_once is None else exactly_once
        plan = connected.writes.update(
            obj, update, condition=condition, upsert=upsert, returns=wire, exactly_once=once
        )
        item = await self.run(plan, connected.table)
        if returns is None:
            return None
        if returns in ("updated_new", "updated_old"):
            return writing.returned_fields(info, item, update.paths())
        if item is None:
            return None  # "old" of an item the upsert created
        updated: T = info.decode(item)
        if relationships_of(info) and returns == "new":
            self.adopt(info, updated, item)
        return updated

    # -- running plans -------------------------------------------------------------------------

    async def run(self, plan: Plan[T], table: Table | None = None) -> T:
        """Run a write plan: send each step it yields and hand it the result (or the error).

        ``table``: the table of the plan's batch steps (Fetch, WriteBatch), for a plan of one
        table's planner (None: the only table's). Steps of several tables come as
        :class:`~dynorm.core.steps.Together`, which names each step's table.
        """
        result: Any = None
        error: DynormError | None = None
        try:
            while True:
                try:
                    step = plan.send(result) if error is None else plan.throw(error)
                except StopIteration as stop:
                    value: T = stop.value
                    return value
                result, error = None, None
                try:
                    result = await self._step(step, table)
                except DynormError as exc:
                    error = exc
        finally:
            plan.close()  # cancelled, or failed outside dynorm: the plan's own cleanup runs

    async def _step(self, step: Step, table: Table | None = None) -> Any:
        if isinstance(step, Together):
            return await self._together(step)
        if isinstance(step, Send):
            return await self.send(step.request)
        if isinstance(step, SendAll):
            return await self._send_all(step.requests)
        if isinstance(step, ReadAll):
            return await self._read_all(step.request)
        if isinstance(step, ReadEach):
            return await self._read_each(step.requests)
        if isinstance(step, WriteBatch):
            await self._write_batches(list(step.writes), self._plan_table(table))
            return None
        if isinstance(step, Fetch):
            return await self.fetch(step.keys, consistent=step.consistent, table=table)
        raise TypeError(f"unknown plan step {step!r}")  # pragma: no cover

    def _plan_table(self, table: Table | None) -> str:
        if table is None:
            return self._tables.only("run(plan) of a batch step").name
        return self.name_of(table)

    async def _together(self, together: Together) -> list[Any]:
        """Run steps of several tables at once: their batches share requests (see Together)."""
        steps = together.steps
        outcomes: list[Any] = [None] * len(steps)
        fetched: dict[tuple[str, bool, Any], Item] = {}

        async def write(chunk: dict[str, list[dict[str, Any]]]) -> None:
            await self._batches.drain_write_tables(
                self.send, chunk, max_attempts=self._max_attempts, sleep=asyncio.sleep
            )

        async def read(chunk: dict[str, list[Item]], *, consistent: bool) -> None:
            found = await self._get_tables(chunk, consistent=consistent)
            for (name, ident), raw in found.items():
                fetched[(name, consistent, ident)] = raw

        async def batches() -> None:
            jobs = [write(c) for c in together_writes(steps, self._batch_write_size)]
            jobs += [
                read(c, consistent=consistent)
                for consistent in (True, False)
                for c in together_fetches(steps, self._batch_get_size, consistent=consistent)
            ]
            await asyncio.gather(*jobs)

        async def other(i: int, name: str, step: Step) -> None:
            try:
                outcomes[i] = await self._step(step, self._tables.of_name(name).table)
            except DynormError as exc:
                outcomes[i] = exc

        batched = [i for i, (_, s) in enumerate(steps) if isinstance(s, Fetch | WriteBatch)]
        error: DynormError | None = None
        try:
            await asyncio.gather(
                batches(),
                *(other(i, n, s) for i, (n, s) in enumerate(steps) if i not in batched),
            )
        except DynormError as exc:
            error = exc
        for i in batched:
            name, step = steps[i]
            if error is not None:
                outcomes[i] = error
            elif isinstance(step, Fetch):
                outcomes[i] = {
                    key_id(k): fetched[(name, step.consistent, key_id(k))]
                    for k in step.keys
                    if (name, step.consistent, key_id(k)) in fetched
                }
        return outcomes

    async def _read_all(self, request: Request) -> list[Item]:
        return [item async for page in pages(self.send, request) for item in page.get("Items", [])]

    async def _read_each(self, requests: Sequence[Request]) -> list[list[Item]]:
        """Each read whole, concurrently; a failure cancels the others (reads change nothing)."""
        window = asyncio.Semaphore(SEND_ALL_WINDOW)

        async def one(request: Request) -> list[Item]:
            async with window:
                return await self._read_all(request)

        tasks = [asyncio.ensure_future(one(r)) for r in requests]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _send_all(self, requests: Sequence[Request]) -> list[Any]:
        """Send concurrently; after the first failure nothing more is sent (see SendAll)."""
        outcomes: list[Any] = [CANCELLED] * len(requests)
        window = asyncio.Semaphore(SEND_ALL_WINDOW)
        failed = False

        async def one(i: int) -> None:
            nonlocal failed
            async with window:
                if failed:
                    return  # not sent: stays CANCELLED
                try:
                    outcomes[i] = await self.send(requests[i])
                except DynormError as exc:
                    outcomes[i] = exc
                    failed = True
                except BaseException:
                    failed = True
                    raise

        # Requests already sent are awaited rather than cancelled: a cancelled HTTP request may
        # still be applied by the server, and the plan must know what was written. A failure
        # outside dynorm's errors (a bug) is raised once every request has settled.
        for result in await asyncio.gather(
            *(one(i) for i in range(len(requests))), return_exceptions=True
        ):
            if isinstance(result, BaseException):
                raise result
        return outcomes

    # -- many items ----------------------------------------------------------------------------

    @overload
    async def get_many(
        self, model: type[T], keys: Sequence[Mapping[str, object]], *, consistent: bool = False
    ) -> list[T | None]: ...
    @overload
    async def get_many(
        self,
        model: Sequence[tuple[type[Any], Mapping[str, object]]],
        /,
        *,
        consistent: bool = False,
    ) -> list[Any]: ...
    async def get_many(
        self,
        model: type[Any] | Sequence[tuple[type[Any], Mapping[str, object]]],
        keys: Sequence[Mapping[str, object]] | None = None,
        *,
        consistent: bool = False,
    ) -> list[Any]:
        """Items for ``keys`` in order, None where missing (BatchGetItem, 100 keys a request).

        ``db.get_many(Org, [{"name": "A"}, {"name": "B"}])`` reads one model's items;
        ``db.get_many([(Order, {...}), (AuditEntry, {...})])`` reads items of any models, of
        any tables of the connection, sharing requests (100 keys a request in all).
        """
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
            connected = self.connected(entry[0])
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

    async def fetch_named(
        self, keys: Sequence[tuple[str, Item]], *, consistent: bool = False
    ) -> dict[tuple[str, Any], Item]:
        """Raw items by (table name, ``key_id``) for (table name, key) pairs.

        Any tables of this connection: BatchGetItem, the tables sharing requests (100 keys a
        request), each table's keys in the order first named.
        """
        names = list(dict.fromkeys(n for n, _ in keys))  # in order: the requests are as planned
        if len(names) == 1:
            (name,) = names
            table = self._tables.of_name(name).table
            one = await self.fetch([k for _, k in keys], consistent=consistent, table=table)
            return {(name, ident): raw for ident, raw in one.items()}
        steps = tuple(
            (n, Fetch(tuple(k for u, k in keys if u == n), consistent=consistent)) for n in names
        )
        outcomes = await self._together(Together(steps))
        found: dict[tuple[str, Any], Item] = {}
        for (name, _), outcome in zip(steps, outcomes, strict=True):
            if isinstance(outcome, DynormError):
                raise outcome
            found.update({(name, ident): raw for ident, raw in outcome.items()})
        return found

    async def fetch(
        self,
        keys: Sequence[Item],
        *,
        consistent: bool = False,
        table: ModelTable | None = None,
    ) -> dict[Any, Item]:
        """Raw items for primary keys, by ``key_id`` (BatchGetItem, unprocessed keys retried).

        ``table``: whose keys (None: the only table's).
        """
        connected = self._tables.only("fetch()") if table is None else self._tables.of_table(table)
        unique = list({key_id(k): k for k in keys}.values())
        chunks = list(chunked(unique, self._batch_get_size))
        found_chunks = await asyncio.gather(
            *(
                self._batches.drain_get(
                    self.send,
                    connected.name,
                    chunk,
                    consistent=consistent,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                    parse=connected.table.parser("BatchGetItem"),
                )
                for chunk in chunks
            )
        )
        primary = connected.table.primary_attributes
        return {
            key_id({a: raw[a] for a in primary}): raw for chunk in found_chunks for raw in chunk
        }

    async def _fetch_keys(self, keys: dict[str, list[Item]], *, consistent: bool) -> Found:
        """One coalesced batch of single gets (``io/coalesce.py``): raw items by table and key.

        A batch of one key is sent as the GetItem that get would send alone, so gets awaited
        one at a time send what they send without coalescing. Otherwise one BatchGetItem
        (several tables' entries in one when the batch spans tables), unprocessed keys retried.
        """
        if len(keys) == 1:
            ((name, only),) = keys.items()
            table = self._tables.of_name(name).table
            if len(only) == 1:
                request = get_item(
                    name, only[0], consistent=consistent, parse=table.parser("GetItem")
                )
                raw = (await self.send(request)).get("Item")
                return {} if raw is None else {(name, key_id(only[0])): raw}
            # One table: fetch() reads it, its typed structures parsing the reply.
            found = await self.fetch(only, consistent=consistent, table=table)
            return {(name, ident): raw for ident, raw in found.items()}
        return await self._get_tables(keys, consistent=consistent)

    async def _get_tables(self, keys: dict[str, list[Item]], *, consistent: bool) -> Found:
        """BatchGetItem of several tables' keys (unprocessed keys retried), by table and key."""
        found = await self._batches.drain_get_tables(
            self.send,
            keys,
            consistent=consistent,
            max_attempts=self._max_attempts,
            sleep=asyncio.sleep,
        )
        by_key: Found = {}
        for name, raws in found.items():
            primary = self._tables.of_name(name).table.primary_attributes
            for raw in raws:
                by_key[(name, key_id({a: raw[a] for a in primary}))] = raw
        return by_key

    async def _settle(self) -> None:
        """Before the connection closes: pending coalesced gets are sent and answered."""
        if self._coalescer is not None:
            await self._coalescer.settle()

    async def put_all(self, objs: Iterable[object]) -> int:
        """Store many objects (BatchWriteItem, 25 a request, unprocessed items retried).

        Unprocessed items are sent again until every one is stored; only rounds that store
        nothing count against ``max_attempts``, so a batch of n takes at most
        n + max_attempts - 1 requests, and ThrottledError after max_attempts rounds without
        progress says how many are stored (writing the same objects again completes it).

        Every object is checked before the first request, and the rules of its relationships
        hold as for ``db.put``. Objects with the same key are written once (the last one wins),
        since DynamoDB rejects a batch that names a key twice. Objects of several tables share
        the requests (25 writes a request in all). Returns how many items were written.
        """
        objs = list(objs)
        groups = self._tables.by_table(objs)
        if not groups:
            return 0
        plan, table = self._tables.together_plan([(c, c.writes.put_all(o)) for c, o in groups])
        counts = await self.run(plan, table)
        count = counts if table is not None else sum(counts)
        related: dict[type, bool] = {}  # per class: whether its objects are bound
        for obj in objs:
            cls = type(obj)
            if related.get(cls) is None:
                related[cls] = bool(relationships_of(info_of(cls)))
            if related[cls]:
                bind(obj, self)
        return int(count)

    async def delete_all(self, objs: Iterable[object]) -> int:
        """Delete many items (BatchWriteItem, 25 a request). Returns how many keys were deleted.

        Items of several tables share the requests (25 deletes a request in all).
        """
        groups = self._tables.by_table(objs)
        if not groups:
            return 0
        plan, table = self._tables.together_plan([(c, c.writes.delete_all(o)) for c, o in groups])
        counts = await self.run(plan, table)
        return int(counts if table is not None else sum(counts))

    async def _write_batches(self, writes: list[dict[str, Any]], table_name: str) -> None:
        await asyncio.gather(
            *(
                self._batches.drain_write(
                    self.send,
                    table_name,
                    chunk,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                )
                for chunk in chunked(writes, self._batch_write_size)
            )
        )

    # -- consistent reads of several items (TransactGetItems) ----------------------------------

    @overload
    async def transact_get(self, a: tuple[type[A], Mapping[str, object]], /) -> tuple[A | None]: ...
    @overload
    async def transact_get(
        self, a: tuple[type[A], Mapping[str, object]], b: tuple[type[B], Mapping[str, object]], /
    ) -> tuple[A | None, B | None]: ...
    @overload
    async def transact_get(
        self,
        a: tuple[type[A], Mapping[str, object]],
        b: tuple[type[B], Mapping[str, object]],
        c: tuple[type[C], Mapping[str, object]],
        /,
    ) -> tuple[A | None, B | None, C | None]: ...
    @overload
    async def transact_get(
        self, *wanted: tuple[type[T], Mapping[str, object]]
    ) -> tuple[T | None, ...]: ...
    async def transact_get(
        self, *wanted: tuple[type[Any], Mapping[str, object]]
    ) -> tuple[Any, ...]:
        """Read items of any models, of any tables, at one point in time (one TransactGetItems).

        ``org, user = await db.transact_get((Org, {"name": "ACME"}), (User, {...}))``: the
        items in the order given, None where missing; at most TRANSACT_MAX (100) distinct items,
        checked before sending. Unlike ``db.get_many`` (BatchGetItem), no write can land between
        two of the reads; it costs twice the read capacity.
        """
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
            raw = found.get((self.connected(info.cls).name, key_id(key)))
            result.append(None if raw is None else self.acceptor(info, None)(raw))
        return tuple(result)

    def transaction(self) -> Transaction:
        """``async with db.transaction() as tx: tx.put(a); tx.delete(b)`` — all or nothing.

        Its writes may be of any tables of the connection: one TransactWriteItems carries them.
        """
        return self._writing.transaction(self)

    def planner(self, model: type[Any]) -> WritePlanner:
        """The write planner of ``model``'s table (DefinitionError when not connected)."""
        return self.connected(model).writes

    def transaction_plan(self, actions: Sequence[Action]) -> Plan[None]:
        """The plan of a transaction's actions, of whichever tables they write."""
        if not actions:
            return _nothing_planned()
        first = self.planner(type(actions[0].obj))
        return first.transaction(actions, lambda obj: self.planner(type(obj)))

    # -- queries and relationships -------------------------------------------------------------

    def query(
        self,
        model: type[T],
        index: str | None = None,
        *,
        consistent: bool = False,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        **components: object,
    ) -> Query[T]:
        """Items of ``model`` in one collection: full partition fields, leading sort fields.

        Leading sort key fields make ``begins_with`` (ending at a component boundary); all of them
        make an equality. Nothing is sent until the query is iterated or paged. ``load=`` loads
        relationships of every item returned: children in the same collection come with the
        same Query, others are read per page (see docs/relationships.md).
        """
        connected = self.connected(model)
        info = connected.table.info(model)
        finished = query_read(info, index, components, connected.name, consistent=consistent)
        loads = None
        if load:
            loads = QueryLoad(self, info, dict(components), tuple(normalize_options(info, load)))
        return self._query(info, finished, loads)

    # -- filters, scans, counts (docs/queries.md) -----------------------------------------------

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

    @overload
    def scan(
        self,
        model: type[T],
        *,
        segments: int = 1,
        index: str | None = None,
        consistent: bool = False,
        table: Table | None = None,
    ) -> Scan[T]: ...
    @overload
    def scan(
        self,
        model: None,
        *,
        segments: int = 1,
        index: str | None = None,
        consistent: bool = False,
        table: Table | None = None,
    ) -> Scan[object]: ...
    def scan(
        self,
        model: type[T] | None,
        *,
        segments: int = 1,
        index: str | None = None,
        consistent: bool = False,
        table: Table | None = None,
    ) -> Scan[Any]:
        """Every item of ``model`` in its table (or ``index``); ``None``: of every model.

        ``segments=N`` reads N parallel segments. Items that belong to no declared model are
        skipped. Nothing is sent until the scan is iterated, paged or counted. ``table``
        names the table a scan of every model reads, on a connection of several tables.
        """
        if model is not None:
            connected = self.connected(model)
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

    async def load(
        self, objs: Sequence[T], *relationships: Relationship[Any, T] | LoadOption[T]
    ) -> Sequence[T]:
        """Load relationships for many objects of one model at once (no N+1).

        BelongsTo parents and embedded children (for objects that lack them) are read by key, all
        relationships together: one BatchGetItem per 100 distinct keys, each parent once;
        HasMany children from one Query per object, run concurrently (``max_concurrency`` in
        flight).
        """
        if not objs:
            return objs
        model = type(objs[0])
        strays = {type(o).__name__ for o in objs if type(o) is not model}
        if strays:
            raise TypeError(
                f"db.load takes objects of one model; got {model.__name__} and {strays}"
            )
        info = self.connected(model).table.info(model)
        options = normalize_options(info, relationships)
        await load_all(self, info, objs, options)
        return objs

    async def add(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> T:
        """Add ``child`` to ``parent``'s relationship, however the relationship stores it."""
        rel = self._has_many(parent, relationship, "add")
        connected = self._tables.of_table(rel.children_table)  # the children's table plans it
        stored = await self.run(connected.writes.add(parent, rel, child), connected.table)
        _update_loaded(parent, rel, stored, adding=True, position=None)
        return cast("T", stored)

    async def remove(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> None:
        """Remove ``child`` from ``parent``'s relationship (deleting the child item)."""
        rel = self._has_many(parent, relationship, "remove")
        connected = self._tables.of_table(rel.children_table)
        position = await self.run(connected.writes.remove(parent, rel, child), connected.table)
        _update_loaded(parent, rel, child, adding=False, position=position)

    def _has_many(
        self, parent: object, relationship: Relationship[Any], verb: str
    ) -> HasManyRelation[Any]:
        rel = self._relationship(parent, relationship)
        if not isinstance(rel, HasManyRelation):
            raise DefinitionError(
                f"{rel.qualname}: db.{verb} takes a HasMany relationship; set a BelongsTo link "
                "by writing the child's fields with db.put"
            )
        return rel

    def _relationship(self, parent: object, relationship: Relationship[Any]) -> Relationship[Any]:
        if getattr(relationship, "owner", None) is not type(parent):
            raise DefinitionError(
                f"{relationship!r} is not a relationship of {type(parent).__name__}; pass e.g. "
                f"{type(parent).__name__}.<name>"
            )
        return relationship


@contextlib.asynccontextmanager
async def connect(
    *tables: Table,
    table: Table | None = None,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
    profile: str | None = None,
    table_name: str | None = None,
    table_names: Mapping[Table, str] | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    connect_timeout: float = 5.0,
    read_timeout: float = 30.0,
    attempt_timeout: float | None = None,
    fast_path: bool = True,
    cursor_secret: bytes | None = None,
    retry_quota: int | None = DEFAULT_RETRY_QUOTA,
    coalesce: bool = False,
    exactly_once: bool = False,
    rate_limit: RateLimit | Literal["adaptive"] | None = None,
) -> AsyncIterator[Database]:
    """Open a Database for one table or several. Unset arguments follow the AWS configuration.

    ``connect(app, audit)``: every call routes by its model's table, and transactions,
    ``transact_get``, ``get_many`` and ``put_all`` span the tables. ``table_name`` overrides
    the name of a connection's one table (one table per test, per stage …); ``table_names``
    those of several, by Table: ``table_names={app: "app-test", audit: "audit-test"}``;
    ``connect(table=app)`` is ``connect(app)``.
    ``connect_timeout`` bounds making a connection, ``read_timeout`` each wait for the reply's
    next bytes, and ``attempt_timeout`` one attempt in all (connecting, sending, the whole
    reply), however slowly a server trickles it (default: 120 seconds, or connect_timeout +
    read_timeout if more); each ends the attempt with a ``TransportError``.
    ``fast_path=False`` sends and parses every request with botocore instead of dynorm's own
    signed JSON requests (slower; the results are the same, except that binary values in raw
    :meth:`Database.send` replies are bytes rather than base64 text). ``cursor_secret``
    (bytes; default: the ``DYNORM_CURSOR_SECRET`` environment variable, UTF-8) signs page
    cursors with HMAC-SHA256 and refuses unsigned ones. A request is tried ``max_attempts``
    times in all when throttled, failed on the server's side or cut off by the network;
    ``retry_quota`` bounds the retries of the whole Database (each costs 5, or 10 after a
    broken connection; a success pays back), and None turns that bound off. Anything still
    failing is raised as a DynormError subclass: ``TransportError`` for the network.
    ``coalesce=True`` sends the plain gets (``db.get`` without ``load=``) started in one turn
    of the event loop together, as BatchGetItem requests of up to 100 keys (consistent and
    eventually consistent gets apart; one get alone still sends a GetItem): each caller gets
    its own object or its own ItemNotFoundError, and each waits one loop turn before its
    request goes out. Gets still waiting when the block exits are sent and answered first.
    ``exactly_once=True`` makes every ``db.update`` a one-action TransactWriteItems with a
    ``ClientRequestToken`` (applied once under any fault, at a transaction's price: two write
    units per KB, plus a consistent read back for ``returns="new"``); a call's own
    ``exactly_once=False`` overrides it (see :meth:`Database.update`).
    ``rate_limit`` paces every request of the connection (all its coroutines share it):
    ``RateLimit(read=..., write=...)`` in capacity units a second, or ``"adaptive"``, which
    starts unlimited, halves the rate when DynamoDB throttles and raises it again after
    quiet seconds (see docs/performance.md); ``db.stats()`` shows the rates and the
    partition keys throttled most.
    """
    cursor_secret = secret_from(cursor_secret, os.environ)
    if table is not None:  # connect(table=app), as before several tables
        tables = (*tables, table)
    # Checked before a client is opened: a mix-up of tables sends nothing.
    name_tables(tables, table_name, table_names)
    async with open_connection(
        endpoint_url=endpoint_url,
        region_name=region_name,
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        profile=profile,
        max_concurrency=max_concurrency,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        attempt_timeout=attempt_timeout,
        fast_path=fast_path,
    ) as connection:
        db = Database(
            tables,
            connection,
            table_name=table_name,
            table_names=table_names,
            max_concurrency=max_concurrency,
            max_attempts=max_attempts,
            cursor_secret=cursor_secret,
            retry_quota=retry_quota,
            coalesce=coalesce,
            exactly_once=exactly_once,
            rate_limit=rate_limit,
        )
        try:
            yield db
        finally:
            # Callers still awaiting a coalesced get are answered while the connection is
            # open, rather than left waiting on (or failed by) a closed one.
            await db._settle()
