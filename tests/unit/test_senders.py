"""The one place above the senders: which sender a request goes to, and what its failure means.

A fake :class:`~dynorm.io.senders.base.Sender` (as httpx's ``MockTransport`` stands in for a
transport) reports each failure in the senders' plain terms; :class:`Attempt` must turn it into
the same DynormError whichever adapter reported it, ``request_sent`` included.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import (
    ConditionFailedError,
    DynormError,
    ThrottledError,
    TransportError,
    ValidationError,
)
from dynorm.core.requests import Request
from dynorm.io.senders.attempt import SIGNED, Attempt
from dynorm.io.senders.base import (
    ClosedError,
    CredentialsError,
    Failure,
    ParamsError,
    ReplyError,
    Sender,
    SendError,
    Timeouts,
    TLSSetupError,
    WireError,
)

TIMEOUTS = Timeouts(connect_timeout=1.0, read_timeout=2.0, attempt_timeout=30.0)
GET = Request("GetItem", {"TableName": "app", "Key": {"pk": {"S": "A"}}})
ENDPOINT = "http://127.0.0.1:9"


class FakeSender:
    """Answers ``reply``, or raises ``failure``; records the operations it was given."""

    def __init__(self, reply: dict[str, Any] | None = None, failure: SendError | None = None):
        self.reply = reply or {}
        self.failure = failure
        self.sent: list[str] = []

    async def send(self, request: Request) -> dict[str, Any]:
        self.sent.append(request.operation)
        if self.failure is not None:
            raise self.failure
        return self.reply

    async def aclose(self) -> None:
        pass


def attempt(failure: SendError) -> Attempt:
    sender: Sender = FakeSender(failure=failure)
    return Attempt(sender, FakeSender(), timeouts=TIMEOUTS)


async def test_what_dynorm_signs_goes_to_the_sender_and_the_rest_to_the_fallback() -> None:
    fast, fallback = FakeSender({"Item": {}}), FakeSender({"BackupSummaries": []})
    send = Attempt(fast, fallback, timeouts=TIMEOUTS)
    assert await send(GET) == {"Item": {}}
    assert await send(Request("ListBackups", {})) == {"BackupSummaries": []}
    assert (fast.sent, fallback.sent) == (["GetItem"], ["ListBackups"])
    assert send.fast_path
    assert {"GetItem", "Query", "TransactWriteItems", "CreateTable"} <= SIGNED


async def test_without_a_fast_sender_the_fallback_sends_everything() -> None:
    fallback = FakeSender()
    send = Attempt(None, fallback, timeouts=TIMEOUTS)
    await send(GET)
    await send(Request("DescribeTable", {"TableName": "app"}))
    assert fallback.sent == ["GetItem", "DescribeTable"]
    assert not send.fast_path


@pytest.mark.parametrize(
    ("kind", "sent", "says"),
    [
        ("connect_timeout", False, "no connection to http://127.0.0.1:9 within connect_timeout=1"),
        ("refused", False, "could not connect to http://127.0.0.1:9 (refused)"),
        ("proxy", False, "could not connect through the proxy (refused)"),
        ("unsent_deadline", False, "within attempt_timeout=30.0s; nothing was sent"),
        ("read_timeout", True, "no reply from http://127.0.0.1:9 within read_timeout=2.0s"),
        ("broken", True, "broke before a reply came (refused)"),
        ("deadline", True, "did not end within attempt_timeout=30.0s"),
        ("damaged", True, "does not match its checksum (x-amz-crc32)"),
        ("not_json", True, "(HTTP 200) is not DynamoDB's JSON (refused)"),
    ],
)
async def test_a_failure_on_the_wire_says_whether_the_request_may_have_been_sent(
    kind: Failure, sent: bool, says: str
) -> None:
    cause = ConnectionRefusedError("refused")
    failure = WireError(kind, ENDPOINT, cause, cause=cause, status=200)
    with pytest.raises(TransportError) as caught:
        await attempt(failure)(GET)
    assert caught.value.request_sent is sent
    assert caught.value.operation == "GetItem"
    assert says in str(caught.value)
    assert str(caught.value).startswith("GetItem: ")
    assert caught.value.__cause__ is cause  # the adapter's own error, never a SendError


async def test_an_error_reply_becomes_its_database_error() -> None:
    item = {"pk": {"S": "A"}}
    refused = ReplyError("ConditionalCheckFailedException", "no", {"Item": item}, ENDPOINT)
    with pytest.raises(ConditionFailedError) as caught:
        await attempt(refused)(GET)
    assert caught.value.item == item
    assert caught.value.__cause__ is None
    throttled = ReplyError("ThrottlingException", "slow down", {}, ENDPOINT)
    with pytest.raises(ThrottledError, match=r"connect\(max_attempts=\.\.\.\)"):
        await attempt(throttled)(GET)


@pytest.mark.parametrize(
    ("failure", "error", "says"),
    [
        (ParamsError("bad value"), ValidationError, "GetItem: bad value"),
        (CredentialsError("none were found"), DynormError, "GetItem: no usable AWS credentials"),
        (
            TLSSetupError(ENDPOINT, FileNotFoundError("no-such.pem")),
            DynormError,
            "GetItem: cannot set up TLS for http://127.0.0.1:9 (no-such.pem); nothing was sent",
        ),
        (ClosedError(), DynormError, "GetItem: the Database's connection is closed"),
        (ClosedError(named=False), DynormError, "the Database's connection is closed"),
    ],
)
async def test_a_refusal_before_sending_is_an_error_that_says_what_to_change(
    failure: SendError, error: type[DynormError], says: str
) -> None:
    with pytest.raises(error) as caught:
        await attempt(failure)(GET)
    assert str(caught.value).startswith(says)
    assert not isinstance(caught.value, TransportError)  # nothing was sent: nothing to retry
