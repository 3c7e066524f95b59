"""dynorm's errors as HTTP answers in a FastAPI (or Starlette) app: one call installs them.

``install_exception_handlers(app)`` gives the app a handler for each kind of dynorm error an
endpoint lets through, so that a client gets the status that says what happened rather than a
500:

=================================================  ======  ==================================
error                                              status  meaning
=================================================  ======  ==================================
ItemNotFoundError                                  404     no item at the key
ConditionFailedError (VersionConflictError too),   409     the write's condition did not hold
TransactionCanceledError                                   (the item exists, was changed ...);
                                                           a transaction cancelled only by
                                                           throttling is a 503
CodecError, LimitExceededError, KeyTemplateError,  422     a value DynamoDB would refuse (a
InvalidDataError                                           3,000-character key from the URL)
CursorError                                        400     an edited or foreign page cursor
ThrottledError, TransportError                     503     DynamoDB is busy or unreachable;
                                                           ``Retry-After`` says when to retry
=================================================  ======  ==================================

Each answer is FastAPI's error shape, ``{"detail": "<the error's message>"}``; an
``InvalidDataError`` lists its problems as FastAPI lists a body's, ``{"detail": [{"loc": [...],
"msg": ..., "type": "dynorm_invalid"}]}``. Other errors (a missing table, a write whose outcome
is unknown) are left to the app: they are the server's problem, a 500.

Starlette is imported when the function is called: ``import dynorm`` never imports it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dynorm.core.errors import (
    CodecError,
    ConditionFailedError,
    CursorError,
    InvalidDataError,
    ItemNotFoundError,
    KeyTemplateError,
    LimitExceededError,
    ThrottledError,
    TransactionCanceledError,
    TransportError,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ["STATUS_OF", "install_exception_handlers"]

#: The status each dynorm error is answered with (a subclass takes its base's unless listed).
STATUS_OF: dict[type[Exception], int] = {
    ItemNotFoundError: 404,
    ConditionFailedError: 409,
    TransactionCanceledError: 409,
    CodecError: 422,
    LimitExceededError: 422,
    KeyTemplateError: 422,
    InvalidDataError: 422,
    CursorError: 400,
    ThrottledError: 503,
    TransportError: 503,
}

Handler = Callable[["Request", Exception], Awaitable["Response"]]


def install_exception_handlers(app: Starlette, *, retry_after: int = 1) -> None:
    """Answer dynorm's errors with their HTTP status in ``app`` (FastAPI or Starlette).

    ``retry_after`` is the ``Retry-After`` (seconds) of a 503: when DynamoDB throttled the
    request or could not be reached after dynorm's own retries. See the module's table.
    """
    if retry_after < 0:
        raise ValueError(f"retry_after is in seconds, at least 0; got {retry_after!r}")
    for error, status in STATUS_OF.items():
        app.add_exception_handler(error, _handler(status, retry_after))


#: Reasons of a cancelled transaction that mean "busy", not "conflict": answered 503.
_BUSY: frozenset[str] = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})


def _handler(status: int, retry_after: int) -> Handler:
    from starlette.responses import JSONResponse  # noqa: PLC0415 - only when installed

    async def answer(request: Request, exc: Exception) -> Response:
        code = status
        failed = exc.failed if isinstance(exc, TransactionCanceledError) else ()
        if failed and all(reason.code in _BUSY for reason in failed):
            code = 503  # throttled, not refused: worth a retry
        headers = {"Retry-After": str(retry_after)} if code == 503 else None
        return JSONResponse({"detail": _detail(exc)}, status_code=code, headers=headers)

    return answer


def _detail(exc: Exception) -> Any:
    """What the answer says: the message, or a body's problems as FastAPI lists them."""
    if isinstance(exc, InvalidDataError):
        return [
            {"loc": list(loc), "msg": text, "type": "dynorm_invalid"} for loc, text in exc.problems
        ]
    return str(exc)
