"""The pytest plugin in a user's project: what a test taking ``dynorm_connect`` costs, and what
the plugin adds to a run that uses none of its fixtures.

A temporary project holds one test module whose size and kind come from the environment:
``N`` tests that each connect with ``dynorm_connect`` (a fresh table: CreateTable on entry,
DeleteTable on exit, on the embedded moto server the plugin starts), or ``N`` tests that take
nothing. Each suite runs in a fresh ``pytest`` process, as a user runs it, at two sizes; rounds
are interleaved and each time is the median of the rounds. A fixture test's cost is the
difference of the two sizes' run times over the difference of their test counts, so pytest's
start, collection and the server's start cancel out, less the same for tests that take nothing.
The plugin's cost in a project that does not use it is what loading it costs: importing the
plugin module (its hooks only read environment variables) in a fresh process that has imported
pytest, the median of one process a round. A suite's run time with and without ``-p no:dynorm``
is shown too, but two pytest processes differ by more than that from run to run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import Check, Section, number

#: The issue's targets (milliseconds).
MAX_FIXTURE_MS = 20.0
MAX_UNUSED_PLUGIN_MS = 20.0

ROOT = Path(__file__).resolve().parent.parent

_INI = """\
[pytest]
asyncio_mode = auto
"""

_TESTS = """\
import os

import pytest

import dynorm

table = dynorm.Table("notes", pk="pk", sk="sk")


@table.model(pk="NOTE#{id}", sk="NOTE#{id}")
class Note:
    id: str
    text: str = ""


N = int(os.environ["BENCH_TESTS"])

if os.environ["BENCH_KIND"] == "fixture":

    @pytest.mark.parametrize("n", range(N))
    async def test_note(dynorm_connect, n):
        async with dynorm_connect(table) as db:
            assert db.connected_tables()

else:

    @pytest.mark.parametrize("n", range(N))
    async def test_note(n):
        assert n >= 0
"""

HEADER = ("suite", "what", "small s", "large s", "per test ms")


def _environment(cache: str) -> dict[str, str]:
    # The user's own settings: none of this project's test switches, bytecode cached.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DYNORM_TEST_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPYCACHEPREFIX"] = cache
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(ROOT) if not path else os.pathsep.join([str(ROOT), path])
    return env


def _pytest(project: Path, env: dict[str, str], kind: str, tests: int, *extra: str) -> float:
    """Seconds one ``pytest`` process takes to run ``tests`` tests of ``kind``."""
    started = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(project)],
        cwd=project,
        env={**env, "BENCH_KIND": kind, "BENCH_TESTS": str(tests)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} suite of {tests} tests failed:\n{done.stdout[-3000:]}")
    return took


_PLUGIN_IMPORT = (
    "import time, pytest; started = time.perf_counter(); import dynorm.tools.pytest_plugin; "
    "print(time.perf_counter() - started)"
)


def _plugin_import(env: dict[str, str]) -> float:
    """Seconds a fresh process that has imported pytest takes to import the plugin."""
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", _PLUGIN_IMPORT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(done.stdout.strip())


def run(*, small: int, large: int, rounds: int) -> Section:
    runs = {
        ("fixture", small): (),
        ("fixture", large): (),
        ("plain", small): (),
        ("plain", large): (),
        ("unused", small): ("-p", "no:dynorm"),
    }
    times: dict[tuple[str, int], list[float]] = {key: [] for key in runs}
    with tempfile.TemporaryDirectory(prefix="dynorm-fixture-") as scratch:
        project = Path(scratch, "project")
        project.mkdir()
        (project / "pytest.ini").write_text(_INI)
        (project / "test_notes.py").write_text(_TESTS)
        env = _environment(str(Path(scratch, "pycache")))
        _pytest(project, env, "fixture", 1)  # untimed: fills the bytecode cache
        imports = []
        for _ in range(rounds):
            for (kind, tests), extra in runs.items():
                kind_run = "plain" if kind == "unused" else kind
                times[kind, tests].append(_pytest(project, env, kind_run, tests, *extra))
            imports.append(_plugin_import(env))
    median = {key: statistics.median(found) for key, found in times.items()}

    def per_test(kind: str) -> float:
        return (median[kind, large] - median[kind, small]) / (large - small) * 1e3

    fixture_ms = per_test("fixture") - per_test("plain")
    unused_ms = statistics.median(imports) * 1e3
    section = Section(
        f"pytest plugin: a user's suite of {small} and {large} tests, fresh pytest processes, "
        f"median of {rounds} interleaved rounds",
        HEADER,
    )
    for kind, what in (
        ("fixture", "each test takes dynorm_connect"),
        ("plain", "tests that take nothing"),
    ):
        section.rows.append(
            (
                kind,
                what,
                f"{median[kind, small]:.2f}",
                f"{median[kind, large]:.2f}",
                number(per_test(kind)),
            )
        )
    section.rows.append(
        (
            "no plugin",
            "-p no:dynorm, tests that take nothing",
            f"{median['unused', small]:.2f}",
            "-",
            "-",
        )
    )
    section.notes.append(
        "per test ms: (large - small) / (tests added); the fixture's own cost is the fixture "
        "row's less the plain row's"
    )
    section.notes.append(
        f"loading the plugin (importing it after pytest, fresh processes): {number(unused_ms)} ms"
    )
    section.checks += [
        Check(
            fixture_ms <= MAX_FIXTURE_MS,
            f"dynorm_connect <= {MAX_FIXTURE_MS:g} ms a test",
            f"{number(fixture_ms)} ms",
        ),
        Check(
            unused_ms < MAX_UNUSED_PLUGIN_MS,
            f"the plugin in a project that does not use it < {MAX_UNUSED_PLUGIN_MS:g} ms",
            f"{number(unused_ms)} ms",
        ),
    ]
    return section
