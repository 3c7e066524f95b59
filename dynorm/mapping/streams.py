"""DynamoDB Streams records decoded into model instances (pure: nothing is sent).

A Lambda handler subscribed to the table's stream gets records such as::

    {"eventName": "MODIFY",
     "dynamodb": {"Keys": {...}, "OldImage": {...}, "NewImage": {...}, ...}}

``table.decode_record(record)`` turns one into a :class:`Change` whose ``old``/``new`` are
instances of the model the item belongs to, decided as reads decide it (``Table.classifier``).
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar, cast

import msgspec

from dynorm.core.codec.converter import Item
from dynorm.core.codec.generic import decode_binary
from dynorm.core.errors import CodecError
from dynorm.core.limits import MAX_DEPTH

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


class Change(msgspec.Struct, Generic[T], frozen=True):
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
    """Decode one stream record, its model told by ``classify`` (see ``Table.decode_record``).

    Anything malformed, in the record or in its images, is a CodecError saying where.
    """
    event, body = _envelope(record)
    keys: Item = _image(body, "Keys") or {}
    new = _image(body, "NewImage")
    old = _image(body, "OldImage")
    identity = record.get("userIdentity")
    if identity is not None and not isinstance(identity, Mapping):
        raise CodecError(f"a record's 'userIdentity' is an object; got {_show(identity)}")
    expired = event == "REMOVE" and (identity or {}).get("principalId") == _TTL_PRINCIPAL
    try:
        info = classify(new or old or keys)
        if info is None:
            return Change(event, None, keys, expired=expired)
        return Change(
            event,
            info.cls,
            keys,
            old=None if old is None else info.decode(old),
            new=None if new is None else info.decode(new),
            expired=expired,
        )
    except CodecError:
        raise  # it names the model, the item and the field already
    # The images were checked to be AttributeValues; these are a model's own decoding failing
    # on a value that fits no field.
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise CodecError(f"cannot read the record's item {_show(keys)}: {exc}") from exc


def _envelope(record: object) -> tuple[Event, Mapping[str, Any]]:
    """The record's event and its 'dynamodb' object; CodecError for anything else."""
    event = record.get("eventName") if isinstance(record, Mapping) else None
    body = record.get("dynamodb") if isinstance(record, Mapping) else None
    if event not in _EVENTS or not isinstance(body, Mapping):
        got = (
            f"eventName={event!r} and keys {sorted(map(str, record))}"
            if isinstance(record, Mapping)
            else _show(record)
        )
        raise CodecError(
            "a DynamoDB Streams record has 'eventName' INSERT, MODIFY or REMOVE and a "
            f"'dynamodb' object; got {got}: pass one entry of the Lambda event's 'Records' list"
        )
    return cast("Event", event), body


def _image(body: Mapping[str, Any], name: str) -> Item | None:
    """``body[name]`` (Keys, NewImage or OldImage) checked to be an item; None when absent."""
    image = body.get(name)
    if image is None:
        return None
    if not isinstance(image, Mapping):
        raise CodecError(
            f"a record's dynamodb.{name} is an object of attribute values; got {_show(image)}"
        )
    for attr, value in image.items():
        if not isinstance(attr, str):
            raise CodecError(f"dynamodb.{name}: attribute names are strings; got {_show(attr)}")
        _check_value(value, f"dynamodb.{name}.{attr}", 0)
    return dict(image)


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:48]}...{text[-8:]}"


#: AttributeValue tags whose value is a list of members, and each member's own tag.
_SETS: Final = {"SS": "S", "NS": "N", "BS": "B"}


def _check_value(av: object, path: str, depth: int) -> None:
    """Refuse what is no DynamoDB AttributeValue, naming its place (``NewImage.a.b[2]``)."""
    if not isinstance(av, Mapping) or len(av) != 1:
        raise CodecError(f"{path} is no attribute value (one type tag and its value): {_show(av)}")
    ((tag, value),) = av.items()
    if depth > MAX_DEPTH:
        raise CodecError(f"{path} nests deeper than DynamoDB's {MAX_DEPTH} levels (MAX_DEPTH)")
    if tag == "M" and isinstance(value, Mapping):
        for key, member in value.items():
            _check_value(member, f"{path}.{key}", depth + 1)
    elif tag == "L" and isinstance(value, list):
        for i, member in enumerate(value):
            _check_value(member, f"{path}[{i}]", depth + 1)
    elif tag in _SETS and isinstance(value, list):
        for i, member in enumerate(value):
            _check_scalar(_SETS[tag], member, f"{path}[{i}]")
    elif tag in ("S", "N", "B", "BOOL", "NULL"):
        _check_scalar(tag, value, path)
    else:
        raise CodecError(f"{path}: {_show(tag)} with {_show(value)} is no attribute value")


def _check_scalar(tag: str, value: object, path: str) -> None:
    if tag == "S" and isinstance(value, str):
        return
    if tag in ("BOOL", "NULL") and isinstance(value, bool):
        return
    if tag == "N" and isinstance(value, str):
        try:
            number = decimal.Decimal(value)
        except decimal.InvalidOperation:
            number = None
        if number is not None and number.is_finite():
            return
        raise CodecError(f"{path}: {_show(value)} is not a number")
    if tag == "B" and isinstance(value, str | bytes):
        try:
            decode_binary(value)
        except CodecError as exc:
            raise CodecError(f"{path}: {exc}") from None
        return
    raise CodecError(f"{path}: {_show(value)} is no {tag} value")
