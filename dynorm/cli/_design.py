"""``dynorm design MODULE:TABLE``: the key table and the access patterns, with their cost."""

from __future__ import annotations

import textwrap

import click
import orjson
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text

from dynorm.design import Design, EntityRow
from dynorm.design import design as design_of
from dynorm.mapping.table import Table

from ._connection import TableNameParam
from ._output import out
from ._target import TableParam

__all__ = ["design"]

#: A width no line of a design reaches: measuring with it gives each cell's natural width.
_UNLIMITED = 1_000_000


@click.command()
@click.argument("tables", type=TableParam(), nargs=-1, required=True, metavar="MODULE:TABLE...")
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
def design(tables: tuple[Table, ...], format_: str, table_name: str | None) -> None:
    """Show the entities of MODULE:TABLE and every access pattern with the requests it sends.

    Each entity's key templates, then each get, relationship load and query. Nothing is sent:
    the requests are planned by the planner that sends them, with {field} standing for the
    values a call gives. Several tables are shown one after another (JSON: a list).
    """
    tables = tuple(dict.fromkeys(tables))
    if table_name is not None and len(tables) > 1:
        raise click.UsageError("--table-name renames one table; show the tables one at a time")
    found = [design_of(table, table_name=table_name) for table in tables]
    if format_ == "json":
        shown = found[0].as_dict() if len(found) == 1 else [f.as_dict() for f in found]
        click.echo(orjson.dumps(shown, option=orjson.OPT_INDENT_2).decode())
        return
    for i, one in enumerate(found):
        if i:
            click.echo()
        if format_ == "markdown":
            click.echo(one.markdown(), nl=False)
        else:
            _print(one)


def _print(found: Design) -> None:
    """The design as tables, laid out so that no template, name or call is broken mid-token.

    Piped or redirected, the tables take their natural width (a line per row, whatever its
    length), so what a user greps for is on one line. In a terminal, a table's columns are at
    least as wide as their longest token and wrap only between words; a table that cannot fit
    so is printed as blocks, a line per key, wrapped only between words.
    """
    heading = [Text(f"Table {found.table}  keys: {', '.join(found.key_attributes[:2])}")]
    heading[0].stylize("bold", 0, len(f"Table {found.table}"))
    indexes = "; ".join(f"{name}: {keys}" for name, keys in found.indexes.items())
    if indexes:
        heading.append(Text(f"indexes: {indexes}"))
    keys = [_key_table(found, per_key=False), _key_table(found, per_key=True)]
    patterns = _pattern_table(found)
    if not out.is_terminal:
        parts: list[RenderableType] = [*heading, keys[0], patterns]
        unlimited = out.options.update_width(_UNLIMITED)
        width = max(Measurement.get(out, unlimited, part).maximum for part in parts)
        wide = Console(
            file=out.file, width=max(width, 20), highlight=False, soft_wrap=True, no_color=True
        )
        for part in parts:
            wide.print(part)
        return
    for line in heading:
        out.print(line)
    fitting = next((table for table in keys if _fit(table, out.width)), None)
    if fitting is not None:
        out.print(fitting)
    else:
        _print_blocks("Entities", _entity_blocks(found))
    if _fit(patterns, out.width):
        out.print(patterns)
    else:
        _print_blocks("Access patterns", _pattern_blocks(found))


def _key_table(found: Design, *, per_key: bool) -> RichTable:
    """The entities with a column per key attribute, or (``per_key``) a row per key."""
    table = RichTable(title="Entities", title_justify="left")
    table.add_column("Entity")
    if not per_key:
        for column in found.key_attributes:
            table.add_column(column)
        table.add_column("Attributes")
        for entity in found.entities:
            table.add_row(
                _entity_name(entity),
                *(Text(entity.keys.get(a, "")) for a in found.key_attributes),
                Text(", ".join(entity.attributes)),
            )
        return table
    table.add_column("Key")
    table.add_column("Template")
    table.add_column("Attributes")
    for entity in found.entities:
        keys = [(a, entity.keys[a]) for a in found.key_attributes if a in entity.keys] or [("", "")]
        for i, (attribute, template) in enumerate(keys):
            first = i == 0
            table.add_row(
                _entity_name(entity) if first else "",
                Text(attribute),
                Text(template),
                Text(", ".join(entity.attributes) if first else ""),
                end_section=i == len(keys) - 1,
            )
    return table


def _pattern_table(found: Design) -> RichTable:
    patterns = RichTable(title="Access patterns", title_justify="left", show_lines=True)
    patterns.add_column("Pattern")
    patterns.add_column("Cost")
    patterns.add_column("Requests")
    for p in found.patterns:
        strategy = f"\nvia {p.strategy}" if p.strategy else ""
        patterns.add_row(
            Text.assemble(p.name, "\n", (p.call, "dim")),
            Text(p.cost + strategy),
            Text("\n".join(p.requests)),
        )
    return patterns


def _fit(table: RichTable, width: int) -> bool:
    """Fix ``table``'s column widths so it fits ``width`` with no token broken, if it can.

    Each column gets at least its longest word (cells wrap only at spaces), then what is left
    goes to the columns that would wrap, in proportion to what they lack of their longest line.
    """
    cells = [[column.header, *column.cells] for column in table.columns]
    measured = [
        [Measurement.get(out, out.options.update_width(_UNLIMITED), cell) for cell in column]
        for column in cells
    ]
    least = [max(m.minimum for m in column) for column in measured]
    most = [max(m.maximum for m in column) for column in measured]
    # Padding (a space each side) and a border per column, and one border more.
    room = width - 3 * len(table.columns) - 1
    if sum(least) > room:
        return False
    widths = list(least)
    spare = min(room, sum(most)) - sum(least)
    wants = [m - n for m, n in zip(most, least, strict=True)]
    if spare > 0:
        # In proportion to what each column lacks of its longest line; the rest one by one.
        total = sum(wants)
        for i, want in enumerate(wants):
            widths[i] += want * spare // total
        for i in sorted(range(len(wants)), key=lambda i: -wants[i]):
            if sum(widths) < sum(least) + spare and widths[i] < most[i]:
                widths[i] += 1
    for column, column_width in zip(table.columns, widths, strict=True):
        column.width = column_width
        column.overflow = "fold"
    return True


def _print_blocks(title: str, blocks: list[list[str]]) -> None:
    """A titled list of blocks: a first line, then indented lines wrapped between words."""
    out.print(Text(title, style="italic"))
    for lines in blocks:
        head, *rest = lines
        out.print(Text(head, style="bold"), soft_wrap=True)
        for line in rest:
            for wrapped in textwrap.wrap(
                line,
                width=max(out.width, 20),
                initial_indent="  ",
                subsequent_indent="      ",
                break_long_words=False,
                break_on_hyphens=False,
            ):
                out.print(Text(wrapped), soft_wrap=True)


def _entity_blocks(found: Design) -> list[list[str]]:
    blocks = []
    for entity in found.entities:
        inside = f" (in {entity.inside})" if entity.inside else ""
        lines = [f"{entity.entity}{inside}"]
        lines += [f"{a}: {entity.keys[a]}" for a in found.key_attributes if a in entity.keys]
        lines.append(f"attributes: {', '.join(entity.attributes)}")
        blocks.append(lines)
    return blocks


def _pattern_blocks(found: Design) -> list[list[str]]:
    blocks = []
    for p in found.patterns:
        strategy = f" via {p.strategy}" if p.strategy else ""
        blocks.append([p.name, p.call, f"cost: {p.cost}{strategy}", *p.requests])
    return blocks


def _entity_name(entity: EntityRow) -> Text:
    name = Text(entity.entity)
    if entity.inside:
        name.append(f"\n(in {entity.inside})", style="dim")
    return name
