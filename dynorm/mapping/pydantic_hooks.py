"""pydantic's extension hooks, given to every model class at declaration.

They forward to :mod:`dynorm.mapping.pydantic_schema`, imported when pydantic first asks for a
schema: a declaration costs two ``setattr`` calls, and an application that never uses pydantic
never loads the schema code (nor pydantic).
"""

from __future__ import annotations

from typing import Any

__all__ = ["install_pydantic_hooks"]


def _core_schema(cls: type, source: Any, handler: Any) -> Any:
    from .pydantic_schema import core_schema_of  # noqa: PLC0415 - only when pydantic asks

    return core_schema_of(cls, source, handler)


def _json_schema(cls: type, schema: Any, handler: Any) -> Any:
    from .pydantic_schema import json_schema_of  # noqa: PLC0415 - only when pydantic asks

    return json_schema_of(cls, schema, handler)


def install_pydantic_hooks(cls: type) -> None:
    """Give the class pydantic's extension hooks (unless it defines its own)."""
    if "__get_pydantic_core_schema__" not in vars(cls):
        setattr(cls, "__get_pydantic_core_schema__", classmethod(_core_schema))  # noqa: B010
    if "__get_pydantic_json_schema__" not in vars(cls):
        setattr(cls, "__get_pydantic_json_schema__", classmethod(_json_schema))  # noqa: B010
