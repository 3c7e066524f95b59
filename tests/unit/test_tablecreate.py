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


def described(status: str, *, sk_type: str = "S", sk: str = "sk") -> dict[str, Any]:
    """DescribeTable's ``Table`` of ``app`` (or of another sort key) in ``status``."""
    return {
        "TableStatus": status,
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": sk, "KeyType": "RANGE"},
        ],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": sk, "AttributeType": sk_type},
        ],
    }


def statuses(*seen: str | None) -> Callable[..., Any]:
    """A wait that shows its ``done`` each status in turn, as the describe loop would."""
    return descriptions(*(None if status is None else described(status) for status in seen))


def descriptions(*seen: dict[str, Any] | None) -> Callable[..., Any]:
    """A wait that shows its ``done`` each description in turn."""

    async def wait_for(name: str, done: Callable[..., bool], timeout: float) -> None:
        for found in seen:
            if done(found):
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


@pytest.mark.parametrize(
    ("found", "said"),
    [
        (described("CREATING", sk="other"), "pk (HASH, S), other (RANGE, S)"),
        (described("ACTIVE", sk_type="N"), "pk (HASH, S), sk (RANGE, N)"),
    ],
)
async def test_an_existing_table_of_another_primary_key_is_refused(
    found: dict[str, Any], said: str
) -> None:
    with pytest.raises(DatabaseError, match="exists with primary key") as caught:
        await create_one(
            exists,
            descriptions(found),
            Connected(app, "app"),
            timeout=5,
            key_types=None,
            exists_ok=True,
        )
    assert said in str(caught.value)
    assert "the Table declares pk (HASH, S), sk (RANGE, S)" in str(caught.value)
