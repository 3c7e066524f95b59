"""One relationship declared twice per strategy switch: before (``via=OLD``) and after
(``via=NEW, was=OLD``), on one stored table, for ``test_live_switch.py``.

Every layout stores the same children (``pid``, ``name``, ``qty``; a hierarchy adds ``grp``, a
denormalized child ``parent_title``) under key templates arranged as docs/migrations.md says
for its kind: Partition and Index share the templates, moved between the table key and the
index key; a sharded layout adds ``{shard}`` to the partition key (of the table, or of the
index); an embedded layout keeps a map keyed by ``name`` in the parent. A :class:`Switch` knows
both declarations and, for the raw check at the end, the keys the new layout stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

from dynorm import GSI, Denormalized, Embedded, HasMany, Index, Partition, Strategy, Table
from dynorm.core.keys import shard_number
from dynorm.mapping.relations import HasManyRelation

SHARDS: Final = 4
INDEXES: Final = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("inverted", pk="sk", sk="pk")]
#: The key attributes of the table and its indexes: a child item holds exactly its layout's.
KEY_ATTRIBUTES: Final = ("pk", "sk", "GSI1PK", "GSI1SK")


@attrs.frozen
class Layout:
    """One way to store "a parent has children": its strategy and key templates."""

    name: str
    strategy: Strategy
    parent: Mapping[str, Any]  # the parent's templates (pk, sk, maybe GSI1)
    child: Mapping[str, Any] | None  # the child items' templates; None: embedded in the parent
    hierarchy: bool = False  # children carry ``grp``, sorted by (grp, name)
    copies: bool = False  # children carry ``parent_title``, a copy of the parent's title
    inverted: bool = False  # an adjacency list: the "inverted" index reads it the other way

    @property
    def embedded(self) -> bool:
        return self.child is None


PARENT: Final = {"pk": "P#{pid}", "sk": "#P#{pid}"}
INDEXED_PARENT: Final = {**PARENT, "GSI1": ("P#{pid}", "#P#{pid}")}

LAYOUTS: Final = {
    "partition": Layout("partition", Partition(), PARENT, {"pk": "P#{pid}", "sk": "ITEM#{name}"}),
    "index": Layout(
        "index",
        Index("GSI1"),
        INDEXED_PARENT,
        {"pk": "I#{pid}#{name}", "sk": "I#{pid}#{name}", "GSI1": ("P#{pid}", "ITEM#{name}")},
    ),
    "partition4": Layout(
        "partition4",
        Partition(shards=SHARDS),
        PARENT,
        {"pk": "P#{pid}#{shard}", "sk": "ITEM#{name}"},
    ),
    "index4": Layout(
        "index4",
        Index("GSI1", shards=SHARDS),
        INDEXED_PARENT,
        {
            "pk": "I#{pid}#{name}",
            "sk": "I#{pid}#{name}",
            "GSI1": ("P#{pid}#{shard}", "ITEM#{name}"),
        },
    ),
    "embedded": Layout("embedded", Embedded(key="name"), PARENT, None),
    "denormalized": Layout(
        "denormalized",
        Denormalized(copy={"title": "parent_title"}),
        PARENT,
        {"pk": "P#{pid}", "sk": "ITEM#{name}"},
        copies=True,
    ),
    "tree": Layout(
        "tree", Partition(), PARENT, {"pk": "P#{pid}", "sk": "ITEM#{grp}#{name}"}, hierarchy=True
    ),
    "tree-index": Layout(
        "tree-index",
        Index("GSI1"),
        INDEXED_PARENT,
        {
            "pk": "I#{pid}#{grp}#{name}",
            "sk": "I#{pid}#{grp}#{name}",
            "GSI1": ("P#{pid}", "ITEM#{grp}#{name}"),
        },
        hierarchy=True,
    ),
    # An adjacency list: membership items in the group's partition; the inverted index
    # (pk and sk swapped) answers "the groups of a member" before and after.
    "members": Layout(
        "members", Partition(), PARENT, {"pk": "P#{pid}", "sk": "U#{name}"}, inverted=True
    ),
    "members4": Layout(
        "members4",
        Partition(shards=SHARDS),
        PARENT,
        {"pk": "P#{pid}#{shard}", "sk": "U#{name}"},
        inverted=True,
    ),
}


@attrs.define
class PlainChild:
    """A child stored inside its parent (the before-declaration of an embedded layout)."""

    pid: str
    name: str
    qty: int = 0


def group_of(name: str) -> str:
    """A hierarchy child's group: two groups, interleaved with the names."""
    return f"g{int(name[1:]) % 2}"


class Switch:
    """``before`` and ``after``: two declarations of one stored table."""

    def __init__(self, old: Layout, new: Layout) -> None:
        self.id = f"{old.name}->{new.name}"
        self.old, self.new = old, new
        name = f"live-{old.name}-{new.name}"
        self.before = Table(name, pk="pk", sk="sk", indexes=INDEXES)
        self.after = Table(name, pk="pk", sk="sk", indexes=INDEXES)
        self.old_parent, self.old_child, self.old_rel = declare(self.before, old, old, None)
        # The child model of the after-declaration has the new templates, or, when the new
        # layout embeds it, the old ones: they say where the old items are.
        self.new_parent, self.new_child, self.new_rel = declare(
            self.after, new, new if new.child is not None else old, old.strategy
        )

    # -- objects -------------------------------------------------------------------------------

    def title(self, pid: str) -> str:
        return f"title of {pid}"

    def parent(self, pid: str, *, new: bool = True) -> Any:
        return (self.new_parent if new else self.old_parent)(pid=pid, title=self.title(pid))

    def child(self, pid: str, name: str, qty: int, *, new: bool = True) -> Any:
        cls = self.new_child if new else self.old_child
        fields: dict[str, Any] = {"pid": pid, "name": name, "qty": qty}
        declared = attrs.fields_dict(cls)
        if "grp" in declared:
            fields["grp"] = group_of(name)
        if "parent_title" in declared:
            fields["parent_title"] = self.title(pid)
        return cls(**fields)

    def order(self, name: str) -> str:
        """The position the new strategy gives a child: its sort key's order."""
        return f"{group_of(name)}#{name}" if self.new.hierarchy else name

    # -- the new layout, as stored -------------------------------------------------------------

    def new_keys(self, pid: str, name: str) -> dict[str, str]:
        """Every key attribute a child item of the new layout holds (table and index keys)."""
        templates = self.new.child
        assert templates is not None
        values = {"pid": pid, "name": name, "grp": group_of(name)}
        values["shard"] = str(shard_number([pid, name], SHARDS))
        keys = {"pk": templates["pk"].format(**values), "sk": templates["sk"].format(**values)}
        if "GSI1" in templates:
            index_pk, index_sk = templates["GSI1"]
            keys |= {"GSI1PK": index_pk.format(**values), "GSI1SK": index_sk.format(**values)}
        return keys


def declare(
    table: Table, layout: Layout, items: Layout, was: Strategy | None
) -> tuple[type[Any], type[Any], HasManyRelation[Any, Any]]:
    """Declare the parent (with ``layout``'s relationship) and the child model on ``table``.

    ``items`` gives the child model's templates (the old layout's when ``layout`` embeds).
    """
    hierarchy = layout.hierarchy or items.hierarchy
    if items.child is None:
        child: type[Any] = PlainChild
    elif hierarchy:

        @table.model(**items.child)
        class TreeChild:
            pid: str
            name: str
            grp: str
            qty: int = 0

        child = TreeChild
    elif layout.copies:

        @table.model(**items.child)
        class CopyChild:
            pid: str
            name: str
            qty: int = 0
            parent_title: str = ""

        child = CopyChild
    else:

        @table.model(**items.child)
        class Child:
            pid: str
            name: str
            qty: int = 0

        child = Child

    relationship: HasMany[Any] = HasMany(child, via=layout.strategy, was=was)

    @table.model(**{**layout.parent, **_index_of_parent(layout, was)})
    class Parent:
        pid: str
        title: str = ""
        children = relationship

    rel: HasManyRelation[Any, Any] = Parent.children
    return Parent, child, rel


def _index_of_parent(layout: Layout, was: Strategy | None) -> dict[str, Any]:
    uses_index = layout.strategy.index == "GSI1" or (was is not None and was.index == "GSI1")
    return {"GSI1": INDEXED_PARENT["GSI1"]} if uses_index else {}


PAIRS: Final = [
    ("partition", "index"),
    ("index", "partition"),
    ("partition", "partition4"),
    ("partition4", "partition"),
    ("index", "index4"),
    ("embedded", "partition"),
    ("partition", "embedded"),
    ("embedded", "index"),
    ("index", "embedded"),
    ("partition", "denormalized"),
    ("tree", "tree-index"),
    ("members", "members4"),
]
SWITCHES: Final = {s.id: s for s in (Switch(LAYOUTS[a], LAYOUTS[b]) for a, b in PAIRS)}
