"""``--from "Index('GSI1')"``: a strategy written as it is declared, read without running code."""

from __future__ import annotations

import ast
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
    args = [_literal(a, text) for a in node.args]
    kwargs = {k.arg: _literal(k.value, text) for k in node.keywords if k.arg is not None}
    try:
        return kind(*args, **kwargs)
    except TypeError as exc:
        raise StrategyError(f"{text!r}: {exc}") from None


def parse_strategy(text: str) -> Strategy:
    """The strategy ``text`` declares: ``Index('GSI1')``; a bare name means no arguments."""
    source = text.strip()
    if source in _STRATEGIES:
        source += "()"
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
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
