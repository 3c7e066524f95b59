"""``migrate`` between shard counts of an ``Index`` collection, and ``{shard}`` anywhere in a key.

As ``test_sharded_migration.py`` does for ``Partition``: the same table declared once per shard
count, the old declaration writes, the migration moves, and every stored item is then compared,
attribute by attribute, with what the new declaration writes. For an index collection only the
children's index partition key changes, so each child is rewritten in place (its table key
stays). Runs are resumable, share segments between workers and survive faults.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from dynorm import GSI, Database, HasMany, Index, Partition, Table
from dynorm.core.keys import shard_number
from dynorm.migrations import MigrationProgress, Workers, migrate
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import FaultPlan, FaultyConnect, connect_to

from .cli import Cli
from .raw import stored

pytestmark = pytest.mark.integration

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
POSTS = ["p1", "p2"]
USERS = [f"u{i:02d}" for i in range(13)]


@attrs.frozen
class Layout:
    """One declaration of the table: ``Post.likes`` through GSI1 over ``shards`` shards."""

    table: Table
    post: type[Any]
    like: type[Any]
    shards: int

    def objects(self) -> list[Any]:
        posts = [self.post(p) for p in POSTS]
        return [*posts, *(self.like(p, u, i) for p in POSTS for i, u in enumerate(USERS))]

    def strategy(self) -> Index:
        return Index("GSI1", shards=self.shards)


def declare(shards: int) -> Layout:
    table = Table("migr-ishards", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])

    @table.model(
        pk="POST#{post_id}", sk="POST#{post_id}", GSI1=("POST#{post_id}", "POST#{post_id}")
    )
    class Post:
        post_id: str
        likes = HasMany["Like"](via=Index("GSI1", shards=shards))

    index_pk = "POST#{post_id}#{shard}" if shards > 1 else "POST#{post_id}"

    @table.model(
        pk="LIKE#{post_id}#{user_id}", sk="LIKE#{user_id}", GSI1=(index_pk, "LIKE#{user_id}")
    )
    class Like:
        post_id: str
        user_id: str
        weight: int = 1

    return Layout(table, Post, Like, shards)


LAYOUTS = {n: declare(n) for n in (1, 2, 4, 8)}
#: The declaration with 8 shards, for the command line (MODULE:TABLE).
index_8 = LAYOUTS[8].table


def expected(shards: int) -> list[dict[str, Any]]:
    """Every item as the declaration with ``shards`` stores it (values flattened, key order)."""
    items: list[dict[str, Any]] = []
    for post in POSTS:
        key = f"POST#{post}"
        items.append({"pk": key, "sk": key, "GSI1PK": key, "GSI1SK": key, "post_id": post})
        for i, user in enumerate(USERS):
            shard = shard_number([post, user], shards)
            items.append(
                {
                    "pk": f"LIKE#{post}#{user}",
                    "sk": f"LIKE#{user}",
                    "GSI1PK": f"POST#{post}#{shard}" if shards > 1 else f"POST#{post}",
                    "GSI1SK": f"LIKE#{user}",
                    "post_id": post,
                    "user_id": user,
                    "weight": str(i),
                }
            )
    return sorted(items, key=lambda i: (i["pk"], i["sk"]))


@asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Layout, old: Layout
) -> AsyncIterator[tuple[Database, Database]]:
    """(db on the new declaration, db on the old one), one fresh table holding the old layout."""
    async with (
        dynorm_connect(new.table) as db,
        connect_to(server.url, old.table, db.table_name) as old_db,
    ):
        await old_db.put_all(old.objects())
        assert await stored(db) == expected(old.shards)
        yield db, old_db


async def assert_moved(db: Database, new: Layout, old: Layout) -> None:
    """Stored exactly as ``new`` writes it, every child read back in order, nothing left."""
    assert await stored(db) == expected(new.shards)
    for post_id in POSTS:
        post = await db.get(new.post, post_id=post_id, load=[new.post.likes])
        assert [like.user_id for like in post.likes.loaded] == USERS
    with count_requests(db) as log:
        again = await migrate(db, new.post.likes, from_=old.strategy())
    assert again.changes == 0
    assert again.verification is not None
    assert again.verification.ok
    assert not WRITES & set(log.operations), log.operations


@pytest.mark.parametrize(("before", "after"), [(1, 4), (4, 1), (4, 8), (8, 2)])
async def test_an_index_collection_moves_between_shard_counts(
    dynorm_connect: Connect, dynorm_server: RunningServer, before: int, after: int
) -> None:
    new, old = LAYOUTS[after], LAYOUTS[before]
    async with both(dynorm_connect, dynorm_server, new, old) as (db, _):
        report = await migrate(db, new.post.likes, from_=old.strategy())

        moved = sum(
            shard_number([p, u], before) != shard_number([p, u], after)
            or (before == 1) != (after == 1)
            for p in POSTS
            for u in USERS
        )
        assert report.ok, report
        # Rewritten in place: the table key stays, only the index partition key changes.
        assert (report.kind, report.written, report.deleted) == ("move", moved, 0)
        assert report.verification is not None
        assert report.verification.children == len(POSTS) * len(USERS)
        await assert_moved(db, new, old)


class StopRunError(Exception):
    """Raised by a progress callback to interrupt a run part-way."""


async def test_an_interrupted_index_sharding_resumes_from_its_checkpoint(
    dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ishards.json"
    new, old = LAYOUTS[4], LAYOUTS[1]
    async with both(dynorm_connect, dynorm_server, new, old) as (db, _):

        def stop(progress: MigrationProgress) -> None:
            if progress.pages == 3:
                raise StopRunError

        with pytest.raises(StopRunError):
            await migrate(
                db,
                new.post.likes,
                from_=old.strategy(),
                checkpoint=checkpoint,
                on_progress=stop,
                page_size=4,
            )
        assert await stored(db) not in (expected(1), expected(4))  # part-way
        assert checkpoint.exists()

        report = await migrate(
            db, new.post.likes, from_=old.strategy(), checkpoint=checkpoint, page_size=4
        )
        assert report.resumed
        assert report.ok, report
        assert not checkpoint.exists()
        await assert_moved(db, new, old)


async def test_two_workers_reshard_an_index_collection_together(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    new, old = LAYOUTS[2], LAYOUTS[8]
    async with both(dynorm_connect, dynorm_server, new, old) as (db, _):

        def worker(name: str) -> Workers:
            return Workers(segments=3, lease=30.0, worker=name)

        first, second = await asyncio.gather(
            migrate(db, new.post.likes, from_=old.strategy(), workers=worker("a"), page_size=5),
            migrate(db, new.post.likes, from_=old.strategy(), workers=worker("b"), page_size=5),
        )

        assert first.ok, first
        assert second.ok, second
        assert set(first.segments_finished) | set(second.segments_finished) == {0, 1, 2}
        assert not set(first.segments_finished) & set(second.segments_finished)
        assert await stored(db) == expected(2)


async def test_sharding_an_index_collection_under_faults_leaves_every_item_right(
    faulty_connect: FaultyConnect, dynorm_server: RunningServer
) -> None:
    new, old = LAYOUTS[4], LAYOUTS[1]
    async with (
        faulty_connect(new.table, max_attempts=12) as faulty,
        connect_to(dynorm_server.url, old.table, faulty.db.table_name) as old_db,
    ):
        await old_db.put_all(old.objects())
        faulty.proxy.use(
            FaultPlan(
                seed=27,
                rates={
                    "throttle": 0.1,
                    "error_500": 0.05,
                    "error_500_after": 0.05,
                    "lost_reply": 0.05,
                    "reset": 0.05,
                    "partial_batch": 0.3,
                },
            )
        )
        report = await migrate(faulty.db, new.post.likes, from_=old.strategy(), page_size=6)
        faulty.proxy.use(None)

        assert report.ok, report
        injected = {e.fault for e in faulty.proxy.injected}
        assert {"lost_reply", "error_500_after", "throttle"} <= injected, injected
        assert faulty.proxy.errors == []
        items = await stored(faulty.direct)
        for got, want in zip(items, expected(4), strict=True):
            assert got == want
        await assert_moved(faulty.direct, new, old)


async def test_two_commands_reshard_an_index_collection_as_workers(
    cli: Cli, dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    new, old = LAYOUTS[8], LAYOUTS[4]
    async with both(dynorm_connect, dynorm_server, new, old) as (db, _):
        command = (
            "migrate",
            "tests.integration.test_sharded_index_migration:index_8",
            "Post.likes",
            "--from",
            "Index('GSI1', shards=4)",
            "--table-name",
            db.table_name,
            "--segments",
            "3",
            "--coordinate",
            "--page-size",
            "5",
            "--yes",
        )
        first, second = await asyncio.gather(
            cli.run(*command, cwd=tmp_path), cli.run(*command, cwd=tmp_path)
        )

        assert first.code == 0, first.output
        assert second.code == 0, second.output
        assert "Traceback" not in first.output + second.output
        await assert_moved(db, new, old)


# -- {shard} anywhere in the key ------------------------------------------------------------------

middle = Table("migr-shard-at", pk="pk", sk="sk")
flat = Table("migr-shard-at", pk="pk", sk="sk")


@middle.model(pk="POST#{post_id}", sk="POST#{post_id}")
class MPost:
    post_id: str
    likes = HasMany["MLike"](via=Partition(shards=4))


@middle.model(pk="POST#{shard}#{post_id}", sk="LIKE#{user_id}")
class MLike:
    post_id: str
    user_id: str


@flat.model(pk="POST#{post_id}", sk="POST#{post_id}")
class FPost:
    post_id: str
    likes = HasMany["FLike"](via=Partition())


@flat.model(pk="POST#{post_id}", sk="LIKE#{user_id}")
class FLike:
    post_id: str
    user_id: str


def keys(items: list[dict[str, Any]]) -> list[str]:
    return sorted(i["pk"] for i in items if "user_id" in i)


async def test_a_shard_in_the_middle_of_the_key_moves_there_and_back(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    # "12": digits, so a reading with the shard taken from another part parses too.
    posts = ["p1", "12"]
    async with (
        dynorm_connect(flat) as db,
        connect_to(dynorm_server.url, middle, db.table_name) as sharded_db,
    ):
        await db.put_all([*(FPost(p) for p in posts), *(FLike(p, u) for p in posts for u in USERS)])

        there = await migrate(sharded_db, MPost.likes, from_=Partition())
        assert there.ok, there
        assert keys(await stored(db)) == sorted(
            f"POST#{shard_number([p, u], 4)}#{p}" for p in posts for u in USERS
        )

        back = await migrate(db, FPost.likes, from_=Partition(shards=4))
        assert back.ok, back
        assert (back.written, back.deleted) == (len(posts) * len(USERS),) * 2
        assert keys(await stored(db)) == sorted(f"POST#{p}" for p in posts for u in USERS)
        for post_id in posts:
            post = await db.get(FPost, post_id=post_id, load=[FPost.likes])
            assert [like.user_id for like in post.likes.loaded] == USERS
