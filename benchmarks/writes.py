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
from benchmarks.report import Section

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
    section.rows += [
        measure.cpu_row(r, measure.per_unit_cells, floor=floor, reference=aiodynamo)
        for r in results
    ]
    section.notes += [measure.spread_note(), *measure.moonshot_note(ran, MOONSHOT_X_FLOOR)]
    dynorm = ran.get("dynorm")
    if dynorm is not None:
        section.checks += [
            measure.at_most(ran, "dynorm", "aiodynamo", what="per item"),
            measure.at_most(ran, "dynorm", "pydynox", what="per item"),
            measure.at_most(ran, "dynorm", "floor", MAX_X_FLOOR, what="per item"),
        ]
    return section
