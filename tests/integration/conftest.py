"""Fixtures: a fresh table per test on the embedded server (``dynorm_connect``).

``db`` is an empty copy of the seed 000/001 table; ``seeded`` is the same with the seed items
stored. The other fixtures open the tables of the other data sets in ``models.py``.
``faulty_connect(table)`` opens a table through the fault proxy (``tests/faultproxy.py``).
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


@pytest.fixture
def cli(dynorm_server: RunningServer) -> Cli:
    """Runs the ``dynorm`` command in a subprocess against the test server."""
    return Cli(dynorm_server)
