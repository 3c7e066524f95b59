"""``migrate`` from a sharded collection into ``Embedded``: every shard's children are embedded.

The old children's ``{shard}`` template needs a relationship that says over how many shards,
so the new declaration keeps the old one beside the embedded one while the migration runs.
The embed read a single Query and was refused ("a single Query reads one shard").
"""

from __future__ import annotations

import pytest

from dynorm import Embedded, HasMany, Partition, Table
from dynorm.migrations import migrate
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .raw import stored

pytestmark = pytest.mark.integration

SHARDS = 3
before = Table("embed-shards", pk="pk", sk="sk")
after = Table("embed-shards", pk="pk", sk="sk")


@before.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")
class OldLike:
    post_id: str
    user_id: str
    weight: int = 1


@before.model(pk="POST#{post_id}", sk="POST#{post_id}")
class OldPost:
    post_id: str
    likes = HasMany[OldLike](OldLike, via=Partition(shards=SHARDS))


@after.model(pk="POST#{post_id}#{shard}", sk="LIKE#{user_id}")  # where the old items are
class Like:
    post_id: str
    user_id: str
    weight: int = 1


@after.model(pk="POST#{post_id}", sk="POST#{post_id}")
class Post:
    post_id: str
    likes = HasMany[Like](Like, via=Embedded(key="user_id"))
    sharded_likes = HasMany[Like](Like, via=Partition(shards=SHARDS))  # the old layout


USERS = [f"u{i:02d}" for i in range(10)]


async def test_a_sharded_collection_is_embedded_whole(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(after) as db,
        connect_to(dynorm_server.url, before, db.table_name) as old,
    ):
        await old.put_all([OldPost("p1"), *(OldLike("p1", u, i) for i, u in enumerate(USERS))])
        assert len({i["pk"] for i in await stored(db)}) == SHARDS + 1  # the shards and the post

        report = await migrate(db, Post.likes, from_=Partition(shards=SHARDS))

        assert (report.kind, report.ok, report.deleted) == ("embed", True, len(USERS))
        (item,) = await stored(db)
        assert sorted(item["likes"]) == USERS
        post = await db.get(Post, post_id="p1")
        assert post.likes.loaded == [Like("p1", u, i) for i, u in enumerate(USERS)]
