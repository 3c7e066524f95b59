"""Fixtures: a fresh table per test on the embedded server (``dynorm_connect``).

``db`` is an empty copy of the seed 000/001 table; ``seeded`` is the same with the seed items
stored. The other fixtures open the tables of the other data sets in ``models.py``.
``faulty_connect(table)`` opens a table through the fault proxy (``tests/faultproxy.py``).
``cli`` runs the ``dynorm`` command; in a test marked ``offline`` (one that never reaches a
server, run once rather than on every backend) it is pointed at no server.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import pytest

from dynorm import Database
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import FaultyConnect, connect_through
from tests.seed_models import app

from .cli import Cli
from .models import forum, games, geo, kinds, library
from .seed import load_seed


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(app) as database:
        yield database


@pytest.fixture
async def seeded(db: Database) -> Database:
    await load_seed(db)
    return db


@pytest.fixture
async def geo_db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(geo) as database:
        yield database


@pytest.fixture
async def games_db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(games) as database:
        yield database


@pytest.fixture
async def kinds_db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(kinds) as database:
        yield database


@pytest.fixture
async def forum_db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(forum) as database:
        yield database


@pytest.fixture
async def library_db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(library) as database:
        yield database


@pytest.fixture
def faulty_connect(dynorm_server: RunningServer) -> FaultyConnect:
    """``faulty_connect(table, **options)``: Databases through a fault proxy and not (Faulty)."""
    return functools.partial(connect_through, dynorm_server.url)


#: Where an ``offline`` test's ``dynorm`` command is pointed: a port nothing listens on.
NOWHERE = RunningServer(url="http://127.0.0.1:1", name="nowhere", stop=lambda: None)


@pytest.fixture
def cli(request: pytest.FixtureRequest) -> Cli:
    """Runs the ``dynorm`` command in a subprocess against the test server.

    In a test marked ``offline`` it points at a port nothing listens on (and starts no server),
    so the test can pass only if the command never reaches a server.
    """
    if request.node.get_closest_marker("offline") is not None:
        return Cli(NOWHERE)
    server: RunningServer = request.getfixturevalue("dynorm_server")
    return Cli(server)
