"""``dynorm migrate`` of a relationship declaring ``was=``: no ``--from``, and ``--status``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .cli import Cli
from .cli_was_models import OldBottle, OldCrate, new, old
from .raw import stored

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

MODELS = "tests.integration.cli_was_models:new"


async def test_migrate_reads_was_and_status_counts_what_is_left(
    cli: Cli, dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    async with (
        dynorm_connect(new) as db,
        connect_to(dynorm_server.url, old, db.table_name) as old_db,
    ):
        await old_db.put_all(
            [OldCrate("a"), OldBottle("a", "gin"), OldBottle("a", "rum"), OldBottle("b", "ale")]
        )
        where = ("--table-name", db.table_name)

        status = await cli.run("migrate", MODELS, "Crate.bottles", "--status", *where)
        assert status.code == 0, status.output
        assert "Crate.bottles: 3 children still in the old layout" in status.out
        as_json = await cli.run("migrate", MODELS, "Crate.bottles", "--status", "--json", *where)
        assert as_json.code == 0, as_json.output
        assert json.loads(as_json.out) == {"subject": "Crate.bottles", "old_layout_children": 3}

        ran = await cli.run("migrate", MODELS, "Crate.bottles", "-y", *where, cwd=tmp_path)
        assert ran.code == 0, ran.output
        assert "move: Crate.bottles: Partition() -> Index('GSI1')" in ran.out
        assert sorted(i["pk"] for i in await stored(db) if i["pk"].startswith("B#")) == [
            "B#a#gin",
            "B#a#rum",
            "B#b#ale",
        ]
        assert not [i for i in await stored(db) if i["sk"].startswith("BOTTLE#")]

        done = await cli.run("migrate", MODELS, "Crate.bottles", "--status", "--json", *where)
        assert json.loads(done.out)["old_layout_children"] == 0
        plain = await cli.run("migrate", MODELS, "Crate.bottles", "--status", *where)
        assert "no children left in the old layout; was= can be deleted" in plain.out


@pytest.mark.offline
@pytest.mark.parametrize("extra", [(), ("--status",)])
async def test_a_from_other_than_was_is_refused_before_sending(
    cli: Cli, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    ran = await cli.run(
        "migrate", MODELS, "Crate.bottles", "--from", "Index('GSI1', shards=2)", *extra, "-y",
        "--no-checkpoint", cwd=tmp_path,
    )  # fmt: skip
    assert ran.code == 1, ran.output
    assert "Crate.bottles declares was=Partition()" in ran.err
    assert "Traceback" not in ran.err


@pytest.mark.parametrize(
    "args",
    [
        ("Crate.bottles", "-y"),
        ("Crate.bottles", "--from", "Partition()", "-y"),
        ("Crate.bottles", "--segments", "2", "-y"),
    ],
)
async def test_migrate_against_a_missing_table_saves_no_progress(
    cli: Cli, tmp_path: Path, args: tuple[str, ...]
) -> None:
    ran = await cli.run("migrate", MODELS, *args, "--table-name", "no-such-table", cwd=tmp_path)
    assert ran.code == 1, ran.output
    assert "there is no table 'no-such-table'" in ran.err
    assert "Traceback" not in ran.err
    assert "Progress is saved" not in ran.output
    assert "resume" not in ran.output
    assert os.listdir(tmp_path) == []  # noqa: PTH208 - no checkpoint file is left
