"""mypy plugin, key arguments: ``db.get(User, uid=123)`` is checked like ``User(uid=123)``.

The model decorator's key templates (``pk="USER#{uid}"``, index keywords) are read while the
class is analysed and kept in the class's metadata; then the ``**key`` of ``Database.get``,
``delete(Model, ...)`` and ``query`` is replaced, for each call, by the model's key fields as
keyword arguments typed as the fields are. mypy's own messages follow: an unknown name is an
unexpected keyword argument (with "did you mean"), a value of another type an incompatible
argument, a missing key field of ``get``/``delete`` a missing named argument. A ``query`` takes
each field or a ``SortCondition`` (``between``, ``gt``, ...), each optional (the run time
says which are needed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from mypy.errorcodes import ARG_TYPE, CALL_ARG, MISC
from mypy.expandtype import expand_type_by_instance
from mypy.maptype import map_instance_to_supertype
from mypy.messages import format_type
from mypy.nodes import (
    ARG_NAMED,
    ARG_NAMED_OPT,
    ARG_POS,
    ARG_STAR2,
    CallExpr,
    DictExpr,
    Expression,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import MethodContext, MethodSigContext
from mypy.subtypes import is_subtype
from mypy.types import (
    CallableType,
    FunctionLike,
    Instance,
    NoneType,
    Type,
    TypeType,
    UnionType,
    get_proper_type,
)
from mypy.typevars import fill_typevars

__all__ = [
    "KEYED_CALLS",
    "KEY_DICT_CALLS",
    "META",
    "NUMBERS",
    "as_key",
    "class_of",
    "mismatch",
    "record_keys",
    "without_none",
]

DATABASE: Final = "dynorm.io.database.Database"
SORT_CONDITION: Final = "dynorm.core.ranges.SortCondition"
META: Final = "dynorm_keys"
#: The model decorator's keywords that are not index names.
_OPTIONS: Final = frozenset(
    {"entity", "version", "ttl", "created", "updated", "schema_version", "upgrades"}
    | {"schema_attribute"}
)
#: The number types of fields: a number key or value takes any of them at run time.
NUMBERS: Final = frozenset({"builtins.int", "builtins.float", "decimal.Decimal"})
_MANAGED: Final = frozenset({"version", "created", "updated"})
_FIELD: Final = re.compile(r"\{(\w+)[^}]*\}")


def _fields(template: str) -> list[str]:
    return [f for f in _FIELD.findall(template) if f != "shard"]


def record_keys(info: TypeInfo, decorator: CallExpr) -> None:
    """Keep the key fields of ``@table.model(...)``'s templates in the class's metadata."""
    primary: list[str] = []
    indexes: dict[str, list[str]] = {}
    managed: list[str] = []  # the fields dynorm writes itself: version=, created=, updated=
    for name, arg in zip(decorator.arg_names, decorator.args, strict=True):
        if name in _MANAGED and isinstance(arg, StrExpr):
            managed.append(arg.value)
        elif name in {"pk", "sk"} and isinstance(arg, StrExpr):
            primary += [f for f in _fields(arg.value) if f not in primary]
        elif name is not None and name not in _OPTIONS:
            texts = arg.items if isinstance(arg, TupleExpr) else [arg]
            fields = [f for t in texts if isinstance(t, StrExpr) for f in _fields(t.value)]
            indexes[name] = list(dict.fromkeys(fields))
    info.metadata[META] = {"primary": primary, "indexes": indexes, "managed": managed}


def _model_info(ctx: MethodSigContext | MethodContext, position: int) -> TypeInfo | None:
    """The model class named by the argument at ``position``, when it is one expression."""
    if position >= len(ctx.args) or len(ctx.args[position]) != 1:
        return None
    return class_of(ctx, ctx.args[position][0])


def class_of(ctx: MethodSigContext | MethodContext, expr: Expression) -> TypeInfo | None:
    """The model class ``expr`` names (``User``, or a ``type[User]`` value), if it is one."""
    typ = get_proper_type(ctx.api.get_expression_type(expr))
    if isinstance(typ, CallableType) and typ.is_type_obj():
        return typ.type_object()
    if isinstance(typ, TypeType) and isinstance(typ.item, Instance):
        return typ.item.type
    return None


def _check_key_dict(ctx: MethodContext, call: str, info: TypeInfo, key: Expression) -> None:
    """Report the names and value types of a ``{field: value}`` key that the model refuses."""
    keys = info.metadata.get(META)
    if keys is None or not isinstance(key, DictExpr):
        return
    fields: list[str] = keys["primary"]
    for name_expr, value in key.items:
        if not isinstance(name_expr, StrExpr):
            continue
        name = name_expr.value
        if name not in fields:
            ctx.api.fail(
                f'{call}: "{name}" is not a key field of {info.name}; its key fields are '
                f"{', '.join(fields)}",
                name_expr,
                code=CALL_ARG,
            )
            continue
        check_value(
            ctx, f'{call}: key field "{name}" of {info.name}', field_type(info, name), value
        )


def field_type(info: TypeInfo, name: str, seen_as: Instance | None = None) -> Type | None:
    """The declared type of ``info``'s field ``name`` (None: no such one, or not inferred).

    A field inherited from a base class counts, and a type variable is read as ``seen_as``
    (default: ``info`` itself) binds it: ``value`` of a ``Box[int]`` is an ``int``.
    """
    owner = next((base for base in info.mro if name in base.names), None)
    var = owner.names[name].node if owner is not None else None
    if owner is None or not isinstance(var, Var) or var.type is None:
        return None
    instance = seen_as if seen_as is not None else fill_typevars(info)
    if not isinstance(instance, Instance) or not instance.type.has_base(owner.fullname):
        return None
    return expand_type_by_instance(var.type, map_instance_to_supertype(instance, owner))


def without_none(typ: Type) -> Type:
    """``X | None`` as ``X`` (a proper type): what a value is when there is one."""
    proper = get_proper_type(typ)
    if isinstance(proper, UnionType):
        items = [t for t in proper.items if not isinstance(get_proper_type(t), NoneType)]
        return get_proper_type(UnionType.make_union(items))
    return proper


def given_type(ctx: MethodContext | MethodSigContext, expr: Expression) -> Type:
    """The type of ``expr`` as a value: ``1`` is an ``int``, not ``Literal[1]?``."""
    given = get_proper_type(ctx.api.get_expression_type(expr))
    return given.copy_modified(last_known_value=None) if isinstance(given, Instance) else given


def mismatch(
    ctx: MethodContext | MethodSigContext, expected: Type, value: Expression
) -> Type | None:
    """The type of ``value`` when it cannot be a value of ``expected`` type (None: it can be).

    ``value`` is inferred in the context of ``expected``, as mypy infers an argument: ``"a"``
    for a ``Literal["a", "b"]`` field, ``{"a": 1}`` for a ``dict[str, float]`` one. The
    inference's own errors are held back: an expression that is wrong in itself (``len(1)``) is
    mypy's to report when it checks the call, so the plugin stays silent on it.
    """
    with ctx.api.msg.filter_errors() as alone:
        given = given_type(ctx, value)
    if alone.has_new_errors():
        return None
    with ctx.api.msg.filter_errors() as fitted:
        typed = ctx.api.get_expression_type(value, expected)
    return given if fitted.has_new_errors() or not is_subtype(typed, expected) else None


def check_value(
    ctx: MethodContext | MethodSigContext,
    what: str,
    declared: Type | None,
    value: Expression,
    *,
    takes: Type | None = None,
) -> None:
    """Report ``value`` unless it suits a key of ``declared`` type: ``<what> is X, not Y``.

    ``takes``: what the value may be when it is more than a key of ``declared`` type takes.
    """
    if declared is None:
        return
    expected = takes if takes is not None else as_key(ctx, declared)
    given = mismatch(ctx, expected, value)
    if given is not None:
        options = ctx.api.options
        shown = declared if takes is not None else expected
        ctx.api.fail(
            f"{what} is {format_type(shown, options)}, not {format_type(given, options)}",
            value,
            code=ARG_TYPE,
        )


def _get_many_keys(ctx: MethodContext) -> Type:
    """``get_many(Model, [{...}, ...])`` and ``get_many([(Model, {...}), ...])``: dict keys."""
    first = ctx.args[0] if ctx.args else []
    if len(first) != 1:
        return ctx.default_return_type
    info = class_of(ctx, first[0])
    if info is not None:
        keys = ctx.args[1] if len(ctx.args) > 1 else []
        if len(keys) == 1 and isinstance(keys[0], ListExpr | TupleExpr):
            for key in keys[0].items:
                _check_key_dict(ctx, f"db.get_many({info.name})", info, key)
    elif isinstance(first[0], ListExpr | TupleExpr):
        _check_pairs(ctx, "db.get_many", first[0].items)
    return ctx.default_return_type


def _transact_get_keys(ctx: MethodContext) -> Type:
    """``transact_get((Model, {...}), ...)``: each pair's dict key."""
    _check_pairs(ctx, "db.transact_get", [e for group in ctx.args for e in group])
    return ctx.default_return_type


def _check_pairs(ctx: MethodContext, call: str, pairs: list[Expression]) -> None:
    for pair in pairs:
        if isinstance(pair, TupleExpr) and len(pair.items) == 2:
            info = class_of(ctx, pair.items[0])
            if info is not None:
                _check_key_dict(ctx, call, info, pair.items[1])


def _sort_condition(ctx: MethodSigContext) -> Instance | None:
    # named_generic_type looks a name up through the package's attributes, which need not
    # hold dynorm.core; the module table holds every module the program imports.
    modules = getattr(ctx.api, "modules", {})
    module = modules.get(SORT_CONDITION.rpartition(".")[0])
    sym = module.names.get("SortCondition") if module is not None else None
    return Instance(sym.node, []) if sym is not None and isinstance(sym.node, TypeInfo) else None


def as_key(ctx: MethodSigContext | MethodContext, field_type: Type) -> Type:
    """What a key argument for a field of ``field_type`` takes: an int for a Decimal too.

    As at run time: a number key is compared as a number, ``part=1`` for ``Decimal("1")``.
    """
    proper = get_proper_type(field_type)
    if isinstance(proper, UnionType):  # Decimal | None
        return UnionType.make_union([as_key(ctx, item) for item in proper.items])
    if isinstance(proper, Instance) and proper.type.fullname == "decimal.Decimal":
        return UnionType.make_union([field_type, ctx.api.named_generic_type("builtins.int", [])])
    return field_type


def _keyed(
    ctx: MethodSigContext, fields: list[str], info: TypeInfo, *, ranges: bool
) -> FunctionLike:
    """The signature with ``**key`` replaced by ``fields`` typed as ``info``'s attributes."""
    sig = ctx.default_signature
    if ARG_STAR2 not in sig.arg_kinds:
        return sig
    types: list[Type] = []
    for name in fields:
        declared = field_type(info, name)
        if declared is None:
            return sig  # not inferred yet (or no such field): leave the call as declared
        types.append(as_key(ctx, declared))
    if ranges:
        condition = _sort_condition(ctx)
        if condition is None:
            return sig
        types = [UnionType.make_union([t, condition]) for t in types]
    star = sig.arg_kinds.index(ARG_STAR2)
    kind = ARG_NAMED_OPT if ranges else ARG_NAMED
    return sig.copy_modified(
        arg_types=[*sig.arg_types[:star], *types, *sig.arg_types[star + 1 :]],
        arg_kinds=[*sig.arg_kinds[:star], *[kind] * len(fields), *sig.arg_kinds[star + 1 :]],
        arg_names=[*sig.arg_names[:star], *fields, *sig.arg_names[star + 1 :]],
    )


def _primary_key_call(ctx: MethodSigContext) -> FunctionLike:
    """``get(Model, **key)`` and ``delete(Model, **key)``: the model's primary key fields."""
    info = _model_info(ctx, 0)
    keys = info.metadata.get(META) if info is not None else None
    if info is None or keys is None:
        return ctx.default_signature
    return _keyed(ctx, keys["primary"], info, ranges=False)


def _query_call(ctx: MethodSigContext) -> FunctionLike:
    """``query(Model, index, **components)``: the fields of that index's (or the table's) keys."""
    info = _model_info(ctx, 0)
    keys = info.metadata.get(META) if info is not None else None
    if info is None or keys is None:
        return ctx.default_signature
    index_args = ctx.args[1] if len(ctx.args) > 1 else []
    if not index_args:
        return _keyed(ctx, keys["primary"], info, ranges=True)
    if isinstance(index_args[0], StrExpr) and index_args[0].value in keys["indexes"]:
        return _keyed(ctx, keys["indexes"][index_args[0].value], info, ranges=True)
    return ctx.default_signature  # an index not named by a literal: checked at run time


#: Method full name -> its signature hook.
KEYED_CALLS: Final[dict[str, Callable[[MethodSigContext], FunctionLike]]] = {
    f"{DATABASE}.get": _primary_key_call,
    f"{DATABASE}.delete": _primary_key_call,
    f"{DATABASE}.query": _query_call,
}

RELATIONSHIP: Final = "dynorm.mapping.relations.Relationship"
LOAD_OPTION: Final = "dynorm.mapping.relations.LoadOption"


def _owner(typ: Type) -> TypeInfo | None:
    """The owner model of a relationship or load option type, when it is known."""
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance):
        return None
    for base, position in ((RELATIONSHIP, 1), (LOAD_OPTION, 0)):
        if proper.type.has_base(base):
            base_info = next(b for b in proper.type.mro if b.fullname == base)
            args = map_instance_to_supertype(proper, base_info).args
            owner = get_proper_type(args[position]) if len(args) > position else None
            return owner.type if isinstance(owner, Instance) else None
    return None


def _named(expr: Expression) -> str:
    if isinstance(expr, CallExpr) and isinstance(expr.callee, MemberExpr):
        return _named(expr.callee.expr)  # Org.users.limit(5): Org.users
    if isinstance(expr, MemberExpr):
        return f"{_named(expr.expr)}.{expr.name}"
    return expr.name if isinstance(expr, NameExpr) else "it"


def _load_owners(ctx: MethodContext) -> Type:
    """``load=[Other.rel]`` on a read of ``Model``: an error naming the relationship."""
    info = _model_info(ctx, 0)
    names = ctx.callee_arg_names
    at = names.index("load") if "load" in names else None
    if info is None or at is None or len(ctx.args[at]) != 1:
        return ctx.default_return_type
    given = ctx.args[at][0]
    for entry in given.items if isinstance(given, ListExpr | TupleExpr) else []:
        owner = _owner(ctx.api.get_expression_type(entry))
        if owner is not None and owner is not info:
            ctx.api.fail(
                f"load=[{_named(entry)}]: a relationship of {owner.name}, not of {info.name}; "
                f"load= takes relationships of {info.name} or their options",
                entry,
                code=MISC,  # the code of mypy's own "Cannot infer" error on the same call
            )
    return ctx.default_return_type


_BOUNDS: Final = frozenset(f"dynorm.core.ranges.{n}" for n in ("between", "gt", "ge", "lt", "le"))


def _check_bounds(ctx: MethodContext) -> None:
    """``query(User, age=gt("3"))``: each bound of a range marker typed as its key field.

    A ``SortCondition`` holds bounds of any type (it is not generic, so pyright users keep one
    name for it); the plugin checks the markers written out in the call. ``begins_with`` takes
    the text a component starts with whatever the field's type, so it is not checked here.
    """
    info = _model_info(ctx, 0)
    call = ctx.context
    if info is None or META not in info.metadata or not isinstance(call, CallExpr):
        return
    for name, arg in zip(call.arg_names, call.args, strict=True):
        if name is None or not isinstance(arg, CallExpr) or not isinstance(arg.callee, RefExpr):
            continue
        if arg.callee.fullname in _BOUNDS:
            marker = arg.callee.fullname.rpartition(".")[2]
            what = f'db.query({info.name}): {marker}(...) on key field "{name}", which'
            declared = field_type(info, name)
            takes = _bound_type(ctx, declared)
            for bound, kind in zip(arg.args, arg.arg_kinds, strict=True):
                if kind in (ARG_POS, ARG_NAMED):  # between(*window): left to the run time
                    check_value(ctx, what, declared, bound, takes=takes)


def _bound_type(ctx: MethodContext, declared: Type | None) -> Type | None:
    """What a bound on a number field takes: any number (None: what the field's key takes).

    On a number key attribute (``key_types={"sk": "N"}``) numbers compare as numbers, so
    ``score=le(100.5)`` bounds an int field soundly; inside a text template the run time wants
    the field's own type. The plugin does not see the table's key types, so it leaves numbers
    to the run time.
    """
    proper = without_none(declared) if declared is not None else None  # a sparse index: int | None
    if isinstance(proper, Instance) and proper.type.fullname in NUMBERS:
        numbers = ("builtins.float", "decimal.Decimal")  # an int is a float to mypy
        return UnionType.make_union([ctx.api.named_generic_type(n, []) for n in numbers])
    return None


def _query_values(ctx: MethodContext) -> Type:
    _check_bounds(ctx)
    return _load_owners(ctx)


#: Method full name -> its hook checking ``{field: value}`` keys or ``load=``.
KEY_DICT_CALLS: Final[dict[str, Callable[[MethodContext], Type]]] = {
    f"{DATABASE}.get_many": _get_many_keys,
    f"{DATABASE}.transact_get": _transact_get_keys,
    f"{DATABASE}.get": _load_owners,
    f"{DATABASE}.query": _query_values,
}
