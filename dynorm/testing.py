"""pytest plugin: a DynamoDB server per test session and a fresh table per test.

Installed as the ``dynorm`` pytest plugin (an entry point), so its fixtures and hooks are
registered from this module.

The implementation lives in ``dynorm/tools/testing.py``; this module is its public name.
"""

# Every public name of the tool, and no other: its __all__ is this module's.
from .tools.testing import *  # noqa: F403
from .tools.testing import __all__ as __all__  # noqa: PLC0414 - the re-export of its names

# pytest finds a plugin's hooks by name on the module it loads; they are in no __all__.
from .tools.testing import (  # noqa: F401 - found by name by pytest, not used here
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_report_header,
)
