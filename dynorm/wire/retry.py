"""Retrying one request: which failures to retry, and settling writes whose reply was lost.

A failed attempt either certainly did nothing ("not_applied": DynamoDB refused it, or the
connection was never made) or may have been applied ("unknown": a reset or timeout after the
request was sent, a 500). Repeating an idempotent request is harmless either way. A write that
is not (see :attr:`~dynorm.core.requests.Request.retry`) is repeated in a form that cannot
apply twice:

- ``"verify"`` (a conditional write): if the condition fails after an unknown attempt, the
  stored item settles it: is it exactly what the write would have left?
- ``"token"`` (ADD, list appends, positional list changes): every attempt also sets
  :data:`TOKEN_ATTRIBUTE` to a value unique to the call. After an attempt whose outcome is
  unknown, the write is not sent again (another client's write may have replaced our token in
  between, and a resend would then apply twice): a consistent read shows our token (done) or
  not (outcome unknown). Attempts repeated after surely-refused ones carry a guard, "the token
  is not ours yet", so that even then the write cannot apply twice.

A transaction cancelled only because another one held its items (``TransactionConflict``) was
not applied, and is sent again as it was (its ``ClientRequestToken`` too).

Everything here is pure; the loop that sends lives in ``dynorm/io/transport.py``.
"""

from __future__ import annotations

import base64
import decimal
import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import msgspec

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import (
    DatabaseError,
    DynormError,
    TransactionCanceledError,
    TransportError,
)
from dynorm.core.requests import Request

from .protocol import is_clock_skew

__all__ = [
    "THROTTLING_CODES",
    "TOKEN_ATTRIBUTE",
    "TRANSIENT_CODES",
    "Outcome",
    "RetryQuota",
    "Verdict",
    "applied",
    "asking_for_old",
    "classify",
    "is_transient",
    "needs_token",
    "new_token",
    "prepare",
    "same_value",
    "settled_response",
    "verification_read",
]

#: Did a failed attempt change anything? ``unknown`` when it may have.
Outcome = Literal["not_applied", "unknown"]

#: The attribute a token-guarded write stores its call's token in. Decoders read only their
#: fields, so it is never seen on read; it costs its bytes in every item it is written to.
TOKEN_ATTRIBUTE: Final = "dynorm:wt"  # noqa: S105 - an attribute name, not a secret
_TOKEN_NAME: Final = "#dynormwt"  # noqa: S105 - a placeholder, not a secret
_TOKEN_VALUE: Final = ":dynormwt"  # noqa: S105 - a placeholder, not a secret

#: Error codes that mean "slow down": the request was refused, so nothing was applied.
THROTTLING_CODES: Final = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
        "LimitExceededException",
        "BandwidthLimitExceeded",
        "SlowDown",
    }
)
#: Server-side failures worth another attempt; the failed one may have been applied.
TRANSIENT_CODES: Final = frozenset(
    {
        "InternalServerError",
        "InternalFailure",
        "ServiceUnavailable",
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
    }
)

#: Retry quota (as AWS SDKs' standard mode): a retry spends these, a success pays some back.
QUOTA_CAPACITY: Final = 500
RETRY_COST: Final = 5
TIMEOUT_RETRY_COST: Final = 10
NO_RETRY_INCREMENT: Final = 1


class Verdict(msgspec.Struct, frozen=True):
    """What to do after a failed attempt: retry it?, may it have been applied?, quota cost."""

    retry: bool
    outcome: Outcome
    cost: int = 0


def classify(error: DynormError) -> Verdict:
    """Whether ``error`` is worth another attempt, and whether its attempt may have applied."""
    if isinstance(error, TransportError):
        outcome: Outcome = "unknown" if error.request_sent else "not_applied"
        return Verdict(retry=True, outcome=outcome, cost=TIMEOUT_RETRY_COST)
    if isinstance(error, TransactionCanceledError) and _only_conflicts(error):
        # Cancelled because another transaction held an item: nothing was applied, and the
        # same request (same ClientRequestToken) may be sent again, after a pause.
        return Verdict(retry=True, outcome="not_applied", cost=RETRY_COST)
    if isinstance(error, DatabaseError):
        code = error.code
        if code in THROTTLING_CODES:
            return Verdict(retry=True, outcome="not_applied", cost=RETRY_COST)
        if is_transient(code):
            return Verdict(retry=True, outcome="unknown", cost=RETRY_COST)
        if is_clock_skew(code, str(error)):
            # Refused before anything was done; the sender corrected its clock from the reply.
            return Verdict(retry=True, outcome="not_applied", cost=RETRY_COST)
    return Verdict(retry=False, outcome="not_applied")


def _only_conflicts(error: TransactionCanceledError) -> bool:
    """Whether every action that cancelled the transaction met another one in progress."""
    failed = error.failed
    return bool(failed) and all(reason.code == "TransactionConflict" for reason in failed)


def is_transient(code: str) -> bool:
    """Whether an error code is a server-side failure (botocore names a bare 5xx by status)."""
    return code in TRANSIENT_CODES or (len(code) == 3 and code.startswith("5") and code.isdigit())


class RetryQuota(msgspec.Struct):
    """A bucket of retry tokens shared by one Database, so an outage does not multiply load.

    Each retry spends ``cost`` tokens; with too few left, the error is raised instead. A
    success pays back what its retries spent (or one token when it needed none).
    """

    capacity: int = QUOTA_CAPACITY
    available: int = -1

    def __post_init__(self) -> None:
        if self.available < 0:
            self.available = self.capacity

    def acquire(self, cost: int) -> bool:
        if cost > self.available:
            return False
        self.available -= cost
        return True

    def release(self, amount: int) -> None:
        self.available = min(self.capacity, self.available + amount)


def new_token() -> str:
    """A value unique to one call (96 random bits, 16 characters)."""
    return secrets.token_urlsafe(12)


def needs_token(request: Request) -> bool:
    """Whether :func:`prepare` puts a token into ``request``."""
    return request.retry == "token" or (
        request.operation == "TransactWriteItems" and "ClientRequestToken" not in request.params
    )


def prepare(request: Request, token: str) -> Request:
    """The request as every attempt sends it: ``token`` added where ``request.retry`` asks.

    A TransactWriteItems gets a ``ClientRequestToken`` (unless it has one), which makes
    DynamoDB apply it once however often it arrives within ten minutes.
    """
    if request.operation == "TransactWriteItems" and "ClientRequestToken" not in request.params:
        return msgspec.structs.replace(
            request, params={**request.params, "ClientRequestToken": token}
        )
    if request.retry != "token":
        return request
    params = dict(request.params)
    names = dict(params.get("ExpressionAttributeNames", {}))
    values = dict(params.get("ExpressionAttributeValues", {}))
    names[_TOKEN_NAME] = TOKEN_ATTRIBUTE
    values[_TOKEN_VALUE] = {"S": token}
    expression = str(params.get("UpdateExpression", ""))
    found = re.search(r"\bSET\b", expression)
    assignment = f"{_TOKEN_NAME} = {_TOKEN_VALUE}"
    if found is None:
        expression = f"SET {assignment} {expression}".rstrip()
    else:
        expression = f"{expression[: found.end()]} {assignment},{expression[found.end() :]}"
    guard = f"(attribute_not_exists({_TOKEN_NAME}) OR {_TOKEN_NAME} <> {_TOKEN_VALUE})"
    condition = params.get("ConditionExpression")
    params.update(
        UpdateExpression=expression,
        ConditionExpression=f"({condition}) AND {guard}" if condition else guard,
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=values,
    )
    return msgspec.structs.replace(request, params=params)


def asking_for_old(request: Request) -> Request:
    """The request with the stored item returned if its condition fails (no extra cost)."""
    if request.operation not in {"PutItem", "UpdateItem", "DeleteItem"}:
        return request
    params = {**request.params, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    return msgspec.structs.replace(request, params=params)


def verification_read(request: Request, key_attributes: Sequence[str]) -> Request:
    """The consistent GetItem that reads back the item ``request`` writes."""
    params = request.params
    key = params.get("Key")
    if key is None:
        item = params["Item"]
        key = {name: item[name] for name in key_attributes}
    return Request(
        "GetItem", {"TableName": params["TableName"], "Key": key, "ConsistentRead": True}
    )


def applied(request: Request, stored: Item | None, token: str) -> bool:
    """Whether ``stored`` (the item now, None if absent) shows that ``request`` was applied.

    ``request`` is the prepared request (token included). A token write is applied when our
    token is stored; a put when the stored item is exactly ours; a delete when the item is
    gone; an update of SET/REMOVE only when every set value is there and every removed
    attribute is not. Anything else cannot be told, so counts as not shown.
    """
    params = request.params
    if request.retry == "token":
        return stored is not None and stored.get(TOKEN_ATTRIBUTE) == {"S": token}
    if request.operation == "DeleteItem":
        return stored is None
    if stored is None:
        return False
    if request.operation == "PutItem":
        return same_value({"M": stored}, {"M": params["Item"]})
    if request.operation == "UpdateItem":
        return _update_shown(params, stored)
    return False


def settled_response(request: Request, stored: Item | None) -> dict[str, Any]:
    """What the write's own response would have held, built from the stored item."""
    if request.params.get("ReturnValues") == "ALL_NEW" and stored is not None:
        return {"Attributes": stored}
    return {}


# -- comparing stored values -------------------------------------------------------------------


def _bytes(value: bytes | str) -> bytes:
    # botocore hands over bytes; a raw JSON body (dynorm's fast path) carries base64 text.
    return base64.b64decode(value, validate=True) if isinstance(value, str) else bytes(value)


def _normal(av: AttributeValue) -> object:
    ((kind, value),) = av.items()
    if kind == "N":
        return kind, decimal.Decimal(value)
    if kind == "B":
        return kind, _bytes(value)
    if kind == "SS":
        return kind, frozenset(value)
    if kind == "NS":
        return kind, frozenset(decimal.Decimal(v) for v in value)
    if kind == "BS":
        return kind, frozenset(_bytes(v) for v in value)
    if kind == "M":
        return kind, {name: _normal(member) for name, member in value.items()}
    if kind == "L":
        return kind, [_normal(member) for member in value]
    return kind, value


def same_value(a: AttributeValue, b: AttributeValue) -> bool:
    """Whether two AttributeValues are the same stored value.

    DynamoDB normalises what it stores (``1.50`` reads back as ``1.5``, sets in any order),
    and a binary comes back as bytes or as base64 text depending on the parser.
    """
    return _normal(a) == _normal(b)


# -- reading an UpdateExpression back ----------------------------------------------------------

# Patterns, compiled on first use by ``re``'s own cache: importing dynorm compiles no regex.
_CLAUSE = r"\b(SET|REMOVE|ADD|DELETE)\b"
_IF_NOT_EXISTS = r"if_not_exists\(\s*([^,()]+?)\s*,\s*(:\w+)\s*\)"
_STEP = r"(#?[\w-]+)((?:\[\d+\])*)"


def _split_top(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _resolve(path: str, names: Mapping[str, str], stored: Item) -> AttributeValue | None:
    """The value at a placeholder path (``#n0.#n1[2]``) in ``stored``, or None if absent."""
    node: AttributeValue | None = {"M": stored}
    for step in path.split("."):
        match = re.fullmatch(_STEP, step.strip())
        if match is None or node is None:
            return None
        name = names.get(match[1], match[1])
        members = node.get("M")
        node = members.get(name) if isinstance(members, dict) else None
        for index in re.findall(r"\d+", match[2]):
            elements = None if node is None else node.get("L")
            position = int(index)
            if not isinstance(elements, list) or position >= len(elements):
                return None
            node = elements[position]
    return node


def _update_shown(params: Mapping[str, Any], stored: Item) -> bool:
    names: Mapping[str, str] = params.get("ExpressionAttributeNames", {})
    values: Mapping[str, AttributeValue] = params.get("ExpressionAttributeValues", {})
    expression = str(params.get("UpdateExpression", ""))
    pieces = re.split(_CLAUSE, expression)
    clauses = dict(zip(pieces[1::2], pieces[2::2], strict=True))
    if pieces[0].strip() or set(clauses) - {"SET", "REMOVE"}:
        return False  # ADD/DELETE cannot be told apart from a second application
    for assignment in _split_top(clauses.get("SET", "")):
        path, _, value = (part.strip() for part in assignment.partition("="))
        found = _resolve(path, names, stored)
        guarded = re.fullmatch(_IF_NOT_EXISTS, value)
        if guarded is not None and guarded[1] == path:
            if found is None:
                return False
        elif value not in values or found is None or not same_value(found, values[value]):
            return False
    return all(
        _resolve(path, names, stored) is None for path in _split_top(clauses.get("REMOVE", ""))
    )
