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

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.keys import KeyTemplate

if TYPE_CHECKING:
    from .model import ModelInfo
    from .table import Table

__all__ = ["Classifier", "ModelTests"]

ItemTest = Callable[[Mapping[str, AttributeValue]], bool]


def _never(_item: Mapping[str, AttributeValue]) -> bool:
    return False


@attrs.frozen
class ModelTests:
    """How one model's items are told from others' in one table (or index).

    ``whole``: for any item of the scope (a scan, a stream record), both keys tested.
    ``in_collection``: for items of an item collection this model's partition template
    addresses (a Query's results, a read by key), only the sort key is tested.
    ``shape``: ``in_collection`` as (attribute, literal prefix, delimiter, delimiter count),
    when those decide it and the table has no type attribute, for loops that inline it.
    ``keys``: ``whole`` without the type attribute (what decides items that lack it).
    """

    whole: ItemTest = _never
    in_collection: ItemTest = _never
    shape: tuple[str, str, str, int] | None = None
    keys: ItemTest = _never


_OUTSIDE = ModelTests()


def _key_test(attr: str, template: KeyTemplate) -> ItemTest:
    shape = template.tail_only_shape()
    if shape is not None:
        prefix, delimiter, count = shape

        def fits_shape(item: Mapping[str, AttributeValue]) -> bool:
            value = item.get(attr)
            text = None if value is None else value.get("S")
            return text is not None and text.startswith(prefix) and text.count(delimiter) == count

        return fits_shape
    matches = template.matches

    def fits(item: Mapping[str, AttributeValue]) -> bool:
        value = item.get(attr)
        text = None if value is None else value.get("S")
        return text is not None and matches(text)

    return fits


def _both(first: ItemTest, second: ItemTest) -> ItemTest:
    return lambda item: first(item) and second(item)


def _by_entity(type_attr: str, entity: str, by_keys: ItemTest) -> ItemTest:
    def of_entity(item: Mapping[str, AttributeValue]) -> bool:
        stored = item.get(type_attr)
        if stored is not None:
            return stored.get("S") == entity
        return by_keys(item)  # written without it: decided by the keys

    return of_entity


def _tests(info: ModelInfo[Any], index: str | None) -> ModelTests:
    pk_attr, sk_attr = info.table.key_attributes(index)
    pk = info.templates[pk_attr]
    sk = info.templates.get(sk_attr) if sk_attr is not None else None
    # The sort key first: it is what usually tells models of one collection apart.
    last_attr, last = (sk_attr, sk) if sk_attr is not None and sk is not None else (pk_attr, pk)
    in_collection = _key_test(last_attr, last)
    whole = in_collection if last is pk else _both(in_collection, _key_test(pk_attr, pk))
    type_attr = info.table.type_attribute
    if info.entity is not None and type_attr is not None:
        return ModelTests(
            whole=_by_entity(type_attr, info.entity, whole),
            in_collection=_by_entity(type_attr, info.entity, in_collection),
            keys=whole,
        )
    shape = last.tail_only_shape()
    return ModelTests(
        whole=whole,
        in_collection=in_collection,
        shape=None if shape is None else (last_attr, *shape),
        keys=whole,
    )


class Classifier:
    """Which model an item of one table (``index`` None) or index is; see the module docstring.

    ``classifier(item)`` is the model or None; ``classifier.tests(info)`` one model's tests.
    """

    __slots__ = ("_by_entity", "_by_keys", "_tests", "_type_attr", "index", "models")

    def __init__(self, table: Table, index: str | None) -> None:
        table.key_attributes(index)  # an undeclared index is refused here, not per item
        self.index = index
        #: The models whose items the scope can hold, in declaration order.
        self.models = tuple(
            info for info in table.models.values() if index is None or info.in_index(index)
        )
        self._type_attr = table.type_attribute
        self._by_entity = {info.entity: info for info in self.models if info.entity is not None}
        self._tests = {info: _tests(info, index) for info in self.models}
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
        return self._tests.get(info, _OUTSIDE)
