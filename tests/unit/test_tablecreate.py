"""``io/tablecreate.py``: ``create_table(exists_ok=True)`` on a table found in each state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from dynorm import DatabaseError, Table
from dynorm.core.requests import Request
from dynorm.io.tablecreate import create_one
from dynorm.io.tables import Connected

app = Table("app", pk="pk", sk="sk")


@app.model(pk="A#{a}", sk="A#{a}")
@attrs.define
class Item:
    a: str


async def exists(request: Request) -> dict[str, Any]:
    raise DatabaseError("in use", code="ResourceInUseException", operation=request.operation)


def statuses(*seen: str | None) -> Callable[..., Any]:
    """A wait that shows its ``done`` each status in turn, as the describe loop would."""

    async def wait_for(name: str, done: Callable[[str | None], bool], timeout: float) -> None:
        for status in seen:
            if done(status):
                return
        raise AssertionError("never done")

    return wait_for


async def test_an_existing_table_becoming_active_is_accepted() -> None:
    created = await create_one(
        exists,
        statuses("CREATING", "ACTIVE"),
        Connected(app, "app"),
        timeout=5,
        key_types=None,
        exists_ok=True,
    )
    assert created is False


@pytest.mark.parametrize(("status", "said"), [("DELETING", "being deleted"), (None, "deleted")])
async def test_a_table_going_away_is_refused_not_waited_for(status: str | None, said: str) -> None:
    with pytest.raises(DatabaseError, match=f"table 'app' exists but is {said}") as caught:
        await create_one(
            exists,
            statuses(status),
            Connected(app, "app"),
            timeout=5,
            key_types=None,
            exists_ok=True,
        )
    assert "create it again once the deletion has ended" in str(caught.value)
