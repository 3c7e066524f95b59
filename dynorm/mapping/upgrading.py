"""Which items of a read scope are stored at another schema version than their model's.

The wire structures (``dynorm.wire.structs``) keep only the attributes the scope's models
declare, but an upgrade function reads the item as stored, old attributes included: a response
holding such an item is parsed whole instead. Items at the current version, the common case
once ``upgrade_items`` has run, cost one lookup and a compare each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, ConditionFailedError, DatabaseError, StaleItemError
from dynorm.core.requests import consistent_get
from dynorm.core.steps import Plan, Send

from .classify import Classifier
from .model import ModelInfo
from .oldembedded import old_embedded_of
from .relations import embedded_of

__all__ = ["stale_item", "stale_items", "stale_put"]


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
    info: ModelInfo[Any],
    key: Item,
    stored: Mapping[str, AttributeValue],
    cause: DatabaseError,
    write: Literal["update", "put"] = "update",
) -> StaleItemError | None:
    """The refusal of an update (or a put keeping embedded children) that met ``stored``.

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
    name = info.name
    if found > versions.current:
        why = (
            f"stored at schema version {found}, newer than this code's {versions.current}: "
            "deploy the code that knows it"
        )
    elif write == "put":
        why = (
            f"stored at schema version {found}, older than {versions.current}, and {name} "
            "keeps embedded children this object does not carry (not loaded), which would stay "
            f"in the older shape. Load them first (db.get(..., load=[...])), or run "
            f"upgrade_items(db, {name})"
        )
    else:
        why = (
            f"stored at schema version {found}, older than {versions.current}: an update would "
            f"leave it half upgraded. Upgrade it first: upgrade_items(db, {name}) (dynorm "
            f"migrate app:table {name} --upgrade) for every item, or db.get (which upgrades "
            "it in memory) then db.put for this one"
        )
    error = StaleItemError(
        f"{write} of {name} {key!r}: the item is {why}; nothing was written",
        code=cause.code,
        operation="UpdateItem",
    )
    error.item = dict(stored.items())
    error.stored, error.current = found, versions.current
    return error


def stale_put(
    info: ModelInfo[Any], key: Item, refused: ConditionFailedError, table_name: str
) -> Plan[StaleItemError | None]:
    """Why a put of a model keeping embedded children was refused, if for an older item.

    Such a put keeps the children it does not carry as stored, so it is conditioned on the
    stored item being at the current version (``plan_put_keeping``). The stored item comes
    with the refusal, else it is read (one consistent GetItem). None: another reason.
    """
    if info.versions is None or not (embedded_of(info) or old_embedded_of(info)):
        return None
    stored = refused.item
    if stored is None:
        found = yield Send(consistent_get(key, table_name))
        stored = found.get("Item")
    return None if stored is None else stale_item(info, key, stored, refused, "put")
