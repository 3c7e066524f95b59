"""DynamoDB AttributeValues <-> Python values, through one configured cattrs converter.

The converter's hooks read and write AttributeValue dicts directly (``{"S": "x"}``), so cattrs
generates, once per model, a function that builds the attrs instance straight from an item: no
intermediate plain-Python dict and no per-item reflection.

Numbers stay exact: ``int`` and ``Decimal`` fields round-trip every digit DynamoDB keeps (38), and
a ``float`` field stores ``repr(value)``, the shortest text that reads back to the same float.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs

from dynorm.core.errors import CodecError, DefinitionError, ExpressionError, did_you_mean
from dynorm.core.fields import is_key_only, stored_name
from dynorm.core.keys import KeyFields
from dynorm.core.limits import (
    MAX_DEPTH,
    MAX_ITEM_BYTES,
    check_value,
    item_size,
)

from . import AttributeValue, Item
from .containers import (
    _list_structure,
    _list_unstructure,
    _map_structure,
    _map_unstructure,
    _nested_structure,
    _nested_unstructure,
    _optional_structure,
    _optional_unstructure,
    _set_structure,
    _tuple_structure,
    _tuple_unstructure,
    _typed_set,
    _unstructure_fn,
)
from .decoders import (
    DecoderSpec,
    generate_decoder,
)
from .enums import (
    _enum_structure,
    _enum_unstructure,
    _literal_structure,
    _literal_unstructure,
)
from .generic import (
    _NULL,
    encode_any,
)
from .hooks import HookSource
from .refusals import _HOOK_ERRORS, _describe, _named
from .scalars import (
    _ENCODE_HELPERS,
    _INLINE_HELPERS,
    _SCALAR_UNSTRUCTURE,
    _STRUCTURE_BY_CLASS,
    INLINE_STRUCTURE,
    INLINE_UNSTRUCTURE,
    _structure_any,
    epoch_decoder,
    epoch_encoder,
    unstructure_hook,
)
from .typeforms import (
    _attrs_class,
    _element,
    _is_enum,
    _is_fixed,
    _is_list,
    _is_literal,
    _is_map,
    _is_set,
    _optional_inner,
    _origin,
    _tuple_items,
    resolved_fields,
)

if TYPE_CHECKING:
    import cattrs

from .encoders import (
    generate_encoder,
    generate_nested_encoder,
)

__all__ = [
    "MAX_ITEM_BYTES",
    "AttributeValue",
    "Item",
    "ModelCodec",
    "build_codec",
    "check_definable",
    "item_size",
    "make_converter",
    "path_steps",
    "value_encoder",
]


def _configure_tuples(c: cattrs.Converter) -> None:
    """Fixed-length tuples: each position has its own type (``tuple[str, int]`` is no list).

    Registered after the list hooks, so these factories win for the tuples they accept.
    """
    c.register_structure_hook_factory(_is_fixed, functools.partial(_tuple_structure, c))
    c.register_unstructure_hook_factory(_is_fixed, functools.partial(_tuple_unstructure, c))


def _configure_literals(c: cattrs.Converter) -> None:
    c.register_structure_hook_factory(_is_literal, _literal_structure)
    c.register_unstructure_hook_factory(_is_literal, _literal_unstructure)


def _configure_structure(c: cattrs.Converter) -> None:
    for tp, hook in _STRUCTURE_BY_CLASS.items():
        c.register_structure_hook(tp, hook)
    c.register_structure_hook_func(lambda t: t is Any, _structure_any)

    c.register_structure_hook_factory(_is_enum, _enum_structure)
    c.register_structure_hook_factory(
        lambda t: _optional_inner(t) is not None, functools.partial(_optional_structure, c)
    )
    c.register_structure_hook_factory(_is_list, functools.partial(_list_structure, c))
    c.register_structure_hook_factory(_is_set, _set_structure)
    c.register_structure_hook_factory(_is_map, functools.partial(_map_structure, c))
    c.register_structure_hook_factory(attrs.has, functools.partial(_nested_structure, c))


def _configure_unstructure(c: cattrs.Converter) -> None:
    for cls, hook in _SCALAR_UNSTRUCTURE.items():
        c.register_unstructure_hook(cls, hook)
    c.register_unstructure_hook_func(lambda t: t is Any, encode_any)
    c.register_unstructure_hook_factory(_is_enum, _enum_unstructure)
    c.register_unstructure_hook_factory(
        lambda t: _optional_inner(t) is not None, functools.partial(_optional_unstructure, c)
    )
    c.register_unstructure_hook_factory(_is_list, functools.partial(_list_unstructure, c))
    c.register_unstructure_hook_factory(_is_set, functools.partial(_typed_set, c))
    c.register_unstructure_hook_factory(_is_map, functools.partial(_map_unstructure, c))
    c.register_unstructure_hook_factory(attrs.has, functools.partial(_nested_unstructure, c))


def make_converter() -> cattrs.Converter:
    """A converter whose hooks turn AttributeValues into typed values and back."""
    import cattrs  # noqa: PLC0415 - only a process whose types need cattrs imports it

    converter = cattrs.Converter(detailed_validation=False)
    _configure_structure(converter)
    _configure_unstructure(converter)
    _configure_tuples(converter)
    _configure_literals(converter)
    return converter


H = TypeVar("H")


def _plain_enum(tp: type) -> bool:
    """An Enum without a mixin (no str, int, ... base, whose hooks cattrs would pick first)."""
    return issubclass(tp, enum.Enum) and all(
        base is object or issubclass(base, enum.Enum) for base in tp.__mro__
    )


def _own_structure(c: HookSource, tp: object) -> Callable[[AttributeValue, object], object] | None:
    """The structure hook ``make_converter()``'s converter gives ``tp``, made without cattrs.

    None for the types cattrs itself must answer: attrs classes, subclasses of the scalars (and
    Enums with a mixin), any other class or form. The checks mirror cattrs' dispatch: hooks
    registered by class first, then the factories, the last registered first.
    """
    if tp is Any:  # a class itself since Python 3.11
        return _structure_any
    if isinstance(tp, type):
        hook = _STRUCTURE_BY_CLASS.get(tp)
        if hook is None and _plain_enum(tp):
            return _enum_structure(cast("type[enum.Enum]", tp))
        return hook
    if _is_literal(tp):
        return _literal_structure(tp)
    if _is_fixed(tp):
        return _tuple_structure(c, tp)
    if _optional_inner(tp) is not None:
        return _optional_structure(c, tp)
    if _is_list(tp):
        return _list_structure(c, tp)
    if _is_set(tp):
        return _set_structure(tp)
    if _is_map(tp):
        return _map_structure(c, tp)
    return None


def _own_unstructure(c: HookSource, tp: object) -> Callable[[Any], AttributeValue] | None:
    """The unstructure hook the converter gives ``tp``, made without cattrs (see above)."""
    if tp is Any:
        return encode_any
    if isinstance(tp, type):
        hook = _SCALAR_UNSTRUCTURE.get(tp)
        if hook is None and _plain_enum(tp):
            return _enum_unstructure(cast("type[enum.Enum]", tp))
        return hook
    if _is_literal(tp):
        return _literal_unstructure(tp)
    if _is_fixed(tp):
        return _tuple_unstructure(c, tp)
    if _optional_inner(tp) is not None:
        return _optional_unstructure(c, tp)
    if _is_list(tp):
        return _list_unstructure(c, tp)
    if _is_set(tp):
        return _typed_set(c, tp)
    if _is_map(tp):
        return _map_unstructure(c, tp)
    return None


class Hooks:
    """The hooks every model's codec is generated from: dynorm's converter, made when needed.

    Importing cattrs and configuring its converter is a tenth of a cold start, and a process
    whose models hold only scalars, Enums, Literals, and Optionals, lists, tuples, sets and
    maps of them never needs it: until something does, these types get the very hooks the
    converter registers (``_own_structure``), made here. An attrs class, a subclass of a scalar
    or any other type makes the converter; so does ``dynorm.converter``, the only way to register
    hooks of one's own, and from then on every type is asked of it.
    """

    def __init__(self) -> None:
        self._converter: cattrs.Converter | None = None
        self._structure: dict[object, Callable[[AttributeValue, object], object]] = {}
        self._unstructure: dict[object, Callable[[Any], AttributeValue]] = {}

    def __repr__(self) -> str:
        made = "made" if self._converter is not None else "not made yet"
        return f"<dynorm hooks, converter {made}>"

    @property
    def converter(self) -> cattrs.Converter:
        """The cattrs converter (``dynorm.converter``), made on first use."""
        if self._converter is None:
            self._converter = make_converter()
        return self._converter

    def get_structure_hook(self, tp: Any, /) -> Callable[[Any, Any], Any]:
        if self._converter is None:
            found = _own(self._structure, tp, _own_structure, self)
            if found is not None:
                return found
        return self.converter.get_structure_hook(tp)

    def get_unstructure_hook(self, tp: Any, /) -> Callable[[Any], Any]:
        if self._converter is None:
            found = _own(self._unstructure, tp, _own_unstructure, self)
            if found is not None:
                return found
        return self.converter.get_unstructure_hook(tp)


def _own(
    made: dict[object, H],
    tp: object,
    make: Callable[[HookSource, object], H | None],
    hooks: HookSource,
) -> H | None:
    """``tp``'s own hook from ``made``, else made by ``make`` (and kept); None: ask cattrs."""
    try:
        found = made.get(tp)
    except TypeError:  # an unhashable annotation: made each time
        return make(hooks, tp)
    if found is None:
        found = make(hooks, tp)
        if found is not None:
            made[tp] = found
    return found


#: The hooks every model's codec is generated from (see ``Hooks``).
hooks: Final = Hooks()

if TYPE_CHECKING:
    #: dynorm's cattrs converter. Users may register extra hooks on it
    #: (``dynorm.converter.register_structure_hook(Money, ...)``) before declaring models.
    converter: cattrs.Converter
else:

    def __getattr__(name: str) -> object:
        # ``converter`` is made on first use: importing cattrs costs a cold start.
        if name == "converter":
            return hooks.converter
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        self, cls: type, *, epoch: Collection[str] = (), keys: Collection[KeyFields] = ()
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
    if _is_set(tp) or _is_enum(tp) or (isinstance(tp, type) and issubclass(tp, _SCALARS)):
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


_SCALARS: Final = tuple(_SCALAR_UNSTRUCTURE)


#: One step of a document path: a name, then any list indexes (``tags``, ``lines[0]``, ``m[1][2]``).
#: Compiled on first use (``re``'s cache), not at import.
_PATH_STEP: Final = r"([^.\[\]]+)((?:\[\d+\])*)"


def path_steps(path: str) -> list[tuple[str, str]]:
    """``a.b[0].c`` -> ``[("a", ""), ("b", "[0]"), ("c", "")]``; ExpressionError if malformed."""
    steps = []
    for step in path.split("."):
        match = re.fullmatch(_PATH_STEP, step)
        if match is None:
            raise ExpressionError(
                f"{path!r} is not an attribute path: write map members as a.b and list "
                "elements as a[0] (a name, then indexes in brackets)"
            )
        steps.append((match[1], match[2]))
    return steps


def _walk(cls: type, path: str) -> tuple[list[tuple[str, str]], object | None]:
    """The stored steps of a field path of ``cls``'s items, and the declared type it reaches.

    Field names become the attribute names they are stored under; map keys and steps below a
    type dynorm cannot follow are kept as written. The type is None where it is not known.
    ExpressionError for a name no field of an attrs class maps, or a key-only field.
    """
    steps = []
    tp: object = cls
    for name, indexes in path_steps(path):
        tp = _optional_inner(tp) or tp
        klass = _attrs_class(tp)
        if klass is not None:
            found = [f for f in resolved_fields(klass) if f.name == name]
            if not found:
                raise _unknown_field(klass, name, path)
            if is_key_only(found[0]):
                raise ExpressionError(
                    f"{klass.__name__}.{name} is kept only inside key attributes "
                    "(dynorm.field(key_only=True)), so no condition, filter or update can name "
                    "it; address items by it through their key instead"
                )
            steps.append((stored_name(found[0]), indexes))
            tp = found[0].type
        else:
            steps.append((name, indexes))
            tp = _element(tp, 1) if _is_map(tp) else Any if tp is Any else None
        for index in re.findall(r"\[(\d+)\]", indexes):
            tp = _optional_inner(tp) or tp
            items = _tuple_items(tp)
            if items is not None and int(index) < len(items):
                tp = items[int(index)]
            elif _is_list(tp):
                tp = _element(tp)
            elif tp is not Any:
                tp = None
    return steps, tp


def _unknown_field(cls: type, name: str, path: str) -> ExpressionError:
    names = [f.name for f in attrs.fields(cls)]
    hint = did_you_mean(name, names)
    where = "" if path == name else f" in {path!r}"
    return ExpressionError(
        f"{cls.__name__} has no field {name!r}{where}{hint}; name fields, not stored attribute "
        f"names: {', '.join(names)}"
    )


def _path_type(cls: type, path: str) -> object | None:
    """The declared type at a document path of ``cls``'s items, or None if it is not known."""
    try:
        return _walk(cls, path)[1]
    except ExpressionError:
        return None


def _path_encoder(cls: type) -> Callable[[str], Callable[[Any], AttributeValue]]:
    # Bounded: map keys in paths (``scores.<user id>``) may be as many as the users.
    @functools.lru_cache(maxsize=512)
    def encode_path(path: str) -> Callable[[Any], AttributeValue]:
        tp = _path_type(cls, path)
        where = f"{cls.__name__}.{path}"
        hook = _named(
            encode_any if tp is None else unstructure_hook(hooks, tp),
            where,
            "Any" if tp is None else tp,
        )
        room = MAX_DEPTH - path.count(".") - path.count("[")

        def encode_checked(value: Any) -> AttributeValue:
            av = hook(value)
            check_value(av, where, room)  # a whole item is checked as one; a value alone here
            return av

        return encode_checked

    return encode_path


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
    cls: type, *, epoch: Collection[str] = (), keys: Collection[KeyFields] = ()
) -> ModelCodec:
    """The codec of an attrs class; fails early on field types DynamoDB cannot hold.

    ``epoch`` names datetime fields stored as epoch seconds (a number) instead of ISO text.
    ``keys`` are the model's key attributes with the fields they hold: the decoder reads each
    key-only field (``dynorm.field(key_only=True)``) out of the first that holds it. Its
    functions are generated on first use (see ``ModelCodec``).
    """
    return ModelCodec(cls, epoch=epoch, keys=keys)


def _generated_encoder(
    cls: type,
    epoch_encode: Mapping[str, Callable[[Any], AttributeValue]],
    key_only: Collection[str],
    sets: Collection[str],
) -> Callable[[Any], Item]:
    """The item encoder written for ``cls``: the walk's work inline (see ``_encoders``)."""
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


def _attribute_steps(cls: type, path: str) -> list[tuple[str, str]]:
    return _walk(cls, path)[0]


def _field_decoder(tp: object) -> Callable[[AttributeValue], Any]:
    hook = hooks.get_structure_hook(tp)
    return lambda av: hook(av, tp)


def _with_fields(
    encode_path: Callable[[str], Callable[[Any], AttributeValue]],
    encode_field: Mapping[str, Callable[[Any], AttributeValue]],
    names: Collection[str],
) -> Callable[[str], Callable[[Any], AttributeValue]]:
    """``encode_path``, except that the whole fields ``names`` encode with their own hooks."""
    if not names:
        return encode_path
    return lambda path: encode_field[path] if path in names else encode_path(path)
