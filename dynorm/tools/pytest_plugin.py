"""The ``dynorm`` pytest plugin: its hooks and fixtures, loaded by every pytest run.

Installing dynorm registers this module with pytest (entry point ``pytest11``, name ``dynorm``),
so it is imported by every pytest run of every project in the environment, whether its tests use
dynorm or not. It therefore imports nothing but pytest and ``dynorm/tools/testenv.py``: the hooks
read the environment only, and each fixture imports what it needs (the servers, the package's
I/O layers, moto) when a test first asks for it. ``dynorm.testing`` documents the fixtures and
re-exports them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

import pytest

from .testenv import (
    BACKEND_ENV,
    BACKENDS,
    ENDPOINT_ENV,
    EXTERNAL,
    fast_path_selected,
    selected_backend,
)

if TYPE_CHECKING:
    from .servers import RunningServer
    from .testing import Connect

__all__ = [
    "dynorm_backend",
    "dynorm_connect",
    "dynorm_server",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_report_header",
]

_TRANSACTIONS_MARKER: Final = "transactions"
_NO_TRANSACTIONS_REASON: Final = "dynalite does not implement TransactWriteItems"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker this plugin acts on, so ``--strict-markers`` suites may use it."""
    config.addinivalue_line(
        "markers",
        f"{_TRANSACTIONS_MARKER}: needs TransactWriteItems; skipped on dynalite, which lacks it",
    )


def pytest_report_header(config: pytest.Config) -> str:
    """Say which DynamoDB the fixtures talk to, so a failure report shows it."""
    del config  # part of the hook's signature only
    endpoint = os.environ.get(ENDPOINT_ENV)
    where = f" at {endpoint}" if endpoint else ""
    path = "fast request path" if fast_path_selected() else "botocore request path"
    return f"dynorm test backend: {selected_backend()}{where}, {path}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``transactions`` tests when the backend cannot run them."""
    del config  # part of the hook's signature only
    if selected_backend() != "dynalite":
        return
    skip = pytest.mark.skip(reason=_NO_TRANSACTIONS_REASON)
    for item in items:
        if item.get_closest_marker(_TRANSACTIONS_MARKER) is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def dynorm_backend() -> str:
    """Which DynamoDB the tests talk to: ``"moto"``, ``"dynalite"`` or ``"external"``."""
    backend = selected_backend()
    if backend != EXTERNAL and backend not in BACKENDS:
        known = ", ".join(BACKENDS)
        pytest.fail(
            f"{BACKEND_ENV}={backend!r} is not a known backend; use one of {known}, "
            f"or set {ENDPOINT_ENV} to use a running DynamoDB",
            pytrace=False,
        )
    return backend


@pytest.fixture(scope="session")
def dynorm_server(dynorm_backend: str, request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    """A DynamoDB-compatible endpoint shared by the whole test session.

    Under pytest-xdist each worker is a session of its own, so each starts its own server (or,
    with ``DYNORM_TEST_ENDPOINT_URL``, shares that endpoint with tables named per worker).
    """
    from .servers import RunningServer, start_server  # noqa: PLC0415  (see the module docstring)

    if dynorm_backend == EXTERNAL:
        yield RunningServer(url=os.environ[ENDPOINT_ENV], name=EXTERNAL, stop=lambda: None)
        return
    # `.dynalite/` is installed next to the project's pytest configuration (`make dynalite`).
    with start_server(dynorm_backend, request.config.rootpath) as server:
        yield server


@pytest.fixture
def dynorm_connect(dynorm_server: RunningServer) -> Connect:
    """``connect(table)``: a connected :class:`dynorm.Database` on a fresh copy of ``table``.

    Each call creates a table named ``<table.name>-<8 hex digits>`` (``<table.name>-gw0-<8 hex
    digits>`` in a pytest-xdist worker) with every index the models declare, and deletes it on
    exit, so tests never see each other's items. ``connect(app, audit)`` connects to several
    tables at once, each a fresh copy.
    """
    from .testing import fresh_connect  # noqa: PLC0415  (see the module docstring)

    return fresh_connect(dynorm_server.url)
