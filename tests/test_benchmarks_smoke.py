"""The benchmark suite still runs: ``python -m benchmarks --quick`` on tiny inputs.

It runs in a subprocess, like ``make bench``: the benchmarks change process-wide state (PynamoDB's
credentials in the environment, tracemalloc, the peak RSS they read) and import peer clients that
neither this process nor mypy should have to load. The peers (the ``bench`` extra) are optional:
without one, its row says "skipped" and every other row still runs, so this test needs only what
``make test`` installs. With a peer installed, its row must have run.

The loopback benchmark server is not a DynamoDB server, so this is no ``integration`` test. It
checks that each benchmark completes and prints its rows, not the numbers (tiny inputs make them
meaningless).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Query page rows: the row name and the package its client needs.
QUERY_CLIENTS = {
    "floor": "aiohttp",
    "aiobotocore": "aiobotocore",
    "aiobotocore+deser": "boto3",
    "pynamodb": "pynamodb",
    "pynamodb-async": "pynamodb_async",
    "aiodynamo": "aiodynamo",
    "pydynox": "pydynox",
    "dynorm": "dynorm",
}
#: Rows of the put_all, GetItem and PutItem tables: the row name and the package its client needs.
WRITE_CLIENTS = {
    "floor": "aiohttp",
    "aiobotocore": "aiobotocore",
    "pynamodb": "pynamodb",
    "pynamodb-async": "pynamodb_async",
    "aiodynamo": "aiodynamo",
    "pydynox": "pydynox",
    "dynorm": "dynorm",
}
PUT_ALL_CLIENTS = {**WRITE_CLIENTS, "floor+encode": "aiohttp"}
REQUEST_CLIENTS = {**WRITE_CLIENTS, "floor-unsigned": "aiohttp"}
REQUEST_SECTIONS = ("GetItem per request", "PutItem per request")
SECTIONS = (
    *("Query page", "put_all", *REQUEST_SECTIONS),
    *("Lazy pagination", "Relationship load", "Coalesced gets", "Hot partition", "Sharded load"),
    *("Cold start", "AWS Lambda", "pytest plugin"),
)
#: Cold start rows: the library and the package it needs.
COLD_START_CLIENTS = {
    "dynorm": "dynorm",
    "aiodynamo": "aiodynamo",
    "pydynox": "pydynox",
    "pynamodb": "pynamodb",
    "aiobotocore": "aiobotocore",
}
#: AWS Lambda rows: the app and the packages it needs (the dev extra has mangum and fastapi).
LAMBDA_APPS = {
    "dynorm": ("mangum", "fastapi"),
    "boto3": ("mangum", "fastapi", "boto3"),
    "fastapi": ("mangum", "fastapi"),
}
NUMBER = re.compile(r"\d[\d,]*(\.\d+)?")
#: A ratio column: "1.23x", or "12.3x" from ten on.
RATIO = re.compile(r"\d+\.\d+x")


def installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


@pytest.fixture(scope="module")
def output() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def section(output: str, title: str) -> list[str]:
    """The lines of the section whose title starts with ``title`` (up to the blank line)."""
    blocks = [block.splitlines() for block in output.split("\n\n")]
    found = [lines for lines in blocks if lines and lines[0].startswith(title)]
    assert len(found) == 1, f"no single section {title!r} in:\n{output}"
    return found[0]


def row(lines: list[str], name: str) -> str:
    rows = [line for line in lines[2:] if line.split()[:1] == [name]]
    assert len(rows) == 1, f"no single row {name!r} in:\n" + "\n".join(lines)
    return rows[0]


def verdicts(lines: list[str]) -> list[str]:
    return [line.split()[0] for line in lines if line.startswith("    ")]


def test_prints_every_section_once(output: str) -> None:
    for title in SECTIONS:
        section(output, title)


@pytest.mark.parametrize(("name", "package"), QUERY_CLIENTS.items())
def test_query_page_row_per_client(output: str, name: str, package: str) -> None:
    line = row(section(output, "Query page"), name)
    if installed(package):
        assert "skipped" not in line
        assert len(RATIO.findall(line)) == 2, line  # x floor, x dynorm
    else:
        assert f"skipped: {package} is not installed" in line


def test_query_page_checks_dynorm_targets(output: str) -> None:
    lines = section(output, "Query page")
    assert len(verdicts(lines)) == 4
    assert set(verdicts(lines)) <= {"PASS", "FAIL", "SKIP"}
    peers_missing = not all(installed(p) for p in QUERY_CLIENTS.values())
    assert ("SKIP" in verdicts(lines)) == peers_missing


def assert_ran_or_skipped(line: str, package: str) -> None:
    """A row ran (with its x floor and x aiodynamo ratios) or says its package is missing."""
    if installed(package):
        assert "skipped" not in line
        ratios = 2 if installed("aiodynamo") else 1
        assert len(RATIO.findall(line)) == ratios, line
    else:
        assert f"skipped: {package} is not installed" in line


@pytest.mark.parametrize(("name", "package"), PUT_ALL_CLIENTS.items())
def test_put_all_row_per_client(output: str, name: str, package: str) -> None:
    assert_ran_or_skipped(row(section(output, "put_all"), name), package)


def test_put_all_checks_dynorm_targets(output: str) -> None:
    lines = section(output, "put_all")
    assert len(verdicts(lines)) == 3  # <= aiodynamo, <= pydynox, <= 3x the floor
    peers_missing = not all(installed(p) for p in ("aiodynamo", "pydynox"))
    assert ("SKIP" in verdicts(lines)) == peers_missing
    assert any(note.lstrip().startswith("moonshot: dynorm") for note in lines)


@pytest.mark.parametrize("title", REQUEST_SECTIONS)
@pytest.mark.parametrize(("name", "package"), REQUEST_CLIENTS.items())
def test_request_row_per_client(output: str, title: str, name: str, package: str) -> None:
    assert_ran_or_skipped(row(section(output, title), name), package)


@pytest.mark.parametrize("title", REQUEST_SECTIONS)
def test_request_checks_dynorm_targets(output: str, title: str) -> None:
    lines = section(output, title)
    # <= aiodynamo, <= pydynox; GetItem also the earlier overhead over raw aiobotocore
    assert len(verdicts(lines)) == (3 if title.startswith("GetItem") else 2)
    assert set(verdicts(lines)) <= {"PASS", "FAIL", "SKIP"}
    peers_missing = not all(installed(p) for p in ("aiodynamo", "pydynox"))
    assert ("SKIP" in verdicts(lines)) == peers_missing


def test_pagination_samples_memory_and_checks_peak(output: str) -> None:
    lines = section(output, "Lazy pagination")
    samples = [line for line in lines[2:] if NUMBER.fullmatch(line.split()[0])]
    assert samples, lines
    assert samples[-1].split()[0] == "300"  # --quick walks 300 children
    assert verdicts(lines)[0] in {"PASS", "FAIL"}


def test_latency_rows_count_requests(output: str) -> None:
    lines = section(output, "Relationship load")
    together, one_by_one = lines[2], lines[3]
    assert together.lstrip().startswith("await db.load(orders, Order.items)")
    assert one_by_one.lstrip().startswith("for each order")
    # --quick loads 5 parents: one Query each, either way
    assert together.split()[-3] == one_by_one.split()[-3] == "5"
    assert verdicts(lines)[0] in {"PASS", "FAIL"}


def test_coalesced_gets_rows_count_requests(output: str) -> None:
    lines = section(output, "Coalesced gets")
    # --quick: 250 concurrent gets, a GetItem each, or three BatchGetItem coalesced
    assert row(lines, "coalesce=False").split()[1] == "250"
    assert row(lines, "coalesce=True").split()[1] == "3"
    assert verdicts(lines) == ["PASS"]  # the request counts are exact, not timings


def test_hot_partition_row_per_shard_count(output: str) -> None:
    lines = section(output, "Hot partition")
    for shards in (1, 2, 4, 8, 16):
        cells = row(lines, f"shards={shards}").split()
        # accepted, writes/s, throttled, given up, x 1 shard
        assert int(cells[1]) > 0, cells
        assert all(NUMBER.fullmatch(c) for c in cells[2:5]), cells
        assert RATIO.fullmatch(cells[5]), cells
    assert verdicts(lines)[0] in {"PASS", "FAIL"}  # 8 shards >= 4x one: a timing


def test_sharded_load_rows_count_requests(output: str) -> None:
    lines = section(output, "Sharded load")
    # --quick: one Query unsharded; the post's GetItem and a Query a shard sharded
    assert row(lines, "unsharded").split()[1] == "1"
    assert row(lines, "shards=8").split()[1] == "9"
    assert row(lines, "shards=16").split()[1] == "17"
    count, round_trips = verdicts(lines)
    assert count == "PASS"  # the request counts are exact
    assert round_trips in {"PASS", "FAIL"}  # a timing: --quick's 2 ms delay is too short


@pytest.mark.parametrize(("name", "package"), COLD_START_CLIENTS.items())
def test_cold_start_row_per_library(output: str, name: str, package: str) -> None:
    line = row(section(output, "Cold start"), name)
    if installed(package):
        assert "skipped" not in line
        assert len(NUMBER.findall(line.split("get", 1)[1])) == 5, line  # ms, ms, ms, ms, MiB
    else:
        assert f"skipped: {package} is not installed" in line


def test_cold_start_checks_dynorm_targets(output: str) -> None:
    lines = section(output, "Cold start")
    row(lines, "aiohttp")  # import aiohttp alone: the floor the import target compares with
    # import <= 1.3x aiohttp, first item <= aiodynamo, max RSS <= 1.3x aiodynamo
    assert len(verdicts(lines)) == 3
    assert ("SKIP" in verdicts(lines)) == (not installed("aiodynamo"))


@pytest.mark.parametrize(("name", "packages"), LAMBDA_APPS.items())
def test_lambda_row_per_app(output: str, name: str, packages: tuple[str, ...]) -> None:
    line = row(section(output, "AWS Lambda"), name)
    missing = [p for p in packages if not installed(p)]
    if missing:
        assert f"skipped: {missing[0]} is not installed" in line
        return
    assert "skipped" not in line
    # app, what, then init, cold call, start → answer, warm call (ms), max RSS (MiB), and the
    # ratios to boto3 of start → answer and of a warm call ("-" without boto3)
    cells = re.split(r"\s{2,}", line.strip())
    assert len(cells) == 9, line
    assert all(NUMBER.fullmatch(cell) for cell in cells[2:7]), line
    ratios = cells[7:]
    assert all(RATIO.fullmatch(c) if installed("boto3") else c == "-" for c in ratios), line


def test_pytest_plugin_rows_and_checks(output: str) -> None:
    lines = section(output, "pytest plugin")
    for name in ("fixture", "plain"):
        # small s, large s, per test ms (a small suite's difference may be negative, and from
        # 100 on it is printed without decimals)
        assert len(re.findall(r"-?\d[\d,]*(?:\.\d+)?", row(lines, name))) == 3, lines
    row(lines, "no")  # "no plugin": the same small suite run with -p no:dynorm
    # dynorm_connect <= 20 ms a test; the plugin unused < 20 ms
    assert len(verdicts(lines)) == 2
    assert set(verdicts(lines)) <= {"PASS", "FAIL"}
