"""The request path on the wire: events per HTTP attempt, clock skew, damaged replies, spans.

Runs on whichever request path the suite runs (``DYNORM_TEST_FAST_PATH``); what only dynorm's
own path does (correcting its clock) is asserted only there.
"""

from __future__ import annotations

import asyncio
import calendar
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import attrs
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from dynorm import (
    GSI,
    ConditionFailedError,
    Database,
    DynormError,
    Request,
    Table,
    TransportError,
    connect,
)
from dynorm.testing import Connect, RunningServer, count_requests, fast_path_selected
from tests.faultproxy import SKEW_SECONDS, Fault, Injected, connect_through

pytestmark = pytest.mark.integration

table = Table("wire", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="NOTE#{note_id}", sk="NOTE#{note_id}", GSI1=("OWNER#{owner}", "NOTE#{note_id}"))
@attrs.define
class Note:
    note_id: str
    owner: str
    text: str = ""


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as db:
        yield db


def _key(note_id: str) -> dict[str, Any]:
    """Note ``note_id``'s key as AttributeValues, for requests sent raw."""
    return {"pk": {"S": f"NOTE#{note_id}"}, "sk": {"S": f"NOTE#{note_id}"}}


def _unless_stored(db: Database, operation: str, note_id: str) -> Request:
    """A raw PutItem (of just the key) or DeleteItem of note ``note_id`` that DynamoDB refuses
    while the note is stored."""
    argument = "Item" if operation == "PutItem" else "Key"
    return Request(
        operation,
        {
            "TableName": db.table_name,
            argument: _key(note_id),
            "ConditionExpression": "attribute_not_exists(pk)",
        },
    )


def _get_with_capacity(db: Database, note_id: str) -> Request:
    """A raw GetItem of note ``note_id`` that asks for the capacity it consumed."""
    params = {"TableName": db.table_name, "Key": _key(note_id), "ReturnConsumedCapacity": "TOTAL"}
    return Request("GetItem", params)


async def test_one_event_per_request_with_what_it_did(db: Database) -> None:
    with count_requests(db) as log:
        await db.put(Note("n1", "ann", "hello"))
        await db.get(Note, note_id="n1")
        await db.query(Note, index="GSI1", owner="ann").all()
        with pytest.raises(ConditionFailedError):
            await db.send(_unless_stored(db, "PutItem", "n1"))
    assert log.operations == ["PutItem", "GetItem", "Query", "PutItem"]
    put, get, query, refused = log.events
    assert [e.table for e in log.events] == [db.table_name] * 4
    assert [e.tables for e in log.events] == [(db.table_name,)] * 4
    assert (get.index, query.index) == (None, "GSI1")
    assert [e.attempt for e in log.events] == [1, 1, 1, 1]
    assert [e.outcome for e in log.events] == ["ok", "ok", "ok", "ConditionalCheckFailedException"]
    assert isinstance(refused.error, ConditionFailedError)
    assert put.error is None
    assert not any(e.retrying for e in log.events)
    assert all(0 < e.latency < 30 for e in log.events)
    assert put.consumed_capacity is None


async def test_consumed_capacity_when_asked_for(db: Database) -> None:
    with count_requests(db) as log:
        reply = await db.send(_get_with_capacity(db, "n1"))
    (event,) = log.events
    assert event.consumed_capacity == reply["ConsumedCapacity"]
    capacity = event.consumed_capacity
    assert isinstance(capacity, dict)  # one table: a dict; batches and transactions: a list
    assert capacity["TableName"] == db.table_name
    assert capacity["CapacityUnits"] > 0


async def test_a_throttled_attempt_is_an_event_followed_by_its_retry(
    dynorm_server: RunningServer,
) -> None:
    async with connect_through(dynorm_server.url, table) as faulty:
        faulty.proxy.inject("throttle", operation="PutItem")
        with count_requests(faulty.db) as log:
            await faulty.db.put(Note("n2", "bo"))
        assert faulty.proxy.injected == [Injected("PutItem", "throttle")]
        assert [(e.attempt, e.outcome, e.retrying) for e in log.events] == [
            (1, "ThrottlingException", True),
            (2, "ok", False),
        ]


def _epoch(amz_date: str) -> int:
    return calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))


async def test_a_clock_skew_error_is_retried_and_corrected(dynorm_server: RunningServer) -> None:
    async with connect_through(dynorm_server.url, table) as faulty:
        await faulty.direct.put(Note("n3", "cy", "skewed"))
        faulty.proxy.inject("clock_skew", operation="GetItem")
        with count_requests(faulty.db) as log:
            note = await faulty.db.get(Note, note_id="n3")
            await faulty.db.get(Note, note_id="n3")
        assert note.text == "skewed"
        assert faulty.proxy.injected == [Injected("GetItem", "clock_skew")]
        assert [(e.outcome, e.retrying) for e in log.events] == [
            ("InvalidSignatureException", True),
            ("ok", False),
            ("ok", False),
        ]
        first, retry, later = (_epoch(d) for d in faulty.proxy.signed_at)
        if fast_path_selected():
            # Signed by the server's clock from the retry on, and it stays corrected.
            assert abs(retry - first - SKEW_SECONDS) < 60
            assert abs(later - first - SKEW_SECONDS) < 60
        else:
            assert abs(retry - first) < 60  # botocore signs by this machine's clock


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        # botocore, with its own retries off, does not check the CRC32 of a reply.
        ("bad_crc", "does not match its checksum"),
        # botocore's parser takes an HTML 200 for an empty reply.
        ("not_json", "not DynamoDB's JSON"),
    ],
)
async def test_a_damaged_reply_is_an_unknown_outcome_and_retried(
    dynorm_server: RunningServer, fault: Fault, said: str
) -> None:
    async with connect_through(dynorm_server.url, table) as faulty:
        faulty.proxy.inject(fault, operation="PutItem")
        with count_requests(faulty.db) as log:
            await faulty.db.put(Note(f"n-{fault}", "di", "once"))
        assert faulty.proxy.injected == [Injected("PutItem", fault)]
        if not fast_path_selected():
            # botocore's path takes the damaged reply for a good one; the write was applied.
            assert [e.outcome for e in log.events] == ["ok"]
            return
        damaged, ok = log.events
        assert (damaged.outcome, damaged.retrying, ok.outcome) == ("transport", True, "ok")
        assert isinstance(damaged.error, TransportError)
        assert damaged.error.request_sent
        assert said in str(damaged.error)
        assert (await faulty.direct.get(Note, note_id=f"n-{fault}")).text == "once"


async def test_a_database_used_after_connect_ends_says_so(dynorm_server: RunningServer) -> None:
    async with connect(
        table,
        endpoint_url=dynorm_server.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        table_name="wire-closed",
    ) as db:
        assert db.fast_path
    with count_requests(db) as log, pytest.raises(DynormError, match="connection is closed"):
        await db.get(Note, note_id="n1")
    assert log.events == []  # refused before anything was sent, and not retried


def test_an_endpoint_behind_a_path_goes_through_botocore() -> None:
    # The fast path signs and posts to "/"; a gateway's prefix must be signed as botocore does.
    async def connected() -> bool:
        async with connect(
            table,
            endpoint_url="http://127.0.0.1:9/dynamodb",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        ) as db:
            return db.fast_path

    assert asyncio.run(connected()) is False


# -- OpenTelemetry ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """Spans go to memory; the SDK's provider is set once for the process (the API's rule)."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


async def test_one_client_span_per_request(
    db: Database, exporter: InMemorySpanExporter, dynorm_server: RunningServer
) -> None:
    exporter.clear()
    await db.put(Note("n5", "ed"))
    await db.query(Note, index="GSI1", owner="ed").all()
    with pytest.raises(ConditionFailedError):
        await db.send(_unless_stored(db, "DeleteItem", "n5"))
    put, query, delete = exporter.get_finished_spans()
    assert [s.name for s in (put, query, delete)] == [
        f"PutItem {db.table_name}",
        f"Query {db.table_name}",
        f"DeleteItem {db.table_name}",
    ]
    assert all(s.kind is trace.SpanKind.CLIENT for s in (put, query, delete))
    attributes = dict(query.attributes or {})
    host = dynorm_server.url.split("//")[1].split(":")[0]
    assert attributes["db.system.name"] == "aws.dynamodb"
    assert attributes["db.system"] == "dynamodb"
    assert attributes["db.operation.name"] == "Query"
    assert attributes["aws.dynamodb.table_names"] == (db.table_name,)
    assert attributes["aws.dynamodb.index_name"] == "GSI1"
    assert attributes["server.address"] == host
    assert attributes["aws.dynamodb.count"] == 1
    assert put.status.status_code is trace.StatusCode.UNSET
    assert [e.name for e in put.events] == ["dynorm.attempt"]
    assert dict(put.events[0].attributes or {})["dynorm.outcome"] == "ok"
    assert delete.status.status_code is trace.StatusCode.ERROR
    assert dict(delete.attributes or {})["error.type"] == "ConditionalCheckFailedException"


async def test_consumed_capacity_on_the_span(db: Database, exporter: InMemorySpanExporter) -> None:
    exporter.clear()
    await db.send(_get_with_capacity(db, "x"))
    (span,) = exporter.get_finished_spans()
    consumed = dict(span.attributes or {})["aws.dynamodb.consumed_capacity"]
    assert isinstance(consumed, tuple)
    assert len(consumed) == 1
    assert db.table_name in str(consumed[0])
