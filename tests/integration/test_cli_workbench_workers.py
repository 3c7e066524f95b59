"""``dynorm workbench import --segments N --coordinate`` / ``--segment I``: one large import,
several worker processes, progress and leases in the progress table."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dynorm import Database, Request, TableNotFoundError
from dynorm.core.requests import delete_table
from dynorm.migrations import progress_table_name
from dynorm.testing import RunningServer
from tests.faultproxy import FaultProxy, connect_to
from tests.seed_models import app

from .cli import Cli
from .test_cli_workbench import many_items, stored, writes_key

pytestmark = pytest.mark.integration

COUNT = 400
EXPECTED = {
    (f"ITEM#{i:04}", "A"): {"pk": {"S": f"ITEM#{i:04}"}, "sk": {"S": "A"}} for i in range(COUNT)
}


@pytest.fixture
def name() -> str:
    return f"cli-wbw-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def db(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """The table the workers import into, and its progress table: both dropped afterwards."""
    async with connect_to(dynorm_server.url, app, name) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()
        with contextlib.suppress(TableNotFoundError):
            await database.send(delete_table(progress_table_name(name)))


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many_items(COUNT)))
    return path


def command(path: Path, name: str, *flags: str) -> tuple[str, ...]:
    return ("workbench", "import", str(path), "--table-name", name, *flags)


async def progress_items(db: Database, name: str) -> dict[int, dict[str, Any]]:
    found = await db.send(
        Request("Scan", {"TableName": progress_table_name(name), "ConsistentRead": True})
    )
    items = found.get("Items") or []
    return {int(i["segment"]["N"]): i for i in items}


def stored_by(err: str) -> set[int]:
    found = re.search(r"stored by this worker: ([\d, ]+)", err)
    return {int(n) for n in found.group(1).split(", ")} if found else set()


async def test_two_workers_import_every_item_once(
    cli: Cli, db: Database, name: str, path: Path
) -> None:
    flags = ("--segments", "4", "--coordinate")

    first, second = await asyncio.gather(
        cli.run(*command(path, name, *flags)), cli.run(*command(path, name, *flags))
    )

    for ran in (first, second):
        assert ran.code == 0, ran.output
        assert f"Loaded {COUNT} items into {name!r}" in ran.out
        assert "All 4 segments are done" in ran.err
        assert "Traceback" not in ran.output
    mine, theirs = stored_by(first.err), stored_by(second.err)
    assert mine | theirs == {0, 1, 2, 3}
    assert not mine & theirs
    assert await stored(db) == EXPECTED
    segments = await progress_items(db, name)
    assert {s["status"]["S"] for s in segments.values()} == {"done"}
    assert sum(int(s["written"]["N"]) for s in segments.values()) == COUNT


async def test_a_killed_importers_run_is_taken_over_and_every_item_stored(
    cli: Cli, db: Database, name: str, path: Path, tmp_path: Path
) -> None:
    flags = ("--segments", "3", "--lease", "1.5")
    async with FaultProxy.running(cli.server.url) as proxy:
        # Segment 0 holds ITEM#0000-0132; its first 100 are stored and saved before this batch.
        held = proxy.pause("BatchWriteItem", when=writes_key("ITEM#0110"))
        doomed = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *command(path, name, "--segment", "0", *flags),
            "--endpoint-url",
            proxy.url,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=tmp_path,
            env=cli.environment(tmp_path),
        )
        ended = asyncio.create_task(doomed.wait())
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({ended, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), "the worker ended before the batch of ITEM#0110"
        others = [
            asyncio.create_task(cli.run(*command(path, name, "--segment", str(n), *flags)))
            for n in (1, 2)
        ]
        before = (await progress_items(db, name))[0]
        doomed.kill()
        assert await ended == -signal.SIGKILL
        held.release()
        ran = await asyncio.gather(*others)

    assert before["status"]["S"] == "running"
    assert before["position"]["M"] == {"next": {"N": "100"}}
    for each in ran:
        assert each.code == 0, each.output
        assert "All 3 segments are done" in each.err
    assert stored_by(ran[0].err) | stored_by(ran[1].err) == {0, 1, 2}
    segments = await progress_items(db, name)
    assert {s["status"]["S"] for s in segments.values()} == {"done"}
    assert segments[0]["owner"]["S"] != before["owner"]["S"]
    assert int(segments[0]["written"]["N"]) == 133  # 100 by the dead worker, 33 by the taker
    assert await stored(db) == EXPECTED


@pytest.mark.offline
async def test_a_bad_segment_is_a_usage_error(cli: Cli, path: Path, tmp_path: Path) -> None:
    ran = await cli.run(
        *command(path, "cli-wbw-bad", "--segment", "2", "--segments", "2"),
        "--endpoint-url",
        "http://127.0.0.1:9",
        cwd=tmp_path,
    )

    assert ran.code == 2, ran.output
    assert "--segment 2 is not a segment of --segments 2: give 0 to 1" in ran.err
    assert "Traceback" not in ran.err
