"""A model's codec: the generated functions turning its instances into items and back.

``build_codec`` (at a model's declaration) checks that every field type can be stored;
``ModelCodec`` then writes each function on its first use: ``decode`` (``decoders``),
``encode`` (``encoders``, falling back to the cattrs walk to explain a refusal), the per-field
encoders and decoders, and the document-path encoder (``paths``). ``value_encoder`` does the
same for values written many to an item (embedded children).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any, cast

import attrs

from dynorm.core.errors import CodecError, DefinitionError
from dynorm.core.fields import is_key_only, stored_name
from dynorm.core.keys import KeyFields
from dynorm.core.limits import MAX_DEPTH

from . import AttributeValue, Item
from .containers import _unstructure_fn
from .converter import hooks
from .decoders import (
    DecoderSpec,
    VersionGate,
    generate_decoder,
)
from .encoders import (
    generate_encoder,
    generate_nested_encoder,
)
from .generic import _NULL
from .paths import _attribute_steps, _path_encoder, _with_fields
from .refusals import _HOOK_ERRORS, _describe, _named
from .rules import (
    _ENCODE_HELPERS,
    _INLINE_HELPERS,
    INLINE_STRUCTURE,
    INLINE_UNSTRUCTURE,
    SCALARS,
)
from .scalars import epoch_decoder, epoch_encoder, unstructure_hook
from .typeforms import (
    _element,
    _is_enum,
    _is_list,
    _is_map,
    _is_set,
    _optional_inner,
    _origin,
    _tuple_items,
    resolved_fields,
)

__all__ = ["ModelCodec", "build_codec", "check_definable", "value_encoder"]


class ModelCodec:
    """The generated functions that turn one model's instances into items and back.

    ``encode`` and the ``encode_field`` hooks refuse a value that would not read back as its
    field's type with a CodecError naming the model, the field (and the path inside it), the
    declared type and the value.

    Building one (``build_codec``, at a model's declaration) checks that every field type can
    be stored and works out what the functions need, but generates nothing: each generated
    function (``decode``, ``encode`` and the rest) is written on its first use, and stored on
    the codec in place of the property that wrote it, so later uses call it directly.
    """

    def __init__(
        self,
        cls: type,
        *,
        epoch: Collection[str] = (),
        keys: Collection[KeyFields] = (),
        gate: VersionGate | None = None,
    ) -> None:
        check_definable(cls)
        fields = attrs.fields(cls)
        self._cls = cls
        self._fields: tuple[attrs.Attribute[Any], ...] = tuple(fields)
        #: Set fields, which ``encode`` leaves out of the item while they are empty.
        self.sets: tuple[str, ...] = tuple(f.name for f in fields if _is_set(f.type))
        self._epoch = frozenset(epoch)
        #: Fields kept only inside key attributes (``dynorm.field(key_only=True)``).
        self.key_only: tuple[str, ...] = tuple(f.name for f in fields if is_key_only(f))
        from_keys = {
            name: source
            for name in self.key_only
            if (source := next((k for k in keys if name in k.parsers), None)) is not None
        }
        #: How ``decode`` is generated, for wire decoding to mirror.
        self.decoder_spec: DecoderSpec = DecoderSpec(
            cls,
            hooks,
            INLINE_STRUCTURE,
            _INLINE_HELPERS,
            # An empty set field is left out of the item rather than stored as NULL: DynamoDB's
            # ADD refuses a NULL attribute, so `db.update(obj, add={"tags": {...}})` could never
            # fill it. It reads back empty.
            empty_when_missing={
                f.name: frozenset if _origin(f.type) is frozenset else set
                for f in fields
                if f.name in self.sets
            },
            overrides=self._epochs[1],
            from_keys=from_keys,
            gate=gate,
        )
        #: Field name -> the attribute it is stored under.
        self.attributes: Mapping[str, str] = {f.name: stored_name(f) for f in fields}
        #: Field path -> stored attribute steps (``shelf.room`` -> ``[("Shelf", ""), ...]``).
        self.attribute_steps: Callable[[str], list[tuple[str, str]]] = functools.partial(
            _attribute_steps, cls
        )

    def __repr__(self) -> str:
        return f"<ModelCodec of {self._cls.__qualname__}>"

    def _named_errors(self) -> _NamingModel:
        """Re-raise a DefinitionError met while generating, naming the model."""
        return _NamingModel(self._cls.__name__)

    @functools.cached_property
    def _epochs(
        self,
    ) -> tuple[
        dict[str, Callable[[Any], AttributeValue]], dict[str, Callable[[AttributeValue], Any]]
    ]:
        return _epoch_codecs(self._fields, self._epoch)

    @functools.cached_property
    def decode(self) -> Callable[[Mapping[str, AttributeValue]], Any]:
        """An item (attribute name -> AttributeValue) -> an instance of the model."""
        spec = self.decoder_spec
        with self._named_errors():
            return generate_decoder(
                self._cls,
                spec.hooks,
                inline=spec.inline,
                helpers=spec.helpers,
                empty_when_missing=spec.empty_when_missing,
                overrides=spec.overrides,
                from_keys=spec.from_keys,
                wire=True,
                gate=spec.gate,
            )

    @functools.cached_property
    def encode_field(self) -> Mapping[str, Callable[[Any], AttributeValue]]:
        """Field name -> its value's encoder, whose errors name the field."""
        epoch_encode = self._epochs[0]
        with self._named_errors():
            return {
                f.name: _named(
                    epoch_encode.get(f.name) or unstructure_hook(hooks, f.type),
                    f"{self._cls.__name__}.{f.name}",
                    f.type,
                )
                for f in self._fields
            }

    @functools.cached_property
    def decode_field(self) -> Mapping[str, Callable[[AttributeValue], Any]]:
        """Field name -> a function reading that field's AttributeValue alone."""
        return {f.name: _field_decoder(f.type) for f in self._fields} | self._epochs[1]

    @functools.cached_property
    def deep(self) -> bool:
        """Whether a value may nest deeper than MAX_DEPTH (Any-typed fields, custom types).

        Such items need a depth check; typed fields have a depth known from their types.
        """
        depths = [_nesting(f.type) for f in self._fields]
        return any(d is None or d > MAX_DEPTH for d in depths)

    @functools.cached_property
    def encode_path(self) -> Callable[[str], Callable[[Any], AttributeValue]]:
        """The encoder for a document path (``address.city``, ``tags[0]``).

        Typed where the path can be followed through the field types, generic otherwise.
        """
        epoch_fields = tuple(self._epochs[0])
        if not epoch_fields:
            return _path_encoder(self._cls)
        return _with_fields(_path_encoder(self._cls), self.encode_field, epoch_fields)

    @functools.cached_property
    def encode_walk(self) -> Callable[[Any], Item]:
        """What ``encode`` falls back to when its generated function refuses a value.

        The cattrs walk, slower, whose errors name the field. Same items, same errors.
        """
        cls, fields, key_only = self._cls, self._fields, self.key_only
        with self._named_errors():
            encode = _unstructure_fn(hooks.converter, cls, hooks=self._epochs[0], omit=key_only)
        encode_field = self.encode_field
        set_attributes = [self.attributes[name] for name in self.sets if name not in key_only]
        # Left out of the item, but still refused when of the wrong type: the key holds them.
        key_only_checks = [(name, encode_field[name]) for name in key_only]

        def _field_error(obj: Any, exc: BaseException) -> CodecError:
            for f in fields:
                try:
                    encode_field[f.name](getattr(obj, f.name))
                except CodecError as named:
                    return named
            return _describe(exc, cls.__name__, cls, obj)

        def encode_walk(obj: Any) -> Item:
            try:
                item = encode(obj)
                if key_only_checks:
                    for name, check in key_only_checks:
                        check(getattr(obj, name))
            except _HOOK_ERRORS as exc:
                # The slow path, after a failure only: find the field and name it.
                error = _field_error(obj, exc)
                raise error from error.__cause__
            for name in set_attributes:
                if item[name] is _NULL:
                    del item[name]
            return item

        return encode_walk

    @functools.cached_property
    def encode(self) -> Callable[[Any], Item]:
        """An instance of the model -> its item (the key attributes are the caller's)."""
        fast = _generated_encoder(self._cls, self._epochs[0], self.key_only, self.sets)

        def encode_item(obj: Any) -> Item:
            try:
                return fast(obj)
            except _HOOK_ERRORS:
                # The generated function names nothing; the walk raises the error that does.
                return self.encode_walk(obj)

        return encode_item


class _NamingModel:
    """``with``: a DefinitionError raised inside is raised again, naming the model."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, DefinitionError):
            raise DefinitionError(f"{self.name}: {exc}") from None


def _nesting(tp: object, seen: frozenset[type] = frozenset()) -> int | None:
    """How many maps and lists a value of type ``tp`` nests at most; None when unbounded."""
    inner = _optional_inner(tp)
    if inner is not None:
        return _nesting(inner, seen)
    if tp is Any or isinstance(tp, str):
        return None
    if _is_set(tp) or _is_enum(tp) or (isinstance(tp, type) and issubclass(tp, SCALARS)):
        return 0
    parts: tuple[object, ...] | None = None
    if _tuple_items(tp) is not None:
        parts = _tuple_items(tp)
    elif _is_list(tp):
        parts = (_element(tp),)
    elif _is_map(tp):
        parts = (_element(tp, 1),)
    elif isinstance(tp, type) and attrs.has(tp) and tp not in seen:
        parts = tuple(f.type for f in resolved_fields(tp))
        seen |= {tp}
    if parts is None:
        return None  # a recursive class, or a type with hooks of the user's: unknown
    depths = [_nesting(p, seen) for p in parts]
    return None if None in depths else 1 + max(cast("list[int]", depths), default=0)


def check_definable(cls: type) -> None:
    """DefinitionError, naming the field, unless every field type of ``cls`` can be stored."""
    for field in attrs.fields(cls):
        # One field at a time, so the error can name the field to change.
        try:
            hooks.get_structure_hook(field.type)
        except DefinitionError as exc:
            raise DefinitionError(f"{cls.__name__}.{field.name}: {exc}") from None
        except Exception as exc:
            # The converter answered (dynorm's own hooks raise no other error): cattrs is loaded.
            from cattrs.errors import StructureHandlerNotFoundError  # noqa: PLC0415

            if not isinstance(exc, StructureHandlerNotFoundError):
                raise
            raise DefinitionError(
                f"{cls.__name__}.{field.name}: cannot store {exc.type_!r} in DynamoDB; use str, "
                "int, float, Decimal, bool, bytes, date/datetime/time, UUID, an Enum, an attrs "
                "class, or lists/sets/dicts of those, or register hooks for it on "
                "dynorm.converter"
            ) from None


def _epoch_codecs(
    fields: tuple[attrs.Attribute[Any], ...], epoch: Collection[str]
) -> tuple[dict[str, Callable[[Any], AttributeValue]], dict[str, Callable[[AttributeValue], Any]]]:
    """Encoders and decoders of the fields stored as epoch seconds (a time to live)."""
    encoders, decoders = {}, {}
    for f in fields:
        if f.name in epoch:
            optional = _optional_inner(f.type) is not None
            encoders[f.name] = epoch_encoder(optional=optional)
            decoders[f.name] = epoch_decoder(optional=optional)
    return encoders, decoders


def build_codec(
    cls: type,
    *,
    epoch: Collection[str] = (),
    keys: Collection[KeyFields] = (),
    gate: VersionGate | None = None,
) -> ModelCodec:
    """The codec of an attrs class; fails early on field types DynamoDB cannot hold.

    ``epoch`` names datetime fields stored as epoch seconds (a number) instead of ISO text.
    ``keys`` are the model's key attributes with the fields they hold: the decoder reads each
    key-only field (``dynorm.field(key_only=True)``) out of the first that holds it. Its
    functions are generated on first use (see ``ModelCodec``). ``gate``: a versioned model's
    schema version check (``dynorm.core.upgrades``), the decoder's first step.
    """
    return ModelCodec(cls, epoch=epoch, keys=keys, gate=gate)


def _generated_encoder(
    cls: type,
    epoch_encode: Mapping[str, Callable[[Any], AttributeValue]],
    key_only: Collection[str],
    sets: Collection[str],
) -> Callable[[Any], Item]:
    """The item encoder written for ``cls``: the walk's work inline (see ``encoders``)."""
    try:
        return generate_encoder(
            cls,
            lambda tp: unstructure_hook(hooks, tp),
            inline=INLINE_UNSTRUCTURE,
            helpers=_ENCODE_HELPERS,
            overrides=epoch_encode,
            omit=key_only,
            drop_null=[name for name in sets if name not in key_only],
        )
    except DefinitionError as exc:
        raise DefinitionError(f"{cls.__name__}: {exc}") from None


def value_encoder(cls: type) -> Callable[[Any], AttributeValue]:
    """The converter's hook for an attrs class, doing its work through a generated function.

    For values written many to an item (embedded children). The hook itself encodes what the
    generated function refuses, raising the error that says where the bad value sits.
    """
    hook = unstructure_hook(hooks, cls)
    fast = generate_nested_encoder(
        cls,
        lambda tp: unstructure_hook(hooks, tp),
        inline=INLINE_UNSTRUCTURE,
        helpers=_ENCODE_HELPERS,
    )
    if fast is None:
        return hook

    def encode(value: Any) -> AttributeValue:
        if type(value) is cls:
            try:
                return {"M": fast(value)}
            except _HOOK_ERRORS:
                pass  # the hook raises the error naming the field
        return hook(value)

    return encode


def _field_decoder(tp: object) -> Callable[[AttributeValue], Any]:
    hook = hooks.get_structure_hook(tp)
    return lambda av: hook(av, tp)
