"""Query page -> objects: every client reads the same page; CPU per item, ratios, targets."""

from __future__ import annotations

from benchmarks import clients, measure, server
from benchmarks.report import Check, Section, ratio

#: The issue's targets for dynorm on this page.
MAX_X_FLOOR = 3.0
MIN_LESS_THAN_AIOBOTOCORE = 5.0
MIN_LESS_THAN_PYNAMODB = 7.0

HEADER = (
    "client",
    "what it does",
    "CPU us/item",
    "CPU ms/page",
    "wall ms",
    "spread",
    "x floor",
    "x dynorm",
)


async def run(*, items: int, repeats: int, collect: bool = True) -> Section:
    with server.running(items=items) as url:
        results = await measure.interleaved(clients.QUERY, url, repeats=repeats, collect=collect)
    ran = measure.by_name(results)
    floor, dynorm = ran.get("floor"), ran.get("dynorm")
    section = Section(
        f"Query page -> objects: {items + 1:,} items a page ({items:,} order items + the order), "
        f"{repeats} repeats{'' if collect else ', garbage collector off'}",
        HEADER,
    )
    section.rows += [
        measure.cpu_row(r, measure.per_unit_cells, floor=floor, reference=dynorm) for r in results
    ]
    section.notes.append(measure.spread_note())
    if dynorm is not None:
        section.checks += _checks(dynorm, ran)
    return section


def _checks(dynorm: measure.Result, ran: dict[str, measure.Result]) -> list[Check]:
    mine = dynorm.cpu_per_unit

    def versus(name: str) -> float | None:
        peer = ran.get(name)
        return None if peer is None else peer.cpu_per_unit

    floor, aiodynamo = versus("floor"), versus("aiodynamo")
    aiobotocore, pynamodb = versus("aiobotocore"), versus("pynamodb")
    missing = "the peer client did not run"
    return [
        Check(
            None if floor is None else mine <= MAX_X_FLOOR * floor,
            f"dynorm <= {MAX_X_FLOOR:g}x the floor per item",
            missing if floor is None else ratio(mine / floor),
        ),
        Check(
            None if aiodynamo is None else mine < aiodynamo,
            "dynorm below aiodynamo per item",
            missing if aiodynamo is None else f"{ratio(mine / aiodynamo)} aiodynamo",
        ),
        Check(
            None if aiobotocore is None else aiobotocore >= MIN_LESS_THAN_AIOBOTOCORE * mine,
            f">= {MIN_LESS_THAN_AIOBOTOCORE:g}x less CPU per item than aiobotocore raw dicts",
            missing if aiobotocore is None else f"{ratio(aiobotocore / mine)} less",
        ),
        Check(
            None if pynamodb is None else pynamodb >= MIN_LESS_THAN_PYNAMODB * mine,
            f">= {MIN_LESS_THAN_PYNAMODB:g}x less CPU per item than PynamoDB",
            missing if pynamodb is None else f"{ratio(pynamodb / mine)} less",
        ),
    ]
