"""Testing with dynorm: an embedded DynamoDB server, request counting, and the pytest fixtures.

``start_server``, ``count_requests``, ``fresh_table`` and the settings need no pytest, so scripts
and examples may import them from here with dynorm installed without its ``testing`` extra.

The pytest plugin (hooks and fixtures ``dynorm_server``, ``dynorm_connect``, ``dynorm_backend``)
is ``dynorm/tools/pytest_plugin.py``, which installing dynorm registers with pytest; when pytest
is installed, this module re-exports it too, so ``-p dynorm.testing`` and
``pytest_plugins = ["dynorm.testing"]`` also load the plugin.

The implementation lives in ``dynorm/tools/``; this module is its public name.
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
    fast_path_selected,
    fresh_table,
    start_server,
)

# The tool's public names (its __all__, which a unit test holds equal), and with pytest the
# fixtures.
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
    "fast_path_selected",
    "fresh_table",
    "start_server",
]

try:
    import pytest  # noqa: F401 - only whether it can be imported
except ImportError:  # dynorm without its `testing` extra: the helpers above only
    pass
else:
    # pytest finds a plugin's hooks by name on the module it loads; they are in no __all__.
    from .tools.pytest_plugin import (  # noqa: F401 - found by name by pytest, not used here
        dynorm_backend,
        dynorm_connect,
        dynorm_server,
        pytest_collection_modifyitems,
        pytest_configure,
        pytest_report_header,
    )

    __all__ += ["dynorm_backend", "dynorm_connect", "dynorm_server"]
