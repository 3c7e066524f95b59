"""The Database: the public face of dynorm's I/O, a façade over parts with one job each.

Everything else in dynorm decides *what* to send as plain
:class:`~dynorm.core.requests.Request` values. A Database holds the parts that send them, each
handed the ports it uses (the Database's ``send``, the runner, the batches), never the Database:

- ``io/reads.py`` ``Reads``: gets, ``get_many``, ``transact_get``, ``load``, queries and scans,
  and the decoding of items into bound objects: ``db.reads``, the Reader that objects are bound
  to and that loaders and tools read through (``db.reads.read_page``, ``db.reads.acceptor``);
- ``io/writing.py`` ``Writes``: puts, updates, deletes, ``add``/``remove``, ``sync_copies``,
  ``put_all``/``delete_all`` and the plans of transactions;
- ``io/runner.py`` ``Runner``: runs a plan's steps;
- ``io/batching.py`` ``Batches``: BatchGetItem and BatchWriteItem, chunked, tables sharing them;
- ``io/tableadmin.py`` ``TableAdmin``: creating, deleting and describing tables.

Each public method forwards to its part in one call. ``Database.send`` is the seam every part
sends through: it hands each request to the transport (``io/transport.py``), which talks to
DynamoDB, retries, and maps every failure to dynorm's errors.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, overload

from dynorm.core.chunks import BATCH_GET_MAX, BATCH_WRITE_MAX, DEFAULT_MAX_ITEMS
from dynorm.core.cursor import CursorCodec, secret_from
from dynorm.core.errors import LimitExceededError, TransactionCanceledError
from dynorm.core.expressions import Condition
from dynorm.core.requests import Request
from dynorm.core.steps import Plan
from dynorm.mapping.cancellation import named_cancellation
from dynorm.mapping.model import ModelTable
from dynorm.mapping.relations import HasManyRelation, LoadOption, Relationship
from dynorm.mapping.table import Table
from dynorm.wire.retry import QUOTA_CAPACITY, RetryQuota

from .batching import Batches
from .connection import Connection, open_connection
from .query import Query, Scan
from .reads import Reads
from .runner import Runner
from .tableadmin import TableAdmin
from .tables import Connected, Tables, name_tables
from .transport import RequestListener, Transport
from .writing import Writes

# The write side, explain, transactions, batches, coalescing and rate limits are imported on
# first use (by ``io/writing.py``, ``io/batching.py``, ``Database.explain``, the options of
# ``connect``): a process that only gets and queries never loads them
# (tests/integration/test_lean_connection.py).
if TYPE_CHECKING:
    from typing_extensions import Unpack

    from dynorm.core.throughput import RateLimit, Stats
    from dynorm.mapping.cascade import CascadeReport
    from dynorm.mapping.writeplan import Action, WritePlanner
    from dynorm.mapping.writes import Returns, UpdateOptions

    from .coalesce import Coalescer, FetchKeys
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
#: (a batch round that stores or reads anything does not count; see ``io/batch.py``).
DEFAULT_MAX_ATTEMPTS: Final = 5
#: Retry tokens one Database holds (see ``connect(retry_quota=...)``).
DEFAULT_RETRY_QUOTA: Final = QUOTA_CAPACITY


def _limiter(rate_limit: RateLimit | Literal["adaptive"]) -> Limiter:
    """``connect(rate_limit=...)``'s limiter (its module imported only when one is asked for)."""
    from .ratelimit import Limiter  # noqa: PLC0415 - once per connection, when asked for

    return Limiter(rate_limit)


def _coalescer(fetch: FetchKeys, batch_get_size: int) -> Coalescer:
    """``connect(coalesce=True)``'s coalescer (its module imported only then)."""
    from .coalesce import Coalescer  # noqa: PLC0415 - once per connection, when asked for

    return Coalescer(fetch, batch_get_size)


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
        #: ``update``'s ``exactly_once`` when a call does not say (``connect(exactly_once=)``).
        self._exactly_once = exactly_once
        #: Makes and checks page cursors (HMAC-signed when ``cursor_secret`` is given).
        self.cursors: Final = CursorCodec(cursor_secret)
        #: Where plain gets wait to share a BatchGetItem (``connect(coalesce=True)``), or None.
        self._coalescer: Coalescer | None = None
        self._parts(self._tables, coalesce=coalesce)
        #: ``explain``, built on first use.
        self._explain: DatabaseExplain | None = None

    def _parts(self, tables: Tables, *, coalesce: bool = False) -> None:
        """Build the parts that answer for ``tables`` (this connection's, or a view's).

        Each part is handed the ports it uses (this Database's ``send``, the runner, the
        batches), not the Database; objects are bound to ``reads``, the Reader their loaders
        read through. ``coalesce``: make the coalescer, which views share.
        """
        self._batches = batches = Batches(
            self.send,
            tables,
            max_attempts=self._max_attempts,
            get_size=self._batch_get_size,
            write_size=self._batch_write_size,
        )
        if coalesce:
            self._coalescer = _coalescer(batches.fetch_keys, self._batch_get_size)
        self._runner = Runner(self.send, tables, batches)
        self._admin = TableAdmin(self.send, tables)
        #: Reads: gets, queries, scans, loads, and the Reader objects are bound to (what
        #: loaders and tools read through: ``db.reads.read_page(...)``, ``db.reads.acceptor``).
        self.reads = reads = Reads(
            self.send, tables, batches, cursors=self.cursors, coalescer=self._coalescer
        )
        self._writes = Writes(tables, self._runner, reads, exactly_once=self._exactly_once)

    @property
    def explain(self) -> DatabaseExplain:
        """The exact requests a call would send (``db.explain.put(obj)``), without sending them."""
        found = self._explain
        if found is None:
            from .explaining import DatabaseExplain  # noqa: PLC0415 - once per Database

            found = self._explain = DatabaseExplain(self._tables, exactly_once=self._exactly_once)
        return found

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
        view._parts(tables)
        return view

    def connected_tables(self) -> list[Connected]:
        """Every table of this connection, in the order given to :func:`connect` (a view's one)."""
        return self._tables.connected_tables()

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

    def attach(self, obj: T) -> T:
        """Attach an object built in code, so its relationship loaders can read through this db."""
        return self.reads.attach(obj)

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
        return await self._admin.create_table(
            table, timeout=timeout, key_types=key_types, exists_ok=exists_ok
        )

    async def delete_table(self, table: Table | None = None, /, *, timeout: float = 60.0) -> None:
        """Delete every table of the connection (or only ``table``) and wait until it is gone."""
        await self._admin.delete_table(table, timeout=timeout)

    async def describe_table(self, table: Table | None = None, /) -> dict[str, Any] | None:
        """DescribeTable's ``Table`` (keys, indexes, status, item count), or None if missing.

        ``table``: which table of the connection (None: the only one).
        """
        return await self._admin.describe_table(table)

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
        return await self.reads.get(model, load=load, consistent=consistent, **key)

    async def put(self, obj: T, *, condition: Condition | None = None, overwrite: bool = True) -> T:
        """Store ``obj``. ``overwrite=False`` refuses to replace an existing item.

        A parent with ``Denormalized`` children also rewrites every copy its write changes (and
        reads no child when no copied field changed); a child of one gets its copies filled from
        its parent; a parent with ``Embedded`` children keeps them. See docs/integrity.md.
        """
        return await self._writes.put(obj, condition=condition, overwrite=overwrite)

    async def sync_copies(self, parent: object) -> int:
        """Make every denormalized copy of ``parent``'s fields equal the stored parent's.

        The repair after a :class:`~dynorm.CopiesIncompleteError` (``db.put`` rewrites copies
        itself). Returns how many children were rewritten (also logged on the ``dynorm`` logger).
        """
        return await self._writes.sync_copies(parent)

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
        return await self._writes.delete(
            target, condition=condition, cascade=cascade, max_items=max_items, key=key
        )

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
        return await self._writes.update(
            obj,
            upsert=upsert,
            condition=condition,
            returns=returns,
            exactly_once=exactly_once,
            **ops,
        )

    # -- running plans -------------------------------------------------------------------------

    async def run(self, plan: Plan[T], table: Table | None = None) -> T:
        """Run a write plan: send each step it yields and hand it the result (or the error).

        ``table``: the table of the plan's batch steps (Fetch, WriteBatch), for a plan of one
        table's planner (None: the only table's). Steps of several tables come as
        :class:`~dynorm.core.steps.Together`, which names each step's table.
        """
        return await self._runner.run(plan, table)

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
        return await self.reads.get_many(model, keys, consistent=consistent)

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
        return await self._writes.put_all(objs)

    async def delete_all(self, objs: Iterable[object]) -> int:
        """Delete many items (BatchWriteItem, 25 a request). Returns how many keys were deleted.

        Items of several tables share the requests (25 deletes a request in all).
        """
        return await self._writes.delete_all(objs)

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
        return await self.reads.transact_get(*wanted)

    def transaction(self) -> Transaction:
        """``async with db.transaction() as tx: tx.put(a); tx.delete(b)`` — all or nothing.

        Its writes may be of any tables of the connection: one TransactWriteItems carries them.
        """
        return self._writes.transaction(self)

    def planner(self, model: type[Any]) -> WritePlanner:
        """The write planner of ``model``'s table (DefinitionError when not connected)."""
        return self._writes.planner(model)

    def transaction_plan(self, actions: Sequence[Action]) -> Plan[None]:
        """The plan of a transaction's actions, of whichever tables they write."""
        return self._writes.transaction_plan(actions)

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
        return self.reads.query(model, index, consistent=consistent, load=load, **components)

    # -- filters, scans, counts (docs/queries.md) -----------------------------------------------

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
        return self.reads.scan(
            model, segments=segments, index=index, consistent=consistent, table=table
        )

    async def load(
        self, objs: Sequence[T], *relationships: Relationship[Any, T] | LoadOption[T]
    ) -> Sequence[T]:
        """Load relationships for many objects of one model at once (no N+1).

        BelongsTo parents and embedded children (for objects that lack them) are read by key, all
        relationships together: one BatchGetItem per 100 distinct keys, each parent once;
        HasMany children from one Query per object, run concurrently (``max_concurrency`` in
        flight).
        """
        return await self.reads.load(objs, *relationships)

    async def add(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> T:
        """Add ``child`` to ``parent``'s relationship, however the relationship stores it."""
        return await self._writes.add(parent, relationship, child)

    async def remove(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> None:
        """Remove ``child`` from ``parent``'s relationship (deleting the child item)."""
        await self._writes.remove(parent, relationship, child)


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
            await db.reads.settle()
