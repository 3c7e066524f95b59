"""Per-request overhead: GetItem requests per second of client CPU, dynorm vs raw aiobotocore."""

from __future__ import annotations

from benchmarks import clients, measure, server
from benchmarks.report import Check, Section, number

#: The issue's target: dynorm's CPU per GetItem at most this much above aiobotocore's.
MAX_OVERHEAD = 0.10


async def run(*, batch: int, repeats: int, collect: bool = True) -> Section:
    with server.running(items=1) as url:
        results = await measure.interleaved(
            clients.GET_ITEM,
            url,
            repeats=repeats,
            kind="GetItemClient",
            collect=collect,
            batch=batch,
        )
    section = Section(
        f"GetItem per-request overhead: {batch} sequential GetItem a run, {repeats} repeats"
        f"{'' if collect else ', garbage collector off'}",
        ["client", "what it does", "req / CPU s", "CPU us/req", "wall us/req", "spread"],
    )
    for result in results:
        if result.skipped is not None:
            section.rows.append([result.name, result.skipped])
            continue
        per_request = result.cpu_per_unit
        section.rows.append(
            [
                result.name,
                result.entry.label,
                number(1 / per_request),
                number(per_request * 1e6),
                number(result.wall_per_run / result.units_per_run * 1e6),
                f"{result.spread:.0%}",
            ]
        )
    ran = {r.name: r for r in results if r.skipped is None}
    raw, dynorm = ran.get("aiobotocore"), ran.get("dynorm")
    if raw is not None and dynorm is not None:
        overhead = dynorm.cpu_per_unit / raw.cpu_per_unit - 1
        section.checks.append(
            Check(
                overhead <= MAX_OVERHEAD,
                f"dynorm adds <= {MAX_OVERHEAD:.0%} CPU per GetItem to aiobotocore",
                f"{overhead:+.1%}",
            )
        )
    return section
