"""Seed 003 — the one-to-many strategies side by side: composite sort keys for hierarchies.

Locations keyed ``pk=<country>``, ``sk=<state>#<city>#<zip>`` are queryable at every level with
``begins_with``; the prefix always ends at a component boundary.
"""

from __future__ import annotations

from common import Narrator, run

from dynorm import Table

table = Table("places", pk="pk", sk="sk")


@table.model(pk="{country}", sk="{state}#{city}#{zip}")
class Location:
    country: str
    state: str
    city: str
    zip: str


async def scenario(tour: Narrator) -> None:
    db = tour.db
    await db.put_all(
        [
            Location("USA", "WA", "SEATTLE", "98101"),
            Location("USA", "WA", "SEATTLE", "98109"),
            Location("USA", "WA", "SEATTLEHEIGHTS", "98000"),
            Location("USA", "WA", "SPOKANE", "99201"),
            Location("USA", "NY", "NEW YORK", "10001"),
        ]
    )
    await tour.step(
        "003.5.1 All locations in a country (pk = USA)",
        lambda: db.query(Location, country="USA").all(),
    )
    await tour.step(
        "003.5.2 Locations in a state (begins_with(sk, 'WA#'))",
        lambda: db.query(Location, country="USA", state="WA").all(),
    )
    await tour.step(
        "003.5.3 Locations in a city (begins_with(sk, 'WA#SEATTLE#'): not SEATTLEHEIGHTS)",
        lambda: db.query(Location, country="USA", state="WA", city="SEATTLE").all(),
    )
    await tour.step(
        "003.5.4 One zip code (sk = 'WA#SEATTLE#98101')",
        lambda: db.query(Location, country="USA", state="WA", city="SEATTLE", zip="98101").all(),
    )


if __name__ == "__main__":
    run(scenario, table)
