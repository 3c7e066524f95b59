"""The ``dynorm`` command group; each command lives in a module of its own."""

from __future__ import annotations

import click

from . import _design, _tables

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="dynorm")
def cli() -> None:
    """Tools for a dynorm single-table design: design view, tables, Workbench, migrations.

    Commands that take MODULE:TABLE import the module (from the current directory, or a file
    path such as app/models.py) and work on the dynorm.Table it names.
    """


cli.add_command(_design.design)
cli.add_command(_tables.create_table)
cli.add_command(_tables.delete_table)


def main() -> None:
    """The ``dynorm`` console script."""
    cli(prog_name="dynorm")
