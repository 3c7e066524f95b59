"""How one model's items are told from others': tests on an item's keys and type attribute.

Pure functions of a model's key templates and the scope's key attributes; ``ModelInfo.tests``
builds them once per scope, and ``Classifier`` (``classify.py``) runs them over a table's models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from dynorm.core.codec.converter import AttributeValue
from dynorm.core.keys import KeyTemplate, KeyType, key_text

__all__ = ["OUTSIDE", "ItemTest", "ModelTests", "model_tests"]

ItemTest = Callable[[Mapping[str, AttributeValue]], bool]


def _never(_item: Mapping[str, AttributeValue]) -> bool:
    return False


class ModelTests(msgspec.Struct, frozen=True):
    """How one model's items are told from others' in one table (or index).

    ``whole``: for any item of the scope (a scan, a stream record), both keys tested.
    ``in_collection``: for items of an item collection this model's partition template
    addresses (a Query's results, a read by key), only the sort key is tested.
    ``shape``: ``in_collection`` as (attribute, literal prefix, delimiter, delimiter count),
    when those decide it and the table has no type attribute, for loops that inline it.
    ``keys``: ``whole`` without the type attribute (what decides items that lack it).
    """

    whole: ItemTest = _never
    in_collection: ItemTest = _never
    shape: tuple[str, str, str, int] | None = None
    keys: ItemTest = _never


#: The tests of a model a scope cannot hold: never true.
OUTSIDE = ModelTests()


def _key_test(attr: str, template: KeyTemplate, kind: KeyType = "S") -> ItemTest:
    if kind != "S":
        return _typed_key_test(attr, template, kind)
    shape = template.tail_only_shape()
    if shape is not None:
        prefix, delimiter, count = shape

        def fits_shape(item: Mapping[str, AttributeValue]) -> bool:
            value = item.get(attr)
            text = None if value is None else value.get("S")
            return text is not None and text.startswith(prefix) and text.count(delimiter) == count

        return fits_shape
    matches = template.matches

    def fits(item: Mapping[str, AttributeValue]) -> bool:
        value = item.get(attr)
        text = None if value is None else value.get("S")
        return text is not None and matches(text)

    return fits


def _typed_key_test(attr: str, template: KeyTemplate, kind: KeyType) -> ItemTest:
    """A number or binary key attribute holds one field: any value of its type fits."""
    matches = template.matches

    def fits_typed(item: Mapping[str, AttributeValue]) -> bool:
        value = item.get(attr)
        text = key_text(value) if value is not None and kind in value else None
        return text is not None and matches(text)

    return fits_typed


def _both(first: ItemTest, second: ItemTest) -> ItemTest:
    return lambda item: first(item) and second(item)


def _by_entity(type_attr: str, entity: str, by_keys: ItemTest) -> ItemTest:
    def of_entity(item: Mapping[str, AttributeValue]) -> bool:
        stored = item.get(type_attr)
        if stored is not None:
            return stored.get("S") == entity
        return by_keys(item)  # written without it: decided by the keys

    return of_entity


def model_tests(
    templates: Mapping[str, KeyTemplate],
    keys: tuple[str, str | None],
    type_attr: str | None,
    entity: str | None,
    kinds: Mapping[str, KeyType] | None = None,
) -> ModelTests:
    """The tests of a model with ``templates`` in a scope keyed by ``keys`` (pk, sk attributes).

    ``kinds`` gives the types of number and binary key attributes (the others are strings).
    """
    kinds = kinds or {}
    pk_attr, sk_attr = keys
    pk = templates[pk_attr]
    sk = templates.get(sk_attr) if sk_attr is not None else None
    # The sort key first: it is what usually tells models of one collection apart.
    last_attr, last = (sk_attr, sk) if sk_attr is not None and sk is not None else (pk_attr, pk)
    in_collection = _key_test(last_attr, last, kinds.get(last_attr, "S"))
    whole = (
        in_collection
        if last is pk
        else _both(in_collection, _key_test(pk_attr, pk, kinds.get(pk_attr, "S")))
    )
    if entity is not None and type_attr is not None:
        return ModelTests(
            whole=_by_entity(type_attr, entity, whole),
            in_collection=_by_entity(type_attr, entity, in_collection),
            keys=whole,
        )
    shape = None if last_attr in kinds else last.tail_only_shape()
    return ModelTests(
        whole=whole,
        in_collection=in_collection,
        shape=None if shape is None else (last_attr, *shape),
        keys=whole,
    )
