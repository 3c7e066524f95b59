"""A connection's writes: each call planned by its model's table, the plan run by the runner.

:class:`Writes` is the part of a :class:`~dynorm.io.database.Database` behind ``put``,
``update``, ``delete``, ``add``, ``remove``, ``sync_copies``, ``put_all``, ``delete_all`` and
transactions. It asks the connection's :class:`~dynorm.io.tables.Tables` for the write planner
of the model's table (``mapping/writeplan.py``), hands the plan to the
:class:`~dynorm.io.runner.Runner`, and binds what it stored to the connection's
:class:`~dynorm.io.reader.Reader`, so its relationship loaders read through it. The write side
(planner, update expressions, transactions) is imported by a first write: a process that only
gets and queries never loads it (tests/integration/test_lean_connection.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar, cast

from dynorm.core.chunks import DEFAULT_MAX_ITEMS
from dynorm.core.errors import DefinitionError
from dynorm.core.expressions import Condition
from dynorm.core.steps import Plan
from dynorm.mapping.model import info_of
from dynorm.mapping.relations import HasManyRelation, Relationship, relationships_of
from dynorm.mapping.state import bind, state_of

from .reader import Reader
from .runner import Runner
from .tables import Tables

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from dynorm.mapping.cascade import CascadeReport
    from dynorm.mapping.writeplan import Action, WritePlanner
    from dynorm.mapping.writes import Returns, UpdateOptions

    from .transaction import Host, Transaction

__all__ = ["Writes"]

T = TypeVar("T")
P = TypeVar("P")


class _Writing:
    """What a connection's updates and transactions use, imported on the first of them.

    One per :class:`Writes` (a cached property): after the first call each name is an
    attribute lookup away, and a process that only gets and queries never imports the write
    side (the write planner, copies, cascades, update expressions, difflib).
    """

    def __init__(self) -> None:
        # Imported here on purpose: once per connection (see the class docstring).
        from dynorm.mapping.writeplan import returned_fields  # noqa: PLC0415
        from dynorm.mapping.writes import UpdateOps, return_values  # noqa: PLC0415

        from .transaction import Transaction  # noqa: PLC0415

        self.update_ops = UpdateOps
        self.return_values = return_values
        self.returned_fields = returned_fields
        self.transaction = Transaction


def _nothing_planned() -> Plan[None]:
    """The plan of no writes: it sends nothing."""
    yield from ()


class Writes:
    """Plans and runs the writes of one connection (see the module docstring).

    ``reader`` is what stored objects are bound to (and what decodes an update's reply);
    ``exactly_once`` is ``update``'s default (``connect(exactly_once=...)``).
    """

    def __init__(
        self, tables: Tables, runner: Runner, reader: Reader, *, exactly_once: bool
    ) -> None:
        self._tables = tables
        self._run = runner.run
        self._reader = reader
        self._exactly_once = exactly_once

    @functools.cached_property
    def _writing(self) -> _Writing:
        return _Writing()

    async def put(self, obj: T, *, condition: Condition | None, overwrite: bool) -> T:
        """``Database.put``."""
        connected = self._tables.connected(type(obj))
        plan = connected.writes.put(obj, condition=condition, overwrite=overwrite)
        stored, _ = await self._run(plan, connected.table)
        if relationships_of(connected.table.info(type(obj))):
            bind(stored, self._reader)
        return cast("T", stored)

    async def sync_copies(self, parent: object) -> int:
        """``Database.sync_copies``."""
        connected = self._tables.connected(type(parent))
        return await self._run(connected.writes.sync_copies(parent), connected.table)

    async def delete(
        self,
        target: object,
        *,
        condition: Condition | None,
        cascade: bool,
        max_items: Any,
        key: dict[str, object],
    ) -> CascadeReport | None:
        """``Database.delete``."""
        if not cascade and max_items is not DEFAULT_MAX_ITEMS:
            raise TypeError("max_items= bounds a cascade; pass it with cascade=True")
        connected = self._tables.connected(target if isinstance(target, type) else type(target))
        plan = connected.writes.delete(
            target, condition=condition, cascade=cascade, key=key, max_items=max_items
        )
        return await self._run(plan, connected.table)

    async def update(
        self,
        obj: T,
        *,
        upsert: bool,
        condition: Condition | None,
        returns: Returns,
        exactly_once: bool | None,
        **ops: Unpack[UpdateOptions],
    ) -> T | dict[str, object] | None:
        """``Database.update``."""
        connected = self._tables.connected(type(obj))
        info = connected.table.info(type(obj))
        writing = self._writing
        update = writing.update_ops(**ops)
        wire = writing.return_values(returns, update)
        once = self._exactly_once if exactly_once is None else exactly_once
        plan = connected.writes.update(
            obj, update, condition=condition, upsert=upsert, returns=wire, exactly_once=once
        )
        item = await self._run(plan, connected.table)
        if returns is None:
            return None
        if returns in ("updated_new", "updated_old"):
            return writing.returned_fields(info, item, update.paths())
        if item is None:
            return None  # "old" of an item the upsert created
        updated: T = info.decode(item)
        if relationships_of(info) and returns == "new":
            self._reader.adopt(info, updated, item)
        return updated

    async def put_all(self, objs: Iterable[object]) -> int:
        """``Database.put_all``."""
        objs = list(objs)
        groups = self._tables.by_table(objs)
        if not groups:
            return 0
        plan, table = self._tables.together_plan([(c, c.writes.put_all(o)) for c, o in groups])
        counts = await self._run(plan, table)
        count = counts if table is not None else sum(counts)
        related: dict[type, bool] = {}  # per class: whether its objects are bound
        for obj in objs:
            cls = type(obj)
            if related.get(cls) is None:
                related[cls] = bool(relationships_of(info_of(cls)))
            if related[cls]:
                bind(obj, self._reader)
        return int(count)

    async def delete_all(self, objs: Iterable[object]) -> int:
        """``Database.delete_all``."""
        groups = self._tables.by_table(objs)
        if not groups:
            return 0
        plan, table = self._tables.together_plan([(c, c.writes.delete_all(o)) for c, o in groups])
        counts = await self._run(plan, table)
        return int(counts if table is not None else sum(counts))

    def transaction(self, host: Host) -> Transaction:
        """A transaction of ``host`` (the Database that opens it), its module imported now."""
        return self._writing.transaction(host)

    def planner(self, model: type[Any]) -> WritePlanner:
        """The write planner of ``model``'s table (DefinitionError when not connected)."""
        return self._tables.connected(model).writes

    def transaction_plan(self, actions: Sequence[Action]) -> Plan[None]:
        """The plan of a transaction's actions, of whichever tables they write."""
        if not actions:
            return _nothing_planned()
        first = self.planner(type(actions[0].obj))
        return first.transaction(actions, lambda obj: self.planner(type(obj)))

    async def add(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> T:
        """``Database.add``."""
        rel = self._has_many(parent, relationship, "add")
        connected = self._tables.of_table(rel.children_table)  # the children's table plans it
        stored = await self._run(connected.writes.add(parent, rel, child), connected.table)
        _update_loaded(parent, rel, stored, adding=True, position=None)
        return cast("T", stored)

    async def remove(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> None:
        """``Database.remove``."""
        rel = self._has_many(parent, relationship, "remove")
        connected = self._tables.of_table(rel.children_table)
        position = await self._run(connected.writes.remove(parent, rel, child), connected.table)
        _update_loaded(parent, rel, child, adding=False, position=position)

    def _has_many(
        self, parent: object, relationship: Relationship[Any], verb: str
    ) -> HasManyRelation[Any]:
        rel = _relationship(parent, relationship)
        if not isinstance(rel, HasManyRelation):
            raise DefinitionError(
                f"{rel.qualname}: db.{verb} takes a HasMany relationship; set a BelongsTo link "
                "by writing the child's fields with db.put"
            )
        return rel


def _relationship(parent: object, relationship: Relationship[Any]) -> Relationship[Any]:
    if getattr(relationship, "owner", None) is not type(parent):
        raise DefinitionError(
            f"{relationship!r} is not a relationship of {type(parent).__name__}; pass e.g. "
            f"{type(parent).__name__}.<name>"
        )
    return relationship


def _update_loaded(
    parent: object, rel: HasManyRelation[Any], child: object, *, adding: bool, position: int | None
) -> None:
    """Keep a parent's loaded children in step with an add or remove that was just written."""
    state = state_of(parent)
    loaded = None if state is None else state.loaded.get(rel.name)
    if loaded is None:
        return
    codec = rel.embedded
    if not adding and codec is not None and codec.key is None:
        # A list has no keys: drop exactly the entry that was removed from the item.
        if position is not None and position < len(loaded.items):
            del loaded.items[position]
        return

    def same(other: object) -> bool:
        if codec is not None:
            return codec.same_child(other, child)
        info = rel.target_info
        return bool(info.key_of(other) == info.key_of(child))

    kept = [c for c in loaded.items if not same(c)]
    if not adding:
        loaded.items = kept
    elif codec is not None and codec.key is not None:
        # A map's children are read in key order: an added one takes its place among them.
        loaded.items = sorted([*kept, child], key=attrgetter(codec.key))
    else:
        loaded.items = [*kept, child]
