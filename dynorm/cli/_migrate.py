"""``dynorm migrate``: move live data into what the declaration says, with a progress bar."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any, cast

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from dynorm.core.errors import DynormError
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.relations import HasManyRelation, Relationship, relationships_of
from dynorm.mapping.strategies import Strategy
from dynorm.mapping.table import Table
from dynorm.migrations import (
    DEFAULT_LEASE,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    CheckpointError,
    MigrationProgress,
    MigrationReport,
    Workers,
    backfill_index,
    migration_status,
    progress_table_name,
    repair_copies,
    upgrade_items,
)
from dynorm.migrations import (
    migrate as run_migration,
)

from ._connection import (
    ConnectOptions,
    connection_options,
    rate_limit_option,
)
from ._output import err, out
from ._preflight import check_tables
from ._strategy import StrategyParam
from ._target import TableParam

__all__ = ["migrate"]


def _model(table: Table, name: str) -> ModelInfo[Any]:
    found = table.models  # by class name
    if "." in name and name.partition(".")[0] in found:
        raise click.BadParameter(
            f"--backfill and --upgrade take a model, not {name!r}; the table's models: "
            f"{', '.join(sorted(found))}",
            param_hint="SUBJECT",
        )
    if name not in found:
        raise click.BadParameter(
            f"Table {table.name!r} has no model {name!r}; its models: {', '.join(sorted(found))}",
            param_hint="SUBJECT",
        )
    return found[name]


def _relationship(table: Table, subject: str) -> Relationship[Any]:
    model, dot, name = subject.partition(".")
    info = _model(table, model)
    if not dot or name not in relationships_of(info):
        rels = ", ".join(f"{info.name}.{r}" for r in relationships_of(info)) or "none"
        raise click.BadParameter(
            f"{subject!r} is not a relationship; {info.name}'s relationships: {rels} "
            "(--from and --copies take a relationship, Parent.children; --backfill a model)",
            param_hint="SUBJECT",
        )
    return relationships_of(info)[name]


def _moving(table: Table, subject: str, from_: Strategy | None) -> HasManyRelation[Any]:
    """The HasMany whose children a strategy change (or ``--status``) is about."""
    target = _relationship(table, subject)
    if not isinstance(target, HasManyRelation):
        raise click.BadParameter(f"{subject} is not a HasMany", param_hint="SUBJECT")
    if from_ is None and target.declared_was is None:
        raise click.UsageError(
            f"{subject} declares no was=: give --from STRATEGY (where its children are stored "
            "now), or declare was= on it, or give --copies or --backfill"
        )
    return target


def _workers(
    *,
    segments: int | None,
    segment: int | None,
    coordinate: bool,
    progress_table: str | None,
    lease: float | None,
    checkpoint: bool,
) -> Workers | None:
    """The Workers of a run with --segment or --coordinate; None for a single process."""
    if segment is None and not coordinate:
        for flag, given in (("--progress-table", progress_table), ("--lease", lease)):
            if given is not None:
                raise click.UsageError(f"{flag} goes with --segment I or --coordinate")
        return None
    if segments is None:
        raise click.UsageError(
            "--segment and --coordinate go with --segments N: every worker of the migration "
            "gives the same N (e.g. --segment 0 --segments 3)"
        )
    if segment is not None and not 0 <= segment < segments:
        raise click.UsageError(
            f"--segment {segment} is not a segment of --segments {segments}: give 0 to "
            f"{segments - 1}"
        )
    if checkpoint:
        raise click.UsageError(
            "--checkpoint and --no-checkpoint are for a single process; with --segment or "
            "--coordinate the progress is kept in the progress table"
        )
    return Workers(
        segments=segments,
        segment=segment,
        progress_table=progress_table,
        lease=DEFAULT_LEASE if lease is None else lease,
    )


_LET_GO = (
    "; this worker's segment is let go: run the same command again (or let another worker) to go on"
)


def _check_flags(
    *, strategy: bool, copies: bool, backfill: bool, upgrade: bool, as_json: bool, index: bool
) -> None:
    """UsageError for flags that do not go together (``as_json``, ``index``: given alone)."""
    if copies + backfill + upgrade + strategy > 1:
        raise click.UsageError(
            "give one of --copies, --backfill, --upgrade, or a strategy change (--from "
            "STRATEGY, or none for the relationship's was=, and --status to count what is left)"
        )
    if as_json:
        raise click.UsageError("--json goes with --status")
    if index:
        raise click.UsageError("--index goes with --backfill")


def _print_start(
    report: MigrationReport, saved: Path | None, workers: Workers | None, name: str
) -> None:
    """Where the run's progress came from: a resumed checkpoint, or the workers' segments."""
    if workers is None:
        if report.resumed:
            err.print(f"Resumed from {saved}")
        return
    if report.dry_run:
        return
    mine = ", ".join(map(str, report.segments_finished)) or "none (they were done already)"
    err.print(
        f"All {workers.segments} segments are done (progress in "
        f"{workers.progress_table or progress_table_name(name)!r}); "
        f"finished by this worker: {mine}"
    )


def _default_checkpoint(table_name: str, subject: str, kind: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{table_name}-{subject}-{kind}")
    return Path(f".dynorm-migrate-{safe}.json")


class _Bar:
    """A rich progress bar fed by ``on_progress``; one task per phase (migrate, verify)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}

    def __call__(self, step: MigrationProgress) -> None:
        task = self.tasks.get(step.phase)
        verb = "checking" if step.phase == "verify" else ("counting" if step.dry_run else "moving")
        if task is None:
            task = self.tasks[step.phase] = self.progress.add_task(verb, total=step.total)
        counts = f"written {step.written}, deleted {step.deleted}, updated {step.updated}"
        self.progress.update(
            task,
            completed=step.scanned,
            total=max(step.total, step.scanned) if step.total else None,
            description=f"{verb} ({counts})" if step.phase == "migrate" else verb,
        )


def _summary(report: MigrationReport, where: str) -> RichTable:
    summary = RichTable(title=f"{report.kind}: {report.subject} at {where}", title_justify="left")
    summary.add_column("")
    summary.add_column("would change" if report.dry_run else "done", justify="right")
    summary.add_row("items scanned", str(report.scanned))
    summary.add_row("items written", str(report.written))
    summary.add_row("items deleted", str(report.deleted))
    summary.add_row("parents updated", str(report.updated))
    if report.refused:
        summary.add_row("[red]parents refused[/]", str(len(report.refused)))
    if report.skipped:
        summary.add_row("[yellow]items skipped (they do not decode)[/]", str(len(report.skipped)))
    check = report.verification
    if check is not None:
        summary.add_section()
        summary.add_row("verified: changes left to make", str(check.leftovers))
        summary.add_row("verified: children read through the declaration", str(check.children))
        summary.add_row("verified: children not reachable", str(check.unreachable))
        if check.orphans:
            summary.add_row("verified: children without a stored parent", str(check.orphans))
    return summary


def _status(
    table: Table,
    subject: str,
    from_: Strategy | None,
    *,
    as_json: bool,
    connection: ConnectOptions,
) -> None:
    """``--status``: the children of ``subject`` still in the old layout, printed; exit 0."""
    target = _moving(table, subject, from_)
    others = [cast("Table", target.children_table)] if target.crosses_tables else []

    async def count() -> int:
        async with connection.open(table, *others) as db:
            return await migration_status(db, target, from_=from_)

    left = asyncio.run(count())
    if as_json:
        click.echo(json.dumps({"subject": subject, "old_layout_children": left}))
    elif left:
        out.print(f"{subject}: {left} children still in the old layout; run dynorm migrate")
    else:
        out.print(f"{subject}: no children left in the old layout; was= can be deleted")


def _print_findings(report: MigrationReport) -> None:
    """What the run refused, skipped and found wrong, one line each."""
    if report.refused:
        for line in report.refused:
            out.print(f"[red]refused:[/] {line}")
    for line in report.skipped:
        out.print(f"[yellow]skipped:[/] {escape(line)}")
    if report.skipped:
        out.print(
            "Skipped items are left as they are: fix or delete them, then run the same command "
            "again to move them."
        )
    check = report.verification
    if check is not None and check.problems:
        for line in check.problems:
            out.print(f"[red]problem:[/] {line}")


@click.command()
@click.argument("table", type=TableParam())
@click.argument("subject")
@click.option(
    "--from",
    "from_",
    type=StrategyParam(),
    help='Where SUBJECT\'s children are stored now, written as declared, e.g. "Partition()". '
    "SUBJECT is a relationship (Parent.children); its declaration is the target. Default: "
    "the relationship's was=.",
)
@click.option(
    "--status",
    is_flag=True,
    help="Print how many of SUBJECT's children are still in the old layout (was=, or --from) "
    "and exit; at 0, delete was=. One consistent Scan of the table; nothing is written.",
)
@click.option("--json", "as_json", is_flag=True, help="With --status: print it as JSON.")
@click.option(
    "--copies",
    is_flag=True,
    help="Make every child's Denormalized copies equal its parent's fields (SUBJECT: a "
    "relationship).",
)
@click.option(
    "--backfill",
    is_flag=True,
    help="Write the index keys SUBJECT's templates give into every item of it (SUBJECT: a model).",
)
@click.option(
    "--upgrade",
    is_flag=True,
    help="Rewrite every item of SUBJECT (a model with schema_version=) stored at an older "
    "version at the current one, through its upgrades.",
)
@click.option("--index", help="With --backfill: only this index (default: every index).")
@click.option("--dry-run", is_flag=True, help="Count what would change; write nothing.")
@click.option(
    "--checkpoint",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where progress is saved after each page; a run finds it and resumes "
    "(default: .dynorm-migrate-TABLE-SUBJECT-KIND.json here).",
)
@click.option("--no-checkpoint", is_flag=True, help="Keep no checkpoint (no resuming).")
@click.option(
    "--segments",
    type=click.IntRange(min=1),
    metavar="N",
    help="Parallel Scan segments (default 1); with --segment or --coordinate, the segments "
    "every worker of the migration gives.",
)
@click.option(
    "--segment",
    type=int,
    metavar="I",
    help="Run as one of several workers, taking segment I (0 to N-1 of --segments N) first, "
    "then any free one; progress is kept in the progress table, not in a file.",
)
@click.option(
    "--coordinate",
    is_flag=True,
    help="Run as one of several workers (start N with --segments N), each taking free "
    "segments; progress is kept in the progress table, not in a file.",
)
@click.option(
    "--progress-table",
    metavar="NAME",
    help="With several workers: the table holding their progress and leases (default: "
    "TABLE-NAME.dynorm-progress, created if missing).",
)
@click.option(
    "--lease",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help=f"With several workers: seconds a worker holds a segment without renewing it; a "
    f"dead worker's segment is taken over after it (default {DEFAULT_LEASE:.0f}).",
)
@click.option(
    "--page-size",
    type=click.IntRange(min=1, max=MAX_PAGE_SIZE),
    default=DEFAULT_PAGE_SIZE,
    show_default=True,
    help="Items a Scan page; also how often progress is saved.",
)
@click.option("--no-verify", is_flag=True, help="Skip the verification pass at the end.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@rate_limit_option
@connection_options
def migrate(
    table: Table,
    subject: str,
    *,
    from_: Strategy | None,
    status: bool,
    as_json: bool,
    copies: bool,
    backfill: bool,
    upgrade: bool,
    index: str | None,
    dry_run: bool,
    checkpoint: Path | None,
    no_checkpoint: bool,
    segments: int | None,
    segment: int | None,
    coordinate: bool,
    progress_table: str | None,
    lease: float | None,
    page_size: int,
    no_verify: bool,
    yes: bool,
    connection: ConnectOptions,
) -> None:
    """Rewrite the stored data of SUBJECT in MODULE:TABLE into the layout its declaration writes.

    \b
    dynorm migrate app:table Post.comments                         was= says where they are
    dynorm migrate app:table Post.comments --status                children left in was=
    dynorm migrate app:table User.tickets --from "Partition()"     the strategy changed
    dynorm migrate app:table Customer.addresses --from "Embedded(key='nickname')"
    dynorm migrate app:table Author.books --copies                 copies added or stale
    dynorm migrate app:table Ticket --backfill --index GSI2        a new index template
    dynorm migrate app:table User --upgrade                        schema_version= raised

    Each write is conditioned on what the run read, so two runs at once cannot clobber each
    other; items that do not decode are skipped and listed. After each page a checkpoint is
    saved, so an interrupted run resumes when run again. Running it twice changes nothing the
    second time.
    A verification pass re-reads the table at the end; a failure exits with status 1.

    \b
    Several workers (processes, machines) run one migration together:
    dynorm migrate app:table User.tickets --from "Partition()" --segments 4 --coordinate -y
    started 4 times (or with --segment 0 ... --segment 3) each take free Scan segments under
    a lease kept in DynamoDB; a dead worker's segment is taken over when its lease expires.
    """  # noqa: D301  (click's \b, a backspace, keeps the examples' lines as they are)
    _check_flags(
        strategy=from_ is not None or status,
        copies=copies,
        backfill=backfill,
        upgrade=upgrade,
        as_json=as_json and not status,
        index=index is not None and not backfill,
    )
    if status:
        _status(table, subject, from_, as_json=as_json, connection=connection)
        return
    workers = _workers(
        segments=segments,
        segment=segment,
        coordinate=coordinate,
        progress_table=progress_table,
        lease=lease,
        checkpoint=checkpoint is not None or no_checkpoint,
    )
    kind = "backfill" if backfill else "upgrade" if upgrade else "copies" if copies else "strategy"
    by_model = backfill or upgrade
    model: type[Any] | None = _model(table, subject).cls if by_model else None
    target: Any = None if by_model else _relationship(table, subject)
    if kind == "strategy":
        target = _moving(table, subject, from_)
    # A relationship into another table: its children are there, the parents here.
    others: list[Table] = (
        [cast("Table", target.children_table)]
        if kind == "strategy" and target.crosses_tables
        else []
    )
    name = connection.name_of(table) if not others else others[0].name
    saved = (
        None
        if no_checkpoint or dry_run or workers is not None
        else checkpoint or _default_checkpoint(name, subject, kind)
    )
    if not dry_run and not yes:
        # What would fail (no region, no such table) fails before anything is asked.
        check_tables(
            connection,
            [[table, *others]],
            missing=lambda missing: (
                f"there is no table {missing!r} at {connection.where()} to migrate; create it "
                "(dynorm create-table), or name the table with --table-name"
            ),
        )
        click.confirm(
            f"Rewrite {subject} ({kind}) in table {name!r} at {connection.where()}?",
            abort=True,
            err=True,
        )
    if saved is not None and saved.exists():
        err.print(f"Found {saved}: resuming from it if it belongs to this migration")
    options: dict[str, Any] = {
        "dry_run": dry_run,
        "checkpoint": saved,
        "segments": segments or 1,
        "page_size": page_size,
        "verify": not no_verify,
        "workers": workers,
    }

    async def work(bar: _Bar) -> MigrationReport:
        async with connection.open(table, *others) as db:
            options["on_progress"] = bar
            if backfill:
                assert model is not None  # noqa: S101  (set above for --backfill)
                return await backfill_index(db, model, index, **options)
            if upgrade:
                assert model is not None  # noqa: S101  (set above for --upgrade)
                return await upgrade_items(db, model, **options)
            if copies:
                return await repair_copies(db, target, **options)
            return await run_migration(db, target, from_=from_, **options)

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=err, transient=False) as progress:
            report = asyncio.run(work(_Bar(progress)))
    except KeyboardInterrupt:
        where = f"; run the same command again to resume from {saved}" if saved else ""
        where = where if workers is None else _LET_GO
        err.print(f"[yellow]Interrupted[/]{where}")
        raise SystemExit(130) from None
    except DynormError as exc:
        if saved is None or not saved.exists() or isinstance(exc, CheckpointError):
            raise
        raise click.ClickException(
            f"{type(exc).__name__}: {exc}\nProgress is saved in {saved}: run the same command "
            f"again to resume from {saved}"
        ) from exc
    _print_start(report, saved, workers, name)
    out.print(_summary(report, connection.where()))
    _print_findings(report)
    check = report.verification
    if dry_run:
        out.print("Dry run: nothing was written. Run without --dry-run to apply.")
    if not report.ok:
        raise click.ClickException(
            "the migration is not complete: see the problems above; run it again to move "
            "what is left"
            if check is not None and not check.ok
            else "some parents were refused (see above): a run would stop at their page"
        )
