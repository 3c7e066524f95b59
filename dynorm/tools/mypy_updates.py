"""mypy plugin, update operations: ``db.update(user, set={"age": "3"})`` is an error.

The paths written out in ``set=``, ``add=``, ``remove=``, ``append=``, ``prepend=``,
``discard=`` and ``if_not_exists=`` of ``db.update``, ``tx.update`` and ``db.explain.update``
are checked against the model of the item updated, as the run time checks them before
sending: the first name of a path must be a field of the model (not one of its key fields, nor
one dynorm writes itself), a path inside a field must lead somewhere (``"address.city"``
through an attrs class, ``"tags[0]"`` into a list, ``"prefs.theme"`` into a dict), and a value
must suit the option and the type at its path: ``set=``/``if_not_exists=`` a value of that
type, ``add=`` a number to a number or a set to a set, ``append=``/``prepend=`` a sequence of
a list's elements, ``discard=`` a set of a set's elements. A path or a dict built at run time
is left to the run time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from typing import Final

from mypy.errorcodes import ARG_TYPE, CALL_ARG, MISC
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type
from mypy.nodes import (
    CallExpr,
    DictExpr,
    Expression,
    ListExpr,
    MemberExpr,
    SetExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
)
from mypy.plugin import MethodSigContext
from mypy.types import (
    FunctionLike,
    Instance,
    TupleType,
    Type,
    TypeAliasType,
    UnionType,
    get_proper_type,
)

from .mypy_keys import DATABASE, META, NUMBERS, as_key, field_type, mismatch, without_none

__all__ = ["UPDATE_CALLS"]

_SEGMENT: Final = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")
#: The options whose values are written per path (remove= names paths only).
_VALUED: Final = ("set", "if_not_exists", "add", "append", "prepend", "discard")
_SETS: Final = frozenset({"builtins.set", "builtins.frozenset"})
_SEQUENCES: Final = frozenset({"builtins.list", "builtins.tuple"})
_TEXTS: Final = frozenset({"builtins.str", "builtins.bytes"})  # sequences, not lists


def _check_update(ctx: MethodSigContext) -> FunctionLike:
    """Check the paths and values written out in an update of a model's item.

    A signature hook, though it changes no signature: mypy tries each overload of
    ``Database.update`` with its errors held back and takes an error raised in a method hook as
    "this overload does not match", which would turn these messages into "No overload variant".
    A signature hook runs before that, once per overload (mypy shows a repeated message once).
    """
    call = ctx.context
    if not isinstance(call, CallExpr) or not call.args or call.arg_names[0] is not None:
        return ctx.default_signature
    model = get_proper_type(ctx.api.get_expression_type(call.args[0]))
    if not isinstance(model, Instance) or not {META, "attrs"} <= model.type.metadata.keys():
        return ctx.default_signature  # not a model (or not one the plugin saw declared)
    info = model.type
    where = f"{_receiver(call)}.update({info.name})"
    for option, arg in zip(call.arg_names, call.args, strict=True):
        if option in _VALUED and isinstance(arg, DictExpr):
            for path, value in arg.items:
                if isinstance(path, StrExpr):
                    _check_path(ctx, where, model, option, path, value=value)
        elif option == "remove" and isinstance(arg, ListExpr | TupleExpr | SetExpr):
            for path in arg.items:
                if isinstance(path, StrExpr):
                    _check_path(ctx, where, model, "remove", path, value=None)
    return ctx.default_signature


def _receiver(call: CallExpr) -> str:
    """``db``, ``tx``, ``db.explain``: what the update is called on, as written."""
    parts: list[str] = []
    expr = call.callee.expr if isinstance(call.callee, MemberExpr) else None
    while isinstance(expr, MemberExpr):
        parts.append(expr.name)
        expr = expr.expr
    parts.append(getattr(expr, "name", "db"))
    return ".".join(reversed(parts))


def _fields(info: TypeInfo) -> list[str]:
    """The attrs fields of a class (inherited ones included), as mypy's attrs plugin keeps them."""
    attributes = info.metadata.get("attrs", {}).get("attributes", [])
    return [a["name"] for a in attributes]


def _check_path(
    ctx: MethodSigContext,
    where: str,
    model: Instance,
    option: str,
    path_expr: StrExpr,
    *,
    value: Expression | None,
) -> None:
    info, path = model.type, path_expr.value
    segments = [(name, index) for name, index in _SEGMENT.findall(path)]
    top = segments[0][0] if segments else ""
    fields = _fields(info)
    keys = info.metadata[META]
    if not top:  # "" or "[0]": no field named at all
        ctx.api.fail(
            f'{where}: "{path}" is not an update path; a path starts with a field of '
            f"{info.name} (map members as a.b, list elements as a[0])",
            path_expr,
            code=CALL_ARG,
        )
    elif top not in fields:
        hint = _did_you_mean(top, fields)
        ctx.api.fail(
            f'{where}: {info.name} has no field "{top}"{hint}; update paths name fields: '
            f"{', '.join(fields)}",
            path_expr,
            code=CALL_ARG,
        )
    elif top in keys["primary"]:
        ctx.api.fail(
            f'{where}: "{top}" is part of {info.name}\'s primary key; to change it, put a new '
            "item and delete the old one (in a transaction)",
            path_expr,
            code=MISC,
        )
    elif top in keys.get("managed", ()):
        ctx.api.fail(
            f'{where}: "{top}" is written by dynorm on every write (version=, created=, '
            "updated=); leave it out of the update",
            path_expr,
            code=MISC,
        )
    else:
        declared = _at_path(ctx, where, model, segments, path_expr)
        if declared is not None and value is not None:
            _check_option(ctx, f'{where}: {option}= "{path}"', option, declared, value)


def _did_you_mean(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(names), n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _at_path(
    ctx: MethodSigContext,
    where: str,
    model: Instance,
    segments: list[tuple[str, str]],
    path_expr: StrExpr,
) -> Type | None:
    """The type at a path (None: not known to the checker, so left to the run time)."""
    current = field_type(model.type, segments[0][0], model)
    for name, index in segments[1:]:
        proper = without_none(current) if current is not None else None
        if not isinstance(proper, Instance):
            return None
        members = _element(ctx, proper, "typing.Mapping")
        if index:
            current = _element(ctx, proper, "typing.Sequence")
        elif members is not None:
            current = members
        elif "attrs" in proper.type.metadata:
            fields = _fields(proper.type)
            if name not in fields:
                hint = _did_you_mean(name, fields)
                ctx.api.fail(
                    f'{where}: "{path_expr.value}": {proper.type.name} has no field "{name}"{hint}',
                    path_expr,
                    code=CALL_ARG,
                )
                return None
            current = field_type(proper.type, name, proper)
        else:
            return None
    return current


def _element(ctx: MethodSigContext, typ: Instance, base: str) -> Type | None:
    """The element type of ``typ`` as a ``base`` (a Sequence's items, a Mapping's values)."""
    base_info = ctx.api.named_generic_type(base, []).type
    if typ.type.fullname in _TEXTS or not typ.type.has_base(base_info.fullname):
        return None
    return map_instance_to_supertype(typ, base_info).args[-1]


def _check_option(
    ctx: MethodSigContext, what: str, option: str, declared: Type, value: Expression
) -> None:
    """Report a value the option cannot write at a path of ``declared`` type."""
    expected = _expected(ctx, option, declared)
    options = ctx.api.options
    if expected is None:
        return  # a type the checker cannot take apart (Any, a union of kinds): the run time's
    if isinstance(expected, str):
        ctx.api.fail(
            f"{what} is {format_type(declared, options)}; {option}= {expected}",
            value,
            code=ARG_TYPE,
        )
        return
    given = mismatch(ctx, expected, value)
    if given is not None:
        ctx.api.fail(
            f"{what} takes {format_type(expected, options)}, not {format_type(given, options)}",
            value,
            code=ARG_TYPE,
        )


def _expected(ctx: MethodSigContext, option: str, declared: Type) -> Type | str | None:
    """What ``option`` takes at a path of ``declared`` type; what it does when nothing there.

    None: the path's type is not one the checker can take apart (left to the run time).
    """
    if option in ("set", "if_not_exists"):
        return _whole_value(ctx, declared)
    field = without_none(declared)  # a list or set not stored yet counts as empty
    if not isinstance(field, Instance):
        return None
    kind = field.type.fullname
    members = _element(ctx, field, "typing.AbstractSet") if kind in _SETS else None
    if option == "add":
        if kind in NUMBERS:
            return as_key(ctx, field)
        return _generic(ctx, "typing.AbstractSet", members) or (
            "adds numbers to numbers and sets to sets"
        )
    if option == "discard":
        return _generic(ctx, "typing.AbstractSet", members) or "takes elements out of sets"
    elements = _element(ctx, field, "typing.Sequence")  # append=, prepend=
    return _generic(ctx, "typing.Sequence", elements) or "adds elements to lists"


def _whole_value(ctx: MethodSigContext, declared: Type) -> Type:
    """What ``set=`` takes for a field of ``declared`` type: what the field's codec encodes.

    Any set for a set field (``frozenset[str]`` takes ``{"a"}``), any sequence for a list or
    a tuple field, any mapping for a dict field, an int for a Decimal (also inside those:
    ``{1}`` for a ``set[Decimal]`` field); other types as declared.
    """
    if isinstance(declared, TypeAliasType) and declared.is_recursive:
        return declared  # Json = dict[str, Json] | ...: taken apart, it would never end
    proper = get_proper_type(declared)
    if isinstance(proper, UnionType):
        return UnionType.make_union([_whole_value(ctx, item) for item in proper.items])
    if isinstance(proper, TupleType):  # tuple[int, str]: a list of those is encoded the same
        items = [_whole_value(ctx, item) for item in proper.items]
        return ctx.api.named_generic_type("typing.Sequence", [UnionType.make_union(items)])
    if not isinstance(proper, Instance):
        return declared
    kind = proper.type.fullname
    if kind in _SETS:
        members = _element(ctx, proper, "typing.AbstractSet")
        return _generic(ctx, "typing.AbstractSet", members) or proper
    if kind in _SEQUENCES:
        return _generic(ctx, "typing.Sequence", _element(ctx, proper, "typing.Sequence")) or proper
    if kind == "builtins.dict" and len(proper.args) == 2:
        value = _whole_value(ctx, proper.args[1])
        return ctx.api.named_generic_type("typing.Mapping", [proper.args[0], value])
    return as_key(ctx, declared)


def _generic(ctx: MethodSigContext, name: str, element: Type | None) -> Type | None:
    """``name[element]``, the element as ``set=`` takes it (None: no element type)."""
    if element is None:
        return None
    return ctx.api.named_generic_type(name, [_whole_value(ctx, element)])


#: Method full name -> its hook checking update operations.
UPDATE_CALLS: Final[dict[str, Callable[[MethodSigContext], FunctionLike]]] = {
    f"{DATABASE}.update": _check_update,
    "dynorm.io.transaction.Transaction.update": _check_update,
    "dynorm.io.explaining.DatabaseExplain.update": _check_update,
}
