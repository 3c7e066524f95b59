"""How many children of a relationship are still in the old layout (``migration_status``).

One consistent Scan of the table (every page, every item read whole: its read capacity is the
table's size, as a migration's pass is), each item asked the question the migration's own
planning asks of it: would it move? Nothing is written.
"""

from __future__ import annotations

from typing import Any

from dynorm.core.codec.converter import Item
from dynorm.core.errors import CodecError, LimitExceededError
from dynorm.core.keys import key_text
from dynorm.core.requests import ScanRead
from dynorm.io.database import Database
from dynorm.io.paging import segment_pages
from dynorm.mapping.table import Table

from .migrate_kinds import Copies, Embed, Kind, Move, Unembed

__all__ = ["count_old", "old_children"]


def old_children(kind: Kind, table: Table, raw: Item) -> int:
    """The children the stored item ``raw`` holds in the old layout of ``kind``'s move.

    A moved collection (``move``): 1 for an old-layout child item, including one that does not
    decode, or that the reads of ``was=`` do not see (its old shard segment not last): the
    migration skips it and lists it, it stays there until fixed. Out of an
    embedded layout (``unembed``): the parent's map entries (list members). Into one
    (``embed``): 1 for an item of the old child model in the old collection's key shape.
    """
    if isinstance(kind, Move):
        try:
            return int(kind.moved_item(raw) is not None or kind.items.stranded(raw))
        except (CodecError, LimitExceededError):
            return 1
    if isinstance(kind, Unembed):
        if table.model_of(raw) is not kind.rel.owner_info:
            return 0
        stored = raw.get(kind.codec.attribute) or {}
        return len(stored.get("M") or stored.get("L") or ())
    if isinstance(kind, Embed):
        child = kind.old.target_info
        if table.model_of(raw) is not child:
            return 0
        index = kind.source.index
        template = child.key_templates(index)[1]
        sk = table.key_attributes(index)[1]
        text = key_text(raw.get(sk)) if sk is not None else None
        return int(template is None or (text is not None and template.matches(text)))
    return 0


async def count_old(db: Database, kind: Kind, *, page_size: int) -> int:
    """The old-layout children in ``db``'s table: a consistent Scan of it, page by page.

    Children that stay where they are and only need copies (``was=Partition()`` with
    ``via=Denormalized(copy=...)``) are asked of their parent: each parent of a page has its
    children read (a Query each, as the migration's own pass reads them), and those whose
    copies differ from the parent's fields are counted, with the ones a migration would refuse.
    """
    found = 0

    async def page(_: int, response: dict[str, Any]) -> None:
        nonlocal found
        items = response.get("Items") or []
        if isinstance(kind, Copies):
            plan = await kind.plan(db, [dict(raw) for raw in items])
            found += plan.written + len(plan.refused) + len(plan.skipped)
            return
        found += sum(old_children(kind, db.table, dict(raw)) for raw in items)

    scan = ScanRead(db.table_name, consistent=True).request()
    await segment_pages(db.send, [scan], page, starts=[None], limit=page_size)
    return found
