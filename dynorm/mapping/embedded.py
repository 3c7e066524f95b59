"""Children embedded in the parent item: a map keyed by one child field, or a list.

Plans for adding, replacing and removing one child with one UpdateItem, checked against the
relationship's ``max_items`` and DynamoDB's 400 KB item limit before anything is sent, plus the
codec for the embedded attribute. Pure: nothing here sends a request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import msgspec

from dynorm.core.codec.converter import AttributeValue, Item, hooks
from dynorm.core.codec.model_codec import check_definable, value_encoder
from dynorm.core.codec.typeforms import type_text
from dynorm.core.errors import CodecError, DefinitionError, LimitExceededError
from dynorm.core.expressions import ExpressionBuilder, equal_to
from dynorm.core.fields import stored_name
from dynorm.core.limits import MAX_ITEM_BYTES, item_size
from dynorm.core.requests import Request, get_item, update_item
from dynorm.core.steps import FromRead

from .model import resolve_field_types

__all__ = ["EmbeddedCodec", "add_request", "create_map_request", "remove_request"]


def _pending(*_: Any) -> Any:
    raise AssertionError("replaced in EmbeddedCodec.build")  # pragma: no cover


class EmbeddedCodec(msgspec.Struct, frozen=True, eq=False):
    """Reads and writes one relationship's embedded attribute."""

    qualname: str
    attribute: str
    child: type
    key: str | None
    max_items: int | None
    _decode_child: Callable[[AttributeValue, type], Any]
    _encode_child: Callable[[Any], AttributeValue]

    @classmethod
    def build(
        cls,
        qualname: str,
        attribute: str,
        child: type,
        key: str | None,
        max_items: int | None,
        *,
        localns: Mapping[str, Any] | None = None,
    ) -> EmbeddedCodec:
        """The codec for ``child``; ``localns`` resolves names local to a declaring function."""
        if not attrs.has(child):
            raise DefinitionError(
                f"{qualname} via Embedded(): {child!r} must be an attrs class (embedded children "
                "are plain attrs classes, not table models)"
            )
        try:
            names = resolve_field_types(child, localns)
        except DefinitionError as exc:
            raise DefinitionError(f"{qualname}: {exc}") from None
        if key is not None and names.get(key) is not str:
            raise DefinitionError(
                f"{qualname} via Embedded(key={key!r}): {child.__name__}.{key} must be a str "
                f"field (map keys are strings); fields: {', '.join(names)}"
            )
        if max_items is not None and max_items < 1:
            raise DefinitionError(f"{qualname}: max_items must be at least 1; got {max_items}")
        try:
            check_definable(child)  # each field's type, at declaration; nothing generated
        except DefinitionError as exc:
            raise DefinitionError(f"{qualname}: {exc}") from None
        codec = cls(qualname, attribute, child, key, max_items, _pending, _pending)
        # The child's decoder and encoder are generated on first use: each slot starts as a
        # function that generates both, puts them in the slots in its place, and calls.

        def generate() -> None:
            try:
                decode = hooks.get_structure_hook(child)
                encode = value_encoder(child)
            except DefinitionError as exc:
                raise DefinitionError(f"{qualname}: {exc}") from None
            msgspec.structs.force_setattr(codec, "_decode_child", decode)
            msgspec.structs.force_setattr(codec, "_encode_child", encode)

        def decode_first(value: AttributeValue, tp: type) -> Any:
            generate()
            return codec._decode_child(value, tp)

        def encode_first(value: Any) -> AttributeValue:
            generate()
            return codec._encode_child(value)

        msgspec.structs.force_setattr(codec, "_decode_child", decode_first)
        msgspec.structs.force_setattr(codec, "_encode_child", encode_first)
        return codec

    def encode_child(self, child: object) -> AttributeValue:
        return self._encode_child(child)

    def decode(self, item: Mapping[str, AttributeValue], *, key: str = "") -> list[Any]:
        """The children stored in a parent item (a map's children ordered by key).

        ``key`` names the parent item in errors (``pk='C#1', sk='C#1'``): a child that does
        not read as its class is a CodecError naming the parent, the child and the attribute.
        """
        stored = item.get(self.attribute)
        if stored is None or "NULL" in stored:
            return []
        if "M" in stored:
            entries = [(repr(k), stored["M"][k]) for k in sorted(stored["M"])]
        else:
            entries = [(f"[{i}]", v) for i, v in enumerate(stored["L"])]
        children = []
        for which, value in entries:
            try:
                children.append(self._decode_child(value, self.child))
            except Exception as exc:  # any failure of a stored value is explained
                raise self._unreadable(key, which, value, exc) from exc
        return children

    def _unreadable(self, key: str, which: str, value: object, exc: Exception) -> CodecError:
        """The error for a stored child that does not read as its class, naming its attribute."""
        about = f"{self.qualname}: item {key or '(key not read)'}: attribute {self.attribute!r}"
        fields = value.get("M") if isinstance(value, Mapping) else None
        if isinstance(fields, Mapping):
            for field in attrs.fields(self.child):
                name = stored_name(field)
                if name not in fields or not field.init:
                    continue
                try:
                    hooks.converter.structure(fields[name], field.type)
                except Exception:  # noqa: BLE001 - this is the field that fails
                    return CodecError(
                        f"{about}, child {which}: attribute {name!r} (field "
                        f"{self.child.__name__}.{field.name}) holds {fields[name]!r}, which does "
                        f"not read as {type_text(field.type)}; correct the stored item"
                    )
        detail = "" if isinstance(exc, KeyError) else f" ({exc})"
        return CodecError(
            f"{about}, child {which} does not read as {self.child.__name__}{detail}; correct "
            "the stored item"
        )

    def encode(self, children: Sequence[Any]) -> AttributeValue:
        if self.key is None:
            return {"L": [self._encode_child(c) for c in children]}
        return {"M": {getattr(c, self.key): self._encode_child(c) for c in children}}

    def empty(self) -> AttributeValue:
        return {"L": []} if self.key is None else {"M": {}}

    def child_key(self, child: object) -> str | None:
        return None if self.key is None else str(getattr(child, self.key))

    def same_child(self, a: object, b: object) -> bool:
        """Whether ``b`` replaces ``a`` (same map key; list children are never replaced)."""
        return self.key is not None and self.child_key(a) == self.child_key(b)

    def read_request(self, table_name: str, key: Item) -> Request:
        """A GetItem that reads only this attribute of the parent item."""
        return get_item(table_name, key, consistent=True, attribute=self.attribute)

    def check_child(self, child: object) -> None:
        if type(child) is not self.child:
            raise TypeError(
                f"{self.qualname} holds {self.child.__name__}, not {type(child).__name__}"
            )

    def check_fits(self, parent_item: Item, children: Sequence[Any]) -> None:
        """Refuse, before sending, a change that breaks max_items or the 400 KB item limit."""
        if self.max_items is not None and len(children) > self.max_items:
            raise LimitExceededError(
                f"{self.qualname} holds at most {self.max_items} items (max_items); adding one "
                f"would make {len(children)}. Remove one first or raise max_items"
            )
        item = {**parent_item, self.attribute: self.encode(children)}
        size = item_size(item)
        if size > MAX_ITEM_BYTES:
            raise LimitExceededError(
                f"{self.qualname}: the parent item would be {size} bytes, over DynamoDB's "
                f"{MAX_ITEM_BYTES}-byte item limit; store these children with Partition() instead"
            )


def add_request(
    codec: EmbeddedCodec,
    table_name: str,
    key: Item,
    pk_attr: str,
    child: object,
    *,
    replacing: bool,
) -> Request:
    """UpdateItem that adds (or replaces, for a map) one embedded child."""
    builder = ExpressionBuilder()
    attr = builder.attribute(codec.attribute)
    conditions = [f"attribute_exists({builder.attribute(pk_attr)})"]
    member = None
    if codec.key is None:
        empty = builder.value(codec.empty())
        new = builder.value(codec.encode([child]))
        update = f"SET {attr} = list_append(if_not_exists({attr}, {empty}), {new})"
    else:
        member = f"{attr}.{builder.attribute(str(getattr(child, codec.key)))}"
        update = f"SET {member} = {builder.value(codec.encode_child(child))}"
        # A nested SET needs the map to exist; dynorm's put always creates it.
        conditions.append(f"attribute_exists({attr})")
    if codec.max_items is not None and not replacing:
        # Guards against a concurrent writer too, not only against the state read earlier.
        limit = builder.value({"N": str(codec.max_items)})
        bound = [f"attribute_not_exists({attr})", f"size({attr}) < {limit}"]
        if member is not None:
            # Children that were not loaded may hold this key already: replacing never grows.
            bound.insert(0, f"attribute_exists({member})")
        conditions.append(f"({' OR '.join(bound)})")
    # list_append adds again when repeated; a map member is set to the same value again.
    # A refusal carries the stored item, which tells a full map from a missing one.
    return update_item(
        table_name,
        key,
        update,
        retry="token" if codec.key is None else "safe",
        ConditionExpression=" AND ".join(conditions),
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
        **builder.params(),
    )


def create_map_request(codec: EmbeddedCodec, table_name: str, key: Item, pk_attr: str) -> Request:
    """UpdateItem that creates the parent's empty children map where none is stored.

    An add sets a path inside the map, which DynamoDB refuses while the map is missing (a
    parent stored by older code, or by another tool). ``if_not_exists`` keeps a map another
    add created meanwhile; conditioned on the parent being stored, so none is ever created.
    """
    builder = ExpressionBuilder()
    attr = builder.attribute(codec.attribute)
    return update_item(
        table_name,
        key,
        f"SET {attr} = if_not_exists({attr}, {builder.value(codec.empty())})",
        retry="safe",
        ConditionExpression=f"attribute_exists({builder.attribute(pk_attr)})",
        **builder.params(),
    )


def remove_request(
    codec: EmbeddedCodec, table_name: str, key: Item, child: object, position: int | FromRead
) -> Request:
    """UpdateItem that removes one embedded child (by key in a map, by position in a list).

    ``explain``, which does not read the list, gives the position as a placeholder.
    """
    builder = ExpressionBuilder()
    attr = builder.attribute(codec.attribute)
    if codec.key is None:
        # Positions shift when others write: only remove if that slot still holds this child.
        slot = f"{attr}[{position}]"
        held = " AND ".join(equal_to(builder, slot, codec.encode_child(child)))
        # Removing by position removes the next child when repeated (or fails its condition).
        return update_item(
            table_name,
            key,
            f"REMOVE {slot}",
            retry="token",
            ConditionExpression=held,
            **builder.params(),
        )
    member = builder.attribute(str(getattr(child, codec.key)))
    # A path inside a missing map is refused (a parent stored without it): the condition tells.
    return update_item(
        table_name,
        key,
        f"REMOVE {attr}.{member}",
        ConditionExpression=f"attribute_exists({attr})",
        **builder.params(),
    )
