"""What ``dynorm design`` says each access pattern sends is what the call sends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from dynorm import Database
from dynorm.design import design
from dynorm.testing import count_requests
from tests.seed_models import Org, Ticket, User, app

pytestmark = pytest.mark.integration

CALLS: dict[str, Callable[[Database], Awaitable[object]]] = {
    "Org by key": lambda db: db.get(Org, name="MICROSOFT"),
    "Org.users": lambda db: db.get(Org, name="MICROSOFT", load=[Org.users]),
    "User by key": lambda db: db.get(User, org_name="MICROSOFT", username="BILLGATES"),
    "User.tickets": lambda db: db.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets]
    ),
    "User.org": lambda db: db.get(
        User, org_name="MICROSOFT", username="BILLGATES", load=[User.org]
    ),
    "User by org_name": lambda db: db.query(User, org_name="MICROSOFT").page(),
    "Ticket by key": lambda db: db.get(Ticket, ticket_id="123"),
    "Ticket by org_name, username (GSI1)": lambda db: db.query(
        Ticket, index="GSI1", org_name="MICROSOFT", username="BILLGATES"
    ).page(),
}


def test_every_pattern_of_the_seed_table_is_checked_here() -> None:
    names = {p.name for p in design(app).patterns}
    assert names - set(CALLS) <= {"User by org_name, username (GSI1)"}, names - set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_the_design_lists_the_requests_the_call_sends(seeded: Database, name: str) -> None:
    pattern = next(p for p in design(app).patterns if p.name == name)

    with count_requests(seeded) as log:
        await CALLS[name](seeded)

    assert [line.split(":")[0].split()[0] for line in pattern.requests] == log.operations
