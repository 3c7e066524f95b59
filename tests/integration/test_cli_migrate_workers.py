"""``dynorm migrate --segments N --segment I`` / ``--coordinate``: one migration, several workers.

Each worker is a ``dynorm`` subprocess against the test server; their progress and leases are
items of the progress table (``<table>.dynorm-progress``). The data is ``Shelf.jars`` stored
with ``Partition()`` (``cli_models.old``), moved to ``Index("GSI1")`` (``cli_models.new``);
the end state is compared item by item with the new layout: every item once, none left over.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dynorm import Database, Partition
from dynorm.core.errors import TableNotFoundError
from dynorm.core.requests import Request, delete_table
from dynorm.migrations import Workers, migrate, progress_table_name
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import FaultProxy, connect_to

from .cli import Cli
from .cli_models import OldJar, OldShelf, Shelf, new, old
from .raw import stored
from .test_cli_migrate import checkpoints, counts

pytestmark = pytest.mark.integration

MODELS = "tests.integration.cli_models:new"
SHELVES = [f"s{n:02d}" for n in range(24)]
JARS = {s: [(f"jar{j}", 100 * j + n) for j in range(3)] for n, s in enumerate(SHELVES)}
CHILDREN = sum(len(j) for j in JARS.values())


def new_layout() -> list[dict[str, Any]]:
    shelves = [
        {
            "pk": f"S#{s}",
            "sk": f"#SHELF#{s}",
            "GSI1PK": f"S#{s}",
            "GSI1SK": f"#SHELF#{s}",
            "shelf": s,
            "room": f"room {s}",
        }
        for s in JARS
    ]
    jars = [
        {
            "pk": f"J#{s}#{n}",
            "sk": f"J#{s}#{n}",
            "GSI1PK": f"S#{s}",
            "GSI1SK": f"JAR#{n}",
            "shelf": s,
            "name": n,
            "grams": str(g),
        }
        for s, js in JARS.items()
        for n, g in js
    ]
    return sorted(shelves + jars, key=lambda i: (i["pk"], i["sk"]))


@pytest.fixture
async def db(dynorm_connect: Connect, dynorm_server: RunningServer) -> AsyncIterator[Database]:
    """A fresh table holding the shelves and jars in the old layout; its progress table is
    dropped afterwards."""
    async with (
        dynorm_connect(new) as db,
        connect_to(dynorm_server.url, old, db.table_name) as old_db,
    ):
        await old_db.put_all(
            [OldShelf(s, f"room {s}") for s in JARS]
            + [OldJar(s, n, g) for s, js in JARS.items() for n, g in js]
        )
        try:
            yield db
        finally:
            with contextlib.suppress(TableNotFoundError):
                await db.send(delete_table(progress_table_name(db.table_name)))


def move(db: Database, *flags: str) -> tuple[str, ...]:
    return (
        "migrate",
        MODELS,
        "Shelf.jars",
        "--from",
        "Partition()",
        "--table-name",
        db.table_name,
        "--yes",
        *flags,
    )


async def segment_items(db: Database) -> dict[int, dict[str, Any]]:
    """The progress table's items (every migration's: a test runs one), by segment."""
    found = await db.send(
        Request("Scan", {"TableName": progress_table_name(db.table_name), "ConsistentRead": True})
    )
    items = found.get("Items") or []
    by_segment = {int(i["segment"]["N"]): i for i in items}
    assert len(by_segment) == len(items), items
    return by_segment


def finished_by(err: str) -> set[int]:
    """The segments a worker says it finished."""
    found = re.search(r"finished by this worker: ([\d, ]+)", err)
    return {int(n) for n in found.group(1).split(", ")} if found else set()


async def test_two_workers_move_every_item_exactly_once(cli: Cli, db: Database) -> None:
    command = move(db, "--segments", "4", "--coordinate", "--page-size", "5")

    first, second = await asyncio.gather(cli.run(*command), cli.run(*command))

    for ran in (first, second):
        assert ran.code == 0, ran.output
        assert "All 4 segments are done" in ran.err
        assert "Traceback" not in ran.output
    mine, theirs = finished_by(first.err), finished_by(second.err)
    assert mine | theirs == {0, 1, 2, 3}
    assert not mine & theirs
    assert await stored(db) == new_layout()
    # The summary counts every worker's segments; no page was written twice.
    assert counts(first)["items written"] == CHILDREN
    assert counts(first)["items deleted"] == CHILDREN
    # New items the scan reaches behind the writes are read too (and left: they are moved).
    assert counts(first)["items scanned"] >= len(SHELVES) + CHILDREN
    segments = await segment_items(db)
    assert sorted(segments) == [0, 1, 2, 3]
    assert {s["status"]["S"] for s in segments.values()} == {"done"}
    assert sum(int(s["scanned"]["N"]) for s in segments.values()) == counts(first)["items scanned"]
    migrated = ("items scanned", "items written", "items deleted", "parents updated")
    assert [counts(second)[r] for r in migrated] == [counts(first)[r] for r in migrated]
    # Each worker verifies the segments it finished: together, every jar once.
    verified = "verified: children read through the declaration"
    assert counts(first)[verified] + counts(second)[verified] == CHILDREN
    assert counts(first)["verified: changes left to make"] == 0


async def test_a_killed_workers_segment_is_taken_over_and_every_item_moved_once(
    cli: Cli, db: Database, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    lease = ("--lease", "1.5", "--page-size", "2", "--segments", "3")
    async with FaultProxy.running(dynorm_server.url) as proxy:
        # The doomed worker's third deletion is held: at least one checkpoint is saved by then.
        held = proxy.pause("DeleteItem", skip=2)
        doomed = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *move(db, "--segment", "0", *lease),
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
        assert arrived.done(), "the worker ended before its third deletion"
        others = [
            asyncio.create_task(cli.run(*move(db, "--segment", str(n), *lease), cwd=tmp_path))
            for n in (1, 2)
        ]
        before = (await segment_items(db))[0]
        doomed.kill()
        assert await ended == -signal.SIGKILL
        held.release()  # the dead worker's deletion lands, as a request on its way would
        ran = await asyncio.gather(*others)

    assert before["status"]["S"] == "running"
    assert int(before["pages"]["N"]) >= 1  # it had saved a checkpoint
    for each in ran:
        assert each.code == 0, each.output
        assert "All 3 segments are done" in each.err
        assert "Traceback" not in each.output
    taken = finished_by(ran[0].err) | finished_by(ran[1].err)
    assert taken == {0, 1, 2}
    segments = await segment_items(db)
    assert {s["status"]["S"] for s in segments.values()} == {"done"}
    assert segments[0]["owner"]["S"] != before["owner"]["S"]
    assert await stored(db) == new_layout()
    # The taker went on from the dead worker's checkpoint: its saved pages are counted once.
    assert int(segments[0]["pages"]["N"]) > int(before["pages"]["N"])


async def test_one_worker_with_one_segment_moves_everything_as_a_single_run_does(
    cli: Cli, db: Database, tmp_path: Path
) -> None:
    ran = await cli.run(*move(db, "--segments", "1", "--coordinate"), cwd=tmp_path)

    assert ran.code == 0, ran.output
    assert "All 1 segments are done" in ran.err
    assert finished_by(ran.err) == {0}
    assert counts(ran)["items written"] == CHILDREN
    assert counts(ran)["verified: changes left to make"] == 0
    assert await stored(db) == new_layout()
    assert checkpoints(tmp_path) == []  # no checkpoint file

    again = await cli.run(*move(db, "--segments", "1", "--coordinate"), cwd=tmp_path)

    assert again.code == 0, again.output
    assert "finished by this worker: none (they were done already)" in again.err
    assert await stored(db) == new_layout()


@pytest.mark.offline
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--segment", "3", "--segments", "3"], "--segment 3 is not a segment of --segments 3"),
        (["--segment", "-1", "--segments", "3"], "give 0 to 2"),
        (["--segment", "0"], "--segment and --coordinate go with --segments N"),
        (["--coordinate"], "--segment and --coordinate go with --segments N"),
        (["--lease", "5"], "--lease goes with --segment I or --coordinate"),
        (["--segments", "2", "--coordinate", "--no-checkpoint"], "are for a single process"),
    ],
)
async def test_a_bad_segment_is_a_usage_error_that_says_what_to_change(
    cli: Cli, tmp_path: Path, args: list[str], message: str
) -> None:
    command = ("migrate", MODELS, "Shelf.jars", "--from", "Partition()", "-y", *args)
    # An endpoint nothing listens on: a command that sent anything would fail otherwise.
    ran = await cli.run(*command, "--endpoint-url", "http://127.0.0.1:9", cwd=tmp_path)

    assert ran.code == 2, ran.output
    assert message in ran.err
    assert "Traceback" not in ran.err


async def test_ctrl_c_lets_the_segment_go_and_the_next_worker_takes_it_at_once(
    cli: Cli, db: Database, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    # A lease of an hour: the second worker can only take the segment if the first let it go.
    command = move(db, "--segments", "1", "--coordinate", "--lease", "3600", "--page-size", "4")
    async with FaultProxy.running(dynorm_server.url) as proxy:
        held = proxy.pause("DeleteItem", skip=1)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *command,
            "--endpoint-url",
            proxy.url,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path,
            env=cli.environment(tmp_path),
        )
        ended = asyncio.create_task(process.wait())
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({ended, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), "the worker ended before its second deletion"
        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), timeout=60)
        held.release()
        let_go = (await segment_items(db))[0]

        ran = await cli.run(*command, cwd=tmp_path)

    assert process.returncode == 130
    assert "Interrupted; this worker's segment is let go" in err.decode()
    assert "Traceback" not in err.decode()
    assert let_go["status"]["S"] == "pending"
    assert ran.code == 0, ran.output
    assert finished_by(ran.err) == {0}
    assert await stored(db) == new_layout()


async def test_two_workers_in_python_share_the_segments(db: Database) -> None:
    """The Python API: two calls at once, one connection, each a worker of its own."""

    def worker(name: str) -> Workers:
        return Workers(segments=3, lease=30.0, worker=name)

    first, second = await asyncio.gather(
        migrate(db, Shelf.jars, from_=Partition(), workers=worker("a"), page_size=7),
        migrate(db, Shelf.jars, from_=Partition(), workers=worker("b"), page_size=7),
    )

    assert first.ok, first
    assert second.ok, second
    assert set(first.segments_finished) | set(second.segments_finished) == {0, 1, 2}
    assert not set(first.segments_finished) & set(second.segments_finished)
    assert first.written == second.written == CHILDREN
    assert await stored(db) == new_layout()
    owners = {s["owner"]["S"] for s in (await segment_items(db)).values()}
    assert owners <= {"a", "b"}


async def test_a_dry_run_of_one_segment_counts_that_segment_and_keeps_no_progress(
    cli: Cli, db: Database, tmp_path: Path
) -> None:
    one = await cli.run(*move(db, "--segments", "2", "--segment", "0", "--dry-run"), cwd=tmp_path)
    other = await cli.run(*move(db, "--segments", "2", "--segment", "1", "--dry-run"), cwd=tmp_path)

    for ran in (one, other):
        assert ran.code == 0, ran.output
        assert "Dry run: nothing was written." in ran.out
    assert counts(one)["items written"] + counts(other)["items written"] == CHILDREN
    assert counts(one)["items scanned"] + counts(other)["items scanned"] == len(SHELVES) + CHILDREN
    assert 0 < counts(one)["items scanned"] < len(SHELVES) + CHILDREN
    described = await db.send(Request("ListTables", {}))
    assert progress_table_name(db.table_name) not in described["TableNames"]
