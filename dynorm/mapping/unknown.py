"""A parent's field values that ``explain`` does not know yet, and where they show.

A request sent once a read returns (a cascade's next level, a query load's children) is
planned with sample values standing for the fields of each parent read; each key value built
from them is then shown as a :class:`~dynorm.FromRead` naming its template, such as
``'P#<Parent.parent_id>' for each Parent read``.
"""

from __future__ import annotations

from typing import Any

from dynorm.core.requests import Request
from dynorm.core.steps import FromRead

from .model import ModelInfo

__all__ = ["placed", "placed_request", "sample_values"]


class _Sample(str):
    """A parent's field value not known when explaining: formats as itself under any spec."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return str(self)


#: Around a sample in formatted key text (control characters no template holds).
_OPEN, _CLOSE = "\x02", "\x03"


def sample_values(info: ModelInfo[Any]) -> dict[str, object]:
    """A sample value for each field of ``info``, shown as ``<Model.field>`` once placed."""
    return {f: _Sample(f"{_OPEN}{info.name}.{f}{_CLOSE}") for f in info.field_types}


def placed(value: object, parent: ModelInfo[Any]) -> object:
    """``value`` with every text holding a sample value replaced by a FromRead placeholder."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((tag, text),) = value.items()
            if tag in ("S", "N") and isinstance(text, str) and _OPEN in text:
                shown = text.replace(_OPEN, "<").replace(_CLOSE, ">")
                return FromRead(f"{shown!r} for each {parent.name} read")
        return {k: placed(v, parent) for k, v in value.items()}
    return value


def placed_request(request: Request, parent: ModelInfo[Any]) -> Request:
    """A Query planned with :func:`sample_values`, its values built from them placeholders."""
    params: dict[str, Any] = dict(request.params)
    if "ExpressionAttributeValues" in params:
        params["ExpressionAttributeValues"] = placed(params["ExpressionAttributeValues"], parent)
    return Request(request.operation, params)
