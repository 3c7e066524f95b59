"""Denormalized copies of a sharded collection: a rewrite reads the shards all at once.

``db.put(parent)`` (and ``db.sync_copies``) read every shard of the children before rewriting
the stale copies. The shards' Queries go out together: the fault proxy holds each Query as it
arrives, and every shard's Query arrives while none has been answered, which a read of one
shard after another could never do. The copies then hold the new value in every shard.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from dynorm import Denormalized, HasMany, Partition, Table
from dynorm.testing import count_requests
from tests.faultproxy import FaultyConnect

from .raw import raw_scan

pytestmark = pytest.mark.integration

SHARDS = 8
TITLES = [f"t{i:02d}" for i in range(24)]

table = Table("denorm-shards", pk="pk", sk="sk")


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
class Author:
    name: str
    country: str
    books = HasMany["Book"](
        via=Denormalized(
            copy={"country": "author_country"}, where=Partition(shards=SHARDS), max_fanout=100
        )
    )


@table.model(pk="AUTHOR#{author}#{shard}", sk="BOOK#{title}")
class Book:
    author: str
    title: str
    author_country: str = ""


@pytest.mark.transactions  # the rewrite goes out with the parent in a transaction
async def test_a_copy_rewrite_reads_every_shard_at_once(faulty_connect: FaultyConnect) -> None:
    async with faulty_connect(table) as faulty:
        db, proxy = faulty.db, faulty.proxy
        author = Author("ada", "UK")
        await db.put(author)
        for title in TITLES:
            await db.add(author, Author.books, Book("ada", title))

        held = [proxy.pause("Query") for _ in range(SHARDS)]
        with count_requests(db) as log:
            rewrite = asyncio.create_task(db.put(Author("ada", "FR")))
            # Every shard's Query has arrived while none of them has been answered.
            await asyncio.wait_for(asyncio.gather(*(h.arrived.wait() for h in held)), 60)
            for h in held:
                h.release()
            await rewrite

        sent = Counter(log.operations)
        assert sent["Query"] == SHARDS, sent
        queried = {
            value["S"]
            for body in proxy.bodies
            if "KeyConditionExpression" in body
            for value in body["ExpressionAttributeValues"].values()
            if value.get("S", "").startswith("AUTHOR#")
        }
        assert queried == {f"AUTHOR#ada#{s}" for s in range(SHARDS)}
        books = [i for i in await raw_scan(faulty.direct) if i["sk"]["S"].startswith("BOOK#")]
        assert len(books) == len(TITLES)
        assert {b["author_country"]["S"] for b in books} == {"FR"}
        assert len({b["pk"]["S"] for b in books}) > 1  # spread over several shards
