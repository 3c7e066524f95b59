"""``migrate``: a collection from ``Partition()`` to ``Partition(shards=N)`` and back.

The same table declared twice (the old layout and the new), as in ``test_migrations.py``: the
old declaration writes the children, the migration moves them, and what is stored afterwards is
exactly what the new declaration writes. An interrupted run resumes from its checkpoint, and a
second run writes nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from dynorm import Database, HasMany, Partition, Table
from dynorm.core.keys import shard_number
from dynorm.migrations import MigrationProgress, migrate
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .cli import Cli
from .raw import stored

pytestmark = pytest.mark.integration

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
SHARDS = 4

unsharded = Table("migr-shards", pk="pk", sk="sk")
sharded = Table("migr-shards", pk="pk", sk="sk")


@unsharded.model(pk="POST#{post_id}", sk="POST#{post_id}")
class UPost:
    post_id: str
    likes = HasMany["ULike"](via=Partition())


@unsharded.model(pk="POST#{post_id}", sk="LIKE#{user_id}")
class ULike:
    post_id: str
    user_id: str
    weight: int = 1


@sharded.model(pk="POST#{post_id}", sk="POST#{post_id}")
class SPost:
    post_id: str
    likes = HasMany["SLike"](via=Partition(shards=SHARDS))


@sharded.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
class SLike:
    post_id: str
    user_id: str
    weight: int = 1


resharded = Table("migr-shards", pk="pk", sk="sk")


@resharded.model(pk="POST#{post_id}", sk="POST#{post_id}")
class RPost:
    post_id: str
    likes = HasMany["RLike"](via=Partition(shards=3))


@resharded.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
class RLike:
    post_id: str
    user_id: str
    weight: int = 1


USERS = [f"u{i:02d}" for i in range(13)]


def layout(shards: int) -> list[dict[str, Any]]:
    """Every item as the declaration with ``shards`` stores it (values flattened, key order)."""
    items: list[dict[str, Any]] = [{"pk": "POST#p1", "sk": "POST#p1", "post_id": "p1"}]
    for i, user in enumerate(USERS):
        pk = f"POST#p1#{shard_number(['p1', user], shards)}" if shards > 1 else "POST#p1"
        items.append(
            {"pk": pk, "sk": f"LIKE#{user}", "post_id": "p1", "user_id": user, "weight": str(i)}
        )
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


@asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the current declaration, db on the old one), one fresh stored table."""
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


async def second_run_writes_nothing(db: Database, rel: Any, from_: Partition) -> None:
    with count_requests(db) as log:
        report = await migrate(db, rel, from_=from_)
    assert report.changes == 0
    assert report.verification is not None
    assert report.verification.ok
    assert not WRITES & set(log.operations), log.operations


async def test_partition_to_sharded_partition_moves_every_child_to_its_shard(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, sharded, unsharded) as (db, old):
        await old.put_all([UPost("p1"), *(ULike("p1", u, i) for i, u in enumerate(USERS))])
        assert await stored(db) == layout(1)

        report = await migrate(db, SPost.likes, from_=Partition())

        assert (report.kind, report.written, report.deleted) == ("move", len(USERS), len(USERS))
        assert report.ok
        assert report.verification is not None
        assert report.verification.children == len(USERS)
        assert await stored(db) == layout(SHARDS)
        post = await db.get(SPost, post_id="p1", load=[SPost.likes])
        assert [like.user_id for like in post.likes.loaded] == USERS
        await second_run_writes_nothing(db, SPost.likes, Partition())


async def test_sharded_partition_back_to_partition(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, unsharded, sharded) as (db, old):
        await old.put_all([SPost("p1"), *(SLike("p1", u, i) for i, u in enumerate(USERS))])
        assert await stored(db) == layout(SHARDS)

        report = await migrate(db, UPost.likes, from_=Partition(shards=SHARDS))

        assert (report.written, report.deleted) == (len(USERS), len(USERS))
        assert report.ok
        assert await stored(db) == layout(1)
        post = await db.get(UPost, post_id="p1", load=[UPost.likes])
        assert [like.user_id for like in post.likes.loaded] == USERS
        await second_run_writes_nothing(db, UPost.likes, Partition(shards=SHARDS))


class StopRunError(Exception):
    """Raised by a progress callback to interrupt a run part-way."""


async def test_an_interrupted_sharding_resumes_from_its_checkpoint(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "shards.json"
    async with both(dynorm_connect, dynorm_server, sharded, unsharded) as (db, old):
        await old.put_all([UPost("p1"), *(ULike("p1", u, i) for i, u in enumerate(USERS))])

        def stop(progress: MigrationProgress) -> None:
            if progress.pages == 2:
                raise StopRunError

        with pytest.raises(StopRunError):
            await migrate(
                db,
                SPost.likes,
                from_=Partition(),
                checkpoint=checkpoint,
                on_progress=stop,
                page_size=3,
            )
        middle = await stored(db)
        assert middle not in (layout(1), layout(SHARDS))  # part-way: some moved, some not
        assert checkpoint.exists()

        report = await migrate(
            db, SPost.likes, from_=Partition(), checkpoint=checkpoint, page_size=3
        )
        assert report.resumed
        assert report.ok
        assert not checkpoint.exists()
        assert await stored(db) == layout(SHARDS)
        await second_run_writes_nothing(db, SPost.likes, Partition())


async def test_another_shard_count_is_one_move(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, resharded, sharded) as (db, old):
        await old.put_all([SPost("p1"), *(SLike("p1", u, i) for i, u in enumerate(USERS))])

        report = await migrate(db, RPost.likes, from_=Partition(shards=SHARDS))

        assert report.ok
        assert report.written == report.deleted > 0  # the children whose shard changed
        assert await stored(db) == layout(3)
        post = await db.get(RPost, post_id="p1", load=[RPost.likes])
        assert [like.user_id for like in post.likes.loaded] == USERS
        await second_run_writes_nothing(db, RPost.likes, Partition(shards=SHARDS))


async def test_the_command_shards_a_collection(
    cli: Cli, dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    async with both(dynorm_connect, dynorm_server, sharded, unsharded) as (db, old):
        await old.put_all([UPost("p1"), *(ULike("p1", u, i) for i, u in enumerate(USERS))])
        command = (
            "migrate",
            "tests.integration.test_sharded_migration:sharded",
            "SPost.likes",
            "--from",
            "Partition()",
            "--table-name",
            db.table_name,
            "--yes",
        )
        ran = await cli.run(*command, cwd=tmp_path)
        assert ran.code == 0, ran.output
        assert await stored(db) == layout(SHARDS)
        refused = await cli.run(*command[:4], "Partition(shards='8')", *command[5:], cwd=tmp_path)
        assert refused.code == 2, refused.output
        assert "takes a whole number of shards" in refused.err
        assert "Traceback" not in refused.output
