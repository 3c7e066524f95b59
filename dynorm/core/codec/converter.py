"""dynorm's cattrs converter, and ``Hooks``, which answers dynorm's own types without it.

``make_converter`` registers the hooks of every type the codec stores (``scalars``, ``enums``,
``containers``, ``generic`` for ``Any``) on a cattrs converter; ``dynorm.converter`` is that
converter, made on first use, where users register hooks of their own. ``hooks`` (a ``Hooks``)
is what every model's codec is generated from: until something needs cattrs it makes the same
hooks itself (importing cattrs is a tenth of a cold start), then asks the converter.

The hooks read and write AttributeValue dicts directly (``{"S": "x"}``): no intermediate
plain-Python dict and no per-item reflection. Numbers stay exact: ``int`` and ``Decimal`` fields
round-trip every digit DynamoDB keeps (38), and a ``float`` field stores ``repr(value)``, the
shortest text that reads back to the same float.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import attrs

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
)
from .enums import (
    _enum_structure,
    _enum_unstructure,
    _literal_structure,
    _literal_unstructure,
)
from .generic import encode_any
from .hooks import HookSource
from .scalars import (
    _SCALAR_UNSTRUCTURE,
    _STRUCTURE_BY_CLASS,
    _structure_any,
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


# AttributeValue and Item are defined by the package; named here too for code that imports them
# from this module.
__all__ = ["AttributeValue", "Hooks", "Item", "hooks", "make_converter"]


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
