"""Which table a call goes to: the tables of one connection, by model, by Table and by name.

A :class:`~dynorm.io.database.Database` holds one :class:`Tables` and asks it where each call
goes; ``db.explain`` asks the same one, so what is shown is planned by the table that is written.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import msgspec

from dynorm.core.chunks import BATCH_GET_MAX, BATCH_WRITE_MAX
from dynorm.core.errors import DefinitionError
from dynorm.core.steps import Plan, together
from dynorm.mapping.model import ModelInfo, ModelTable, info_of
from dynorm.mapping.table import Table

if TYPE_CHECKING:
    from dynorm.mapping.explain import Explain
    from dynorm.mapping.writeplan import WritePlanner

__all__ = ["Connected", "Tables", "name_tables", "table_of"]


class Connected(msgspec.Struct, frozen=True, eq=False, dict=True):
    """One table of a connection: its name there, and the planners of its writes and explains.

    The planners are built on first use (a process that only reads never imports the write
    side); each is then an attribute of the instance, as cheap to reach as a field.
    """

    table: Table
    name: str
    batch_get_size: int = BATCH_GET_MAX
    batch_write_size: int = BATCH_WRITE_MAX
    #: The names of the connection's other tables (loads across tables read them).
    name_of: Callable[[ModelTable], str] | None = None

    @functools.cached_property
    def writes(self) -> WritePlanner:
        """The planner of this table's writes, under its name on this connection."""
        from dynorm.mapping.writeplan import WritePlanner  # noqa: PLC0415 - once per table

        return WritePlanner(self.table, self.name, self.name_of)

    @functools.cached_property
    def explain(self) -> Explain:
        """This table's ``db.explain`` (planned by the same write planner as the writes)."""
        from dynorm.mapping.explain import Explain  # noqa: PLC0415 - once per table

        return Explain(
            self.table,
            self.name,
            self.writes,
            batch_write_size=self.batch_write_size,
            batch_get_size=self.batch_get_size,
            name_of=self.name_of,
        )


def table_of(info: ModelInfo[Any]) -> Table:
    """The Table a model is declared on (models name it through the ModelTable port)."""
    return cast("Table", info.table)


def name_tables(
    tables: Sequence[Table],
    table_name: str | None,
    table_names: Mapping[Table, str] | None,
) -> list[tuple[Table, str]]:
    """Each table with the name it has on this connection; DefinitionError for a mix-up."""
    if not tables:
        raise DefinitionError("connect() takes at least one Table: connect(table, ...)")
    for given in tables:
        if not isinstance(given, Table):
            raise DefinitionError(
                f"connect() takes Tables as its positional arguments; got {given!r} (its options "
                "are keywords)"
            )
    if len(set(tables)) != len(tables):
        raise DefinitionError(
            f"connect() was given one Table twice ({', '.join(t.name for t in tables)}); "
            "pass each table once"
        )
    names = dict(table_names or {})
    if table_name is not None:
        if len(tables) > 1:
            raise DefinitionError(
                "table_name= renames the one table of a connection; with several, give "
                "table_names={table: 'name', ...}"
            )
        if names:
            raise DefinitionError("give table_name= or table_names=, not both")
        names = {tables[0]: table_name}
    strays = [t for t in names if t not in tables]
    if strays:
        raise DefinitionError(
            f"table_names= names Table {strays[0].name!r}, which is not among the tables "
            f"given to connect() ({', '.join(repr(t.name) for t in tables)}); pass it too"
        )
    named = [(t, names.get(t) or t.name) for t in tables]
    seen: dict[str, Table] = {}
    for table, name in named:
        if name in seen:
            raise DefinitionError(
                f"two tables of this connection are named {name!r} (Table {seen[name].name!r} "
                f"and Table {table.name!r}); give one another name with "
                "table_names={table: 'name'}"
            )
        seen[name] = table
    return named


class Tables:
    """The tables of one connection: which one, under which name, each call goes to.

    Built once per :class:`~dynorm.io.database.Database` (a ``WritePlanner`` and an ``Explain``
    per table, on first use); every routing question is answered here, before anything is sent.
    """

    def __init__(
        self,
        table: Table | Sequence[Table],
        *,
        table_name: str | None = None,
        table_names: Mapping[Table, str] | None = None,
        batch_get_size: int,
        batch_write_size: int,
    ) -> None:
        given = (table,) if isinstance(table, Table) else tuple(table)
        named = name_tables(given, table_name, table_names)
        for each, _ in named:
            each.check()
        connected = [
            Connected(
                each,
                name,
                batch_get_size=batch_get_size,
                batch_write_size=batch_write_size,
                name_of=self.name_of,
            )
            for each, name in named
        ]
        #: The tables of this connection, in the order given.
        self.tables: Final = tuple(t for t, _ in named)
        self._connected: Final = {c.table: c for c in connected}
        #: The table a view made by ``focused`` answers ``only`` with (None: not a view).
        self._focus: Connected | None = None
        self._by_name: Final = {c.name: c for c in connected}

    def only(self, what: str, advice: str | None = None) -> Connected:
        """The one table of a one-table connection; with several, DefinitionError naming ``what``.

        ``advice``: what to do instead (default: name a table, or ask by model). A view made
        by :meth:`focused` answers with its table.
        """
        if self._focus is not None:
            return self._focus
        if len(self._connected) == 1:
            return next(iter(self._connected.values()))
        raise DefinitionError(
            f"db.{what} names the one table of a connection, and this one has "
            f"{len(self.tables)} ({', '.join(map(repr, self._by_name))}); "
            + (advice or "use db.tables, db.name_of(table) or db.connected(Model)")
        )

    def name_of(self, table: ModelTable) -> str:
        """The name ``table`` has on this connection (``table_names=``, else its own)."""
        return self.of_table(table).name

    def focused(self, table: ModelTable) -> Tables:
        """These tables, ``table`` answering what asks for the one table (see ``only``)."""
        view = copy.copy(self)
        view._focus = self.of_table(table)
        return view

    def of_table(self, table: ModelTable) -> Connected:
        """``table`` as this connection holds it (DefinitionError when it was not passed)."""
        found = self._connected.get(cast("Table", table))
        if found is None:
            names = ", ".join(repr(t.name) for t in self.tables)
            raise DefinitionError(
                f"Table {table.name!r} is not a table of this connection (it has {names}); "
                f"pass it to connect() beside them: connect("
                f"{', '.join(t.name for t in self.tables)}, {table.name}, ...)"
            )
        return found

    def connected(self, model: type[Any]) -> Connected:
        """The table ``model`` is declared on, as this connection holds it.

        DefinitionError, before anything is sent, when that table was not passed to
        :func:`connect`.
        """
        info = info_of(model)
        found = self._connected.get(cast("Table", info.table))
        if found is None:
            names = ", ".join(repr(t.name) for t in self.tables)
            raise DefinitionError(
                f"{info.name} is a model of Table {info.table.name!r}, which this connection "
                f"was not given (it has {names}); pass that Table to connect() too: "
                f"connect({', '.join(t.name for t in self.tables)}, {info.table.name}, ...)"
            )
        return found

    def connected_tables(self) -> list[Connected]:
        """Every table of this connection, in the order given to :func:`connect`.

        A view made by :meth:`focused` has its one table: what acts on every table
        (``create_table()``, ``delete_table()``, a plan's batches) acts on that one.
        """
        if self._focus is not None:
            return [self._focus]
        return list(self._connected.values())

    def table_named(self, name: str) -> Table | None:
        """The Table this connection calls ``name``, or None when it has none of that name."""
        found = self._by_name.get(name)
        return None if found is None else found.table

    def of_name(self, name: str) -> Connected:
        """The table this connection calls ``name`` (the name a request carries)."""
        found = self._by_name.get(name)
        if found is None:  # pragma: no cover - every read names a table of this connection
            raise DefinitionError(f"table {name!r} is not a table of this connection")
        return found

    def by_table(self, objs: Iterable[object]) -> list[tuple[Connected, list[object]]]:
        """``objs`` grouped by their tables (in the order first seen); checked before any I/O."""
        groups: dict[Table, tuple[Connected, list[object]]] = {}
        # Per class, the list its objects go to: one lookup per object on the hot path.
        lists: dict[type, list[object]] = {}
        for obj in objs:
            found = lists.get(type(obj))
            if found is None:
                connected = self.connected(type(obj))
                group = groups.get(connected.table)
                if group is None:
                    group = groups[connected.table] = (connected, [])
                found = lists[type(obj)] = group[1]
            found.append(obj)
        return list(groups.values())

    def together_plan(
        self, groups: Sequence[tuple[Connected, Plan[int]]]
    ) -> tuple[Plan[Any], Table | None]:
        """One plan for plans of several tables (their batches shared), or the one plan."""
        if len(groups) == 1:
            ((connected, plan),) = groups
            return plan, connected.table
        return together([(c.name, p) for c, p in groups]), None
