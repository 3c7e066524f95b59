"""What dynorm knows about one model class: its key templates, its codec and its relationships."""

from __future__ import annotations

import decimal
import functools
import sys
import types
import typing
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar, cast

import attrs
import msgspec

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.codec.model_codec import ModelCodec
from dynorm.core.codec.typeforms import type_text, without_none
from dynorm.core.errors import CodecError, DefinitionError, KeyTemplateError, did_you_mean
from dynorm.core.expressions import Condition, ExpressionBuilder, entity_is
from dynorm.core.fields import stored_name
from dynorm.core.keys import (
    KeyFields,
    KeyTemplate,
    KeyType,
    key_attribute_value,
    key_value_parser,
    shard_number,
    typed_key_text,
)
from dynorm.core.limits import (
    MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES,
    SHORT_KEY,
    check_item,
    check_key,
)
from dynorm.core.ranges import SortCondition
from dynorm.core.requests import Parse
from dynorm.core.stamps import Stamps
from dynorm.core.upgrades import SchemaVersions

from .itemtests import OUTSIDE, ModelTests, model_tests

__all__ = [
    "LocalScope",
    "ModelInfo",
    "ModelTable",
    "careful_decoder",
    "check_layout",
    "check_typed_key",
    "fields_in_keys",
    "info_of",
    "is_model",
    "not_key_fields",
    "typed_keys",
]

T = TypeVar("T")
V = TypeVar("V")

_INFO_ATTR = "__dynorm_model__"


class ModelTable(Protocol):
    """What a model, and whatever holds one, may ask of the table it is declared on.

    ``Table`` is the one implementation; models name it through this so that the table, which
    holds its models, can sit above them.
    """

    @property
    def name(self) -> str: ...

    @property
    def pk(self) -> str: ...

    @property
    def type_attribute(self) -> str | None: ...

    @property
    def indexes(self) -> Mapping[str, object]: ...

    @property
    def models(self) -> Mapping[str, ModelInfo[Any]]: ...

    @property
    def primary_attributes(self) -> tuple[str, ...]: ...

    def key_attributes(self, index: str | None) -> tuple[str, str | None]: ...

    def key_type(self, attr: str) -> KeyType: ...

    def start_key_attributes(self, index: str | None) -> tuple[str, ...]: ...

    def index_partners(self, attributes: Sequence[str]) -> set[str]: ...

    def projected_attributes(self, index: str) -> frozenset[str] | None: ...

    def partial_models(self, index: str) -> frozenset[str]: ...

    def attribute_names(self) -> list[str]: ...

    def parser(self, operation: str, index: str | None = None) -> Parse: ...

    def model_of(
        self, item: Mapping[str, AttributeValue], index: str | None = None
    ) -> ModelInfo[Any] | None: ...


class ModelInfo(msgspec.Struct, Generic[T], eq=False, dict=True, weakref=True):
    """Per-model metadata, built once when the class is declared.

    ``templates`` maps each key *attribute* (``pk``, ``sk``, ``GSI1PK`` …) to the template that
    fills it, so an index whose key attributes are the table's own (an inverted index) is
    addressed by the same templates as the table.
    """

    cls: type[T]
    table: ModelTable
    templates: Mapping[str, KeyTemplate]
    codec: ModelCodec
    field_types: Mapping[str, Any]
    key_parsers: Mapping[str, Callable[[str], object]]
    #: Key attribute -> the fields it holds, with their parsers (see ``fields_in_keys``).
    key_fields: Mapping[str, KeyFields] = msgspec.field(default_factory=dict)
    #: The value this model's items hold in the table's type attribute (None: the table has none).
    entity: str | None = None
    #: The fields named for versions, time to live and timestamps (see ``dynorm/core/stamps.py``).
    stamps: Stamps = msgspec.field(default_factory=Stamps)
    #: Key attribute -> the field it is, for templates that are exactly ``"{field}"`` on the
    #: field's own stored attribute: the key is the field's value, stored once, unescaped.
    identity: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: Scope (None: the table, else an index) -> this model's item tests there (see ``tests``).
    _tests: dict[str | None, ModelTests] = msgspec.field(default_factory=dict)
    #: Sharded key attribute (its template holds ``{shard}``) -> its number of shards, set by
    #: the sharded relationship holding this model (``Partition(shards=N)``, ``Index(...)``).
    shards: dict[str, int] = msgspec.field(default_factory=dict)
    #: The model's schema version and upgrades (``schema_version=``; None: unversioned).
    versions: SchemaVersions | None = None

    @property
    def key_written(self) -> frozenset[str]:
        """Fields whose stored attribute the key templates write (key-only and identity)."""
        return frozenset((*self.codec.key_only, *self.identity.values()))

    @property
    def name(self) -> str:
        return self.cls.__name__

    # -- keys --------------------------------------------------------------------------------

    def key_templates(self, index: str | None = None) -> tuple[KeyTemplate, KeyTemplate | None]:
        """The partition and sort key templates that address this model in ``index``."""
        pk_attr, sk_attr = self.table.key_attributes(index)
        try:
            pk = self.templates[pk_attr]
        except KeyError:
            where = f"index {index!r}" if index else f"table {self.table.name!r}"
            raise DefinitionError(
                f"{self.name} has no template for {pk_attr!r}, the partition key of {where}; "
                f"declare it: @table.model(..., {index}=(pk_template, sk_template))"
            ) from None
        return pk, (self.templates.get(sk_attr) if sk_attr else None)

    def declare_shards(self, attr: str, shards: int, by: str) -> None:
        """Record that ``attr``'s collections are spread over ``shards`` shards (``by`` says so).

        DefinitionError when another relationship spreads them over another number: an item's
        shard, and so its key, must be one.
        """
        known = self.shards.get(attr)
        if known is not None and known != shards:
            raise DefinitionError(
                f"{by}: {self.name}'s {attr!r} is already spread over {known} shards by another "
                f"relationship; an item has one key, so give both shards={known}"
            )
        self.shards[attr] = shards

    def shard_of(self, attr: str, values: Mapping[str, object]) -> int:
        """The shard of the item with ``values`` in the sharded key attribute ``attr``.

        A stable hash of the item's primary key fields (``dynorm.core.keys.shard_number``), so a
        child is addressed by its own key alone: every key of it is made through here.
        """
        shards = self.shards.get(attr)
        if shards is None:
            raise DefinitionError(
                f"{self.name}'s key template {self.templates[attr].source!r} holds {{shard}}, but "
                "no relationship says over how many shards: declare it on the parent, "
                f'HasMany("{self.name}", via=Partition(shards=N)) (or Index(name, shards=N)), '
                "before using the model"
            )
        try:
            texts = [typed_key_text(values[f]) for f in self.identity_fields()]
        except KeyError as exc:
            raise KeyTemplateError(
                f"{self.name}'s shard is computed from its key fields; {exc} is missing"
            ) from None
        return shard_number(texts, shards)

    def format_key(self, attr: str, values: Mapping[str, object]) -> str:
        """The text of key attribute ``attr`` for ``values`` (its shard filled in if sharded)."""
        template = self.templates[attr]
        if template.shard_at is None:
            return template.format(values)
        return template.format(values, self.shard_of(attr, values))

    def in_index(self, index: str) -> bool:
        pk_attr, _ = self.table.key_attributes(index)
        return pk_attr in self.templates

    def primary_key(self, values: Mapping[str, object]) -> Item:
        """The table key (``{"pk": {"S": ...}, "sk": {"S": ...}}``) for field values."""
        pk_attr, sk_attr = self.table.key_attributes(None)
        if self._kinds:  # a number or binary key attribute
            key = {pk_attr: self.key_attribute(pk_attr, values)}
            if sk_attr is not None:
                key[sk_attr] = self.key_attribute(sk_attr, values)
            return key
        key = {pk_attr: {"S": self.key_value(pk_attr, values)}}
        if sk_attr is not None:
            key[sk_attr] = {"S": self.key_value(sk_attr, values)}
        return key

    def identity_fields(self) -> tuple[str, ...]:
        """The fields that make up the primary key, in template order."""
        pk, sk = self.key_templates(None)
        return tuple(dict.fromkeys(pk.fields + (sk.fields if sk else ())))

    def check_key_values(self, values: Mapping[str, object]) -> None:
        """Reject lookups that name fields which are not part of the primary key."""
        allowed = self.identity_fields()
        unknown = [k for k in values if k not in allowed]
        if unknown:
            raise not_key_fields(self.name, f"{self.name} is looked up by", unknown, allowed)
        missing = [k for k in allowed if k not in values]
        if missing:
            raise KeyTemplateError(
                f"{self.name} needs {', '.join(missing)} to address one item "
                f"(got {', '.join(values) or 'nothing'})"
            )
        self.check_key_types(values)

    def check_key_types(self, values: Mapping[str, object]) -> None:
        """Refuse key values of the wrong type before sending, as ``put`` refuses them.

        A CodecError naming the model, the field, the value and its type: ``get(User,
        user_id=123)`` for a ``str`` field would otherwise look up ``USER#123`` and find nothing.
        A condition's bounds (``between``, ``gt``, ...) are checked alike; ``begins_with``
        takes text (its own check). Fields of number and binary key attributes have their own
        check, with its own message (``key_attribute``, ``sort_range``).
        """
        encode = self.codec.encode_field
        typed = self._typed_key_fields
        for name, value in values.items():
            if name in typed or name not in encode:
                continue
            if not isinstance(value, SortCondition):
                encode[name](value)
            elif value.op != "begins_with":
                for bound in value.values:
                    encode[name](bound)

    def values_of(self, obj: T) -> dict[str, object]:
        """The object's fields as a name -> value mapping (shallow)."""
        return {name: getattr(obj, name) for name in self.field_types}

    def key_of(self, obj: T) -> Item:
        return self.primary_key(self.values_of(obj))

    def builder(self) -> ExpressionBuilder:
        """An expression builder for this model's items.

        Conditions, filters and updates name fields, sent as the attributes they are stored
        under; values are encoded as their fields are typed, and a value that would not read
        back as its field's type is refused.
        """
        codec = self.codec
        return ExpressionBuilder(encoder=codec.encode_path, renamer=codec.attribute_steps)

    # -- items -------------------------------------------------------------------------------

    def encode(self, obj: T) -> Item:
        """The item to store: every field plus every key attribute its templates can fill.

        An index key whose fields include a None is left out, keeping the index sparse.
        """
        if type(obj) is not self.cls:
            raise TypeError(f"expected a {self.name}, got {type(obj).__name__}")
        # Only the fields the templates hold: the codec reads the others itself.
        values = {name: getattr(obj, name) for name in self._key_field_names}
        try:
            item = self.codec.encode(obj)  # refuses values of the wrong type, naming the field
        except CodecError:
            self._check_key_fields(values)  # a None in the key says more than its type
            raise
        if self.entity is not None:
            item[self.table.type_attribute] = {"S": self.entity}  # type: ignore[index]
        if self.versions is not None:
            item[self.versions.attribute] = self.versions.stored
        if None in values.values():
            self._add_sparse_keys(item, values)
        else:  # the common case: every template is filled
            for attr, template, limit in self._key_plan:
                text = (
                    template.format(values)
                    if template.shard_at is None
                    else self.format_key(attr, values)
                )
                if len(text) > SHORT_KEY:
                    check_key(text, limit, attr, self.name)
                item[attr] = {"S": text}
            for attr, name, kind in self._typed_plan:
                item[attr] = key_attribute_value(kind, typed_key_text(values[name]))
        check_item(item, self.name, deep=self.codec.deep)
        return item

    @functools.cached_property
    def _kinds(self) -> dict[str, KeyType]:
        """Key attribute -> its type, for this model's number and binary key attributes."""
        kinds: dict[str, KeyType] = {}
        for attr in self.templates:
            kind = self.table.key_type(attr)
            if kind != "S":
                kinds[attr] = kind
        return kinds

    @functools.cached_property
    def _typed_plan(self) -> tuple[tuple[str, str, KeyType], ...]:
        """Each number or binary key attribute with the one field it holds, and its type."""
        return tuple((a, self.templates[a].fields[0], kind) for a, kind in self._kinds.items())

    @functools.cached_property
    def _typed_key_fields(self) -> frozenset[str]:
        """The fields held by number or binary key attributes, whose bounds are numbers/bytes."""
        return frozenset(name for _, name, _ in self._typed_plan)

    @functools.cached_property
    def _key_field_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f for t in self.templates.values() for f in t.fields))

    @functools.cached_property
    def _key_plan(self) -> tuple[tuple[str, KeyTemplate, int], ...]:
        """Each key attribute with its template and size limit, in template order."""
        return tuple(
            (a, t, self._key_limit(a)) for a, t in self.templates.items() if a not in self._kinds
        )

    def _add_sparse_keys(self, item: Item, values: Mapping[str, object]) -> None:
        """Add the key attributes whose fields are all set; a None leaves an index key out."""
        unfilled = []
        for attr, template, limit in self._key_plan:
            if any(values[f] is None for f in template.fields):
                self._check_key_fields(values)
                unfilled.append(attr)
                continue
            text = self.format_key(attr, values)
            if len(text) > SHORT_KEY:
                check_key(text, limit, attr, self.name)
            item[attr] = {"S": text}
        for attr, name, kind in self._typed_plan:
            if values[name] is None:
                self._check_key_fields(values)
                unfilled.append(attr)
            else:
                item[attr] = key_attribute_value(kind, typed_key_text(values[name]))
        # An index entry needs all of its key attributes: leave out the others of its key too,
        # but not a field's own attribute that holds its value (the index is then just sparse).
        # A None identity field leaves its attribute out: a key attribute cannot hold NULL.
        own = self.codec.attributes.values()
        for attr in self.table.index_partners(unfilled):
            if attr not in own:
                item.pop(attr, None)
        for attr in unfilled:
            if attr in self.identity:
                item.pop(attr, None)

    def _check_key_fields(self, values: Mapping[str, object]) -> None:
        for attr in self.table.primary_attributes:
            template = self.templates[attr]
            missing = [f for f in template.fields if values[f] is None]
            if missing:
                raise KeyTemplateError(
                    f"{self.name}.{missing[0]} is None, but it is part of the key {attr!r} "
                    f"({template.source!r})"
                )

    def check_item(self, item: Item) -> None:
        """Refuse an item of this model DynamoDB would not store (size, text, nesting)."""
        check_item(item, self.name, deep=self.codec.deep)

    def key_attribute(self, attr: str, values: Mapping[str, object]) -> AttributeValue:
        """The AttributeValue of key attribute ``attr`` for ``values``, of the attribute's type."""
        kind = self._kinds.get(attr)
        if kind is None:
            return {"S": self.key_value(attr, values)}
        name = self.templates[attr].fields[0]
        value = values.get(name)
        if (
            not isinstance(value, _TYPED_KEY_FIELDS[kind])
            or isinstance(value, bool)
            or (isinstance(value, decimal.Decimal) and not value.is_finite())
        ):
            wanted = "a finite int or Decimal" if kind == "N" else "bytes"
            raise KeyTemplateError(
                f"{self.name}.{name} fills the {'number' if kind == 'N' else 'binary'} key "
                f"attribute {attr!r}: give {wanted}, not {value!r}"
            )
        return key_attribute_value(kind, typed_key_text(value))

    def key_type(self, attr: str) -> KeyType:
        """The DynamoDB type of the key attribute ``attr`` (``"S"``, ``"N"`` or ``"B"``)."""
        return self._kinds.get(attr, "S")

    def key_value(self, attr: str, values: Mapping[str, object]) -> str:
        """The key attribute ``attr`` made from ``values``, within DynamoDB's key size limits.

        The key's text: a number's digits for a number (N) key, base64 for a binary (B) one.
        """
        text = self.format_key(attr, values)
        if len(text) > SHORT_KEY:
            check_key(text, self._key_limit(attr), attr, self.name)
        return text

    def _key_limit(self, attr: str) -> int:
        # An attribute may be one index's partition key and another's sort key: the lower wins.
        scopes: list[str | None] = [None, *self.table.indexes]
        limits = [
            MAX_PARTITION_KEY_BYTES if attr == pk else MAX_SORT_KEY_BYTES
            for pk, sk in map(self.table.key_attributes, scopes)
            if attr in (pk, sk)
        ]
        return min(limits, default=MAX_PARTITION_KEY_BYTES)

    def decode(self, item: Mapping[str, AttributeValue]) -> T:
        """Build the instance from an item; fields stored only inside keys are parsed back."""
        try:
            obj: T = self.codec.decode(item)
        except Exception:  # noqa: BLE001 - the careful path below explains or recovers
            obj = self._careful(item)
        return obj

    def upgraded(self, item: Mapping[str, AttributeValue]) -> Mapping[str, AttributeValue]:
        """``item`` at the model's current schema version (upgraded in memory if older).

        CodecError for an item newer than the code, UpgradeError when an upgrade fails.
        """
        if self.versions is None:
            return item
        return self.versions.upgrade(item, self.describe(item))

    @functools.cached_property
    def _careful(self) -> Callable[[Mapping[str, AttributeValue]], T]:
        # Tables written by other tools may keep a field only inside a key ("USER#alice").
        return careful_decoder(self, self.cls, self.name)

    def describe(self, item: Mapping[str, AttributeValue]) -> str:
        """The item's table key, as errors name it (``PK='b#1', SK='l#7'``)."""
        pk_attr, sk_attr = self.table.key_attributes(None)
        parts = [f"{a}={_key_text(item[a])}" for a in (pk_attr, sk_attr) if a and a in item]
        if not parts:
            # An item read without its table key (an index key, a key being rewritten): the
            # index keys it holds name it instead.
            held = dict.fromkeys(a for a in self.table.attribute_names() if a in item)
            parts = [f"{a}={_key_text(item[a])}" for a in held]
        return ", ".join(parts) or "(no key attribute)"

    # -- which items are this model's ----------------------------------------------------------

    def tests(self, index: str | None) -> ModelTests:
        """How this model's items are told from others' in the table (``None``) or ``index``.

        Never true in an index that cannot hold this model's items.
        """
        found = self._tests.get(index)
        if found is None:
            if index is not None and not self.in_index(index):
                found = OUTSIDE
            else:
                keys = self.table.key_attributes(index)
                found = model_tests(
                    self.templates, keys, self.table.type_attribute, self.entity, self._kinds
                )
            self._tests[index] = found
        return found

    def sort_key_matcher(self, index: str | None) -> Callable[[Mapping[str, AttributeValue]], bool]:
        """A test for items of one Query's results: are they this model's?

        Decided by the type attribute when the item holds it, else by the sort key alone: every
        item of a Query shares the partition key the query named, made from this model's
        partition template, and models that can share a partition have sort key templates that
        cannot overlap (checked at declaration).
        """
        return self.tests(index).in_collection

    def decode_if(self, item: Item, index: str | None) -> T | None:
        """The instance for an item of one Query's results, or None if it is another model's."""
        return self.decode(item) if self.sort_key_matcher(index)(item) else None

    def primary_key_of_item(self, item: Item) -> Item | None:
        """The primary key of a stored item of this model (None for other models' items)."""
        if not self.matches(item):
            return None
        return {a: item[a] for a in self.table.primary_attributes}

    def entity_guard(self) -> Condition | None:
        """The condition an update or delete needs so it never touches another model's item.

        Only where another model's keys can equal this model's (a type attribute allows that):
        the item at the key must hold this entity, or no type attribute at all.
        """
        if self.entity is None or self.table.type_attribute is None:
            return None
        pk, sk = self.key_templates(None)
        for other in self.table.models.values():
            if other is self:
                continue
            other_pk, other_sk = other.key_templates(None)
            if pk.could_overlap(other_pk) and (
                sk is None or other_sk is None or sk.could_overlap(other_sk)
            ):
                return entity_is(self.table.type_attribute, self.entity)
        return None

    def matches(self, item: Mapping[str, AttributeValue], index: str | None = None) -> bool:
        """Whether the item is one of this model's.

        Decided by the table's type attribute when the item holds it, else by whether the
        item's keys fit this model's templates (how mixed results are told apart).
        """
        return self.tests(index).whole(item)


def fields_in_keys(
    templates: Mapping[str, KeyTemplate],
    key_parsers: Mapping[str, Callable[[str], object]],
    primary: Sequence[str],
    kinds: Mapping[str, KeyType] | None = None,
) -> dict[str, KeyFields]:
    """Key attribute -> the fields its template holds, each with its parser (table keys first).

    The one description of how fields are read back out of keys: by generated decoders (for
    key-only fields), the careful decoder and views (for fields an item keeps only in keys), and
    by projections (which fields a projected key attribute gives).
    """
    found = {
        attr: KeyFields(
            attr,
            template,
            {name: key_parsers[name] for name in template.fields},
            always=attr in primary,
            kind=(kinds or {}).get(attr, "S"),
        )
        for attr, template in templates.items()
        if template.fields
    }
    return dict(sorted(found.items(), key=lambda pair: not pair[1].always))


_ABSENT: Any = object()


class _FieldRead(msgspec.Struct, frozen=True):
    """How the careful decoder reads one field."""

    alias: str
    name: str
    stored: str
    read: Callable[[AttributeValue], object]
    #: The key attributes holding the field, table keys first.
    holders: tuple[KeyFields, ...]
    has_default: bool
    #: The empty collection a missing set field reads back as (None: not a set).
    empty: Callable[[], object] | None
    #: The field's type as declared (``int``, ``list[Address] | None``), for errors.
    declared: str = ""

    def failure(
        self, label: str, key: str, item: Mapping[str, AttributeValue], exc: Exception
    ) -> str:
        """Why the field could not be read: the item, the attribute, what it holds."""
        # A missing type tag (KeyError 'N') says nothing a reader can use; others explain.
        reason = "" if isinstance(exc, KeyError) else f" ({exc})"
        if self.stored in item:
            return (
                f"{label}: item {key}: attribute {self.stored!r} (field {self.name!r}: "
                f"{self.declared}) holds {_shown(item[self.stored])}, which does not read as "
                f"{self.declared}{reason}; correct the stored item, or declare {self.name} "
                "with a type that holds it"
            )
        holders = ", ".join(repr(h.attribute) for h in self.holders) or "no attribute"
        return (
            f"{label}: item {key}: field {self.name!r} ({self.declared}), read from key "
            f"attribute {holders}, does not read as {self.declared}{reason}"
        )

    def value(
        self, item: Mapping[str, AttributeValue], parsed: dict[str, dict[str, str] | None]
    ) -> object:
        """From the field's own attribute, else from a key holding it; else _ABSENT."""
        if self.stored in item:
            return self.read(item[self.stored])
        for source in self.holders:
            if source.attribute not in parsed:
                parsed[source.attribute] = source.texts(item)  # each key parsed once an item
            texts = parsed[source.attribute]
            if texts is not None:
                return source.parsers[self.name](texts[self.name])
        return _ABSENT


def _key_text(value: object) -> str:
    """A key attribute's value as errors show it: ``'ORG#a'``, ``7``, else the value itself."""
    if isinstance(value, Mapping) and len(value) == 1:
        ((tag, text),) = value.items()
        if tag == "S":
            return repr(text)
        if tag == "N":
            return str(text)
    return _shown(value)


def _shown(value: object, limit: int = 80) -> str:
    """A stored value in an error message, cut short when long."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + " ...}"


def careful_decoder(
    info: ModelInfo[Any], cls: type[V], label: str
) -> Callable[[Mapping[str, AttributeValue]], V]:
    """Reads the fields of ``cls`` (``info``'s model, or a view of some of its fields) one by one.

    Each from its own attribute, else parsed out of a key attribute holding it, else its
    default (an empty set for sets). Slower than a generated decoder; it reads items other
    tools wrote, and its errors name the item and the field.
    """
    codec = info.codec
    plan = [
        _FieldRead(
            alias=f.alias,
            name=f.name,
            stored=codec.attributes[f.name],
            read=codec.decode_field[f.name],
            holders=tuple(k for k in info.key_fields.values() if f.name in k.parsers),
            has_default=f.default is not attrs.NOTHING,
            declared=f.type if isinstance(f.type, str) else type_text(f.type),
            empty=(frozenset if typing.get_origin(f.type) is frozenset else set)
            if f.name in codec.sets
            else None,
        )
        for f in attrs.fields(cast("type[attrs.AttrsInstance]", cls))
        if f.init
    ]

    versions = info.versions
    whole = cls is info.cls

    def decode(item: Mapping[str, AttributeValue]) -> V:
        if versions is not None:
            item = info.upgraded(item) if whole else _current_part(info, label, item)
        values: dict[str, object] = {}
        parsed: dict[str, dict[str, str] | None] = {}
        for field in plan:
            try:
                value = field.value(item, parsed)
            except (KeyError, TypeError, ValueError, CodecError) as exc:
                raise CodecError(field.failure(label, info.describe(item), item, exc)) from exc
            if value is _ABSENT:
                if field.has_default:
                    continue  # attrs fills it in
                if field.empty is None:
                    raise CodecError(
                        f"{label}: item {info.describe(item)} lacks field {field.name!r} "
                        f"(stored as {field.stored!r}, and no key attribute holds it)"
                    )
                value = field.empty()
            values[field.alias] = value
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise CodecError(f"{label}: cannot read item {info.describe(item)}: {exc}") from exc

    return decode


def _current_part(
    info: ModelInfo[Any], label: str, item: Mapping[str, AttributeValue]
) -> Mapping[str, AttributeValue]:
    """A projected item of a versioned model, refused unless at the current schema version.

    An upgrade reads the whole item as stored; a projection holds some attributes only.
    """
    versions = info.versions
    if versions is not None and versions.version_of(item) != versions.current:
        raise CodecError(
            f"{label}: item {info.describe(item)} is stored at schema version "
            f"{versions.version_of(item)}, and {info.name} is at {versions.current}; a view "
            "reads some attributes only, too few to upgrade it: read whole items, or run "
            f"upgrade_items(db, {info.name}) first"
        )
    return item


def check_layout(info: ModelInfo[Any]) -> None:
    """Refuse a model whose fields and key attributes cannot share its items.

    Each stored name holds one thing: one field, or one key attribute, or the type attribute. A
    key attribute may also be a field's own attribute when its template is exactly that field
    (``"{site}"`` on ``Site``): the key is the field, stored once.
    """
    owners: dict[str, str] = {}
    for name, stored in info.codec.attributes.items():
        if stored in owners:
            raise DefinitionError(
                f"{info.name}.{name} and {info.name}.{owners[stored]} are both stored as "
                f"{stored!r}; give one of them another dynorm.field(name=...)"
            )
        owners[stored] = name
    _check_nested_names(info.field_types.values(), set())
    type_attr = info.table.type_attribute
    if type_attr is not None and type_attr in owners:
        raise DefinitionError(
            f"{info.name}.{owners[type_attr]} is stored as {type_attr!r}, the table's type "
            "attribute, which holds the entity name; store the field under another name"
        )
    key_attrs = info.table.attribute_names()
    for stored, name in owners.items():
        if name in info.codec.key_only or stored not in key_attrs:
            continue
        template = info.templates.get(stored)
        if template is not None and template.source != "{" + name + "}":
            raise DefinitionError(
                f"{info.name}.{name} is stored as {stored!r}, which its key template "
                f"{template.source!r} fills; a key attribute is a field only when its template "
                f"is exactly {'{' + name + '}'!r}: change one of the two names"
            )
        # Without a template the field still fills the attribute (an index the model is not
        # read through); either way the value must be of the attribute's type (S unless the
        # table's key_types say N or B).
        tp = info.field_types[name]
        kind = info.table.key_type(stored)
        if kind != "S":
            if without_none(tp) not in _TYPED_KEY_FIELDS[kind]:
                check_typed_key(info.name, stored, kind, KeyTemplate("{" + name + "}"), {name: tp})
            continue
        if without_none(tp) is not str:
            hint = ""
            if without_none(tp) in (*_TYPED_KEY_FIELDS["N"], *_TYPED_KEY_FIELDS["B"]):
                kind = "B" if without_none(tp) is bytes else "N"
                named = "binary" if kind == "B" else "number"
                hint = f", or make it a {named} key: Table(..., key_types={{{stored!r}: {kind!r}}})"
            raise DefinitionError(
                f"{info.name}.{name} is stored as the key attribute {stored!r}, a string (S) key "
                f"attribute; declare it as str (it is {tp!r}), or store it under another "
                f"name{hint}"
            )
    for attr, name in info.identity.items():
        field = attrs.fields_dict(info.cls)[name]
        if without_none(info.field_types[name]) is not info.field_types[name] and (
            field.default is attrs.NOTHING
        ):
            raise DefinitionError(
                f"{info.name}.{name} is the key attribute {attr!r} itself and may be None, "
                "which leaves the attribute out of the item; give it a default (= None) so "
                "such items read back"
            )
    for name in info.codec.key_only:
        holders = [a for a, t in info.templates.items() if name in t.fields]
        if not holders:
            raise DefinitionError(
                f"{info.name}.{name} is key_only, but no key template of {info.name} holds it; "
                f"add {'{' + name + '}'!r} to a template or drop key_only=True"
            )


#: The field types a number (N) or binary (B) key attribute can hold.
_TYPED_KEY_FIELDS: Final = {"N": (int, decimal.Decimal), "B": (bytes,)}


def typed_keys(table: ModelTable, names: Iterable[str]) -> tuple[tuple[str, KeyType], ...]:
    """Those of the key attributes ``names`` that are numbers or binary, with their types."""
    return tuple((a, table.key_type(a)) for a in names if table.key_type(a) != "S")


def check_typed_key(
    model: str, attr: str, kind: KeyType, template: KeyTemplate, field_types: Mapping[str, Any]
) -> None:
    """Refuse a number or binary key attribute that is not one int/Decimal (N) or bytes (B) field.

    Such an attribute holds a value, not text: no literals, no second field, no format spec.
    """
    named = "number" if kind == "N" else "binary"
    segment = template.segments[0]
    if (
        len(template.segments) != 1
        or segment.field is None
        or segment.prefix
        or segment.suffix
        or segment.spec
    ):
        example = "{" + (template.fields[-1] if template.fields else "score") + "}"
        raise DefinitionError(
            f"{model}: key attribute {attr!r} is a {named} ({kind}), so its template must be "
            f"one field alone, like {example!r}; {template.source!r} is not. Keep literals, "
            "several fields and format specs for string (S) key attributes: declare "
            f"key_types={{{attr!r}: 'S'}} (or leave it out), or use a template of one field"
        )
    name = segment.field
    tp = without_none(field_types.get(name, str))
    allowed = _TYPED_KEY_FIELDS[kind]
    if tp in allowed:
        return
    if kind == "N" and tp is float:
        hint = "declare it as int, or as Decimal (floats do not round-trip exactly)"
    elif kind == "N":
        hint = "declare it as int or Decimal"
    else:
        hint = "declare it as bytes"
    what = getattr(tp, "__name__", repr(tp))
    raise DefinitionError(
        f"{model}.{name} ({what}) fills the {named} key attribute {attr!r} ({kind}); {hint}, "
        f"or make {attr!r} a string key (key_types={{{attr!r}: 'S'}})"
    )


def _check_nested_names(types: Iterable[object], seen: set[type]) -> None:
    """Refuse a nested attrs class (at any depth) storing two of its fields under one name."""
    for tp in types:
        for cls in _attrs_classes_in(tp):
            if cls in seen:
                continue
            seen.add(cls)
            owners: dict[str, str] = {}
            for field in attrs.fields(cls):
                stored = stored_name(field)
                if stored in owners:
                    raise DefinitionError(
                        f"{cls.__name__}.{field.name} and {cls.__name__}.{owners[stored]} are "
                        f"both stored as {stored!r}; give one of them another "
                        "dynorm.field(name=...)"
                    )
                owners[stored] = field.name
            _check_nested_names([f.type for f in attrs.fields(cls)], seen)


def not_key_fields(
    model: str, lookup: str, unknown: Sequence[str], valid: Sequence[str]
) -> KeyTemplateError:
    """The error for a lookup naming fields that are not key fields, with close matches.

    ``lookup`` starts the message: ``"User is looked up by"``, ``"db.query(User) takes"``.
    """
    named = [f"{name!r}{did_you_mean(name, valid)}" for name in unknown]
    return KeyTemplateError(
        f"{lookup} its key fields {', '.join(valid)}; {', '.join(named)} "
        f"{'is not one' if len(unknown) == 1 else 'are not'}. Other fields of {model} cannot "
        "address items: query a collection and test the items, or declare an index whose key "
        "template holds the field"
    )


def is_model(cls: object) -> bool:
    return isinstance(cls, type) and getattr(cls, _INFO_ATTR, None) is not None


def info_of(cls: type[T]) -> ModelInfo[T]:
    """The ModelInfo of a model class, with an error that says how to declare one."""
    info: ModelInfo[T] | None = getattr(cls, _INFO_ATTR, None)
    if info is None or info.cls is not cls:
        name = getattr(cls, "__name__", repr(cls))
        raise DefinitionError(
            f"{name} is not a dynorm model; decorate it with @table.model(pk=..., sk=...)"
        )
    return info


def attach_info(cls: type[T], info: ModelInfo[T]) -> None:
    setattr(cls, _INFO_ATTR, info)


class LocalScope:
    """The local names of the function a model was declared in, read when they are needed.

    With ``from __future__ import annotations`` a field typed by a class defined in the same
    function is the string ``"Point"``, which the module's globals cannot resolve. The frame's
    locals are read at lookup time, not copied at declaration, so a class defined after the
    model (an embedded child resolved later) is found too. Relationships drop their scope once
    resolved, so the frame is not kept alive longer than that.
    """

    __slots__ = ("_frame",)

    def __init__(self, frame: types.FrameType) -> None:
        self._frame = frame

    @classmethod
    def of_caller(cls, depth: int = 1) -> LocalScope | None:
        """The scope of the frame ``depth`` calls above the caller, if it has its own locals."""
        frame = sys._getframe(depth + 1)
        # At module level the locals are the globals, which resolution reads anyway.
        return None if frame.f_locals is frame.f_globals else cls(frame)

    def names(self) -> dict[str, Any]:
        """The frame's local names as they are now."""
        return dict(self._frame.f_locals)


def _attrs_classes_in(tp: object) -> Iterable[type]:
    """The attrs classes a resolved type mentions (``Point``, ``list[Point]``, ``Point | None``)."""
    if isinstance(tp, type) and attrs.has(tp):
        yield tp
    for arg in typing.get_args(tp):
        yield from _attrs_classes_in(arg)


#: Annotations that name a builtin type, resolved without evaluating them (unless a module or
#: function declaring a model gives the name another meaning).
_BUILTIN_TYPES: Final[Mapping[str, type]] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "bytes": bytes,
}


def resolve_field_types(cls: type, localns: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Field name -> resolved type; forward references must be resolvable by now.

    Only fields are resolved, not every annotation: a ``ClassVar[HasMany[User]]`` may name
    classes that are declared later (attrs.resolve_types would evaluate it too, and fail).
    ``localns`` holds the names local to the function that declared the class; nested attrs
    classes whose fields are still strings are resolved with them too.
    """
    module = sys.modules.get(cls.__module__)
    globalns = dict(vars(module)) if module is not None else {}
    names = {**(localns or {}), cls.__name__: cls}
    for field in attrs.fields(cls):
        if not isinstance(field.type, str):
            continue
        simple = _BUILTIN_TYPES.get(field.type)
        if simple is not None and field.type not in names and field.type not in globalns:
            # ``str``, ``int``…: what evaluating the text would give, without typing's work.
            object.__setattr__(field, "type", simple)
            continue
        holder = types.SimpleNamespace(__annotations__={field.name: field.type})
        try:
            hint = typing.get_type_hints(holder, globalns, names)[field.name]
        except NameError as exc:
            raise DefinitionError(
                f"{cls.__name__}.{field.name}: its annotation cannot be resolved ({exc}); "
                "define the type before the model"
            ) from None
        object.__setattr__(field, "type", hint)  # what attrs.resolve_types does, field by field
    resolved = {f.name: f.type for f in attrs.fields(cls)}
    for tp in resolved.values():
        for nested in _attrs_classes_in(tp):
            # The converter would resolve these with their module's globals only, and fail.
            if any(isinstance(f.type, str) for f in attrs.fields(nested)):
                resolve_field_types(nested, localns)
    return resolved


def key_parsers_for(
    cls: type,
    field_types: Mapping[str, Any],
    templates: Iterable[KeyTemplate],
    binary: Collection[str] = (),
) -> dict[str, Callable[[str], object]]:
    parsers: dict[str, Callable[[str], object]] = {}
    for template in templates:
        for name in template.fields:
            if name not in field_types:
                raise DefinitionError(
                    f"{cls.__name__}: key template {template.source!r} names {name!r}, which is "
                    f"not a field; fields: {', '.join(field_types) or 'none'}"
                )
            try:
                # ``X | None``: the key holds an X (an index key is left out while it is None).
                kind: KeyType = "B" if name in binary else "S"
                parsers[name] = key_value_parser(without_none(field_types[name]), kind)
            except DefinitionError as exc:
                raise DefinitionError(f"{cls.__name__}.{name}: {exc}") from None
    return parsers
