"""The public relationship descriptors and the loaders they hand out: where relationships send.

``Org.users`` (on the class) is the descriptor: pass it to ``load=[...]``, ``db.add`` and
``db.remove``. ``org.users`` (on an instance) is a :class:`RelationLoader`: ``.loaded`` is data
that came with a load, while ``async for``, ``.page()``, ``.all()`` and ``.count()`` are the only
calls that send requests. Nothing is ever loaded implicitly on attribute access.

``HasMany`` and ``BelongsTo`` are the mapping layer's ``HasManyRelation`` and ``BelongsToRelation``
(what a relationship decides: target, strategy, links, reads) plus that attribute access, which is
why they live here: a loader sends through the Reader its object is bound to (the ``db.reads`` of
the Database it came from).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, NoReturn, Protocol, TypeVar, cast, overload

from dynorm.core.cursor import scope_fingerprint
from dynorm.core.errors import DefinitionError, DetachedError, ItemNotFoundError, NotLoadedError
from dynorm.core.requests import CollectionRead, Page, Request, check_limit, get_item
from dynorm.mapping.embedded import EmbeddedCodec
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.relations import BelongsToRelation, HasManyRelation, Relationship
from dynorm.mapping.state import Loaded, state_of

from .reader import Reader

if TYPE_CHECKING:
    from dynorm.mapping.sharded import ShardedRead

    from .query import Query

__all__ = ["BelongsTo", "HasMany", "LoaderReader", "ParentLoader", "RelationLoader", "reader_of"]

P = TypeVar("P")
C = TypeVar("C")
T = TypeVar("T")
Q = TypeVar("Q")


class LoaderReader(Reader, Protocol):
    """A Reader as loaders use it: a relationship's ``.query()`` is one of its Queries."""

    def query_collection(self, info: ModelInfo[T], read: CollectionRead) -> Query[T]:
        """The lazy Query of ``info``'s items in ``read``."""
        ...


class ParentLoader(Generic[P, C]):
    """One child's view of its parent: ``.loaded`` data, or ``await .get()``."""

    __slots__ = ("child", "relationship")

    def __init__(self, child: P, relationship: BelongsToRelation[C]) -> None:
        self.child = child
        self.relationship = relationship

    @property
    def is_loaded(self) -> bool:
        state = state_of(self.child)
        return state is not None and self.relationship.name in state.loaded

    @property
    def loaded(self) -> C | None:
        """The parent that came with the load; None when it is not stored (or a link is None).

        Raises NotLoadedError when the relationship was not loaded (``load=[Child.parent]``,
        ``db.load`` or an earlier ``await .get()``): dynorm never sends a request on attribute
        access, so None always means "loaded, and there is no parent". Check ``is_loaded``
        first, or call ``await .get()``, when it may not have been loaded.
        """
        state = state_of(self.child)
        rel = self.relationship
        if state is None or rel.name not in state.loaded:
            raise NotLoadedError(
                f"{rel.qualname} was not loaded; pass load=[{rel.qualname}] to db.get, use "
                f"db.load(objs, {rel.qualname}), or call `await obj.{rel.name}.get()`"
            )
        items = state.loaded[rel.name].items
        return items[0] if items else None

    async def get(self) -> C:
        """The parent, read with GetItem unless it was loaded; ItemNotFoundError if missing."""
        rel = self.relationship
        reader = reader_of(self.child)
        state = state_of(self.child)
        if reader is None or state is None:
            raise DetachedError(
                f"{rel.qualname}: this {type(self.child).__name__} is not attached to a "
                "Database; read it with db.get/db.query, or call db.attach(obj) first"
            )
        key = rel.parent_key(self.child)
        if rel.name not in state.loaded and key is not None:
            request = get_item(reader.name_of(rel.target_info.table), key)
            raw = (await reader.send(request)).get("Item")
            accept = reader.acceptor(rel.target_info, None)
            found = accept(raw) if raw is not None else None
            state.loaded[rel.name] = Loaded([found] if found is not None else [], None)
        elif rel.name not in state.loaded:
            state.loaded[rel.name] = Loaded([], None)
        parent = self.loaded
        if parent is None:
            why = "has none (a link field is None)" if key is None else "is not stored"
            raise ItemNotFoundError(f"{rel.qualname} of {self.child!r} {why}")
        return parent

    def __repr__(self) -> str:
        state = "loaded" if self.is_loaded else "not loaded"
        return f"<{self.relationship.qualname} of {self.child!r} ({state})>"

    if not TYPE_CHECKING:  # hidden from type checkers, which then flag `await obj.parent` itself

        def __await__(self) -> NoReturn:
            rel = self.relationship
            raise TypeError(
                f"{rel.qualname} is not awaitable; read the parent with "
                f"`await obj.{rel.name}.get()`, or after load=[{rel.qualname}] use "
                f"`obj.{rel.name}.loaded`"
            )


class RelationLoader(Generic[P, C]):
    """One parent's view of a relationship: loaded data plus explicit, lazy reads."""

    __slots__ = ("parent", "relationship")

    def __init__(self, parent: P, relationship: Relationship[C]) -> None:
        self.parent = parent
        self.relationship = relationship

    def _reader(self) -> LoaderReader:
        reader = reader_of(self.parent)
        if reader is None:
            raise DetachedError(
                f"{self.relationship.qualname}: this {type(self.parent).__name__} is not attached "
                "to a Database; read it with db.get/db.query, or call db.attach(obj) first"
            )
        return reader

    @property
    def is_loaded(self) -> bool:
        state = state_of(self.parent)
        return state is not None and self.relationship.name in state.loaded

    @property
    def loaded(self) -> list[C]:
        """The children that came with the load (``db.get(..., load=[...])``).

        Raises NotLoadedError when the relationship was not loaded: dynorm never sends a request
        on attribute access.
        """
        state = state_of(self.parent)
        if state is None or self.relationship.name not in state.loaded:
            rel = self.relationship
            raise NotLoadedError(
                f"{rel.qualname} was not loaded; pass load=[{rel.qualname}] to db.get, or read it "
                f"with `async for x in obj.{rel.name}` / `await obj.{rel.name}.all()`"
            )
        loaded = state.loaded[self.relationship.name]
        return list(loaded.items if loaded.shown is None else loaded.items[: loaded.shown])

    def _has_many(self) -> HasManyRelation[C]:
        if not isinstance(self.relationship, HasManyRelation):
            raise TypeError(f"{self.relationship.qualname} is not a HasMany relationship")
        return self.relationship

    def _read(self, reader: Reader) -> CollectionRead:
        rel = self._has_many()
        values = rel.owner_info.values_of(self.parent)
        return rel.children_read(reader.name_of(rel.children_table), values)

    async def _embedded_children(self, reader: Reader, codec: EmbeddedCodec) -> list[C]:
        """Embedded children come with the parent item; a parent built in code reads them."""
        state = state_of(self.parent)
        if state is not None and self.relationship.name in state.loaded:
            return list(state.loaded[self.relationship.name].items)
        children = await self._stored_embedded(reader, codec)
        info = self.relationship.owner_info
        reader.adopt(info, self.parent, {}).loaded[self.relationship.name] = Loaded(
            list(children), None, asked=False
        )
        return children

    def _embedded_read(self, reader: Reader, codec: EmbeddedCodec) -> Request:
        """The GetItem of the parent item's embedded attribute only."""
        info = self.relationship.owner_info
        name = reader.name_of(info.table)
        return get_item(name, info.key_of(self.parent), attribute=codec.attribute)

    async def _stored_embedded(self, reader: Reader, codec: EmbeddedCodec) -> list[C]:
        """The embedded children stored now, read afresh; ItemNotFoundError without a parent."""
        item = (await reader.send(self._embedded_read(reader, codec))).get("Item")
        if item is None:
            raise ItemNotFoundError(
                f"{self.relationship.qualname}: the parent {self.parent!r} is not stored",
                operation="GetItem",
            )
        info = self.relationship.owner_info
        children: list[C] = codec.decode(item, key=info.describe(info.key_of(self.parent)))
        return children

    async def page(self, limit: int | None = None, cursor: str | None = None) -> Page[C]:
        """One page of ``limit`` children after ``cursor`` (None: from the first child)."""
        check_limit(limit)
        reader = self._reader()
        rel = self._has_many()
        if rel.was is not None:
            from .union import union_page  # noqa: PLC0415 - was= reads only

            return await union_page(reader, rel, self.parent, limit, cursor)
        if rel.embedded is not None:
            return await self._embedded_page(reader, rel.embedded, limit, cursor)
        if rel.sharded:
            return await self._sharded_page(reader, rel, limit, cursor)
        read = self._read(reader)
        cursors = reader.cursors
        start = None if cursor is None else cursors.decode(cursor, read)
        accept = reader.acceptor(rel.target_info, read.index)
        items, after = await reader.read_page(read, accept, limit=limit, start=start)
        return Page(items, None if after is None else cursors.encode(after, read))

    def _sharded_read(self, reader: Reader, rel: HasManyRelation[C]) -> ShardedRead:
        # The sharded modules are imported by a sharded relationship's reads only.
        from dynorm.mapping.sharded import ShardedRead  # noqa: PLC0415 - sharded reads only

        values = rel.owner_info.values_of(self.parent)
        return ShardedRead(rel.children_reads(reader.name_of(rel.children_table), values))

    async def _sharded_page(
        self, reader: Reader, rel: HasManyRelation[C], limit: int | None, cursor: str | None
    ) -> Page[C]:
        """A page over every shard, merged; its cursor holds the last child's position."""
        from dynorm.mapping.sharded import Position  # noqa: PLC0415 - sharded reads only

        from .sharded import read_sharded_page  # noqa: PLC0415 - sharded reads only

        sharded = self._sharded_read(reader, rel)
        cursors = reader.cursors
        # Bound to the collection, not to its shard count: a count that changed says so.
        scope = scope_fingerprint(
            "sharded", rel.qualname, rel.owner_info.key_of(self.parent), sharded.forward
        )
        after = None
        if cursor is not None:
            shard, key = cursors.decode_position(cursor, sharded.reads, scope, rel.qualname)
            after = Position(shard, key)
        accept = reader.acceptor(rel.target_info, sharded.reads[0].index)
        items, end, more = await read_sharded_page(
            reader, sharded, accept, limit=limit, after=after
        )
        if not more or end is None:
            return Page(items, None)
        return Page(items, cursors.encode_position(end.shard, end.key, sharded.reads, scope))

    async def _embedded_page(
        self, reader: Reader, codec: EmbeddedCodec, limit: int | None, cursor: str | None
    ) -> Page[C]:
        # Bound to this parent: the position in one parent's children means nothing for another's.
        rel = self.relationship
        scope = scope_fingerprint(
            "embedded", rel.qualname, rel.target_name, rel.owner_info.key_of(self.parent)
        )
        cursors = reader.cursors
        if codec.key is not None:
            # A map, read in key order: the cursor is the last key returned, as a Query's is.
            after_key = None if cursor is None else cursors.decode_after(cursor, scope)
            children = await self._embedded_children(reader, codec)
            field = codec.key
            # In key order whatever the loaded list holds (an add appends to it).
            ordered = sorted(children, key=attrgetter(field))
            rest = [c for c in ordered if after_key is None or getattr(c, field) > after_key]
            shown = rest if limit is None else rest[:limit]
            more = len(shown) < len(rest)
            return Page(
                shown, cursors.encode_after(getattr(shown[-1], field), scope) if more else None
            )
        # A list: a child is its position, so the cursor is one.
        offset = 0 if cursor is None else cursors.decode_offset(cursor, scope)
        children = await self._embedded_children(reader, codec)
        end = len(children) if limit is None else offset + limit
        after = None
        if end < len(children):
            after = cursors.encode_offset(end, scope)
        return Page(children[offset:end], after)

    def query(self, **where: object) -> Query[C]:
        """The children as a lazy Query, narrowed by further sort key components.

        ``user.tickets.query(ticket_id=gt("100"))``: the last component given may be a
        condition (``between``, ``gt``, ``ge``, ``lt``, ``le``, ``begins_with``); chain
        ``.filter()``, ``.project()``, ``.count()``, ``.page()`` as on ``db.query``.
        """
        reader = self._reader()
        rel = self._has_many()
        if rel.was is not None:
            raise DefinitionError(
                f"{rel.qualname} declares was={rel.was.describe()}: its children are read from "
                f"both layouts, merged, with `obj.{rel.name}.page()`, `async for` and "
                f"`.count()`; .query() reads one layout and would miss children not moved yet "
                "(query them once the migration is done and was= is removed)"
            )
        if rel.embedded is not None:
            raise DefinitionError(
                f"{rel.qualname}: embedded children come inside the parent item and are not "
                f"queried; read them with `await obj.{rel.name}.all()` and select in Python "
                f"(count them with `await obj.{rel.name}.count()`)"
            )
        if rel.sharded:
            raise DefinitionError(
                f"{rel.qualname} is sharded ({rel.via.describe()}): its children are read "
                f"merged from every shard with `obj.{rel.name}.page()` or `async for`, and "
                f"counted with `await obj.{rel.name}.count()`; .query() reads one partition"
            )
        values = rel.owner_info.values_of(self.parent)
        read = rel.children_read(reader.name_of(rel.children_table), values, where=where)
        return reader.query_collection(rel.target_info, read)

    def _count_queries(self, reader: LoaderReader, rel: HasManyRelation[C]) -> list[Query[C]]:
        """The children as Queries, one per shard (one if unsharded), for their counts."""
        values = rel.owner_info.values_of(self.parent)
        reads = rel.children_reads(reader.name_of(rel.children_table), values)
        return [reader.query_collection(rel.target_info, read) for read in reads]

    async def count(self) -> int:
        """How many children are stored now, whatever the strategy; never what was loaded.

        A Query's ``count()`` (``Select=COUNT``, or the identifying attributes when another
        entity's items may share the range) read to its end; a sharded collection sends one
        per shard, concurrently, and adds them up. Embedded children are counted in a GetItem
        of the parent item that reads only their attribute (ItemNotFoundError when the parent
        is not stored). :meth:`explain_count` shows the requests.
        """
        reader = self._reader()
        rel = self._has_many()
        if rel.was is not None:
            from .union import count_union, union_of  # noqa: PLC0415 - was= reads only

            return await count_union(reader, union_of(reader, rel, self._values()))
        if rel.embedded is not None:
            return len(await self._stored_embedded(reader, rel.embedded))
        queries = self._count_queries(reader, rel)
        if len(queries) == 1:
            return await queries[0].count()
        return sum(await asyncio.gather(*(query.count() for query in queries)))

    def explain_count(self) -> list[Request]:
        """The requests :meth:`count` sends first (every shard's Query, or the GetItem).

        Each Query is sent again with an ExclusiveStartKey while its reply has one.
        """
        reader = self._reader()
        rel = self._has_many()
        if rel.was is not None:
            from .union import union_of  # noqa: PLC0415 - was= reads only

            return union_of(reader, rel, self._values()).reads()
        if rel.embedded is not None:
            return [self._embedded_read(reader, rel.embedded)]
        return [q.explain(count=True)[0] for q in self._count_queries(reader, rel)]

    async def all(self) -> list[C]:
        """Every child (loaded ones first, then the rest from the database)."""
        return [child async for child in self]

    def _values(self) -> dict[str, object]:
        return self._has_many().owner_info.values_of(self.parent)

    async def __aiter__(self) -> AsyncIterator[C]:
        reader = self._reader()
        rel = self._has_many()
        if rel.was is not None:
            async for child in self._union(reader, rel):
                yield child
            return
        if rel.embedded is not None:
            for child in await self._embedded_children(reader, rel.embedded):
                yield child
            return
        state = state_of(self.parent)
        loaded = None if state is None else state.loaded.get(self.relationship.name)
        if loaded is not None and isinstance(loaded.read_by, HasManyRelation):
            # Loaded through a per-call override: the rest is read the same way.
            rel = loaded.read_by
        owner = rel.owner_info
        if rel.sharded:
            from .sharded import iterate_sharded  # noqa: PLC0415 - sharded reads only

            sharded = self._sharded_read(reader, rel)
            accept_shard = reader.acceptor(rel.target_info, sharded.reads[0].index)
            if loaded is not None:
                for child in list(loaded.items):
                    yield child
                if loaded.resume is None:
                    return
            after = None if loaded is None else loaded.position
            async for child in iterate_sharded(reader, sharded, accept_shard, after=after):
                yield child
            return
        read = rel.children_read(reader.name_of(rel.children_table), owner.values_of(self.parent))
        accept = reader.acceptor(rel.target_info, read.index)
        if loaded is None:
            async for child in reader.iterate(read, accept):
                yield child
            return
        for child in list(loaded.items):
            yield child
        if loaded.resume is not None:
            async for child in reader.iterate(read, accept, start=loaded.resume or None):
                yield child

    async def _union(self, reader: Reader, rel: HasManyRelation[C]) -> AsyncIterator[C]:
        """Both layouts of a relationship with ``was=``: the loaded children, then the rest."""
        from .union import iterate_union, union_of  # noqa: PLC0415 - was= reads only

        state = state_of(self.parent)
        loaded = None if state is None else state.loaded.get(rel.name)
        union = union_of(reader, rel, self._values())
        after = None
        if loaded is not None and loaded.read_by is rel:
            for child in list(loaded.items):
                yield child
            if loaded.resume is None:
                return
            after = loaded.position
        async for child in iterate_union(reader, union, after=after):
            yield child

    def __repr__(self) -> str:
        state = "loaded" if self.is_loaded else "not loaded"
        return f"<{self.relationship.qualname} of {self.parent!r} ({state})>"

    # Without these, `for p in user.posts` says only "'RelationLoader' object is not iterable".
    # Hidden from type checkers, which then flag the mistake itself.
    if not TYPE_CHECKING:

        def __iter__(self) -> NoReturn:
            raise TypeError(self._misused("not iterable"))

        def __await__(self) -> NoReturn:
            raise TypeError(self._misused("not awaitable"))

    def _misused(self, what: str) -> str:
        rel = self.relationship
        return (
            f"{rel.qualname} is {what}: it reads from the database, so iterate it with "
            f"`async for x in obj.{rel.name}`, read every child with "
            f"`await obj.{rel.name}.all()`, or pass load=[{rel.qualname}] and use "
            f"`obj.{rel.name}.loaded` (a list)"
        )


def reader_of(obj: object) -> LoaderReader | None:
    """The connection ``obj`` was read or written through (None: not attached to one)."""
    state = state_of(obj)
    # Only the io layer binds objects, and always to a Database's Reads (io/reads.py), a Reader.
    return None if state is None else cast("LoaderReader | None", state.database)


class HasMany(HasManyRelation[C]):
    """One parent, many children, stored as ``via`` says (see :class:`HasManyRelation`).

    Declared with its target alone (``HasMany["User"](...)``, ``HasMany(User, ...)``). On the
    class, ``Org.users`` is the relationship bound to its owner, typed
    ``HasManyRelation[User, Org]``, so ``db.add``, ``db.remove`` and ``load=`` check the
    parent's model. On an instance, ``org.users`` is the :class:`RelationLoader` of that
    parent's children.
    """

    # The owner is bound per access (method-level type variables): the declaration names only
    # the target, and the class or instance it is read on supplies the owner.
    @overload
    def __get__(self, obj: None, owner: type[Q]) -> HasManyRelation[C, Q]: ...
    @overload
    def __get__(self, obj: P, owner: type[Any] | None = None) -> RelationLoader[P, C]: ...
    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        return RelationLoader(obj, self)


class BelongsTo(BelongsToRelation[C]):
    """A child's link to its parent (see :class:`BelongsToRelation`).

    On the class, ``Ticket.user`` is the relationship bound to its owner, typed
    ``BelongsToRelation[User, Ticket]``. On an instance, ``ticket.user`` is the
    :class:`ParentLoader` of that child's parent.
    """

    @overload
    def __get__(self, obj: None, owner: type[Q]) -> BelongsToRelation[C, Q]: ...
    @overload
    def __get__(self, obj: P, owner: type[Any] | None = None) -> ParentLoader[P, C]: ...
    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> Any:
        if obj is None:
            return self
        return ParentLoader(obj, self)
