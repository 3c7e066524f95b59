"""Cold start: fresh processes, each importing one library, or importing it, declaring 20 models,
connecting to the loopback server and getting one item (``benchmarks/coldstart_child.py``).

Runs are interleaved (one process of each kind per round) and each number is the median of the
rounds. The parent takes the time from just before it starts a process: to the child's
``time.time_ns()`` once its item is decoded (start → first item), and to the child's exit (the
whole process, the interpreter's start and exit included); the peak RSS is the child's own
(``VmHWM`` on Linux: ``ru_maxrss`` would carry this process's size across ``exec``). Children
write and read compiled bytecode in a temporary cache (a first, untimed round fills it), as an
installed package has its ``.pyc`` files, whatever ``PYTHONDONTWRITEBYTECODE`` says here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import server
from benchmarks.report import Check, Section, number, ratio

#: The issue's targets.
MAX_IMPORT_X_AIOHTTP = 1.3
MAX_ITEM_X_AIODYNAMO = 1.0
MAX_RSS_X_AIODYNAMO = 1.3

CHILD = Path(__file__).with_name("coldstart_child.py")
ROOT = CHILD.parent.parent
#: The libraries timed end to end, and the modules their end-to-end run imports (what an
#: application imports to use them), also timed alone; ``import aiohttp`` is timed alone too,
#: the floor of any aiohttp-based client.
LIBRARIES = {
    # `from dynorm import Table, connect`: `import dynorm` alone imports its names on first use.
    "dynorm": "dynorm.mapping.table,dynorm.io.database",
    "aiodynamo": "aiodynamo.client,aiodynamo.http.aiohttp",
    "pydynox": "pydynox",
    "pynamodb": "pynamodb.models",
    "aiobotocore": "aiobotocore.session",
}
IMPORTS = ("aiohttp", *LIBRARIES.values())

HEADER = (
    "library",
    "what",
    "import ms",
    "import alone ms",
    "start → item ms",
    "process ms",
    "max RSS MiB",
)


@dataclass(frozen=True)
class Run:
    """One child process: its import time, start → first item, whole process, peak RSS."""

    import_ms: float
    item_ms: float
    process_ms: float
    rss_mib: float


def _environment(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) if not path else os.pathsep.join([str(ROOT), path])
    return env


def _spawn(what: str, url: str, env: dict[str, str]) -> Run:
    started = time.time_ns()
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(CHILD), what, url],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    ended = time.time_ns()
    if done.returncode != 0:
        raise RuntimeError(f"cold start of {what} failed:\n{done.stderr}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(
        import_ms=said["import_ms"],
        item_ms=(said["first_item_ns"] - started) / 1e6,
        process_ms=(ended - started) / 1e6,
        rss_mib=said["rss_kib"] / 1024,
    )


def _median(runs: list[Run]) -> Run:
    return Run(
        import_ms=statistics.median(r.import_ms for r in runs),
        item_ms=statistics.median(r.item_ms for r in runs),
        process_ms=statistics.median(r.process_ms for r in runs),
        rss_mib=statistics.median(r.rss_mib for r in runs),
    )


def measure(url: str, runs: int, kinds: list[str]) -> dict[str, Run]:
    """Median of ``runs`` interleaved rounds of every kind (``import:<module>`` or a library)."""
    with tempfile.TemporaryDirectory(prefix="dynorm-coldstart-") as cache:
        env = _environment(cache)
        for kind in kinds if runs > 1 else ():  # untimed: fills the bytecode cache
            _spawn(kind, url, env)
        rounds: dict[str, list[Run]] = {kind: [] for kind in kinds}
        for _ in range(runs):
            for kind in kinds:
                rounds[kind].append(_spawn(kind, url, env))
    return {kind: _median(found) for kind, found in rounds.items()}


def _installed(modules: str) -> bool:
    return importlib.util.find_spec(modules.split(".", maxsplit=1)[0]) is not None


def run(*, runs: int) -> Section:
    imports = [module for module in IMPORTS if _installed(module)]
    libraries = [name for name, package in LIBRARIES.items() if _installed(package)]
    kinds = [f"import:{module}" for module in imports] + libraries
    with server.running(items=1) as url:
        found = measure(url, runs, kinds)
    section = Section(
        f"Cold start: fresh processes, import + 20 models + connect + one GetItem, "
        f"median of {runs} interleaved runs",
        HEADER,
    )
    alone = {module: found[f"import:{module}"].import_ms for module in imports}
    if "aiohttp" in alone:
        section.rows.append(
            ("aiohttp", "import aiohttp alone", "-", number(alone["aiohttp"]), "-", "-", "-")
        )
    for name, package in LIBRARIES.items():
        if name not in found:
            missing = package.split(".")[0]
            section.rows.append((name, f"skipped: {missing} is not installed"))
            continue
        got = found[name]
        section.rows.append(
            (
                name,
                "import, declare, connect, get",
                number(got.import_ms),
                number(alone[package]),
                number(got.item_ms),
                number(got.process_ms),
                number(got.rss_mib),
            )
        )
    section.notes.append(
        "import ms: in the end-to-end run; import alone ms: a process that only imports"
    )
    section.checks += _checks(found, alone)
    return section


def _checks(found: dict[str, Run], alone: dict[str, float]) -> list[Check]:
    missing = "the peer did not run"
    dynorm, aiodynamo = found.get("dynorm"), found.get("aiodynamo")
    aiohttp = alone.get("aiohttp")
    if dynorm is None:
        return []
    mine = alone[LIBRARIES["dynorm"]]
    return [
        Check(
            None if aiohttp is None else mine <= MAX_IMPORT_X_AIOHTTP * aiohttp,
            f"import dynorm <= {MAX_IMPORT_X_AIOHTTP:g}x import aiohttp",
            missing if aiohttp is None else f"{ratio(mine / aiohttp)} aiohttp",
        ),
        Check(
            None
            if aiodynamo is None
            else dynorm.item_ms <= MAX_ITEM_X_AIODYNAMO * aiodynamo.item_ms,
            "process start → first item <= aiodynamo's",
            missing
            if aiodynamo is None
            else f"{ratio(dynorm.item_ms / aiodynamo.item_ms)} aiodynamo",
        ),
        Check(
            None
            if aiodynamo is None
            else dynorm.rss_mib <= MAX_RSS_X_AIODYNAMO * aiodynamo.rss_mib,
            f"max RSS <= {MAX_RSS_X_AIODYNAMO:g}x aiodynamo's",
            missing
            if aiodynamo is None
            else f"{ratio(dynorm.rss_mib / aiodynamo.rss_mib)} aiodynamo",
        ),
    ]
