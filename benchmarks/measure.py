"""Run clients interleaved round-robin and keep the process CPU time of every run.

Each repeat runs every client once, starting one client later than the repeat before, so slow
drifts of the machine (frequency scaling, a noisy neighbour) spread evenly over the clients and
cancel in their ratios. Every client runs once untimed first (connections, lazy imports, caches),
and the garbage of the previous run is collected before each timed one.

The garbage collector stays on during timed runs by default: the collections a client's
allocations trigger are part of its cost. How much they cost depends on the whole process's heap,
so ``collect=False`` (``--no-gc``) turns the collector off while a client runs, to see its own
code alone.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchmarks import clients
from benchmarks.clients import Client, Entry
from benchmarks.report import Check, number, ratio


@dataclass
class Result:
    """One client's runs: units produced (items, requests) and CPU and wall seconds per run."""

    entry: Entry
    skipped: str | None = None
    units: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def cpu_per_unit(self) -> float:
        """Median process CPU seconds per unit."""
        return statistics.median(c / u for c, u in zip(self.cpu, self.units, strict=True))

    @property
    def wall_per_run(self) -> float:
        """Median wall seconds per run."""
        return statistics.median(self.wall)

    @property
    def units_per_run(self) -> int:
        return self.units[0]

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-unit CPU times: how noisy the repeats were."""
        per_unit = [c / u for c, u in zip(self.cpu, self.units, strict=True)]
        return (max(per_unit) - min(per_unit)) / statistics.median(per_unit)


async def interleaved(
    entries: Sequence[Entry],
    url: str,
    *,
    repeats: int,
    kind: str = "QueryClient",
    collect: bool = True,
    **options: int,
) -> list[Result]:
    """Set every available client up against ``url``, run them ``repeats`` times, tear down."""
    results = []
    running: list[tuple[Result, Client]] = []
    for entry in entries:
        client = clients.load(entry, kind, **options)
        if isinstance(client, str):
            results.append(Result(entry, skipped=client))
            continue
        result = Result(entry)
        results.append(result)
        running.append((result, client))
    ready: list[Client] = []
    try:
        for _, client in running:
            await client.setup(url)
            ready.append(client)
        for _, client in running:
            await client.run_once()
        for repeat in range(repeats):
            shift = repeat % len(running) if running else 0
            for result, client in running[shift:] + running[:shift]:
                gc.collect()
                if not collect:
                    gc.disable()
                try:
                    wall, cpu = time.perf_counter(), time.process_time()
                    units = await client.run_once()
                    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                finally:
                    gc.enable()
                result.units.append(units)
                result.cpu.append(cpu)
                result.wall.append(wall)
    finally:
        for client in ready:
            await client.teardown()
    return results


def by_name(results: Sequence[Result]) -> dict[str, Result]:
    """The results that ran, by row name."""
    return {r.name: r for r in results if r.skipped is None}


def at_most(
    ran: dict[str, Result], name: str, peer: str, factor: float = 1.0, *, what: str = "per unit"
) -> Check:
    """Check ``name``'s CPU per unit is at most ``factor`` times ``peer``'s (SKIP if either is
    missing)."""
    bound = f"{factor:g}x {peer}" if factor != 1 else peer
    target = f"{name} <= {bound} {what}"
    mine, theirs = ran.get(name), ran.get(peer)
    if mine is None or theirs is None:
        missing = name if mine is None else peer
        return Check(None, target, f"{missing} did not run")
    value = mine.cpu_per_unit / theirs.cpu_per_unit
    return Check(value <= factor, target, f"{ratio(value)} {peer}")


def spread_note() -> str:
    """The note under every timed table: what its CPU and spread columns mean."""
    return (
        "CPU: time.process_time() of this process (the server runs in another), median of the "
        "repeats; spread: (max - min) / median; gc.collect() before each run"
    )


def per_unit_cells(result: Result) -> list[str]:
    """CPU microseconds per unit, CPU milliseconds and wall milliseconds per run."""
    per_unit = result.cpu_per_unit
    return [
        number(per_unit * 1e6),
        number(per_unit * result.units_per_run * 1e3),
        number(result.wall_per_run * 1e3),
    ]


def cpu_row(
    result: Result,
    cells: Callable[[Result], list[str]],
    *,
    floor: Result | None,
    reference: Result | None,
) -> list[str]:
    """A client's table row: name, label, ``cells(result)``, spread, then its CPU per unit as a
    multiple of ``floor``'s and ``reference``'s ("-" where that one did not run).

    A client that did not run gets its name and why.
    """
    if result.skipped is not None:
        return [result.name, result.skipped]
    mine = result.cpu_per_unit
    return [
        result.name,
        result.entry.label,
        *cells(result),
        f"{result.spread:.0%}",
        ratio(mine / floor.cpu_per_unit) if floor else "-",
        ratio(mine / reference.cpu_per_unit) if reference else "-",
    ]


def moonshot_note(ran: dict[str, Result], goal: float, floor: str = "the floor") -> list[str]:
    """The note on dynorm's distance from the floor and the moonshot ``goal`` (none if either
    did not run); ``floor`` names the floor in the note."""
    dynorm, base = ran.get("dynorm"), ran.get("floor")
    if dynorm is None or base is None:
        return []
    value = dynorm.cpu_per_unit / base.cpu_per_unit
    return [f"moonshot: dynorm {ratio(value)} {floor} (goal <= {goal:g}x)"]
