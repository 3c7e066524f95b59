"""Declarations of relationships declaring ``was=``, with the old declarations beside them.

Each pair of Tables has one stored name: tests write old-layout data through a Database on the
old declaration and read and write through the current one.
"""

from __future__ import annotations

import attrs

from dynorm import GSI, Embedded, HasMany, Index, Partition, Table

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]

# -- Partition() -> Index("GSI1"), was=Partition() -------------------------------------------------

old_move = Table("was-move", pk="pk", sk="sk", indexes=INDEXES)
new_move = Table("was-move", pk="pk", sk="sk", indexes=INDEXES)


@old_move.model(pk="P#{parent_id}", sk="#PARENT#{parent_id}")
class OldParent:
    parent_id: str
    items = HasMany["OldItem"](via=Partition())


@old_move.model(pk="P#{parent_id}", sk="ITEM#{name}")
class OldItem:
    parent_id: str
    name: str
    qty: int = 0


@new_move.model(
    pk="P#{parent_id}", sk="#PARENT#{parent_id}", GSI1=("P#{parent_id}", "#PARENT#{parent_id}")
)
class Parent:
    parent_id: str
    title: str = ""
    items = HasMany["Item"](via=Index("GSI1"), was=Partition())
    plain = HasMany["Item"](via=Index("GSI1"))  # the same children, no was=


@new_move.model(
    pk="I#{parent_id}#{name}", sk="I#{parent_id}#{name}", GSI1=("P#{parent_id}", "ITEM#{name}")
)
class Item:
    parent_id: str
    name: str
    qty: int = 0


# -- Embedded(key="name") -> Partition(), and back ------------------------------------------------

embedded = Table("was-embed", pk="pk", sk="sk")
rows = Table("was-embed", pk="pk", sk="sk")


@attrs.define
class Line:
    name: str
    qty: int = 0


@embedded.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class EOrder:
    order_id: str
    lines = HasMany[Line](Line, via=Embedded(key="name"))


@rows.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class ROrder:
    order_id: str
    lines = HasMany["RLine"](via=Partition(), was=Embedded(key="name"))


@rows.model(pk="O#{order_id}", sk="LINE#{name}")
class RLine:
    order_id: str
    name: str
    qty: int = 0


into_map = Table("was-embed", pk="pk", sk="sk")


@into_map.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class MOrder:
    order_id: str
    lines = HasMany["MLine"](via=Embedded(key="name"), was=Partition())


@into_map.model(pk="O#{order_id}", sk="LINE#{name}")  # where the old items are
class MLine:
    order_id: str
    name: str
    qty: int = 0
