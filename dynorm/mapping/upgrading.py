"""Which items of a read scope are stored at another schema version than their model's.

The wire structures (``dynorm.wire.structs``) keep only the attributes the scope's models
declare, but an upgrade function reads the item as stored, old attributes included: a response
holding such an item is parsed whole instead. Items at the current version, the common case
once ``upgrade_items`` has run, cost one lookup and a compare each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, DatabaseError, StaleItemError

from .classify import Classifier
from .model import ModelInfo

__all__ = ["stale_item", "stale_items"]


def stale_items(
    classifier: Classifier, models: Sequence[ModelInfo[Any]]
) -> Callable[[Mapping[str, AttributeValue]], bool] | None:
    """A test for items of ``models`` (read in ``classifier``'s scope) at another schema version.

    None when no model of the scope is versioned. Each versioned model's own item tests decide
    whether an item is its (so an item is never taken for current by another model's rule).
    """
    versioned = [(classifier.tests(m).whole, m.versions) for m in models if m.versions is not None]
    if not versioned:
        return None
    shared = {(v.attribute, v.current) for _, v in versioned}
    attribute, current = next(iter(shared))
    expected = {"N": str(current)}
    # With one (attribute, version) for every versioned model, an item holding it is current;
    # at version 1 an item without it is too.
    quick = len(shared) == 1
    missing = expected if current == 1 else None

    def stale(item: Mapping[str, AttributeValue]) -> bool:
        if quick and item.get(attribute, missing) == expected:
            return False
        for whole, versions in versioned:
            if whole(item):
                try:
                    return versions.version_of(item) != versions.current
                except CodecError:
                    return True  # parsed whole, the decoder then says what is wrong
        return False

    if quick:
        # The wire structures read the attribute off each item directly (dynorm.wire.structs).
        # (The name is dynorm.wire.structs.QUICK_MARK, not imported: msgspec loads on first read.)
        setattr(stale, "__dynorm_quick__", (attribute, expected))  # noqa: B010
    return stale


def stale_item(
    info: ModelInfo[Any], key: Item, stored: Mapping[str, AttributeValue], cause: DatabaseError
) -> StaleItemError | None:
    """The refusal of an update of ``info`` that met ``stored`` at an older schema version.

    None when the model is unversioned or ``stored`` is at its version (another condition
    failed). ``cause`` is the refusal DynamoDB sent.
    """
    versions = info.versions
    if versions is None:
        return None
    try:
        found = versions.version_of(stored)
    except CodecError:
        return None  # no version dynorm wrote: the condition's other parts say more
    if found == versions.current:
        return None
    if found > versions.current:
        why = (
            f"stored at schema version {found}, newer than this code's {versions.current}: "
            "deploy the code that knows it"
        )
    else:
        why = (
            f"stored at schema version {found}, older than {versions.current}: an update would "
            f"leave it half upgraded. Upgrade it first: upgrade_items(db, {info.name}) (dynorm "
            f"migrate app:table {info.name} --upgrade) for every item, or db.get (which upgrades "
            "it in memory) then db.put for this one"
        )
    error = StaleItemError(
        f"update of {info.name} {key!r}: the item is {why}; nothing was written",
        code=cause.code,
        operation="UpdateItem",
    )
    error.item = dict(stored.items())
    error.stored, error.current = found, versions.current
    return error
