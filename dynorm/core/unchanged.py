"""A condition that a stored item is still as it was read: ``Unchanged``, ``unchanged(item)``.

Conditioned writes of migrations and of ``was=`` moves delete or rewrite an item only while it
holds what was read, so a concurrent writer's change is never lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.expressions import Condition, ExpressionBuilder, equal_to

__all__ = ["MAX_EXPRESSION", "Unchanged", "unchanged"]

#: DynamoDB's longest expression string; an ``Unchanged`` condition is made shallower to fit.
MAX_EXPRESSION: Final = 4096


@attrs.frozen
class Unchanged(Condition):
    """Holds while the stored item's ``attributes`` are as ``item`` holds them (absent: absent).

    Maps and lists are compared member by member (``equal_to``); when that would not fit in one
    expression, by their members' presence and their size, and at last by size alone.
    """

    item: Mapping[str, AttributeValue]
    attributes: tuple[str, ...]

    def render(self, builder: ExpressionBuilder) -> str:
        for depth in (2, 1, 0):
            if len(self._render(ExpressionBuilder(), depth)) < MAX_EXPRESSION // 2:
                break
        return self._render(builder, depth)

    def _render(self, builder: ExpressionBuilder, depth: int) -> str:
        parts: list[str] = []
        for name in self.attributes:
            path = builder.attribute(name)
            value = self.item.get(name)
            if value is None:
                parts.append(f"attribute_not_exists({path})")
            else:
                parts += _same_as(builder, path, value, depth)
        return " AND ".join(parts)


def _same_as(builder: ExpressionBuilder, path: str, value: AttributeValue, depth: int) -> list[str]:
    """``equal_to``, each map and list asked to exist before its size is compared.

    (``size()`` of a missing attribute is an error on some DynamoDB implementations, not false;
    every implementation stops an AND at its first false term.) ``depth`` 2 compares members
    down to scalars, 1 a map's member names and sizes, 0 sizes only.
    """
    kind, inner = next(iter(value.items()))
    if kind not in ("M", "L"):
        return equal_to(builder, path, value)
    parts = [
        f"attribute_exists({path})",
        f"size({path}) = {builder.value({'N': str(len(inner))})}",
    ]
    if depth == 2 and kind == "M":
        for member, held in inner.items():
            parts += _same_as(builder, f"{path}.{builder.attribute(member)}", held, depth)
    elif depth == 2:
        for i, held in enumerate(inner):
            parts += _same_as(builder, f"{path}[{i}]", held, depth)
    elif depth == 1 and kind == "M":
        parts += [f"attribute_exists({path}.{builder.attribute(k)})" for k in inner]
    return parts


def unchanged(item: Mapping[str, AttributeValue]) -> Unchanged:
    """The condition that the whole stored ``item`` is still as read."""
    return Unchanged(item, tuple(item))
