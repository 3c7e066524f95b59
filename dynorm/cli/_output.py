"""Terminal output: one rich console for results, one for messages; running a coroutine."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from rich.console import Console

__all__ = ["err", "out", "run"]

T = TypeVar("T")

#: Results (tables, JSON, markdown) go to stdout, so they can be piped or redirected.
out = Console(highlight=False, soft_wrap=True)
#: Progress and confirmations go to stderr.
err = Console(stderr=True, highlight=False)


def run(work: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine (a DynormError it raises is reported by the command group)."""
    return asyncio.run(work)
