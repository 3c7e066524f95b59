"""Per-request overhead: sequential GetItem and PutItem, client CPU per request, every client.

The floor signs (SigV4, like every client must); ``floor-unsigned`` shows what signing costs.
GetItem reads the order (8 attributes); PutItem writes order item 1 (the richer item put_all
writes, with a list and a nested map).
"""

from __future__ import annotations

from typing import Final

from benchmarks import clients, measure, server
from benchmarks.clients import Entry
from benchmarks.report import Check, Section, number

#: An earlier issue's target: dynorm's CPU per GetItem at most this much above aiobotocore's.
MAX_OVERHEAD = 0.10
#: Issue 10's moonshot: dynorm within this many times the signed floor per request.
MOONSHOT_X_FLOOR: Final = 1.5

OPERATIONS: Final[dict[str, tuple[tuple[Entry, ...], str]]] = {
    "GetItem": (clients.GET_ITEM, "GetItemClient"),
    "PutItem": (clients.PUT_ITEM, "PutItemClient"),
}
HEADER: Final = (
    "client",
    "what it does",
    "req / CPU s",
    "CPU us/req",
    "wall us/req",
    "spread",
    "x floor",
    "x aiodynamo",
)


def _per_request_cells(result: measure.Result) -> list[str]:
    """Requests per CPU second, CPU and wall microseconds per request."""
    per_request = result.cpu_per_unit
    return [
        number(1 / per_request),
        number(per_request * 1e6),
        number(result.wall_per_run / result.units_per_run * 1e6),
    ]


async def run(operation: str, *, batch: int, repeats: int, collect: bool = True) -> Section:
    """Time ``batch`` sequential ``operation`` requests per run for every client."""
    entries, kind = OPERATIONS[operation]
    with server.running(items=1) as url:
        results = await measure.interleaved(
            entries, url, repeats=repeats, kind=kind, collect=collect, batch=batch
        )
    ran = measure.by_name(results)
    floor, aiodynamo = ran.get("floor"), ran.get("aiodynamo")
    section = Section(
        f"{operation} per request: {batch} sequential requests a run, {repeats} repeats"
        f"{'' if collect else ', garbage collector off'}; the floor signs (SigV4)",
        HEADER,
    )
    section.rows += [
        measure.cpu_row(r, _per_request_cells, floor=floor, reference=aiodynamo) for r in results
    ]
    section.notes += [
        measure.spread_note(),
        *measure.moonshot_note(ran, MOONSHOT_X_FLOOR, "the signed floor"),
    ]
    dynorm = ran.get("dynorm")
    if dynorm is not None:
        section.checks += [
            measure.at_most(ran, "dynorm", "aiodynamo", what="per request"),
            measure.at_most(ran, "dynorm", "pydynox", what="per request"),
        ]
        raw = ran.get("aiobotocore")
        if operation == "GetItem" and raw is not None:
            overhead = dynorm.cpu_per_unit / raw.cpu_per_unit - 1
            section.checks.append(
                Check(
                    overhead <= MAX_OVERHEAD,
                    f"dynorm adds <= {MAX_OVERHEAD:.0%} CPU per GetItem to aiobotocore",
                    f"{overhead:+.1%}",
                )
            )
    return section
