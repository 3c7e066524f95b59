"""pytest plugin: a DynamoDB server per test session and a fresh table per test.

Installed as the ``dynorm`` pytest plugin (an entry point), so its fixtures and hooks are
registered from this module.

The implementation lives in ``dynorm/tools/testing.py``; this module is its public name.
"""

from .tools.testing import (
    BACKEND_ENV,
    ENDPOINT_ENV,
    FAST_PATH_ENV,
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RequestLog,
    RunningServer,
    count_requests,
    dynorm_backend,
    dynorm_connect,
    dynorm_server,
    fast_path_selected,
    fresh_table,
    start_server,
)

__all__ = [
    "BACKEND_ENV",
    "ENDPOINT_ENV",
    "FAST_PATH_ENV",
    "TEST_ACCESS_KEY_ID",
    "TEST_REGION",
    "TEST_SECRET_ACCESS_KEY",
    "Connect",
    "RequestLog",
    "RunningServer",
    "count_requests",
    "dynorm_backend",
    "dynorm_connect",
    "dynorm_server",
    "fast_path_selected",
    "fresh_table",
    "start_server",
]
