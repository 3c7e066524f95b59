"""AWS NoSQL Workbench data models: read, write, export from a table, import into DynamoDB.

The implementation lives in ``dynorm/tools/workbench*.py`` (``dynorm.tools.workbench`` gathers
its parts); this module is its public name.
"""

# Every public name of the tool, and no other: its __all__ is this module's.
from .tools.workbench import *  # noqa: F403
from .tools.workbench import __all__ as __all__  # noqa: PLC0414 - the re-export of its names
