"""``Page[Model]`` as a pydantic (and FastAPI) type: ``{"items": [...], "cursor": str | null}``.

pydantic calls ``Page.__get_pydantic_core_schema__`` with ``Page[Org]``; the items take the
schema pydantic has for ``Org`` (dynorm's models bring their own, see
``mapping/pydantic_schema.py``). pydantic is imported only then, never by ``import dynorm``.
Only the items and the cursor are part of the JSON; ``scanned`` and ``consumed`` stay in Python.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["page_core_schema"]


def page_core_schema(cls: type, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    from pydantic_core import core_schema  # noqa: PLC0415 - only when pydantic asks

    args = typing.get_args(source)
    item = args[0] if args else Any
    shape = core_schema.typed_dict_schema(
        {
            "items": core_schema.typed_dict_field(
                core_schema.list_schema(handler.generate_schema(item))
            ),
            "cursor": core_schema.typed_dict_field(
                core_schema.nullable_schema(core_schema.str_schema()), required=False
            ),
        },
        cls_name=f"Page[{getattr(item, '__name__', 'Any')}]",
    )

    def to_page(data: dict[str, Any]) -> Any:
        return cls(data["items"], data.get("cursor"))

    def from_page(page: Any) -> dict[str, Any]:
        return {"items": page.items, "cursor": page.cursor}

    def as_is_or_made(value: Any, make: Any) -> Any:
        return value if isinstance(value, cls) else make(value)

    made = core_schema.no_info_after_validator_function(to_page, shape)
    return core_schema.json_or_python_schema(
        json_schema=made,
        python_schema=core_schema.no_info_wrap_validator_function(as_is_or_made, made),
        serialization=core_schema.plain_serializer_function_ser_schema(
            from_page, return_schema=shape
        ),
    )
