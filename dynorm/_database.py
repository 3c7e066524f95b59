"""The Database: the one place that talks to DynamoDB (through aiobotocore).

Everything else in dynorm decides *what* to send as plain :class:`~dynorm._plans.Request` values;
this module sends them, maps AWS errors to dynorm's, bounds concurrency, and retries batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import platform
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, TypeVar, overload

import aiobotocore
import botocore
import botocore.exceptions
import orjson
from aiobotocore.config import AioConfig
from aiobotocore.parsers import AioResponseParserFactory
from aiobotocore.session import get_session
from botocore import xform_name

from ._batch import (
    BATCH_GET_MAX,
    BATCH_WRITE_MAX,
    chunked,
    drain_get,
    drain_write,
    key_id,
)
from ._codec import Item
from ._errors import (
    CancellationReason,
    ConditionFailedError,
    DatabaseError,
    DefinitionError,
    DynormError,
    ExpressionError,
    ItemNotFoundError,
    LimitExceededError,
    TableNotFoundError,
    ThrottledError,
    TransactionCanceledError,
    ValidationError,
)
from ._explain import Explain
from ._expressions import Condition, top_field
from ._loading import execute_get, load_many, normalize_options, plan_get
from ._model import ModelInfo, info_of
from ._plans import Request, existence_check
from ._query import Query
from ._relations import HasMany, LoadOption, Relationship
from ._relwrites import add_child, put_with_copies, remove_child
from ._state import InstanceState, Loaded, bind, held_items
from ._table import GSI, LSI, Table
from ._transaction import Transaction
from ._writes import plan_update

__all__ = ["Database", "Transaction", "connect"]

T = TypeVar("T")

_ERRORS: Final[Mapping[str, type[DatabaseError]]] = {
    "ConditionalCheckFailedException": ConditionFailedError,
    "ResourceNotFoundException": TableNotFoundError,
    "ProvisionedThroughputExceededException": ThrottledError,
    "ThrottlingException": ThrottledError,
    "RequestLimitExceeded": ThrottledError,
    "ValidationException": ValidationError,
}

#: How many requests one Database keeps in flight at most (and its HTTP connection pool size):
#: enough for `db.load` of a typical page of parents to go out in one round trip.
DEFAULT_MAX_CONCURRENCY: Final = 64
#: botocore's attempts per request (standard retry mode) and dynorm's per batch remainder.
DEFAULT_MAX_ATTEMPTS: Final = 5

RequestListener = Callable[[str], None]


@functools.cache
def _user_agent() -> str:
    """The User-Agent dynorm's requests carry, fixed for the life of the process.

    Without one, botocore rebuilds its own from a dozen components for every request, which
    costs about a seventh of a GetItem's client CPU. Giving it a fixed string (a documented
    ``Config`` option) skips that and still names every layer.
    """
    try:
        version = importlib.metadata.version("dynorm")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return (
        f"dynorm/{version} aiobotocore/{aiobotocore.__version__} "
        f"botocore/{botocore.__version__} Python/{platform.python_version()} "
        f"{platform.system()}/{platform.release()}"
    )


#: Outputs that carry items. Their bodies are parsed once with orjson instead of botocore's
#: shape walk, which costs most of the time between an HTTP body and attrs objects; the
#: AttributeValues are then decoded straight into models. Errors and every other operation
#: keep botocore's parser.
_ITEM_OUTPUTS: Final = frozenset(
    {"GetItemOutput", "QueryOutput", "ScanOutput", "BatchGetItemOutput", "TransactGetItemsOutput"}
)


class _ItemResponseParser:
    """botocore's JSON parser, bypassed for successful item-carrying responses."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def parse(self, response: dict[str, Any], shape: Any) -> Any:
        if response["status_code"] < 300 and shape is not None and shape.name in _ITEM_OUTPUTS:
            body = response["body"]
            parsed: dict[str, Any] = orjson.loads(body) if body else {}
            parsed["ResponseMetadata"] = {
                "HTTPStatusCode": response["status_code"],
                "HTTPHeaders": response["headers"],
            }
            return parsed
        return await self._inner.parse(response, shape)


class _FastResponseParserFactory(AioResponseParserFactory):
    """Hands out the bypassing parser for DynamoDB's JSON protocol (one per protocol)."""

    def __init__(self) -> None:
        super().__init__()
        self._parsers: dict[str, Any] = {}

    def create_parser(self, protocol_name: str) -> Any:
        parser = self._parsers.get(protocol_name)
        if parser is None:
            parser = super().create_parser(protocol_name)
            if protocol_name == "json":
                parser = _ItemResponseParser(parser)
            self._parsers[protocol_name] = parser
        return parser


def _translate(exc: botocore.exceptions.ClientError, request: Request) -> DatabaseError:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    message = str(error.get("Message", "")) or str(exc)
    if code == "TransactionCanceledException":
        reasons = [
            CancellationReason(i, str(r.get("Code", "None")), str(r.get("Message", "")))
            for i, r in enumerate(exc.response.get("CancellationReasons", []))
        ]
        failed = [
            f"action {r.index}: {r.code} {r.message}".strip() for r in reasons if r.code != "None"
        ]
        return TransactionCanceledError(
            f"transaction cancelled, nothing was written ({'; '.join(failed) or message})",
            reasons=reasons,
        )
    if code == "ResourceNotFoundException":
        table = request.params.get("TableName", "?")
        message = f"{message} (table {table!r}: create it with `await db.create_table()`)"
    cls = _ERRORS.get(code, DatabaseError)
    return cls(f"{request.operation}: {message}", code=code, operation=request.operation)


def _copying(info: ModelInfo[Any]) -> list[HasMany[Any, Any]]:
    """The relationships whose children carry copies of this model's fields."""
    return [r for r in info.relationships.values() if isinstance(r, HasMany) and r.copies]


class Database:
    """A connection to one table. Create it with :func:`connect`."""

    def __init__(
        self,
        table: Table,
        client: Any,
        *,
        table_name: str | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        batch_get_size: int = BATCH_GET_MAX,
        batch_write_size: int = BATCH_WRITE_MAX,
    ) -> None:
        if not 1 <= batch_get_size <= BATCH_GET_MAX:
            raise LimitExceededError(
                f"batch_get_size must be 1..{BATCH_GET_MAX}; got {batch_get_size}"
            )
        if not 1 <= batch_write_size <= BATCH_WRITE_MAX:
            raise LimitExceededError(
                f"batch_write_size must be 1..{BATCH_WRITE_MAX}; got {batch_write_size}"
            )
        table.check()
        self.table = table
        self.table_name = table_name or table.name
        self._client = client
        self._gate = asyncio.Semaphore(max_concurrency)
        self._max_attempts = max_attempts
        self._batch_get_size = batch_get_size
        self._batch_write_size = batch_write_size
        self._listeners: list[RequestListener] = []
        self.explain: Final = Explain(table, self.table_name)
        client.meta.events.register("before-send.dynamodb", self._before_send)

    def __repr__(self) -> str:
        return f"<Database table={self.table_name!r}>"

    # -- the I/O seam --------------------------------------------------------------------------

    def _before_send(self, request: Any, **_: Any) -> None:
        # One call per HTTP attempt, retries included: what tests count as "requests".
        target = str(request.headers.get("X-Amz-Target", b""), "ascii", "replace")
        operation = target.rsplit(".", 1)[-1].strip("'")
        for listener in list(self._listeners):
            listener(operation)

    def on_request(self, listener: RequestListener) -> Callable[[], None]:
        """Call ``listener(operation)`` for every HTTP request sent; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def send(self, request: Request) -> dict[str, Any]:
        """Send one request; AWS errors come back as DynormError subclasses."""
        method = getattr(self._client, xform_name(request.operation))
        async with self._gate:
            try:
                response: dict[str, Any] = await method(**request.params)
            except botocore.exceptions.ClientError as exc:
                raise _translate(exc, request) from exc
            except botocore.exceptions.ParamValidationError as exc:
                raise ValidationError(
                    f"{request.operation}: {exc}", operation=request.operation
                ) from exc
        return response

    def acceptor(self, info: ModelInfo[T], index: str | None) -> Callable[[Item], T | None]:
        """Decodes one Query's items of ``info``'s model (binding them here), drops all others."""
        matches, decode, generated = info.sort_key_matcher(index), info.decode, info.codec.decode
        adopt = self.adopt if info.relationships else None
        shape = info.sort_key_shape(index)
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
            if not matches(raw):
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
        for rel in info.embedded:
            codec = rel.embedded
            if codec is not None and codec.attribute in item:
                state.loaded[rel.name] = Loaded(codec.decode(item), None)
        return state

    def attach(self, obj: T) -> T:
        """Attach an object built in code, so its relationship loaders can read through this db."""
        info_of(type(obj))
        bind(obj, self)
        return obj

    # -- tables --------------------------------------------------------------------------------

    def _create_table_request(self) -> Request:
        table = self.table
        attributes = [{"AttributeName": a, "AttributeType": "S"} for a in table.attribute_names()]

        def schema(pk: str, sk: str | None) -> list[dict[str, str]]:
            keys = [{"AttributeName": pk, "KeyType": "HASH"}]
            return keys + ([{"AttributeName": sk, "KeyType": "RANGE"}] if sk else [])

        def projection(p: Any) -> dict[str, Any]:
            if isinstance(p, tuple):
                return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(p)}
            return {"ProjectionType": p}

        params: dict[str, Any] = {
            "TableName": self.table_name,
            "AttributeDefinitions": attributes,
            "KeySchema": schema(table.pk, table.sk),
            "BillingMode": "PAY_PER_REQUEST",
        }
        gsis = [i for i in table.indexes.values() if isinstance(i, GSI)]
        lsis = [i for i in table.indexes.values() if isinstance(i, LSI)]
        if gsis:
            params["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": i.name,
                    "KeySchema": schema(i.pk, i.sk),
                    "Projection": projection(i.projection),
                }
                for i in gsis
            ]
        if lsis:
            params["LocalSecondaryIndexes"] = [
                {
                    "IndexName": i.name,
                    "KeySchema": schema(table.pk, i.sk),
                    "Projection": projection(i.projection),
                }
                for i in lsis
            ]
        return Request("CreateTable", params)

    async def create_table(self, *, timeout: float = 60.0) -> None:
        """Create the table with every declared index (on-demand billing) and wait until active."""
        await self.send(self._create_table_request())
        await self._wait_for(lambda status: status == "ACTIVE", timeout)

    async def delete_table(self, *, timeout: float = 60.0) -> None:
        """Delete the table and wait until it is gone."""
        await self.send(Request("DeleteTable", {"TableName": self.table_name}))
        await self._wait_for(lambda status: status is None, timeout)

    async def _wait_for(self, done: Callable[[str | None], bool], timeout: float) -> None:
        delay = 0.01
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                described = await self.send(
                    Request("DescribeTable", {"TableName": self.table_name})
                )
                table = described["Table"]
                status: str | None = table["TableStatus"]
                if status == "ACTIVE" and any(
                    gsi.get("IndexStatus", "ACTIVE") != "ACTIVE"
                    for gsi in table.get("GlobalSecondaryIndexes", [])
                ):
                    status = "CREATING"
            except TableNotFoundError:
                status = None
            if done(status):
                return
            if asyncio.get_running_loop().time() > deadline:
                raise DatabaseError(f"table {self.table_name!r} is still {status} after {timeout}s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    # -- single items --------------------------------------------------------------------------

    async def get(
        self,
        model: type[T],
        *,
        load: Sequence[Relationship[Any, Any] | LoadOption] = (),
        consistent: bool = False,
        **key: object,
    ) -> T:
        """The item with this key (GetItem), or with ``load=`` the item and its children.

        Raises ItemNotFoundError when there is no such item.
        """
        info = self.table.info(model)
        plan = self.explain.get_plan(model, load=load, consistent=consistent, **key)
        return await execute_get(self, info, plan, key)

    async def put(self, obj: T, *, condition: Condition | None = None, overwrite: bool = True) -> T:
        """Store ``obj``. ``overwrite=False`` refuses to replace an existing item.

        A parent with ``Denormalized`` children also rewrites every child whose copy changed
        (see :meth:`sync_copies`); a parent with ``Embedded`` children keeps them.
        """
        info = self.table.info(type(obj))
        request = self.explain.put(obj, condition=condition, overwrite=overwrite)
        copying = _copying(info)
        if copying:
            await put_with_copies(self, copying, info.values_of(obj), request)
        else:
            await self.send(request)
        if info.relationships:
            bind(obj, self)
        return obj

    async def sync_copies(self, parent: object) -> int:
        """Rewrite the denormalized copies of ``parent``'s fields that differ from it.

        ``db.put(parent)`` does this too; call it directly to repair copies. Returns how many
        children were rewritten (also logged on the ``dynorm`` logger).
        """
        info = self.table.info(type(parent))
        return await put_with_copies(self, _copying(info), info.values_of(parent), None)

    @overload
    async def delete(self, target: object, /, *, condition: Condition | None = None) -> None: ...
    @overload
    async def delete(
        self, target: type[Any], /, *, condition: Condition | None = None, **key: object
    ) -> None: ...
    async def delete(
        self, target: object, /, *, condition: Condition | None = None, **key: object
    ) -> None:
        """Delete one item: ``db.delete(obj)`` or ``db.delete(Model, **key)``."""
        request = self.explain.delete(target, condition=condition, **key)
        await self.send(request)

    async def update(
        self,
        obj: T,
        *,
        set: Mapping[str, object] | None = None,  # noqa: A002 - DynamoDB's SET
        remove: Iterable[str] = (),
        add: Mapping[str, object] | None = None,
        condition: Condition | None = None,
    ) -> T:
        """Change some fields of a stored item (UpdateItem) and return the item as stored now."""
        removals = list(remove)
        info = self.table.info(type(obj))
        request = plan_update(
            info,
            info.values_of(obj),
            self.table_name,
            set=set,
            remove=removals,
            add=add,
            condition=condition,
        )
        copied = {f for rel in _copying(info) for f in rel.copies}
        paths = [*(set or {}), *removals, *(add or {})]
        touched = {top_field(p) for p in paths}
        inside = [p for p in paths if top_field(p) in copied and top_field(p) != p]
        if inside:
            field = top_field(inside[0])
            raise ExpressionError(
                f"{info.name}: {inside[0]!r} changes part of {field!r}, which its children "
                f"keep copies of; give the whole {field!r} so the copies follow"
            )
        try:
            if copied & touched:
                after = {**info.values_of(obj), **(set or {}), **dict.fromkeys(removals)}
                await put_with_copies(self, _copying(info), after, request)
                key = {f: after[f] for f in info.identity_fields()}
                return await execute_get(self, info, plan_get(info, key, (), self.table_name), key)
            response = await self.send(request)
        except ConditionFailedError as exc:
            # A plain update checks only that the item exists. With a condition of the caller's,
            # or copies rewritten beside it, a consistent read tells the failures apart (one
            # request, on failure only).
            plain = condition is None and not copied & touched
            if plain or not await self._exists(info, obj):
                raise ItemNotFoundError(
                    f"update of {info.name}: no item with key {info.key_of(obj)!r}",
                    code=exc.code,
                    operation="UpdateItem",
                ) from exc
            raise
        updated = info.decode(response["Attributes"])
        if info.relationships:
            self.adopt(info, updated, response["Attributes"])
        return updated

    async def _exists(self, info: ModelInfo[Any], obj: object) -> bool:
        """Whether ``obj``'s item is stored."""
        pk_attr, _ = self.table.key_attributes(None)
        return "Item" in await self.send(
            existence_check(self.table_name, info.key_of(obj), pk_attr)
        )

    # -- many items ----------------------------------------------------------------------------

    async def get_many(
        self, model: type[T], keys: Sequence[Mapping[str, object]], *, consistent: bool = False
    ) -> list[T | None]:
        """Items for ``keys`` in order, None where missing (BatchGetItem, 100 keys a request)."""
        info = self.table.info(model)
        wanted = []
        for values in keys:
            info.check_key_values(values)
            wanted.append(info.primary_key(values))
        found = await self.fetch(wanted, consistent=consistent)
        accept = self.acceptor(info, None)
        return [accept(found[key_id(k)]) if key_id(k) in found else None for k in wanted]

    async def fetch(self, keys: Sequence[Item], *, consistent: bool = False) -> dict[Any, Item]:
        """Raw items for primary keys, by ``key_id`` (BatchGetItem, unprocessed keys retried)."""
        unique = list({key_id(k): k for k in keys}.values())
        chunks = list(chunked(unique, self._batch_get_size))
        found_chunks = await asyncio.gather(
            *(
                drain_get(
                    self.send,
                    self.table_name,
                    chunk,
                    consistent=consistent,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                )
                for chunk in chunks
            )
        )
        primary = self.table.primary_attributes
        return {
            key_id({a: raw[a] for a in primary}): raw for chunk in found_chunks for raw in chunk
        }

    async def put_all(self, objs: Iterable[object]) -> int:
        """Store many objects (BatchWriteItem, 25 a request, unprocessed items retried).

        Objects with the same key are written once (the last one wins), since DynamoDB rejects a
        batch that names a key twice. Returns how many items were written.
        """
        writes: dict[Any, dict[str, Any]] = {}
        for obj in objs:
            info = self.table.info(type(obj))
            item = info.encode(obj)
            for rel in info.embedded:
                children = held_items(obj, rel.name)
                if children is None or rel.embedded is None:
                    raise DefinitionError(
                        f"put_all replaces whole items, and {rel.qualname} of {obj!r} is not "
                        "loaded, so its children would be lost; use db.put (which keeps them)"
                    )
                item[rel.embedded.attribute] = rel.embedded.encode(children)
            if info.embedded:
                info.check_item(item)  # again, with the children: every item before any request
            writes[key_id({a: item[a] for a in self.table.primary_attributes})] = {
                "PutRequest": {"Item": item}
            }
            if info.relationships:
                bind(obj, self)
        await self._write_batches(list(writes.values()))
        return len(writes)

    async def delete_all(self, objs: Iterable[object]) -> int:
        """Delete many items (BatchWriteItem, 25 a request). Returns how many keys were deleted."""
        writes: dict[Any, dict[str, Any]] = {}
        for obj in objs:
            key = self.table.info(type(obj)).key_of(obj)
            writes[key_id(key)] = {"DeleteRequest": {"Key": key}}
        await self._write_batches(list(writes.values()))
        return len(writes)

    async def _write_batches(self, writes: list[dict[str, Any]]) -> None:
        await asyncio.gather(
            *(
                drain_write(
                    self.send,
                    self.table_name,
                    chunk,
                    max_attempts=self._max_attempts,
                    sleep=asyncio.sleep,
                )
                for chunk in chunked(writes, self._batch_write_size)
            )
        )

    def transaction(self) -> Transaction:
        """``async with db.transaction() as tx: tx.put(a); tx.delete(b)`` — all or nothing."""
        return Transaction(self)

    # -- queries and relationships -------------------------------------------------------------

    def query(
        self,
        model: type[T],
        index: str | None = None,
        *,
        consistent: bool = False,
        **components: object,
    ) -> Query[T]:
        """Items of ``model`` in one collection: full partition fields, leading sort fields.

        Leading sort key fields make ``begins_with`` (ending at a component boundary); all of them
        make an equality. Nothing is sent until the query is iterated or paged.
        """
        info = self.table.info(model)
        accept = self.acceptor(info, index)
        read = self.explain.query_read(info, index, components, consistent=consistent)
        return Query(send=self.send, read=read, accept=accept)

    async def load(
        self, objs: Sequence[T], *relationships: Relationship[Any, Any] | LoadOption
    ) -> Sequence[T]:
        """Load relationships for many objects of one model at once (no N+1).

        BelongsTo parents come from BatchGetItem (100 keys a request, each parent once);
        HasMany children from one Query per object, run concurrently (``max_concurrency`` in
        flight); embedded children from one BatchGetItem for the objects that lack them.
        """
        if not objs:
            return objs
        model = type(objs[0])
        strays = {type(o).__name__ for o in objs if type(o) is not model}
        if strays:
            raise TypeError(
                f"db.load takes objects of one model; got {model.__name__} and {strays}"
            )
        info = self.table.info(model)
        options = normalize_options(info, relationships)
        await asyncio.gather(*(load_many(self, info, objs, option) for option in options))
        return objs

    async def add(self, parent: object, relationship: Relationship[Any, T], child: T) -> T:
        """Add ``child`` to ``parent``'s relationship, however the relationship stores it."""
        rel = self._relationship(parent, relationship)
        if isinstance(rel, HasMany):
            return await add_child(self, parent, rel, child)
        raise DefinitionError(f"{rel.qualname}: use db.put on the child to set a BelongsTo link")

    async def remove(self, parent: object, relationship: Relationship[Any, T], child: T) -> None:
        """Remove ``child`` from ``parent``'s relationship (deleting the child item)."""
        rel = self._relationship(parent, relationship)
        if isinstance(rel, HasMany):
            await remove_child(self, parent, rel, child)
            return
        raise DefinitionError(f"{rel.qualname}: only HasMany relationships have children to remove")

    def _relationship(
        self, parent: object, relationship: Relationship[Any, Any]
    ) -> Relationship[Any, Any]:
        if getattr(relationship, "owner", None) is not type(parent):
            raise DefinitionError(
                f"{relationship!r} is not a relationship of {type(parent).__name__}; pass e.g. "
                f"{type(parent).__name__}.<name>"
            )
        return relationship


@contextlib.asynccontextmanager
async def connect(
    table: Table,
    *,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
    profile: str | None = None,
    table_name: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    connect_timeout: float = 5.0,
    read_timeout: float = 30.0,
    fast_responses: bool = True,
) -> AsyncIterator[Database]:
    """Open a Database for ``table``. Unset arguments follow the standard AWS configuration.

    ``table_name`` overrides the table's name (one table per test, per stage …).
    ``fast_responses=False`` parses every response with botocore's own parser (slower; the
    results are the same).
    """
    session = get_session()
    if fast_responses:
        session.register_component("response_parser_factory", _FastResponseParserFactory())
    if profile is not None:
        session.set_config_variable("profile", profile)
    config = AioConfig(
        retries={"mode": "standard", "max_attempts": max_attempts},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=max_concurrency,
        user_agent=_user_agent(),
    )
    try:
        client_context = session.create_client(
            "dynamodb",
            region_name=region_name,
            endpoint_url=endpoint_url,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            config=config,
        )
        client = await client_context.__aenter__()
    except botocore.exceptions.NoRegionError:
        raise DynormError(
            "no AWS region is configured; pass connect(..., region_name='eu-west-1') or set "
            "AWS_DEFAULT_REGION"
        ) from None
    try:
        yield Database(
            table,
            client,
            table_name=table_name,
            max_concurrency=max_concurrency,
            max_attempts=max_attempts,
        )
    finally:
        await client_context.__aexit__(None, None, None)
