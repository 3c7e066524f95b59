"""DynamoDB Streams records decoded into model instances (pure: nothing is sent).

A Lambda handler subscribed to the table's stream gets records such as::

    {"eventName": "MODIFY",
     "dynamodb": {"Keys": {...}, "OldImage": {...}, "NewImage": {...}, ...}}

``table.decode_record(record)`` turns one into a :class:`Change` whose ``old``/``new`` are
instances of the model the item belongs to, decided as reads decide it (``Table.classifier``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

import attrs

from dynorm.core.codec.converter import Item
from dynorm.core.errors import CodecError

if TYPE_CHECKING:
    from .model import ModelInfo

__all__ = ["Change", "StreamRecord", "decode_change"]

T = TypeVar("T")
U = TypeVar("U")

#: A stream record as Lambda (or GetRecords) delivers it: JSON objects, DynamoDB-typed images.
StreamRecord = Mapping[str, Any]
Event = Literal["INSERT", "MODIFY", "REMOVE"]
_EVENTS: tuple[Event, ...] = ("INSERT", "MODIFY", "REMOVE")
#: Who deletes items whose TTL passed (the record's ``userIdentity.principalId``).
_TTL_PRINCIPAL = "dynamodb.amazonaws.com"


@attrs.frozen
class Change(Generic[T]):
    """One item's change, from a DynamoDB Streams record.

    ``event`` is INSERT, MODIFY or REMOVE; ``model`` the class the item belongs to (None for an
    item no model of the table describes: ``old`` and ``new`` are then None too); ``keys`` the
    item's primary key as DynamoDB sent it; ``old``/``new`` the item before and after, as
    instances (None when the stream view type leaves that image out, or the event has none);
    ``expired`` is True for a REMOVE that DynamoDB's TTL made.
    """

    event: Event
    model: type[T] | None
    keys: Item
    old: T | None = None
    new: T | None = None
    expired: bool = False

    def of(self, model: type[U]) -> Change[U] | None:
        """This change typed as ``model``'s when its item is one of them, else None."""
        return cast("Change[U]", self) if self.model is model else None


def decode_change(
    classify: Callable[[Item], ModelInfo[Any] | None], record: StreamRecord
) -> Change[object]:
    """Decode one stream record, its model told by ``classify`` (see ``Table.decode_record``)."""
    event = record.get("eventName")
    body = record.get("dynamodb")
    if event not in _EVENTS or not isinstance(body, Mapping):
        raise CodecError(
            "a DynamoDB Streams record has 'eventName' INSERT, MODIFY or REMOVE and a "
            f"'dynamodb' object; got eventName={event!r} and keys {sorted(record)}: pass one "
            "entry of the Lambda event's 'Records' list"
        )
    new: Item | None = body.get("NewImage")
    old: Item | None = body.get("OldImage")
    keys: Item = body.get("Keys") or {}
    info = classify(new or old or keys)
    identity = record.get("userIdentity") or {}
    expired = event == "REMOVE" and identity.get("principalId") == _TTL_PRINCIPAL
    if info is None:
        return Change(cast("Event", event), None, keys, expired=expired)
    return Change(
        cast("Event", event),
        info.cls,
        keys,
        old=None if old is None else info.decode(old),
        new=None if new is None else info.decode(new),
        expired=expired,
    )
