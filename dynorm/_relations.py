"""Relationship descriptors (``HasMany``, ``BelongsTo``) and the loaders they hand out.

``Org.users`` (on the class) is the descriptor: pass it to ``load=[...]``, ``db.add`` and
``db.remove``. ``org.users`` (on an instance) is a :class:`RelationLoader`: ``.loaded`` is data
that came with a load, while ``async for``, ``.page()`` and ``.all()`` are the only calls that send
requests. Nothing is ever loaded implicitly on attribute access.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ._cursor import decode_cursor, encode_cursor
from ._errors import DefinitionError, DetachedError, KeyTemplateError, NotLoadedError
from ._model import ModelInfo, info_of, is_model
from ._paging import Page, iterate, read_page
from ._plans import CollectionRead, KeyRange
from ._query import check_limit
from ._state import Session, state_of
from ._strategies import Partition, Strategy

if TYPE_CHECKING:
    from ._table import Table

__all__ = ["BelongsTo", "HasMany", "LoadOption", "RelationLoader", "Relationship"]

P = TypeVar("P")
C = TypeVar("C")


class Relationship(Generic[P, C]):
    """Common base: a named link from an owner model to a target model."""

    def __init__(self, target: type[C] | str) -> None:
        self._target = target
        self.owner: type[P] | None = None
        self.name = "?"
        self._resolved = False

    # -- declaration -------------------------------------------------------------------------

    def bind(self, owner: type[P], name: str) -> None:
        self.owner = owner
        self.name = name

    @property
    def owner_name(self) -> str:
        return self.owner.__name__ if self.owner is not None else "?"

    @property
    def qualname(self) -> str:
        return f"{self.owner_name}.{self.name}"

    @property
    def target_name(self) -> str:
        return self._target if isinstance(self._target, str) else self._target.__name__

    def try_resolve(self, table: Table) -> bool:
        """Resolve a string target once its model is declared, and validate the declaration."""
        if self._resolved:
            return True
        if isinstance(self._target, str):
            info = table.models.get(self._target)
            if info is None:
                return False
            self._target = info.cls
        elif not is_model(self._target):
            raise DefinitionError(
                f"{self.qualname}: target {self._target!r} is not a dynorm model; declare it with "
                "@table.model first, or name it with a string"
            )
        self._resolved = True
        self.validate()
        return True

    def validate(self) -> None:
        """Definition-time checks, run once both ends are declared."""

    @property
    def owner_info(self) -> ModelInfo[P]:
        if self.owner is None:
            raise DefinitionError(f"{self!r} is used before its model class was declared")
        return info_of(self.owner)

    @property
    def target_info(self) -> ModelInfo[C]:
        if isinstance(self._target, str):
            raise DefinitionError(
                f"{self.qualname}: model {self._target!r} is not declared on this table yet"
            )
        return info_of(self._target)

    # -- descriptor protocol -----------------------------------------------------------------

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Relationship[P, C]: ...
    @overload
    def __get__(self, obj: object, owner: type[Any]) -> RelationLoader[P, C]: ...
    def __get__(self, obj: object | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        return RelationLoader(obj, self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualname} -> {self.target_name}>"

    # -- load options ------------------------------------------------------------------------

    def limit(self, n: int) -> LoadOption:
        """Load at most ``n`` children with the parent (the rest stay readable lazily)."""
        check_limit(n)
        return LoadOption(self, limit=n)


class LoadOption:
    """A relationship to load, with per-call settings: ``load=[Org.users.limit(10)]``."""

    # A plain class: as an attrs field typed Relationship, the attribute would be read through
    # the descriptor protocol by type checkers.
    __slots__ = ("limit", "relationship")

    def __init__(self, relationship: Relationship[Any, Any], *, limit: int | None = None) -> None:
        self.relationship: Relationship[Any, Any] = relationship
        self.limit = limit

    def __repr__(self) -> str:
        return f"LoadOption({self.relationship!r}, limit={self.limit!r})"


class HasMany(Relationship[P, C]):
    """One parent, many children, stored as ``via`` says.

    ``newest_first=True`` reads children from the end of their sort order (seed 001: a user and
    the user's newest tickets in one Query).
    """

    def __init__(
        self, target: type[C] | str, *, via: Strategy | None = None, newest_first: bool = False
    ) -> None:
        super().__init__(target)
        self.via: Strategy = Partition() if via is None else via
        self.newest_first = newest_first
        #: child field -> parent field, for the fields that place a child in the collection.
        self.link: dict[str, str] = {}

    def validate(self) -> None:
        if not isinstance(self.via, Strategy):
            raise DefinitionError(f"{self.qualname}: via= takes a strategy such as Partition()")
        self.link = self.via.link(self.owner_info, self.target_info, self.qualname)

    # -- planning (pure) ---------------------------------------------------------------------

    def link_values(self, parent_values: Mapping[str, object]) -> dict[str, object]:
        """The child fields implied by the parent (``{"org_name": "MICROSOFT"}``)."""
        try:
            return {child: parent_values[parent] for child, parent in self.link.items()}
        except KeyError as exc:
            raise KeyTemplateError(f"{self.qualname}: the parent's {exc} is needed") from None

    def child_prefix(self, parent_values: Mapping[str, object]) -> str:
        _, sk = self.target_info.key_templates(self.via.index)
        return sk.prefix(self.link_values(parent_values)) if sk is not None else ""

    def children_read(
        self, table_name: str, parent_values: Mapping[str, object], *, consistent: bool = False
    ) -> CollectionRead:
        """The Query that reads only this relationship's children."""
        child = self.target_info
        pk, _ = child.key_templates(self.via.index)
        prefix = self.child_prefix(parent_values)
        return collection_read(
            child,
            self.via.index,
            table_name,
            pk.format(self.link_values(parent_values)),
            KeyRange("begins_with", (prefix,)) if prefix else None,
            forward=not self.newest_first,
            consistent=consistent,
        )

    def check_child(self, parent: P, child: C) -> None:
        """A child handed to add/remove must belong to this parent's collection."""
        child_info = self.target_info
        if type(child) is not child_info.cls:
            raise TypeError(f"{self.qualname} holds {child_info.name}, not {type(child).__name__}")
        expected = self.link_values(self.owner_info.values_of(parent))
        wrong = {f: v for f, v in expected.items() if getattr(child, f) != v}
        if wrong:
            detail = ", ".join(
                f"{f}={getattr(child, f)!r} (parent says {v!r})" for f, v in wrong.items()
            )
            raise KeyTemplateError(
                f"{self.qualname}: this {child_info.name} belongs to another parent: {detail}"
            )


class BelongsTo(Relationship[P, C]):
    """A child's link to its parent, read with GetItem (or BatchGetItem for many children)."""

    def __init__(self, target: type[C] | str) -> None:
        super().__init__(target)
        self.link: dict[str, str] = {}

    def validate(self) -> None:
        parent = self.target_info
        child = self.owner_info
        missing = [f for f in parent.identity_fields() if f not in child.field_types]
        # The parent's key fields are found on the child by name, or by aligning partition keys.
        mapping = {f: f for f in parent.identity_fields() if f in child.field_types}
        if missing:
            aligned = child.key_templates(None)[0].align(parent.key_templates(None)[0]) or {}
            for parent_field in missing:
                if parent_field in aligned:
                    mapping[parent_field] = aligned[parent_field]
        unresolved = [f for f in parent.identity_fields() if f not in mapping]
        if unresolved:
            raise DefinitionError(
                f"{self.qualname}: {child.name} has no field for {parent.name}'s key "
                f"{', '.join(unresolved)}; add it, or align the partition key templates"
            )
        self.link = mapping

    def parent_key_values(self, child: C) -> dict[str, object]:
        """The parent's key fields, read off the child."""
        return {parent_field: getattr(child, f) for parent_field, f in self.link.items()}


def collection_read(
    info: ModelInfo[Any],
    index: str | None,
    table_name: str,
    pk_value: str,
    range_: KeyRange | None,
    *,
    forward: bool = True,
    consistent: bool = False,
) -> CollectionRead:
    table = info.table
    pk_attr, sk_attr = table.key_attributes(index)
    key_attrs = list(table.primary_attributes)
    if index is not None:
        key_attrs += [a for a in (pk_attr, sk_attr) if a and a not in key_attrs]
    return CollectionRead(
        table_name=table_name,
        index=index,
        pk_attr=pk_attr,
        pk_value=pk_value,
        sk_attr=sk_attr,
        range=range_,
        forward=forward,
        consistent=consistent and index is None,  # indexes have no strong reads
        key_attrs=tuple(key_attrs),
    )


class RelationLoader(Generic[P, C]):
    """One parent's view of a relationship: loaded data plus explicit, lazy reads."""

    __slots__ = ("parent", "relationship")

    def __init__(self, parent: P, relationship: Relationship[P, C]) -> None:
        self.parent = parent
        self.relationship = relationship

    def _session(self) -> Session:
        state = state_of(self.parent)
        if state is None or state.session is None:
            raise DetachedError(
                f"{self.relationship.qualname}: this {type(self.parent).__name__} is not attached "
                "to a Database; read it with db.get/db.query, or call db.attach(obj) first"
            )
        return state.session

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
        return list(state.loaded[self.relationship.name].items)

    def _has_many(self) -> HasMany[P, C]:
        if not isinstance(self.relationship, HasMany):
            raise TypeError(f"{self.relationship.qualname} is not a HasMany relationship")
        return self.relationship

    def _read(self, session: Session) -> CollectionRead:
        rel = self._has_many()
        values = rel.owner_info.values_of(self.parent)
        return rel.children_read(session.table_name, values)

    async def page(self, limit: int | None = None, cursor: str | None = None) -> Page[C]:
        """One page of ``limit`` children after ``cursor`` (None: from the first child)."""
        check_limit(limit)
        session = self._session()
        read = self._read(session)
        fingerprint = read.fingerprint()
        start = None if cursor is None else decode_cursor(cursor, fingerprint)
        accept = session.acceptor(self._has_many().target_info, read.index)
        items, after = await read_page(session.send, read, accept, limit=limit, start=start)
        return Page(items, None if after is None else encode_cursor(after, fingerprint))

    async def all(self) -> list[C]:
        """Every child (loaded ones first, then the rest from the database)."""
        return [child async for child in self]

    async def __aiter__(self) -> AsyncIterator[C]:
        session = self._session()
        read = self._read(session)
        accept = session.acceptor(self._has_many().target_info, read.index)
        state = state_of(self.parent)
        loaded = None if state is None else state.loaded.get(self.relationship.name)
        if loaded is None:
            async for child in iterate(session.send, read, accept):
                yield child
            return
        for child in list(loaded.items):
            yield child
        if loaded.resume is not None:
            async for child in iterate(session.send, read, accept, start=loaded.resume or None):
                yield child

    def __repr__(self) -> str:
        state = "loaded" if self.is_loaded else "not loaded"
        return f"<{self.relationship.qualname} of {self.parent!r} ({state})>"
