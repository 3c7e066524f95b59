"""mypy plugin: ``@table.model(...)`` makes an attrs class for mypy, as it does at run time.

Enable it with one line in the project's mypy configuration::

    [tool.mypy]
    plugins = ["dynorm.mypy"]

pyright needs nothing: it honours the ``dataclass_transform`` on ``Table.model``. mypy honours
``dataclass_transform`` only on functions, base classes and metaclasses it can name while it
analyses the class, and ``table.model`` is a method of an instance it cannot name then. The
plugin names it: for each class decorated with ``<table>.model(...)`` where ``<table>`` is a
:class:`dynorm.Table`, the decorator is given the name
``dynorm.mapping.table.Table.model``, and mypy's
own attrs plugin builds the class as ``attrs.define`` does (``__init__``, slots, comparison,
hashing), which is what ``table.model`` applies at run time. ``dynorm.field(...)`` is read as
``attrs.field`` (``default``, ``factory``, ``kw_only``, ``init``, ``alias``, ``converter``).

A table variable assigned in the same module is recognised from its assignment
(``table = Table(...)``, or a call of a function annotated ``-> Table``); one whose type mypy
cannot see yet needs an annotation, ``table: Table = ...``, and the plugin says so.

Key arguments are typed too (``mypy_keys.py``): ``db.get(User, uid=123)`` and
``db.query(User, uidd="x")`` are errors naming the field, as ``User(uid=123)`` is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    Block,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    ListExpr,
    MemberExpr,
    NameExpr,
    RefExpr,
    Statement,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.plugin import (
    ClassDefContext,
    MethodContext,
    MethodSigContext,
    Plugin,
    ReportConfigContext,
)
from mypy.plugins import attrs as attrs_plugin
from mypy.types import CallableType, FunctionLike, Instance, Type, get_proper_type

from .mypy_keys import KEY_DICT_CALLS, KEYED_CALLS, record_keys
from .mypy_updates import UPDATE_CALLS

__all__ = ["plugin"]

TABLE: Final = "dynorm.mapping.table.Table"
MODEL: Final = f"{TABLE}.model"
FIELD: Final = "dynorm.core.fields.field"

# The class decorators that make an attrs class themselves: a model stacked on one of them is
# an attrs class already, and table.model leaves it as it is.
_ATTRS_MAKERS: Final = (
    attrs_plugin.attr_class_makers
    | attrs_plugin.attr_dataclass_makers
    | attrs_plugin.attr_frozen_makers
    | attrs_plugin.attr_define_makers
)


# mypy keys its cache by the entry module (dynorm/mypy.py) alone: a changed hook here would
# leave results of the old one cached, so every module reports the plugin's own source hash.
_SOURCE_HASH: Final = hashlib.sha256(
    b"".join(
        Path(__file__).with_name(n).read_bytes()
        for n in ("mypy_plugin.py", "mypy_keys.py", "mypy_updates.py")
    )
).hexdigest()


class DynormPlugin(Plugin):
    """Hooks ``@table.model(...)`` into mypy's attrs support."""

    def report_config_data(self, ctx: ReportConfigContext) -> str:
        return _SOURCE_HASH

    def get_customize_class_mro_hook(
        self, fullname: str
    ) -> Callable[[ClassDefContext], None] | None:
        # Called for every class before its decorators are analysed: the one place where a
        # plugin can name a decorator that mypy leaves unnamed.
        return _name_model_decorators

    def get_class_decorator_hook(self, fullname: str) -> Callable[[ClassDefContext], None] | None:
        return attrs_plugin.attr_tag_callback if fullname == MODEL else None

    def get_class_decorator_hook_2(self, fullname: str) -> Callable[[ClassDefContext], bool] | None:
        return _make_attrs_class if fullname == MODEL else None

    def get_method_signature_hook(
        self, fullname: str
    ) -> Callable[[MethodSigContext], FunctionLike] | None:
        # db.get(User, **key) and the like take the model's key fields, typed (mypy_keys.py);
        # update's paths and values are checked against the model (mypy_updates.py).
        return KEYED_CALLS.get(fullname) or UPDATE_CALLS.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        # get_many and transact_get take keys as {field: value} dicts: checked field by field.
        return KEY_DICT_CALLS.get(fullname)


def plugin(version: str) -> type[Plugin]:
    """The entry point mypy calls: the plugin class (any mypy version with the attrs plugin)."""
    # dynorm.field is attrs.field with storage options: let the attrs plugin read its
    # default/factory/kw_only/init/alias/converter arguments as it reads attrs.field's.
    attrs_plugin.attr_attrib_makers.add(FIELD)
    return DynormPlugin


def _name_model_decorators(ctx: ClassDefContext) -> None:
    for decorator in ctx.cls.decorators:
        if not (
            isinstance(decorator, CallExpr)
            and isinstance(decorator.callee, MemberExpr)
            and decorator.callee.name == "model"
        ):
            continue
        callee = decorator.callee
        if callee.fullname:
            continue  # named already: a module attribute, or an earlier pass
        verdict = _is_table(ctx, callee.expr)
        if verdict:
            callee.fullname = MODEL
        elif verdict is None and "pk" in decorator.arg_names:
            ctx.api.fail(
                "dynorm.mypy cannot tell whether this is a dynorm Table's model decorator; "
                f"annotate the table where it is assigned: `{_dotted(callee.expr)}: Table = ...`",
                decorator,
            )


def _is_table(ctx: ClassDefContext, expr: Expression) -> bool | None:
    """Whether ``expr`` is a dynorm Table (None: cannot tell)."""
    name = _dotted(expr)
    if name is None:
        return False
    sym = ctx.api.lookup_qualified(name, expr, suppress_errors=True)
    if sym is None or not isinstance(sym.node, Var):
        return False
    var = sym.node
    if var.type is not None:
        typ = get_proper_type(var.type)
        return isinstance(typ, Instance) and typ.type.has_base(TABLE)
    # Not type-checked yet (assigned in this module): read the assignment.
    return _assigned_table(ctx.api.modules[ctx.api.cur_mod_id].defs, var)


def _dotted(expr: Expression) -> str | None:
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        base = _dotted(expr.expr)
        return None if base is None else f"{base}.{expr.name}"
    return None


def _assigned_table(statements: Iterable[Statement], var: Var) -> bool | None:
    """Whether the last ``var = ...`` in ``statements`` (nested blocks too) makes a Table.

    None: no such assignment, or one whose value mypy does not know yet.
    """
    verdict: bool | None = None
    for stmt in statements:
        if isinstance(stmt, AssignmentStmt):
            for lvalue in stmt.lvalues:
                for target, value in _pairs(lvalue, stmt.rvalue):
                    if isinstance(target, NameExpr) and target.node is var:
                        verdict = _makes_table(value)
        for block in _blocks(stmt):
            inner = _assigned_table(block.body, var)
            verdict = inner if inner is not None else verdict
    return verdict


def _pairs(lvalue: Expression, rvalue: Expression) -> list[tuple[Expression, Expression]]:
    """``a, b = x, y`` as (a, x), (b, y); ``a = x`` as (a, x)."""
    if isinstance(lvalue, TupleExpr | ListExpr) and isinstance(rvalue, TupleExpr | ListExpr):
        if len(lvalue.items) == len(rvalue.items):
            return [
                p for lv, rv in zip(lvalue.items, rvalue.items, strict=True) for p in _pairs(lv, rv)
            ]
        return []
    return [(lvalue, rvalue)]


def _makes_table(value: Expression) -> bool | None:
    """Whether ``value`` calls a Table class, or a function annotated to return one."""
    if not (isinstance(value, CallExpr) and isinstance(value.callee, RefExpr)):
        return None
    node = value.callee.node
    if isinstance(node, TypeInfo):
        return node.has_base(TABLE)
    func = node.func if isinstance(node, Decorator) else node
    if isinstance(func, FuncDef) and isinstance(func.type, CallableType):
        returned = get_proper_type(func.type.ret_type)
        return isinstance(returned, Instance) and returned.type.has_base(TABLE)
    return None


def _blocks(stmt: Statement) -> list[Block]:
    """The blocks directly inside a statement: bodies, branches, handlers."""
    node: object = stmt.func if isinstance(stmt, Decorator) else stmt
    found: list[Block] = []
    for name in ("body", "defs", "handlers", "else_body", "finally_body"):
        value = getattr(node, name, None)
        found += [
            b for b in (value if isinstance(value, list) else [value]) if isinstance(b, Block)
        ]
    return found


def _make_attrs_class(ctx: ClassDefContext) -> bool:
    """Apply attrs.define to the class, as Table.model does at run time.

    Unless a stacked attrs decorator builds it; a subclass of an attrs class is built again
    (with its own fields), as at run time.
    """
    info = ctx.cls.info
    if isinstance(ctx.reason, CallExpr):
        record_keys(info, ctx.reason)
    for decorator in ctx.cls.decorators:
        target = decorator.callee if isinstance(decorator, CallExpr) else decorator
        if isinstance(target, RefExpr) and target.fullname in _ATTRS_MAKERS:
            return True  # stacked @attrs.define: that decorator's hook builds the class
    # attrs.define with its defaults: the decorator's own keywords (pk=, sk=, index names) are
    # not attrs options, so the attrs plugin is shown a call without arguments.
    callee = ctx.reason.callee if isinstance(ctx.reason, CallExpr) else ctx.reason
    bare = CallExpr(callee, [], [], [])
    bare.set_line(ctx.reason)
    maker = partial(
        attrs_plugin.attr_class_maker_callback, auto_attribs_default=None, slots_default=True
    )
    return maker(ClassDefContext(ctx.cls, bare, ctx.api))
