"""The ``dynorm`` command group; each command lives in a module of its own."""

from __future__ import annotations

import click

from dynorm.core.errors import DynormError

from . import _design, _migrate, _tables, _workbench

__all__ = ["cli", "main"]


class _Group(click.Group):
    """The command group: errors end as ``Error: ...`` and exit status 1, not a traceback.

    A DynormError says what to change; an OSError names the file that could not be read or
    written (a checkpoint, an output file).
    """

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except DynormError as exc:
            raise click.ClickException(f"{type(exc).__name__}: {exc}") from exc
        except OSError as exc:  # a checkpoint or output path: say which and why
            raise click.ClickException(str(exc)) from exc


@click.group(
    cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(package_name="dynorm")
def cli() -> None:
    """Tools for a dynorm single-table design: design view, tables, Workbench, migrations.

    Commands that take MODULE:TABLE import the module (from the current directory, or a file
    path such as app/models.py) and work on the dynorm.Table it names.
    """


cli.add_command(_design.design)
cli.add_command(_tables.create_table)
cli.add_command(_tables.delete_table)
cli.add_command(_workbench.workbench)
cli.add_command(_migrate.migrate)


def main() -> None:
    """The ``dynorm`` console script."""
    cli(prog_name="dynorm")
