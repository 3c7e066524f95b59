"""Generated decoders: one Python function per attrs class, from an item straight to an instance.

Turning a page of items into objects is dynorm's hot loop. cattrs already generates a function
per class, but it calls one hook per field; these functions write the default hooks' work inline
(``o["name"]["S"]``, ``int(o["qty"]["N"])``, a list comprehension for ``list[str]``) and call the
nested classes' own generated functions, so most fields cost a dict lookup or two. A type without
an inline form, or whose hook a user registered on ``dynorm.converter``, is decoded by its cattrs
hook as before: the converter stays the single source of truth.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from dynorm.core.fields import stored_name
from dynorm.core.keys import KeyFields
from dynorm.core.keys import unescape as keys_unescape

from .generate import FieldValue, Namespace, instance_call
from .hooks import HookSource
from .typeforms import resolved_fields

__all__ = [
    "LIST_HOOK_MARK",
    "NESTED_HOOK_MARK",
    "WIRE_CONVERTERS",
    "WIRE_HOOK_MARK",
    "DecoderSpec",
    "Inline",
    "SourceBuilder",
    "VersionGate",
    "generate_decoder",
    "key_texts",
    "key_value",
]

#: Set on the structure hooks dynorm makes for nested attrs classes (and for lists), so the
#: generated code may inline them; a hook a user registers instead carries no such mark.
NESTED_HOOK_MARK = "__dynorm_nested__"
LIST_HOOK_MARK = "__dynorm_list__"
#: Set on dynorm's own Optional, set and dict structure hooks (to the kind of hook), so wire
#: decoding (``dynorm.wire.structs``) may give the values typed structures.
WIRE_HOOK_MARK = "__dynorm_wire__"
#: The class attribute of wire items (``dynorm.wire.structs``): model class -> its converter.
WIRE_CONVERTERS = "__dynorm_converters__"

#: type -> (the default hook, an expression template doing its work on ``{v}``).
Inline = Mapping[type, tuple[object, str]]

AttributeValue = dict[str, Any]


class SourceBuilder(Namespace):
    """Writes the source decoding field types: inline, through a nested decoder, or a hook."""

    def __init__(
        self,
        hooks: HookSource,
        inline: Inline,
        helpers: Mapping[str, object],
        within: frozenset[type] = frozenset(),
    ) -> None:
        super().__init__(helpers)
        self.hooks = hooks
        self.inline = inline
        self.helpers = helpers
        #: The classes whose decoders are being written: one holding itself is left to its hook.
        self.within = within

    def expression(self, tp: Any, value: str) -> str:
        """Python source that decodes the AttributeValue ``value`` as type ``tp``."""
        hook = self.hooks.get_structure_hook(tp)
        inline = self.inline.get(tp)
        if inline is not None and hook is inline[0]:
            return inline[1].format(v=value)
        if getattr(hook, NESTED_HOOK_MARK, False) and tp not in self.within:
            decoder = generate_decoder(
                tp, self.hooks, inline=self.inline, helpers=self.helpers, within=self.within
            )
            return f'{self.bind("dec", decoder)}({value}["M"])'
        if getattr(hook, LIST_HOOK_MARK, False):
            element = (typing.get_args(tp) or (Any,))[0]
            var = self.local("e")
            return f'[{self.expression(element, var)} for {var} in {value}["L"]]'
        return f"{self.bind('hook', hook)}({value}, {self.bind('type', tp)})"


class VersionGate(msgspec.Struct, frozen=True, eq=False):
    """What a versioned model's decoder checks first (see ``dynorm.core.upgrades``).

    ``attribute`` holds the version that wrote the item, ``current`` is the model's; an item at
    another version goes through ``upgrade`` (an item -> the item at ``current``) and is decoded
    then. ``current`` 1 also takes an item without the attribute as current.
    """

    attribute: str
    current: int
    upgrade: Callable[[Mapping[str, AttributeValue]], Mapping[str, AttributeValue]]

    def line(self, builder: Namespace) -> str:
        """The decoder's first check: one dict lookup and a compare for a current item."""
        stored = builder.bind("version", {"N": str(self.current)})
        upgrade = builder.bind("upgrade", self.upgrade)
        found = (
            f"o.get({self.attribute!r}, {stored})"
            if self.current == 1
            else f"o.get({self.attribute!r})"
        )
        # The upgraded item holds the current version: decoded by this same function.
        return f"if {found} != {stored}: return decode({upgrade}(o))"


class DecoderSpec(msgspec.Struct, frozen=True, eq=False):
    """How a model's decoder was generated: what wire decoding mirrors (see generate_decoder)."""

    cls: type
    hooks: HookSource
    inline: Inline
    helpers: Mapping[str, object]
    empty_when_missing: Mapping[str, type] = msgspec.field(default_factory=dict)
    overrides: Mapping[str, Callable[[AttributeValue], Any]] = msgspec.field(default_factory=dict)
    from_keys: Mapping[str, KeyFields] = msgspec.field(default_factory=dict)
    #: The schema version check: (attribute, the current version, upgrade) or None.
    gate: VersionGate | None = None


def generate_decoder(
    cls: type,
    hooks: HookSource,
    *,
    inline: Inline,
    helpers: Mapping[str, object],
    empty_when_missing: Mapping[str, type] | None = None,
    overrides: Mapping[str, Callable[[AttributeValue], Any]] | None = None,
    from_keys: Mapping[str, KeyFields] | None = None,
    wire: bool = False,
    within: frozenset[type] = frozenset(),
    gate: VersionGate | None = None,
) -> Callable[[Mapping[str, AttributeValue]], Any]:
    """The decoder of ``cls``: ``decoder(item) -> instance``; KeyError when a field is missing.

    ``inline`` gives the expression templates, ``helpers`` the names they use.
    ``empty_when_missing`` names fields (with the collection type to build) that read back
    empty when absent from the item: dynorm leaves empty sets out of stored items.
    ``overrides`` decode the named fields with a function of their own (a time to live stored
    as epoch seconds), instead of by their type.
    ``from_keys`` names fields kept only inside a key attribute, read out of its text: each
    attribute is parsed once per item; a key that does not fit raises ValueError.
    ``wire``: the decoder also takes wire items (``dynorm.wire.structs``), handing each to the
    converter its class holds for ``cls``. ``within``: the classes whose decoders are being
    written around this one (a class that holds itself is decoded by its hook there).
    ``gate``: a versioned model's schema version check, first (wire items are checked when
    their body is parsed, ``dynorm.wire.structs``).
    """
    empty_when_missing = empty_when_missing or {}
    overrides = overrides or {}
    builder = SourceBuilder(hooks, inline, helpers, within | {cls})
    builder.namespace["__cls"] = cls
    lines, keys = key_texts(builder, from_keys or {})
    values = []
    for f in resolved_fields(cls):  # Box[int]: value is an int, not V
        if not f.init:
            continue
        stored = stored_name(f)
        empty = None
        if f.name in keys:
            key, var = keys[f.name]
            present = key_value(builder, key, f.name, var)
            found = None if key.always else f"{var} is not None"
        else:
            if f.name in overrides:
                present = f"{builder.bind('field', overrides[f.name])}(o[{stored!r}])"
            else:
                present = builder.expression(f.type, f"o[{stored!r}]")
            found = f"{stored!r} in o"
            empty = empty_when_missing.get(f.name)
        values.append(FieldValue(f, present, found, empty))
    if gate is not None:
        lines.insert(0, gate.line(builder))
    if wire:
        # A typed wire item rather than a dict: its own class converts it (one test an item).
        builder.namespace["__dict"] = dict
        lines.insert(0, f"if o.__class__ is not __dict: return o.{WIRE_CONVERTERS}[__cls](o)")
    body = "".join(f"    {line}\n" for line in lines)
    call = instance_call(builder, "__cls", values)
    source = f"def decode(o):\n{body}    return {call}\n"
    decoder: Callable[[Mapping[str, AttributeValue]], Any] = builder.define(
        "decode", source, what="decoder", owner=cls
    )
    return decoder


def _item_access(attr: str) -> tuple[str, str]:
    return f"o[{attr!r}]", f"o.get({attr!r})"


def key_texts(
    builder: SourceBuilder,
    from_keys: Mapping[str, KeyFields],
    access: Callable[[str], tuple[str, str]] = _item_access,
) -> tuple[list[str], dict[str, tuple[KeyFields, str]]]:
    """Statements parsing each key attribute once, and field -> (its source, the variable).

    The variable holds the key's field texts (a tuple), or for a template whose one field
    ends it (``USER#{username}``) that field's text itself, found without a regex.
    ``access(attribute)`` gives the expressions of the attribute's AttributeValue: one that
    requires it, and one that is None when the item lacks it.
    """
    lines: list[str] = []
    variables: dict[str, str] = {}
    held: dict[str, tuple[KeyFields, str]] = {}
    for name, source in from_keys.items():
        attr = source.attribute
        var = variables.get(attr)
        if var is None:
            var = variables[attr] = f"k{len(variables)}"
            parse = _parse_lines(builder, source, var)
            required, optional = access(attr)
            if source.always:
                lines += [f"{var} = {required}[{source.kind!r}]", *parse]
            else:
                # An index key is absent while a field in it is None (a sparse index).
                lines += [f"{var} = {optional}", f"if {var} is not None:"]
                lines += [f"    {var} = {var}[{source.kind!r}]", *(f"    {line}" for line in parse)]
        held[name] = (source, var)
    return lines, held


def _parse_lines(builder: SourceBuilder, source: KeyFields, var: str) -> list[str]:
    """Statements turning the key text in ``var`` into its field text(s); ValueError if unfit."""
    shape = source.template.tail_only_shape()
    if shape is None:
        return [f"{var} = {builder.bind('texts', source.template.texts)}({var})"]
    prefix, delimiter, count = shape
    unfit = builder.bind("unfit", source.template.texts)  # raises ValueError, saying why
    unescape = builder.bind("unescape", functools.partial(keys_unescape, delimiter=delimiter))
    return [
        (
            f"if not {var}.startswith({prefix!r}) or {var}.count({delimiter!r}) != {count}: "
            f"{unfit}({var})"
        ),
        f"{var} = {var}[{len(prefix)}:]",
        f"if '%' in {var}: {var} = {unescape}({var})",
    ]


def key_value(builder: SourceBuilder, source: KeyFields, name: str, var: str) -> str:
    """The expression of field ``name``'s value from its key's text(s) in ``var``."""
    single = source.template.tail_only_shape() is not None
    text = var if single else f"{var}[{source.template.fields.index(name)}]"
    parser = source.parsers[name]
    return text if parser is str else f"{builder.bind('key', parser)}({text})"
