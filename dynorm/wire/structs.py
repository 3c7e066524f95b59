"""Wire decoding: a response body parsed straight into typed structures, then into models.

``orjson.loads`` turns a page into a tree of generic dicts (about two dozen per item) that the
generated decoders then walk; building that tree was most of a page's decoding cost. Here, for
each read scope (the table or one index: the models its pages can hold), msgspec ``Struct``
types mirror the wire format, keyed by stored attribute names (``{"S": ...}`` is a struct with
one field ``S``), and generated converters build each model's instance from them, doing what
the generated decoders do with dicts: same stored names, key-only fields parsed out of key
attributes, defaults, empty sets, user hooks.

What has no typed form stays a generic AttributeValue dict (decoded by the existing expressions
and hooks): key attributes and the type attribute (everything that tells models apart, pages
and resumes reads them as dicts), Any-typed fields, types with a hook of the user's, tuples,
time-to-live fields, and any attribute two models of the scope store with different types.

A wire item is also a read-only mapping of stored names to AttributeValue dicts (converted on
access), so every reader of raw items (classifiers, cursors, ``on_page``, the careful decoder,
follow-up reads) works on it unchanged; only the generated decoders take the fast way.

A body that does not fit the structures (an item another tool wrote with other types, say)
raises msgspec's ValidationError, and that whole body is then parsed with ``orjson.loads``, as
without wire decoding.
"""

from __future__ import annotations

import collections.abc
import decimal
import functools
import typing
from abc import ABCMeta
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final, cast

import attrs
import msgspec
import orjson

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.codec.decoders import (
    LIST_HOOK_MARK,
    NESTED_HOOK_MARK,
    WIRE_CONVERTERS,
    WIRE_HOOK_MARK,
    DecoderSpec,
    SourceBuilder,
    key_texts,
    key_value,
)
from dynorm.core.codec.enums import enum_texts
from dynorm.core.codec.generate import FieldValue, instance_call
from dynorm.core.codec.rules import INLINE_STRUCTURE, TEXT_STRUCTURE
from dynorm.core.codec.scalars import is_enum_hook
from dynorm.core.codec.typeforms import resolved_fields, without_none
from dynorm.core.fields import stored_name
from dynorm.core.requests import Parse

__all__ = ["QUICK_MARK", "Wire", "WireItem", "build_wire"]

#: Parses a successful response body into the response (``orjson.loads``'s result, with typed
#: items where they fit).

#: An attribute decoded as a generic AttributeValue dict.
_GENERIC: Final[Any] = dict[str, Any]


class WireItem(msgspec.Struct, gc=False, omit_defaults=True):
    """An item as typed wire structures; also a read-only mapping of stored names to dicts.

    Subclasses (one per read scope) declare a field per stored attribute (None when absent).
    """

    #: Stored attribute name -> the struct field holding it.
    __dynorm_attributes__: ClassVar[Mapping[str, str]] = {}
    #: Model class -> its converter from this item type (what the decoders call).
    __dynorm_converters__: ClassVar[dict[type, Callable[[Any], Any]]] = {}

    def _value(self, name: str) -> Any:
        field = self.__dynorm_attributes__.get(name)
        return None if field is None else getattr(self, field)

    def get(self, name: str, default: Any = None) -> Any:
        """The AttributeValue (a dict) stored under ``name``, else ``default``."""
        value = self._value(name)
        if value is None:
            return default
        return value if value.__class__ is dict else msgspec.to_builtins(value)

    def __getitem__(self, name: str) -> AttributeValue:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        found: AttributeValue = value
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._value(name) is not None

    def keys(self) -> list[str]:
        """The stored names the item holds."""
        return [n for n, f in self.__dynorm_attributes__.items() if getattr(self, f) is not None]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def items(self) -> list[tuple[str, AttributeValue]]:
        """(stored name, AttributeValue) pairs."""
        return [(name, self[name]) for name in self.keys()]

    def values(self) -> list[AttributeValue]:
        """The AttributeValues."""
        return [self[name] for name in self.keys()]

    def to_item(self) -> dict[str, AttributeValue]:
        """The item as ``orjson.loads`` gives it (attributes no field maps were not kept)."""
        item: dict[str, AttributeValue] = msgspec.to_builtins(self)
        return item


cast("ABCMeta", collections.abc.Mapping).register(WireItem)


# -- AttributeValue structures ---------------------------------------------------------------


class _Form(msgspec.Struct, frozen=True, eq=False):
    """The typed wire form of a field type, and how to turn it into the field's value."""

    #: (tag, type, required) of the AttributeValue struct's fields.
    fields: tuple[tuple[str, Any, bool], ...]
    #: Whether the value may be ``{"NULL": true}`` (then the struct has a NULL field).
    nullable: bool
    #: Source of the field's value, given the source of the struct value.
    render: Callable[[str], str]

    @property
    def type(self) -> Any:
        return _attribute_value(self.fields, nullable=self.nullable)


_values: dict[tuple[Any, ...], type[msgspec.Struct]] = {}


def _attribute_value(fields: tuple[tuple[str, Any, bool], ...], *, nullable: bool) -> Any:
    """The struct of an AttributeValue with these tags (unknown tags are a ValidationError)."""
    key = (fields, nullable)
    found = _values.get(key)
    if found is None:
        spec: list[Any] = []
        for tag, tp, required in fields:
            if required and not nullable:
                spec.append((tag, tp))
            else:
                spec.append((tag, tp | None, None))
        if nullable:
            spec.append(("NULL", bool, False))
        name = "Wire" + "".join(tag for tag, _, _ in fields) + ("OrNULL" if nullable else "")
        found = _values[key] = msgspec.defstruct(
            name,
            spec,
            module=__name__,
            forbid_unknown_fields=True,
            omit_defaults=True,
            gc=False,
        )
    return found


def _scalar(tag: str, tp: Any, render: Callable[[str], str]) -> _Form:
    return _Form(((tag, tp, True),), nullable=False, render=render)


class _Generator:
    """Builds forms and converters for one read scope, all in one namespace."""

    def __init__(self, spec: DecoderSpec) -> None:
        self.hooks = spec.hooks
        self.builder = SourceBuilder(spec.hooks, spec.inline, spec.helpers)
        self.bind = self.builder.bind
        self._nested: dict[type, _Form | None] = {}
        #: Type -> its form: the models of a scope share their field types, and one form
        #: (its bound names included) serves every field of its type.
        self._forms: dict[Any, _Form | None] = {}

    def var(self) -> str:
        return self.builder.local("w")

    def value(self, tp: Any, form: _Form | None, source: str) -> str:
        """Source of a field's value from ``source``: its struct (``form``) or a generic dict."""
        return self.builder.expression(tp, source) if form is None else form.render(source)

    def element(self, tp: Any) -> tuple[Any, Callable[[str], str]]:
        """The wire type of a container's element, and its conversion."""
        form = self.form(tp)
        if form is None:
            return _GENERIC, lambda v: self.builder.expression(tp, v)
        return form.type, form.render

    def form(self, tp: Any) -> _Form | None:
        """The typed wire form of ``tp`` while dynorm's own hook decodes it, else None."""
        try:
            return self._forms[tp]
        except KeyError:
            made = self._forms[tp] = self._form(tp)
            return made
        except TypeError:  # an unhashable annotation
            return self._form(tp)

    def _form(self, tp: Any) -> _Form | None:
        hook = self.hooks.get_structure_hook(tp)
        inline = INLINE_STRUCTURE.get(tp)
        if inline is not None and hook is inline[0]:
            return _SCALARS[tp](self)
        text = TEXT_STRUCTURE.get(tp)
        if text is not None and hook is text[0]:
            parse = self.bind("parse", text[1])
            return _scalar("S", str, lambda v: f"{parse}({v}.S)")
        if is_enum_hook(hook, tp):
            stored = enum_texts(tp)
            if stored is None:
                return None  # members of several types, or stored as BOOL, B, L, M: by the hook
            tag, members = stored
            texts = self.bind("enum", members)
            return _scalar(tag, str, lambda v: f"{texts}[{v}.{tag}]")
        kind = getattr(hook, WIRE_HOOK_MARK, None)
        if kind == "optional":
            inner = self.form(without_none(tp))
            if inner is None:
                return None
            return _Form(
                inner.fields,
                nullable=True,
                render=lambda v: f"(None if {v}.NULL else {inner.render(v)})",
            )
        if kind == "set":
            return self._set(tp)
        if kind == "map":
            args = typing.get_args(tp)
            value_type, convert = self.element(args[1] if len(args) == 2 else Any)
            k, x = self.var(), self.var()
            return _scalar(
                "M",
                dict[str, value_type],  # type: ignore[valid-type]
                lambda v: f"{{{k}: {convert(x)} for {k}, {x} in {v}.M.items()}}",
            )
        if getattr(hook, LIST_HOOK_MARK, False):
            element_type, convert = self.element((typing.get_args(tp) or (Any,))[0])
            e = self.var()
            return _scalar(
                "L",
                list[element_type],  # type: ignore[valid-type]
                lambda v: f"[{convert(e)} for {e} in {v}.L]",
            )
        if getattr(hook, NESTED_HOOK_MARK, False):
            return self._class(tp)
        return None

    def _set(self, tp: Any) -> _Form | None:
        element = (typing.get_args(tp) or (Any,))[0]
        make = self.bind("make", frozenset if typing.get_origin(tp) is frozenset else set)
        wire_type: type
        if element is str:
            tag, wire_type, convert = "SS", str, ""
        elif element is bytes:
            tag, wire_type, convert = "BS", bytes, ""
        elif element in (int, float, decimal.Decimal):
            tag, wire_type, convert = "NS", str, self.bind("number", element)
        else:
            return None
        fields = ((tag, list[wire_type], True),)  # type: ignore[valid-type]

        def render(v: str) -> str:
            members = f"{v}.{tag}" if not convert else f"map({convert}, {v}.{tag})"
            return f"({make}() if {v}.NULL else {make}({members}))"

        return _Form(fields, nullable=True, render=render)

    def _class(self, cls: type) -> _Form | None:
        """A nested attrs class: a struct of its fields, and a generated function building it."""
        if cls in self._nested:
            return self._nested[cls]  # None while being built: a recursive class stays generic
        self._nested[cls] = None
        fields = [f for f in resolved_fields(cls) if f.init]
        forms = {f.name: self.form(f.type) for f in fields}
        names = {f.name: f"f{i}" for i, f in enumerate(fields)}
        spec: list[Any] = []
        for f in fields:
            form = forms[f.name]
            tp = _GENERIC if form is None else form.type
            if f.default is attrs.NOTHING:
                spec.append((names[f.name], tp, msgspec.field(name=stored_name(f))))
            else:
                spec.append(
                    (
                        names[f.name],
                        tp | None,
                        msgspec.field(name=stored_name(f), default=None),
                    )
                )
        struct = msgspec.defstruct(
            f"Wire{cls.__name__}", spec, module=__name__, omit_defaults=True, gc=False
        )
        function = self.bind("nested", None)
        values = [
            (f, self.value(f.type, forms[f.name], f"m.{names[f.name]}"), f"m.{names[f.name]}")
            for f in fields
        ]
        self.compile(function, cls=cls, arg="m", values=values, lines=[])
        form = _scalar("M", struct, lambda v: f"{function}({v}.M)")
        self._nested[cls] = form
        return form

    def compile(
        self,
        name: str,
        *,
        cls: type,
        arg: str,
        values: Sequence[tuple[attrs.Attribute[Any], str, str | None]],
        lines: list[str],
        empty_when_missing: Mapping[str, type] | None = None,
    ) -> None:
        """Define ``name(arg) -> cls(...)`` in the namespace.

        ``values`` are (field, source of its value, source of its stored value or None when
        every item holds it); a field whose stored value is None takes its default.
        """
        empty_when_missing = empty_when_missing or {}
        call = instance_call(
            self.builder,
            self.bind("cls", cls),
            [
                FieldValue(
                    f,
                    present,
                    None if stored is None else f"{stored} is not None",
                    empty_when_missing.get(f.name),
                )
                for f, present, stored in values
            ],
        )
        body = "".join(f"    {line}\n" for line in lines)
        source = f"def {name}({arg}):\n{body}    return {call}\n"
        self.builder.define(name, source, what="wire", owner=cls)


def _decimal(gen: _Generator) -> _Form:
    name = gen.bind("Decimal", decimal.Decimal)
    return _scalar("N", str, lambda v: f"{name}({v}.N)")


_SCALARS: Final[Mapping[type, Callable[[_Generator], _Form]]] = {
    str: lambda _: _scalar("S", str, lambda v: f"{v}.S"),
    bool: lambda _: _scalar("BOOL", bool, lambda v: f"{v}.BOOL"),
    int: lambda _: _scalar("N", str, lambda v: f"int({v}.N)"),
    float: lambda _: _scalar("N", str, lambda v: f"float({v}.N)"),
    decimal.Decimal: _decimal,
    # msgspec reads the base64 text into bytes, as the dict path's hook does.
    bytes: lambda _: _scalar("B", bytes, lambda v: f"{v}.B"),
}


# -- one read scope ------------------------------------------------------------------------------


#: The fields of each read's output, besides its items (kept as generic values).
_OUTPUT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "Query": ("Count", "ScannedCount", "LastEvaluatedKey", "ConsumedCapacity"),
    "Scan": ("Count", "ScannedCount", "LastEvaluatedKey", "ConsumedCapacity"),
    "GetItem": ("ConsumedCapacity",),
    "BatchGetItem": ("UnprocessedKeys", "ConsumedCapacity"),
    "TransactGetItems": ("ConsumedCapacity",),
}


class Wire(msgspec.Struct, frozen=True, eq=False):
    """The wire decoding of one read scope: its item struct, converters and body decoders."""

    item: type[WireItem]
    converters: Mapping[type, Callable[[Any], Any]]
    #: Whether an item needs what its struct does not keep (None: none ever does).
    stale: Callable[[Any], bool] | None = None
    #: Operation -> its body parser, made on first use.
    _parsers: dict[str, Parse] = msgspec.field(default_factory=dict)

    def parser(self, operation: str) -> Parse:
        """The body parser for a response of ``operation`` (Query, Scan, GetItem, ...)."""
        found = self._parsers.get(operation)
        if found is None:
            found = self._parsers[operation] = _body_parser(self.item, operation, self.stale)
        return found


#: On a stale test: (attribute, value) that an item holding it is current by (see _stale_in).
QUICK_MARK: Final = "__dynorm_quick__"


def _stale_in(
    response: Mapping[str, Any], stale: Callable[[Any], bool], field: str | None, value: Any
) -> bool:
    """Whether any item of a parsed response is ``stale``.

    ``field``: the struct field holding an attribute whose ``value`` makes an item current;
    read first, so a current item costs one attribute read and a compare.
    """
    items: list[Any] = list(response.get("Items") or ())
    if "Item" in response:
        items.append(response["Item"])
    responses = response.get("Responses")
    if isinstance(responses, dict):
        items += [i for page in responses.values() for i in page]
    elif isinstance(responses, list):
        items += [got["Item"] for got in responses if "Item" in got]
    if field is None:
        return any(stale(i) for i in items)
    return any(getattr(i, field) != value and stale(i) for i in items)


def _body_parser(
    item: type[WireItem], operation: str, stale: Callable[[Any], bool] | None = None
) -> Parse:
    unset: Any = msgspec.UnsetType
    others = _OUTPUT_FIELDS[operation]
    spec: list[Any] = [(name, Any, msgspec.UNSET) for name in others]
    if operation in ("Query", "Scan"):
        spec.append(("Items", list[item] | unset, msgspec.UNSET))  # type: ignore[valid-type]
    elif operation == "GetItem":
        spec.append(("Item", item | unset, msgspec.UNSET))
    elif operation == "BatchGetItem":
        spec.append(("Responses", dict[str, list[item]] | unset, msgspec.UNSET))  # type: ignore[valid-type]
    else:
        got = msgspec.defstruct(
            "WireGot", [("Item", item | unset, msgspec.UNSET)], module=__name__, gc=False
        )
        spec.append(("Responses", list[got] | unset, msgspec.UNSET))  # type: ignore[valid-type]
    output = msgspec.defstruct(f"Wire{operation}Output", spec, module=__name__)
    decoder = msgspec.json.Decoder(output)
    names = tuple(n for n, *_ in spec)
    unset_value = msgspec.UNSET
    transact = operation == "TransactGetItems"
    quick = getattr(stale, QUICK_MARK, None)
    field = None if quick is None else item.__dynorm_attributes__.get(quick[0])
    quick_value = None if quick is None else quick[1]

    def decode(body: bytes) -> dict[str, Any]:
        try:
            out = decoder.decode(body)
        except msgspec.DecodeError:
            # An item that does not fit the structures (or a body that is no JSON object):
            # the whole body the generic way, as without wire decoding.
            parsed: dict[str, Any] = orjson.loads(body)
            return parsed
        response = {}
        for name in names:
            value = getattr(out, name)
            if value is not unset_value:
                response[name] = value
        if transact and "Responses" in response:
            response["Responses"] = [
                {} if got.Item is unset_value else {"Item": got.Item}
                for got in response["Responses"]
            ]
        if stale is not None and _stale_in(response, stale, field, quick_value):
            # An item of an older schema version: its upgrade reads attributes no field maps,
            # which the structures drop. The whole body the generic way.
            return cast("dict[str, Any]", orjson.loads(body))
        return response

    return decode


def build_wire(
    name: str,
    specs: Sequence[DecoderSpec],
    generic: Collection[str],
    stale: Callable[[Any], bool] | None = None,
) -> Wire:
    """The wire decoding of a read scope holding items of ``specs``' models.

    ``generic`` names the attributes kept as AttributeValue dicts (the key attributes and the
    type attribute: classifiers, cursors and page readers read them). ``stale`` tells the items
    of a versioned model stored at another schema version: a body holding one is parsed
    without the structures, since upgrading it reads attributes they do not keep.
    """
    if not specs:
        empty = msgspec.defstruct(f"Wire{name}Item", [], bases=(WireItem,), module=__name__)
        return Wire(cast("type[WireItem]", empty), {})
    gen = _Generator(specs[0])
    attributes: dict[str, list[Any]] = {a: [_GENERIC] for a in generic}
    for spec in specs:
        attributes.update({k.attribute: [_GENERIC] for k in spec.from_keys.values()})
    forms: dict[tuple[type, str], _Form | None] = {}
    for spec in specs:
        for f in attrs.fields(spec.cls):
            if not f.init or f.name in spec.from_keys:
                continue
            form = None if f.name in spec.overrides else gen.form(f.type)
            forms[spec.cls, f.name] = form
            attributes.setdefault(stored_name(f), []).append(_GENERIC if form is None else form)
    # An attribute is typed when every model of the scope stores it as the same wire struct
    # (``id: str`` in each model; ``count: int`` in one and ``Decimal`` in another are both N):
    # each model's converter renders its own form from it.
    typed: dict[str, _Form] = {}
    for attr, wanted in attributes.items():
        first = wanted[0]
        if isinstance(first, _Form) and all(
            isinstance(w, _Form) and w.type is first.type for w in wanted
        ):
            typed[attr] = first
    fields = {attr: f"a{i}" for i, attr in enumerate(attributes)}
    struct_spec = [
        (
            fields[attr],
            (typed[attr].type if attr in typed else _GENERIC) | None,
            msgspec.field(name=attr, default=None),
        )
        for attr in attributes
    ]
    converters: dict[type, Callable[[Any], Any]] = {}
    item = msgspec.defstruct(
        f"Wire{name}Item",
        struct_spec,
        bases=(WireItem,),
        module=__name__,
        omit_defaults=True,
        gc=False,
        namespace={"__dynorm_attributes__": fields, WIRE_CONVERTERS: converters},
    )
    for spec in specs:
        make = functools.partial(_converter, gen, spec, fields, typed, forms)
        converters[spec.cls] = _first_use(spec.cls, make, converters)
    return Wire(cast("type[WireItem]", item), converters, stale)


#: Marks a converter not generated yet (``_first_use``).
PENDING_MARK: Final = "__dynorm_pending__"


def _first_use(
    cls: type,
    make: Callable[[], Callable[[Any], Any]],
    converters: dict[type, Callable[[Any], Any]],
) -> Callable[[Any], Any]:
    """Stands in for ``cls``'s converter (``make()``) until a read first needs it.

    The struct holds every model's attributes (any of them may be on a page), but a converter
    is written only for a model whose items are read: the first call generates it, puts it in
    ``converters`` in this function's place, and converts; later items call it directly.
    """

    def convert_first(o: Any) -> Any:
        made = converters.get(cls)
        if made is None or getattr(made, PENDING_MARK, False):
            made = converters[cls] = make()
        return made(o)

    setattr(convert_first, PENDING_MARK, True)
    return convert_first


def _converter(
    gen: _Generator,
    spec: DecoderSpec,
    fields: Mapping[str, str],
    typed: Mapping[str, _Form],
    forms: Mapping[tuple[type, str], _Form | None],
) -> Callable[[Any], Any]:
    """The converter of ``spec``'s model from the scope's wire item: its decoder's mirror."""

    def access(attr: str) -> tuple[str, str]:
        return f"o.{fields[attr]}", f"o.{fields[attr]}"

    lines, keys = key_texts(gen.builder, spec.from_keys, access)
    values: list[tuple[attrs.Attribute[Any], str, str | None]] = []
    for f in attrs.fields(spec.cls):
        if not f.init:
            continue
        if f.name in keys:
            source, var = keys[f.name]
            present = key_value(gen.builder, source, f.name, var)
            values.append((f, present, None if source.always else var))
            continue
        stored = f"o.{fields[stored_name(f)]}"
        if f.name in spec.overrides:
            present = f"{gen.bind('field', spec.overrides[f.name])}({stored})"
        else:
            form = typed.get(stored_name(f)) and forms[spec.cls, f.name]
            present = gen.value(f.type, form or None, stored)
        values.append((f, present, stored))
    name = gen.bind("convert", None)
    gen.compile(
        name,
        cls=spec.cls,
        arg="o",
        values=values,
        lines=lines,
        empty_when_missing=spec.empty_when_missing,
    )
    converter: Callable[[Any], Any] = gen.builder.namespace[name]
    return converter
