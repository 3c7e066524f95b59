"""``db.explain``: the exact requests a call would send, each planned by its model's table.

:class:`DatabaseExplain` routes each call through the connection's
:class:`~dynorm.io.tables.Tables` to the ``Explain`` (``mapping/explain.py``) of that table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from dynorm.core.expressions import Condition
from dynorm.core.requests import CollectionRead, Request
from dynorm.core.steps import Plan
from dynorm.mapping.cascade import DEFAULT_MAX_ITEMS
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.reading import Finished
from dynorm.mapping.readplan import GetReads, KeyOf, TransactGetReads, transact_get_reads
from dynorm.mapping.relations import HasManyRelation, LoadOption, Relationship
from dynorm.mapping.table import Table
from dynorm.mapping.writes import Returns, UpdateOptions

from .tables import Connected, Tables

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DatabaseExplain"]

T = TypeVar("T")
P = TypeVar("P")


class DatabaseExplain:
    """``db.explain``: the exact requests a call would send, without sending anything.

    Each call is planned by the explain of its model's table; calls that span tables
    (``put_all``, ``delete_all``, ``transact_get``, a transaction's ``explain()``) show the
    shared requests they send.
    """

    def __init__(self, tables: Tables, *, exactly_once: bool = False) -> None:
        self._tables = tables
        self._exactly_once = exactly_once

    def _of(self, model: type[Any]) -> Explain:
        return self._tables.connected(model).explain

    def get_reads(
        self,
        model: type[T],
        *,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        consistent: bool = False,
        **key: object,
    ) -> GetReads:
        """The reads ``db.get`` plans (see :meth:`get`); ``.costs()`` says what each load costs.

        ``costs()`` uses the words ``dynorm design`` uses: ``1 Query on the table (more with
        a limit, as Project items share its range)`` for a load whose range other entities'
        items can fall in.
        """
        return self._of(model).get_reads(model, load=load, consistent=consistent, **key)

    def get(
        self,
        model: type[T],
        *,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        consistent: bool = False,
        **key: object,
    ) -> list[Request]:
        """The requests ``db.get`` would send, in rounds (see ``Explain.get``).

        The first round is sent concurrently; the new layout's reads of a relationship with
        ``was=`` follow it.
        """
        return self._of(model).get(model, load=load, consistent=consistent, **key)

    def transact_get_reads(self, wanted: Sequence[KeyOf]) -> TransactGetReads:
        """The TransactGetItems behind ``db.transact_get``; checked before anything is sent."""

        def locate(model: type[Any]) -> tuple[ModelInfo[Any], str]:
            connected = self._tables.connected(model)
            return connected.table.info(model), connected.name

        return transact_get_reads(wanted, locate)

    def transact_get(self, *wanted: KeyOf) -> list[Request]:
        """The TransactGetItems ``db.transact_get`` sends (one request, listed as every explain)."""
        return [self.transact_get_reads(wanted).request]

    def put(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> list[Request]:
        """The requests ``db.put`` sends for ``obj``, in order (see :meth:`plan`)."""
        return self._of(type(obj)).put(obj, condition=condition, overwrite=overwrite)

    def update(
        self,
        obj: object,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Returns = "new",
        exactly_once: bool | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> list[Request]:
        """The requests ``db.update`` sends, in order (see :meth:`plan`).

        ``exactly_once`` as ``db.update`` takes it (None: the connection's default). The
        TransactWriteItems shown has no ``ClientRequestToken``: the transport adds one, new
        for each call.
        """
        explain = self._of(type(obj))
        once = self._exactly_once if exactly_once is None else exactly_once
        return explain.update(
            obj, upsert=upsert, condition=condition, returns=returns, exactly_once=once, **ops
        )

    def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: bool = False,
        max_items: int | None = DEFAULT_MAX_ITEMS,
        **key: object,
    ) -> list[Request]:
        """The requests ``db.delete`` sends (see :meth:`Explain.delete`)."""
        explain = self._of(target if isinstance(target, type) else type(target))
        return explain.delete(
            target, condition=condition, cascade=cascade, max_items=max_items, **key
        )

    def put_all(self, objs: Iterable[object]) -> list[Request]:
        """The requests ``db.put_all`` sends: reads it needs, then BatchWriteItems of 25."""
        groups = self._tables.by_table(objs)
        if not groups:
            return []
        return self._plan([(c, c.writes.put_all(o)) for c, o in groups])

    def delete_all(self, objs: Iterable[object]) -> list[Request]:
        """The BatchWriteItem requests ``db.delete_all`` sends (25 deletes a request)."""
        groups = self._tables.by_table(objs)
        if not groups:
            return []
        return self._plan([(c, c.writes.delete_all(o)) for c, o in groups])

    def _plan(self, groups: Sequence[tuple[Connected, Plan[int]]]) -> list[Request]:
        plan, table = self._tables.together_plan(groups)
        explain = groups[0][0].explain if table is not None else self._any()
        return explain.plan(plan)

    def _any(self) -> Explain:
        # Steps of several tables name their tables: any table's explain shows them.
        return self._tables.connected_tables()[0].explain

    def add(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> list[Request]:
        """The requests ``db.add(parent, relationship, child)`` sends."""
        return self._children_of(parent, relationship).add(parent, relationship, child)

    def remove(self, parent: P, relationship: HasManyRelation[T, P], child: T) -> list[Request]:
        """The requests ``db.remove(parent, relationship, child)`` sends."""
        return self._children_of(parent, relationship).remove(parent, relationship, child)

    def _children_of(self, parent: object, relationship: Relationship[Any]) -> Explain:
        """The explain of the table holding the children (another table's, across tables)."""
        if isinstance(relationship, HasManyRelation) and relationship.owner is type(parent):
            return self._tables.of_table(relationship.children_table).explain
        return self._of(type(parent))  # which refuses the call, saying why

    def plan(self, plan: Plan[Any], table: Table | None = None) -> list[Request]:
        """Every request a write plan sends, in order (see :meth:`Explain.plan`).

        ``table``: the table of the plan's batch steps, for a plan of one table's planner
        (None: the only table's; steps of several tables name theirs).
        """
        if table is None:
            tables = self._tables.connected_tables()
            return (tables[0].explain if len(tables) == 1 else self._any()).plan(plan)
        return self._tables.of_table(table).explain.plan(plan)

    def query(
        self,
        model: type[T],
        index: str | None = None,
        *,
        consistent: bool = False,
        load: Sequence[Relationship[Any, T] | LoadOption[T]] = (),
        **components: object,
    ) -> list[Request]:
        """The requests a page of ``db.query`` sends (see ``Explain.query``).

        Its Query (with ``load=``: widened to shared children), then what ``load=`` sends for
        each parent it returns, with FromRead values.
        """
        explain = self._of(model)
        return explain.query(model, index, consistent=consistent, load=load, **components)

    def query_read(
        self,
        info: ModelInfo[Any],
        index: str | None,
        components: Mapping[str, object],
        *,
        consistent: bool = False,
    ) -> Finished[CollectionRead]:
        """The collection read behind ``db.query``, as it is sent (see ``finish_query``)."""
        explain = self._of(info.cls)
        return explain.query_read(info, index, components, consistent=consistent)
