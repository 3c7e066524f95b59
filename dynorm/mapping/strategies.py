"""Relationship strategies: frozen values that say where children live and own their rules.

Strategies never send anything. Each answers, purely, what its relationship needs: how children
are placed and read (:meth:`Strategy.link`), how one is added or removed (plans of steps, see
:mod:`dynorm.core.steps`), what a write of the parent must also write (denormalized copies), what a
child written on its own must carry, and what a cascading delete removes. Callers ask the
strategy; none of them inspects which strategy it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import msgspec

from dynorm.core.errors import ConditionFailedError, DefinitionError, LimitExceededError
from dynorm.core.keys import KeyTemplate
from dynorm.core.requests import CollectionRead, Request
from dynorm.core.steps import FromRead, Plan, Send, Unread

from .embedded import EmbeddedCodec, add_request, create_map_request, remove_request
from .together import send_with

if TYPE_CHECKING:
    from .model import ModelInfo

__all__ = ["Denormalized", "Embedded", "Index", "Partition", "Strategy"]


class Children(Protocol):
    """What a strategy asks of the relationship it serves (``HasManyRelation`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def qualname(self) -> str: ...

    @property
    def owner_info(self) -> ModelInfo[Any]: ...

    @property
    def target_cls(self) -> type[Any]: ...

    @property
    def embedded(self) -> EmbeddedCodec | None: ...

    def local_names(self) -> dict[str, Any]: ...

    def check_child(self, parent: object, child: Any) -> None: ...

    def children_read(
        self, table_name: str, parent_values: Mapping[str, object]
    ) -> CollectionRead: ...

    def children_reads(
        self, table_name: str, parent_values: Mapping[str, object]
    ) -> tuple[CollectionRead, ...]: ...


class ItemWrites(Protocol):
    """How a strategy writes a child that is an item of its own (the write planner's rules)."""

    def put(self, obj: object) -> Plan[object]:
        """Store ``obj`` with every rule of its model (copies filled, limits checked)."""
        ...

    def delete(self, obj: object) -> Plan[None]:
        """Delete ``obj``'s item."""
        ...


class ChildChange(msgspec.Struct, frozen=True):
    """One child added to or removed from a parent, as ``plan_add``/``plan_remove`` see it."""

    parent: object
    child: object
    #: the parent's loaded children (all of them), or None when none were loaded
    held: Sequence[object] | None
    table_name: str
    writes: ItemWrites
    #: writes that go in the same transaction as the change: the removal of the child's old
    #: copy while the relationship declares ``was=`` (see dynorm/mapping/oldcopies.py)
    also: tuple[Request, ...] = ()


class Strategy:
    """Base of every strategy: children are items of their own, in some item collection."""

    #: The index holding the collection (None: the table), for collection strategies.
    index: str | None = None
    #: Over how many partitions the children are spread (see ``Partition(shards=N)``).
    shards: int = 1

    def describe(self) -> str:
        return type(self).__name__ + "()"

    # -- what a write must also do (the write planner asks; see dynorm/mapping/writeplan.py) --

    @property
    def copies(self) -> Mapping[str, str]:
        """Parent field -> child field that children carry copies of (none by default)."""
        return MappingProxyType({})

    def fanout_limit(self) -> int | None:
        """How many children one write of the parent may rewrite at most (None: no rewrites)."""
        return None

    @property
    def accepts_plain_target(self) -> bool:
        """Whether children may be plain attrs classes rather than table models."""
        return False

    def embedded_codec(self, rel: Children) -> EmbeddedCodec | None:
        """The codec of the attribute that holds children inside the parent item, if any."""
        return None

    def prepare_child(
        self, rel: Children, parent_values: Mapping[str, object], child: object
    ) -> object:
        """The child as it must be stored under this parent (its copies filled, say)."""
        return child

    @property
    def cascades(self) -> bool:
        """Whether a cascading delete of the parent reads children to delete (and theirs)."""
        return True

    def cascade_reads(
        self, rel: Children, table_name: str, parent_values: Mapping[str, object]
    ) -> tuple[CollectionRead, ...]:
        """The reads of the children a cascading delete of the parent removes (every shard)."""
        return rel.children_reads(table_name, parent_values)

    def plan_add(self, rel: Children, change: ChildChange) -> Plan[object]:
        """Store the child under the parent; returns the child as stored."""
        child = self.prepare_child(rel, rel.owner_info.values_of(change.parent), change.child)
        rel.check_child(change.parent, child)
        return (yield from change.writes.put(child))

    def plan_remove(self, rel: Children, change: ChildChange) -> Plan[int | None]:
        """Take the child out of the relationship; returns the list position it had, if any."""
        rel.check_child(change.parent, change.child)
        yield from change.writes.delete(change.child)
        return None

    def check_across_tables(self, qualname: str, table: str, other: str) -> None:
        """Refuse children that are models of Table ``other`` (the parent's is ``table``).

        A partition belongs to one table: children of another table cannot share the parent's.
        ``Index`` reads them through an index of their table instead.
        """
        raise DefinitionError(
            f"{qualname} via {self.describe()}: the children are models of Table {other!r} and "
            f"the parent of Table {table!r}; items of two tables cannot share a partition. Read "
            f"them through an index of Table {other!r} whose partition key the parent's fields "
            "fill: via=Index(name)"
        )

    def link(self, parent: ModelInfo[Any], child: ModelInfo[Any], qualname: str) -> dict[str, str]:
        """Child field -> parent field, from aligning the collection's partition key templates.

        When the parent is not in the children's collection, fields of the same name link them
        (for children of another table, too: the parent is never in their collection).
        """
        scope = f"index {self.index!r}" if self.index else "the table"
        if self.index is not None and self.index not in child.table.indexes:
            declared = ", ".join(child.table.indexes) or "none"
            raise DefinitionError(
                f"{qualname} via {self.describe()}: index {self.index!r} is not declared on Table "
                f"{child.table.name!r}; declared: {declared}"
            )
        if self.index is not None and not child.in_index(self.index):
            raise DefinitionError(
                f"{qualname} via {self.describe()}: {child.name} has no key templates for "
                f"{self.index!r}; declare @table.model(..., {self.index}=(pk, sk))"
            )
        child_pk, child_sk = child.key_templates(self.index)
        child_pk = self._check_shards(child, child_pk, qualname)
        mapping = None
        # Across tables an index of the parent's table may bear the same name: not this one.
        shared = parent.table is child.table and (
            parent.in_index(self.index) if self.index else True
        )
        if shared:
            parent_pk, _ = parent.key_templates(self.index)
            mapping = parent_pk.align(child_pk)
        if mapping is None and all(f in parent.field_types for f in child_pk.fields):
            # The parent is not in the children's collection (a user's games in an inverted
            # index): the collection is still found from the parent's fields of the same names.
            mapping = {f: f for f in child_pk.fields}
        if mapping is None and not shared:
            missing = [f for f in child_pk.fields if f not in parent.field_types]
            raise DefinitionError(
                f"{qualname} via {self.describe()}: {parent.name} is not in {child.name}'s "
                f"collection in {scope} of Table {child.table.name!r}, so fields of the same "
                f"names link them, and {parent.name} has no field {', '.join(missing)} (from "
                f"{child_pk.source!r}); name {child.name}'s fields as {parent.name}'s"
            )
        if mapping is None:
            parent_pk, _ = parent.key_templates(self.index)
            raise DefinitionError(
                f"{qualname} via {self.describe()}: children must share the parent's partition in "
                f"{scope}, but {child.name}'s template {child_pk.source!r} does not have the "
                f"shape of {parent.name}'s {parent_pk.source!r}; make the literals match"
            )
        if child_sk is None:
            raise DefinitionError(
                f"{qualname} via {self.describe()}: {scope} has no sort key, so a partition "
                "holds one item and cannot hold children"
            )
        if shared:
            # Children nested under the parent's own sort key (USER#{u} -> USER#{u}#DEVICE#{d})
            # are narrowed to this parent, not to every sibling's children.
            _, parent_sk = parent.key_templates(self.index)
            nested = parent_sk.align_leading(child_sk) if parent_sk is not None else None
            mapping = {**(nested or {}), **mapping}
        return mapping

    def _check_shards(
        self, child: ModelInfo[Any], child_pk: KeyTemplate, qualname: str
    ) -> KeyTemplate:
        """The children's partition template without its shard; records the shard count.

        A sharded strategy needs ``{shard}`` in the children's partition key template, an
        unsharded one refuses it: the template says where children are, the strategy how many
        partitions that spans.
        """
        pk_attr, _ = child.table.key_attributes(self.index)
        if self.shards > 1 and not child_pk.sharded:
            source = child_pk.source
            raise DefinitionError(
                f"{qualname} via {self.describe()}: {child.name}'s partition key template "
                f"{source!r} has no {{shard}}; write {source + child_pk.delimiter + '{shard}'!r} "
                "(dynorm fills the shard from each child's key)"
            )
        if self.shards == 1 and child_pk.sharded:
            raise DefinitionError(
                f"{qualname} via {self.describe()}: {child.name}'s partition key template "
                f"{child_pk.source!r} holds {{shard}}, but the relationship is not sharded; "
                f"declare the number of shards ({self.describe()[:-1]}shards=8)) or drop "
                "{shard} from the template"
            )
        if child_pk.sharded:
            child.declare_shards(pk_attr, self.shards, f"{qualname} via {self.describe()}")
        return child_pk.without_shard()


def _check_shard_count(strategy: str, shards: int) -> None:
    if type(shards) is not int or shards < 1:
        raise DefinitionError(
            f"{strategy}(shards=...) takes a positive int, the number of partitions the "
            f"children are spread over (1: not sharded); got {shards!r}"
        )


class Partition(msgspec.Struct, Strategy, frozen=True, kw_only=True, repr_omit_defaults=True):
    """Children share the parent's partition key and have their own sort key prefix.

    Loading the parent with its children is one Query on the table. With ``shards=N`` (N > 1)
    the children are spread over N partitions, their partition key template holding
    ``{shard}`` (``"POST#{post_id}#{shard}"``): a load reads the N in parallel and merges them.
    """

    shards: int = 1

    def __post_init__(self) -> None:
        _check_shard_count("Partition", self.shards)

    def describe(self) -> str:
        return f"Partition(shards={self.shards})" if self.shards > 1 else "Partition()"


class Index(msgspec.Struct, Strategy, frozen=True, repr_omit_defaults=True):
    """Parent and children share an item collection of a secondary index.

    Loading the parent with its children is one Query on the index. With ``shards=N`` the
    children's index partition key holds ``{shard}``, as with ``Partition(shards=N)``.
    """

    name: str
    shards: int = 1

    def __post_init__(self) -> None:
        _check_shard_count("Index", self.shards)

    @property
    def index(self) -> str:  # type: ignore[override]
        return self.name

    def check_across_tables(self, qualname: str, table: str, other: str) -> None:
        """Children of another table are read by one Query on its index ``name``."""

    def describe(self) -> str:
        if self.shards > 1:
            return f"Index({self.name!r}, shards={self.shards})"
        return f"Index({self.name!r})"


def copy_changes(
    pairs: Iterable[tuple[str, str]], parent_values: Mapping[str, object], child: object
) -> dict[str, object]:
    """Child field -> parent value, for each copy (parent field, child field) the child lacks."""
    return {
        child_field: parent_values[parent_field]
        for parent_field, child_field in pairs
        if getattr(child, child_field) != parent_values[parent_field]
    }


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and (type(value) is not int or value < 1):
        raise DefinitionError(f"{name} must be a positive int; got {value!r}")


class Embedded(msgspec.Struct, Strategy, frozen=True):
    """Children are attrs objects stored inside the parent item.

    With ``key=`` they form a map keyed by that (str) field, else a list. The parent's GetItem
    brings them along; ``db.add``/``db.remove`` change one child with one UpdateItem, refused
    before sending when it would exceed ``max_items`` or DynamoDB's 400 KB item limit.
    ``attribute`` names the stored attribute (default: the relationship's name).
    """

    key: str | None = None
    max_items: int | None = None
    attribute: str | None = None

    def __post_init__(self) -> None:
        _check_positive("Embedded(max_items=...)", self.max_items)

    def describe(self) -> str:
        return f"Embedded(key={self.key!r}, max_items={self.max_items!r})"

    @property
    def accepts_plain_target(self) -> bool:
        return True

    def embedded_codec(self, rel: Children) -> EmbeddedCodec:
        codec = EmbeddedCodec.build(
            rel.qualname,
            self.attribute or rel.name,
            rel.target_cls,
            self.key,
            self.max_items,
            localns=rel.local_names(),
        )
        owner = rel.owner_info
        # Stored names, not field names: a field may be stored under another name (``Name``).
        taken = {*owner.codec.attributes.values(), *owner.templates, owner.table.type_attribute}
        if codec.attribute in taken:
            raise DefinitionError(
                f"{rel.qualname}: attribute {codec.attribute!r} is already used by "
                f"{owner.name}; pass Embedded(attribute=...) to store children elsewhere"
            )
        return codec

    def check_across_tables(self, qualname: str, table: str, other: str) -> None:
        raise DefinitionError(
            f"{qualname} via {self.describe()}: embedded children are stored inside the "
            f"parent's item in Table {table!r}, so they cannot be models of Table {other!r}; "
            "embed a plain attrs class, or read the other table's items through one of its "
            "indexes: via=Index(name)"
        )

    @property
    def cascades(self) -> bool:
        return False  # the children go with the parent item

    def cascade_reads(
        self, rel: Children, table_name: str, parent_values: Mapping[str, object]
    ) -> tuple[CollectionRead, ...]:
        return ()  # the children go with the parent item

    def plan_add(self, rel: Children, change: ChildChange) -> Plan[object]:
        codec, parent, child = _codec(rel), change.parent, change.child
        codec.check_child(child)
        info = rel.owner_info
        current = list(change.held or ())
        replacing = any(codec.same_child(c, child) for c in current)
        after = [c for c in current if not codec.same_child(c, child)] + [child]
        codec.check_fits(info.encode(parent), after)
        key, pk = info.key_of(parent), info.table.pk
        request = add_request(codec, change.table_name, key, pk, child, replacing=replacing)
        try:
            yield from send_with(request, change.also)
        except ConditionFailedError as exc:
            if codec.key is None:  # list_append creates a missing list: no map to create
                raise _add_refused(rel, parent, stored=None) from exc
            if exc.item is not None and codec.attribute in exc.item:
                raise _add_refused(rel, parent, stored=True) from exc  # the map is full
            # A parent stored without its map (by older code, e.g. while was= is declared, or
            # by another tool): the map is created, then the add sent again (both idempotent).
            try:
                yield Send(create_map_request(codec, change.table_name, key, pk))
            except ConditionFailedError as missing:
                raise _add_refused(rel, parent, stored=False) from missing
            try:
                yield from send_with(request, change.also)
            except ConditionFailedError as again:
                raise _add_refused(rel, parent, stored=True) from again
        return child

    def plan_remove(self, rel: Children, change: ChildChange) -> Plan[int | None]:
        codec, child, held, table_name = _codec(rel), change.child, change.held, change.table_name
        codec.check_child(child)
        key = rel.owner_info.key_of(change.parent)
        position = 0  # a map child is removed by its key: no read needed
        if codec.key is not None and held is not None:
            if not any(codec.same_child(c, child) for c in held):
                yield from _send_all(change.also)  # an old copy may still be there
                return None  # known not to be there: nothing else to write
        elif codec.key is None:
            # A list child is removed by position, which the loaded children tell (the removal
            # is conditioned on that slot still holding the child), else the stored list.
            children = held
            if children is None:
                response = yield Send(codec.read_request(table_name, key))
                if isinstance(response, Unread):  # planned by explain: the list is not read
                    unknown = FromRead(f"the position of the child in {codec.qualname}")
                    yield Send(remove_request(codec, table_name, key, child, unknown))
                    return None
                children = codec.decode(
                    response.get("Item") or {}, key=rel.owner_info.describe(key)
                )
            found = next((i for i, c in enumerate(children) if c == child), None)
            if found is None:
                yield from _send_all(change.also)  # an old copy may still be there
                return None  # not there: removing is idempotent, as deleting a missing item is
            position = found
        try:
            yield from send_with(
                remove_request(codec, table_name, key, child, position), change.also
            )
        except ConditionFailedError:
            if codec.key is None:
                raise
            # No map stored (a parent stored without it, or none): the child is not in it.
            yield from _send_all(change.also)  # an old copy may still be there
            return None
        return position


def _add_refused(rel: Children, parent: object, *, stored: bool | None) -> LimitExceededError:
    """Why an add's condition failed: max_items, or no parent stored (``stored``: known)."""
    codec = _codec(rel)
    full = f"it holds {codec.max_items} (max_items) already" if codec.max_items else ""
    missing = "the parent item is not stored (db.put it first)"
    refused = f"{rel.qualname}: cannot add to {parent!r}"
    if stored is False or not full:
        return LimitExceededError(f"{refused}: {missing}")
    return LimitExceededError(f"{refused}: {full if stored else f'{full}, or {missing}'}")


def _send_all(requests: Sequence[Request]) -> Plan[None]:
    """``requests`` in one transaction (none: nothing is sent)."""
    if requests:
        yield from send_with(requests[0], requests[1:])


def _codec(rel: Children) -> EmbeddedCodec:
    if rel.embedded is None:
        raise DefinitionError(f"{rel.qualname} is used before its declaration was resolved")
    return rel.embedded


def _frozen_mapping(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


class Denormalized(msgspec.Struct, Strategy, frozen=True):
    """Children live where ``where`` puts them and carry copies of chosen parent fields.

    ``copy={"birthdate": "author_birthdate"}`` maps parent fields to child fields. ``db.add``
    fills the copies; ``db.put(parent)`` rewrites every child whose copy changed, and refuses,
    with nothing written, when more than ``max_fanout`` children would need rewriting.
    """

    copy: Mapping[str, str]
    where: Strategy = msgspec.field(default_factory=Partition)
    max_fanout: int = 100

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "copy", _frozen_mapping(self.copy))  # read-only
        _check_positive("Denormalized(max_fanout=...)", self.max_fanout)
        if not self.copy:
            raise DefinitionError("Denormalized(copy=...) needs at least one parent field")
        if isinstance(self.where, Embedded | Denormalized):
            raise DefinitionError(
                "Denormalized(where=...) takes Partition() or Index(name): where the children live"
            )

    @property
    def index(self) -> str | None:  # type: ignore[override]
        return self.where.index

    @property
    def shards(self) -> int:  # type: ignore[override]
        return self.where.shards

    def describe(self) -> str:
        return f"Denormalized(copy={dict(self.copy)!r})"

    @property
    def copies(self) -> Mapping[str, str]:
        return self.copy

    def fanout_limit(self) -> int:
        return self.max_fanout

    def check_across_tables(self, qualname: str, table: str, other: str) -> None:
        # The copies are planned by the parent's table's write planner, which writes its own
        # table only: across tables a copy could be left stale, so it is refused.
        raise DefinitionError(
            f"{qualname} via {self.describe()}: denormalized copies stay within one table, and "
            f"the children are models of Table {other!r}, the parent of Table {table!r}; "
            f"declare both on one table, or read the children with via=Index(name) of Table "
            f"{other!r} and write the copied fields yourself (db.transaction() spans tables)"
        )

    def prepare_child(
        self, rel: Children, parent_values: Mapping[str, object], child: object
    ) -> object:
        changes = copy_changes(self.copy.items(), parent_values, child)
        return attrs.evolve(child, **changes) if changes else child  # type: ignore[misc]

    def link(self, parent: ModelInfo[Any], child: ModelInfo[Any], qualname: str) -> dict[str, str]:
        for parent_field, child_field in self.copy.items():
            if parent_field not in parent.field_types:
                raise DefinitionError(
                    f"{qualname} via {self.describe()}: {parent.name} has no field {parent_field!r}"
                )
            if child_field not in child.field_types:
                raise DefinitionError(
                    f"{qualname} via {self.describe()}: {child.name} has no field {child_field!r} "
                    f"to hold the copy of {parent.name}.{parent_field}; add it (with a default)"
                )
        return self.where.link(parent, child, qualname)
