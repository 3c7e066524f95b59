"""Writes through relationships: ``db.add``, ``db.remove`` and keeping denormalized copies fresh.

Each strategy writes children its own way (a put, an UpdateItem on the parent's embedded map, a
put with copied fields filled) behind the same two calls. The plans come from the pure modules;
this module only sequences them through the Database's ``send``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ._batch import TRANSACT_MAX
from ._embedded import EmbeddedCodec, plan_add, plan_remove
from ._errors import ConditionFailedError, LimitExceededError, TransactionCanceledError
from ._paging import iterate
from ._plans import Request
from ._relations import HasMany
from ._state import Loaded, state_of
from ._writes import plan_update

if TYPE_CHECKING:
    from ._database import Database

__all__ = ["add_child", "put_with_copies", "remove_child", "stale_copies"]

logger = logging.getLogger("dynorm")

C = TypeVar("C")

_TRANSACT_KINDS = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}


def _loaded(parent: object, rel: HasMany[Any, Any]) -> Loaded | None:
    state = state_of(parent)
    return None if state is None else state.loaded.get(rel.name)


def _same_key(codec: EmbeddedCodec | None, rel: HasMany[Any, Any], a: object, b: object) -> bool:
    if codec is not None:
        return codec.key is not None and codec.child_key(a) == codec.child_key(b)
    info = rel.target_info
    return info.key_of(a) == info.key_of(b)


async def add_child(db: Database, parent: object, rel: HasMany[Any, C], child: C) -> C:
    """Store ``child`` under ``parent`` as the strategy says; returns the child as stored."""
    codec = rel.embedded
    loaded = _loaded(parent, rel)
    if codec is not None:
        await _add_embedded(db, parent, rel, child, loaded)
    else:
        child = rel.fill_copies(parent, child)
        rel.check_child(parent, child)
        await db.put(child)
    if loaded is not None:
        loaded.items = [c for c in loaded.items if not _same_key(codec, rel, c, child)] + [child]
    return child


async def _add_embedded(
    db: Database,
    parent: object,
    rel: HasMany[Any, C],
    child: C,
    loaded: Loaded | None,
) -> None:
    codec = rel.embedded
    if codec is None:
        raise TypeError(f"{rel.qualname} does not embed its children")
    codec.check_child(child)
    info = rel.owner_info
    current = list(loaded.items) if loaded is not None else []
    replacing = any(_same_key(codec, rel, c, child) for c in current)
    after = [c for c in current if not _same_key(codec, rel, c, child)] + [child]
    codec.check_fits(info.encode(parent), after)
    request = plan_add(
        codec, db.table_name, info.key_of(parent), info.table.pk, child, replacing=replacing
    )
    try:
        await db.send(request)
    except ConditionFailedError as exc:
        limit = f"it holds {codec.max_items} (max_items) already, or " if codec.max_items else ""
        raise LimitExceededError(
            f"{rel.qualname}: cannot add to {parent!r}: {limit}the parent item is not stored "
            f"(db.put it first), or it was stored without its {codec.attribute!r} attribute "
            "(write it once with db.put, which creates it)"
        ) from exc


async def remove_child(db: Database, parent: object, rel: HasMany[Any, C], child: C) -> None:
    """Take ``child`` out of ``parent``'s relationship (delete it, or drop it from the map)."""
    codec = rel.embedded
    loaded = _loaded(parent, rel)
    if codec is None:
        rel.check_child(parent, child)
        await db.delete(child)
    else:
        codec.check_child(child)
        position = 0  # a map child is removed by its key: no read needed
        if codec.key is not None and loaded is not None:
            if not any(_same_key(codec, rel, c, child) for c in loaded.items):
                return  # known not to be there: nothing to write
        elif codec.key is None:
            # A list child is removed by position, which only the stored list can tell.
            children = await getattr(parent, rel.name).all()
            found = next((i for i, c in enumerate(children) if c == child), None)
            if found is None:
                return  # not there: removing is idempotent, as deleting a missing item is
            position = found
        info = rel.owner_info
        await db.send(plan_remove(codec, db.table_name, info.key_of(parent), child, position))
        loaded = _loaded(parent, rel)  # reading the children above may have loaded them
        if loaded is not None and codec.key is None:
            # A list has no keys: drop exactly the entry that was removed from the item.
            del loaded.items[position]
            return
    if loaded is not None:
        loaded.items = [c for c in loaded.items if not _same_key(codec, rel, c, child)]


def stale_copies(
    rel: HasMany[Any, Any], parent_values: Mapping[str, object], children: Sequence[object]
) -> list[tuple[object, dict[str, object]]]:
    """Each child whose copies differ from the parent's values, with the fields to rewrite."""
    out = []
    for child in children:
        changes = {
            child_field: parent_values[parent_field]
            for parent_field, child_field in rel.copies.items()
            if getattr(child, child_field) != parent_values[parent_field]
        }
        if changes:
            out.append((child, changes))
    return out


def _transactable(request: Request) -> dict[str, Any]:
    # TransactWriteItems takes the single-item parameters minus ReturnValues.
    return {k: v for k, v in request.params.items() if k != "ReturnValues"}


async def put_with_copies(
    db: Database,
    rels: Sequence[HasMany[Any, Any]],
    parent_values: Mapping[str, object],
    write: Request | None,
) -> int:
    """Send ``write`` (the parent's put or update) and rewrite every stale copy.

    Children are read first, so that a fan-out over a relationship's ``max_fanout`` is refused
    with nothing written. Up to 100 writes go in one transaction (all or nothing); more are
    sent as idempotent UpdateItems after the parent. Returns how many children were rewritten.
    """
    updates: list[Request] = []
    for rel in rels:
        read = rel.children_read(db.table_name, parent_values)
        accept = db.acceptor(rel.target_info, read.index)
        children = [child async for child in iterate(db.send, read, accept)]
        stale = stale_copies(rel, parent_values, children)
        limit = getattr(rel.via, "max_fanout", len(stale))
        if len(stale) > limit:
            raise LimitExceededError(
                f"{rel.qualname}: {len(stale)} children carry copies that would need rewriting, "
                f"over max_fanout={limit}; nothing was written. Raise max_fanout or store the "
                "field only on the parent"
            )
        info = rel.target_info
        updates += [
            plan_update(info, info.values_of(child), db.table_name, set=changes)
            for child, changes in stale
        ]
    writes = ([write] if write is not None else []) + updates
    if not updates:
        for request in writes:
            await db.send(request)
    elif len(writes) <= TRANSACT_MAX:
        items = [{_TRANSACT_KINDS[r.operation]: _transactable(r)} for r in writes]
        try:
            await db.send(Request("TransactWriteItems", {"TransactItems": items}))
        except TransactionCanceledError as exc:
            if (
                write is None
                or [r.index for r in exc.failed] != [0]
                or (exc.failed[0].code != "ConditionalCheckFailed")
            ):
                raise
            # Only the parent's own condition failed: the same error as when it is sent alone.
            raise ConditionFailedError(
                f"{write.operation}: the condition did not hold; nothing was written "
                "(neither the item nor its denormalized copies)",
                code=exc.failed[0].code,
                operation=write.operation,
            ) from exc
    else:
        if write is not None:
            await db.send(write)
        await asyncio.gather(*(db.send(update) for update in updates))
    if updates:
        logger.info("rewrote %d denormalized copies", len(updates))
    return len(updates)
