"""``dynorm design MODULE:TABLE``: the key table and the access patterns, with their cost."""

from __future__ import annotations

import click
import orjson
from rich.table import Table as RichTable

from dynorm._table import Table
from dynorm.design import Design
from dynorm.design import design as design_of

from ._output import out
from ._target import TableParam

__all__ = ["design"]


@click.command()
@click.argument("table", type=TableParam())
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text: tables for the terminal; markdown: for docs; json: for tools.",
)
@click.option("--table-name", help="Show requests for this table name instead of the Table's.")
def design(table: Table, format_: str, table_name: str | None) -> None:
    """Show the entities of MODULE:TABLE and every access pattern with the requests it sends.

    Each entity's key templates, then each get, relationship load and query. Nothing is sent:
    the requests are planned by the planner that sends them, with {field} standing for the
    values a call gives.
    """
    found = design_of(table, table_name=table_name)
    if format_ == "json":
        click.echo(orjson.dumps(found.as_dict(), option=orjson.OPT_INDENT_2).decode())
    elif format_ == "markdown":
        click.echo(found.markdown(), nl=False)
    else:
        _print(found)


def _print(found: Design) -> None:
    indexes = "; ".join(f"{name}: {keys}" for name, keys in found.indexes.items())
    out.print(f"[bold]Table {found.table}[/]  keys: {', '.join(found.key_attributes[:2])}")
    if indexes:
        out.print(f"indexes: {indexes}")
    keys = RichTable(title="Entities", title_justify="left", show_lines=False)
    for column in ("Entity", *found.key_attributes, "Attributes"):
        keys.add_column(column, overflow="fold")
    for entity in found.entities:
        name = entity.entity + (f"\n[dim](in {entity.inside})[/]" if entity.inside else "")
        keys.add_row(
            name,
            *(entity.keys.get(a, "") for a in found.key_attributes),
            ", ".join(entity.attributes),
        )
    out.print(keys)
    patterns = RichTable(title="Access patterns", title_justify="left", show_lines=True)
    for column in ("Pattern", "Cost", "Requests"):
        patterns.add_column(column, overflow="fold")
    for p in found.patterns:
        strategy = f"\nvia {p.strategy}" if p.strategy else ""
        patterns.add_row(f"{p.name}\n[dim]{p.call}[/]", p.cost + strategy, "\n".join(p.requests))
    out.print(patterns)
