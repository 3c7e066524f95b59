"""Seed 000 — organizations and their users in one item collection (composite primary key).

| pk            | sk                 | entity |
|---------------|--------------------|--------|
| ORG#MICROSOFT | METADATA#MICROSOFT | Org    |
| ORG#MICROSOFT | USER#BILLGATES     | User   |
"""

from __future__ import annotations

from common import Narrator, run

from dynorm import HasMany, Partition, Table

table = Table("orgs", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"](via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
class User:
    org_name: str
    username: str
    user_type: str = "Member"


async def scenario(tour: Narrator) -> None:
    db = tour.db
    await db.put_all(
        [
            Org("MICROSOFT", "Enterprise"),
            User("MICROSOFT", "BILLGATES", "Member"),
            User("MICROSOFT", "SATYANADELLA", "Admin"),
            Org("AMAZON", "Pro"),
            User("AMAZON", "JEFFBEZOS", "Admin"),
        ]
    )
    await tour.step(
        "000.1 Retrieve an Organization (GetItem)", lambda: db.get(Org, name="MICROSOFT")
    )

    async def org_and_users() -> object:
        org = await db.get(Org, name="MICROSOFT", load=[Org.users])
        return {"org": org, "users": org.users.loaded}

    await tour.step("000.2 Retrieve an Organization and all its Users (1 Query)", org_and_users)
    await tour.step(
        "000.3 Retrieve only the Users of an Organization (begins_with(sk, 'USER#'))",
        lambda: db.query(User, org_name="MICROSOFT").all(),
    )
    await tour.step(
        "000.4 Retrieve a specific User (GetItem)",
        lambda: db.get(User, org_name="MICROSOFT", username="BILLGATES"),
    )


if __name__ == "__main__":
    run(scenario, table)
