"""``db.explain``: the exact requests a call would send, planned without sending anything."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from dynorm.core.chunks import BATCH_GET_MAX, BATCH_WRITE_MAX, chunked, key_id
from dynorm.core.errors import DefinitionError
from dynorm.core.expressions import Condition
from dynorm.core.requests import (
    CollectionRead,
    Request,
    batch_get,
    batch_get_tables,
    batch_write,
    batch_write_tables,
)
from dynorm.core.steps import (
    Fetch,
    Plan,
    ReadEach,
    SendAll,
    Step,
    Together,
    Unread,
    WriteBatch,
    request_of,
    run_sync,
    together_fetches,
    together_writes,
)

from .cascade import DEFAULT_MAX_ITEMS
from .model import ModelInfo, ModelTable
from .reading import Finished
from .readplan import (
    GetReads,
    KeyOf,
    TransactGetReads,
    normalize_options,
    plan_get,
    plan_query_load,
    query_read,
    transact_get_reads,
)
from .relations import HasManyRelation, LoadOption, Relationship
from .table import Table
from .writeplan import WritePlanner
from .writes import Returns, UpdateOps, UpdateOptions, return_values

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Explain", "KeyOf", "TransactGetReads", "transact_get_reads"]


class Explain(msgspec.Struct):
    """``db.explain``: the exact requests a call would send, without sending anything."""

    table: Table
    table_name: str
    writes: WritePlanner
    batch_write_size: int = BATCH_WRITE_MAX
    batch_get_size: int = BATCH_GET_MAX
    #: The names of the connection's other tables, which loads across tables read.
    name_of: Callable[[ModelTable], str] | None = None

    def get_reads(
        self,
        model: type[Any],
        *,
        load: Sequence[Relationship[Any] | LoadOption] = (),
        consistent: bool = False,
        **key: object,
    ) -> GetReads:
        info = self.table.info(model)
        options = normalize_options(info, load)
        return plan_get(
            info, key, options, self.table_name, consistent=consistent, name_of=self.name_of
        )

    def get(
        self,
        model: type[Any],
        *,
        load: Sequence[Relationship[Any] | LoadOption] = (),
        consistent: bool = False,
        **key: object,
    ) -> list[Request]:
        """The requests ``db.get`` would send: the first round (sent concurrently).

        Then, for a relationship declared with ``was=``, its new layout's reads, sent once the
        old layout's (in the first round) are answered (``GetReads.then``).
        """
        reads = self.get_reads(model, load=load, consistent=consistent, **key)
        return reads.requests + reads.then

    def transact_get_reads(self, wanted: Sequence[KeyOf]) -> TransactGetReads:
        """The TransactGetItems behind ``db.transact_get``; checked before anything is sent."""
        return transact_get_reads(wanted, lambda model: (self.table.info(model), self.table_name))

    def transact_get(self, *wanted: KeyOf) -> list[Request]:
        """The TransactGetItems ``db.transact_get`` sends (one request, listed as every explain)."""
        return [self.transact_get_reads(wanted).request]

    def put(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> list[Request]:
        """The requests ``db.put`` sends for ``obj``, in order (see :meth:`plan`)."""
        return self.plan(self.writes.put(obj, condition=condition, overwrite=overwrite))

    def update(
        self,
        obj: object,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        returns: Returns = "new",
        exactly_once: bool = False,
        **ops: Unpack[UpdateOptions],
    ) -> list[Request]:
        """The requests ``db.update`` sends, in order (see :meth:`plan`).

        With ``exactly_once``: the TransactWriteItems (its ``ClientRequestToken`` is added
        when sent), then the GetItem that reads the item back unless ``returns=None``.
        """
        update = UpdateOps(**ops)
        wire = return_values(returns, update)
        plan = self.writes.update(
            obj, update, condition=condition, upsert=upsert, returns=wire, exactly_once=exactly_once
        )
        return self.plan(plan)

    def delete(
        self,
        target: object,
        /,
        *,
        condition: Condition | None = None,
        cascade: bool = False,
        max_items: int | None = DEFAULT_MAX_ITEMS,
        **key: object,
    ) -> list[Request]:
        """The requests ``db.delete`` sends.

        With ``cascade``: the root's read, the tree's reads level by level (one Query per
        relationship shown per level; one is sent per parent read), the root's condition check,
        the deletes deepest level first, and the root's delete.
        """
        plan = self.writes.delete(
            target, condition=condition, cascade=cascade, key=key, max_items=max_items
        )
        return self.plan(plan)

    def put_all(self, objs: Iterable[object]) -> list[Request]:
        """The requests ``db.put_all`` sends: reads it needs, then BatchWriteItems of 25."""
        return self.plan(self.writes.put_all(objs))

    def delete_all(self, objs: Iterable[object]) -> list[Request]:
        """The BatchWriteItem requests ``db.delete_all`` sends (25 deletes a request)."""
        return self.plan(self.writes.delete_all(objs))

    def add(self, parent: object, relationship: Relationship[Any], child: object) -> list[Request]:
        """The requests ``db.add(parent, relationship, child)`` sends."""
        return self.plan(self.writes.add(parent, _has_many(parent, relationship, "add"), child))

    def remove(
        self, parent: object, relationship: Relationship[Any], child: object
    ) -> list[Request]:
        """The requests ``db.remove(parent, relationship, child)`` sends."""
        rel = _has_many(parent, relationship, "remove")
        return self.plan(self.writes.remove(parent, rel, child))

    def plan(self, plan: Plan[Any]) -> list[Request]:
        """Every request a write plan sends, in order, planned without sending anything.

        Each read is shown as sent, and answered :class:`~dynorm.core.steps.Unread`: the writes
        after it are shown as they will be sent, with a :class:`~dynorm.FromRead` placeholder
        wherever a value comes from that read (a copy of a parent's field, stored embedded
        children, the keys of the children a cascade deletes). A write is shown on the path
        where its conditions hold and the reads find the parents unchanged: what follows a
        refusal (the children read and their copies rewritten, say) is not shown. Batches
        are shown as sent (BatchWriteItem 25 writes a request, BatchGetItem 100 keys).
        """
        sent: list[Request] = []

        def answer(step: Step) -> Any:
            if isinstance(step, Fetch):
                unique = list({key_id(k): k for k in step.keys}.values())
                read = {"ConsistentRead": True} if step.consistent else {}
                sent.extend(
                    batch_get(self.table_name, {"Keys": list(chunk), **read})
                    for chunk in chunked(unique, self.batch_get_size)
                )
                return Unread()
            if isinstance(step, WriteBatch):
                sent.extend(
                    batch_write(self.table_name, chunk)
                    for chunk in chunked(step.writes, self.batch_write_size)
                )
                return None
            if isinstance(step, Together):
                return self._together(step, sent)
            requests = request_of(step)
            sent.extend(requests)
            return (
                [Unread() for _ in requests] if isinstance(step, SendAll | ReadEach) else Unread()
            )

        run_sync(plan, answer)
        return sent

    def _together(self, step: Together, sent: list[Request]) -> list[Any]:
        """A Together's requests as they are sent (batches of several tables shared)."""
        sent += [batch_write_tables(c) for c in together_writes(step.steps, self.batch_write_size)]
        for consistent in (True, False):
            read = {"ConsistentRead": True} if consistent else {}
            sent += [
                batch_get_tables({name: {"Keys": keys, **read} for name, keys in chunk.items()})
                for chunk in together_fetches(
                    step.steps, self.batch_get_size, consistent=consistent
                )
            ]
        outcomes: list[Any] = []
        for _, inner in step.steps:
            if isinstance(inner, WriteBatch):
                outcomes.append(None)
            elif isinstance(inner, Fetch):
                outcomes.append(Unread())
            else:
                requests = request_of(inner)
                sent.extend(requests)
                outcomes.append(
                    [Unread() for _ in requests]
                    if isinstance(inner, SendAll | ReadEach)
                    else Unread()
                )
        return outcomes

    def query(
        self,
        model: type[Any],
        index: str | None = None,
        *,
        consistent: bool = False,
        load: Sequence[Relationship[Any] | LoadOption] = (),
        **components: object,
    ) -> list[Request]:
        """The requests a page of ``db.query`` sends, planned without sending anything.

        The Query first (with ``load=``: widened to the children it shares), in a list as every
        explain; with ``load=``, then what is sent for each parent the page returns, its
        parent-derived values :class:`~dynorm.FromRead` placeholders (see
        ``QueryLoadReads.after_page``). Later pages depend on the replies.
        """
        info = self.table.info(model)
        read = self.query_read(info, index, components, consistent=consistent).read
        if not load:
            return [read.request()]
        plan = plan_query_load(info, read, components, normalize_options(info, load))
        return [plan.read.request(), *plan.after_page(info, self._name_of(info))]

    def _name_of(self, info: ModelInfo[Any]) -> Callable[[ModelTable], str]:
        """The name of each table a load of ``info`` reads (another table's own, if not given)."""

        def name_of(table: ModelTable) -> str:
            if table is info.table:
                return self.table_name
            return table.name if self.name_of is None else self.name_of(table)

        return name_of

    def query_read(
        self,
        info: ModelInfo[Any],
        index: str | None,
        components: Mapping[str, object],
        *,
        consistent: bool = False,
    ) -> Finished[CollectionRead]:
        """The collection read behind ``db.query``, as it is sent (see ``finish_query``)."""
        return query_read(info, index, components, self.table_name, consistent=consistent)


def _has_many(parent: object, relationship: Relationship[Any], verb: str) -> HasManyRelation[Any]:
    """``relationship`` as a HasMany of ``parent``'s model; DefinitionError if it is not one."""
    if getattr(relationship, "owner", None) is not type(parent):
        raise DefinitionError(
            f"{relationship!r} is not a relationship of {type(parent).__name__}; pass e.g. "
            f"{type(parent).__name__}.<name>"
        )
    if not isinstance(relationship, HasManyRelation):
        raise DefinitionError(
            f"{relationship.qualname}: db.{verb} takes a HasMany relationship; set a BelongsTo "
            "link by writing the child's fields with db.put"
        )
    return relationship
