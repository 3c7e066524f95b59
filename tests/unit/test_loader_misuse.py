"""A relationship used as if it were its children or its parent says what to write instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dynorm import BelongsTo, HasMany, Partition, Table

blog = Table("blog", pk="pk", sk="sk")


@blog.model(pk="USER#{user_id}", sk="USER")
class User:
    user_id: str
    posts = HasMany["Post"](via=Partition())


@blog.model(pk="USER#{user_id}", sk="POST#{post_id}")
class Post:
    user_id: str
    post_id: str
    author = BelongsTo(User)


def test_iterating_children_without_async_for_says_how_to_read_them() -> None:
    loader: Any = User(user_id="u1").posts  # Any: type checkers refuse the for loop itself
    with pytest.raises(TypeError) as caught:
        for _ in loader:
            pass
    said = str(caught.value)
    assert "User.posts is not iterable" in said
    assert "`async for x in obj.posts`" in said
    assert "`await obj.posts.all()`" in said
    assert "load=[User.posts]" in said
    assert "`obj.posts.loaded`" in said


def test_awaiting_children_or_a_parent_says_what_to_await() -> None:
    children: Any = User(user_id="u1").posts
    parent: Any = Post(user_id="u1", post_id="p1").author

    async def wait(awaited: Any) -> object:
        return await awaited

    with pytest.raises(TypeError, match=r"User\.posts is not awaitable") as caught:
        asyncio.run(wait(children))
    assert "`await obj.posts.all()`" in str(caught.value)
    with pytest.raises(TypeError, match=r"Post\.author is not awaitable") as caught:
        asyncio.run(wait(parent))
    assert "`await obj.author.get()`" in str(caught.value)
    assert "`obj.author.loaded`" in str(caught.value)
