"""Relationship strategies: frozen values that say where children live and plan how to read them.

Strategies never send anything. They turn a relationship and the parent's field values into
:class:`~dynorm._plans.CollectionRead` values, which the Database executes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from ._errors import DefinitionError

if TYPE_CHECKING:
    from ._model import ModelInfo

__all__ = ["Index", "Partition", "Strategy"]


class Strategy:
    """Base of every strategy."""

    #: The index holding the collection (None: the table), for collection strategies.
    index: str | None = None

    def describe(self) -> str:
        return type(self).__name__ + "()"

    def link(self, parent: ModelInfo[Any], child: ModelInfo[Any], where: str) -> dict[str, str]:
        """Child field -> parent field, from aligning the collection's partition key templates."""
        scope = f"index {self.index!r}" if self.index else "the table"
        for info in (parent, child):
            if self.index is not None and not info.in_index(self.index):
                raise DefinitionError(
                    f"{where} via {self.describe()}: {info.name} has no key templates for "
                    f"{self.index!r}; declare @table.model(..., {self.index}=(pk, sk))"
                )
        parent_pk, _ = parent.key_templates(self.index)
        child_pk, child_sk = child.key_templates(self.index)
        mapping = parent_pk.align(child_pk)
        if mapping is None:
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
