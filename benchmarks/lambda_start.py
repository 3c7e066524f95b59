"""AWS Lambda: a FastAPI app through Mangum, started in a fresh process and invoked, on the
embedded moto server (``benchmarks/lambda_child.py`` is one execution environment).

Each app serves ``GET /orgs/{name}``: examples/lambda_app.py on dynorm, the same endpoint on
boto3 (the peer: AWS's own SDK, a client created at import), and the same FastAPI app with no
database (the web stack alone). The table is created and seeded here, on moto's server in this
process, before any child starts. Runs are interleaved (one process of each app per round) and
each number is the median of the rounds (warm invocations: of every warm call of every round).
The parent takes the time from just before it starts a process to the child's
``time.time_ns()`` once its first invocation answered: the interpreter's start, the init (the
import, which builds the app) and the cold invocation, what the first client of a new execution
environment waits for beyond Lambda's own start. The children read their settings from the
environment, as on Lambda (credentials in environment variables: dynorm's lean request path), and
write and read compiled bytecode in a temporary cache, filled by a first, untimed round.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchmarks.report import Section, number, ratio

CHILD = Path(__file__).with_name("lambda_child.py")
ROOT = CHILD.parent.parent
#: The apps, and the packages each needs beyond the standard library.
APPS = {
    "dynorm": ("mangum", "fastapi"),
    "boto3": ("mangum", "fastapi", "boto3"),
    "fastapi": ("mangum", "fastapi"),
}
WHAT = {
    "dynorm": "examples/lambda_app.py: 1 Query",
    "boto3": "boto3 client: the same Query",
    "fastapi": "no database: a fixed answer",
}
PEER = "boto3"
HEADER = (
    "app",
    "what",
    "init ms",
    "cold call ms",
    "start → answer ms",
    "warm call ms",
    "max RSS MiB",
    "start x boto3",
    "warm x boto3",
)
#: Any credentials: the embedded server takes them all.
KEYS = {"access": "bench", "secret": "bench-secret", "region": "us-east-1"}
#: The organization the endpoint reads, and its users (the endpoint loads up to 10).
USERS = 3


@dataclass(frozen=True)
class Run:
    """One execution environment: init, cold invocation, start → answer, warm calls, RSS."""

    init_ms: float
    first_ms: float
    answer_ms: float
    warm_ms: list[float]
    rss_mib: float


def _environment(cache: str, endpoint: str, table_name: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "PYTHONPYCACHEPREFIX": cache,
        "HOME": cache,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        # What Lambda sets: the role's credentials and the region.
        "AWS_ACCESS_KEY_ID": KEYS["access"],
        "AWS_SECRET_ACCESS_KEY": KEYS["secret"],
        "AWS_SESSION_TOKEN": "bench-token",
        "AWS_REGION": KEYS["region"],
        "AWS_DEFAULT_REGION": KEYS["region"],
        "DYNORM_ENDPOINT_URL": endpoint,
        "DYNORM_TABLE_NAME": table_name,
    }


def _spawn(app: str, warm: int, env: dict[str, str]) -> Run:
    started = time.time_ns()
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(CHILD), app, str(warm)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the Lambda start of {app} failed:\n{done.stderr}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(
        init_ms=said["init_ms"],
        first_ms=said["first_ms"],
        answer_ms=(said["first_ns"] - started) / 1e6,
        warm_ms=said["warm_ms"],
        rss_mib=said["rss_kib"] / 1024,
    )


def _median(runs: list[Run]) -> Run:
    return Run(
        init_ms=statistics.median(r.init_ms for r in runs),
        first_ms=statistics.median(r.first_ms for r in runs),
        answer_ms=statistics.median(r.answer_ms for r in runs),
        warm_ms=[statistics.median(ms for r in runs for ms in r.warm_ms)],
        rss_mib=statistics.median(r.rss_mib for r in runs),
    )


async def _seed(endpoint: str, table_name: str) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from seed_001_tickets import Org, User, table  # noqa: PLC0415 - the example's models

    from dynorm import connect  # noqa: PLC0415

    async with connect(
        table,
        table_name=table_name,
        endpoint_url=endpoint,
        region_name=KEYS["region"],
        aws_access_key_id=KEYS["access"],
        aws_secret_access_key=KEYS["secret"],
    ) as db:
        await db.create_table()
        users = [User("MICROSOFT", f"USER{n}") for n in range(USERS)]
        await db.put_all([Org("MICROSOFT", "Enterprise"), *users])


def measure(runs: int, warm: int, apps: list[str]) -> dict[str, Run]:
    """Median of ``runs`` interleaved rounds of every app, on a fresh moto server."""
    from dynorm.testing import start_server  # noqa: PLC0415

    server = start_server("moto")
    try:
        table_name = f"tickets-lambda-{uuid.uuid4().hex[:6]}"
        asyncio.run(_seed(server.url, table_name))
        with tempfile.TemporaryDirectory(prefix="dynorm-lambda-") as cache:
            env = _environment(cache, server.url, table_name)
            for app in apps if runs > 1 else ():  # untimed: fills the bytecode cache
                _spawn(app, 1, env)
            rounds: dict[str, list[Run]] = {app: [] for app in apps}
            for _ in range(runs):
                for app in apps:
                    rounds[app].append(_spawn(app, warm, env))
    finally:
        server.stop()
    return {app: _median(found) for app, found in rounds.items()}


def _installed(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


def run(*, runs: int, warm: int) -> Section:
    missing = {app: [p for p in needs if not _installed(p)] for app, needs in APPS.items()}
    apps = [app for app in APPS if not missing[app]]
    found = measure(runs, warm, apps) if apps else {}
    section = Section(
        f"AWS Lambda: FastAPI through Mangum on the embedded moto server, a fresh process "
        f"per run, median of {runs} interleaved runs ({warm} warm calls each)",
        HEADER,
    )
    peer = found.get(PEER)
    for app in APPS:
        if app not in found:
            section.rows.append((app, f"skipped: {missing[app][0]} is not installed"))
            continue
        got = found[app]
        section.rows.append(
            (
                app,
                WHAT[app],
                number(got.init_ms),
                number(got.first_ms),
                number(got.answer_ms),
                number(got.warm_ms[0]),
                number(got.rss_mib),
                "-" if peer is None else ratio(got.answer_ms / peer.answer_ms),
                "-" if peer is None else ratio(got.warm_ms[0] / peer.warm_ms[0]),
            )
        )
    section.notes += [
        "init ms: importing the function's module (the app and its handler built);",
        "cold call ms: its first invocation (dynorm opens its Database here);",
        "start → answer ms: process start to the first answer; warm call ms: a later invocation",
    ]
    return section
