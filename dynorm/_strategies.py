"""Relationship strategies: frozen values that say where children live and plan how to read them.

Strategies never send anything. They turn a relationship and the parent's field values into
:class:`~dynorm._plans.CollectionRead` values, which the Database executes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import attrs

from ._errors import DefinitionError

if TYPE_CHECKING:
    from ._model import ModelInfo

__all__ = ["Denormalized", "Embedded", "Index", "Partition", "Strategy"]


class Strategy:
    """Base of every strategy."""

    #: The index holding the collection (None: the table), for collection strategies.
    index: str | None = None

    def describe(self) -> str:
        return type(self).__name__ + "()"

    def link(self, parent: ModelInfo[Any], child: ModelInfo[Any], where: str) -> dict[str, str]:
        """Child field -> parent field, from aligning the collection's partition key templates.

        When the parent is not in the children's collection, fields of the same name link them.
        """
        scope = f"index {self.index!r}" if self.index else "the table"
        if self.index is not None and self.index not in child.table.indexes:
            declared = ", ".join(child.table.indexes) or "none"
            raise DefinitionError(
                f"{where} via {self.describe()}: index {self.index!r} is not declared on Table "
                f"{child.table.name!r}; declared: {declared}"
            )
        if self.index is not None and not child.in_index(self.index):
            raise DefinitionError(
                f"{where} via {self.describe()}: {child.name} has no key templates for "
                f"{self.index!r}; declare @table.model(..., {self.index}=(pk, sk))"
            )
        child_pk, child_sk = child.key_templates(self.index)
        mapping = None
        if parent.in_index(self.index) if self.index else True:
            parent_pk, _ = parent.key_templates(self.index)
            mapping = parent_pk.align(child_pk)
        if mapping is None and all(f in parent.field_types for f in child_pk.fields):
            # The parent is not in the children's collection (a user's games in an inverted
            # index): the collection is still found from the parent's fields of the same names.
            mapping = {f: f for f in child_pk.fields}
        if mapping is None:
            parent_pk, _ = parent.key_templates(self.index)
            raise DefinitionError(
                f"{where} via {self.describe()}: children must share the parent's partition in "
                f"{scope}, but {child.name}'s template {child_pk.source!r} does not have the "
                f"shape of {parent.name}'s {parent_pk.source!r}; make the literals match"
            )
        if child_sk is None:
            raise DefinitionError(
                f"{where} via {self.describe()}: {scope} has no sort key, so a partition "
                "holds one item and cannot hold children"
            )
        if parent.in_index(self.index) if self.index else True:
            # Children nested under the parent's own sort key (USER#{u} -> USER#{u}#DEVICE#{d})
            # are narrowed to this parent, not to every sibling's children.
            _, parent_sk = parent.key_templates(self.index)
            nested = parent_sk.align_leading(child_sk) if parent_sk is not None else None
            mapping = {**(nested or {}), **mapping}
        return mapping


@attrs.frozen
class Partition(Strategy):
    """Children share the parent's partition key and have their own sort key prefix.

    Loading the parent with its children is one Query on the table.
    """

    def describe(self) -> str:
        return "Partition()"


@attrs.frozen
class Index(Strategy):
    """Parent and children share an item collection of a secondary index.

    Loading the parent with its children is one Query on the index.
    """

    name: str

    @property
    def index(self) -> str:  # type: ignore[override]
        return self.name

    def describe(self) -> str:
        return f"Index({self.name!r})"


def _check_positive(name: str, value: int | None) -> None:
    if value is not None and (type(value) is not int or value < 1):
        raise DefinitionError(f"{name} must be a positive int; got {value!r}")


@attrs.frozen
class Embedded(Strategy):
    """Children are attrs objects stored inside the parent item.

    With ``key=`` they form a map keyed by that (str) field, else a list. The parent's GetItem
    brings them along; ``db.add``/``db.remove`` change one child with one UpdateItem, refused
    before sending when it would exceed ``max_items`` or DynamoDB's 400 KB item limit.
    ``attribute`` names the stored attribute (default: the relationship's name).
    """

    key: str | None = None
    max_items: int | None = None
    attribute: str | None = None

    def __attrs_post_init__(self) -> None:
        _check_positive("Embedded(max_items=...)", self.max_items)

    def describe(self) -> str:
        return f"Embedded(key={self.key!r}, max_items={self.max_items!r})"


def _frozen_mapping(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(value))


@attrs.frozen
class Denormalized(Strategy):
    """Children live where ``where`` puts them and carry copies of chosen parent fields.

    ``copy={"birthdate": "author_birthdate"}`` maps parent fields to child fields. ``db.add``
    fills the copies; ``db.put(parent)`` rewrites every child whose copy changed, and refuses,
    with nothing written, when more than ``max_fanout`` children would need rewriting.
    """

    copy: Mapping[str, str] = attrs.field(converter=_frozen_mapping)
    where: Strategy = attrs.field(factory=Partition)
    max_fanout: int = 100

    def __attrs_post_init__(self) -> None:
        _check_positive("Denormalized(max_fanout=...)", self.max_fanout)
        if not self.copy:
            raise DefinitionError("Denormalized(copy=...) needs at least one parent field")
        if isinstance(self.where, Embedded | Denormalized):
            raise DefinitionError(
                "Denormalized(where=...) takes Partition() or Index(name): where the children live"
            )

    @property
    def index(self) -> str | None:  # type: ignore[override]
        return self.where.index

    def describe(self) -> str:
        return f"Denormalized(copy={dict(self.copy)!r})"

    def link(self, parent: ModelInfo[Any], child: ModelInfo[Any], where: str) -> dict[str, str]:
        for parent_field, child_field in self.copy.items():
            if parent_field not in parent.field_types:
                raise DefinitionError(
                    f"{where} via {self.describe()}: {parent.name} has no field {parent_field!r}"
                )
            if child_field not in child.field_types:
                raise DefinitionError(
                    f"{where} via {self.describe()}: {child.name} has no field {child_field!r} "
                    f"to hold the copy of {parent.name}.{parent_field}; add it (with a default)"
                )
        return self.where.link(parent, child, where)
