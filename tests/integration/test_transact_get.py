"""db.transact_get: items of several models read at one point in time, in one TransactGetItems."""

from __future__ import annotations

import pytest

import dynorm
from dynorm import Database, LimitExceededError
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User

from .seed import BILLGATES, MICROSOFT, TICKET_123

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


async def test_mixed_models_in_order_with_none_for_missing(seeded: Database) -> None:
    with count_requests(seeded) as log:
        org, nobody, user, ticket = await seeded.transact_get(
            (Org, {"name": "MICROSOFT"}),
            (User, {"org_name": "MICROSOFT", "username": "NOBODY"}),
            (User, {"org_name": "MICROSOFT", "username": "BILLGATES"}),
            (Ticket, {"ticket_id": "123"}),
        )
    assert log.operations == ["TransactGetItems"]
    assert (org, nobody, user, ticket) == (MICROSOFT, None, BILLGATES, TICKET_123)


async def test_read_objects_are_attached(seeded: Database) -> None:
    (org,) = await seeded.transact_get((Org, {"name": "MICROSOFT"}))
    assert org is not None
    names = [u.username async for u in org.users]
    assert names == ["BILLGATES", "SATYANADELLA"]


async def test_an_item_asked_for_twice_is_read_once(seeded: Database) -> None:
    key = (Org, {"name": "MICROSOFT"})
    (request,) = seeded.explain.transact_get(key, key)
    assert len(request.params["TransactItems"]) == 1
    with count_requests(seeded) as log:
        first, second = await seeded.transact_get(key, key)
    assert log.operations == ["TransactGetItems"]
    assert first == second == MICROSOFT


async def test_a_write_after_the_read_is_not_seen(seeded: Database) -> None:
    before = await seeded.transact_get((Org, {"name": "MICROSOFT"}))
    await seeded.put(dynorm_org("MICROSOFT", "Free"))
    after = await seeded.transact_get((Org, {"name": "MICROSOFT"}))
    assert before == (MICROSOFT,)
    assert after == (dynorm_org("MICROSOFT", "Free"),)


def dynorm_org(name: str, plan: str) -> Org:
    return Org(name=name, plan_type=plan)


async def test_too_many_items_or_a_bad_key_send_nothing(seeded: Database) -> None:
    keys = [(Org, {"name": f"ORG{i}"}) for i in range(dynorm.TRANSACT_MAX + 1)]
    with count_requests(seeded) as log:
        with pytest.raises(LimitExceededError, match="at most 100"):
            await seeded.transact_get(*keys)
        with pytest.raises(dynorm.KeyTemplateError, match="username"):
            await seeded.transact_get((User, {"org_name": "MICROSOFT"}))
        with pytest.raises(dynorm.DefinitionError, match="pairs"):
            await seeded.transact_get(Org)  # type: ignore[call-overload]
        with pytest.raises(LimitExceededError, match="at least one"):
            await seeded.transact_get()
    assert len(log) == 0
    # moto still holds transactions to DynamoDB's former limit of 25 items (AWS: 100).
    assert await seeded.transact_get(*keys[:25]) == (None,) * 25
