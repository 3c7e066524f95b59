"""Seed 001 — a user and the user's newest tickets through a secondary index (GSI1).

Tickets live in their own collections (``TICKET#<id>``); GSI1 gathers a user and the user's
tickets under ``ORG#<org>#USER#<user>``. The user sorts last, so reading backwards returns the
user first and then the newest tickets — one Query.
"""

from __future__ import annotations

import datetime

from common import Narrator, run

from dynorm import GSI, HasMany, Index, Partition, Table

table = Table("tickets", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"](via=Partition())


@table.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    GSI1=("ORG#{org_name}#USER#{username}", "USER#{username}"),
)
class User:
    org_name: str
    username: str
    user_type: str = "Member"
    tickets = HasMany["Ticket"](via=Index("GSI1"), newest_first=True)


@table.model(
    pk="TICKET#{ticket_id}",
    sk="TICKET#{ticket_id}",
    GSI1=("ORG#{org_name}#USER#{username}", "TICKET#{ticket_id}"),
)
class Ticket:
    ticket_id: str
    org_name: str
    username: str
    created: datetime.datetime


async def scenario(tour: Narrator) -> None:
    db = tour.db
    await db.put_all(
        [
            Org("MICROSOFT", "Enterprise"),
            User("MICROSOFT", "BILLGATES"),
            User("MICROSOFT", "SATYANADELLA", "Admin"),
            Ticket("123", "MICROSOFT", "BILLGATES", datetime.datetime(2023, 9, 5, 22, 31, 54)),
            Ticket("456", "MICROSOFT", "BILLGATES", datetime.datetime(2024, 9, 5, 22, 31, 54)),
        ]
    )

    async def user_and_newest() -> object:
        user = await db.get(
            User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets.limit(1)]
        )
        return {"user": user, "newest tickets": user.tickets.loaded}

    await tour.step(
        "001.1 A User and the newest Ticket (1 Query on GSI1, backwards)", user_and_newest
    )

    async def user_and_all() -> object:
        user = await db.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
        return {"user": user, "tickets": user.tickets.loaded}

    await tour.step("001.2 A User and all Tickets, newest first (1 Query on GSI1)", user_and_all)
    await tour.step(
        "001.3 Retrieve a Ticket directly (GetItem on TICKET#<id>)",
        lambda: db.get(Ticket, ticket_id="456"),
    )


if __name__ == "__main__":
    run(scenario, table)
