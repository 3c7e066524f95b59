"""Terminal output: one rich console for results, one for messages, errors that exit non-zero."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import click
from rich.console import Console

from dynorm._errors import DynormError

__all__ = ["err", "out", "run"]

T = TypeVar("T")

#: Results (tables, JSON, markdown) go to stdout, so they can be piped or redirected.
out = Console(highlight=False, soft_wrap=True)
#: Progress and confirmations go to stderr.
err = Console(stderr=True, highlight=False)


def run(work: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; a DynormError becomes ``Error: ...`` and exit status 1."""
    try:
        return asyncio.run(work)
    except DynormError as exc:
        raise click.ClickException(f"{type(exc).__name__}: {exc}") from exc
