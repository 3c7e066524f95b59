"""Table administration of a connection: create, delete and describe its tables, and wait.

:class:`TableAdmin` is the part of a :class:`~dynorm.io.database.Database` behind
``create_table``, ``delete_table`` and ``describe_table``: it sends through the connection's
send and asks its :class:`~dynorm.io.tables.Tables` which tables a call means. Creating one
table (CreateTable, time to live, ``exists_ok``) is ``io/tablecreate.py``'s, imported by a
first ``create_table``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Literal

from dynorm.core.errors import DatabaseError, DefinitionError, TableNotFoundError
from dynorm.core.requests import delete_table, describe_table
from dynorm.mapping.table import Table

from .paging import Sender
from .tablecreate import table_status
from .tables import Connected, Tables

__all__ = ["TableAdmin"]


class TableAdmin:
    """Creates, deletes, describes and waits for the tables of one connection."""

    def __init__(self, send: Sender, tables: Tables) -> None:
        self._send = send
        self._tables = tables

    async def create_table(
        self,
        table: Table | None = None,
        /,
        *,
        timeout: float = 60.0,
        key_types: Mapping[str, Literal["S", "N", "B"]] | None = None,
        exists_ok: bool = False,
    ) -> list[Table]:
        """``Database.create_table``: create, wait until active, enable time to live."""
        chosen = self._chosen(table)
        if key_types is None or len(chosen) == 1:
            made = await asyncio.gather(
                *(self._create(c, timeout, key_types, exists_ok=exists_ok) for c in chosen)
            )
            return [c.table for c, created in zip(chosen, made, strict=True) if created]
        # Several tables: each takes the entries that name its own key attributes.
        held = {c.table: set(c.table.attribute_names()) for c in chosen}
        strays = [name for name in key_types if not any(name in h for h in held.values())]
        if strays:
            raise DefinitionError(
                f"key_types names {strays[0]!r}, which is no key attribute of the tables "
                f"created ({', '.join(repr(c.table.name) for c in chosen)})"
            )
        made = await asyncio.gather(
            *(
                self._create(
                    c,
                    timeout,
                    {k: v for k, v in key_types.items() if k in held[c.table]},
                    exists_ok=exists_ok,
                )
                for c in chosen
            )
        )
        return [c.table for c, created in zip(chosen, made, strict=True) if created]

    def _chosen(self, table: Table | None) -> list[Connected]:
        return self._tables.connected_tables() if table is None else [self._tables.of_table(table)]

    async def _create(
        self,
        connected: Connected,
        timeout: float,
        key_types: Mapping[str, Literal["S", "N", "B"]] | None,
        *,
        exists_ok: bool,
    ) -> bool:
        from .tablecreate import create_one  # noqa: PLC0415 - not on a data path

        return await create_one(
            self._send,
            self._wait_for,
            connected,
            timeout=timeout,
            key_types=key_types,
            exists_ok=exists_ok,
        )

    async def delete_table(self, table: Table | None = None, /, *, timeout: float = 60.0) -> None:
        """Delete every table of the connection (or only ``table``) and wait until it is gone."""

        async def delete(name: str) -> None:
            await self._send(delete_table(name))
            await self._wait_for(name, lambda described: described is None, timeout)

        await asyncio.gather(*(delete(c.name) for c in self._chosen(table)))

    async def describe_table(self, table: Table | None = None, /) -> dict[str, Any] | None:
        """DescribeTable's ``Table`` (keys, indexes, status, item count), or None if missing.

        ``table``: which table of the connection (None: the only one).
        """
        if table is None:
            name = self._tables.only("describe_table()", "name one: db.describe_table(table)").name
        else:
            name = self._tables.name_of(table)
        return await self._describe(name)

    async def _describe(self, name: str) -> dict[str, Any] | None:
        try:
            described = await self._send(describe_table(name))
        except TableNotFoundError:
            return None
        found: dict[str, Any] = described["Table"]
        return found

    async def _wait_for(
        self, name: str, done: Callable[[Mapping[str, Any] | None], bool], timeout: float
    ) -> None:
        """Describe ``name`` until ``done`` accepts its description (None: no such table)."""
        delay = 0.01
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            described = await self._describe(name)
            if done(described):
                return
            status = table_status(described)
            if asyncio.get_running_loop().time() > deadline:
                raise DatabaseError(f"table {name!r} is still {status} after {timeout}s")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
