"""Moving live data when a relationship's strategy changes (see docs/migrations.md).

The implementation lives in ``dynorm/tools/migrations.py``; this module is its public name.
"""

# Every public name of the tool, and no other: its __all__ is this module's.
from .tools.migrations import *  # noqa: F403
from .tools.migrations import __all__ as __all__  # noqa: PLC0414 - the re-export of its names
