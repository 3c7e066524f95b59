"""Transactions: writes collected in a block and sent as one TransactWriteItems.

Actions are recorded as they are given and planned when the block commits, by the same write
planner as every other write: a parent's denormalized copies are rewritten inside the same
transaction, and a child's copies are filled from its parent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from dynorm.core.chunks import TRANSACT_MAX, key_id
from dynorm.core.errors import LimitExceededError, ValidationError
from dynorm.core.expressions import Condition
from dynorm.core.limits import MAX_TRANSACTION_BYTES, json_bound, request_bytes
from dynorm.core.requests import Request
from dynorm.core.steps import Plan
from dynorm.mapping.model import info_of
from dynorm.mapping.relations import relationships_of
from dynorm.mapping.state import bind
from dynorm.mapping.writeplan import Action, WritePlanner
from dynorm.mapping.writes import UpdateOps, UpdateOptions, transact_action

from .reader import Reader

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Host", "Transaction"]

T = TypeVar("T")


class Host(Protocol):
    """What a transaction needs of the Database that opened it (``Database`` is one)."""

    def planner(self, model: type[Any]) -> WritePlanner:
        """The write planner of ``model``'s table (DefinitionError if it is not connected)."""
        ...

    def transaction_plan(self, actions: Sequence[Action]) -> Plan[None]:
        """The plan of ``actions``, of whichever tables they write."""
        ...

    @property
    def explain(self) -> _Explains: ...

    def run(self, plan: Plan[T]) -> Awaitable[T]: ...

    @property
    def reads(self) -> Reader:
        """What committed objects are bound to, so their loaders read through it."""
        ...


class _Explains(Protocol):
    def plan(self, plan: Plan[Any]) -> list[Request]: ...


class Transaction:
    """Collects writes and sends them as one TransactWriteItems when the block exits cleanly."""

    def __init__(self, db: Host) -> None:
        self._db = db
        self._actions: list[Action] = []
        self._keys: dict[Any, int] = {}
        #: A cheap upper bound of the transaction's size, then its exact size once the bound
        #: passes MAX_TRANSACTION_BYTES (see _check_size).
        self._size_bound = 0
        self._size: int | None = None
        self._params: list[dict[str, Any]] = []

    def _add(self, action: Action, request: Request) -> None:
        if len(self._actions) >= TRANSACT_MAX:
            raise LimitExceededError(
                f"a transaction holds at most {TRANSACT_MAX} actions; split the work or use "
                "db.put_all for writes that need not be atomic"
            )
        planner = self._db.planner(type(action.obj))
        info = planner.table.info(type(action.obj))
        key = info.key_of(action.obj)  # checks the key fields now, not at commit
        ident = (planner.table_name, key_id(key))
        if ident in self._keys:
            raise ValidationError(
                f"action {len(self._actions)} touches the same item as action {self._keys[ident]} "
                f"({key!r}); DynamoDB allows one action per item in a transaction",
                operation="TransactWriteItems",
            )
        params = {k: v for k, v in request.params.items() if k != "ReturnValues"}
        kind = "ConditionCheck" if action.kind == "check" else next(iter(transact_action(request)))
        self._check_size(kind, params)
        self._keys[ident] = len(self._actions)
        self._actions.append(action)
        self._params.append(params)

    def _check_size(self, kind: str, params: dict[str, Any]) -> None:
        """Refuse the action that takes the transaction over MAX_TRANSACTION_BYTES."""
        if self._size is None:
            bound = json_bound(params)
            if self._size_bound + bound <= MAX_TRANSACTION_BYTES:
                self._size_bound += bound
                return
            # The loose bound is passed: measure exactly, from now on.
            self._size = sum(request_bytes(p) for p in self._params)
        size = self._size + request_bytes(params)
        if size > MAX_TRANSACTION_BYTES:
            raise LimitExceededError(
                f"action {len(self._actions)} ({kind}) would make the transaction {size} bytes, "
                f"over DynamoDB's limit of {MAX_TRANSACTION_BYTES} bytes "
                "(MAX_TRANSACTION_BYTES); split the work, or use db.put_all for writes that "
                "need not be atomic"
            )
        self._size = size

    def put(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> None:
        """Store ``obj`` (its copies filled, copies of its fields rewritten) in the transaction."""
        planner = self._db.planner(type(obj))
        request = planner.put_request(obj, condition=condition, overwrite=overwrite)
        self._add(Action("put", obj, condition=condition, overwrite=overwrite), request)

    def delete(self, obj: object, *, condition: Condition | None = None) -> None:
        """Delete ``obj``'s item in the transaction."""
        request = self._db.planner(type(obj)).delete_request(obj, condition=condition)
        self._add(Action("delete", obj, condition=condition), request)

    def update(
        self,
        obj: object,
        *,
        upsert: bool = False,
        condition: Condition | None = None,
        **ops: Unpack[UpdateOptions],
    ) -> None:
        """Change some fields of ``obj``'s item in the transaction (copies follow).

        The operations are ``db.update``'s; a transaction returns no values, so there is no
        ``returns=``: read the items after the commit. It is already exactly-once (no
        ``exactly_once=`` here): the transaction is sent with a ``ClientRequestToken`` kept
        across its retries, so DynamoDB applies it once whatever happens to the replies.
        """
        action = Action("update", obj, condition=condition, ops=UpdateOps(**ops), upsert=upsert)
        # Checked now, not at commit.
        request, _ = self._db.planner(type(obj)).update_request(action)
        self._add(action, request)

    def check(self, obj: object, condition: Condition) -> None:
        """Require ``condition`` to hold for ``obj``'s item, without writing it."""
        request = self._db.planner(type(obj)).check_request(obj, condition)
        self._add(Action("check", obj, condition=condition), request)

    def explain(self) -> list[Request]:
        """The requests committing would send, in order: the TransactWriteItems last.

        A transaction that writes a denormalized parent (or a child that copies one) reads
        first what its copies need; those reads come first, and the values they give stand in
        the transaction as placeholders (see ``db.explain.plan``). Empty when it holds no action.
        """
        if not self._actions:
            return []
        return self._db.explain.plan(self._db.transaction_plan(self._actions))

    async def commit(self) -> None:
        """Send the transaction (nothing when it holds no action)."""
        if not self._actions:
            return
        await self._db.run(self._db.transaction_plan(self._actions))
        for action in self._actions:
            if action.kind == "put" and relationships_of(info_of(type(action.obj))):
                bind(action.obj, self._db.reads)
        self._actions.clear()
        self._keys.clear()
        self._params.clear()
        self._size_bound, self._size = 0, None

    async def __aenter__(self) -> Transaction:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            await self.commit()
