"""Every update the mypy plugin accepts in ``tests/typing/rejected_updates.py`` runs.

``tests/unit/test_update_refusals.py`` plans them; here each is sent to the server and the item
read back, so a value the plugin lets through (an int for a ``Decimal`` inside a set, a list for
a ``tuple[int, str]``, ints in a ``dict[str, float]``) is one DynamoDB stores and dynorm decodes
as the field is typed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

from dynorm import Database
from dynorm.testing import Connect
from tests.typing.rejected_updates import Address, Office, User, table
from tests.unit.test_update_refusals import ACCEPTED

pytestmark = pytest.mark.integration


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


@pytest.mark.parametrize("ops", ACCEPTED, ids=repr)
async def test_what_the_plugin_accepts_is_stored(db: Database, ops: dict[str, Any]) -> None:
    stored = await db.put(
        User(uid="1", address=Address("Bergen"), office=Office("Bergen"), visits=[5])
    )
    new = await db.update(stored, **ops)
    assert new == await db.get(User, uid="1")


async def test_values_are_read_back_as_the_fields_are_typed(db: Database) -> None:
    user = await db.put(User(uid="1"))
    await db.update(user, set={"prices": {1}, "amounts": [1], "ratios": {"a": 1}})
    new = await db.update(user, set={"pair": [2, "b"], "kind": "b"}, add={"prices": {2}})
    assert new.prices == {Decimal(1), Decimal(2)}
    assert new.amounts == [Decimal(1)]
    assert new.ratios == {"a": 1.0}
    assert new.pair == (2, "b")
    assert new.kind == "b"
