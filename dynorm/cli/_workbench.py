"""``dynorm workbench export`` and ``dynorm workbench import``: NoSQL Workbench data models."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

import click
from rich.table import Table as RichTable

from dynorm.core.codec.converter import Item
from dynorm.core.errors import TableNotFoundError
from dynorm.mapping.table import Table
from dynorm.migrations import DEFAULT_LEASE, progress_table_name
from dynorm.workbench import (
    ImportReport,
    dump_model,
    export_model,
    import_model,
    load_model,
    scan_items,
    table_from_model,
)

from ._connection import (
    ConnectOptions,
    connection_options,
    rate_limit_option,
)
from ._migrate import _workers
from ._output import Interrupted, err, out
from ._tables import describe_keys
from ._target import TableParam, TargetError, load_object

__all__ = ["workbench"]

#: Items listed by key when no model maps them; the rest are counted.
_SHOWN = 20


@click.group()
def workbench() -> None:
    """NoSQL Workbench data models: export a Table's design, import a model's table and items."""


def _examples(target: str) -> list[object]:
    try:
        found = load_object(target, "OBJECTS")
    except TargetError as exc:
        raise click.BadParameter(str(exc), param_hint="--examples") from exc
    try:
        if callable(found):
            found = found()
        if not isinstance(found, Iterable) or isinstance(found, str | bytes):
            raise click.BadParameter(
                f"{target} is a {type(found).__name__}; name a list of model objects (or a "
                "function returning one)",
                param_hint="--examples",
            )
        return list(found)
    except click.BadParameter:
        raise
    except Exception as exc:  # noqa: BLE001  (the user's code, called or iterated: say what it raised)
        raise click.BadParameter(
            f"reading {target} raised {type(exc).__name__}: {' '.join(str(exc).split())}",
            param_hint="--examples",
        ) from None


@workbench.command("export")
@click.argument("table", type=TableParam())
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=Path),
    default="-",
    help="The JSON file to write (default, or -: standard output, and nothing else on it).",
)
@click.option(
    "--examples",
    metavar="MODULE:OBJECTS",
    help="Sample items: a list of model objects (or a function returning one), "
    "encoded as dynorm writes them.",
)
@click.option(
    "--live",
    is_flag=True,
    help="Sample items: every item of the live table (a Scan; connection options apply).",
)
@click.option("--name", help="The model's name in Workbench (default: the table's name).")
@click.option("--author", default="", help="ModelMetadata.Author.")
@click.option("--description", default="", help="ModelMetadata.Description.")
@connection_options
def export(
    table: Table,
    *,
    output: Path,
    examples: str | None,
    live: bool,
    name: str | None,
    author: str,
    description: str,
    connection: ConnectOptions,
) -> None:
    """Write MODULE:TABLE as a NoSQL Workbench data model: keys, indexes, a facet per model."""
    to_stdout = str(output) == "-"
    if not to_stdout and not output.parent.is_dir():
        raise click.BadParameter(
            f"there is no directory {str(output.parent)!r} to write {output.name!r} in",
            param_hint="--output",
        )
    items = _examples(examples) if examples else None
    raw: list[Item] | None = None
    if live:

        async def read() -> list[Item]:
            async with connection.open(table) as db:
                try:
                    return await scan_items(db)
                except TableNotFoundError as exc:
                    raise click.ClickException(
                        f"there is no table {db.table_name!r} at {connection.where()} to read; "
                        "name the live table with --table-name"
                    ) from exc

        try:
            raw = asyncio.run(read())
        except KeyboardInterrupt:
            raise Interrupted(
                f"stopped while reading the live table; nothing was written to {str(output)!r}: "
                "run the same command again"
            ) from None
    data = export_model(
        table,
        items=items,
        raw_items=raw,
        name=name,
        table_name=connection.table_name,
        author=author,
        description=description,
    )
    text = dump_model(data)
    if to_stdout:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {str(output)!r}: {exc.strerror}") from exc
    facets = data["DataModel"][0].get("TableFacets", [])
    count = sum(len(f.get("TableData", [])) for f in facets) + len(
        data["DataModel"][0].get("TableData", [])
    )
    err.print(f"Wrote {output}: {len(facets)} facets, {count} sample items")


@workbench.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--source", help="The table of the file to import, when it holds several.")
@click.option(
    "--models",
    type=TableParam(),
    metavar="MODULE:TABLE",
    help="Report which model each item maps to, and list those no model maps.",
)
@click.option("--no-create", is_flag=True, help="Fail if the table does not exist.")
@click.option(
    "--segments",
    type=click.IntRange(min=1),
    metavar="N",
    help="With --segment or --coordinate: the runs the items are cut in, the same N for "
    "every worker of the import.",
)
@click.option(
    "--segment",
    type=int,
    metavar="I",
    help="Import as one of several workers, taking run I (0 to N-1) first, then any free one.",
)
@click.option(
    "--coordinate",
    is_flag=True,
    help="Import as one of several workers (start N with --segments N), each taking free runs.",
)
@click.option(
    "--progress-table",
    metavar="NAME",
    help="With several workers: the table of their progress and leases (default: "
    "TABLE-NAME.dynorm-progress, created if missing).",
)
@click.option(
    "--lease",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="With several workers: seconds a worker holds a run without renewing it; a dead "
    f"worker's run is taken over after it (default {DEFAULT_LEASE:.0f}).",
)
@rate_limit_option
@connection_options
def import_(
    file: Path,
    *,
    source: str | None,
    models: Table | None,
    no_create: bool,
    segments: int | None,
    segment: int | None,
    coordinate: bool,
    progress_table: str | None,
    lease: float | None,
    connection: ConnectOptions,
) -> None:
    """Create the table FILE describes (if missing) and load its items in batches.

    The table keeps the file's name unless --table-name (or --table) names another. Progress
    goes to standard error. An import stopped part-way (a failed write, Ctrl-C) says how many
    items are stored; running it again completes it.

    Several workers (processes, machines) import one large file together with --segments N
    and --coordinate (or --segment I): each stores free runs of the items under a lease kept
    in DynamoDB; a dead worker's run is taken over when its lease expires.
    """
    workers = _workers(
        segments=segments,
        segment=segment,
        coordinate=coordinate,
        progress_table=progress_table,
        lease=lease,
        checkpoint=False,
    )
    model = load_model(file)
    if source is None and len(model.tables) > 1:
        names = ", ".join(repr(t.name) for t in model.tables)
        raise click.UsageError(
            f"{file} holds {len(model.tables)} tables ({names}); name the one to import with "
            "--source"
        )
    table = table_from_model(model, source=source)
    progress = _Progress(len(model.table(source).items))

    async def load() -> ImportReport:
        async with connection.open(table) as db:
            try:
                return await import_model(
                    db,
                    model,
                    source=source,
                    create=not no_create,
                    models=models,
                    on_progress=progress,
                    workers=workers,
                )
            except TableNotFoundError as exc:
                if not no_create:
                    raise
                raise click.ClickException(
                    f"there is no table {db.table_name!r} at {connection.where()}; leave out "
                    "--no-create to create it, or name an existing table with --table-name"
                ) from exc

    try:
        report = asyncio.run(load())
    except KeyboardInterrupt:
        name = connection.name_of(table)
        if workers is not None:
            err.print(
                f"[yellow]Interrupted[/]: this worker stored {progress.stored} items in {name!r}; "
                "its run is let go: run the same command again (or let another worker) to go on"
            )
            raise SystemExit(130) from None
        err.print(
            f"[yellow]Interrupted[/]: {progress.stored} of {progress.total} items are stored in "
            f"{name!r}. Run the same command again to complete the import (it writes whole "
            "items, so the stored ones are rewritten unchanged)"
        )
        raise SystemExit(130) from None
    where = connection.where()
    if report.created:
        out.print(f"Created {report.table_name!r} ({describe_keys(table)}) at {where}")
    out.print(f"Loaded {report.written} items into {report.table_name!r}")
    if workers is not None:
        mine = ", ".join(map(str, report.segments_finished)) or "none (they were done already)"
        err.print(
            f"All {workers.segments} segments are done (progress in "
            f"{workers.progress_table or progress_table_name(report.table_name)!r}); "
            f"stored by this worker: {mine}"
        )
    if models is not None:
        _print_mapping(report)


class _Progress:
    """``on_progress`` of an import: a line on standard error per percent stored, at most."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.stored = 0

    def __call__(self, stored: int, total: int) -> None:
        before, self.stored = self.stored, stored
        if stored < total and stored * 100 // total > before * 100 // total:
            err.print(f"Stored {stored} of {total} items")


def _print_mapping(report: ImportReport) -> None:
    mapped = RichTable(title="Items by model", title_justify="left")
    mapped.add_column("Model")
    mapped.add_column("Items", justify="right")
    for name, count in report.by_model.items():
        mapped.add_row(name, str(count))
    mapped.add_row("[yellow]no model[/]", str(len(report.unmapped)))
    out.print(mapped)
    for item in report.unmapped[:_SHOWN]:
        key = ", ".join(f"{a}={next(iter(v.values()))!r}" for a, v in item.key.items())
        out.print(f"  no model maps {key}")
    if len(report.unmapped) > _SHOWN:
        out.print(f"  … and {len(report.unmapped) - _SHOWN} more")
