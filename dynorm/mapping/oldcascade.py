"""The children a cascading delete finds in a relationship's old layout (``was=``).

While ``HasMany(via=NEW, was=OLD)`` is declared, the children not yet migrated are still where
``OLD`` put them. When that is a collection of items (``Partition``, ``Index``, shards), a
cascading delete of the parent reads it too, with the Queries a union read sends there
(:func:`dynorm.mapping.union.union_read`), and deletes each old item by the key it is stored
under. An old item is the child it becomes once moved (``ItemMove``), which gives the values the
cascade follows further down; children that become embedded are items of the child model,
which still declares where they were. An old ``Embedded`` layout needs nothing: its children go
with the parent's item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.requests import CollectionRead

from .model import ModelInfo, ModelTable
from .oldlayout import ItemMove
from .relations import HasManyRelation, relationships_of
from .union import union_read

__all__ = ["OldLayout", "old_layouts", "was_collections"]


class OldLayout(msgspec.Struct, frozen=True):
    """One parent's old-layout reads of one relationship, and how their items are children."""

    rel: HasManyRelation[Any]
    reads: tuple[CollectionRead, ...]
    move: ItemMove | None
    #: the old layout's index (its items may be held there in part), None: the table
    index: str | None

    def child_item(self, raw: Item) -> Item | None:
        """The child item ``raw`` (as read) stands for (None: not an old child of this one)."""
        found = raw if self.move is None else self.move.moved_item(raw)
        if found is None or self.rel.target_info.primary_key_of_item(found) is None:
            return None
        return found


def was_collections(info: ModelInfo[Any]) -> list[HasManyRelation[Any]]:
    """The relationships of ``info`` whose old layout (``was=``) stores items of their own."""
    return [
        rel
        for rel in relationships_of(info).values()
        if isinstance(rel, HasManyRelation) and rel.was is not None and rel.was.cascades
    ]


def old_layouts(
    info: ModelInfo[Any], names: Mapping[ModelTable, str], values: Mapping[str, object]
) -> list[OldLayout]:
    """The old-layout reads of each such relationship for the parent of ``values``.

    Read strongly consistently where they read the table (an index has no such reads), as a
    cascade's other reads are: an old item written just before must not be left behind.
    """
    found = []
    for rel in was_collections(info):
        union = union_read(rel, names[rel.children_table], values)
        reads = tuple(
            msgspec.structs.replace(read, consistent=read.index is None) for read in union.old_reads
        )
        assert rel.was is not None  # noqa: S101 - was_collections holds was= ones only
        found.append(OldLayout(rel, reads, union.move, rel.was.index))
    return found
