"""A relationship across two tables, declared once per layout, for migrations.

Posts are in one table, their likes in another, read through one of that table's indexes
(``GSI1`` or ``GSI2``) over some number of shards: ``declare(shards, index)`` is the
declaration of one layout, so a test writes with an old one and migrates to a new one.
"""

from __future__ import annotations

from typing import Any

import attrs

from dynorm import GSI, HasMany, Index, Table
from dynorm.core.keys import shard_number

POSTS = ["p1", "p2"]
USERS = [f"u{i:02d}" for i in range(11)]


@attrs.frozen
class Layout:
    """``Post.likes`` through ``index`` of the likes' table over ``shards`` shards."""

    posts: Table
    likes: Table
    post: type[Any]
    like: type[Any]
    shards: int
    index: str

    def objects(self) -> list[Any]:
        posts = [self.post(p) for p in POSTS]
        return [*posts, *(self.like(p, u, i) for p in POSTS for i, u in enumerate(USERS))]

    def strategy(self) -> Index:
        return Index(self.index, shards=self.shards)

    def expected_likes(self) -> list[dict[str, Any]]:
        """Every item of the likes' table as this layout stores it (flattened, key order)."""
        items = []
        for post in POSTS:
            for i, user in enumerate(USERS):
                shard = shard_number([post, user], self.shards)
                index_pk = f"POST#{post}#{shard}" if self.shards > 1 else f"POST#{post}"
                items.append(
                    {
                        "pk": f"LIKE#{post}#{user}",
                        "sk": f"LIKE#{user}",
                        f"{self.index}PK": index_pk,
                        f"{self.index}SK": f"LIKE#{user}",
                        "post_id": post,
                        "user_id": user,
                        "weight": str(i),
                    }
                )
        return sorted(items, key=lambda i: (i["pk"], i["sk"]))


def declare(
    shards: int, index: str = "GSI1", names: tuple[str, str] = ("xmig-posts", "xmig-likes")
) -> Layout:
    posts = Table(names[0], pk="pk", sk="sk")
    likes = Table(
        names[1],
        pk="pk",
        sk="sk",
        indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("GSI2", pk="GSI2PK", sk="GSI2SK")],
    )
    index_pk = "POST#{post_id}#{shard}" if shards > 1 else "POST#{post_id}"

    keys: dict[str, Any] = {"pk": "LIKE#{post_id}#{user_id}", "sk": "LIKE#{user_id}"}
    templates = (index_pk, "LIKE#{user_id}")
    on_index = (
        likes.model(**keys, GSI1=templates)
        if index == "GSI1"
        else likes.model(**keys, GSI2=templates)
    )

    @on_index
    class Like:
        post_id: str
        user_id: str
        weight: int = 1

    @posts.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        likes = HasMany(Like, via=Index(index, shards=shards))

    return Layout(posts, likes, Post, Like, shards, index)
