"""Installed distributions' versions, read without importing ``importlib.metadata``.

One reader for ``dynorm.__version__``, the User-Agent (dynorm, aiobotocore, botocore) and the
OpenTelemetry tracer's version: importing importlib.metadata costs tens of milliseconds of a
cold start, and the versions are one line of a file away.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path

__all__ = ["installed_version"]


def installed_version(distribution: str, default: str = "unknown") -> str:
    """An installed distribution's version, as ``importlib.metadata.version`` reads it.

    The first ``<name>-<version>.dist-info`` (or ``.egg-info``) folder on ``sys.path`` has it
    in its metadata's ``Version:`` line: read directly. Anything unusual asks importlib.metadata;
    ``default`` when the distribution is not installed.
    """
    prefix = f"{distribution}-"
    for folder in sys.path:
        for name in _names(folder):
            if name.endswith((".dist-info", ".egg-info")) and (
                name.startswith(prefix) or name[:-9] == distribution  # <name>.egg-info
            ):
                metadata = Path(
                    folder or ".", name, "METADATA" if name[-9:] == "dist-info" else "PKG-INFO"
                )
                with (
                    contextlib.suppress(OSError, UnicodeDecodeError),
                    metadata.open(encoding="utf-8") as lines,
                ):
                    for line in lines:
                        if line.startswith("Version:"):
                            return line.removeprefix("Version:").strip()
                        if not line.strip():
                            break  # the end of the headers
                return _metadata_version(distribution, default)
    return _metadata_version(distribution, default)


def _names(folder: str) -> tuple[str, ...]:
    """The names in a ``sys.path`` folder, listed once while it is unchanged.

    The User-Agent alone asks for three distributions, and a site-packages folder holds
    hundreds of names; a folder changed since (a package installed) is listed again.
    """
    try:
        changed = os.stat(folder or ".").st_mtime_ns  # noqa: PTH116  (as listdir below)
    except OSError:  # missing
        return ()
    return _listing(folder or ".", changed)


@functools.lru_cache(maxsize=64)
def _listing(folder: str, changed: int) -> tuple[str, ...]:
    del changed  # part of the cache key only
    try:
        return tuple(os.listdir(folder))  # noqa: PTH208  (names, not Paths: cheaper)
    except OSError:  # a zip archive, unreadable ...
        return ()


def _metadata_version(distribution: str, default: str) -> str:
    import importlib.metadata  # noqa: PLC0415  (only for an unusual installation: slow to import)

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return default
