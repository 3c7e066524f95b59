"""A table's design as data: its key table and its access patterns with their request cost.

The implementation lives in ``dynorm/tools/design.py``; this module is its public name.
"""

# Every public name of the tool, and no other: its __all__ is this module's.
from .tools.design import *  # noqa: F403
from .tools.design import __all__ as __all__  # noqa: PLC0414 - the re-export of its names
