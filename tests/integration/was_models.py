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


# -- Index("GSI1") -> Partition(): the old items' table key is not the new templates' ------------

from_index = Table("was-back", pk="pk", sk="sk", indexes=INDEXES)
to_partition = Table("was-back", pk="pk", sk="sk", indexes=INDEXES)


@from_index.model(
    pk="P#{parent_id}", sk="#PARENT#{parent_id}", GSI1=("P#{parent_id}", "#PARENT#{parent_id}")
)
class IParent:
    parent_id: str
    items = HasMany["IItem"](via=Index("GSI1"))


@from_index.model(
    pk="I#{parent_id}#{name}", sk="I#{parent_id}#{name}", GSI1=("P#{parent_id}", "ITEM#{name}")
)
class IItem:
    parent_id: str
    name: str
    qty: int = 0


@to_partition.model(pk="P#{parent_id}", sk="#PARENT#{parent_id}")
class BParent:
    parent_id: str
    items = HasMany["BItem"](via=Partition(), was=Index("GSI1"))


@to_partition.model(pk="P#{parent_id}", sk="ITEM#{name}")
class BItem:
    parent_id: str
    name: str
    qty: int = 0


# -- Partition() -> Partition(shards=2) ------------------------------------------------------------

one_partition = Table("was-shards", pk="pk", sk="sk")
two_shards = Table("was-shards", pk="pk", sk="sk")


@one_partition.model(pk="S#{parent_id}", sk="#PARENT#{parent_id}")
class OneParent:
    parent_id: str
    items = HasMany["OneItem"](via=Partition())


@one_partition.model(pk="S#{parent_id}", sk="ITEM#{name}")
class OneItem:
    parent_id: str
    name: str


@two_shards.model(pk="S#{parent_id}", sk="#PARENT#{parent_id}")
class ShardParent:
    parent_id: str
    items = HasMany["ShardItem"](via=Partition(shards=2), was=Partition())


@two_shards.model(pk="S#{parent_id}#{shard}", sk="ITEM#{name}")
class ShardItem:
    parent_id: str
    name: str


# -- Embedded() (a list) -> Partition() ---------------------------------------------------------

listed = Table("was-list", pk="pk", sk="sk")
unlisted = Table("was-list", pk="pk", sk="sk")


@listed.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class LOrder:
    order_id: str
    lines = HasMany[Line](Line, via=Embedded())


@unlisted.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class NOrder:
    order_id: str
    lines = HasMany["NLine"](via=Partition(), was=Embedded())


@unlisted.model(pk="O#{order_id}", sk="LINE#{name}")
class NLine:
    order_id: str
    name: str
    qty: int = 0


# -- a versioned child: Partition() -> Index("GSI1") ----------------------------------------------

versioned = Table("was-versioned", pk="pk", sk="sk", indexes=INDEXES)


@versioned.model(
    pk="P#{parent_id}", sk="#PARENT#{parent_id}", GSI1=("P#{parent_id}", "#PARENT#{parent_id}")
)
class VParent:
    parent_id: str
    items = HasMany["VItem"](via=Index("GSI1"), was=Partition())


@versioned.model(
    pk="V#{parent_id}#{name}",
    sk="V#{parent_id}#{name}",
    GSI1=("P#{parent_id}", "ITEM#{name}"),
    version="version",
)
class VItem:
    parent_id: str
    name: str
    qty: int = 0
    version: int = 0
