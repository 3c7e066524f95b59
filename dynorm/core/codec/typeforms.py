"""What a field type is, as the codec asks it: ``X | None``, a list, set or map, an Enum, a tuple.

The questions every hook factory and the path walker ask of an annotation, and ``type_text``,
which shows a type the way a user wrote it in errors.
"""

from __future__ import annotations

import collections.abc
import enum
import types
import typing
from typing import Any, Final

import attrs

__all__ = [
    "LIST_ORIGINS",
    "MAP_ORIGINS",
    "SET_ORIGINS",
    "is_attrs_type",
    "resolved_fields",
    "type_text",
    "without_none",
]


def type_text(tp: object) -> str:
    """A type as a user wrote it: ``int | None``, ``list[Address]``, ``Color``."""
    if tp is _NONE_TYPE:
        return "None"
    if tp is Any:
        return "Any"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin is not None and args:
        name = getattr(origin, "__name__", repr(origin))
        return f"{name}[{', '.join('...' if a is Ellipsis else type_text(a) for a in args)}]"
    if isinstance(tp, type):
        return tp.__name__
    return repr(tp).replace("typing.", "")


_NONE_TYPE: Final = type(None)


def _attrs_class(tp: object) -> type | None:
    """``tp`` when it is an attrs class, else None."""
    return tp if isinstance(tp, type) and attrs.has(tp) else None


def _optional_inner(tp: object) -> object | None:
    """``X`` for ``X | None`` (``Optional[X]``), else None."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not _NONE_TYPE]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            inner: object = args[0]
            return inner
    return None


def without_none(tp: object) -> object:
    """``X`` for ``X | None`` (``Optional[X]``), else ``tp`` itself."""
    inner = _optional_inner(tp)
    return tp if inner is None else inner


def _origin(tp: object) -> object:
    return typing.get_origin(tp) or tp


#: What ``typing.get_origin`` gives for the list, set and map types the codec stores as ``L``,
#: ``SS``/``NS``/``BS`` and ``M`` (for a bare class: the class itself).
LIST_ORIGINS: Final = (list, tuple, collections.abc.Sequence, collections.abc.MutableSequence)


SET_ORIGINS: Final = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)


MAP_ORIGINS: Final = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _is_list(tp: object) -> bool:
    return _origin(tp) in LIST_ORIGINS


def _is_set(tp: object) -> bool:
    return _origin(tp) in SET_ORIGINS


def _is_map(tp: object) -> bool:
    return _origin(tp) in MAP_ORIGINS


def _is_enum(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _element(tp: object, index: int = 0) -> object:
    args = typing.get_args(tp)
    if not args or args[index] is Ellipsis:
        return Any
    return args[index]


def _tuple_items(tp: object) -> tuple[object, ...] | None:
    """The element types of a fixed-length tuple (``tuple[str, int]``), else None."""
    args = typing.get_args(tp)
    if _origin(tp) is not tuple or not args or Ellipsis in args:
        return None
    return args


def _is_fixed(tp: object) -> bool:
    return _tuple_items(tp) is not None


def _is_literal(tp: object) -> bool:
    return typing.get_origin(tp) is typing.Literal


def is_attrs_type(tp: object) -> bool:
    """Whether ``tp`` is an attrs class, or a generic one given its arguments (``Box[int]``)."""
    cls = typing.get_origin(tp) or tp
    return isinstance(cls, type) and attrs.has(cls)


def resolved_fields(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    """An attrs class's fields, their string annotations (PEP 563) resolved.

    ``cls`` may be a generic alias (``Box[int]``): its class's annotations are resolved (since
    ``typing.get_type_hints`` takes classes only), and its type variables are bound as the alias
    binds them (``value: V`` of a ``Box[int]`` is an ``int``), as cattrs binds them.
    """
    fields = attrs.fields(cls)
    origin = typing.get_origin(cls)
    if any(isinstance(f.type, str) for f in fields):
        attrs.resolve_types(origin or cls)  # what cattrs does for PEP 563 annotations
        fields = attrs.fields(cls)
    if origin is None:
        return tuple(fields)
    bound = dict(zip(getattr(origin, "__parameters__", ()), typing.get_args(cls), strict=False))
    return tuple(f.evolve(type=_bind(f.type, bound)) for f in fields)


def _bind(tp: Any, bound: collections.abc.Mapping[Any, Any]) -> Any:
    """``tp`` with its type variables replaced as ``bound`` says (``list[V]`` -> ``list[int]``)."""
    if isinstance(tp, typing.TypeVar):
        return bound.get(tp, tp)
    params = getattr(tp, "__parameters__", ())
    return tp[tuple(bound.get(p, p) for p in params)] if params else tp
