"""Each field type's storage form, in one table: ``RULES``, which hook reads and writes it.

One ``TypeRule`` a kind of type: which types it covers, the factories of its structure
(AttributeValue -> value) and unstructure (value -> AttributeValue) hooks, and DynamoDB's limits
on its values, by the checks of ``core/limits.py`` its hooks call (``checks``) or the item's
checks that cover it (``note``). Two readers walk the table, so that adding a type is one row:
``converter.make_converter`` registers every row on dynorm's cattrs converter, and
``converter.Hooks`` makes the hooks of the rows it can answer (``own``) without importing cattrs.
A scalar's row also holds the expression templates the generated decoders and encoders write
in place of its default hooks (``read``, ``write``; ``parse`` for text): ``INLINE_STRUCTURE``,
``INLINE_UNSTRUCTURE`` and ``TEXT_STRUCTURE`` are read off the rows.

The rows are in cattrs' order of dispatch: rows by class first (cattrs picks them for the class
and its subclasses, Enums with a str/int/float mixin included), then the others, the first that
matches winning.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import functools
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, cast

import attrs
import msgspec

from dynorm.core.limits import (
    BIG_INT,
    FLOAT_TOO_BIG,
    FLOAT_TOO_SMALL,
    check_decimal,
    check_float,
    int_text,
)

from . import AttributeValue
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
)
from .enums import _enum_structure, _enum_unstructure, _literal_structure, _literal_unstructure
from .generic import _NEG_BIG_INT, _NULL, decode_binary, encode_any
from .hooks import HookSource
from .scalars import (
    _STRUCTURE_FLOAT,
    _STRUCTURE_INT,
    _STRUCTURE_STR,
    _structure_any,
    _structure_bool,
    _structure_bytes,
    _structure_decimal,
    _text_structure,
    _unstructure_bool,
    _unstructure_bytes,
    _unstructure_date,
    _unstructure_datetime,
    _unstructure_decimal,
    _unstructure_float,
    _unstructure_int,
    _unstructure_str,
    _unstructure_time,
    _unstructure_uuid,
)
from .typeforms import (
    _is_enum,
    _is_fixed,
    _is_list,
    _is_literal,
    _is_map,
    _is_set,
    _optional_inner,
)

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "INLINE_STRUCTURE",
    "INLINE_UNSTRUCTURE",
    "RULES",
    "TEXT_STRUCTURE",
    "TypeRule",
]

StructureHook = Callable[[AttributeValue, object], object]
UnstructureHook = Callable[[Any], AttributeValue]
#: Makes a type's hook; given the converter (or ``Hooks``) its parts' hooks are asked of.
StructureFactory = Callable[[HookSource, Any], StructureHook]
UnstructureFactory = Callable[[HookSource, Any], UnstructureHook]


class TypeRule(msgspec.Struct, frozen=True):
    """One kind of field type: what it covers, its hooks' factories, DynamoDB's limits on it."""

    #: Which types the row stores, and how (for a reader of the table).
    what: str
    structure: StructureFactory
    unstructure: UnstructureFactory
    #: The class the row is registered for (cattrs: its subclasses too); else ``matches``.
    cls: type | None = None
    #: The types the row covers, when it is no single class.
    matches: Callable[[Any], bool] | None = None
    #: The types ``Hooks`` makes this row's hooks for without cattrs; None: only cattrs does.
    own: Callable[[Any], bool] | None = None
    #: The checks of ``core/limits.py`` the unstructure hook calls on each value.
    checks: tuple[Callable[..., object], ...] = ()
    #: DynamoDB's limits on the type checked elsewhere (per item, or when the hook is made).
    note: str = ""
    #: What the generated decoders write instead of calling the default structure hook: an
    #: expression on the AttributeValue ``{v}`` (names from ``_INLINE_HELPERS``).
    read: str | None = None
    #: For a type stored as text: the parser its default structure hook calls on the S value
    #: (wire decoding calls it on the text).
    parse: Callable[[str], object] | None = None
    #: What the generated encoders write instead of calling the default unstructure hook:
    #: (guard, expression) on the value ``{v}`` (names from ``_ENCODE_HELPERS``). The guard admits
    #: only the exact type, for which the expression returns what the hook would; anything else
    #: (subclasses, wrong values) is handed to the hook.
    write: tuple[str, str] | None = None


def _scalar(
    cls: type,
    structure: StructureHook,
    unstructure: UnstructureHook,
    *,
    read: str | None = None,
    write: tuple[str, str],
    parse: Callable[[str], object] | None = None,
    checks: tuple[Callable[..., object], ...] = (),
    note: str = "",
) -> TypeRule:
    """A row by class: the same two hooks for every use of it; ``Hooks`` makes exactly ``cls``."""
    return TypeRule(
        cls.__name__,
        lambda _c, _tp: structure,
        lambda _c, _tp: unstructure,
        cls=cls,
        own=lambda tp: tp is cls,
        checks=checks,
        note=note,
        read=read,
        parse=parse,
        write=write,
    )


def _text(
    cls: type, parse: Callable[[str], object], unstructure: UnstructureHook, write: str
) -> TypeRule:
    """A row by class for a type stored as text (S) and read back by ``parse``."""
    return _scalar(
        cls,
        _text_structure(parse),
        unstructure,
        parse=parse,
        write=(f"type({{v}}) is __{cls.__name__}", write),
    )


def _form(matches: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``matches`` for annotations only: a bare class (``list``, ``dict``) is cattrs' to answer."""
    return lambda tp: not isinstance(tp, type) and matches(tp)


def _plain_enum(tp: Any) -> bool:
    """An Enum without a mixin (no str, int, ... base, whose hooks cattrs would pick first)."""
    return (
        isinstance(tp, type)
        and issubclass(tp, enum.Enum)
        and all(base is object or issubclass(base, enum.Enum) for base in tp.__mro__)
    )


def _is_optional(tp: Any) -> bool:
    return _optional_inner(tp) is not None


def _nested(c: HookSource) -> Any:
    """``c`` as the cattrs converter: nested attrs classes are made only by cattrs (own=None)."""
    return cast("cattrs.Converter", c)


_TEXT_NOTE: Final = "valid UTF-8 and the item's 400 KB: limits.check_item (utf8_size), per item"
_SIZE_NOTE: Final = "the item's 400 KB: limits.check_item, per item"
_DEPTH_NOTE: Final = "32 levels of nesting: limits.check_item (check_depth), per item"


#: Every field type's storage form, in cattrs' order of dispatch (see the module's docstring).
RULES: Final[tuple[TypeRule, ...]] = (
    # Scalars, registered by class.
    _scalar(
        str,
        _STRUCTURE_STR,
        _unstructure_str,
        read='{v}["S"]',
        write=("type({v}) is str", '{{"S": {v}}}'),
        note=_TEXT_NOTE,
    ),
    _scalar(
        bool,
        _structure_bool,
        _unstructure_bool,
        read='{v}["BOOL"]',
        write=("({v} is True or {v} is False)", '{{"BOOL": {v}}}'),
    ),
    _scalar(
        int,
        _STRUCTURE_INT,
        _unstructure_int,
        read='int({v}["N"])',
        write=("(type({v}) is int and __NEG_BIG < {v} < __BIG)", '{{"N": int.__repr__({v})}}'),
        checks=(int_text,),
        note="38 digits",
    ),
    _scalar(
        float,
        _STRUCTURE_FLOAT,
        _unstructure_float,
        read='float({v}["N"])',
        write=(
            # check_float's range test, inline: NaN, infinities and out-of-range go to the hook.
            "(type({v}) is float and (__FLOAT_MIN <= abs({v}) < __FLOAT_MAX or {v} == 0.0))",
            '{{"N": float.__repr__({v})}}',
        ),
        checks=(check_float,),
        note="1E-130 to 1E+126",
    ),
    _scalar(
        decimal.Decimal,
        _structure_decimal,
        _unstructure_decimal,
        read='__Decimal({v}["N"])',
        write=("type({v}) is __Decimal", '{{"N": __check_decimal({v})}}'),
        checks=(check_decimal,),
        note="38 digits, 1E-130 to 9.99...E+125",
    ),
    _scalar(
        bytes,
        _structure_bytes,
        _unstructure_bytes,
        read='__binary({v}["B"])',
        write=("type({v}) is bytes", '{{"B": {v}}}'),
        note=_SIZE_NOTE,
    ),
    # Stored as text (S), read back by a parser of their own.
    _text(uuid.UUID, uuid.UUID, _unstructure_uuid, '{{"S": str({v})}}'),
    _text(
        datetime.datetime,
        datetime.datetime.fromisoformat,
        _unstructure_datetime,
        '{{"S": {v}.isoformat()}}',
    ),
    _text(
        datetime.date, datetime.date.fromisoformat, _unstructure_date, '{{"S": {v}.isoformat()}}'
    ),
    _text(
        datetime.time, datetime.time.fromisoformat, _unstructure_time, '{{"S": {v}.isoformat()}}'
    ),
    # Forms, the first that matches winning.
    TypeRule(
        "Literal[...]",
        lambda _c, tp: _literal_structure(tp),
        lambda _c, tp: _literal_unstructure(tp),
        matches=_is_literal,
        own=_form(_is_literal),
    ),
    TypeRule(
        "tuple[X, Y] (L)",
        _tuple_structure,
        _tuple_unstructure,
        matches=_is_fixed,
        own=_form(_is_fixed),
        note=_DEPTH_NOTE,
    ),
    TypeRule(
        "nested attrs class (M)",
        lambda c, tp: _nested_structure(_nested(c), tp),
        lambda c, tp: _nested_unstructure(_nested(c), tp),
        matches=attrs.has,
        note=_DEPTH_NOTE,
    ),
    TypeRule(
        "dict[str, X] (M)",
        _map_structure,
        _map_unstructure,
        matches=_is_map,
        own=_form(_is_map),
        note="keys are str (refused when the hook is made); " + _DEPTH_NOTE,
    ),
    TypeRule(
        "set[X] (SS, NS, BS)",
        lambda _c, tp: _set_structure(tp),
        _typed_set,
        matches=_is_set,
        own=_form(_is_set),
        note="of str, bytes or numbers; no empty set: stored as NULL, left out of the item",
    ),
    TypeRule(
        "list[X] (L)",
        _list_structure,
        _list_unstructure,
        matches=_is_list,
        own=_form(_is_list),
        note=_DEPTH_NOTE,
    ),
    TypeRule(
        "X | None (NULL)",
        _optional_structure,
        _optional_unstructure,
        matches=_is_optional,
        own=_form(_is_optional),
        note="set[X] | None is refused when the hook is made: both would be stored as NULL",
    ),
    TypeRule(
        "Enum member (its value)",
        lambda _c, tp: _enum_structure(tp),
        lambda _c, tp: _enum_unstructure(tp),
        matches=_is_enum,
        own=_plain_enum,
    ),
    TypeRule(
        "Any (by the value's type)",
        lambda _c, _tp: _structure_any,
        lambda _c, _tp: encode_any,
        matches=lambda tp: tp is Any,
        own=lambda tp: tp is Any,
        checks=(int_text, check_float, check_decimal),
        note="text, size and depth: limits.check_item, per item",
    ),
)


def _made(factory: Callable[[HookSource, Any], Any], cls: type) -> Any:
    """A by-class row's hook: its factory asks nothing of the converter it is given."""
    return factory(cast("HookSource", None), cls)


_BY_CLASS: Final = tuple(rule for rule in RULES if rule.cls is not None)

#: The default hooks whose work the generated decoders write inline, by type: (hook, template).
#: A hook a user registers instead is called as usual.
INLINE_STRUCTURE: Final[Mapping[type, tuple[object, str]]] = {
    rule.cls: (_made(rule.structure, rule.cls), rule.read)
    for rule in _BY_CLASS
    if rule.cls is not None and rule.read is not None
}

#: Types stored as text and read back by a parser of their own: the default hook, the parser
#: (wire decoding reads the text and calls the parser while that hook is in place).
TEXT_STRUCTURE: Final[Mapping[type, tuple[StructureHook, Callable[[str], object]]]] = {
    rule.cls: (_made(rule.structure, rule.cls), rule.parse)
    for rule in _BY_CLASS
    if rule.cls is not None and rule.parse is not None
}

#: The default hooks whose work the generated encoders write inline: (hook, guard, expression).
INLINE_UNSTRUCTURE: Final[Mapping[object, tuple[object, str, str]]] = {
    rule.cls: (_made(rule.unstructure, rule.cls), *rule.write)
    for rule in _BY_CLASS
    if rule.cls is not None and rule.write is not None
}

#: The classes of the by-class rows.
SCALARS: Final = tuple(rule.cls for rule in _BY_CLASS if rule.cls is not None)

#: The names ``read`` templates use.
_INLINE_HELPERS: Final = {"__Decimal": decimal.Decimal, "__binary": decode_binary}

#: The names ``write`` templates use.
_ENCODE_HELPERS: Final = {
    "__NULL": _NULL,
    "__BIG": BIG_INT,
    "__NEG_BIG": _NEG_BIG_INT,
    "__FLOAT_MIN": FLOAT_TOO_SMALL,
    "__FLOAT_MAX": FLOAT_TOO_BIG,
    "__check_decimal": check_decimal,
    "__Decimal": decimal.Decimal,
    "__UUID": uuid.UUID,
    "__datetime": datetime.datetime,
    "__date": datetime.date,
    "__time": datetime.time,
}


def configure(c: cattrs.Converter) -> None:
    """Register every row's hooks on ``c``: by class, then the forms, the first row winning."""
    for rule in RULES:
        if rule.cls is not None:
            c.register_structure_hook(rule.cls, rule.structure(c, rule.cls))
            c.register_unstructure_hook(rule.cls, rule.unstructure(c, rule.cls))
    # cattrs asks the factories registered last first.
    for rule in reversed(RULES):
        if rule.matches is not None:
            c.register_structure_hook_factory(rule.matches, functools.partial(rule.structure, c))
            c.register_unstructure_hook_factory(
                rule.matches, functools.partial(rule.unstructure, c)
            )


def own_structure(c: HookSource, tp: object) -> StructureHook | None:
    """The structure hook the converter gives ``tp``, made without cattrs; None: ask cattrs."""
    for rule in RULES:
        if rule.own is not None and rule.own(tp):
            return rule.structure(c, tp)
    return None


def own_unstructure(c: HookSource, tp: object) -> UnstructureHook | None:
    """The unstructure hook the converter gives ``tp``, made without cattrs; None: ask cattrs."""
    for rule in RULES:
        if rule.own is not None and rule.own(tp):
            return rule.unstructure(c, tp)
    return None
