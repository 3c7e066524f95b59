"""A relationship serialises the same whatever its strategy (docs/web.md, "Relationships in JSON").

One relationship, "a post has comments", declared six ways: Partition, Index, Embedded,
Denormalized, a hierarchical sort key and an adjacency list's inverted index. The same data
gives the same JSON through ``dynorm.jsonable`` and through a FastAPI response model: comments
loaded by the call are an array (``[]`` when there are none), comments not loaded are absent,
embedded ones included (they come inside the item, but the call did not ask for them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import httpx
import pytest
from fastapi import FastAPI

import dynorm
from dynorm import GSI, Database, Denormalized, Embedded, HasMany, Index, Partition, Table
from dynorm.testing import Connect

pytestmark = pytest.mark.integration

table = Table(
    "json-switch",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("inverted", pk="sk", sk="pk")],
)


@table.model(pk="PP#{pid}", sk="#POST#{pid}")
@attrs.define
class PartitionPost:
    pid: str
    title: str = ""
    comments = HasMany["PartitionComment"]("PartitionComment", via=Partition())


@table.model(pk="PP#{pid}", sk="C#{name}")
@attrs.define
class PartitionComment:
    pid: str
    name: str
    text: str = ""


@table.model(pk="IP#{pid}", sk="#POST#{pid}", GSI1=("IP#{pid}", "#POST#{pid}"))
@attrs.define
class IndexPost:
    pid: str
    title: str = ""
    comments = HasMany["IndexComment"]("IndexComment", via=Index("GSI1"))


@table.model(pk="IC#{pid}#{name}", sk="IC#{pid}#{name}", GSI1=("IP#{pid}", "C#{name}"))
@attrs.define
class IndexComment:
    pid: str
    name: str
    text: str = ""


@attrs.define
class EmbeddedComment:
    pid: str
    name: str
    text: str = ""


@table.model(pk="EP#{pid}", sk="#POST#{pid}")
@attrs.define
class EmbeddedPost:
    pid: str
    title: str = ""
    comments = HasMany[EmbeddedComment](EmbeddedComment, via=Embedded(key="name"))


@table.model(pk="DP#{pid}", sk="#POST#{pid}")
@attrs.define
class DenormalizedPost:
    pid: str
    title: str = ""
    comments = HasMany["DenormalizedComment"](
        "DenormalizedComment", via=Denormalized(copy={"title": "post_title"})
    )


@table.model(pk="DP#{pid}", sk="C#{name}")
@attrs.define
class DenormalizedComment:
    pid: str
    name: str
    text: str = ""
    post_title: str | None = None


@table.model(pk="HIER", sk="{pid}")
@attrs.define
class HierarchyPost:
    pid: str
    title: str = ""
    comments = HasMany["HierarchyComment"]("HierarchyComment", via=Partition())


@table.model(pk="HIER", sk="{pid}#{name}")
@attrs.define
class HierarchyComment:
    pid: str
    name: str
    text: str = ""


# An adjacency list: a mapping item per (post, comment) pair; a post reads its comments through
# the inverted index (the mapping's sort key is the post's partition there).
@table.model(pk="AP#{pid}", sk="AP#{pid}")
@attrs.define
class AdjacencyPost:
    pid: str
    title: str = ""
    comments = HasMany["AdjacencyComment"]("AdjacencyComment", via=Index("inverted"))


@table.model(pk="AC#{name}", sk="AP#{pid}#C")
@attrs.define
class AdjacencyComment:
    pid: str
    name: str
    text: str = ""


CASES: dict[str, tuple[type[Any], type[Any]]] = {
    "partition": (PartitionPost, PartitionComment),
    "index": (IndexPost, IndexComment),
    "embedded": (EmbeddedPost, EmbeddedComment),
    "denormalized": (DenormalizedPost, DenormalizedComment),
    "hierarchy": (HierarchyPost, HierarchyComment),
    "adjacency": (AdjacencyPost, AdjacencyComment),
}

POST = {"pid": "p1", "title": "Hello"}
COMMENTS = [{"pid": "p1", "name": "a", "text": "first"}, {"pid": "p1", "name": "b", "text": ""}]


def expected_comments(name: str) -> list[dict[str, Any]]:
    # The denormalized copy is a field of its own: data, shown as every field is.
    extra = {"post_title": "Hello"} if name == "denormalized" else {}
    return [{**c, **extra} for c in COMMENTS]


async def store(db: Database, name: str, *, with_comments: bool = True) -> Any:
    post_cls, comment_cls = CASES[name]
    post = post_cls(**POST)
    await db.put(post)
    for comment in COMMENTS if with_comments else []:
        await db.add(post, post_cls.comments, comment_cls(**comment))
    return post_cls


@pytest.mark.parametrize("name", sorted(CASES))
async def test_the_same_data_is_the_same_json(dynorm_connect: Connect, name: str) -> None:
    async with dynorm_connect(table) as db:
        post_cls = await store(db, name)

        alone = await db.get(post_cls, pid="p1")  # comments not asked for: absent
        assert dynorm.jsonable(alone) == POST

        loaded = await db.get(post_cls, pid="p1", load=[post_cls.comments])
        data = dynorm.jsonable(loaded)
        assert data == {**POST, "comments": expected_comments(name)}

        # Back and forth: what a client sends back is what it got.
        assert dynorm.jsonable(dynorm.from_jsonable(post_cls, data)) == data

        # db.load asks for them too, on objects read without them.
        await db.load([alone], post_cls.comments)
        assert dynorm.jsonable(alone) == data


@pytest.mark.parametrize("name", sorted(CASES))
async def test_loaded_without_children_is_an_empty_array(
    dynorm_connect: Connect, name: str
) -> None:
    async with dynorm_connect(table) as db:
        post_cls = await store(db, name, with_comments=False)
        assert dynorm.jsonable(await db.get(post_cls, pid="p1")) == POST
        loaded = await db.get(post_cls, pid="p1", load=[post_cls.comments])
        assert dynorm.jsonable(loaded) == {**POST, "comments": []}


def json_app(db: Database) -> FastAPI:
    """One endpoint pair per strategy, as an API would declare them (response_model=Post)."""
    app = FastAPI()

    def routes(name: str, post_cls: type[Any]) -> None:
        async def plain(pid: str) -> Any:
            return await db.get(post_cls, pid=pid)

        async def with_comments(pid: str) -> Any:
            return await db.get(post_cls, pid=pid, load=[post_cls.comments])

        app.get(f"/{name}/{{pid}}", response_model=post_cls)(plain)
        app.get(f"/{name}/{{pid}}/comments", response_model=post_cls)(with_comments)

    for name, (post_cls, _) in CASES.items():
        routes(name, post_cls)
    return app


async def test_fastapi_responses_do_not_depend_on_the_strategy(dynorm_connect: Connect) -> None:
    async with dynorm_connect(table) as db:
        for name in CASES:
            await store(db, name)
        app = json_app(db)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            for name in CASES:
                plain = await client.get(f"/{name}/p1")
                assert (plain.status_code, plain.json()) == (200, POST), name
                full = await client.get(f"/{name}/p1/comments")
                assert full.json() == {**POST, "comments": expected_comments(name)}, name
        schema: Callable[[str], dict[str, Any]] = app.openapi()["components"]["schemas"].get
        for post_cls, _ in CASES.values():
            post = schema(post_cls.__name__)
            assert post["properties"]["comments"]["type"] == "array"
            assert "comments" not in post.get("required", []), post_cls.__name__
