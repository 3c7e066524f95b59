"""``rules.RULES``: the one table of field types both the cattrs converter and ``Hooks`` walk.

Adding a type is one row: the converter registers it and ``Hooks`` makes it without cattrs.
"""

from __future__ import annotations

import decimal
from typing import Any

import msgspec
import pytest

from dynorm.core import limits
from dynorm.core.codec import rules
from dynorm.core.codec.converter import Hooks, make_converter
from dynorm.core.codec.rules import RULES, TypeRule


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents


def _read(v: Any, _: object) -> Money:
    return Money(int(v["N"]))


def _write(v: Any) -> dict[str, str]:
    return {"N": str(v.cents)}


def _money_row() -> TypeRule:
    return TypeRule(
        "Money",
        lambda _c, _tp: _read,
        lambda _c, _tp: _write,
        cls=Money,
        own=lambda tp: tp is Money,
    )


def test_one_row_is_seen_by_the_converter_and_by_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "RULES", (_money_row(), *RULES))
    hooks = Hooks()
    assert hooks.get_structure_hook(Money) is _read
    assert hooks.get_unstructure_hook(Money) is _write
    assert hooks._converter is None  # made from the row, without cattrs
    converter = make_converter()
    assert converter.get_structure_hook(Money) is _read
    assert converter.get_unstructure_hook(Money) is _write


def test_a_row_without_own_is_left_to_cattrs(monkeypatch: pytest.MonkeyPatch) -> None:
    row = msgspec.structs.replace(_money_row(), own=None)
    monkeypatch.setattr(rules, "RULES", (row, *RULES))
    hooks = Hooks()
    assert hooks.get_structure_hook(Money) is _read
    assert hooks._converter is not None  # asked of the converter, which registered the row


def test_every_row_covers_a_class_or_a_form() -> None:
    for rule in RULES:
        assert (rule.cls is None) != (rule.matches is None), rule.what


def test_the_checks_named_are_core_limits_own() -> None:
    named = {check for rule in RULES for check in rule.checks}
    assert limits.check_decimal in named
    assert all(getattr(limits, check.__name__) is check for check in named)
    (decimal_row,) = [rule for rule in RULES if rule.cls is decimal.Decimal]
    assert decimal_row.checks == (limits.check_decimal,)


def test_the_inline_templates_are_read_off_the_rows() -> None:
    hooks = Hooks()
    by_class = [rule for rule in RULES if rule.cls is not None]
    assert set(rules.INLINE_UNSTRUCTURE) == {rule.cls for rule in by_class}
    for rule in by_class:
        assert rule.cls is not None
        hook, guard, expression = rules.INLINE_UNSTRUCTURE[rule.cls]
        assert hook is hooks.get_unstructure_hook(rule.cls)
        assert (guard, expression) == rule.write
        if rule.read is not None:
            assert rules.INLINE_STRUCTURE[rule.cls] == (
                hooks.get_structure_hook(rule.cls),
                rule.read,
            )
        if rule.parse is not None:
            assert rules.TEXT_STRUCTURE[rule.cls] == (
                hooks.get_structure_hook(rule.cls),
                rule.parse,
            )
    assert hooks._converter is None
