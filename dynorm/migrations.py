"""Moving live data when a relationship's strategy changes (see docs/migrations.md).

The implementation lives in ``dynorm/tools/migrations.py``; this module is its public name.
"""

from .tools.migrations import (
    CHECKPOINT_VERSION,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    MAX_PROBLEMS,
    CheckpointError,
    MigrationError,
    MigrationKind,
    MigrationProgress,
    MigrationReport,
    ProgressCallback,
    Verification,
    backfill_index,
    migrate,
    repair_copies,
)

__all__ = [
    "CHECKPOINT_VERSION",
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "MAX_PROBLEMS",
    "CheckpointError",
    "MigrationError",
    "MigrationKind",
    "MigrationProgress",
    "MigrationReport",
    "ProgressCallback",
    "Verification",
    "backfill_index",
    "migrate",
    "repair_copies",
]
