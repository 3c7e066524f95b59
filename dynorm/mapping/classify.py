"""Which model an item is: one decision per table (or index), made the same way by every read.

An item holding the table's type attribute is the model whose entity name it stores (or none);
an item without it (written before the table had one, or by another tool) is decided by its keys:
the first model, in declaration order, whose key templates fit them. Models that can share an
item collection were checked at declaration to be told apart by their keys (without a type
attribute).

``Table.classifier(index)`` builds the classifier once and keeps it until the next model is
declared. Queries, scans, counts, projections, stream records and reads by key all ask it (or the
per-model tests it holds), so no two reads can disagree about an item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynorm.core.codec.converter import AttributeValue

from .itemtests import OUTSIDE, ModelTests
from .model import ModelInfo, ModelTable

__all__ = ["Classifier"]


class Classifier:
    """Which model an item of one table (``index`` None) or index is; see the module docstring.

    ``classifier(item)`` is the model or None; ``classifier.tests(info)`` one model's tests.
    """

    __slots__ = ("_by_entity", "_by_keys", "_tests", "_type_attr", "index", "models")

    def __init__(self, table: ModelTable, index: str | None) -> None:
        table.key_attributes(index)  # an undeclared index is refused here, not per item
        self.index = index
        #: The models whose items the scope can hold, in declaration order.
        self.models = tuple(
            info for info in table.models.values() if index is None or info.in_index(index)
        )
        self._type_attr = table.type_attribute
        self._by_entity = {info.entity: info for info in self.models if info.entity is not None}
        self._tests = {info: info.tests(index) for info in self.models}
        self._by_keys = tuple((info, tests.keys) for info, tests in self._tests.items())

    def __call__(self, item: Mapping[str, AttributeValue]) -> ModelInfo[Any] | None:
        if self._type_attr is not None:
            stored = item.get(self._type_attr)
            if stored is not None:
                return self._by_entity.get(stored.get("S", ""))
        for info, fits in self._by_keys:
            if fits(item):
                return info
        return None

    def tests(self, info: ModelInfo[Any]) -> ModelTests:
        """``info``'s tests in this scope (never true for a model the scope cannot hold)."""
        return self._tests.get(info, OUTSIDE)
