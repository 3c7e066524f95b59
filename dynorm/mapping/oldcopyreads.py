"""The children a parent's copy rewrite finds in a relationship's old layout (``was=``).

While ``HasMany(via=Denormalized(...), was=OLD)`` is declared, the children not yet migrated
are still where ``OLD`` put them, carrying copies of the parent's fields as well: a write of the
parent that changes a copied field rewrites theirs too, in place, at the key each is stored
under (``CopyPlanner``). They are read with the Queries a union read sends there
(:func:`dynorm.mapping.union.union_read`), strongly consistently where they read the table,
and BEFORE the new layout is read: a migration's move puts the new item before it deletes the
old one, so a child deleted from the old layout before that read is in the new layout before
the new layout's read (which finds it), and a child the old read finds and the migration moves
meanwhile makes its rewrite at the old key fail (it is conditioned on the item existing, and a
move's delete on the item being as read), and the children are read again. An old
``Embedded`` layout holds no copies: its children take them as they move out of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from dynorm.core.chunks import key_id
from dynorm.core.codec.converter import Item
from dynorm.core.requests import Request
from dynorm.core.steps import Fetch, Plan, Unread, read_each

from .relations import HasManyRelation
from .union import UnionRead, union_read

__all__ = ["OldChild", "old_children"]


class OldChild:
    """A child still in the old layout: the object it reads as, and the key it is stored under."""

    __slots__ = ("key", "obj")

    def __init__(self, obj: object, key: Item) -> None:
        self.obj = obj
        self.key = key

    def at_stored_key(self, request: Request) -> Request:
        """``request`` (a write of the child by its new key) sent to where it is stored."""
        return msgspec.structs.replace(request, params={**request.params, "Key": self.key})


def _unions(
    rels: Sequence[HasManyRelation[Any]], table_name: str, values: Mapping[str, object]
) -> list[tuple[int, UnionRead]]:
    """The union reads of each relationship whose old layout is a collection of items."""
    found = []
    for at, rel in enumerate(rels):
        if rel.was is None or rel.embedded is not None or rel.was.embedded_codec(rel) is not None:
            continue
        union = union_read(rel, table_name, values)
        reads = tuple(
            msgspec.structs.replace(read, consistent=read.index is None) for read in union.old_reads
        )
        found.append((at, msgspec.structs.replace(union, old_reads=reads)))
    return found


def old_children(
    rels: Sequence[HasManyRelation[Any]], table_name: str, values: Mapping[str, object]
) -> Plan[list[list[OldChild]]]:
    """Each of ``rels``' children still in its old layout (none without ``was=``), one step."""
    out: list[list[OldChild]] = [[] for _ in rels]
    unions = _unions(rels, table_name, values)
    reads = [(at, union, read) for at, union in unions for read in union.old_reads]
    answers = yield from read_each([read for _, _, read in reads])
    partial: list[tuple[int, UnionRead, Item]] = []
    for (at, union, _), items in zip(reads, answers, strict=True):
        for raw in items:
            if union.old_whole:  # the index holds them in part: read whole below
                partial.append((at, union, _primary(union, raw)))
            else:
                _take(out[at], union, raw)
    if partial:
        whole = yield Fetch(tuple({key_id(k): k for _, _, k in partial}.values()))
        if not isinstance(whole, Unread):  # planned by explain: nothing read
            for at, union, key in partial:
                raw = whole.get(key_id(key))
                if raw is not None:
                    _take(out[at], union, raw)
    return out


def _primary(union: UnionRead, raw: Item) -> Item:
    return {a: raw[a] for a in union.child.table.primary_attributes}


def _take(into: list[OldChild], union: UnionRead, raw: Item) -> None:
    found = union.decode_old(dict(raw))
    if found is not None:
        into.append(OldChild(found[0], _primary(union, raw)))
