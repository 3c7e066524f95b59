"""Generated encoders: one Python function per attrs class, from an instance straight to an item.

The mirror of ``decoders``. Writing an item through cattrs costs a generated function that
calls one hook per field, each a Python call doing a type check and building a dict. These
functions write the default hooks' work inline for values of the exact declared type
(``{"S": v} if type(v) is str else <hook>(v)``), turn lists and maps into comprehensions, and
call the nested classes' own generated functions. Anything else — a subclass, a wrong value,
a type without an inline form, a hook a user registered on ``dynorm.converter`` — goes through
the converter's hook as before, so the converter stays the single source of truth.

The generated code never explains a refusal: it only raises. The codec catches that and runs
the reference path (the cattrs walk), which raises the error naming the field and the path
inside it. Bad values are rare; good ones never pay for the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

import attrs
import msgspec

from dynorm.core.fields import stored_name

from .generate import Namespace
from .typeforms import resolved_fields

__all__ = [
    "ENCODE_LIST_MARK",
    "ENCODE_MAP_MARK",
    "ENCODE_NESTED_MARK",
    "ENCODE_OPTIONAL_MARK",
    "InlineEncode",
    "generate_encoder",
    "generate_nested_encoder",
]

#: Set on the unstructure hooks dynorm's factories make, holding the type the generated code
#: needs to do the hook's work inline: the element type of a list, the value type of a map,
#: the inner type of ``X | None``, the class of a nested attrs value. A hook a user registers
#: instead carries no mark, and is called as it is.
ENCODE_LIST_MARK: Final = "__dynorm_encode_list__"
ENCODE_MAP_MARK: Final = "__dynorm_encode_map__"
ENCODE_OPTIONAL_MARK: Final = "__dynorm_encode_optional__"
ENCODE_NESTED_MARK: Final = "__dynorm_encode_nested__"

#: type -> (its default hook, a guard on ``{v}``, the expression doing the hook's work when the
#: guard holds). Where the guard fails the hook is called, accepting or refusing the value.
InlineEncode = Mapping[object, tuple[object, str, str]]

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]
HookOf = Callable[[object], Callable[[Any], AttributeValue]]

_MISSING: Final = object()


class _Builder(Namespace):
    """Writes the source of encoders; nested classes get functions of their own, made once."""

    def __init__(
        self,
        hook_of: HookOf,
        inline: InlineEncode,
        helpers: Mapping[str, object],
        classes: dict[type, Callable[[Any], Item] | None] | None = None,
    ) -> None:
        super().__init__(helpers)
        self.hook_of = hook_of
        self.inline = inline
        self.helpers = helpers
        #: Nested classes encoded so far, shared by the builders of one model. None while a
        #: class's function is being written: a class holding itself is left to its hook there.
        self.classes = {} if classes is None else classes

    def expression(self, tp: object, value: str) -> str:
        """Python source that encodes ``value`` (a plain name) as declared type ``tp``."""
        hook = self.hook_of(tp)
        call = f"{self.bind('hook', hook)}({value})"
        inline = _inline_form(self.inline, tp)
        if inline is not None and hook is inline[0]:
            guard, fast = inline[1].format(v=value), inline[2].format(v=value)
            return f"({fast} if {guard} else {call})"
        element = getattr(hook, ENCODE_LIST_MARK, _MISSING)
        if element is not _MISSING:
            var = self.local("e")
            fast = f'{{"L": [{self.expression(element, var)} for {var} in {value}]}}'
            return f"({fast} if type({value}) is list else {call})"
        element = getattr(hook, ENCODE_MAP_MARK, _MISSING)
        if element is not _MISSING:
            var = self.local("x")
            pairs = f"k: {self.expression(element, var)} for k, {var} in {value}.items()"
            # Keys that are not exactly str go to the hook, which refuses or converts them.
            guard = f"type({value}) is dict and all([type(k) is str for k in {value}])"
            return f'({{"M": {{{pairs}}}}} if {guard} else {call})'
        inner = getattr(hook, ENCODE_OPTIONAL_MARK, _MISSING)
        if inner is not _MISSING:
            return f"(__NULL if {value} is None else {self.expression(inner, value)})"
        nested = getattr(hook, ENCODE_NESTED_MARK, None)
        if isinstance(nested, type):
            encoder = self.nested(nested)
            if encoder is not None:
                fast = f'{{"M": {self.bind("encode", encoder)}({value})}}'
                return f"({fast} if type({value}) is {self.bind('cls', nested)} else {call})"
        return call

    def nested(self, cls: type) -> Callable[[Any], Item] | None:
        """The generated function of a nested class (None while it is being written)."""
        if cls not in self.classes:
            self.classes[cls] = None
            builder = _Builder(self.hook_of, self.inline, self.helpers, self.classes)
            fields = [
                _Field(f.name, stored_name(f), "store", builder.expression(f.type, "v"))
                for f in _stored_fields(cls)
            ]
            self.classes[cls] = builder.compile(cls, fields)
        return self.classes[cls]

    def compile(self, cls: type, fields: list[_Field]) -> Callable[[Any], Item]:
        """``def encode(o)``: each field read once into ``v``, encoded, stored in ``i``."""
        lines = ["i = {}"]
        for f in fields:
            lines.append(f"v = o.{f.name}")
            if f.kind == "store":
                lines.append(f"i[{f.stored!r}] = {f.expression}")
            elif f.kind == "unless_null":
                # An empty set encodes as NULL, and is left out of the item (see build_codec).
                lines += [f"v = {f.expression}", f"if v is not __NULL: i[{f.stored!r}] = v"]
            else:  # "check": refused if of the wrong type, but not stored (a key holds it)
                lines.append(f.expression)
        body = "".join(f"    {line}\n" for line in [*lines, "return i"])
        encoder: Callable[[Any], Item] = self.define(
            "encode", f"def encode(o):\n{body}", what="encoder", owner=cls
        )
        return encoder


class _Field(msgspec.Struct, frozen=True):
    """One field of a generated encoder: read ``o.<name>`` into ``v``, then ``kind``."""

    name: str
    stored: str
    kind: str  # "store", "unless_null" or "check"
    expression: str


def _stored_fields(cls: type) -> list[attrs.Attribute[Any]]:
    # As cattrs does: a field the class does not take (init=False) is not stored.
    return [f for f in resolved_fields(cls) if f.init]  # Box[int]: value is an int


def _inline_form(inline: InlineEncode, tp: object) -> tuple[object, str, str] | None:
    try:
        return inline.get(tp)
    except TypeError:  # an unhashable annotation: no inline form
        return None


def generate_encoder(
    cls: type,
    hook_of: HookOf,
    *,
    inline: InlineEncode,
    helpers: Mapping[str, object],
    overrides: Mapping[str, Callable[[Any], AttributeValue]] | None = None,
    omit: Collection[str] = (),
    drop_null: Collection[str] = (),
) -> Callable[[Any], Item]:
    """The encoder of ``cls``: ``encoder(instance) -> item``, keys in field order.

    ``hook_of(tp)`` gives the converter's hook for a type; ``inline`` the forms written
    inline, and ``helpers`` the names they use (``__NULL`` among them: the value of None).
    ``overrides`` encode the named fields with a function of their own (a time to live).
    ``omit`` fields are encoded (so a wrong value is refused) but not stored: a key holds them.
    ``drop_null`` fields are left out when they encode as ``__NULL`` (empty sets).
    Raises whatever a hook raises, naming nothing: callers explain through the reference path.
    """
    builder = _Builder(hook_of, inline, helpers)
    overrides = overrides or {}
    fields = []
    for f in _stored_fields(cls):
        if f.name in overrides:
            expression = f"{builder.bind('field', overrides[f.name])}(v)"
        else:
            expression = builder.expression(f.type, "v")
        kind = "check" if f.name in omit else "unless_null" if f.name in drop_null else "store"
        fields.append(_Field(f.name, stored_name(f), kind, expression))
    return builder.compile(cls, fields)


def generate_nested_encoder(
    cls: type, hook_of: HookOf, *, inline: InlineEncode, helpers: Mapping[str, object]
) -> Callable[[Any], Item] | None:
    """The function writing an instance of ``cls`` as a map's members (``{"name": {"S": ..}}``).

    None when the converter's hook for ``cls`` is a user's own (then only that hook knows how).
    The function checks no type at its top: callers give it instances of ``cls`` exactly.
    """
    if not isinstance(getattr(hook_of(cls), ENCODE_NESTED_MARK, None), type):
        return None
    return _Builder(hook_of, inline, helpers).nested(cls)
