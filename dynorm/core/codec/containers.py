"""Container fields: ``X | None``, lists, fixed tuples, sets, maps and nested attrs classes.

Each hook is made for its declared type from its parts' hooks (asked of a ``HookSource``).
Besides the declared type, encoding accepts a tuple in a list field and a list in a tuple
field, a frozenset in a set field and the reverse. DynamoDB has no empty set: an empty set is
stored as NULL (and left out of a model's item), so ``set[X] | None`` is refused at definition.

The hooks carry marks (``decoders.LIST_HOOK_MARK``, ``encoders.ENCODE_LIST_MARK``, ...) that
let the generated decoders, encoders and wire decoding do their work inline; a hook a user
registers instead carries none and is called as it is. When an element is refused, the hook
walks its members again to say which (``[3]``, ``.name``), on the way out only.
"""

from __future__ import annotations

import decimal
import enum
import typing
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, cast

from dynorm.core.errors import CodecError, DefinitionError
from dynorm.core.fields import stored_name

from .decoders import (
    LIST_HOOK_MARK,
    NESTED_HOOK_MARK,
    WIRE_HOOK_MARK,
)
from .hooks import HookSource

if TYPE_CHECKING:
    import cattrs

from . import AttributeValue, Item
from .encoders import (
    ENCODE_LIST_MARK,
    ENCODE_MAP_MARK,
    ENCODE_NESTED_MARK,
    ENCODE_OPTIONAL_MARK,
)
from .enums import _member_values
from .generic import _NULL, _encode_set, _map_key, decode_binary
from .refusals import _a, _at, _mismatch, _RefusedError, _show
from .scalars import _MIXIN_HOOKS, unstructure_hook
from .typeforms import (
    _element,
    _is_enum,
    _is_set,
    _optional_inner,
    _origin,
    _tuple_items,
    resolved_fields,
    type_text,
)


def _tuple_structure(c: HookSource, tp: object) -> Callable[[AttributeValue, object], object]:
    hooks = [(c.get_structure_hook(t), t) for t in _tuple_items(tp) or ()]
    return lambda v, _: tuple([h(x, t) for (h, t), x in zip(hooks, v["L"], strict=True)])


def _tuple_unstructure(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    items = _tuple_items(tp) or ()
    hooks = [unstructure_hook(c, t) for t in items]

    def unstructure_tuple(v: Any) -> AttributeValue:
        if not isinstance(v, tuple | list) or len(v) != len(hooks):
            raise _mismatch(v, f"a tuple of {len(hooks)}")
        try:
            return {"L": [h(x) for h, x in zip(hooks, v, strict=True)]}
        except CodecError:
            for i, (h, x, t) in enumerate(zip(hooks, v, items, strict=True)):
                try:
                    h(x)
                except CodecError as inner:
                    raise _at(inner, f"[{i}]", t) from None
            raise

    return unstructure_tuple


def _readable_optional(inner: object) -> object:
    """``inner``, refused if a value of it is stored as NULL as None is (it would read None)."""
    if _is_set(inner):
        raise DefinitionError(
            f"{type_text(inner)} | None cannot be stored: DynamoDB has no empty set, so an empty "
            f"set is stored as NULL, as None is, and would read back as None; declare "
            f"{type_text(inner)} (empty for none), or list[...] | None"
        )
    if _is_enum(inner):
        enum_tp = cast("type[enum.Enum]", inner)
        nulls = [m.name for m, (tag, _) in _member_values(enum_tp).items() if tag == "NULL"]
        if nulls:
            raise DefinitionError(
                f"{enum_tp.__name__}.{nulls[0]} has the value None, stored as NULL as None is, "
                f"so {enum_tp.__name__} | None would read it back as None; give that member "
                f"another value, or declare the field {enum_tp.__name__} without | None"
            )
    return inner


def _optional_structure(c: HookSource, tp: object) -> Callable[[AttributeValue, object], object]:
    inner_tp = _optional_inner(tp)
    inner = c.get_structure_hook(_readable_optional(inner_tp))

    def structure_optional(v: AttributeValue, _: object) -> object:
        return None if "NULL" in v else inner(v, inner_tp)

    setattr(structure_optional, WIRE_HOOK_MARK, "optional")  # wire decoding may type it
    return structure_optional


def _list_structure(c: HookSource, tp: object) -> Callable[[AttributeValue, object], object]:
    el_tp = _element(tp)
    el = c.get_structure_hook(el_tp)
    if _origin(tp) is tuple:
        return lambda v, _: tuple([el(x, el_tp) for x in v["L"]])

    def structure_list(v: AttributeValue, _: object) -> list[Any]:
        return [el(x, el_tp) for x in v["L"]]

    setattr(structure_list, LIST_HOOK_MARK, True)  # generated decoders may inline it
    return structure_list


def _set_structure(tp: object) -> Callable[[AttributeValue, object], object]:
    el_tp = _element(tp)
    make = frozenset if _origin(tp) is frozenset else set
    if el_tp is str:
        conv: Callable[[Any], object] = str
        tag = "SS"
    elif el_tp is bytes:
        conv, tag = decode_binary, "BS"
    elif el_tp in (int, float, decimal.Decimal):
        conv, tag = el_tp, "NS"
    else:
        raise DefinitionError(
            f"{tp!r}: DynamoDB sets hold str, bytes, int, float or Decimal; use a list"
        )

    def structure_set(v: AttributeValue, _: object) -> object:
        return make() if "NULL" in v else make(conv(x) for x in v[tag])

    setattr(structure_set, WIRE_HOOK_MARK, "set")  # wire decoding may type it
    return structure_set


def _map_structure(c: HookSource, tp: object) -> Callable[[AttributeValue, object], object]:
    if _element(tp) not in (str, Any):
        raise DefinitionError(f"{tp!r}: DynamoDB map keys are strings; use dict[str, ...]")
    val_tp = _element(tp, 1)
    val = c.get_structure_hook(val_tp)

    def structure_map(v: AttributeValue, _: object) -> object:
        return {k: val(x, val_tp) for k, x in v["M"].items()}

    setattr(structure_map, WIRE_HOOK_MARK, "map")  # wire decoding may type it
    return structure_map


def _nested_structure(c: cattrs.Converter, tp: type) -> Callable[[AttributeValue, object], object]:
    build = _structure_fn(c, tp)

    def structure_nested(v: AttributeValue, _: object) -> object:
        return build(v["M"], tp)

    setattr(structure_nested, NESTED_HOOK_MARK, True)  # generated decoders may inline it
    return structure_nested


def _unstructure_fn(
    c: cattrs.Converter,
    cls: type,
    *,
    hooks: Mapping[str, Callable[[Any], AttributeValue]] | None = None,
    omit: Collection[str] = (),
) -> Callable[[Any], Item]:
    """The dict encoder cattrs generates for an attrs class, with strict Enum field hooks.

    ``hooks`` encode the named fields their own way (a time to live as epoch seconds); the
    ``omit`` fields are left out (kept only inside keys). Both are a model's own options, never
    given for a nested class.
    """
    from cattrs.gen import make_dict_unstructure_fn, override  # noqa: PLC0415 - c made it

    hooks = hooks or {}
    overrides: dict[str, Any] = {}
    for f in resolved_fields(cls):
        if f.name in omit:
            overrides[f.name] = override(omit=True)
            continue
        hook = hooks.get(f.name) or (unstructure_hook(c, f.type) if _is_enum(f.type) else None)
        rename = stored_name(f)
        if hook is not None or rename != f.name:
            overrides[f.name] = override(
                unstruct_hook=hook, rename=None if rename == f.name else rename
            )
    build: Callable[[Any], Item] = make_dict_unstructure_fn(cls, c, **overrides)
    return build


def _structure_fn(c: cattrs.Converter, cls: type) -> Callable[[Any, Any], object]:
    """The dict decoder cattrs generates for a nested attrs class, reading stored names."""
    from cattrs.gen import make_dict_structure_fn, override  # noqa: PLC0415 - c made it

    overrides: dict[str, Any] = {
        f.name: override(rename=stored_name(f))
        for f in resolved_fields(cls)
        if stored_name(f) != f.name
    }
    build: Callable[[Any, Any], object] = make_dict_structure_fn(cls, c, **overrides)
    return build


def _locate_field(c: HookSource, cls: type, obj: object, exc: CodecError) -> _RefusedError:
    """The slow path after a failure: which field of ``obj`` holds the refused value."""
    for f in resolved_fields(cls):
        try:
            unstructure_hook(c, f.type)(getattr(obj, f.name))
        except CodecError as inner:
            return _at(inner, f".{f.name}", f.type)
    return _at(exc, "", cls)


def _typed_set(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    el_tp = _element(tp)
    if el_tp not in (str, bytes, int, float, decimal.Decimal):
        return _encode_set  # refused when the structure hook is made
    tag = "SS" if el_tp is str else "BS" if el_tp is bytes else "NS"
    inner = tag[0]
    el = unstructure_hook(c, el_tp)
    plain = el_tp if el_tp in (str, bytes) and el in _MIXIN_HOOKS else None

    def unstructure_set(v: Any) -> AttributeValue:
        if not isinstance(v, set | frozenset):
            raise _mismatch(v, "a set")
        if not v:
            return _NULL  # DynamoDB has no empty sets; NULL reads back as an empty set
        if plain is not None:
            for x in v:
                if type(x) is not plain:
                    break
            else:
                return {tag: sorted(v)}  # the common case: no hook call per member
        try:
            return {tag: sorted([el(x)[inner] for x in v])}
        except CodecError as exc:
            for x in v:
                try:
                    el(x)
                except CodecError as bad:
                    raise _at(bad, f" member {_show(x)}", el_tp) from None
            raise _at(exc, "", tp) from None

    return unstructure_set


def _optional_unstructure(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    inner_tp = _optional_inner(tp)
    inner = unstructure_hook(c, inner_tp)

    def unstructure_optional(v: Any) -> AttributeValue:
        return _NULL if v is None else inner(v)

    setattr(unstructure_optional, ENCODE_OPTIONAL_MARK, inner_tp)  # generated encoders inline it
    return unstructure_optional


def _list_unstructure(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    el_tp = _element(tp)
    el = unstructure_hook(c, el_tp)

    def unstructure_list(v: Any) -> AttributeValue:
        if type(v) is not list and not isinstance(v, list | tuple):
            raise _mismatch(v, "a list")
        try:
            return {"L": [el(x) for x in v]}
        except CodecError as exc:
            for i, x in enumerate(v):
                try:
                    el(x)
                except CodecError as inner:
                    raise _at(inner, f"[{i}]", el_tp) from None
            raise _at(exc, "", tp) from None

    setattr(unstructure_list, ENCODE_LIST_MARK, el_tp)  # generated encoders may inline it
    return unstructure_list


def _map_unstructure(c: HookSource, tp: object) -> Callable[[Any], AttributeValue]:
    val_tp = _element(tp, 1)
    val = unstructure_hook(c, val_tp)

    def unstructure_map(v: Any) -> AttributeValue:
        if type(v) is not dict and not isinstance(v, Mapping):
            raise _mismatch(v, "a dict")
        try:
            return {"M": {k if type(k) is str else _map_key(k): val(x) for k, x in v.items()}}
        except CodecError as exc:
            for k, x in v.items():
                try:
                    _map_key(k)
                except CodecError as inner:
                    raise _at(inner, "", tp) from None
                try:
                    val(x)
                except CodecError as inner:
                    raise _at(inner, f".{k}", val_tp) from None
            raise _at(exc, "", tp) from None

    setattr(unstructure_map, ENCODE_MAP_MARK, val_tp)  # generated encoders may inline it
    return unstructure_map


def _nested_unstructure(c: cattrs.Converter, tp: type) -> Callable[[Any], AttributeValue]:
    build = _unstructure_fn(c, tp)
    cls = typing.get_origin(tp) or tp  # Box[int]: an instance is a Box

    def unstructure_nested(v: Any) -> AttributeValue:
        if type(v) is not cls and not isinstance(v, cls):
            raise _mismatch(v, _a(cls.__name__))
        try:
            return {"M": build(v)}
        except CodecError as exc:
            raise _locate_field(c, tp, v, exc) from None

    setattr(unstructure_nested, ENCODE_NESTED_MARK, tp)  # generated encoders call their own
    return unstructure_nested
