"""``make demo``'s tour runs, shows ``dynorm design`` for each data set, and costs what it says."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .cli import ROOT, Cli

# The tour writes with TransactWriteItems (seed 003), which dynalite lacks.
pytestmark = [pytest.mark.integration, pytest.mark.transactions]

#: A summary line: "  2 requests  004.2 Get the order and its items (1 Query)".
SUMMARY = re.compile(r"^  (\d+) requests? +(.*)$")
OPERATIONS = ("GetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem", "BatchGetItem")


def stated(title: str) -> int | None:
    """The request count a step's title states in its last parentheses, if it states one."""
    found = re.search(r"\(([^()]*(?:\([^()]*\))?[^()]*)\)$", title)
    if found is None:
        return None
    text = found.group(1)
    if (count := re.match(r"(\d+) ", text)) is not None:
        return int(count.group(1))
    return 1 if text.startswith(OPERATIONS) else None


def test_the_tour_shows_each_design_and_every_step_costs_what_its_title_says(cli: Cli) -> None:
    done = subprocess.run(
        [sys.executable, "examples/tour.py"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=cli.environment(ROOT),
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Running on {cli.server.url} (DYNORM_ENDPOINT_URL)")
    assert done.stdout.count("\n$ dynorm design examples/") == 6
    steps = [SUMMARY.match(line) for line in done.stdout.split("\nSummary\n")[1].splitlines()]
    checked = [(int(m.group(1)), stated(m.group(2)), m.group(2)) for m in steps if m]
    assert len(checked) >= 35
    wrong = [title for sent, said, title in checked if said is not None and sent != said]
    assert wrong == []
    assert sum(said is not None for _, said, _ in checked) >= 25
