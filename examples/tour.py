"""The tour: every access pattern of the seed texts, with what it returns and what it costs.

Run it with ``make demo``. Without ``DYNORM_ENDPOINT_URL`` it uses dynorm's embedded moto server.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import existing_table
import seed_000_organizations
import seed_001_tickets
import seed_002_games
import seed_003_strategies
import seed_004_orders
from common import Narrator, open_database

SCENARIOS = [
    seed_000_organizations,
    seed_001_tickets,
    seed_002_games,
    seed_003_strategies,
    seed_004_orders,
    existing_table,
]


async def main() -> None:
    summary: list[tuple[str, int]] = []
    for module in SCENARIOS:
        print(f"\n{'=' * 96}\n{(module.__doc__ or module.__name__).strip().splitlines()[0]}")
        # A module that creates its table itself (as another tool would) says CREATE = False.
        async with open_database(module.table, create=getattr(module, "CREATE", True)) as db:
            narrator = Narrator(db)
            await module.scenario(narrator)
            summary += narrator.steps
    print(f"\n{'=' * 96}\nSummary")
    for title, count in summary:
        print(f"  {count} request{'s' if count != 1 else ' '}  {title}")


if __name__ == "__main__":
    asyncio.run(main())
