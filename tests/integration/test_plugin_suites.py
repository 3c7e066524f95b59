"""A user's suite on the ``dynorm_connect`` fixture, run by pytest in a subprocess.

Tests never see each other's items or tables, one after another or in pytest-xdist workers, and
each xdist worker starts its own embedded server (or, on a shared endpoint, names its tables by
worker). The nested runs use this session's server through ``DYNORM_TEST_ENDPOINT_URL`` and its
request path, so they hold on every backend the suite runs on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from dynorm import RequestEvent
from dynorm.testing import ENDPOINT_ENV, Connect, RunningServer, count_requests
from tests.faultproxy import connect_to
from tests.seed_models import app

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

MODELS = """
from dynorm import Table

table = Table("notes", pk="pk", sk="sk")


@table.model(pk="NOTE#{note_id}", sk="NOTE#{note_id}")
class Note:
    note_id: str
    text: str
"""

# Test A writes an item and remembers its table's name; test B, on the same declaration, finds
# neither the item nor A's table (gone, or on DynamoDB still being deleted).
ISOLATION = """
import pytest

from dynorm import ItemNotFoundError, Request, TableNotFoundError
from models import Note, table

seen = {}


async def test_a_writes(dynorm_connect):
    async with dynorm_connect(table) as db:
        await db.put(Note("1", "from A"))
        assert (await db.get(Note, note_id="1", consistent=True)).text == "from A"
        seen["a"] = db.table_name


async def test_b_sees_nothing_of_a(dynorm_connect):
    async with dynorm_connect(table) as db:
        assert db.table_name != seen["a"]
        with pytest.raises(ItemNotFoundError):
            await db.get(Note, note_id="1", consistent=True)
        try:
            described = await db.send(Request("DescribeTable", {"TableName": seen["a"]}))
        except TableNotFoundError:
            return
        assert described["Table"]["TableStatus"] == "DELETING"


async def test_two_connects_in_one_test_are_two_tables(dynorm_connect):
    async with dynorm_connect(table) as first, dynorm_connect(table) as second:
        await first.put(Note("1", "first"))
        with pytest.raises(ItemNotFoundError):
            await second.get(Note, note_id="1", consistent=True)
"""

# Each test records where it ran: its worker, its server and its table.
WHERE = """
import json
import os

import pytest

from models import Note, table


@pytest.mark.parametrize("n", range(8))
async def test_where(dynorm_connect, dynorm_server, n):
    async with dynorm_connect(table) as db:
        await db.put(Note(str(n), "x"))
        assert (await db.get(Note, note_id=str(n), consistent=True)).text == "x"
        where = {
            "worker": os.environ.get("PYTEST_XDIST_WORKER"),
            "server": dynorm_server.url,
            "table": db.table_name,
        }
    out = os.environ["WHERE_DIR"]
    with open(os.path.join(out, f"{n}.json"), "w") as file:
        json.dump(where, file)
"""


def run_suite(
    project: Path, tests: str, *args: str, server: RunningServer | None
) -> subprocess.CompletedProcess[str]:
    """Run ``tests`` as a user's project would: pytest in a fresh process, the plugin loaded."""
    (project / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    (project / "models.py").write_text(MODELS)
    (project / "test_suite.py").write_text(tests)
    (project / "where").mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    environment.pop(ENDPOINT_ENV, None)
    if server is not None:
        environment[ENDPOINT_ENV] = server.url
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(project)])
    environment["WHERE_DIR"] = str(project / "where")
    return subprocess.run(  # noqa: S603 - this interpreter's pytest, fixed arguments
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *args,
        ],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def places(project: Path) -> list[dict[str, str | None]]:
    return [json.loads(p.read_text()) for p in sorted((project / "where").glob("*.json"))]


def test_tests_see_neither_items_nor_tables_of_others(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    ran = run_suite(tmp_path, ISOLATION, server=dynorm_server)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "3 passed" in ran.stdout


def test_xdist_workers_on_a_shared_endpoint_name_their_tables(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    pytest.importorskip("xdist")
    ran = run_suite(tmp_path, WHERE, "-n", "2", server=dynorm_server)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found = places(tmp_path)
    assert len(found) == 8
    assert {p["worker"] for p in found} == {"gw0", "gw1"}
    for place in found:
        assert str(place["table"]).startswith(f"notes-{place['worker']}-"), place
    assert len({p["table"] for p in found}) == 8


def test_each_xdist_worker_starts_its_own_server(tmp_path: Path, dynorm_backend: str) -> None:
    pytest.importorskip("xdist")
    if dynorm_backend != "moto":
        pytest.skip("starts embedded moto servers of its own; the run on moto covers it")
    ran = run_suite(tmp_path, WHERE, "-n", "2", server=None)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    found = places(tmp_path)
    servers = {p["worker"]: p["server"] for p in found}
    assert set(servers) == {"gw0", "gw1"}
    assert servers["gw0"] != servers["gw1"]
    assert all(p["server"] == servers[p["worker"]] for p in found)


# -- what a fresh table costs -----------------------------------------------------------------


async def test_the_fixture_deletes_each_table_with_one_request_not_waited_for(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    events: list[RequestEvent] = []
    async with dynorm_connect(app) as db:
        name = db.table_name
        db.on_request(events.append)  # still subscribed when the fixture's teardown sends
    assert [e.operation for e in events] == ["DeleteTable"]
    async with connect_to(dynorm_server.url, app, name) as other:
        described = await other.describe_table()
    assert described is None or described["TableStatus"] == "DELETING"


async def test_create_table_asks_no_status_of_a_table_created_active(
    dynorm_server: RunningServer, dynorm_backend: str
) -> None:
    async with connect_to(dynorm_server.url, app, f"app-{uuid.uuid4().hex[:8]}") as db:
        with count_requests(db) as log:
            await db.create_table()
        try:
            assert (await db.describe_table() or {}).get("TableStatus") == "ACTIVE"
        finally:
            await db.delete_table()
    if dynorm_backend == "moto":  # moto creates at once and says so in CreateTable's reply
        assert log.operations == ["CreateTable"]
    else:  # DynamoDB and dynalite answer CREATING: asked until ACTIVE
        assert log.operations[0] == "CreateTable"
        assert set(log.operations[1:]) == {"DescribeTable"}
