"""``--rate-limit`` of ``dynorm migrate`` and ``dynorm workbench import``, run as a user runs them.

The option means what ``connect(rate_limit=...)`` means; the command says at the end what the
limiter did (its rate, how many requests waited), read from ``db.stats()``. A value that is not
a rate is refused before anything is sent, with exit status 2 and no traceback.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dynorm import Database, TableNotFoundError
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to
from tests.seed_models import app

from .cli import Cli
from .cli_models import OldJar, OldShelf, new, old
from .raw import stored

pytestmark = pytest.mark.integration

MODELS = "tests.integration.cli_models:new"
JARS = [("a", "honey", 450), ("a", "jam", 300), ("b", "salt", 1000), ("c", "capers", 90)]

#: Values that are no rate, for both commands.
HOSTILE = [
    "",
    "fast",
    "nan",
    "-1",
    "0",
    "inf",
    "1e999",
    "read=",
    "read=ten",
    "read=1,read=2",
    "burst=5",
    "adaptive,read=1",
    "read=1;write=2",
    "\x01",
    "\uff11\uff10",  # full-width "10", which float() would take
    "1_000",
    "9" * 5000,
]


def limits_line(err: str) -> str:
    [line] = [ln for ln in err.splitlines() if ln.startswith("Rate limit:")]
    return line


@pytest.fixture
async def tables(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> AsyncIterator[tuple[Database, Database]]:
    async with (
        dynorm_connect(new) as db,
        connect_to(dynorm_server.url, old, db.table_name) as old_db,
    ):
        yield db, old_db


async def test_migrate_paces_its_writes_with_rate_limit(
    cli: Cli, tables: tuple[Database, Database], tmp_path: Path
) -> None:
    db, old_db = tables
    shelves = sorted({s for s, _, _ in JARS})
    await old_db.put_all(
        [*(OldShelf(s, f"room {s}") for s in shelves), *(OldJar(*j) for j in JARS)]
    )
    command = ("migrate", MODELS, "Shelf.jars", "--from", "Partition()")
    ran = await cli.run(
        *command, "--table-name", db.table_name, "--rate-limit", "write=20", "--yes", cwd=tmp_path
    )

    assert ran.code == 0, ran.output
    line = limits_line(ran.err)
    assert line.startswith("Rate limit: writes 20 units/s now, "), line
    waited = re.search(r"(\d+) requests waited", line)
    assert waited is not None
    # 4 puts, 4 deletes and 3 parents' updates through a bucket holding 2 units: some waited.
    assert int(waited.group(1)) >= 1, line
    assert len([i for i in await stored(db) if i["pk"].startswith("J#")]) == len(JARS)

    # Without the option nothing is limited, and nothing is said about it.
    again = await cli.run(*command, "--table-name", db.table_name, "--yes", cwd=tmp_path)
    assert again.code == 0, again.output
    assert "Rate limit" not in again.err


@pytest.fixture
def name() -> str:
    return f"cli-rate-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def imported(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """A connection to the table an import makes; dropped afterwards if made."""
    async with connect_to(dynorm_server.url, app, name) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()


def workbench_file(where: Path, count: int) -> Path:
    key = {"AttributeName": "pk", "AttributeType": "S"}
    model: dict[str, Any] = {
        "ModelName": "paced",
        "ModelMetadata": {"Version": "3.0", "AWSService": "Amazon DynamoDB"},
        "DataModel": [
            {
                "TableName": "Paced",
                "KeyAttributes": {
                    "PartitionKey": key,
                    "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                },
                "TableData": [{"pk": {"S": f"I#{i:03}"}, "sk": {"S": "A"}} for i in range(count)],
            }
        ],
    }
    path = where / "paced.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize(
    ("limit", "said"),
    [
        ("read=5,write=100", "reads 5 units/s now, 0 requests waited 0.0s in all; writes 100"),
        ("adaptive", "reads unlimited now, 0 requests waited 0.0s in all; writes unlimited now"),
    ],
)
async def test_a_workbench_import_takes_rate_limit(
    cli: Cli, imported: Database, tmp_path: Path, limit: str, said: str
) -> None:
    name = imported.table_name
    path = workbench_file(tmp_path, 60)
    ran = await cli.run(
        "workbench", "import", str(path), "--table-name", name, "--rate-limit", limit, cwd=tmp_path
    )

    assert ran.code == 0, ran.output
    assert f"Loaded 60 items into {name!r}" in ran.out
    line = limits_line(ran.err)
    assert line.startswith(f"Rate limit: {said}"), line
    if limit != "adaptive":
        # Three batches of 25, 25 and 10 units through a bucket holding 10: they waited.
        waited = re.search(r"writes .*, (\d+) requests waited", line)
        assert waited is not None
        assert int(waited.group(1)) >= 2, line


@pytest.mark.offline  # refused before connecting: once, not on every backend
@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v[:12]))
async def test_a_value_that_is_no_rate_is_refused_before_sending(
    cli: Cli, tmp_path: Path, value: str
) -> None:
    path = workbench_file(tmp_path, 1)
    for command in (
        ("migrate", MODELS, "Shelf.jars", "--from", "Partition()", "--yes"),
        ("workbench", "import", str(path)),
    ):
        ran = await cli.run(*command, "--rate-limit", value, cwd=tmp_path)
        assert ran.code == 2, ran.output
        assert "Invalid value for '--rate-limit'" in ran.err, ran.err
        assert "Give 'adaptive', 'read=R,write=W'" in " ".join(ran.err.split()), ran.err
        assert "Traceback" not in ran.output
        assert len(ran.err) < 2000  # a long value is not echoed whole
