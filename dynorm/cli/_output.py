"""Terminal output: one rich console for results, one for messages."""

from __future__ import annotations

from rich.console import Console

__all__ = ["err", "out"]

#: Results (tables, JSON, markdown) go to stdout, so they can be piped or redirected.
out = Console(highlight=False, soft_wrap=True)
#: Progress and confirmations go to stderr.
err = Console(stderr=True, highlight=False)
