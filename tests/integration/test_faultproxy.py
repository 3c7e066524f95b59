"""The fault proxy itself (``tests/faultproxy.py``): each fault does what it says, by seed.

Requests here are raw DynamoDB JSON posted with aiohttp, so what the proxy answers is seen as
sent, with no retry in between; what the server stored is read through the direct Database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from dynorm import Database, Request
from dynorm.testing import RunningServer
from tests.faultproxy import (
    FaultPlan,
    FaultProxy,
    Faulty,
    FaultyConnect,
    Injected,
    connect_through,
    empty_table,
)

from .fault_models import Entry, faults

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Date": "20260101T000000Z",
    "Authorization": (
        "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=00"
    ),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def connected(dynorm_server: RunningServer) -> AsyncIterator[Faulty]:
    async with connect_through(dynorm_server.url, faults, max_attempts=1) as both:
        yield both


@pytest_asyncio.fixture(loop_scope="module")
async def faulty(connected: Faulty) -> AsyncIterator[Faulty]:
    """The module's table, empty, behind a proxy with no faults; dynorm does not retry."""
    connected.proxy.reset()
    yield connected
    connected.proxy.reset()
    await empty_table(connected.direct)
    assert connected.proxy.errors == []


async def call(proxy: FaultProxy, operation: str, params: dict[str, Any]) -> tuple[int, Any]:
    """POST one request through the proxy; the HTTP status and the parsed body."""
    headers = {**HEADERS, "X-Amz-Target": f"DynamoDB_20120810.{operation}"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(proxy.url + "/", data=orjson.dumps(params), headers=headers) as reply,
    ):
        return reply.status, orjson.loads(await reply.read())


def put_params(db: Database, n: int) -> dict[str, Any]:
    return {"TableName": db.table_name, "Item": faults.info(Entry).encode(Entry("a", n, "x"))}


def key(n: int) -> dict[str, Any]:
    return {"pk": {"S": "BOX#a"}, "sk": {"S": f"ITEM#{n:05d}"}}


async def stored(direct: Database, n: int) -> bool:
    return (await direct.get_many(Entry, [{"box": "a", "n": n}]))[0] is not None


async def test_passes_requests_through_untouched(faulty: Faulty) -> None:
    status, _ = await call(faulty.proxy, "PutItem", put_params(faulty.db, 1))
    assert status == 200
    status, body = await call(
        faulty.proxy, "GetItem", {"TableName": faulty.db.table_name, "Key": key(1)}
    )
    assert (status, body["Item"]["text"]) == (200, {"S": "x"})
    assert faulty.proxy.requests == ["PutItem", "GetItem"]
    assert faulty.proxy.injected == []


@pytest.mark.parametrize(
    ("fault", "status", "kind"),
    [
        ("throttle", 400, "ThrottlingException"),
        ("provisioned", 400, "ProvisionedThroughputExceededException"),
        ("error_500", 500, "InternalServerError"),
    ],
)
async def test_error_faults_answer_without_forwarding(
    faulty: Faulty, fault: Any, status: int, kind: str
) -> None:
    faulty.proxy.inject(fault, operation="PutItem")
    answer = await call(faulty.proxy, "PutItem", put_params(faulty.db, 1))
    assert answer[0] == status
    assert answer[1]["__type"].rsplit("#", 1)[-1] == kind
    assert faulty.proxy.injected == [Injected("PutItem", fault)]
    assert not await stored(faulty.direct, 1)


async def test_error_500_after_applies_the_write(faulty: Faulty) -> None:
    faulty.proxy.inject("error_500_after", operation="PutItem")
    status, body = await call(faulty.proxy, "PutItem", put_params(faulty.db, 1))
    assert (status, body["__type"].rsplit("#", 1)[-1]) == (500, "InternalServerError")
    assert await stored(faulty.direct, 1)


async def test_reset_forwards_nothing(faulty: Faulty) -> None:
    faulty.proxy.inject("reset")
    with pytest.raises(aiohttp.ClientConnectionError):
        await call(faulty.proxy, "PutItem", put_params(faulty.db, 1))
    assert faulty.proxy.injected == [Injected("PutItem", "reset")]
    assert not await stored(faulty.direct, 1)


async def test_lost_reply_applies_the_write_and_drops_the_answer(faulty: Faulty) -> None:
    faulty.proxy.inject("lost_reply", operation="PutItem")
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await call(faulty.proxy, "PutItem", put_params(faulty.db, 1))
    assert faulty.proxy.injected == [Injected("PutItem", "lost_reply")]
    assert await stored(faulty.direct, 1)


def add_one(db: Database, token: str, amount: int = 1) -> dict[str, Any]:
    """A TransactWriteItems adding ``amount`` to item 1's ``hits``, with ``token``."""
    update = {
        "TableName": db.table_name,
        "Key": key(1),
        "UpdateExpression": "ADD #h :n",
        "ExpressionAttributeNames": {"#h": "hits"},
        "ExpressionAttributeValues": {":n": {"N": str(amount)}},
    }
    return {"TransactItems": [{"Update": update}], "ClientRequestToken": token}


async def hits(direct: Database) -> str | None:
    reply = await direct.send(
        Request("GetItem", {"TableName": direct.table_name, "Key": key(1), "ConsistentRead": True})
    )
    value = reply.get("Item", {}).get("hits", {}).get("N")
    return None if value is None else str(value)


@pytest.mark.transactions
async def test_a_transaction_token_is_applied_once(faulty: Faulty) -> None:
    # As DynamoDB: a token that succeeded is answered again without applying the write twice,
    # and with other parameters is refused.
    answers = [await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t1"))]
    answers += [await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t1"))]
    answers += [await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t1"))]
    assert answers[0][0] == 200
    assert answers == [answers[0]] * 3
    assert await hits(faulty.direct) == "1"
    assert faulty.proxy.replayed == 2
    status, body = await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t1", 5))
    assert (status, body["__type"].rsplit("#", 1)[-1]) == (
        400,
        "IdempotentParameterMismatchException",
    )
    assert (await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t2")))[0] == 200
    assert await hits(faulty.direct) == "2"


@pytest.mark.transactions
async def test_a_transaction_token_is_kept_only_once_applied(faulty: Faulty) -> None:
    faulty.proxy.inject("error_500", operation="TransactWriteItems")
    status, _ = await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t3"))
    assert status == 500
    assert await hits(faulty.direct) is None  # refused before the server: not kept
    faulty.proxy.inject("lost_reply", operation="TransactWriteItems")
    with pytest.raises(aiohttp.ServerDisconnectedError):
        await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t3"))
    assert await hits(faulty.direct) == "1"  # applied, its answer lost: kept
    assert (await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t3")))[0] == 200
    assert await hits(faulty.direct) == "1"
    assert faulty.proxy.replayed == 1


async def test_transaction_conflict_cancels_a_transaction_only(faulty: Faulty) -> None:
    faulty.proxy.inject("transaction_conflict")
    status, body = await call(faulty.proxy, "PutItem", put_params(faulty.db, 2))
    assert status == 200  # not a transaction: left alone
    faulty.proxy.inject("transaction_conflict")
    status, body = await call(faulty.proxy, "TransactWriteItems", add_one(faulty.db, "t4"))
    assert (status, body["__type"].rsplit("#", 1)[-1]) == (400, "TransactionCanceledException")
    assert [r["Code"] for r in body["CancellationReasons"]] == ["TransactionConflict"]
    assert faulty.proxy.injected == [Injected("TransactWriteItems", "transaction_conflict")]
    assert await hits(faulty.direct) is None


async def test_partial_batch_write_returns_the_rest_unprocessed(faulty: Faulty) -> None:
    writes = [{"PutRequest": put_params(faulty.db, n)} for n in range(10)]
    for write in writes:
        del write["PutRequest"]["TableName"]
    faulty.proxy.inject("partial_batch", operation="BatchWriteItem")
    status, body = await call(
        faulty.proxy, "BatchWriteItem", {"RequestItems": {faulty.db.table_name: writes}}
    )
    assert status == 200
    rest = body["UnprocessedItems"][faulty.db.table_name]
    left = {int(w["PutRequest"]["Item"]["sk"]["S"].split("#")[1]) for w in rest}
    assert len(left) == 5
    for n in range(10):
        assert await stored(faulty.direct, n) == (n not in left), n


async def test_partial_batch_get_returns_the_rest_unprocessed(faulty: Faulty) -> None:
    await faulty.direct.put_all([Entry("a", n) for n in range(10)])
    faulty.proxy.inject("partial_batch", operation="BatchGetItem")
    request = {"Keys": [key(n) for n in range(10)], "ConsistentRead": True}
    status, body = await call(
        faulty.proxy, "BatchGetItem", {"RequestItems": {faulty.db.table_name: request}}
    )
    assert status == 200
    rest = body["UnprocessedKeys"][faulty.db.table_name]
    assert rest["ConsistentRead"] is True
    got = {i["sk"]["S"] for i in body["Responses"][faulty.db.table_name]}
    held = {k["sk"]["S"] for k in rest["Keys"]}
    assert len(got) == len(held) == 5
    assert got | held == {key(n)["sk"]["S"] for n in range(10)}


async def test_a_batch_of_one_is_never_split(faulty: Faulty) -> None:
    faulty.proxy.inject("partial_batch", operation="BatchGetItem")
    status, body = await call(
        faulty.proxy,
        "BatchGetItem",
        {"RequestItems": {faulty.db.table_name: {"Keys": [key(1)]}}},
    )
    assert (status, body.get("UnprocessedKeys")) == (200, {})
    assert faulty.proxy.injected == []


async def test_targeted_faults_match_operation_times_and_body(faulty: Faulty) -> None:
    faulty.proxy.inject("throttle", operation="PutItem", times=2, when=lambda b: "Item" in b)
    faulty.proxy.inject("error_500")  # any operation, after the PutItem ones
    statuses = [(await call(faulty.proxy, "PutItem", put_params(faulty.db, n)))[0] for n in (1, 2)]
    get = {"TableName": faulty.db.table_name, "Key": key(1)}
    statuses.append((await call(faulty.proxy, "GetItem", get))[0])
    statuses.append((await call(faulty.proxy, "GetItem", get))[0])
    assert statuses == [400, 400, 500, 200]
    assert faulty.proxy.injected == [
        Injected("PutItem", "throttle"),
        Injected("PutItem", "throttle"),
        Injected("GetItem", "error_500"),
    ]
    assert faulty.proxy.pending() == 0


async def test_a_plan_is_deterministic_by_seed(faulty: Faulty) -> None:
    rates: Any = {"throttle": 0.2, "error_500": 0.2}
    runs = []
    for seed in (7, 7, 8):
        faulty.proxy.injected.clear()
        faulty.proxy.use(FaultPlan(seed=seed, rates=rates, operations={"PutItem"}))
        statuses = [
            (await call(faulty.proxy, "PutItem", put_params(faulty.db, n)))[0] for n in range(40)
        ]
        runs.append((statuses, list(faulty.proxy.injected)))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert 4 <= len(runs[0][1]) <= 30
    # Operations outside the plan never meet a fault.
    get = {"TableName": faulty.db.table_name, "Key": key(1)}
    assert [(await call(faulty.proxy, "GetItem", get))[0] for _ in range(20)] == [200] * 20


async def test_pause_holds_a_request_until_released(faulty: Faulty) -> None:
    held = faulty.proxy.pause("PutItem", skip=1)
    assert (await call(faulty.proxy, "PutItem", put_params(faulty.db, 1)))[0] == 200
    putting = asyncio.create_task(call(faulty.proxy, "PutItem", put_params(faulty.db, 2)))
    await held.arrived.wait()
    assert not await stored(faulty.direct, 2)
    held.release()
    assert (await putting)[0] == 200
    assert await stored(faulty.direct, 2)


async def test_plan_refuses_unknown_faults_and_impossible_rates() -> None:
    with pytest.raises(ValueError, match="unknown faults"):
        FaultPlan(seed=1, rates={"nope": 0.1})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="sum to at most 1"):
        FaultPlan(seed=1, rates={"throttle": 0.7, "reset": 0.7})


async def test_dynorm_reads_rewritten_batches(faulty_connect: FaultyConnect) -> None:
    """A rewritten answer (new body, new CRC32) is accepted by botocore and by dynorm."""
    async with faulty_connect(faults) as faulty:
        entries = [Entry("a", n, f"t{n}") for n in range(30)]
        await faulty.direct.put_all(entries)
        faulty.proxy.inject("partial_batch", operation="BatchGetItem")
        found = await faulty.db.get_many(Entry, [{"box": "a", "n": n} for n in range(30)])
        assert found == entries
        assert faulty.proxy.injected == [Injected("BatchGetItem", "partial_batch")]
        assert faulty.proxy.requests == ["BatchGetItem", "BatchGetItem"]
