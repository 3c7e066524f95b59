"""Terminal output: one rich console for results, one for messages; how Ctrl-C ends a command."""

from __future__ import annotations

from typing import IO, Any

import click
from rich.console import Console

__all__ = ["INTERRUPTED", "Interrupted", "err", "out"]

#: Results (tables, JSON, markdown) go to stdout, so they can be piped or redirected.
out = Console(highlight=False, soft_wrap=True)
#: Progress and confirmations go to stderr.
err = Console(stderr=True, highlight=False)

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT), as shells use.
INTERRUPTED = 130


class Interrupted(click.ClickException):
    """Ctrl-C stopped the command: ``Interrupted: <what is done, how to go on>``, status 130."""

    exit_code = INTERRUPTED

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"Interrupted: {self.format_message()}", err=True, file=file)
