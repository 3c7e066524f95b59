"""``migrate`` of a relationship across tables: posts in one table, their likes in another.

The likes move within their table (between shard counts of one index, or between two of its
indexes): the run scans and writes the likes' table, leaves the posts' table as it is, and its
verification reads each post with its likes. A source layout that kept the children in another
table is refused before anything is sent. Every item is compared, attribute by attribute, with
what the new declaration writes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from dynorm import Database, DefinitionError, Index, Partition, connect
from dynorm.migrations import migrate
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from tests.faultproxy import FaultPlan, FaultProxy

from .cli import Cli
from .raw import stored
from .xmig_models import POSTS, USERS, Layout, declare

pytestmark = pytest.mark.integration

LIKES = len(POSTS) * len(USERS)


@asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Layout, old: Layout
) -> AsyncIterator[Database]:
    """A connection on the new declaration; fresh tables holding the old layout."""
    async with (
        dynorm_connect(new.posts, new.likes) as db,
        connect(
            old.posts,
            old.likes,
            endpoint_url=server.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={old.posts: db.name_of(new.posts), old.likes: db.name_of(new.likes)},
            fast_path=fast_path_selected(),
        ) as old_db,
    ):
        await old_db.put_all(old.objects())
        assert await stored(db.focused(new.likes)) == old.expected_likes()
        yield db


async def assert_moved(db: Database, new: Layout) -> None:
    """The likes' table exactly as ``new`` writes it, the posts untouched, every like read."""
    assert await stored(db.focused(new.likes)) == new.expected_likes()
    assert [p["pk"] for p in await stored(db.focused(new.posts))] == [f"POST#{p}" for p in POSTS]
    for post in POSTS:
        loaded = await db.get(new.post, post_id=post, load=[new.post.likes])
        users = [like.user_id for like in loaded.likes.loaded]
        assert users == USERS


CHANGES = [
    pytest.param((1, "GSI1"), (4, "GSI1"), id="to-4-shards"),
    pytest.param((4, "GSI1"), (1, "GSI1"), id="back-to-one"),
    pytest.param((4, "GSI1"), (2, "GSI1"), id="4-to-2-shards"),
    pytest.param((1, "GSI1"), (1, "GSI2"), id="to-another-index"),
    pytest.param((1, "GSI2"), (4, "GSI1"), id="another-index-sharded"),
]


@pytest.mark.parametrize(("before", "after"), CHANGES)
async def test_a_relationship_across_tables_migrates_within_its_childrens_table(
    dynorm_connect: Connect,
    dynorm_server: RunningServer,
    before: tuple[int, str],
    after: tuple[int, str],
) -> None:
    new, old = declare(*after), declare(*before)
    async with both(dynorm_connect, dynorm_server, new, old) as db:
        with count_requests(db) as log:
            report = await migrate(db, new.post.likes, from_=old.strategy())
        # Only the likes' table is scanned and written; the posts' is read by the verification.
        names = {db.name_of(new.likes)}
        on_posts = {e.operation for e in log.events if names.isdisjoint(e.tables)}
        assert on_posts <= {"Query", "GetItem"}, on_posts
        assert report.ok, report
        assert report.verification is not None
        assert report.verification.children == LIKES
        assert report.verification.parents == len(POSTS)
        moved = sum(a != b for a, b in zip(old.expected_likes(), new.expected_likes(), strict=True))
        assert report.written == moved  # each rewritten in place (its table key stays)
        assert report.deleted == report.updated == 0
        await assert_moved(db, new)
        again = await migrate(db, new.post.likes, from_=old.strategy())
        assert again.changes == 0
        assert again.ok


async def test_a_relationship_across_tables_migrates_under_faults(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    new, old = declare(4), declare(1)
    async with (
        both(dynorm_connect, dynorm_server, new, old) as db,
        FaultProxy.running(dynorm_server.url) as proxy,
        connect(
            new.posts,
            new.likes,
            endpoint_url=proxy.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={t: db.name_of(t) for t in db.tables},
            fast_path=fast_path_selected(),
            max_attempts=12,
        ) as faulty,
    ):
        proxy.use(
            FaultPlan(
                seed=27,
                rates={"throttle": 0.1, "error_500_after": 0.1, "lost_reply": 0.1, "reset": 0.05},
            )
        )
        report = await migrate(faulty, new.post.likes, from_=old.strategy(), page_size=5)
        proxy.use(None)
        assert report.ok, report
        injected = {e.fault for e in proxy.injected}
        assert {"lost_reply", "error_500_after", "throttle"} <= injected, injected
        assert proxy.errors == []
        items = await stored(db.focused(new.likes))
        for got, want in zip(items, new.expected_likes(), strict=True):
            assert got == want
        await assert_moved(db, new)


async def test_a_focused_view_names_one_table_and_routes_the_rest_by_model(
    dynorm_connect: Connect,
) -> None:
    new = declare(1)
    async with dynorm_connect(new.posts, new.likes) as db:
        view = db.focused(new.likes)
        assert view.table is new.likes
        assert view.table_name == db.name_of(new.likes)
        with pytest.raises(DefinitionError, match="names the one table of a connection"):
            _ = db.table_name  # the connection itself still has two
        await view.put(new.post("p1"))  # routed by model: into the posts' table
        assert await db.get(new.post, post_id="p1") == new.post("p1")
        assert await stored(db.focused(new.likes)) == []
        # What acts on every table acts on the view's one: deleting it leaves the other.
        assert view.tables == (new.likes,)
        assert [c.name for c in view.connected_tables()] == [db.name_of(new.likes)]
        await view.delete_table()
        assert await db.get(new.post, post_id="p1") == new.post("p1")


async def test_a_source_in_the_parents_table_is_refused_before_sending(
    dynorm_connect: Connect,
) -> None:
    new = declare(4)
    async with dynorm_connect(new.posts, new.likes) as db:
        with count_requests(db) as log, pytest.raises(DefinitionError) as caught:
            await migrate(db, new.post.likes, from_=Partition())
        assert log.operations == []
        message = str(caught.value)
        assert "Post.likes reaches into Table 'xmig-likes'" in message
        assert "a migration moves children within one table" in message
        assert "from_= takes an Index of Table 'xmig-likes'" in message


async def test_both_tables_must_be_on_the_connection(dynorm_connect: Connect) -> None:
    new = declare(4)
    async with dynorm_connect(new.posts) as db:
        with count_requests(db) as log, pytest.raises(DefinitionError) as caught:
            await migrate(db, new.post.likes, from_=Index("GSI1"))
        assert log.operations == []
        assert "needs Table 'xmig-likes' (its children's) on the connection" in str(caught.value)
        assert "connect(xmig-posts, xmig-likes, ...)" in str(caught.value)


async def test_the_command_line_migrates_a_relationship_across_tables(
    cli: Cli, dynorm_connect: Connect, dynorm_server: RunningServer, tmp_path: Path
) -> None:
    new, old = declare(4), declare(1)
    async with both(dynorm_connect, dynorm_server, new, old) as db:
        # The command imports the declaration by path, with the fresh tables' names.
        names = (db.name_of(new.posts), db.name_of(new.likes))
        models = tmp_path / "xmodels.py"
        models.write_text(
            "from tests.integration.xmig_models import declare\n"
            f"posts = declare(4, names={names!r}).posts\n"
        )
        ran = await cli.run(
            "migrate",
            f"{models}:posts",
            "Post.likes",
            "--from",
            "Index('GSI1')",
            "--yes",
            cwd=tmp_path,
        )
        assert ran.code == 0, ran.output
        assert "Traceback" not in ran.output
        await assert_moved(db, new)
