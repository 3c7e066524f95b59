"""``dynorm design MODULE:TABLE``: the key table and the access patterns, with their cost."""

from __future__ import annotations

import click
import orjson
from rich.table import Table as RichTable

from dynorm._table import Table
from dynorm.design import Design, EntityRow
from dynorm.design import design as design_of

from ._connection import TableNameParam
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
@click.option(
    "--table-name",
    type=TableNameParam(),
    help="Show requests for this table name instead of the Table's.",
)
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
    out.print(_key_table(found))
    patterns = RichTable(title="Access patterns", title_justify="left", show_lines=True)
    patterns.add_column("Pattern", ratio=3, overflow="fold")
    patterns.add_column("Cost", ratio=2, overflow="fold")
    patterns.add_column("Requests", ratio=4, overflow="fold")
    for p in found.patterns:
        strategy = f"\nvia {p.strategy}" if p.strategy else ""
        patterns.add_row(f"{p.name}\n[dim]{p.call}[/]", p.cost + strategy, "\n".join(p.requests))
    out.print(patterns)


def _key_table(found: Design) -> RichTable:
    """The seeds' key table (a column per key attribute) when it fits, else a row per key."""
    widths = [
        max([len(a), *(len(e.keys.get(a, "")) for e in found.entities)])
        for a in found.key_attributes
    ]
    entity_width = max(len(e.entity) for e in found.entities) if found.entities else 6
    # 3 columns of borders and padding per column, and room for the attribute list.
    wide = entity_width + sum(widths) + 3 * (len(widths) + 2) + 16 <= out.width
    table = RichTable(title="Entities", title_justify="left")
    table.add_column("Entity", no_wrap=True)
    if wide:
        for column in found.key_attributes:
            table.add_column(column, no_wrap=True)
        table.add_column("Attributes", ratio=1, overflow="fold")
        for entity in found.entities:
            table.add_row(
                _entity_name(entity),
                *(entity.keys.get(a, "") for a in found.key_attributes),
                ", ".join(entity.attributes),
            )
        return table
    table.add_column("Key", no_wrap=True)
    table.add_column("Template", overflow="fold")
    table.add_column("Attributes", ratio=1, overflow="fold")
    for entity in found.entities:
        keys = [(a, entity.keys[a]) for a in found.key_attributes if a in entity.keys] or [("", "")]
        for i, (attribute, template) in enumerate(keys):
            first = i == 0
            table.add_row(
                _entity_name(entity) if first else "",
                attribute,
                template,
                ", ".join(entity.attributes) if first else "",
                end_section=i == len(keys) - 1,
            )
    return table


def _entity_name(entity: EntityRow) -> str:
    return entity.entity + (f"\n[dim](in {entity.inside})[/]" if entity.inside else "")
