"""Testing helpers, and what the pytest plugin's fixtures do: a server per session, fresh tables.

This module does not import pytest: ``start_server``, ``count_requests`` and ``fresh_table``
serve scripts and examples too. The fixtures and hooks are in ``dynorm/tools/pytest_plugin.py``,
the module installing dynorm registers with pytest (entry point ``pytest11``), which imports
this one only when a test asks for a fixture; ``dynorm.testing`` re-exports both.

Fixtures:

- ``dynorm_server`` (session): a :class:`~dynorm.tools.servers.RunningServer`. With
  ``DYNORM_TEST_ENDPOINT_URL`` set, that endpoint is used and no server is started. Otherwise the
  backend named by ``DYNORM_TEST_BACKEND`` is started: ``moto`` (default; needs
  ``dynorm[testing]``) or ``dynalite`` (needs ``.dynalite/`` in the pytest rootdir, see
  ``make dynalite``).
- ``dynorm_backend`` (session): ``"moto"``, ``"dynalite"`` or ``"external"``.
- ``dynorm_connect`` (function): ``connect(table)``, an async context manager that connects to the
  server, creates a uniquely named copy of ``table`` (``<name>-<8 hex digits>``, with the
  pytest-xdist worker's id before the digits under xdist), yields the :class:`dynorm.Database`
  and deletes the table on exit. ``connect(app, audit)`` does the same for several tables, on
  one connection (each table gets its own fresh copy).

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

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Protocol

import attrs

from .servers import RunningServer, start_server
from .testenv import (
    BACKEND_ENV,
    ENDPOINT_ENV,
    FAST_PATH_ENV,
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    fast_path_selected,
    xdist_worker,
)

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
    "fast_path_selected",
    "fresh_table",
    "start_server",
]


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


@asynccontextmanager
async def fresh_table(db: Database) -> AsyncIterator[Database]:
    """Create ``db``'s tables for the block and delete them afterwards, even when it fails."""
    await db.create_table()
    try:
        yield db
    finally:
        await db.delete_table()


def fresh_name(table: Table, suffix: str) -> str:
    """The name of a test's copy of ``table``: ``<name>[-<xdist worker>]-<suffix>``."""
    worker = xdist_worker()
    return f"{table.name}-{worker}-{suffix}" if worker else f"{table.name}-{suffix}"


def fresh_connect(url: str) -> Connect:
    """What ``dynorm_connect`` gives a test: ``connect(table, ...)`` on fresh copies at ``url``.

    Per call: one connection, one CreateTable per table (and no DescribeTable when the server
    answers ACTIVE, as moto does), one DeleteTable per table on exit. The deletion is not waited
    for: no later test uses the name (a random suffix), and the next test may start at once.
    """
    # Looked up when a test connects, not at import: the package is fully initialised by then
    # even if `dynorm/__init__.py` one day imports this module itself (a cycle that a top-level
    # `from dynorm import connect` would turn into an ImportError).
    import dynorm  # noqa: PLC0415

    @asynccontextmanager
    async def connect(*tables: Table) -> AsyncIterator[Database]:
        suffix = uuid.uuid4().hex[:8]
        async with dynorm.connect(
            *tables,
            endpoint_url=url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={t: fresh_name(t, suffix) for t in tables},
            fast_path=fast_path_selected(),
        ) as db:
            await db.create_table()
            try:
                yield db
            finally:
                await _drop_tables(db)

    return connect


async def _drop_tables(db: Database) -> None:
    """Send DeleteTable for each of ``db``'s tables; one a test deleted itself is no error."""
    # Imported here, like `dynorm` above: this module is loaded without the I/O layers.
    from dynorm import TableNotFoundError  # noqa: PLC0415
    from dynorm.core.requests import delete_table  # noqa: PLC0415

    async def drop(name: str) -> None:
        with contextlib.suppress(TableNotFoundError):
            await db.send(delete_table(name))

    await asyncio.gather(*(drop(c.name) for c in db.connected_tables()))
