"""``dynorm create-table`` and ``dynorm delete-table``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import click

from dynorm.core.errors import DatabaseError, TableNotFoundError
from dynorm.mapping.table import GSI, Table

from ._connection import ConnectOptions, Seconds, TableNameParam, connection_options
from ._output import Interrupted, out
from ._preflight import check_tables
from ._target import TableParam, TargetError, load_table

__all__ = ["create_table", "delete_table"]

_EXISTS = "ResourceInUseException"

F = TypeVar("F", bound=Callable[..., Any])


def describe_keys(table: Table) -> str:
    """``pk, sk; GSI1 (GSI1PK, GSI1SK)``: the key attributes of a table and its indexes."""
    keys = ", ".join(table.primary_attributes)
    indexes = [
        f"{name} ({', '.join(a for a in table.key_attributes(name) if a)})"
        + ("" if isinstance(index, GSI) else " local")
        for name, index in table.indexes.items()
    ]
    return keys + (f"; indexes {', '.join(indexes)}" if indexes else "")


def _timeout(waits_for: str) -> Callable[[F], F]:
    return click.option(
        "--timeout",
        type=Seconds(),
        default=60.0,
        show_default=True,
        help=f"Seconds to wait for the table to {waits_for}.",
    )


@click.command("create-table")
@click.argument("tables", type=TableParam(), nargs=-1, required=True, metavar="MODULE:TABLE...")
@click.option(
    "--exists-ok",
    is_flag=True,
    help="Accept a table that exists already: wait until it is active and enable its TTL.",
)
@_timeout("become active")
@connection_options
def create_table(
    tables: tuple[Table, ...], *, exists_ok: bool, timeout: float, connection: ConnectOptions
) -> None:
    """Create the tables MODULE:TABLE... declare: keys and indexes, on-demand, TTL if declared.

    Several tables (``dynorm create-table app.models:main app.models:audit``) are created one
    after another, each reported on its own line; --table-name renames a single table.
    """
    tables = tuple(dict.fromkeys(tables))  # one table named twice is created once
    if connection.table_name is not None and len(tables) > 1:
        raise click.UsageError(
            "--table-name renames one table; create the tables one at a time to rename each"
        )
    for table in tables:
        _create_one(table, exists_ok=exists_ok, timeout=timeout, connection=connection)


def _create_one(
    table: Table, *, exists_ok: bool, timeout: float, connection: ConnectOptions
) -> None:
    name = connection.name_of(table)

    async def create() -> bool:
        async with connection.open(table) as db:
            try:
                # --exists-ok: an existing table is waited for and given its TTL, as if created.
                return bool(await db.create_table(timeout=timeout, exists_ok=exists_ok))
            except DatabaseError as exc:
                if exc.code == _EXISTS and not exists_ok:  # else: going away, or another key
                    raise click.ClickException(
                        f"table {name!r} exists already at {connection.where()}; pass "
                        "--exists-ok to accept it, or --table-name to create another"
                    ) from exc
                raise

    try:
        created = asyncio.run(create())
    except KeyboardInterrupt:
        raise Interrupted(
            f"CreateTable may have been sent: then table {name!r} at {connection.where()} exists "
            "or is being created; run the same command again (with --exists-ok to accept it)"
        ) from None
    verb = "Created" if created else "Table exists already:"
    out.print(f"{verb} {name!r} ({describe_keys(table)}) at {connection.where()}")


@click.command("delete-table")
@click.argument("targets", metavar="MODULE:TABLE|NAME...", nargs=-1, required=True)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_timeout("be gone")
@connection_options
def delete_table(
    targets: tuple[str, ...], *, yes: bool, timeout: float, connection: ConnectOptions
) -> None:
    """Delete tables and every item in them: each named by MODULE:TABLE, or by its name.

    Asks for confirmation unless --yes is given (a non-interactive run without --yes aborts).
    Several tables are deleted one after another; --table-name renames a single table.
    """
    # A table named twice is deleted once.
    tables = list({connection.name_of(t): t for t in map(_table_of, targets)}.values())
    if connection.table_name is not None and len(tables) > 1:
        raise click.UsageError(
            "--table-name renames one table; delete the tables one at a time to rename each"
        )
    names = [connection.name_of(table) for table in tables]
    if not yes:  # what would fail (no region, no such table) fails before anything is asked
        check_tables(
            connection,
            [[table] for table in tables],
            missing=lambda name: f"there is no table {name!r} at {connection.where()} to delete",
        )
        said = ", ".join(map(repr, names))
        click.confirm(
            f"Delete table{'s' if len(names) > 1 else ''} {said} at {connection.where()}, with "
            f"every item in {'them' if len(names) > 1 else 'it'}?",
            abort=True,
            err=True,
        )
    for table in tables:
        _delete_one(table, timeout=timeout, connection=connection)


def _table_of(target: str) -> Table:
    """The Table ``target`` names: ``MODULE:TABLE``, or a table name (a Table of no models)."""
    if ":" in target:
        try:
            return load_table(target)
        except TargetError as exc:
            raise click.BadParameter(str(exc), param_hint="MODULE:TABLE|NAME") from exc
    try:
        TableNameParam().convert(target, None, None)
    except click.BadParameter as exc:
        exc.param_hint = "MODULE:TABLE|NAME"
        raise
    return Table(target)


def _delete_one(table: Table, *, timeout: float, connection: ConnectOptions) -> None:
    name = connection.name_of(table)

    async def delete() -> None:
        async with connection.open(table) as db:
            try:
                await db.delete_table(timeout=timeout)
            except TableNotFoundError as exc:
                raise click.ClickException(
                    f"there is no table {name!r} at {connection.where()} to delete"
                ) from exc

    try:
        asyncio.run(delete())
    except KeyboardInterrupt:
        raise Interrupted(
            f"DeleteTable may have been sent: then table {name!r} at {connection.where()} is "
            "gone or going (DynamoDB finishes on its own); run the same command again to check"
        ) from None
    out.print(f"Deleted {name!r} at {connection.where()}")
