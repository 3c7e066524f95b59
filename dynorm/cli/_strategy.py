"""``--from "Index('GSI1')"``: a strategy written as it is declared, read without running code."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from typing import Any

import click

from dynorm.core.errors import DynormError
from dynorm.mapping.strategies import Denormalized, Embedded, Index, Partition, Strategy

__all__ = ["StrategyParam", "parse_strategy"]

_STRATEGIES: dict[str, type[Strategy]] = {
    "Partition": Partition,
    "Index": Index,
    "Embedded": Embedded,
    "Denormalized": Denormalized,
}
_EXAMPLES = "Partition(), Index('GSI1'), Embedded(key='nickname')"

#: Longer text is no strategy declaration (and is not worth parsing).
_LONGEST = 1000


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_optional_int(value: object) -> bool:
    return value is None or type(value) is int


def _is_copy(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


#: Each strategy's arguments: what a value must be, and how to say so.
_ARGUMENTS: dict[str, dict[str, tuple[Callable[[object], bool], str]]] = {
    "Partition": {"shards": (lambda v: type(v) is int, "a whole number of shards")},
    "Index": {
        "name": (_is_str, "an index name (a string)"),
        "shards": (lambda v: type(v) is int, "a whole number of shards"),
    },
    "Embedded": {
        "key": (_is_optional_str, "a field name (a string)"),
        "max_items": (_is_optional_int, "a whole number"),
        "attribute": (_is_optional_str, "an attribute name (a string)"),
    },
    "Denormalized": {
        "copy": (_is_copy, "a dict of parent field to child field names (strings)"),
        "where": (lambda v: isinstance(v, Partition | Index), "Partition() or Index('...')"),
        "max_fanout": (lambda v: type(v) is int, "a whole number"),
    },
}


class StrategyError(ValueError):
    """Text that is not a strategy declaration."""


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.Call):
        return _call(node, text)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise StrategyError(
            f"{text!r}: arguments must be literals (strings, numbers, dicts); "
            f"got {ast.unparse(node)!r}"
        ) from None


def _call(node: ast.Call, text: str) -> Strategy:
    name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
    kind = _STRATEGIES.get(name)
    if kind is None:
        raise StrategyError(
            f"{text!r}: {name!r} is not a strategy; write one of {', '.join(_STRATEGIES)}, "
            f"e.g. {_EXAMPLES}"
        )
    if any(k.arg is None for k in node.keywords) or any(
        isinstance(a, ast.Starred) for a in node.args
    ):
        raise StrategyError(f"{text!r}: write each argument out (no * or **)")
    args = [_literal(a, text) for a in node.args]
    kwargs = {k.arg: _literal(k.value, text) for k in node.keywords if k.arg is not None}
    try:
        bound = inspect.signature(kind).bind(*args, **kwargs)
    except TypeError as exc:
        raise StrategyError(f"{text!r}: {name}(): {exc}") from None
    for argument, value in bound.arguments.items():
        check, what = _ARGUMENTS[name][argument]
        if not check(value):
            raise StrategyError(f"{text!r}: {name}({argument}=...) takes {what}; got {value!r}")
    return kind(*bound.args, **bound.kwargs)


def parse_strategy(text: str) -> Strategy:
    """The strategy ``text`` declares: ``Index('GSI1')``; a bare name means no arguments."""
    source = text.strip()
    if len(source) > _LONGEST:
        raise StrategyError(
            f"{text[:40]!r}… ({len(text)} characters) is too long for a strategy; write it as "
            f"declared: {_EXAMPLES}"
        )
    if source in _STRATEGIES:
        source += "()"
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise StrategyError(
            f"{text!r} is not a strategy; write it as declared: {_EXAMPLES}"
        ) from None
    if not isinstance(tree.body, ast.Call):
        raise StrategyError(f"{text!r} is not a strategy; write it as declared: {_EXAMPLES}")
    return _call(tree.body, text)


class StrategyParam(click.ParamType):  # type: ignore[type-arg]
    """A command option naming a strategy as it is declared."""

    name = "STRATEGY"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Strategy):
            return value
        try:
            return parse_strategy(str(value))
        except StrategyError as exc:
            self.fail(str(exc), param, ctx)
        except DynormError as exc:  # the strategy's own checks: Embedded(max_items=0)
            self.fail(f"{value!r}: {exc}", param, ctx)
