"""Transactions: writes collected in a block and sent as one TransactWriteItems."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._batch import TRANSACT_MAX, key_id
from ._codec import Item
from ._errors import LimitExceededError, ValidationError
from ._expressions import Condition
from ._limits import MAX_TRANSACTION_BYTES, json_bound, request_bytes
from ._plans import Request
from ._state import bind
from ._writes import plan_update

if TYPE_CHECKING:
    from ._database import Database

__all__ = ["Transaction"]


class Transaction:
    """Collects writes and sends them as one TransactWriteItems when the block exits cleanly."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._actions: list[dict[str, Any]] = []
        self._keys: dict[Any, int] = {}
        self._bound: list[object] = []
        #: A cheap upper bound of the transaction's size, then its exact size once the bound
        #: passes MAX_TRANSACTION_BYTES (see _check_size).
        self._size_bound = 0
        self._size: int | None = None

    def _add(self, kind: str, request: Request, key: Item) -> None:
        if len(self._actions) >= TRANSACT_MAX:
            raise LimitExceededError(
                f"a transaction holds at most {TRANSACT_MAX} actions; split the work or use "
                "db.put_all for writes that need not be atomic"
            )
        ident = key_id(key)
        if ident in self._keys:
            raise ValidationError(
                f"action {len(self._actions)} touches the same item as action {self._keys[ident]} "
                f"({key!r}); DynamoDB allows one action per item in a transaction",
                operation="TransactWriteItems",
            )
        params = {k: v for k, v in request.params.items() if k != "ReturnValues"}
        self._check_size(kind, params)
        self._keys[ident] = len(self._actions)
        self._actions.append({kind: params})

    def _check_size(self, kind: str, params: dict[str, Any]) -> None:
        """Refuse the action that takes the transaction over MAX_TRANSACTION_BYTES."""
        if self._size is None:
            bound = json_bound(params)
            if self._size_bound + bound <= MAX_TRANSACTION_BYTES:
                self._size_bound += bound
                return
            # The loose bound is passed: measure exactly, from now on.
            self._size = sum(request_bytes(p) for a in self._actions for p in a.values())
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
        info = self._db.table.info(type(obj))
        request = self._db.explain.put(obj, condition=condition, overwrite=overwrite)
        kind = "Put" if request.operation == "PutItem" else "Update"
        self._add(kind, request, info.key_of(obj))
        self._bound.append(obj)

    def delete(self, obj: object, *, condition: Condition | None = None) -> None:
        request = self._db.explain.delete(obj, condition=condition)
        self._add("Delete", request, request.params["Key"])

    def update(
        self,
        obj: object,
        *,
        set: Mapping[str, object] | None = None,  # noqa: A002 - DynamoDB's SET
        remove: Iterable[str] = (),
        add: Mapping[str, object] | None = None,
        condition: Condition | None = None,
    ) -> None:
        info = self._db.table.info(type(obj))
        request = plan_update(
            info,
            info.values_of(obj),
            self._db.table_name,
            set=set,
            remove=remove,
            add=add,
            condition=condition,
        )
        self._add("Update", request, request.params["Key"])

    def check(self, obj: object, condition: Condition) -> None:
        """Require ``condition`` to hold for ``obj``'s item, without writing it."""
        delete = self._db.explain.delete(obj, condition=condition)
        self._add("ConditionCheck", delete, delete.params["Key"])

    def explain(self) -> Request:
        return Request("TransactWriteItems", {"TransactItems": list(self._actions)})

    async def commit(self) -> None:
        if not self._actions:
            return
        await self._db.send(self.explain())
        self._keys.clear()
        self._size_bound, self._size = 0, None
        for obj in self._bound:
            if self._db.table.info(type(obj)).relationships:
                bind(obj, self._db)
        self._actions.clear()

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
