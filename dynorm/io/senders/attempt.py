"""One attempt of one request: which sender sends it, and what its failure means.

The one place above the adapters (:mod:`dynorm.io.senders.base`): an adapter reports a failure
in plain terms (:class:`~dynorm.io.senders.base.SendError`), and :class:`Attempt` turns it into
the :class:`~dynorm.DynormError` a caller sees: an error reply's code into its subclass (one
table, :data:`_ERRORS`), a failure on the wire into a TransportError that says whether the
request may have been sent (``request_sent``) and which timeout to raise, a CA bundle that
cannot be read into a TLS error, a closed connection into an error saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    CancellationReason,
    ConditionFailedError,
    DatabaseError,
    DynormError,
    TableNotFoundError,
    ThrottledError,
    TransportError,
    UnsupportedOperationError,
    ValidationError,
    cancelled,
)
from dynorm.core.requests import Request
from dynorm.wire.protocol import CONTROL_PLANE, DATA_PLANE, is_clock_skew
from dynorm.wire.retry import THROTTLING_CODES, is_transient

from .base import (
    ClosedError,
    CredentialsError,
    ParamsError,
    ReplyError,
    Sender,
    SendError,
    Timeouts,
    TLSSetupError,
    WireError,
)

__all__ = ["Attempt", "closed", "database_error"]

#: The operations dynorm's own signed requests carry; any other goes to a connection's fallback.
SIGNED: Final = DATA_PLANE | CONTROL_PLANE

_ERRORS: Final[Mapping[str, type[DatabaseError]]] = {
    "ConditionalCheckFailedException": ConditionFailedError,
    "ResourceNotFoundException": TableNotFoundError,
    "ProvisionedThroughputExceededException": ThrottledError,
    "ThrottlingException": ThrottledError,
    "RequestLimitExceeded": ThrottledError,
    "TransactionInProgressException": ThrottledError,
    "UnknownOperationException": UnsupportedOperationError,
    "ValidationException": ValidationError,
}


class Attempt:
    """One attempt of one request through a connection's senders, every failure mapped.

    ``sender`` sends what dynorm signs itself (:data:`SIGNED`: the fast path), ``fallback``
    every other operation; without a ``sender`` (``connect(fast_path=False)``) the fallback
    sends everything. The Transport retries around it.
    """

    def __init__(self, sender: Sender | None, fallback: Sender, *, timeouts: Timeouts) -> None:
        self._sender = fallback if sender is None else sender
        self._routed: frozenset[str] = frozenset() if sender is None else SIGNED
        self._fallback = fallback
        self._timeouts = timeouts
        #: Whether requests go out on dynorm's own fast path.
        self.fast_path = sender is not None

    async def __call__(self, request: Request) -> dict[str, Any]:
        sender = self._sender if request.operation in self._routed else self._fallback
        try:
            return await sender.send(request)
        except SendError as failure:
            raise error_of(failure, request, self._timeouts) from failure.cause


def error_of(failure: SendError, request: Request, timeouts: Timeouts) -> DynormError:
    """The DynormError a sender's failure of ``request`` stands for."""
    operation = request.operation
    if isinstance(failure, ReplyError):
        return database_error(
            failure.code, failure.message, failure.body, request, failure.endpoint
        )
    if isinstance(failure, WireError):
        return _transport_error(failure, request, timeouts)
    if isinstance(failure, ParamsError):
        return ValidationError(f"{operation}: {failure.said}", operation=operation)
    if isinstance(failure, CredentialsError):
        return DynormError(
            f"{operation}: no usable AWS credentials ({failure.said}); pass "
            "connect(aws_access_key_id=..., aws_secret_access_key=...) or profile=, or set "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        )
    if isinstance(failure, TLSSetupError):
        return DynormError(
            f"{operation}: cannot set up TLS for {failure.endpoint} ({failure.error}); nothing "
            "was sent. Check the CA bundle: AWS_CA_BUNDLE, REQUESTS_CA_BUNDLE or the "
            "profile's ca_bundle"
        )
    if isinstance(failure, ClosedError):
        return closed(operation if failure.named else None)
    raise AssertionError(f"a sender's failure no rule maps: {failure!r}")  # pragma: no cover


def closed(operation: str | None = None) -> DynormError:
    """The error of a request sent once the connection was closed."""
    said = f"{operation}: " if operation else ""
    return DynormError(
        f"{said}the Database's connection is closed; use the Database only inside "
        "`async with connect(...) as db:`"
    )


def database_error(
    code: str, message: str, reply: Mapping[str, Any], request: Request, endpoint: str
) -> DatabaseError:
    """The DatabaseError for an error reply from ``endpoint``.

    ``reply`` holds its reasons and returned item.
    """
    if code == "TransactionCanceledException":
        reasons = [
            CancellationReason(
                i, str(r.get("Code", "None")), str(r.get("Message", "")), _item(r.get("Item"))
            )
            for i, r in enumerate(reply.get("CancellationReasons") or [])
        ]
        return cancelled(reasons, message, operation=request.operation)
    if code == "ResourceNotFoundException":
        table = request.params.get("TableName", "?")
        message = f"{message} (table {table!r}: create it with `await db.create_table()`)"
    elif code in THROTTLING_CODES:
        message += " (throttled: raise the table's capacity, or connect(max_attempts=...))"
    elif is_transient(code):
        message = f"{message or code} (a failure on DynamoDB's side; try again later)"
    elif is_clock_skew(code, message):
        message += " (this machine's clock is off: dynorm corrects for it and retries)"
    elif code == "UnknownOperationException":
        message = _unsupported(request.operation, endpoint, message)
    cls = _ERRORS.get(code, DatabaseError)
    translated = cls(f"{request.operation}: {message}", code=code, operation=request.operation)
    if isinstance(translated, ConditionFailedError):
        translated.item = _item(reply.get("Item"))
    return translated


def _unsupported(operation: str, endpoint: str, said: str) -> str:
    """Which server lacks which operation (dynalite answers transactions with no message)."""
    lacks = (
        "; DynamoDB does (dynalite, for one, has no transactions: test them against DynamoDB "
        "Local, moto or DynamoDB itself)"
        if operation.startswith("Transact")
        else "; DynamoDB does (the server is an emulator that lacks it, or not DynamoDB)"
    )
    # dynalite says nothing (botocore then makes "An error occurred (...)"; some servers "None").
    said = "" if not said or said == "None" or "UnknownOperationException" in said else f": {said}"
    return (
        f"the server at {endpoint} does not support {operation} "
        f"(UnknownOperationException{said}){lacks}"
    )


def _item(value: object) -> Item | None:
    return value if isinstance(value, dict) else None


def _transport_error(failure: WireError, request: Request, config: Timeouts) -> TransportError:
    """A TransportError whose message says what happened and what to check."""
    operation = request.operation
    kind, endpoint, exc = failure.kind, failure.endpoint, failure.error
    if kind == "damaged":
        return TransportError(
            f"{operation}: the reply from {endpoint} does not match its checksum "
            "(x-amz-crc32): it was damaged on the way, and the request may have been "
            "applied. Check the network path (proxies, load balancers)",
            operation=operation,
            request_sent=True,
        )
    if kind == "not_json":
        return TransportError(
            f"{operation}: the reply from {endpoint} (HTTP {failure.status}) is not "
            f"DynamoDB's JSON ({exc}), and the request may have been applied. Check "
            "the endpoint and the network path (proxies, captive portals)",
            operation=operation,
            request_sent=True,
        )
    if kind in {"connect_timeout", "proxy", "refused", "unsent_deadline"}:
        bound = (
            "connect(attempt_timeout=...)"
            if kind == "unsent_deadline"
            else "connect(connect_timeout=...)"
        )
        if kind == "connect_timeout":
            what = f"no connection to {endpoint} within connect_timeout={config.connect_timeout}s"
        elif kind == "unsent_deadline":
            what = f"no connection to {endpoint} within attempt_timeout={config.attempt_timeout}s"
        elif kind == "proxy":
            what = f"could not connect through the proxy ({exc})"
        else:
            what = f"could not connect to {endpoint} ({failure.detail})"
        return TransportError(
            f"{operation}: {what}; nothing was sent. Check connect(endpoint_url=...) and "
            "region_name, that the network (proxy, firewall, VPC endpoint) reaches it, and "
            f"{bound}",
            operation=operation,
            request_sent=False,
        )
    if kind == "read_timeout":
        what = f"no reply from {endpoint} within read_timeout={config.read_timeout}s"
    elif kind == "deadline":
        what = (
            f"the reply from {endpoint} did not end within attempt_timeout="
            f"{config.attempt_timeout}s (it came too slowly, or never ended)"
        )
    else:
        what = f"the connection to {endpoint} broke before a reply came ({exc})"
    return TransportError(
        f"{operation}: {what}; the request may have been applied. Check that the endpoint is "
        "up and reachable (network, proxy, load balancer), or raise "
        + ("connect(attempt_timeout=...)" if kind == "deadline" else "connect(read_timeout=...)"),
        operation=operation,
        request_sent=True,
    )
