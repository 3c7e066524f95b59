"""The ``dynorm`` command line: ``dynorm --help`` lists its commands.

Only the command imports click and rich; ``import dynorm`` does not load this package.
"""

from __future__ import annotations

from ._app import cli, main

__all__ = ["cli", "main"]
