"""``put_all``'s objects that must keep stored embedded children: each sent as its own UpdateItem.

A PutRequest of BatchWriteItem replaces the whole item and takes no condition. Keeping children
an object does not carry that way (``via=Embedded`` children of an object built in code, the old
embedded layout of a ``was=`` relationship) means reading them first and writing them back: a
child removed, added or moved by ``migrate()`` between that read and the write would come back,
or be lost. So such an object is written as ``db.put`` writes it, with the UpdateItem that
leaves those attributes as stored when it is applied (``plan_put_keeping``): one request per
object, sent concurrently; the other objects still go in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dynorm.core.codec.converter import Item
from dynorm.core.errors import ConditionFailedError, DynormError
from dynorm.core.requests import Request
from dynorm.core.steps import Plan, SendAll

from .model import ModelInfo
from .oldembedded import old_embedded_of
from .relations import embedded_of
from .state import state_of
from .upgrading import stale_put

__all__ = ["keeps_stored", "send_keeping"]


def keeps_stored(info: ModelInfo[Any], obj: object) -> bool:
    """Whether a put of ``obj`` must keep embedded children stored in its item.

    An object read from the table holds its ``via=Embedded`` children (put_all refuses one
    read without them) and is written whole; no object holds a ``was=`` relationship's old
    embedded attribute.
    """
    return bool(old_embedded_of(info)) or (bool(embedded_of(info)) and state_of(obj) is None)


def send_keeping(
    puts: Sequence[tuple[ModelInfo[Any], Item, Request]], table_name: str
) -> Plan[None]:
    """Send each keeping put (model, key, UpdateItem) concurrently; raise the first failure.

    A put refused because the stored item is at an older schema version raises the
    StaleItemError ``db.put`` raises.
    """
    if not puts:
        return
    outcomes = yield SendAll(tuple(request for _, _, request in puts))
    for (info, key, _), outcome in zip(puts, outcomes, strict=True):
        if isinstance(outcome, ConditionFailedError):
            stale = yield from stale_put(info, key, outcome, table_name)
            raise stale or outcome
        if isinstance(outcome, DynormError):
            raise outcome
