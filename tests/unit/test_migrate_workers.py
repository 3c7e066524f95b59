"""The pure parts of a migration run by several workers: its id and the checks of its numbers."""

from __future__ import annotations

import pytest

from dynorm.migrations import DEFAULT_LEASE, MigrationError, Workers, progress_table_name
from dynorm.tools.migrate_workers import migration_id

FINGERPRINT: dict[str, object] = {
    "endpoint": "http://a:8000",
    "region": "eu-west-1",
    "table": "app",
    "kind": "move",
    "to": "Shelf.jars",
    "segments": 4,
}


def test_workers_reaching_the_table_through_other_endpoints_share_the_migration() -> None:
    elsewhere = {**FINGERPRINT, "endpoint": "https://vpce-1.example.com"}

    assert migration_id(FINGERPRINT) == migration_id(elsewhere)
    assert migration_id(FINGERPRINT).startswith("app:move:Shelf.jars:")


@pytest.mark.parametrize(("field", "other"), [("segments", 3), ("table", "b"), ("to", "X.y")])
def test_another_migration_has_another_id(field: str, other: object) -> None:
    assert migration_id(FINGERPRINT) != migration_id({**FINGERPRINT, field: other})


def test_the_default_progress_table_is_named_after_the_table() -> None:
    assert progress_table_name("app") == "app.dynorm-progress"
    assert Workers(segments=2).lease == DEFAULT_LEASE
    assert Workers(segments=2).worker != Workers(segments=2).worker  # one name a process


@pytest.mark.parametrize(
    ("workers", "message"),
    [
        (Workers(segments=0), "segments must be a positive int; got 0"),
        (Workers(segments=3, segment=3), "segment must be an int from 0 to 2 (segments=3); got 3"),
        (Workers(segments=3, segment=-1), "from 0 to 2"),
        (Workers(segments=2, lease=0), "lease must be more than 0 seconds"),
        (Workers(segments=2, lease=True), "lease must be a number of seconds"),
        (Workers(segments=2, worker=""), "worker must be a non-empty name"),
    ],
)
def test_numbers_that_do_not_fit_are_refused_with_what_to_change(
    workers: Workers, message: str
) -> None:
    with pytest.raises(MigrationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        workers.check()
