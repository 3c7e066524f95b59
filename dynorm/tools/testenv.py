"""The test fixtures' settings: which DynamoDB they use, read from the environment only.

Shared by the pytest plugin (``dynorm/tools/pytest_plugin.py``), which must stay cheap to load
in every pytest run, and by ``dynorm/tools/testing.py``: nothing here imports more than ``os``.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "DEFAULT_BACKEND",
    "ENDPOINT_ENV",
    "EXTERNAL",
    "FAST_PATH_ENV",
    "TEST_ACCESS_KEY_ID",
    "TEST_REGION",
    "TEST_SECRET_ACCESS_KEY",
    "XDIST_WORKER_ENV",
    "fast_path_selected",
    "selected_backend",
    "xdist_worker",
]

ENDPOINT_ENV: Final = "DYNORM_TEST_ENDPOINT_URL"
"""Use this already running endpoint instead of starting a server."""
BACKEND_ENV: Final = "DYNORM_TEST_BACKEND"
"""Which embedded server to start: ``moto`` (default) or ``dynalite``."""
FAST_PATH_ENV: Final = "DYNORM_TEST_FAST_PATH"
"""``0`` connects with ``fast_path=False`` (botocore builds, signs and parses every request)."""
XDIST_WORKER_ENV: Final = "PYTEST_XDIST_WORKER"
"""Set by pytest-xdist in each worker process (``gw0``, ``gw1`` …)."""
BACKENDS: Final = ("moto", "dynalite")
"""The embedded servers ``start_server`` runs (``dynorm/tools/servers.py``)."""
DEFAULT_BACKEND: Final = "moto"
EXTERNAL: Final = "external"

# Fixed fake credentials and region: local servers accept anything, and fixed values keep a
# developer's real AWS configuration (env vars, ~/.aws) from ever being picked up by tests.
TEST_REGION: Final = "us-east-1"
TEST_ACCESS_KEY_ID: Final = "testing"
TEST_SECRET_ACCESS_KEY: Final = "testing"  # noqa: S105  (not a secret: local servers only)


def fast_path_selected() -> bool:
    """Whether the fixtures connect with the fast request path (``DYNORM_TEST_FAST_PATH``)."""
    return os.environ.get(FAST_PATH_ENV, "1") != "0"


def selected_backend() -> str:
    """The backend the fixtures will use, from the environment (no server is started)."""
    if os.environ.get(ENDPOINT_ENV):
        return EXTERNAL
    return os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND


def xdist_worker() -> str | None:
    """The pytest-xdist worker this process is (``gw0`` …), or None outside xdist."""
    return os.environ.get(XDIST_WORKER_ENV) or None
