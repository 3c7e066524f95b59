"""The transport's retry loop, with a fake one-attempt ``send`` and a fake ``sleep``.

The fake server below keeps one item and applies PutItem/UpdateItem/GetItem to it just far
enough to play out lost replies: ``lose`` makes the next attempts apply and then fail as if the
connection broke before the reply came.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import attrs
import pytest

import dynorm
from dynorm import (
    Attr,
    ConditionFailedError,
    DatabaseError,
    DynormError,
    OutcomeUnknownError,
    Table,
    ThrottledError,
    TransportError,
    ValidationError,
)
from dynorm.core.codec.converter import Item
from dynorm.core.requests import Request
from dynorm.io.senders.attempt import database_error
from dynorm.io.transport import Transport
from dynorm.mapping.model import info_of
from dynorm.mapping.writes import UpdateOps, plan_delete, plan_put, plan_update
from dynorm.wire.retry import TOKEN_ATTRIBUTE, RetryQuota, prepare

app = Table("app", pk="pk", sk="sk")


@app.model(pk="PAGE#{page_id}", sk="PAGE#{page_id}")
@attrs.define
class Page:
    page_id: str
    hits: int = 0
    title: str = ""


INFO = info_of(Page)
PAGE = Page("p1", 3, "Home")
KEY = {"pk": {"S": "PAGE#p1"}, "sk": {"S": "PAGE#p1"}}
GET = Request("GetItem", {"TableName": "app", "Key": KEY})

Failure = Callable[[], DynormError]


def reset() -> DynormError:
    return TransportError("connection reset", request_sent=True)


def refused() -> DynormError:
    return TransportError("connection refused", request_sent=False)


def throttled() -> DynormError:
    return ThrottledError("slow down", code="ThrottlingException")


def condition_failed(item: Item | None) -> ConditionFailedError:
    error = ConditionFailedError("no", code="ConditionalCheckFailedException")
    error.item = item
    return error


def always(item: Item | None) -> bool:
    return True


def absent(item: Item | None) -> bool:
    return item is None


def three_hits(item: Item | None) -> bool:
    return item is not None and item["hits"] == {"N": "3"}


@attrs.define
class FakeServer:
    """One item, and a script of failures: ``before`` fail unapplied, ``lose`` after applying.

    ``condition`` stands for the write's own condition; the token guard is checked as
    DynamoDB would.
    """

    item: Item | None = None
    before: list[Failure] = attrs.field(factory=list)
    lose: list[Failure] = attrs.field(factory=list)
    condition: Callable[[Item | None], bool] = always
    return_old: bool = True  # honours ReturnValuesOnConditionCheckFailure
    sent: list[Request] = attrs.field(factory=list)

    async def send(self, request: Request) -> dict[str, Any]:
        self.sent.append(request)
        if self.before:
            raise self.before.pop(0)()
        response = self.apply(request)
        if self.lose:
            raise self.lose.pop(0)()
        return response

    def apply(self, request: Request) -> dict[str, Any]:
        params = request.params
        if request.operation == "GetItem":
            return {} if self.item is None else {"Item": dict(self.item)}
        self.check(params)
        if request.operation == "PutItem":
            self.item = dict(params["Item"])
            return {}
        if request.operation == "DeleteItem":
            self.item = None
            return {}
        assert request.operation == "UpdateItem"
        return self.update(params)

    def check(self, params: Any) -> None:
        token = params.get("ExpressionAttributeValues", {}).get(":dynormwt")
        mine = (
            self.item is not None and token is not None and self.item.get(TOKEN_ATTRIBUTE) == token
        )
        if mine or not self.condition(self.item):
            old = params.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
            raise condition_failed(self.item if old and self.return_old else None)

    def update(self, params: Any) -> dict[str, Any]:
        assert self.item is not None
        names, values = params["ExpressionAttributeNames"], params["ExpressionAttributeValues"]
        expression = params["UpdateExpression"]
        item = dict(self.item)
        for name, value in re.findall(r"(#\w+) = (:\w+)", expression):
            item[names[name]] = values[value]
        for name, value in re.findall(r"ADD (#\w+) (:\w+)", expression):
            total = int(item[names[name]]["N"]) + int(values[value]["N"])
            item[names[name]] = {"N": str(total)}
        self.item = item
        return {"Attributes": dict(item)}


@attrs.define
class Sleeps:
    delays: list[float] = attrs.field(factory=list)

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def transport(
    server: FakeServer, sleeps: Sleeps, *, max_attempts: int = 5, quota: RetryQuota | None = None
) -> Transport:
    return Transport(
        server.send,
        key_attributes=("pk", "sk"),
        max_attempts=max_attempts,
        max_concurrency=4,
        sleep=sleeps,
        quota=quota,
        token=lambda: "tok",
    )


def stored() -> Item:
    return INFO.encode(PAGE)


# -- retrying --------------------------------------------------------------------------------------


async def test_a_success_is_sent_once_without_sleeping() -> None:
    server, sleeps = FakeServer(item=stored()), Sleeps()
    assert await transport(server, sleeps).send(GET) == {"Item": stored()}
    assert len(server.sent) == 1
    assert sleeps.delays == []


async def test_throttling_and_refused_connections_are_retried_with_growing_backoff() -> None:
    server, sleeps = FakeServer(item=stored(), before=[throttled, refused, throttled]), Sleeps()
    assert await transport(server, sleeps).send(GET) == {"Item": stored()}
    assert len(server.sent) == 4
    assert len(sleeps.delays) == 3
    for attempt, delay in enumerate(sleeps.delays):
        assert 0 <= delay <= 0.05 * 2**attempt  # full jitter under an exponential cap


async def test_server_errors_and_resets_are_retried() -> None:
    server = FakeServer(
        item=stored(), before=[lambda: DatabaseError("oops", code="InternalServerError"), reset]
    )
    assert await transport(server, Sleeps()).send(GET) == {"Item": stored()}
    assert len(server.sent) == 3


async def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    server, sleeps = FakeServer(before=[throttled] * 10), Sleeps()
    with pytest.raises(ThrottledError) as caught:
        await transport(server, sleeps, max_attempts=3).send(GET)
    assert len(server.sent) == 3
    assert len(sleeps.delays) == 2  # no pause before giving up
    assert "gave up after 3 attempts" in "".join(caught.value.__notes__)


async def test_a_lost_connection_surfaces_as_a_connection_error() -> None:
    server = FakeServer(before=[refused] * 5)
    with pytest.raises(ConnectionError) as caught:
        await transport(server, Sleeps(), max_attempts=2).send(GET)
    assert isinstance(caught.value, TransportError)
    assert not caught.value.request_sent


async def test_errors_that_retrying_cannot_fix_are_raised_at_once() -> None:
    server = FakeServer(before=[lambda: ValidationError("bad", code="ValidationException")])
    with pytest.raises(ValidationError):
        await transport(server, Sleeps()).send(GET)
    assert len(server.sent) == 1


async def test_the_quota_stops_retries_and_successes_refill_it() -> None:
    quota = RetryQuota(15)
    server = FakeServer(item=stored(), before=[throttled, throttled])
    await transport(server, Sleeps(), quota=quota).send(GET)
    assert quota.available == 15  # both retries paid back by the success
    quota.available = 7
    server.before = [throttled] * 3
    with pytest.raises(ThrottledError) as caught:
        await transport(server, Sleeps(), quota=quota).send(GET)
    assert len(server.sent) == 3 + 2  # one retry paid for, the second not
    assert "retry quota" in "".join(caught.value.__notes__)


async def test_at_most_max_concurrency_requests_are_in_flight() -> None:
    gate = asyncio.Event()
    in_flight = 0
    most = 0

    async def send(request: Request) -> dict[str, Any]:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await gate.wait()
        in_flight -= 1
        return {}

    sender = Transport(send, key_attributes=("pk",), max_attempts=1, max_concurrency=2)
    tasks = [asyncio.create_task(sender.send(GET)) for _ in range(5)]
    for _ in range(20):
        await asyncio.sleep(0)  # every task that may start has started by now
    assert (in_flight, most) == (2, 2)
    gate.set()
    await asyncio.gather(*tasks)
    assert most == 2


async def test_max_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        Transport(FakeServer().send, key_attributes=(), max_attempts=0, max_concurrency=1)


# -- a transaction is sent with one idempotency token ---------------------------------------------


async def test_a_transaction_carries_the_same_client_request_token_on_every_attempt() -> None:
    seen: list[str] = []

    async def send(request: Request) -> dict[str, Any]:
        seen.append(request.params["ClientRequestToken"])
        if len(seen) == 1:
            raise reset()
        return {}

    sender = Transport(
        send,
        key_attributes=(),
        max_attempts=3,
        max_concurrency=1,
        sleep=Sleeps(),
        token=lambda: "t",
    )
    await sender.send(Request("TransactWriteItems", {"TransactItems": []}))
    assert seen == ["t", "t"]


# -- safe writes -----------------------------------------------------------------------------------


async def test_a_safe_write_whose_reply_was_lost_is_simply_sent_again() -> None:
    server = FakeServer(lose=[reset])
    request = plan_put(INFO, PAGE, "app")
    assert await transport(server, Sleeps()).send(request) == {}
    assert server.item == stored()
    assert len(server.sent) == 2
    assert server.sent[1].params == request.params


async def test_a_safe_write_that_stays_unanswered_raises_the_transport_error() -> None:
    server = FakeServer(lose=[reset] * 5)
    with pytest.raises(TransportError):
        await transport(server, Sleeps(), max_attempts=2).send(plan_put(INFO, PAGE, "app"))


# -- verified writes -------------------------------------------------------------------------------


async def test_put_if_absent_whose_reply_was_lost_succeeds_once() -> None:
    server = FakeServer(lose=[reset], condition=absent)
    request = plan_put(INFO, PAGE, "app", overwrite=False)
    assert await transport(server, Sleeps()).send(request) == {}
    assert server.item == stored()
    first, second = server.sent
    assert "ReturnValuesOnConditionCheckFailure" not in first.params
    assert second.params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert len(server.sent) == 2  # the refusal carried the item: no extra read


async def test_without_the_old_item_in_the_refusal_one_consistent_read_settles_it() -> None:
    server = FakeServer(lose=[reset], condition=absent, return_old=False)
    request = plan_put(INFO, PAGE, "app", overwrite=False)
    assert await transport(server, Sleeps()).send(request) == {}
    assert [r.operation for r in server.sent] == ["PutItem", "PutItem", "GetItem"]
    assert server.sent[2].params == {"TableName": "app", "Key": KEY, "ConsistentRead": True}


async def test_the_read_back_uses_the_key_of_the_table_the_write_names() -> None:
    # A connection of several tables: each table's primary key, by the table's name.
    server = FakeServer(lose=[reset], condition=absent, return_old=False)
    sender = Transport(
        server.send,
        key_attributes={"other": ("id",), "app": ("pk", "sk")},
        max_attempts=5,
        max_concurrency=4,
        sleep=Sleeps(),
        token=lambda: "tok",
    )
    assert await sender.send(plan_put(INFO, PAGE, "app", overwrite=False)) == {}
    assert server.sent[2].params == {"TableName": "app", "Key": KEY, "ConsistentRead": True}


async def test_a_refusal_on_the_first_attempt_is_a_real_condition_failure() -> None:
    server = FakeServer(item=stored(), condition=absent)
    with pytest.raises(ConditionFailedError):
        await transport(server, Sleeps()).send(plan_put(INFO, PAGE, "app", overwrite=False))
    assert len(server.sent) == 1


async def test_a_refusal_after_attempts_that_were_not_applied_is_real_too() -> None:
    server = FakeServer(item=stored(), before=[throttled, refused], condition=absent)
    with pytest.raises(ConditionFailedError):
        await transport(server, Sleeps()).send(plan_put(INFO, PAGE, "app", overwrite=False))
    assert len(server.sent) == 3


async def test_a_refusal_that_the_stored_item_does_not_explain_is_an_unknown_outcome() -> None:
    # Another item is there now: ours may have been stored and replaced, or never stored.
    other = {**stored(), "hits": {"N": "9"}}
    server = FakeServer(item=other, before=[reset], condition=absent)
    with pytest.raises(OutcomeUnknownError) as caught:
        await transport(server, Sleeps()).send(plan_put(INFO, PAGE, "app", overwrite=False))
    assert not isinstance(caught.value, ConditionFailedError)
    assert "may or may not have been applied" in str(caught.value)
    assert "consistent=True" in str(caught.value)
    assert server.item == other


async def test_a_conditional_update_whose_reply_was_lost_returns_the_stored_item() -> None:
    server = FakeServer(item=stored(), lose=[reset], condition=three_hits)
    request = plan_update(
        INFO,
        INFO.values_of(PAGE),
        "app",
        UpdateOps(set={"title": "New", "hits": 4}),
        condition=Attr("hits") == 3,
    )
    assert request.retry == "verify"
    response = await transport(server, Sleeps()).send(request)
    assert response["Attributes"]["title"] == {"S": "New"}
    assert response["Attributes"]["hits"] == {"N": "4"}
    assert len(server.sent) == 2


async def test_a_conditional_delete_whose_item_is_gone_is_done() -> None:
    server = FakeServer(item=stored(), lose=[reset], condition=three_hits, return_old=False)
    request = plan_delete(INFO, KEY, "app", condition=Attr("hits") == 3)
    assert await transport(server, Sleeps()).send(request) == {}
    assert server.item is None
    assert [r.operation for r in server.sent] == ["DeleteItem", "DeleteItem", "GetItem"]


async def test_a_verified_write_that_stays_unanswered_is_an_unknown_outcome() -> None:
    server = FakeServer(lose=[reset] * 5)
    with pytest.raises(OutcomeUnknownError) as caught:
        await transport(server, Sleeps(), max_attempts=3).send(
            plan_put(INFO, PAGE, "app", overwrite=False)
        )
    assert isinstance(caught.value.__cause__, TransportError)
    assert "after 3 attempts" in str(caught.value)


async def test_a_failed_verification_read_is_an_unknown_outcome() -> None:
    server = FakeServer(lose=[reset], condition=absent, return_old=False)

    async def send(request: Request) -> dict[str, Any]:
        if request.operation == "GetItem":
            raise ValidationError("no reads today", code="ValidationException")
        return await server.send(request)

    sender = Transport(
        send, key_attributes=("pk", "sk"), max_attempts=3, max_concurrency=1, sleep=Sleeps()
    )
    with pytest.raises(OutcomeUnknownError) as caught:
        await sender.send(plan_put(INFO, PAGE, "app", overwrite=False))
    assert isinstance(caught.value.__cause__, ValidationError)


# -- token writes ----------------------------------------------------------------------------------


def add_one(**condition: Any) -> Request:
    return plan_update(INFO, INFO.values_of(PAGE), "app", UpdateOps(add={"hits": 1}), **condition)


async def test_an_add_whose_reply_was_lost_is_read_back_not_sent_again() -> None:
    server = FakeServer(item=stored(), lose=[reset])
    response = await transport(server, Sleeps()).send(add_one())
    assert server.item is not None
    assert server.item["hits"] == {"N": "4"}  # once, not twice
    assert response["Attributes"]["hits"] == {"N": "4"}
    assert [r.operation for r in server.sent] == ["UpdateItem", "GetItem"]
    assert server.sent[1].params["ConsistentRead"] is True


async def test_an_add_whose_fate_is_unknown_and_not_stored_is_an_unknown_outcome() -> None:
    # The reset came before the server applied it, but the client cannot know that.
    server = FakeServer(item=stored(), before=[reset])
    with pytest.raises(OutcomeUnknownError) as caught:
        await transport(server, Sleeps()).send(add_one())
    assert isinstance(caught.value.__cause__, TransportError)
    assert server.item is not None
    assert server.item["hits"] == {"N": "3"}
    assert [r.operation for r in server.sent] == ["UpdateItem", "GetItem"]


async def test_an_add_lost_while_another_add_replaced_the_token_never_counts_twice() -> None:
    server = FakeServer(item=stored(), lose=[reset])
    theirs = prepare(add_one(), "theirs")

    async def send(request: Request) -> dict[str, Any]:
        try:
            return await server.send(request)
        finally:
            if request.operation == "UpdateItem":  # another client adds right after ours
                await server.send(theirs)

    sender = Transport(
        send, key_attributes=("pk", "sk"), max_attempts=5, max_concurrency=1, sleep=Sleeps()
    )
    with pytest.raises(OutcomeUnknownError):
        await sender.send(add_one())
    assert server.item is not None
    assert server.item["hits"] == {"N": "5"}  # ours and theirs, never ours twice
    assert server.item[TOKEN_ATTRIBUTE] == {"S": "theirs"}


async def test_every_attempt_of_an_add_carries_the_same_token() -> None:
    server = FakeServer(item=stored(), before=[throttled])
    await transport(server, Sleeps()).send(add_one())
    tokens = [r.params["ExpressionAttributeValues"][":dynormwt"] for r in server.sent]
    assert tokens == [{"S": "tok"}, {"S": "tok"}]
    assert server.item is not None
    assert server.item[TOKEN_ATTRIBUTE] == {"S": "tok"}
    assert server.item["hits"] == {"N": "4"}


async def test_a_repeated_add_refused_by_its_own_token_is_done() -> None:
    # Throttling means "not applied"; if a server applied it anyway, the token guard holds.
    server = FakeServer(item=stored(), lose=[throttled])
    response = await transport(server, Sleeps()).send(add_one())
    assert response["Attributes"]["hits"] == {"N": "4"}
    assert server.item is not None
    assert server.item["hits"] == {"N": "4"}
    assert server.sent[1].params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


async def test_a_repeated_add_refused_by_the_callers_condition_is_a_real_refusal() -> None:
    server = FakeServer(
        item={**stored(), "hits": {"N": "9"}}, before=[throttled], condition=three_hits
    )
    with pytest.raises(ConditionFailedError):
        await transport(server, Sleeps()).send(add_one(condition=Attr("hits") == 3))
    assert len(server.sent) == 2


async def test_a_refused_add_on_its_first_attempt_is_a_real_condition_failure() -> None:
    server = FakeServer(item={**stored(), "hits": {"N": "9"}}, condition=three_hits)
    with pytest.raises(ConditionFailedError):
        await transport(server, Sleeps()).send(add_one(condition=Attr("hits") == 3))
    assert server.item is not None
    assert server.item["hits"] == {"N": "9"}
    assert len(server.sent) == 1


@pytest.mark.parametrize(
    ("operation", "said", "lacks"),
    [
        ("TransactWriteItems", "", "dynalite, for one, has no transactions"),
        ("TransactGetItems", "None", "dynalite, for one, has no transactions"),
        ("UpdateTimeToLive", "not here", "an emulator that lacks it"),
    ],
)
def test_an_operation_the_server_lacks_names_the_operation_and_the_server(
    operation: str, said: str, lacks: str
) -> None:
    error = database_error(
        "UnknownOperationException", said, {}, Request(operation, {}), "http://127.0.0.1:4567"
    )
    assert isinstance(error, dynorm.UnsupportedOperationError)
    assert isinstance(error, dynorm.DatabaseError)
    assert (error.code, error.operation) == ("UnknownOperationException", operation)
    shown = f": {said}" if said not in ("", "None") else ""
    assert str(error).startswith(
        f"{operation}: the server at http://127.0.0.1:4567 does not support {operation} "
        f"(UnknownOperationException{shown}); DynamoDB does ("
    )
    assert lacks in str(error)
