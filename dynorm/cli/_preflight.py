"""Checks a command makes before it asks for confirmation.

``delete-table`` and ``migrate`` ask "Delete table ...?" / "Rewrite ...?" first. Asked before
the connection is tried, a user confirms and only then learns that no region is configured, the
credentials are refused, or the table is not there. So before asking, the connection is opened
and each table described (one DescribeTable a table): what would fail fails first, and nothing
is changed by the check. With ``--yes`` nothing is asked, and nothing is checked beforehand.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import click

from dynorm.mapping.table import Table

from ._connection import ConnectOptions
from ._output import Interrupted

__all__ = ["check_tables"]


def check_tables(
    connection: ConnectOptions,
    groups: Sequence[Sequence[Table]],
    *,
    missing: Callable[[str], str],
) -> None:
    """Open each group's connection and describe its tables; ``missing(name)`` says one is not.

    Each group is what the command connects to at once (``connection.open(*group)``, so
    ``--table-name`` renames the group's first table). A DynormError (no region, refused
    credentials, an endpoint that does not answer) is raised as the command would raise it.
    """

    async def check() -> None:
        for group in groups:
            async with connection.open(*group) as db:
                for table in group:
                    if await db.describe_table(table) is None:
                        raise click.ClickException(missing(db.name_of(table)))

    try:
        asyncio.run(check())
    except KeyboardInterrupt:
        raise Interrupted("stopped while checking the tables; nothing was changed") from None
