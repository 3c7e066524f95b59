"""Writes of a child while its relationship declares ``was=``, under injected faults.

The table is reached through the fault proxy (``faulty.db``) and straight (``faulty.direct``,
for checking); the old layout's items are written raw. After every write: the new item stored
whole, the old one gone, nothing half-written.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.faultproxy import FaultyConnect, Injected

from .raw import raw_put, stored
from .was_models import Item, Parent, new_move

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


def old_item(name: str, qty: int) -> dict[str, Any]:
    return {
        "pk": {"S": "P#a"},
        "sk": {"S": f"ITEM#{name}"},
        "parent_id": {"S": "a"},
        "name": {"S": name},
        "qty": {"N": str(qty)},
    }


def new_item(name: str, qty: int) -> dict[str, Any]:
    return {
        "pk": f"I#a#{name}",
        "sk": f"I#a#{name}",
        "GSI1PK": "P#a",
        "GSI1SK": f"ITEM#{name}",
        "parent_id": "a",
        "name": name,
        "qty": str(qty),
    }


PARENT = {"pk": "P#a", "sk": "#PARENT#a", "GSI1PK": "P#a", "GSI1SK": "#PARENT#a", "parent_id": "a",
          "title": ""}  # fmt: skip


async def test_a_lost_reply_to_the_add_is_sent_again_and_applied_once(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(new_move) as faulty:
        await faulty.direct.put(Parent("a"))
        await raw_put(faulty.direct, old_item("apple", 3))
        faulty.proxy.inject("lost_reply", operation="TransactWriteItems")

        await faulty.db.add(Parent("a"), Parent.items, Item("a", "apple", 4))

        assert faulty.proxy.injected == [Injected("TransactWriteItems", "lost_reply")]
        assert faulty.proxy.requests == ["TransactWriteItems"] * 2
        assert await stored(faulty.direct) == [new_item("apple", 4), PARENT]


async def test_an_update_moving_a_child_survives_a_500_after_its_move_was_applied(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(new_move) as faulty:
        await raw_put(faulty.direct, old_item("apple", 3))
        # The first transaction (the update, refused: no new item) goes through; the second,
        # the move, is applied and answered with a 500: sent again with its token, once.
        seen = 0

        def second(body: dict[str, Any]) -> bool:
            del body
            nonlocal seen
            seen += 1
            return seen == 2

        faulty.proxy.inject("error_500_after", operation="TransactWriteItems", when=second)

        updated = await faulty.db.update(Item("a", "apple", 3), set={"qty": 9})

        assert updated == Item("a", "apple", 9)
        assert faulty.proxy.injected == [Injected("TransactWriteItems", "error_500_after")]
        assert await stored(faulty.direct) == [new_item("apple", 9)]


async def test_throttled_removals_are_retried_and_leave_neither_copy(
    faulty_connect: FaultyConnect,
) -> None:
    async with faulty_connect(new_move) as faulty:
        await faulty.direct.put(Parent("a"))
        await raw_put(faulty.direct, old_item("apple", 3))
        await faulty.direct.put(Item("a", "fig", 1))
        await raw_put(faulty.direct, old_item("fig", 1))
        faulty.proxy.inject("throttle", operation="TransactWriteItems", times=2)

        await faulty.db.remove(Parent("a"), Parent.items, Item("a", "apple", 3))
        await faulty.db.delete(Item("a", "fig", 1))

        assert faulty.proxy.requests == ["TransactWriteItems"] * 4
        assert await stored(faulty.direct) == [PARENT]
