"""The items of seeds 000 and 001 (organizations, users, tickets), and a helper to store them."""

from __future__ import annotations

import datetime
from typing import Final

from dynorm import Database
from tests.seed_models import Org, Ticket, User

MICROSOFT: Final = Org(name="MICROSOFT", plan_type="Enterprise")
AMAZON: Final = Org(name="AMAZON", plan_type="Pro")
BILLGATES: Final = User(org_name="MICROSOFT", username="BILLGATES", user_type="Member")
SATYANADELLA: Final = User(org_name="MICROSOFT", username="SATYANADELLA", user_type="Admin")
JEFFBEZOS: Final = User(org_name="AMAZON", username="JEFFBEZOS", user_type="Admin")
TICKET_123: Final = Ticket(
    ticket_id="123",
    org_name="MICROSOFT",
    username="BILLGATES",
    created=datetime.datetime(2023, 9, 5, 22, 31, 54),
)
TICKET_456: Final = Ticket(
    ticket_id="456",
    org_name="MICROSOFT",
    username="BILLGATES",
    created=datetime.datetime(2024, 9, 5, 22, 31, 54),
)

ORGS: Final = (MICROSOFT, AMAZON)
USERS: Final = (BILLGATES, SATYANADELLA, JEFFBEZOS)
TICKETS: Final = (TICKET_123, TICKET_456)
SEED: Final[tuple[object, ...]] = (*ORGS, *USERS, *TICKETS)


async def load_seed(db: Database) -> None:
    """Store every seed item (one BatchWriteItem)."""
    await db.put_all(SEED)
