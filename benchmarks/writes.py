"""Writes: ``put_all`` of many order items in BatchWriteItem requests; client CPU per item.

Every client starts from objects built before the timed run, each in its own library's form
(attrs objects, PynamoDB and pydynox models, plain dicts for aiodynamo). The floor and raw
aiobotocore start from AttributeValue dicts built before the run, so they encode nothing: the
floor is the wire alone (orjson bodies, SigV4, aiohttp POSTs of 25 items). ``floor+encode`` adds
a generic plain value → AttributeValue encoder inside the run, the least a mapper must add.
"""

from __future__ import annotations

from typing import Final

from benchmarks import clients, measure, server
from benchmarks.report import Section, number, ratio

#: Issue 10's target and moonshot: dynorm's CPU per item within these many times the floor.
MAX_X_FLOOR: Final = 3.0
MOONSHOT_X_FLOOR: Final = 2.0

HEADER: Final = (
    "client",
    "what it does",
    "CPU us/item",
    "CPU ms/run",
    "wall ms",
    "spread",
    "x floor",
    "x aiodynamo",
)


async def run(*, items: int, repeats: int, collect: bool = True) -> Section:
    """Time writing ``items`` order items per run for every client."""
    with server.running(items=1) as url:
        results = await measure.interleaved(
            clients.PUT_ALL, url, repeats=repeats, kind="PutAllClient", collect=collect, items=items
        )
    ran = measure.by_name(results)
    floor, aiodynamo = ran.get("floor"), ran.get("aiodynamo")
    section = Section(
        f"put_all: {items:,} order items in BatchWriteItem requests of 25, {repeats} repeats"
        f"{'' if collect else ', garbage collector off'}; floor = signed POSTs of AttributeValue "
        "dicts encoded before the run",
        HEADER,
    )
    for result in results:
        if result.skipped is not None:
            section.rows.append([result.name, result.skipped])
            continue
        per_item = result.cpu_per_unit
        section.rows.append(
            [
                result.name,
                result.entry.label,
                number(per_item * 1e6),
                number(per_item * result.units_per_run * 1e3),
                number(result.wall_per_run * 1e3),
                f"{result.spread:.0%}",
                ratio(per_item / floor.cpu_per_unit) if floor else "-",
                ratio(per_item / aiodynamo.cpu_per_unit) if aiodynamo else "-",
            ]
        )
    section.notes.append(measure.spread_note())
    dynorm = ran.get("dynorm")
    if dynorm is not None and floor is not None:
        section.notes.append(
            f"moonshot: dynorm {ratio(dynorm.cpu_per_unit / floor.cpu_per_unit)} the floor "
            f"(goal <= {MOONSHOT_X_FLOOR:g}x)"
        )
    if dynorm is not None:
        section.checks += [
            measure.at_most(ran, "dynorm", "aiodynamo", what="per item"),
            measure.at_most(ran, "dynorm", "pydynox", what="per item"),
            measure.at_most(ran, "dynorm", "floor", MAX_X_FLOOR, what="per item"),
        ]
    return section
