"""Tables, their secondary indexes, and the ``@table.model`` declaration."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, dataclass_transform

import attrs

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.codec.decoders import VersionGate
from dynorm.core.codec.model_codec import build_codec
from dynorm.core.errors import CodecError, DefinitionError
from dynorm.core.fields import field, stored_name
from dynorm.core.keys import KEY_TYPES, SHARD, KeyTemplate, KeyType
from dynorm.core.limits import MAX_KEY_NAME_BYTES
from dynorm.core.requests import PENDING, Parse
from dynorm.core.stamps import ROLES, Stamps
from dynorm.core.upgrades import SchemaVersions, Upgrade, declare_versions
from dynorm.wire.retry import TOKEN_ATTRIBUTE

from .classify import Classifier
from .model import (
    LocalScope,
    ModelInfo,
    attach_info,
    check_layout,
    check_typed_key,
    fields_in_keys,
    info_of,
    key_parsers_for,
    resolve_field_types,
)
from .oldembedded import old_embedded_of
from .pydantic_hooks import install_pydantic_hooks
from .relations import Relationship, embedded_of
from .upgrading import stale_items

if TYPE_CHECKING:
    # msgspec, which the wire structures need, is imported by a table's first read.
    from dynorm.wire.structs import Wire

    from .streams import Change, StreamRecord

__all__ = ["GSI", "LSI", "Table"]

T = TypeVar("T")

Projection = Literal["ALL", "KEYS_ONLY"] | tuple[str, ...]


def _projection(value: object) -> Projection:
    if value in ("ALL", "KEYS_ONLY"):
        return "ALL" if value == "ALL" else "KEYS_ONLY"
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DefinitionError(
        f"projection must be 'ALL', 'KEYS_ONLY' or attribute names; got {value!r}"
    )


#: ``streams.decode_change``, imported with the first stream record decoded (``_decoder``).
_decode_change: Callable[..., Change[object]] | None = None


def _decoder() -> Callable[..., Change[object]]:
    """``streams.decode_change``, its module imported once (none in a process reading no stream)."""
    global _decode_change  # noqa: PLW0603 - filled once
    from .streams import decode_change  # noqa: PLC0415 - once per process

    _decode_change = decode_change
    return decode_change


def _typed(value: object) -> bool:
    """Whether ``value`` is a typed value as DynamoDB writes one: ``{"S": "x"}``."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return False
    ((kind, inner),) = value.items()
    if kind in ("S", "N"):
        return isinstance(inner, str)
    return isinstance(inner, bytes | bytearray | memoryview | str) if kind == "B" else True


def _shown(name: str) -> str:
    """``name`` for a message: whole when short, its start and length when not."""
    return repr(name) if len(name) <= 40 else f"{name[:32]!r}... ({len(name)} characters)"


#: Compiled on first use (``re``'s cache), not at import.
_INDEX_NAME = r"[A-Za-z0-9_.-]{3,255}"


def _index_name(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # DynamoDB's rule for index (and table) names; refused here rather than at CreateTable.
    if not isinstance(value, str) or not re.fullmatch(_INDEX_NAME, value):
        raise DefinitionError(
            f"index name {value!r}: DynamoDB takes 3 to 255 characters of letters, digits, "
            "'_', '-' and '.'"
        )


@attrs.frozen
class GSI:
    """A global secondary index: its own partition key attribute and optional sort key attribute."""

    name: str = attrs.field(validator=_index_name)
    pk: str
    sk: str | None = None
    projection: Projection = attrs.field(default="ALL", converter=_projection)


@attrs.frozen
class LSI:
    """A local secondary index: the table's partition key with another sort key attribute."""

    name: str = attrs.field(validator=_index_name)
    sk: str
    projection: Projection = attrs.field(default="ALL", converter=_projection)


Index = GSI | LSI

#: Keywords of ``Table.model`` that are not index names (so no index may be named one of them).
MODEL_OPTIONS = ("pk", "sk", "entity", *ROLES)


@attrs.frozen
class _Schema:
    """``@table.model``'s schema version options, checked when the class is declared."""

    version: int | None = None
    upgrades: Mapping[int, Upgrade] | None = None
    attribute: str | None = None

    def declare(self, model: str, taken: Mapping[str, str]) -> SchemaVersions | None:
        return declare_versions(model, self.version, self.upgrades, self.attribute, taken)


class Table:
    """One DynamoDB table shared by many models (single-table design).

    ``Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])``

    Key attributes may have any name (``"PK"``, ``"GSI1-PK"``, ``"State#Date"``).
    ``key_types`` declares key attributes of the table and its indexes that are numbers
    (``"N"``) or binary (``"B"``) rather than strings (``"S"``, the default):
    ``key_types={"Score": "N"}``. A model fills such an attribute with one int or Decimal
    (N) or bytes (B) field, ``sk="{score}"``, and ranges on it compare numerically.
    ``type_attribute``: an attribute in which every model's items store the model's entity
    name (``@table.model(..., entity="order")``, by default the class name); reads tell
    models apart by it first, by key templates second.
    """

    def __init__(
        self,
        name: str,
        *,
        pk: str = "pk",
        sk: str | None = "sk",
        indexes: Sequence[Index] = (),
        delimiter: str = "#",
        type_attribute: str | None = None,
        key_types: Mapping[str, KeyType] | None = None,
    ) -> None:
        self.name = name
        self.pk = pk
        self.sk = sk
        self.delimiter = delimiter
        self.type_attribute = type_attribute
        self.indexes: dict[str, Index] = {}
        for index in indexes:
            if index.name in self.indexes:
                raise DefinitionError(f"Table {name!r} declares index {index.name!r} twice")
            if index.name in MODEL_OPTIONS:
                raise DefinitionError(
                    f"Table {name!r}: an index cannot be named {index.name!r}, since "
                    f"@table.model(...) takes {', '.join(MODEL_OPTIONS)} as options and index "
                    "templates by index name; rename the index"
                )
            if isinstance(index, LSI) and sk is None:
                raise DefinitionError(
                    f"Table {name!r}: local index {index.name!r} needs a table with a sort key"
                )
            self.indexes[index.name] = index
        self._check_name_lengths()
        if type_attribute is not None and type_attribute in self.attribute_names():
            raise DefinitionError(
                f"Table {name!r}: type_attribute {type_attribute!r} is a key attribute; the "
                "type attribute needs an attribute of its own"
            )
        #: Key attribute -> its DynamoDB type, for those declared (the others are S).
        self.key_types: dict[str, KeyType] = self._check_key_types(key_types or {})
        self.models: dict[str, ModelInfo[Any]] = {}
        self._pending: list[Relationship[Any]] = []
        #: index name -> the models it holds only in part (see partial_models), once asked.
        self._partial: dict[str, frozenset[str]] = {}
        #: index name (None: the table) -> its classifier, once asked; reset by a new model.
        self._classifiers: dict[str | None, Classifier] = {}
        #: index name (None: the table) -> its wire decoding, once asked; reset with classifiers.
        self._wires: dict[str | None, Wire] = {}
        self._parsers: dict[tuple[str, str | None], Parse] = {}

    def __repr__(self) -> str:
        return f"Table({self.name!r}, pk={self.pk!r}, sk={self.sk!r})"

    def _check_name_lengths(self) -> None:
        # DynamoDB refuses these names at CreateTable; here the declaration says which one.
        named = [(a, "key attribute") for a in self.attribute_names()]
        for index in self.indexes.values():
            if isinstance(index.projection, tuple):
                where = f"attribute projected by index {index.name!r}"
                named += [(a, where) for a in index.projection]
        for attr, what in named:
            if not isinstance(attr, str):
                raise DefinitionError(f"Table {self.name!r}: {what} {attr!r} is not a name (str)")
            size = len(attr.encode("utf-8", "surrogatepass"))
            if not 0 < size <= MAX_KEY_NAME_BYTES:
                raise DefinitionError(
                    f"Table {self.name!r}: {what} {_shown(attr)} is {size} bytes long (UTF-8); "
                    f"DynamoDB takes 1 to {MAX_KEY_NAME_BYTES} bytes for the name of a key "
                    "attribute or of an attribute an index projects; use a shorter name"
                )

    def _check_key_types(self, declared: Mapping[str, object]) -> dict[str, KeyType]:
        names = self.attribute_names()
        found: dict[str, KeyType] = {}
        for attr, kind in declared.items():
            if attr not in names:
                raise DefinitionError(
                    f"Table {self.name!r}: key_types names {attr!r}, which is no key attribute "
                    f"of the table or its indexes ({', '.join(names)}); correct the name, or "
                    "declare the index that has it"
                )
            if kind not in KEY_TYPES:
                raise DefinitionError(
                    f"Table {self.name!r}: key_types[{attr!r}] is {kind!r}; a key attribute is "
                    "'S' (string), 'N' (number) or 'B' (binary)"
                )
            found[attr] = kind
        return found

    def key_type(self, attr: str) -> KeyType:
        """The DynamoDB type of key attribute ``attr``: ``"S"`` unless ``key_types`` says else."""
        return self.key_types.get(attr, "S")

    @property
    def primary_attributes(self) -> tuple[str, ...]:
        return (self.pk,) if self.sk is None else (self.pk, self.sk)

    def key_attributes(self, index: str | None) -> tuple[str, str | None]:
        """The (partition, sort) key attribute names of the table or one of its indexes."""
        if index is None:
            return self.pk, self.sk
        found = self.index(index)
        if isinstance(found, LSI):
            return self.pk, found.sk
        return found.pk, found.sk

    def start_key_attributes(self, index: str | None) -> tuple[str, ...]:
        """The attributes of an ExclusiveStartKey of the table or ``index``: table keys first."""
        found = list(self.primary_attributes)
        if index is not None:
            found += [a for a in self.key_attributes(index) if a and a not in found]
        return tuple(found)

    def projected_attributes(self, index: str) -> frozenset[str] | None:
        """The attributes ``index`` copies of each item, or None when it copies all of them."""
        projection = self.index(index).projection
        if projection == "ALL":
            return None
        extra = projection if isinstance(projection, tuple) else ()
        return frozenset((*self.start_key_attributes(index), *extra))

    def index(self, name: str) -> Index:
        try:
            return self.indexes[name]
        except KeyError:
            declared = ", ".join(self.indexes) or "none"
            raise DefinitionError(
                f"index {name!r} is not declared on Table {self.name!r}; declared: {declared}"
            ) from None

    def index_partners(self, attributes: Sequence[str]) -> set[str]:
        """The non-table key attributes of every index that uses one of ``attributes``."""
        partners: set[str] = set()
        for name in self.indexes:
            keys = [a for a in self.key_attributes(name) if a and a not in self.primary_attributes]
            if any(a in attributes for a in keys):
                partners.update(keys)
        return partners

    def partial_models(self, index: str) -> frozenset[str]:
        """Names of the models whose items ``index`` holds only in part.

        A KEYS_ONLY or INCLUDE projection copies the keys and the attributes it names; a model
        with a field (or embedded children) stored elsewhere, and not readable from a projected
        key, is read whole by its table key after each Query of the index (BatchGetItem).
        """
        found = self._partial.get(index)
        if found is None:
            found = self._partial[index] = frozenset(
                info.name
                for info in self.models.values()
                if info.in_index(index) and not self._holds(info, index)
            )
        return found

    def _holds(self, info: ModelInfo[Any], index: str) -> bool:
        projected = self.projected_attributes(index)
        if projected is None:
            return True
        keys = self.start_key_attributes(index)
        parsed = {f for a in keys if a in info.key_fields for f in info.key_fields[a].parsers}
        stored = info.codec.attributes
        fields = all(f in parsed or stored[f] in projected for f in info.field_types)
        return fields and all(
            r.embedded is None or r.embedded.attribute in projected for r in embedded_of(info)
        )

    def attribute_names(self) -> list[str]:
        """Every key attribute of the table and its indexes (all strings)."""
        names = [self.pk, *([self.sk] if self.sk else [])]
        for index in self.indexes.values():
            names += [index.pk] if isinstance(index, GSI) else []
            names += [index.sk] if index.sk else []
        return list(dict.fromkeys(names))

    # -- declaring models --------------------------------------------------------------------

    @dataclass_transform(field_specifiers=(attrs.field, field))  # for checkers that support it
    def model(
        self,
        *,
        pk: str,
        sk: str | None = None,
        entity: str | None = None,
        version: str | None = None,
        ttl: str | None = None,
        created: str | None = None,
        updated: str | None = None,
        schema_version: int | None = None,
        upgrades: Mapping[int, Upgrade] | None = None,
        schema_attribute: str | None = None,
        **indexes: str | tuple[str, ...],
    ) -> Callable[[type[T]], type[T]]:
        """Declare a model stored in this table.

        ``pk``/``sk`` are key templates; each index keyword gives that index's templates:
        ``GSI1=("ORG#{org_name}", "USER#{username}")`` for a global index, a single template for
        a local index. The class becomes an attrs class unless it already is one.

        ``entity`` is the name this model's items store in the table's ``type_attribute``
        (default: the class name). ``version`` names an int field for optimistic locking (every
        write requires the stored version to be the one read, and stores the next); ``ttl`` a
        datetime field stored as epoch seconds, which ``create_table`` makes the table's time to
        live; ``created`` and ``updated`` datetime fields dynorm fills (UTC). See
        docs/writes.md.

        ``schema_version`` (a whole number from 1) is the version of the model's shape its
        writes store (in ``schema_attribute``, default ``"_v"``); ``upgrades`` maps each older
        version ``n`` to a function turning an item of version ``n`` (a dict of plain values by
        stored attribute name, keys included) into version ``n+1``'s. Reads upgrade older items
        in memory. See docs/migrations.md, "Model versions".
        """
        if entity is not None and (self.type_attribute is None or not entity):
            raise DefinitionError(
                f"entity={entity!r} needs a Table with a type attribute to store it in; "
                f"declare Table({self.name!r}, ..., type_attribute='EntityType')"
                if entity
                else "entity= takes a non-empty name"
            )
        # This call runs in the declaring frame (the decorator factory is called there), so a
        # model declared in a function can name classes local to it in string annotations.
        scope = LocalScope.of_caller()
        roles = {"version": version, "ttl": ttl, "created": created, "updated": updated}
        schema = _Schema(schema_version, upgrades, schema_attribute)

        def declare(target: type[T]) -> type[T]:
            return self._declare(
                target,
                pk=pk,
                sk=sk,
                indexes=indexes,
                scope=scope,
                entity=entity,
                roles=roles,
                schema=schema,
            )

        return declare

    def _templates(
        self, cls_name: str, pk: str, sk: str | None, indexes: dict[str, str | tuple[str, ...]]
    ) -> dict[str, KeyTemplate]:
        def template(source: str) -> KeyTemplate:
            try:
                return KeyTemplate(source, self.delimiter)
            except DefinitionError as exc:
                raise DefinitionError(f"{cls_name}: {exc}") from None

        templates = {self.pk: template(pk)}
        if self.sk is not None:
            if sk is None:
                raise DefinitionError(
                    f"{cls_name}: Table {self.name!r} has sort key {self.sk!r}; give sk=<template>"
                )
            templates[self.sk] = template(sk)
        elif sk is not None:
            raise DefinitionError(f"{cls_name}: Table {self.name!r} has no sort key; drop sk=")
        for name, spec in indexes.items():
            index = self.indexes.get(name)
            if index is None:
                declared = ", ".join(self.indexes) or "none"
                raise DefinitionError(
                    f"{cls_name}: index {name!r} is not declared on Table {self.name!r}; "
                    f"declared: {declared}"
                )
            sources = (spec,) if isinstance(spec, str) else tuple(spec)
            attrs_ = [index.pk] if isinstance(index, GSI) else []
            attrs_ += [index.sk] if index.sk else []
            if len(sources) != len(attrs_):
                raise DefinitionError(
                    f"{cls_name}: index {name!r} has key attributes {attrs_}; give "
                    f"{len(attrs_)} template(s) for it, got {len(sources)}"
                )
            for attr, source in zip(attrs_, sources, strict=True):
                if attr in templates and templates[attr].source != source:
                    raise DefinitionError(
                        f"{cls_name}: attribute {attr!r} already has template "
                        f"{templates[attr].source!r}; index {name!r} cannot give it {source!r}"
                    )
                templates[attr] = template(source)
        return templates

    def _declare(
        self,
        cls: type[T],
        *,
        pk: str,
        sk: str | None,
        indexes: dict[str, str | tuple[str, ...]],
        scope: LocalScope | None = None,
        entity: str | None = None,
        roles: dict[str, str | None] | None = None,
        schema: _Schema | None = None,
    ) -> type[T]:
        templates = self._templates(cls.__name__, pk, sk, indexes)
        relationships = {
            name: value for name, value in vars(cls).items() if isinstance(value, Relationship)
        }
        # attrs.has is true of a subclass of an attrs class too; only a class attrs built
        # itself has its own __attrs_attrs__ (the subclass's own fields are not in the base's).
        if "__attrs_attrs__" not in vars(cls):
            # Relationship attributes are descriptors, not data: keep them out of the fields.
            annotations = vars(cls).get("__annotations__", {})
            for name in relationships:
                annotations.pop(name, None)
            cls = attrs.define(cls)
        return self._register(
            cls,
            templates,
            relationships,
            scope,
            entity,
            roles=roles,
            schema=schema,
        )

    def _register(
        self,
        cls: type[T],
        templates: dict[str, KeyTemplate],
        relationships: dict[str, Relationship[Any]],
        scope: LocalScope | None,
        entity: str | None,
        *,
        roles: dict[str, str | None] | None = None,
        schema: _Schema | None = None,
    ) -> type[T]:
        if cls.__name__ in self.models:
            raise DefinitionError(
                f"Table {self.name!r} already has a model named {cls.__name__}; rename one"
            )
        if relationships and not cls.__weakrefoffset__:
            raise DefinitionError(
                f"{cls.__name__} has relationships, so its instances must support weak "
                "references; use attrs.define(weakref_slot=True) (the default)"
            )
        field_types = resolve_field_types(cls, scope.names() if scope is not None else None)
        self._check_shard_slots(cls.__name__, templates, field_types)
        key_fields = [f for t in templates.values() for f in t.fields]
        stamps = Stamps.declare(cls.__name__, field_types, key_fields, **(roles or {}))
        # A template that is exactly "{field}" on the field's own attribute is the field: its
        # key holds the value unescaped (raw), and only the field's own encoding writes it.
        owned = {f.name: stored_name(f) for f in attrs.fields(cast("Any", cls))}
        identity = {
            attr: template.fields[0]
            for attr, template in templates.items()
            if template.source == "{" + "".join(template.fields[:1]) + "}"
            and owned.get(template.fields[0]) == attr
        }
        typed: dict[str, KeyType] = {
            a: self.key_type(a) for a in templates if self.key_type(a) != "S"
        }
        for attr, kind in typed.items():
            check_typed_key(cls.__name__, attr, kind, templates[attr], field_types)
        for attr in {*identity, *typed}:
            templates[attr] = KeyTemplate(templates[attr].source, self.delimiter, raw=True)
        binary = {templates[a].fields[0] for a, kind in typed.items() if kind == "B"}
        key_parsers = key_parsers_for(cls, field_types, templates.values(), binary)
        in_keys = fields_in_keys(templates, key_parsers, self.primary_attributes, typed)
        versions = (schema or _Schema()).declare(cls.__name__, self._taken(owned, templates))
        made: list[ModelInfo[T]] = []  # the gate names the item by its key: the info knows how

        def upgraded(item: Mapping[str, AttributeValue]) -> Mapping[str, AttributeValue]:
            return made[0].upgraded(item)

        gate = (
            None
            if versions is None
            else VersionGate(versions.attribute, versions.current, upgraded)
        )
        info: ModelInfo[T] = ModelInfo(
            cls=cls,
            table=self,
            templates=templates,
            codec=build_codec(cls, epoch=stamps.epoch, keys=tuple(in_keys.values()), gate=gate),
            field_types=field_types,
            key_parsers=key_parsers,
            key_fields=in_keys,
            entity=self._entity_of(cls, entity),
            stamps=stamps,
            identity=identity,
            versions=versions,
        )
        made.append(info)
        check_layout(info)
        self._check_distinct(info)
        self._check_ttl(info)
        attach_info(cls, info)
        install_pydantic_hooks(cls)
        self.models[cls.__name__] = info
        for name, relationship in relationships.items():
            relationship.bind(cls, name, scope)
            self._pending.append(relationship)
        try:
            self._resolve_pending()
        except DefinitionError:
            # Leave the table as it was: the failed model is not half-declared.
            del self.models[cls.__name__]
            self._classifiers.clear()
            self._wires.clear()
            self._pending = [r for r in self._pending if r.owner is not cls]
            raise
        return cls

    def _taken(
        self, owned: Mapping[str, str], templates: Mapping[str, KeyTemplate]
    ) -> dict[str, str]:
        """Attribute names a model's items already use -> what uses them (schema_attribute=)."""
        taken = {stored: f"field {name!r}'s attribute" for name, stored in owned.items()}
        taken |= dict.fromkeys([*self.attribute_names(), *templates], "a key attribute")
        if self.type_attribute is not None:
            taken[self.type_attribute] = "the table's type attribute"
        taken |= dict.fromkeys([PENDING, TOKEN_ATTRIBUTE], "dynorm's own bookkeeping attribute")
        return taken

    def _check_shard_slots(
        self, name: str, templates: Mapping[str, KeyTemplate], field_types: Mapping[str, Any]
    ) -> None:
        """``{shard}`` may fill a partition key of type S, and names no field of the model."""
        partition_keys = {self.key_attributes(s)[0] for s in [None, *self.indexes]}
        for attr, template in templates.items():
            if not template.sharded:
                continue
            if SHARD in field_types:
                raise DefinitionError(
                    f"{name}: {{shard}} in key template {template.source!r} is filled by dynorm "
                    "(a sharded collection), so no field may be named 'shard'; rename the field"
                )
            if attr not in partition_keys or self.key_type(attr) != "S":
                raise DefinitionError(
                    f"{name}: key template {template.source!r} holds {{shard}}, but {attr!r} is "
                    "not a string partition key; the shard goes in the partition key of a "
                    "sharded collection's children, as in pk='POST#{post_id}#{shard}'"
                )

    def _entity_of(self, cls: type, entity: str | None) -> str | None:
        if self.type_attribute is None:
            return None
        name = entity or cls.__name__
        for other in self.models.values():
            if other.entity == name:
                raise DefinitionError(
                    f"{cls.__name__} and {other.name} would both store entity {name!r} in "
                    f"{self.type_attribute!r}; give one of them another "
                    "@table.model(..., entity=...)"
                )
        return name

    def _check_ttl(self, new: ModelInfo[Any]) -> None:
        """DynamoDB reads one time-to-live attribute per table: models must agree on it."""
        if new.stamps.ttl is None:
            return
        mine = new.codec.attributes[new.stamps.ttl]
        for other in self.models.values():
            if other.stamps.ttl is not None and other.codec.attributes[other.stamps.ttl] != mine:
                theirs = other.codec.attributes[other.stamps.ttl]
                raise DefinitionError(
                    f"{new.name}'s ttl is stored as {mine!r}, but {other.name}'s as {theirs!r}; "
                    "DynamoDB reads one time-to-live attribute per table: store both under "
                    f"one name (dynorm.field(name={theirs!r}))"
                )

    def _check_distinct(self, new: ModelInfo[Any]) -> None:
        """Two models that share an item collection must be told apart by their keys.

        With a type attribute they are told apart by their entity names instead.
        """
        if self.type_attribute is not None:
            return
        scopes: list[str | None] = [None, *self.indexes]
        for other, scope in itertools.product(self.models.values(), scopes):
            if scope is not None and not (new.in_index(scope) and other.in_index(scope)):
                continue
            pk_a, sk_a = new.key_templates(scope)
            pk_b, sk_b = other.key_templates(scope)
            if not pk_a.could_overlap(pk_b):
                continue
            if sk_a is None or sk_b is None or sk_a.could_overlap(sk_b):
                where = f"index {scope!r}" if scope else f"Table {self.name!r}"
                sources = [t.source if t else None for t in (sk_a, sk_b)]
                sk_text = f"sort keys {sources[0]!r} and {sources[1]!r}"
                raise DefinitionError(
                    f"{new.name} and {other.name} can share an item collection in {where} and "
                    f"their {sk_text} cannot be told apart; "
                    + _tell_apart(new, self.key_attributes(scope)[1])
                )

    def _resolve_pending(self, *, final: bool = False) -> None:
        self._partial.clear()  # a model or an embedded relationship may have been added
        self._classifiers.clear()
        self._wires.clear()
        still: list[Relationship[Any]] = []
        for relationship in self._pending:
            if relationship.try_resolve(self, final=final):
                continue
            still.append(relationship)
        self._pending = still

    def check(self) -> None:
        """Fail if any relationship names a model that was never declared on this table.

        A name no model of this table has may name a model of another table, found where the
        owner was declared (see ``Relationship.try_resolve``): it is looked up now.
        """
        self._resolve_pending(final=True)
        if self._pending:
            missing = ", ".join(
                f"{r.owner_name}.{r.name} -> {r.target_name!r}" for r in self._pending
            )
            raise DefinitionError(
                f"Table {self.name!r}: relationships name models that are not declared: "
                f"{missing} (a name in a string is looked up on the owner's table, then in the "
                "module that declares the owner: import a model of another table there, or pass "
                "the class)"
            )
        for info in self.models.values():
            unsharded = [a for a, t in info.templates.items() if t.sharded and a not in info.shards]
            if unsharded:
                template = info.templates[unsharded[0]].source
                raise DefinitionError(
                    f"{info.name}'s key template {template!r} holds {{shard}}, but no relationship "
                    "says over how many shards: declare it on the parent, "
                    f'HasMany("{info.name}", via=Partition(shards=N)) (or Index(name, shards=N))'
                )

    def classifier(self, index: str | None = None) -> Classifier:
        """What decides which model an item of this table (or of ``index``) is.

        By the table's type attribute when the item holds it, else by which model's key
        templates fit (models that can share a collection were checked at declaration to be
        told apart). Built once, until another model is declared; every read asks it.
        """
        found = self._classifiers.get(index)
        if found is None:
            found = self._classifiers[index] = Classifier(self, index)
        return found

    def wire(self, index: str | None = None) -> Wire:
        """The wire decoding of reads of this table (or of ``index``): see ``dynorm.wire.structs``.

        Built once for the models the scope holds, until another model is declared.
        """
        found = self._wires.get(index)
        if found is None:
            models = self.classifier(index).models
            specs = [m.codec.decoder_spec for m in models]
            generic = [*self.attribute_names(), *filter(None, [self.type_attribute])]
            # dynorm's own bookkeeping (pending copies, write tokens): no field maps them, but
            # writes read them back from items fetched before them.
            generic += [PENDING, TOKEN_ATTRIBUTE]
            # Embedded children are no field of their parent: read from the item as dicts.
            generic += [r.embedded.attribute for m in models for r in embedded_of(m) if r.embedded]
            # And those of an old Embedded layout (was=): a put_all reads them to keep them.
            generic += [c.attribute for m in models for c in old_embedded_of(m)]
            # The schema version: the body parser reads it to find items to upgrade.
            generic += [m.versions.attribute for m in models if m.versions is not None]
            name = f"{self.name}_{index}" if index else self.name
            from dynorm.wire.structs import build_wire  # noqa: PLC0415 - msgspec on first read

            stale = stale_items(self.classifier(index), models)
            found = self._wires[index] = build_wire(name, specs, dict.fromkeys(generic), stale)
        return found

    def parser(self, operation: str, index: str | None = None) -> Parse:
        """How the fast path parses a response body of ``operation`` reading this scope.

        The structures are looked up when a body arrives, not when the request is built: a
        query built before another model of the scope was declared still reads that model's
        attributes.
        """
        key = (operation, index)
        found = self._parsers.get(key)
        if found is None:

            def decode(body: bytes) -> dict[str, Any]:
                return self.wire(index).parser(operation)(body)

            found = self._parsers[key] = decode
        return found

    def model_of(
        self, item: Mapping[str, AttributeValue], index: str | None = None
    ) -> ModelInfo[Any] | None:
        """The model an item of this table (or of ``index``) belongs to, or None.

        ``item`` is in DynamoDB's form (``{"pk": {"S": "ORG#acme"}, ...}``). An item of no
        model is None, and so is a malformed one: a key or the type attribute missing, of
        another type, or not a typed value (``{"pk": "ORG#acme"}``). Anything but a mapping
        is a ``CodecError``.
        """
        if not isinstance(item, Mapping):
            raise CodecError(
                f"Table {self.name!r}: model_of takes an item, a mapping of attribute names to "
                f"typed values such as {{'pk': {{'S': 'ORG#acme'}}}}; got {type(item).__name__}"
            )
        try:
            return self.classifier(index)(item)
        except (AttributeError, TypeError):
            # The classifier reads typed values as dicts; a value that is none is no model's.
            if all(_typed(value) for value in item.values()):
                raise
            return None

    def decode_record(self, record: StreamRecord) -> Change[object]:
        """A DynamoDB Streams record (as a Lambda handler receives it) as model instances.

        ``Change(event, model, keys, old, new)``: ``old``/``new`` are the images decoded by the
        model the item belongs to (None when the stream does not carry that image); an item of
        no model gives ``model=None`` and no instances. Pure: nothing is sent.
        """
        return (_decode_change or _decoder())(self.classifier(None), record)

    def info(self, cls: type[T]) -> ModelInfo[T]:
        info = info_of(cls)
        if info.table is not self:
            raise DefinitionError(
                f"{info.name} belongs to Table {info.table.name!r}, not {self.name!r}"
            )
        return info


def _tell_apart(info: ModelInfo[Any], sk_attr: str | None) -> str:
    """How two models sharing a collection can be told apart, for the kind of sort key."""
    by_type = (
        "store each item's model in an attribute: Table(..., type_attribute='type') (each "
        "model's name, or @table.model(..., entity=...), is written there and read back)"
    )
    kind = info.key_type(sk_attr) if sk_attr is not None else "S"
    if kind != "S":
        what = "number (N)" if kind == "N" else "binary (B)"
        return f"the sort key is a {what}, which holds the value alone (no prefix): {by_type}"
    return f"give one a distinct literal prefix such as 'USER#', or {by_type}"
