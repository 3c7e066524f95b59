"""The composition matrix's layouts: "a parent has children", declared once per strategy.

Each :class:`Layout` is one declaration of the same shape on a Table of its own: a parent
(``parent_id``, ``title``) and its children (``parent_id``, ``name`` or ``n``, ``qty``). The
string-keyed layouts all declare the same stored table (``matrix``, one index ``GSI1``) with the
key templates ``docs/migrations.md`` asks for, so any two of them are the old and the new code of
one migration. Beside the models, each layout says, by hand and without the mapper, where its
children are stored (:attr:`Layout.stored_as`): the raw scan is checked against that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from dynorm import GSI, Denormalized, Embedded, HasMany, Index, Partition, Table
from dynorm.core.keys import shard_number
from dynorm.mapping.relations import HasManyRelation  # the type db.add takes; not re-exported
from dynorm.mapping.strategies import Strategy

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
PARTITION_SHARDS = 3
INDEX_SHARDS = 2

#: The stored attributes of a child as the layout puts them (flattened: numbers as text).
Stored = dict[str, Any]


@attrs.frozen
class Layout:
    """One declaration of the shape, and where it stores each child."""

    table: Table
    parent_cls: type[Any]
    child_cls: type[Any]
    rel: HasManyRelation[Any]
    #: The child's stored attributes (keys and copies) as the layout puts them, by hand.
    stored_as: Callable[[Any], Stored]
    #: The parent's key fields, for db.get.
    parent_key: Callable[[str], dict[str, Any]] = lambda pid: {"parent_id": pid}
    #: The key fields of a db.query that reads the parent (and, for a hierarchy, its siblings).
    query_key: Callable[[str], dict[str, Any]] = lambda pid: {"parent_id": pid}
    #: The connection's other tables (a relationship across tables).
    others: tuple[Table, ...] = ()
    #: The order a load returns children in (the collection's sort key).
    order: Callable[[Any], Any] = lambda c: c.name
    make_parent: Callable[[str], Any] = lambda pid: None
    make_child: Callable[[str, int], Any] = lambda pid, i: None

    @property
    def strategy(self) -> Strategy:
        return self.rel.via

    @property
    def embedded(self) -> bool:
        return self.rel.embedded is not None


def _child_name(i: int) -> str:
    return f"c{i:02d}"


def _string_layout(
    table: Table,
    parent_cls: type[Any],
    child_cls: type[Any],
    rel: HasManyRelation[Any],
    stored_as: Callable[[Any], Stored],
) -> Layout:
    return Layout(
        table=table,
        parent_cls=parent_cls,
        child_cls=child_cls,
        rel=rel,
        stored_as=stored_as,
        make_parent=lambda pid: parent_cls(parent_id=pid, title=f"title of {pid}"),
        make_child=lambda pid, i: child_cls(parent_id=pid, name=_child_name(i), qty=i),
    )


# -- Partition() ----------------------------------------------------------------------------------


def partition(shards: int = 1) -> Layout:
    table = Table("matrix", pk="pk", sk="sk", indexes=INDEXES)
    pk = "P#{parent_id}#{shard}" if shards > 1 else "P#{parent_id}"

    @table.model(pk=pk, sk="C#{name}")
    class Child:
        parent_id: str
        name: str
        qty: int = 0

    @table.model(pk="P#{parent_id}", sk="#P#{parent_id}")
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(Child, via=Partition(shards=shards))

    def stored_as(c: Any) -> Stored:
        part = f"P#{c.parent_id}"
        if shards > 1:
            part += f"#{shard_number([c.parent_id, c.name], shards)}"
        return {"pk": part, "sk": f"C#{c.name}"}

    return _string_layout(table, Parent, Child, Parent.items, stored_as)


# -- Index("GSI1") --------------------------------------------------------------------------------


def index(shards: int = 1) -> Layout:
    table = Table("matrix", pk="pk", sk="sk", indexes=INDEXES)
    gsi_pk = "P#{parent_id}#{shard}" if shards > 1 else "P#{parent_id}"

    @table.model(pk="C#{parent_id}#{name}", sk="C#{parent_id}#{name}", GSI1=(gsi_pk, "C#{name}"))
    class Child:
        parent_id: str
        name: str
        qty: int = 0

    @table.model(pk="P#{parent_id}", sk="#P#{parent_id}", GSI1=("P#{parent_id}", "#P#{parent_id}"))
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(Child, via=Index("GSI1", shards=shards))

    def stored_as(c: Any) -> Stored:
        own = f"C#{c.parent_id}#{c.name}"
        part = f"P#{c.parent_id}"
        if shards > 1:
            part += f"#{shard_number([c.parent_id, c.name], shards)}"
        return {"pk": own, "sk": own, "GSI1PK": part, "GSI1SK": f"C#{c.name}"}

    return _string_layout(table, Parent, Child, Parent.items, stored_as)


# -- Embedded(key="name") -------------------------------------------------------------------------


def embedded(like: str = "Partition") -> Layout:
    """Children in a map keyed by name; ``like`` names the layout whose items a migration reads.

    The child is a table model as well, at the templates of the layout ``like`` names (one of
    :data:`CHILD_TEMPLATES`): that is where a migration from (or to) that layout finds the
    child items. It carries the Denormalized layout's copy field, so its items map too.
    """
    table = Table("matrix", pk="pk", sk="sk", indexes=INDEXES)

    @table.model(**CHILD_TEMPLATES[like])
    class Child:
        parent_id: str
        name: str
        qty: int = 0
        parent_title: str | None = None

    @table.model(pk="P#{parent_id}", sk="#P#{parent_id}")
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(Child, via=Embedded(key="name", max_items=50))
        if like in SHARDS_OF:
            # A {shard} template needs a relationship that says over how many shards: the
            # old one, declared beside while the migration runs.
            before = HasMany(Child, via=SHARDS_OF[like])

    def stored_as(c: Any) -> Stored:
        # An entry of the parent's map: where it is is the parent item and its map key.
        return {"pk": f"P#{c.parent_id}", "sk": f"#P#{c.parent_id}", "items": c.name}

    return _string_layout(table, Parent, Child, Parent.items, stored_as)


#: The sharded layouts' strategies, for an embedded child declared at their templates.
SHARDS_OF: Mapping[str, Strategy] = {
    "Partition-sharded": Partition(shards=PARTITION_SHARDS),
    "Index-sharded": Index("GSI1", shards=INDEX_SHARDS),
}

#: The child's key templates in each string layout (what embedded(like=...) declares).
CHILD_TEMPLATES: Mapping[str, Mapping[str, Any]] = {
    "Partition": {"pk": "P#{parent_id}", "sk": "C#{name}"},
    "Denormalized": {"pk": "P#{parent_id}", "sk": "C#{name}"},
    "Partition-sharded": {"pk": "P#{parent_id}#{shard}", "sk": "C#{name}"},
    "Index": {
        "pk": "C#{parent_id}#{name}",
        "sk": "C#{parent_id}#{name}",
        "GSI1": ("P#{parent_id}", "C#{name}"),
    },
    "Index-sharded": {
        "pk": "C#{parent_id}#{name}",
        "sk": "C#{parent_id}#{name}",
        "GSI1": ("P#{parent_id}#{shard}", "C#{name}"),
    },
}


# -- Denormalized(copy={"title": "parent_title"}) -------------------------------------------------


def denormalized(shards: int = 1) -> Layout:
    table = Table("matrix", pk="pk", sk="sk", indexes=INDEXES)
    pk = "P#{parent_id}#{shard}" if shards > 1 else "P#{parent_id}"

    @table.model(pk=pk, sk="C#{name}")
    class Child:
        parent_id: str
        name: str
        qty: int = 0
        parent_title: str | None = None

    @table.model(pk="P#{parent_id}", sk="#P#{parent_id}")
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(
            Child,
            via=Denormalized(copy={"title": "parent_title"}, where=Partition(shards=shards)),
        )

    def stored_as(c: Any) -> Stored:
        part = f"P#{c.parent_id}"
        if shards > 1:
            part += f"#{shard_number([c.parent_id, c.name], shards)}"
        return {"pk": part, "sk": f"C#{c.name}", "parent_title": f"title of {c.parent_id}"}

    layout = _string_layout(table, Parent, Child, Parent.items, stored_as)
    with_copies = layout.make_child
    return attrs.evolve(
        layout,
        make_child=lambda pid, i: attrs.evolve(with_copies(pid, i), parent_title=f"title of {pid}"),
    )


# -- hierarchy: one partition, CART#<id>#LINE#<name> sort keys ------------------------------------


def hierarchy(shards: int = 1) -> Layout:
    table = Table("matrix-tree", pk="pk", sk="sk")
    pk = "SHOP#{shop}#{shard}" if shards > 1 else "SHOP#{shop}"

    @table.model(pk=pk, sk="CART#{parent_id}#LINE#{name}")
    class Line:
        shop: str
        parent_id: str
        name: str
        qty: int = 0

    @table.model(pk="SHOP#{shop}", sk="CART#{parent_id}")
    class Cart:
        shop: str
        parent_id: str
        title: str = ""
        items = HasMany(Line, via=Partition(shards=shards))

    def stored_as(c: Any) -> Stored:
        part = f"SHOP#{c.shop}"
        if shards > 1:
            part += f"#{shard_number([c.shop, c.parent_id, c.name], shards)}"
        return {"pk": part, "sk": f"CART#{c.parent_id}#LINE#{c.name}"}

    return Layout(
        table=table,
        parent_cls=Cart,
        child_cls=Line,
        rel=Cart.items,
        stored_as=stored_as,
        parent_key=lambda pid: {"shop": "s1", "parent_id": pid},
        query_key=lambda pid: {"shop": "s1"},  # every cart of the shop, each with its lines
        make_parent=lambda pid: Cart("s1", pid, f"title of {pid}"),
        make_child=lambda pid, i: Line("s1", pid, _child_name(i), i),
    )


# -- adjacency list: mapping items in each game's partition, a player's games by the inverted index


def adjacency() -> Layout:
    table = Table("matrix-m2m", pk="pk", sk="sk", indexes=[GSI("inverted", pk="sk", sk="pk")])

    @table.model(pk="GAME#{game_id}", sk="USER#{parent_id}")
    class Joined:
        game_id: str
        parent_id: str  # the player
        qty: int = 0

    @table.model(pk="GAME#{game_id}", sk="#GAME#{game_id}")
    class Game:
        game_id: str
        players = HasMany(Joined, via=Partition())

    @table.model(pk="USER#{parent_id}", sk="#USER#{parent_id}")
    class Player:
        parent_id: str
        title: str = ""
        items = HasMany(Joined, via=Index("inverted"))

    def stored_as(c: Any) -> Stored:
        return {"pk": f"GAME#{c.game_id}", "sk": f"USER#{c.parent_id}"}

    return Layout(
        table=table,
        parent_cls=Player,
        child_cls=Joined,
        rel=Player.items,
        stored_as=stored_as,
        make_parent=lambda pid: Player(pid, f"title of {pid}"),
        make_child=lambda pid, i: Joined(f"g{i:02d}", pid, i),
        order=lambda c: c.game_id,
    )


# -- across tables: the children in another table, collected by that table's index ------------


def cross_table() -> Layout:
    parents = Table("matrix-x-parents", pk="pk", sk="sk")
    children = Table("matrix-x-children", pk="pk", sk="sk", indexes=INDEXES)

    @children.model(
        pk="C#{parent_id}#{name}", sk="C#{parent_id}#{name}", GSI1=("P#{parent_id}", "C#{name}")
    )
    class Child:
        parent_id: str
        name: str
        qty: int = 0

    @parents.model(pk="P#{parent_id}", sk="#P#{parent_id}")
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(Child, via=Index("GSI1"))  # an index of the children's table

    def stored_as(c: Any) -> Stored:
        own = f"C#{c.parent_id}#{c.name}"
        return {"pk": own, "sk": own, "GSI1PK": f"P#{c.parent_id}", "GSI1SK": f"C#{c.name}"}

    layout = _string_layout(parents, Parent, Child, Parent.items, stored_as)
    return attrs.evolve(layout, others=(children,))


# -- number sort keys: Table(key_types={...: "N"}) ------------------------------------------------


def partition_number(shards: int = 1) -> Layout:
    # Parent and children share the partition and a number sort key; the type attribute tells a
    # parent (sort key 0) from a child (sort key n >= 1), as the key templates cannot.
    table = Table("matrix-n", pk="pk", sk="sk", key_types={"sk": "N"}, type_attribute="entity")
    pk = "P#{parent_id}#{shard}" if shards > 1 else "P#{parent_id}"

    @table.model(pk=pk, sk="{n}", entity="child")
    class Child:
        parent_id: str
        n: int
        qty: int = 0

    @table.model(pk="P#{parent_id}", sk="{rev}", entity="parent")
    class Parent:
        parent_id: str
        rev: int = 0
        title: str = ""
        items = HasMany(Child, via=Partition(shards=shards))

    def stored_as(c: Any) -> Stored:
        part = f"P#{c.parent_id}"
        if shards > 1:
            part += f"#{shard_number([c.parent_id, str(c.n)], shards)}"
        return {"pk": part, "sk": str(c.n), "entity": "child"}

    return Layout(
        table=table,
        parent_cls=Parent,
        child_cls=Child,
        rel=Parent.items,
        stored_as=stored_as,
        parent_key=lambda pid: {"parent_id": pid, "rev": 0},
        make_parent=lambda pid: Parent(pid, 0, f"title of {pid}"),
        # 9 < 10 < 100 as numbers, not as text
        make_child=lambda pid, i: Child(pid, _number(i), i),
        order=lambda c: c.n,
    )


def denormalized_number() -> Layout:
    # A number sort key is one field alone, so a parent cannot share its children's number
    # range and be found from their fields: the children are collected by an index whose sort
    # key is the number, and the parent is found by its own (text) key.
    table = Table("matrix-dn", pk="pk", sk="sk", indexes=INDEXES, key_types={"GSI1SK": "N"})

    @table.model(pk="C#{parent_id}#{n}", sk="C#{parent_id}#{n}", GSI1=("P#{parent_id}", "{n}"))
    class Child:
        parent_id: str
        n: int
        qty: int = 0
        parent_title: str | None = None

    @table.model(pk="P#{parent_id}", sk="#P#{parent_id}")
    class Parent:
        parent_id: str
        title: str = ""
        items = HasMany(
            Child, via=Denormalized(copy={"title": "parent_title"}, where=Index("GSI1"))
        )

    def stored_as(c: Any) -> Stored:
        own = f"C#{c.parent_id}#{c.n}"
        return {
            "pk": own,
            "sk": own,
            "GSI1PK": f"P#{c.parent_id}",
            "GSI1SK": str(c.n),
            "parent_title": f"title of {c.parent_id}",
        }

    return Layout(
        table=table,
        parent_cls=Parent,
        child_cls=Child,
        rel=Parent.items,
        stored_as=stored_as,
        make_parent=lambda pid: Parent(pid, f"title of {pid}"),
        make_child=lambda pid, i: Child(pid, _number(i), i, f"title of {pid}"),
        order=lambda c: c.n,
    )


def index_number(shards: int = 1) -> Layout:
    table = Table(
        "matrix-n",
        pk="pk",
        sk="sk",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")],
        key_types={"sk": "N", "GSI1SK": "N"},
        type_attribute="entity",
    )
    gsi_pk = "P#{parent_id}#{shard}" if shards > 1 else "P#{parent_id}"

    @table.model(pk="C#{parent_id}", sk="{n}", GSI1=(gsi_pk, "{n}"), entity="child")
    class Child:
        parent_id: str
        n: int
        qty: int = 0

    # The parent is not in its children's index collection (its GSI1 attributes are not
    # written): the collection is found from its parent_id, as a player's games are.
    @table.model(pk="P#{parent_id}", sk="{rev}", entity="parent")
    class Parent:
        parent_id: str
        rev: int = 0
        title: str = ""
        items = HasMany(Child, via=Index("GSI1", shards=shards))

    def stored_as(c: Any) -> Stored:
        part = f"P#{c.parent_id}"
        if shards > 1:
            part += f"#{shard_number([c.parent_id, str(c.n)], shards)}"
        return {"pk": f"C#{c.parent_id}", "sk": str(c.n), "GSI1PK": part, "GSI1SK": str(c.n)}

    return Layout(
        table=table,
        parent_cls=Parent,
        child_cls=Child,
        rel=Parent.items,
        stored_as=stored_as,
        parent_key=lambda pid: {"parent_id": pid, "rev": 0},
        make_parent=lambda pid: Parent(pid, 0, f"title of {pid}"),
        make_child=lambda pid, i: Child(pid, _number(i), i),
        order=lambda c: c.n,
    )


def _number(i: int) -> int:
    """The i-th child's number key: rising with i, over one, two and three digits, so that
    number order differs from text order (7 < 14 < 105; as text "105" < "14" < "7")."""
    return 7 * (i + 1)
