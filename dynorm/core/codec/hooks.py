"""What the codec asks a converter: the hook that reads or writes one type.

A cattrs ``Converter`` answers it, and so does dynorm's ``Hooks`` (``converter``), which
answers the types whose hooks are dynorm's own without importing cattrs (a process reading
plain models never needs it) and asks the cattrs converter about the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["HookSource"]


class HookSource(Protocol):
    """The structure (AttributeValue -> value) and unstructure hooks of types."""

    def get_structure_hook(self, tp: Any, /) -> Callable[[Any, Any], Any]: ...

    def get_unstructure_hook(self, tp: Any, /) -> Callable[[Any], Any]: ...
