"""pytest plugin: a DynamoDB server per test session and a fresh table per test.

Installing dynorm registers this plugin (entry point ``pytest11``), so its fixtures are available
in any test suite. They start nothing unless a test asks for them.

Fixtures:

- ``dynorm_server`` (session): a :class:`~dynorm.tools.servers.RunningServer`. With
  ``DYNORM_TEST_ENDPOINT_URL`` set, that endpoint is used and no server is started. Otherwise the
  backend named by ``DYNORM_TEST_BACKEND`` is started: ``moto`` (default; needs
  ``dynorm[testing]``) or ``dynalite`` (needs ``.dynalite/`` in the pytest rootdir, see
  ``make dynalite``).
- ``dynorm_backend`` (session): ``"moto"``, ``"dynalite"`` or ``"external"``.
- ``dynorm_connect`` (function): ``connect(table)``, an async context manager that connects to the
  server, creates a uniquely named copy of ``table``, yields the :class:`dynorm.Database` and
  deletes the table on exit. ``connect(app, audit)`` does the same for several tables, on one
  connection (each table gets its own fresh copy).

``DYNORM_TEST_FAST_PATH=0`` makes ``dynorm_connect`` connect with ``fast_path=False``: botocore
builds, signs and parses every request instead of dynorm's fast request path (dynorm's suite
runs both ways).

Tests marked ``@pytest.mark.transactions`` are skipped on dynalite, which does not implement
``TransactWriteItems``.

Counting requests: :func:`count_requests` records every HTTP request a :class:`dynorm.Database`
sends inside a ``with`` block (one entry per HTTP attempt, retries included, from
:meth:`dynorm.Database.on_request`), so a test can hold a call to the number of requests it
promises::

    from dynorm.testing import count_requests

    async def test_org_and_users_in_one_query(db: Database) -> None:
        with count_requests(db) as log:
            org = await db.get(Org, name="MICROSOFT", load=[Org.users])
        assert log.operations == ["Query"]
        assert len(log) == 1

A user's ``conftest.py``::

    from collections.abc import AsyncIterator

    import pytest
    from dynorm import Database
    from dynorm.testing import Connect

    from myapp.models import table

    @pytest.fixture
    async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
        async with dynorm_connect(table) as db:
            yield db

    async def test_put_then_get(db: Database) -> None:
        await db.put(Org(name="ACME"))
        assert (await db.get(Org, name="ACME")).name == "ACME"

Async tests need an asyncio test runner such as pytest-asyncio (``asyncio_mode = "auto"``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Final, Protocol

import attrs
import pytest

from .servers import BACKENDS, RunningServer, start_server

if TYPE_CHECKING:
    from dynorm import Database, RequestEvent, Table

__all__ = [
    "BACKEND_ENV",
    "ENDPOINT_ENV",
    "FAST_PATH_ENV",
    "TEST_ACCESS_KEY_ID",
    "TEST_REGION",
    "TEST_SECRET_ACCESS_KEY",
    "Connect",
    "RequestLog",
    "RunningServer",
    "count_requests",
    "dynorm_backend",
    "dynorm_connect",
    "dynorm_server",
    "fast_path_selected",
    "fresh_table",
    "start_server",
]

ENDPOINT_ENV: Final = "DYNORM_TEST_ENDPOINT_URL"
"""Use this already running endpoint instead of starting a server."""
BACKEND_ENV: Final = "DYNORM_TEST_BACKEND"
"""Which embedded server to start: ``moto`` (default) or ``dynalite``."""
FAST_PATH_ENV: Final = "DYNORM_TEST_FAST_PATH"
"""``0`` connects with ``fast_path=False`` (botocore builds, signs and parses every request)."""
DEFAULT_BACKEND: Final = "moto"
EXTERNAL: Final = "external"

# Fixed fake credentials and region: local servers accept anything, and fixed values keep a
# developer's real AWS configuration (env vars, ~/.aws) from ever being picked up by tests.
TEST_REGION: Final = "us-east-1"
TEST_ACCESS_KEY_ID: Final = "testing"
TEST_SECRET_ACCESS_KEY: Final = "testing"  # noqa: S105  (not a secret: local servers only)

_TRANSACTIONS_MARKER: Final = "transactions"
_NO_TRANSACTIONS_REASON: Final = "dynalite does not implement TransactWriteItems"


class Connect(Protocol):
    """The type of the ``dynorm_connect`` fixture."""

    def __call__(self, *tables: Table) -> AbstractAsyncContextManager[Database]:
        """Connect to the test server with a fresh, uniquely named copy of each table."""
        ...


@attrs.define
class RequestLog:
    """The HTTP requests a Database sent inside a :func:`count_requests` block.

    ``events`` holds one :class:`dynorm.RequestEvent` per request in the order sent;
    ``operations`` names each one's API action (``"Query"``, ``"BatchWriteItem"`` …). A retried
    request appears once per attempt. ``len(log)`` is the number of requests.
    """

    events: list[RequestEvent] = attrs.field(factory=list)

    @property
    def operations(self) -> list[str]:
        """The API action of each request, in the order sent."""
        return [event.operation for event in self.events]

    def __len__(self) -> int:
        return len(self.events)

    def count(self, operation: str) -> int:
        """How many requests of one API action were sent."""
        return self.operations.count(operation)


@contextmanager
def count_requests(db: Database) -> Iterator[RequestLog]:
    """Record every HTTP request ``db`` sends until the block exits.

    Built on :meth:`dynorm.Database.on_request`, which fires once per HTTP attempt, so the count
    is what went over the wire: nothing that was planned but not sent, every retry that was.
    The log stops growing when the block exits and stays readable afterwards.
    """
    log = RequestLog()
    unsubscribe = db.on_request(log.events.append)
    try:
        yield log
    finally:
        unsubscribe()


def fast_path_selected() -> bool:
    """Whether the fixtures connect with the fast request path (``DYNORM_TEST_FAST_PATH``)."""
    return os.environ.get(FAST_PATH_ENV, "1") != "0"


def selected_backend() -> str:
    """The backend the fixtures will use, from the environment (no server is started)."""
    if os.environ.get(ENDPOINT_ENV):
        return EXTERNAL
    return os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND


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
    """A DynamoDB-compatible endpoint shared by the whole test session."""
    if dynorm_backend == EXTERNAL:
        yield RunningServer(url=os.environ[ENDPOINT_ENV], name=EXTERNAL, stop=lambda: None)
        return
    # `.dynalite/` is installed next to the project's pytest configuration (`make dynalite`).
    with start_server(dynorm_backend, request.config.rootpath) as server:
        yield server


@pytest.fixture
def dynorm_connect(dynorm_server: RunningServer) -> Connect:
    """``connect(table)``: a connected :class:`dynorm.Database` on a fresh copy of ``table``.

    Each call creates a table named ``<table.name>-<8 hex digits>`` with every index the models
    declare, and deletes it on exit, so tests never see each other's items. ``connect(app,
    audit)`` connects to several tables at once, each a fresh copy.
    """
    # Looked up when a test asks for it, not at plugin import: the package is fully initialised
    # by then even if `dynorm/__init__.py` one day imports this module itself (a cycle that a
    # top-level `from dynorm import connect` would turn into an ImportError).
    import dynorm  # noqa: PLC0415

    @asynccontextmanager
    async def connect(*tables: Table) -> AsyncIterator[Database]:
        suffix = uuid.uuid4().hex[:8]
        async with (
            dynorm.connect(
                *tables,
                endpoint_url=dynorm_server.url,
                region_name=TEST_REGION,
                aws_access_key_id=TEST_ACCESS_KEY_ID,
                aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
                table_names={t: f"{t.name}-{suffix}" for t in tables},
                fast_path=fast_path_selected(),
            ) as db,
            fresh_table(db),
        ):
            yield db

    return connect


@asynccontextmanager
async def fresh_table(db: Database) -> AsyncIterator[Database]:
    """Create ``db``'s tables for the block and delete them afterwards, even when it fails."""
    await db.create_table()
    try:
        yield db
    finally:
        await db.delete_table()
