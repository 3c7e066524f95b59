"""Relationships as the mapping sees them: what links two models, and how children are read.

``HasManyRelation`` and ``BelongsToRelation`` hold everything a relationship decides without
sending: its target, its strategy, the fields that link child to parent, the reads of its
children. The public descriptors ``dynorm.HasMany`` and ``dynorm.BelongsTo`` (``io/loaders.py``)
are these plus attribute access on an instance, which hands out a loader that sends.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ForwardRef, Generic, TypeVar, cast

import attrs

from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    DefinitionError,
    KeyTemplateError,
)
from dynorm.core.keys import KeyTemplate
from dynorm.core.ranges import SortRange, sort_range
from dynorm.core.requests import CollectionRead, KeyRange, check_limit

from .embedded import EmbeddedCodec
from .model import (
    LocalScope,
    ModelInfo,
    ModelTable,
    info_of,
    is_model,
    not_key_fields,
    typed_keys,
)
from .strategies import Partition, Strategy

__all__ = [
    "BelongsToRelation",
    "HasManyRelation",
    "LoadOption",
    "Relationship",
    "embedded_of",
    "relationships_of",
]

C = TypeVar("C")
if TYPE_CHECKING:
    # The owner (parent) model of a relationship, bound when the descriptor is read on its class
    # (``Org.users`` is ``HasMany[User, Org]``); ``HasMany["User"]`` leaves it to its default.
    # Invariant, as the run-time check is exact (a relationship of Org takes Org objects). Only
    # the type checkers see the default (PEP 696), so nothing depends on typing_extensions.
    from typing_extensions import TypeVar as _DefaultedTypeVar

    Owner = _DefaultedTypeVar("Owner", default=Any)
else:
    Owner = TypeVar("Owner")


class Relationship(Generic[C, Owner]):
    """Common base: a named link from an owner model (``Owner``) to a target model (``C``).

    Only the target is given in a declaration: the owner's type comes from the class the
    descriptor is read on (``Org.users`` is a ``HasManyRelation[User, Org]``) or the instance
    (``org.users``), so ``users = HasMany["User"](via=Partition())`` needs no annotation naming
    its own class. Calls that take a relationship (``db.add``, ``load=``) check both.
    """

    def __init__(self, target: type[C] | str | None = None) -> None:
        # None: the target is the type argument, ``HasMany["User"](...)``, read in bind().
        self._target: type[C] | str | None = target
        self.owner: type[Any] | None = None
        self.name = "?"
        self._resolved = False
        #: Where the owner was declared, while the target may still need looking up there.
        self._scope: LocalScope | None = None

    # -- declaration -------------------------------------------------------------------------

    def bind(self, owner: type[Any], name: str, scope: LocalScope | None = None) -> None:
        """Attach to the model ``owner`` (declared already) as its relationship ``name``."""
        self.owner = owner
        self.name = name
        self._scope = scope
        _DECLARED.setdefault(info_of(owner), {})[name] = self
        if self._target is None:
            self._target = self._target_from_type_argument()

    def _target_from_type_argument(self) -> type[C] | str:
        # typing sets __orig_class__ on an instance made by calling a subscripted generic,
        # HasMany["User"](...): its argument is the class or a ForwardRef naming it.
        alias = getattr(self, "__orig_class__", None)
        args: tuple[object, ...] = getattr(alias, "__args__", ())
        target = args[0] if args else None
        if isinstance(target, ForwardRef):
            return target.__forward_arg__
        if isinstance(target, str | type):
            return cast("type[C] | str", target)
        kind = type(self).__name__
        raise DefinitionError(
            f'{self.qualname}: {kind} needs its target model: {kind}["Name"](...) or '
            f"{kind}(Name, ...); got {target!r}"
        )

    if not TYPE_CHECKING:

        def __class_getitem__(cls, params: object) -> object:
            # Relationship[User] and HasManyRelation[User]: the owner is left to its default
            # (Any), which only type checkers know of. HasMany and BelongsTo take the target
            # alone (their owner is bound on access); HasMany[Org, User], the parent-and-child
            # form of earlier versions, still works at run time: only the child is kept.
            wanted = len(getattr(cls, "__parameters__", ()))
            if wanted == 2 and not isinstance(params, tuple):
                params = (params, Any)
            elif wanted == 1 and isinstance(params, tuple) and len(params) == 2:
                params = params[1]
            return super().__class_getitem__(params)

    def local_names(self) -> dict[str, Any]:
        """The names local to the function that declared the owner (empty at module level)."""
        return self._scope.names() if self._scope is not None else {}

    @property
    def owner_name(self) -> str:
        return self.owner.__name__ if self.owner is not None else "?"

    @property
    def qualname(self) -> str:
        return f"{self.owner_name}.{self.name}"

    @property
    def target_name(self) -> str:
        if self._target is None:
            return "?"
        return self._target if isinstance(self._target, str) else self._target.__name__

    def try_resolve(self, table: ModelTable, *, final: bool = False) -> bool:
        """Resolve a string target once its model is declared, and validate the declaration.

        ``final`` (the table's ``check()``, run by ``connect``): every model of the owner's table
        is declared by now, so a name none of them has may be a model of another table.
        """
        if self._resolved:
            return True
        original = self._target
        if self._target is None:
            return False  # not bound to its owner yet
        if isinstance(self._target, str):
            found = self._find_target(table, self._target, final=final)
            if found is None:
                return False
            self._target = found
        elif not self.accepts_plain_target and not is_model(self._target):
            raise DefinitionError(
                f"{self.qualname}: target {self._target!r} is not a dynorm model; declare it with "
                "@table.model first, or name it with a string"
            )
        try:
            self._same_table(table)
            self.validate()
        except DefinitionError:
            self._target = original  # stay unresolved: a corrected declaration may follow
            raise
        self._resolved = True
        self._scope = None  # resolved: the declaring frame need not be kept alive
        return True

    #: Embedded children are plain attrs classes rather than table models.
    accepts_plain_target = False

    def _same_table(self, table: ModelTable) -> None:
        """A target of another table: allowed where the relationship can read it there."""
        target = self._target
        if not isinstance(target, type) or not is_model(target):
            return
        other = info_of(target).table
        if other is not table:
            self.check_across_tables(table, other)

    def check_across_tables(self, table: ModelTable, other: ModelTable) -> None:
        """Refuse a target of Table ``other`` (the owner is of ``table``) this kind cannot read."""

    @property
    def crosses_tables(self) -> bool:
        """Whether the target is a model of another table than the owner's."""
        target = self._target
        if not isinstance(target, type) or not is_model(target) or self.owner is None:
            return False
        return info_of(target).table is not info_of(self.owner).table

    def _find_target(self, table: ModelTable, name: str, *, final: bool) -> type[C] | None:
        info = table.models.get(name)
        if info is not None:
            return info.cls
        if self.owner is None:
            return None
        # Not a model of this table: the name is looked up where the owner was defined, the
        # declaring function's locals first, then the module (as typing resolves a forward
        # reference). A plain attrs class there is an embedded child; a model there is taken
        # only once the owner's table is complete (``final``), so a model of this table declared
        # later always wins over another table's of the same name.
        found = self.local_names().get(name)
        if found is None:
            found = getattr(sys.modules.get(self.owner.__module__), name, None)
        if not isinstance(found, type):
            return None
        if is_model(found):
            return cast("type[C]", found) if final else None
        if self.accepts_plain_target and attrs.has(found):
            return cast("type[C]", found)
        return None

    @property
    def target_cls(self) -> type[C]:
        if self._target is None or isinstance(self._target, str):
            raise DefinitionError(
                f"{self.qualname}: {self._target!r} is not declared yet; declare it (or pass the "
                "class itself) before using the relationship"
            )
        return self._target

    def validate(self) -> None:
        """Definition-time checks, run once both ends are declared."""

    @property
    def owner_info(self) -> ModelInfo[Any]:
        if self.owner is None:
            raise DefinitionError(f"{self!r} is used before its model class was declared")
        return info_of(self.owner)

    @property
    def target_info(self) -> ModelInfo[C]:
        if self._target is None or isinstance(self._target, str):
            raise DefinitionError(
                f"{self.qualname}: model {self._target!r} is not declared yet (a name in a "
                "string is looked up on the owner's table, then in the module that declares "
                "the owner)"
            )
        return info_of(self._target)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualname} -> {self.target_name}>"

    # -- load options ------------------------------------------------------------------------

    def limit(self, n: int) -> LoadOption[Owner]:
        """Load at most ``n`` children with the parent (the rest stay readable lazily)."""
        check_limit(n)
        return LoadOption(self, limit=n)

    def using(self, strategy: Strategy) -> LoadOption[Owner]:
        """Read this relationship through another strategy for one call (an index, say)."""
        return LoadOption(self, strategy=strategy)


class LoadOption(Generic[Owner]):
    """A relationship to load, with per-call settings: ``load=[Org.users.limit(10)]``.

    Typed by its owner model (``LoadOption[Org]``): calls that take ``load=`` accept only the
    relationships and options of the model they read.
    """

    # A plain class: as an attrs field typed Relationship, the attribute would be read through
    # the descriptor protocol by type checkers.
    __slots__ = ("limit", "relationship")

    def __init__(
        self,
        relationship: Relationship[Any, Owner],
        *,
        limit: int | None = None,
        strategy: Strategy | None = None,
    ) -> None:
        if strategy is not None:
            if not isinstance(relationship, HasManyRelation):
                raise DefinitionError(f"{relationship!r}: only HasMany can be read another way")
            relationship = relationship.via_strategy(strategy)
        self.relationship: Relationship[Any, Owner] = relationship
        self.limit = limit

    def with_limit(self, n: int) -> LoadOption[Owner]:
        """The same option, loading at most ``n`` children."""
        check_limit(n)
        return LoadOption(self.relationship, limit=n)

    def using(self, strategy: Strategy) -> LoadOption[Owner]:
        """The same option, read through another strategy: ``Rel.limit(5).using(Index(...))``."""
        return LoadOption(self.relationship, limit=self.limit, strategy=strategy)

    def __repr__(self) -> str:
        return f"LoadOption({self.relationship!r}, limit={self.limit!r})"


class HasManyRelation(Relationship[C, Owner]):
    """One parent, many children, stored as ``via`` says.

    ``newest_first=True`` reads children from the end of their sort order (seed 001: a user and
    the user's newest tickets in one Query).

    ``was=`` names the strategy the stored children were written with before ``via`` was
    declared, while a migration moves them (docs/migrations.md): reads take the union of both
    layouts and writes move each child they touch into ``via``'s.
    """

    def __init__(
        self,
        target: type[C] | str | None = None,
        *,
        via: Strategy | None = None,
        was: Strategy | None = None,
        newest_first: bool = False,
    ) -> None:
        super().__init__(target)
        if via is not None and not isinstance(via, Strategy):
            raise DefinitionError(f"via= takes a strategy such as Partition(); got {via!r}")
        if was is not None and not isinstance(was, Strategy):
            raise DefinitionError(
                f"was= takes the strategy the children were stored with, such as Partition(); "
                f"got {was!r}"
            )
        self.via: Strategy = Partition() if via is None else via
        #: the strategy the stored children may still be in (None: all are in ``via``'s layout)
        self.was: Strategy | None = was
        #: ``was=`` as declared: what a migration moves out of, even when it is ``via``'s place
        self.declared_was: Strategy | None = was
        self.newest_first = newest_first
        #: child field -> parent field, for the fields that place a child in the collection.
        self.link: dict[str, str] = {}
        self.embedded: EmbeddedCodec | None = None

    @property
    def accepts_plain_target(self) -> bool:  # type: ignore[override]
        return self.via.accepts_plain_target

    def check_across_tables(self, table: ModelTable, other: ModelTable) -> None:
        # The strategy says whether its children can live in another table (Index can).
        self.via.check_across_tables(self.qualname, table.name, other.name)

    @property
    def children_table(self) -> ModelTable:
        """The table holding the children: the target's, or the owner's for embedded ones."""
        return self.owner_info.table if self.embedded is not None else self.target_info.table

    def validate(self) -> None:
        if self.was is not None and self.was == self.via:
            raise DefinitionError(
                f"{self.qualname}: was={self.was.describe()} is the strategy via= declares; "
                "was= names the layout the children are moving out of. Remove was= (or change "
                "via=)"
            )
        self.embedded = self.via.embedded_codec(self)
        twice = self.embedded is not None and self.was is not None
        if twice and self.was is not None and self.was.embedded_codec(self) is not None:
            raise DefinitionError(
                f"{self.qualname}: via={self.via.describe()} and was={self.was.describe()} "
                "both embed the children in the parent; move them through a collection "
                "(via=Partition(), was=the old Embedded) first"
            )
        if self.was is not None and self._same_place(self.was):
            # Partition() -> Denormalized(copy=...), say: every child is where via= reads it, so
            # reads and writes take one layout (no extra request); only the migration, which
            # fills the copies, reads declared_was.
            self.was = None
        if self.embedded is not None:
            _EMBEDDED.setdefault(self.owner_info, []).append(self)
            return
        self.link = self.via.link(self.owner_info, self.target_info, self.qualname)

    def _same_place(self, other: Strategy) -> bool:
        """Whether ``other`` keeps the children in the very items ``via`` reads."""
        return (
            self.embedded is None
            and other.embedded_codec(self) is None
            and (other.index, other.shards) == (self.via.index, self.via.shards)
        )

    def via_strategy(self, strategy: Strategy) -> HasManyRelation[C, Owner]:
        """This relationship read through another strategy, for one call (see LoadOption)."""
        clone: HasManyRelation[C, Owner] = type(self)(
            self.target_cls, via=strategy, newest_first=self.newest_first
        )
        clone.owner, clone.name, clone._resolved = self.owner, self.name, True
        clone.link = strategy.link(self.owner_info, self.target_info, self.qualname)
        return clone

    @property
    def copies(self) -> Mapping[str, str]:
        """Parent field -> child field copied into each child (Denormalized only)."""
        return self.via.copies

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
        self,
        table_name: str,
        parent_values: Mapping[str, object],
        *,
        consistent: bool = False,
        where: Mapping[str, object] | None = None,
        shard: int | None = None,
    ) -> CollectionRead:
        """The Query that reads only this relationship's children (in ``shard``, if sharded).

        ``where`` gives further components of the children's sort key, the last one perhaps a
        condition (``between``, ``gt``, ``begins_with`` ...), as in ``db.query``.
        """
        child = self.target_info
        pk, sk = child.key_templates(self.via.index)
        if pk.sharded and shard is None:
            raise DefinitionError(
                f"{self.qualname} is sharded: its children are read by one Query per shard "
                "(children_reads), merged; a single Query reads one shard"
            )
        link = self.link_values(parent_values)
        sk_kind = child.key_type(child.table.key_attributes(self.via.index)[1] or "")
        if where or (sk is not None and sk_kind != "S"):
            values = {**link, **self._sort_components(sk, link, where or {})}
            assert sk is not None  # noqa: S101 - checked by _sort_components
            sorted_ = sort_range(sk, values, f"{self.qualname}.query()", sk_kind)
        else:
            prefix = self.child_prefix(parent_values)
            sorted_ = SortRange(KeyRange("begins_with", (prefix,)) if prefix else None)
        return collection_read(
            child,
            self.via.index,
            table_name,
            pk.format(link, shard),
            sorted_,
            forward=not self.newest_first,
            consistent=consistent,
        )

    @property
    def sharded(self) -> bool:
        """Whether the children are spread over several partitions (``Partition(shards=N)``)."""
        return self.via.shards > 1

    def children_reads(
        self, table_name: str, parent_values: Mapping[str, object], *, consistent: bool = False
    ) -> tuple[CollectionRead, ...]:
        """The Queries that read this relationship's children: one per shard (one if unsharded).

        Sent together and merged in sort key order (see ``dynorm.mapping.sharded``).
        """
        if not self.sharded:
            return (self.children_read(table_name, parent_values, consistent=consistent),)
        return tuple(
            self.children_read(table_name, parent_values, consistent=consistent, shard=shard)
            for shard in range(self.via.shards)
        )

    def _sort_components(
        self, sk: KeyTemplate | None, link: Mapping[str, object], where: Mapping[str, object]
    ) -> Mapping[str, object]:
        free = [f for f in (sk.fields if sk is not None else ()) if f not in link]
        unknown = [name for name in where if name not in free]
        if unknown:
            raise not_key_fields(self.target_name, f"{self.qualname}.query() takes", unknown, free)
        self.target_info.check_key_types(where)
        return where

    def check_child(self, parent: object, child: C) -> None:
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


class BelongsToRelation(Relationship[C, Owner]):
    """A child's link to its parent, read with GetItem (or BatchGetItem for many children).

    Which child fields hold the parent's key is found, in this order: ``key=`` (parent field ->
    child field, ``key={"user_id": "reporter_id"}``); the one HasMany on the parent that holds
    this model (its link, whatever its strategy); the key templates this model shares in shape
    with the parent's (table and common indexes); fields of the same names. Fields ``key=``
    leaves out are matched by name. A child whose link field is None has no parent.
    """

    def __init__(
        self, target: type[C] | str | None = None, *, key: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(target)
        given: object = key
        if given is not None and (
            not isinstance(given, Mapping)
            or not given
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items())
        ):
            raise DefinitionError(
                "BelongsTo(key=...) maps the parent's key fields to the child's fields that hold "
                f"them, as field names: key={{'user_id': 'reporter_id'}}; got {key!r}"
            )
        self.key: Mapping[str, str] | None = None if key is None else dict(key)
        #: parent key field -> the child field that holds it.
        self.link: dict[str, str] = {}

    def validate(self) -> None:
        parent, child = self.target_info, self.owner_info
        if self.key is None:
            self._refuse_look_alikes()
        self.link = link_to_parent(self.qualname, parent, child, self.key, self._inverses())

    def _refuse_look_alikes(self) -> None:
        """Two BelongsTo to one model: key templates cannot tell which field is whose."""
        twins = [
            r.name
            for r in relationships_of(self.owner_info).values()
            if isinstance(r, BelongsToRelation)
            and r is not self
            and r.target_name == self.target_name
        ]
        if twins:
            names = ", ".join(f"{self.owner_name}.{n}" for n in [self.name, *twins])
            raise DefinitionError(
                f"{self.qualname}: {names} all point at {self.target_name}, so key templates "
                f"cannot tell which {self.owner_name} field links each; pass "
                f"key={_key_example(self.target_info, self.owner_name)} to each of them"
            )

    def _inverses(self) -> list[tuple[str, Mapping[str, str]]]:
        """(name, child field -> parent field) of each HasMany on the parent holding this model."""
        child, parent = self.owner_info, self.target_info
        found: list[tuple[str, Mapping[str, str]]] = []
        for rel in relationships_of(parent).values():
            if not isinstance(rel, HasManyRelation) or rel.target_name != child.name:
                continue
            # The HasMany may be declared after this BelongsTo: resolve it now (it is idempotent,
            # and both of its ends exist), so the link does not depend on declaration order.
            if rel.try_resolve(parent.table) and rel.target_cls is child.cls and rel.link:
                found.append((rel.qualname, rel.link))
        return found

    def parent_key(self, child: object) -> Item | None:
        """The parent's primary key read off the child; None when a link field is None."""
        values = {parent_field: getattr(child, f) for parent_field, f in self.link.items()}
        if any(v is None for v in values.values()):
            return None
        return self.target_info.primary_key(values)

    def parent_key_from(self, child_values: Mapping[str, object]) -> Item | None:
        """The parent's primary key from some of the child's field values, if they suffice."""
        if not all(child_values.get(f) is not None for f in self.link.values()):
            return None
        values = {parent_field: child_values[f] for parent_field, f in self.link.items()}
        return self.target_info.primary_key(values)


def link_to_parent(
    qualname: str,
    parent: ModelInfo[Any],
    child: ModelInfo[Any],
    key: Mapping[str, str] | None,
    inverses: Sequence[tuple[str, Mapping[str, str]]],
) -> dict[str, str]:
    """Parent key field -> the child field holding it, for a BelongsTo from ``child``.

    Sources, first that applies: ``key``; the one distinct inverse link (``inverses`` are the
    HasMany links child field -> parent field); the shapes of the key templates both models have
    (table and common indexes; models of one table only); nothing. Key fields still unmapped
    are matched by name. A model pointing at itself is never linked by shape or name alone,
    which would link it to itself.
    """
    identity = parent.identity_fields()
    myself = parent.cls is child.cls
    if key is not None:
        _check_key(qualname, parent, child, key)
        found = dict(key)
    else:
        found = _from_inverses(qualname, parent, child, inverses)
        if not found and not myself and parent.table is child.table:
            # Templates of two tables share no collection: their shapes say nothing of a link.
            found = _from_shapes(qualname, parent, child)
    if found or not myself:
        found.update({f: f for f in identity if f not in found and f in child.field_types})
    missing = [f for f in identity if f not in found]
    if missing:
        how = (
            ""
            if key is not None
            else f" (neither a HasMany on {parent.name} nor the key templates say which "
            f"{child.name} field holds it)"
        )
        raise DefinitionError(
            f"{qualname}: {child.name} has no field for {parent.name}'s key "
            f"{', '.join(missing)}{how}; pass key={_key_example(parent, child.name, missing)} "
            f"naming the {child.name} field that holds each"
        )
    return {f: found[f] for f in identity}


def _key_example(parent: ModelInfo[Any], child_name: str, fields: Sequence[str] = ()) -> str:
    names = fields or parent.identity_fields()
    return "{" + ", ".join(f"{f!r}: '<{child_name} field>'" for f in names) + "}"


def _check_key(
    qualname: str, parent: ModelInfo[Any], child: ModelInfo[Any], key: Mapping[str, str]
) -> None:
    identity = parent.identity_fields()
    for parent_field, child_field in key.items():
        if parent_field not in identity:
            what = "a field" if parent_field not in parent.field_types else "a key field"
            raise DefinitionError(
                f"{qualname}: key= maps {parent.name}'s key fields ({', '.join(identity)}) to "
                f"{child.name}'s fields, and {parent_field!r} is not {what} of {parent.name}"
            )
        if child_field not in child.field_types:
            raise DefinitionError(
                f"{qualname}: key= names {child_field!r} to hold {parent.name}.{parent_field}, but "
                f"{child.name} has no field {child_field!r}; name one of its fields"
            )


def _from_inverses(
    qualname: str,
    parent: ModelInfo[Any],
    child: ModelInfo[Any],
    inverses: Sequence[tuple[str, Mapping[str, str]]],
) -> dict[str, str]:
    identity = parent.identity_fields()
    distinct: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for name, link in inverses:
        inverted: dict[str, str] = {}
        for child_field, parent_field in link.items():
            if parent_field in identity:
                inverted.setdefault(parent_field, child_field)
        if inverted:
            distinct.setdefault(tuple(sorted(inverted.items())), []).append(name)
    if len(distinct) > 1:
        ways = "; ".join(
            f"{' and '.join(names)} by {', '.join(f'{c} -> {p}' for p, c in pairs)}"
            for pairs, names in distinct.items()
        )
        raise DefinitionError(
            f"{qualname}: {parent.name} holds {child.name} in more than one way ({ways}), so which "
            f"one {qualname} inverts is ambiguous; pass key={_key_example(parent, child.name)}"
        )
    return dict(next(iter(distinct), ()))


def _from_shapes(qualname: str, parent: ModelInfo[Any], child: ModelInfo[Any]) -> dict[str, str]:
    """Parent key field -> child field from every key template scope the models share."""
    scopes = [None, *(i for i in child.table.indexes if parent.in_index(i) and child.in_index(i))]
    found: dict[str, set[str]] = {}
    for scope in scopes:
        parent_pk, parent_sk = parent.key_templates(scope)
        child_pk, child_sk = child.key_templates(scope)
        link = parent_pk.align(child_pk)  # child field -> parent field
        if link is None:
            continue
        if parent_sk is not None and child_sk is not None:
            # A sort key nested under the parent's (USER#{u}#DEVICE#{d}) names the parent too.
            link = {**(parent_sk.align_leading(child_sk) or {}), **link}
        for child_field, parent_field in link.items():
            found.setdefault(parent_field, set()).add(child_field)
    identity = parent.identity_fields()
    clashes = {p: sorted(c) for p, c in found.items() if len(c) > 1 and p in identity}
    if clashes:
        detail = "; ".join(f"{p} by {' or '.join(c)}" for p, c in clashes.items())
        raise DefinitionError(
            f"{qualname}: {child.name}'s key templates match {parent.name}'s in more than one way "
            f"({detail}); pass key={_key_example(parent, child.name)}"
        )
    return {p: next(iter(c)) for p, c in found.items() if p in identity}


def collection_read(
    info: ModelInfo[Any],
    index: str | None,
    table_name: str,
    pk_value: str,
    sorted_: SortRange,
    *,
    forward: bool = True,
    consistent: bool = False,
) -> CollectionRead:
    """The Query of ``info``'s items in one collection, within the sort key range ``sorted_``."""
    table = info.table
    pk_attr, sk_attr = table.key_attributes(index)
    key_attrs = table.start_key_attributes(index)
    return CollectionRead(
        table_name=table_name,
        index=index,
        pk_attr=pk_attr,
        pk_value=pk_value,
        pk_kind=table.key_type(pk_attr),
        sk_attr=sk_attr,
        range=sorted_.range,
        excluded=sorted_.excluded,
        forward=forward,
        consistent=consistent and index is None,  # indexes have no strong reads
        key_attrs=key_attrs,
        key_types=typed_keys(table, key_attrs),
        models=(info.name,),
        parse=table.parser("Query", index),
    )


#: Each model's relationships by name, in declaration order, and those of them whose children are
#: stored inside its items. Kept here rather than on ModelInfo, which the relationships point to;
#: weak, so a model declared inside a function goes with it.
_DECLARED: weakref.WeakKeyDictionary[ModelInfo[Any], dict[str, Relationship[Any]]] = (
    weakref.WeakKeyDictionary()
)
_EMBEDDED: weakref.WeakKeyDictionary[ModelInfo[Any], list[HasManyRelation[Any]]] = (
    weakref.WeakKeyDictionary()
)


def relationships_of(info: ModelInfo[Any]) -> Mapping[str, Relationship[Any]]:
    """The relationships declared on ``info``'s model, by name."""
    return _DECLARED.get(info) or {}


def embedded_of(info: ModelInfo[Any]) -> Sequence[HasManyRelation[Any]]:
    """The (resolved) relationships whose children are stored inside ``info``'s items."""
    return _EMBEDDED.get(info) or ()
