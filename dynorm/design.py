"""A table's design as data: its key table and its access patterns with their request cost.

The implementation lives in ``dynorm/tools/design.py``; this module is its public name.
"""

from .tools.design import (
    AccessPattern,
    Design,
    EntityRow,
    design,
)

__all__ = [
    "AccessPattern",
    "Design",
    "EntityRow",
    "design",
]
