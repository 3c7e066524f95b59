"""The errors dynorm raises. Every message says what to change.

::

    DynormError
    ├── DefinitionError (TypeError)          a model, template or relationship is declared wrongly
    ├── KeyTemplateError (ValueError)        values do not fit a key template
    ├── CodecError (ValueError)              a value cannot be stored or read as its field's type
    │   └── UpgradeError                     a model's upgrade function failed on a stored item
    ├── ExpressionError (ValueError)         a condition or update expression cannot be built
    ├── NotLoadedError (AttributeError)      relationship data was read before it was loaded
    ├── DetachedError (RuntimeError)         a loader needs a Database but the object has none
    ├── CursorError (ValueError)             a page cursor is malformed, edited or another query's
    ├── LimitExceededError (ValueError)      a request would break a DynamoDB or dynorm limit
    ├── ConfigurationError (ValueError)      a connect() setting or credential cannot work
    ├── TransportError (ConnectionError)     DynamoDB could not be reached or did not answer
    └── DatabaseError                        DynamoDB refused a request
        ├── ItemNotFoundError (LookupError)
        ├── ConditionFailedError
        │   ├── VersionConflictError         a versioned item changed since it was read
        │   └── StaleItemError               an update met an item stored at an older schema version
        ├── CopiesIncompleteError            a parent is written, some copies of it are not
        ├── OutcomeUnknownError              a write's reply was lost: it may or may not be stored
        ├── TransactionCanceledError
        ├── TableNotFoundError (LookupError)
        ├── ThrottledError
        ├── UnsupportedOperationError        the server (an emulator) lacks the operation
        └── ValidationError (ValueError)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

__all__ = [
    "CancellationReason",
    "CodecError",
    "ConditionFailedError",
    "ConfigurationError",
    "CopiesIncompleteError",
    "CursorError",
    "DatabaseError",
    "DefinitionError",
    "DetachedError",
    "DynormError",
    "ExpressionError",
    "InvalidDataError",
    "ItemNotFoundError",
    "KeyTemplateError",
    "LimitExceededError",
    "NotLoadedError",
    "OutcomeUnknownError",
    "StaleItemError",
    "TableNotFoundError",
    "ThrottledError",
    "TransactionCanceledError",
    "TransportError",
    "UnsupportedOperationError",
    "UpgradeError",
    "ValidationError",
    "VersionConflictError",
    "cancelled",
    "did_you_mean",
]


def did_you_mean(name: str, options: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the option closest to a misspelt ``name``, else ``""``."""
    import difflib  # noqa: PLC0415 - an error's path only; importing it costs a cold start

    close = difflib.get_close_matches(name, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class DynormError(Exception):
    """Root of every error dynorm raises."""


class DefinitionError(DynormError, TypeError):
    """A table, model, key template or relationship is declared in a way that cannot work."""


class KeyTemplateError(DynormError, ValueError):
    """Field values do not fit a key template (missing, out of order, or unparsable)."""


class CodecError(DynormError, ValueError):
    """A value cannot be converted to or from its DynamoDB representation."""


class UpgradeError(CodecError):
    """An upgrade function of a model (``@table.model(upgrades=...)``) failed on a stored item.

    It raised (the exception is chained as ``__cause__``) or returned no dict; the message names
    the model, the version it upgraded from and the item's key. ``version`` is that version.
    """

    version: int | None = None


class ExpressionError(DynormError, ValueError):
    """A condition or update expression cannot be built from what was given."""


class InvalidDataError(DynormError, ValueError):
    """JSON data given to ``dynorm.from_jsonable`` does not make an instance of the model.

    ``problems`` lists each one as (place, what is wrong); the place is a tuple of field names
    and list positions, ``("users", 0, "username")``.
    """

    def __init__(self, model: str, problems: list[tuple[tuple[str | int, ...], str]]) -> None:
        self.model = model
        self.problems = problems
        lines = "; ".join(f"{_place(loc) or '(the data)'}: {text}" for loc, text in problems)
        super().__init__(f"{model}: {lines}")


def _place(loc: tuple[str | int, ...]) -> str:
    """``("users", 0, "username")`` as ``users[0].username``."""
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else f".{step}"
    return text.lstrip(".")


class NotLoadedError(DynormError, AttributeError):
    """Relationship data was read before any request loaded it (dynorm never loads implicitly)."""


class DetachedError(DynormError, RuntimeError):
    """A loader needs a Database, but the object was never read from or written by one."""


class CursorError(DynormError, ValueError):
    """A page cursor is malformed, edited, wrongly signed, or from another query or parent."""


class LimitExceededError(DynormError, ValueError):
    """A request would exceed a DynamoDB limit or a limit set on a relationship."""


class ConfigurationError(DynormError, ValueError):
    """A setting of connect() (or the credentials it found) cannot work; nothing was sent.

    The message names the setting: the connect() argument or the environment variable.
    """


class TransportError(DynormError, ConnectionError):
    """DynamoDB could not be reached, or did not answer in time, on every attempt.

    ``request_sent`` is False when no connection was made (refused, connect timeout, unknown
    host): the request never arrived. True means it may have arrived and been applied.
    """

    def __init__(self, message: str, *, operation: str = "", request_sent: bool = True) -> None:
        super().__init__(message)
        self.operation = operation
        self.request_sent = request_sent


class DatabaseError(DynormError):
    """DynamoDB (or a compatible server) refused a request.

    ``code`` is the AWS error code, ``operation`` the API action that failed.
    """

    def __init__(self, message: str, *, code: str = "", operation: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.operation = operation


class ItemNotFoundError(DatabaseError, LookupError):
    """No item has the requested key."""


class ConditionFailedError(DatabaseError):
    """A write's condition did not hold, so nothing was written.

    ``item`` is the item as stored when the condition was checked, where DynamoDB returned it
    (``ReturnValuesOnConditionCheckFailure="ALL_OLD"``), else None.
    """

    item: dict[str, Any] | None = None


class VersionConflictError(ConditionFailedError):
    """A versioned item changed (or was deleted, or already exists) since the object was read.

    Nothing was written. Read the item again (``await db.get(...)``), apply the change to what
    is stored now, and write that. ``expected`` is the version the write required (None: that
    no item existed) and ``stored`` the version found, where it is known (None if the item is
    absent or was not read back).
    """

    expected: int | None = None
    stored: int | None = None


class StaleItemError(ConditionFailedError):
    """An update met an item stored at an older schema version; nothing was written.

    An UpdateExpression changes some attributes of the item as stored: applied to an item of an
    older shape, it would leave it half in each. Bring the item to the current version first:
    ``upgrade_items(db, Model)`` (``dynorm migrate app:table Model --upgrade``) for every item,
    or ``db.get`` (which upgrades it in memory) then ``db.put`` for this one. ``stored`` is the
    version found, ``current`` the model's.
    """

    stored: int | None = None
    current: int | None = None


class OutcomeUnknownError(DatabaseError):
    """A write's reply was lost and dynorm cannot tell whether DynamoDB applied it.

    Raised only for writes that are not safe to repeat blindly (conditional writes, ``add=``,
    list appends) after an attempt whose reply never came and a check that could not settle
    it. Read the item (``consistent=True``) to see whether the change is there before
    repeating the write.
    """


class CopiesIncompleteError(DatabaseError):
    """A parent was written, but some of the denormalized copies it changed were not rewritten.

    ``pending`` copies still hold old values and ``rewritten`` were rewritten; the rest of the
    fan-out was cancelled. ``await db.sync_copies(parent)`` (or writing the parent again)
    repairs them.
    """

    def __init__(self, message: str, *, pending: int, rewritten: int) -> None:
        super().__init__(message, code="CopiesIncomplete", operation="TransactWriteItems")
        self.pending = pending
        self.rewritten = rewritten


class TableNotFoundError(DatabaseError, LookupError):
    """The table does not exist; create it with ``await db.create_table()``."""


class ThrottledError(DatabaseError):
    """DynamoDB throttled the request and retries ran out."""


class UnsupportedOperationError(DatabaseError):
    """The server does not implement the operation (``UnknownOperationException``).

    DynamoDB implements every operation dynorm sends; a local emulator may not (dynalite has
    no transactions). The message names the operation and the endpoint.
    """


class ValidationError(DatabaseError, ValueError):
    """DynamoDB rejected the request as invalid."""


class CancellationReason(msgspec.Struct, frozen=True):
    """Why one action of a cancelled transaction failed (``code`` is ``"None"`` if it did not).

    ``item`` is the item as stored when a condition failed, where the action asked for it
    (``ReturnValuesOnConditionCheckFailure="ALL_OLD"``), else None. ``table`` (the table's
    name as sent), ``key`` (its key attributes, as sent) and ``model`` (the model the key
    belongs to, None when no model of the table claims it) name the action's item.
    """

    index: int
    code: str
    message: str
    item: dict[str, Any] | None = None
    table: str | None = None
    key: dict[str, Any] | None = None
    model: str | None = None

    def describe(self) -> str:
        """``action 2 (Order in table 'orders', pk='ORDER#1', sk='ORDER#1'): Code message``."""
        where = [] if self.model is None else [self.model]
        if self.table is not None:
            where.append(f"in table {self.table!r}")
        shown = ", ".join(f"{a}={_key_value(v)}" for a, v in (self.key or {}).items())
        place = " ".join(where) + (", " if where and shown else "") + shown
        head = f"action {self.index}" + (f" ({place})" if place else "")
        return f"{head}: {self.code} {self.message}".strip()


def _key_value(value: object) -> str:
    """A key attribute's typed value as written in a message: ``'ORDER#1'``, ``42``, ``b'...'``."""
    if isinstance(value, dict) and len(value) == 1:
        ((tag, inner),) = value.items()
        return str(inner) if tag == "N" else repr(inner)
    return repr(value)


class TransactionCanceledError(DatabaseError):
    """A transaction was cancelled; nothing in it was written.

    ``reasons`` holds one entry per action, in the order the actions were added; ``failed``
    only those whose code is not ``"None"``.
    """

    def __init__(
        self,
        message: str,
        *,
        reasons: Sequence[CancellationReason] = (),
        code: str = "TransactionCanceledException",
        operation: str = "TransactWriteItems",
    ) -> None:
        super().__init__(message, code=code, operation=operation)
        self.reasons = tuple(reasons)

    @property
    def failed(self) -> tuple[CancellationReason, ...]:
        """The actions that caused the cancellation."""
        return tuple(r for r in self.reasons if r.code not in ("None", ""))


def cancelled(
    reasons: Sequence[CancellationReason], message: str, *, operation: str = "TransactWriteItems"
) -> TransactionCanceledError:
    """The TransactionCanceledError of ``reasons``: its message names each failed action."""
    failed = [r.describe() for r in reasons if r.code not in ("None", "")]
    return TransactionCanceledError(
        f"transaction cancelled, nothing was written ({'; '.join(failed) or message})",
        reasons=reasons,
        operation=operation,
    )
