"""The tour: every access pattern of the seed texts, with what it returns and what it costs.

Run it with ``make demo``. Without ``DYNORM_ENDPOINT_URL`` it uses dynorm's embedded moto server.
Each data set opens with ``dynorm design``: its key table and the cost of each access pattern,
planned without sending anything; the scenario then sends them.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import existing_table
import seed_000_organizations
import seed_001_tickets
import seed_002_games
import seed_003_strategies
import seed_004_orders
from common import Narrator, Server, demo_server, open_database

SCENARIOS = [
    seed_000_organizations,
    seed_001_tickets,
    seed_002_games,
    seed_003_strategies,
    seed_004_orders,
    existing_table,
]


def show_design(module: object) -> None:
    """Run ``dynorm design`` on the module's table, as a reader would in a terminal."""
    path = os.path.relpath(str(getattr(module, "__file__", "")))
    print(f"\n$ dynorm design {path}:table")
    sys.stdout.flush()
    env = {**os.environ, "COLUMNS": os.environ.get("COLUMNS", "120")}
    command = [sys.executable, "-m", "dynorm", "design", f"{path}:table"]
    subprocess.run(command, check=True, env=env)  # noqa: S603  (our own command)


async def main(server: Server) -> None:
    summary: list[tuple[str, int]] = []
    for module in SCENARIOS:
        print(f"\n{'=' * 96}\n{(module.__doc__ or module.__name__).strip().splitlines()[0]}")
        show_design(module)
        # A module that creates its table itself (as another tool would) says CREATE = False.
        create = getattr(module, "CREATE", True)
        async with open_database(module.table, server, create=create) as db:
            narrator = Narrator(db)
            await module.scenario(narrator)
            summary += narrator.steps
    print(f"\n{'=' * 96}\nSummary")
    for title, count in summary:
        print(f"  {count} request{'s' if count != 1 else ' '}  {title}")


if __name__ == "__main__":
    with demo_server() as running:
        asyncio.run(main(running))
