"""Whether a model built from outside (JSON, a request body) can be stored, said at its fields.

``from_jsonable`` (and so every FastAPI body of a model) asks this of each model it builds, so
that a value that validates is a value ``db.put`` stores. It keeps no rule of its own: it runs
the put's own checks, :meth:`ModelInfo.encode` (the field encoders with DynamoDB's number, text
and nesting limits, the key size limits, the item size limit) and, for the embedded children the
object holds, their codec and :meth:`ModelInfo.check_item` (as ``db.put`` writes them).

Only when those refuse does it work out where, to name the field a client must change: the
field whose value its encoder refuses (``codec.encode_path``, the check an update makes of one
value), the embedded child that is refused, the field that fills a key that is too long, or,
for an item over the size limit, its largest field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dynorm.core.errors import CodecError, KeyTemplateError, LimitExceededError
from dynorm.core.limits import check_value, item_size

from .embedded import EmbeddedCodec
from .model import ModelInfo
from .relations import embedded_of
from .state import held_items

__all__ = ["storage_problems"]

#: A place inside the data (field names and list positions) and what is wrong there.
Problem = tuple[tuple[str | int, ...], str]

#: What the put's checks raise for a value DynamoDB would refuse.
_REFUSED = (CodecError, LimitExceededError, KeyTemplateError)


def storage_problems(info: ModelInfo[Any], obj: object) -> list[Problem]:
    """Why ``db.put(obj)`` would refuse ``obj``, each at its place; empty when it would not."""
    try:
        _checked_item(info, obj)
    except _REFUSED as exc:
        return _placed(info, obj, exc)
    return []


def _checked_item(info: ModelInfo[Any], obj: object) -> None:
    """Build and check the item ``db.put(obj)`` stores, embedded children it holds included."""
    item = info.encode(obj)
    children = {codec.attribute: codec.encode(held) for _, codec, held in _held(info, obj)}
    if children:
        info.check_item({**item, **children})


def _held(info: ModelInfo[Any], obj: object) -> Iterator[tuple[str, EmbeddedCodec, list[Any]]]:
    """Each embedded relationship whose children ``obj`` holds: name, codec, children.

    A put writes those whole; the others it leaves as stored.
    """
    for rel in embedded_of(info):
        codec = rel.embedded
        held = held_items(obj, rel.name)
        if codec is not None and held is not None:
            yield rel.name, codec, held


def _placed(info: ModelInfo[Any], obj: object, exc: Exception) -> list[Problem]:
    """``exc`` (raised by the put's checks) at the place in ``obj`` that causes it."""
    found = _field_problems(info, obj) or _child_problems(info, obj) or _key_problems(info, obj)
    if found:
        return found
    largest = _largest_field(info, obj) if isinstance(exc, LimitExceededError) else None
    # The whole item is too large: point at what makes it so.
    return [((largest,) if largest else (), str(exc))]


def _field_problems(info: ModelInfo[Any], obj: object) -> list[Problem]:
    """Each field whose value alone cannot be stored (type, number, text, nesting)."""
    found: list[Problem] = []
    for name in info.field_types:
        try:
            info.codec.encode_path(name)(getattr(obj, name))
        except CodecError as exc:
            found.append(((name,), str(exc)))
        except LimitExceededError:
            continue  # a value over the item limit: the item's error says more (its size)
    return found


def _child_problems(info: ModelInfo[Any], obj: object) -> list[Problem]:
    """Each embedded child held by ``obj`` that cannot be stored in its parent's item."""
    found: list[Problem] = []
    for name, codec, held in _held(info, obj):
        for i, child in enumerate(held):
            try:
                # The checks of one value (text, nesting), as for a field above.
                check_value(codec.encode_child(child), f"{info.name}.{name}[{i}]")
            except CodecError as exc:
                found.append(((name, i), str(exc)))
            except LimitExceededError:
                continue  # the item's error says more (its size)
    return found


def _key_problems(info: ModelInfo[Any], obj: object) -> list[Problem]:
    """The key attribute that cannot be made (too long, a None), at the field that fills it."""
    values = info.values_of(obj)
    for attr, template in info.templates.items():
        if attr not in info.table.primary_attributes and None in map(values.get, template.fields):
            continue  # an index key left out: the index is sparse
        try:
            info.key_attribute(attr, values)
        except _REFUSED as exc:
            # The longest of the template's values is the one to shorten (or the None one).
            field = max(template.fields, key=lambda f: len(str(values[f] or "")) + 1)
            missing = [f for f in template.fields if values[f] is None]
            return [(((missing or [field])[0],), str(exc))]
    return []


def _largest_field(info: ModelInfo[Any], obj: object) -> str | None:
    """The field (or embedded relationship) that takes the most room in the stored item."""
    sizes: dict[str, int] = {}
    for name, attribute in info.codec.attributes.items():
        try:
            sizes[name] = item_size({attribute: info.codec.encode_field[name](getattr(obj, name))})
        except _REFUSED:
            continue
    for name, codec, held in _held(info, obj):
        try:
            sizes[name] = item_size({codec.attribute: codec.encode(held)})
        except _REFUSED:
            continue
    return max(sizes, key=sizes.__getitem__) if sizes else None
