"""Updates of items stored at an older schema version."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from dynorm import Attr, Database, StaleItemError, TransactionCanceledError
from dynorm.migrations import upgrade_items
from dynorm.testing import Connect

from .raw import raw_item, raw_put
from .versions_models import User, app, same_stored, user_item

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(app) as connected:
        yield connected


KEY = {"pk": "USER#u1", "sk": "USER#u1"}

UPDATES: dict[str, dict[str, Any]] = {
    "upsert": {"upsert": True},
    "condition": {"condition": Attr("uid") == "u1"},
    "exactly_once": {"exactly_once": True},
    "returns_none": {"returns": None},
    "returns_old": {"returns": "old"},
}


@pytest.mark.parametrize("how", list(UPDATES))
async def test_an_update_of_an_older_item_is_refused_every_way(db: Database, how: str) -> None:
    item = user_item("u1", 1)
    await raw_put(db, item)
    user = await db.get(User, uid="u1")
    with pytest.raises(StaleItemError):
        await db.update(user, set={"city": "Paris"}, **UPDATES[how])
    assert same_stored(await raw_item(db, KEY) or {}, item)


async def test_a_transaction_update_of_an_older_item_is_refused(db: Database) -> None:
    item = user_item("u1", 1)
    await raw_put(db, item)
    user = await db.get(User, uid="u1")
    with pytest.raises((StaleItemError, TransactionCanceledError)):
        async with db.transaction() as tx:
            tx.update(user, set={"city": "Paris"})
    assert same_stored(await raw_item(db, KEY) or {}, item)


def _rekey(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, "uid": item["uid"].lower()}


async def test_upgrade_items_sets_aside_an_item_whose_upgrade_changes_its_key(
    dynorm_connect: Connect,
) -> None:
    from dynorm import Table  # noqa: PLC0415

    table = Table("probe-rekey", pk="pk", sk="sk")

    @table.model(pk="R#{uid}", sk="R#{uid}", schema_version=2, upgrades={1: _rekey})
    class Rekeyed:
        uid: str

    async with dynorm_connect(table) as db:
        await raw_put(db, {"pk": {"S": "R#ABC"}, "sk": {"S": "R#ABC"}, "uid": {"S": "ABC"}})
        report = await upgrade_items(db, Rekeyed)
        assert not report.ok or report.skipped, report
        assert any("table key" in s for s in report.skipped), report.skipped
        assert await raw_item(db, {"pk": "R#ABC", "sk": "R#ABC"}) is not None


# (children still in a was= layout: tests/integration/test_upgrade_was.py)
