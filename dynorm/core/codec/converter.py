"""dynorm's cattrs converter, and ``Hooks``, which answers dynorm's own types without it.

``make_converter`` registers the hooks of every type the codec stores (the table of
``rules.RULES``) on a cattrs converter; ``dynorm.converter`` is that
converter, made on first use, where users register hooks of their own. ``hooks`` (a ``Hooks``)
is what every model's codec is generated from: until something needs cattrs it makes the same
hooks itself from that table (importing cattrs is a tenth of a cold start), then asks the converter.

The hooks read and write AttributeValue dicts directly (``{"S": "x"}``): no intermediate
plain-Python dict and no per-item reflection. Numbers stay exact: ``int`` and ``Decimal`` fields
round-trip every digit DynamoDB keeps (38), and a ``float`` field stores ``repr(value)``, the
shortest text that reads back to the same float.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

from . import AttributeValue, Item, rules
from .hooks import HookSource

if TYPE_CHECKING:
    import cattrs


# AttributeValue and Item are defined by the package; named here too for code that imports them
# from this module.
__all__ = ["AttributeValue", "Hooks", "Item", "hooks", "make_converter"]


def make_converter() -> cattrs.Converter:
    """A converter whose hooks turn AttributeValues into typed values and back."""
    import cattrs  # noqa: PLC0415 - only a process whose types need cattrs imports it

    converter = cattrs.Converter(detailed_validation=False)
    rules.configure(converter)
    return converter


H = TypeVar("H")


class Hooks:
    """The hooks every model's codec is generated from: dynorm's converter, made when needed.

    Importing cattrs and configuring its converter is a tenth of a cold start, and a process
    whose models hold only scalars, Enums, Literals, and Optionals, lists, tuples, sets and
    maps of them never needs it: until something does, these types get the very hooks the
    converter registers, made here from the rows of ``rules.RULES`` that say so (``own``). An
    attrs class, a subclass of a scalar or any other type makes the converter; so does
    ``dynorm.converter``, the only way to register hooks of one's own, and from then on every
    type is asked of it.
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
            found = _own(self._structure, tp, rules.own_structure, self)
            if found is not None:
                return found
        return self.converter.get_structure_hook(tp)

    def get_unstructure_hook(self, tp: Any, /) -> Callable[[Any], Any]:
        if self._converter is None:
            found = _own(self._unstructure, tp, rules.own_unstructure, self)
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
