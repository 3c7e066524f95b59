"""Bad values are refused before anything is sent: no request, nothing stored, an error that says
which model, field, type and value (or which DynamoDB limit) is at fault."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Awaitable, Callable
from decimal import Decimal
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    MAX_NUMBER,
    MIN_NUMBER,
    Attr,
    CodecError,
    Database,
    DynormError,
    ExpressionError,
    LimitExceededError,
    Request,
    Table,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

table = Table("values", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Status(enum.Enum):
    OPEN = "open"
    DONE = "done"


@attrs.define
class Place:
    street: str
    number: int | None = None


@table.model(
    pk="ISSUE#{issue_id}", sk="ISSUE#{issue_id}", GSI1=("TITLE#{title}", "ISSUE#{issue_id}")
)
@attrs.define
class Issue:
    issue_id: str
    title: str = "title"
    priority: int = 0
    status: Status = Status.OPEN
    place: Place | None = None
    tags: list[str] = attrs.Factory(list)
    labels: set[str] = attrs.Factory(set)
    scores: dict[str, int] = attrs.Factory(dict)
    price: Decimal = Decimal(0)
    body: str = ""
    extra: Any = None


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def stored(db: Database) -> list[dict[str, Any]]:
    """Every item in the table, read raw (one Scan)."""
    response = await db.send(Request("Scan", {"TableName": db.table_name, "ConsistentRead": True}))
    items: list[dict[str, Any]] = response.get("Items", [])
    return items


def nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


GOOD = Issue("good", labels={"a"}, scores={"a": 1})

#: (id, field values, error, what the message must say)
BAD_OBJECTS: list[tuple[str, dict[str, Any], type[DynormError], str]] = [
    ("float-in-int", {"priority": 2.5}, CodecError, r"Issue\.priority \(int\): 2\.5 is a float"),
    ("bool-in-int", {"priority": True}, CodecError, r"Issue\.priority \(int\): True is a bool"),
    ("str-in-int", {"priority": "3"}, CodecError, r"Issue\.priority \(int\): '3' is a str"),
    (
        "str-in-enum",
        {"status": "open"},
        CodecError,
        r"Issue\.status \(Status\): 'open' .*Status\.OPEN",
    ),
    ("nested", {"place": Place("Main", "7")}, CodecError, r"Issue\.place\.number \(int \| None\)"),  # type: ignore[arg-type]
    ("list-element", {"tags": ["a", 5]}, CodecError, r"Issue\.tags\[1\] \(str\): 5 is an int"),
    ("set-member", {"labels": {"a", 1}}, CodecError, r"Issue\.labels member 1 \(str\)"),
    ("dict-value", {"scores": {"a": "1"}}, CodecError, r"Issue\.scores\.a \(int\): '1' is a str"),
    ("dict-key", {"scores": {1: 1}}, CodecError, r"Issue\.scores .*map key 1 is an int"),
    ("float-in-decimal", {"price": 0.1}, CodecError, r"Issue\.price \(Decimal\): 0\.1 is a float"),
    ("39-digits", {"priority": 10**38 + 1}, CodecError, "39 significant digits.*MAX_NUMBER_DIGITS"),
    ("too-big", {"price": Decimal("1E+126")}, CodecError, r"Issue\.price .*range.*MAX_NUMBER"),
    ("too-small", {"price": Decimal("-1E-131")}, CodecError, r"Issue\.price .*range.*MIN_NUMBER"),
    ("nan", {"price": Decimal("NaN")}, CodecError, "DynamoDB numbers cannot be"),
    ("surrogate", {"body": "ab\udc80"}, CodecError, r"Issue\.body: .*lone surrogate"),
    ("deep", {"extra": nested(33)}, CodecError, r"Issue\.extra: .*more than 32 .*MAX_DEPTH"),
    ("big-item", {"body": "x" * 410_000}, LimitExceededError, r"Issue: the item is .*MAX_ITEM_BY"),
    ("long-pk", {"issue_id": "p" * 2100}, LimitExceededError, "'pk' .*MAX_PARTITION_KEY_BYTES"),
    ("long-sk", {"issue_id": "é" * 520}, LimitExceededError, "'sk' would be 1046 bytes.*MAX_SORT"),
    ("long-index-pk", {"title": "t" * 2100}, LimitExceededError, "'GSI1PK' .*MAX_PARTITION_KEY"),
]
BAD_IDS = [case[0] for case in BAD_OBJECTS]


def bad_issue(fields: dict[str, Any]) -> Issue:
    return Issue(**{"issue_id": "bad", **fields})


@pytest.mark.parametrize(("case", "fields", "error", "message"), BAD_OBJECTS, ids=BAD_IDS)
async def test_put_sends_nothing(
    db: Database, case: str, fields: dict[str, Any], error: type[DynormError], message: str
) -> None:
    with count_requests(db) as log, pytest.raises(error, match=message):
        await db.put(bad_issue(fields))
    assert len(log) == 0
    assert await stored(db) == []


@pytest.mark.parametrize(("case", "fields", "error", "message"), BAD_OBJECTS, ids=BAD_IDS)
async def test_put_all_sends_nothing(
    db: Database, case: str, fields: dict[str, Any], error: type[DynormError], message: str
) -> None:
    with count_requests(db) as log, pytest.raises(error, match=message):
        await db.put_all([GOOD, bad_issue(fields)])
    assert len(log) == 0
    assert await stored(db) == []


@pytest.mark.transactions
@pytest.mark.parametrize(("case", "fields", "error", "message"), BAD_OBJECTS, ids=BAD_IDS)
async def test_transaction_put_sends_nothing(
    db: Database, case: str, fields: dict[str, Any], error: type[DynormError], message: str
) -> None:
    async def write() -> None:
        async with db.transaction() as tx:
            tx.put(GOOD)
            tx.put(bad_issue(fields))

    with count_requests(db) as log, pytest.raises(error, match=message):
        await write()
    assert len(log) == 0
    assert await stored(db) == []


#: (id, update arguments, error, what the message must say)
BAD_UPDATES: list[tuple[str, dict[str, Any], type[DynormError], str]] = [
    ("float-in-int", {"set": {"priority": 2.5}}, CodecError, r"Issue\.priority \(int\): 2\.5"),
    ("bool-in-int", {"set": {"priority": False}}, CodecError, r"Issue\.priority \(int\): False"),
    ("str-in-enum", {"set": {"status": "done"}}, CodecError, r"Issue\.status .*Status\.DONE"),
    ("nested-path", {"set": {"place.number": "x"}}, CodecError, r"Issue\.place\.number \(int"),
    ("list-path", {"set": {"tags[0]": 5}}, CodecError, r"Issue\.tags\[0\] \(str\): 5 is an int"),
    ("map-path", {"set": {"scores.b": 1.5}}, CodecError, r"Issue\.scores\.b \(int\): 1\.5"),
    ("39-digits", {"set": {"price": Decimal("1." + "1" * 38)}}, CodecError, "39 significant"),
    ("surrogate", {"set": {"title": "\ud83d"}}, CodecError, r"Issue\.title: .*lone surrogate"),
    ("deep", {"set": {"extra": nested(33)}}, CodecError, r"Issue\.extra: .*MAX_DEPTH"),
    ("big-value", {"set": {"body": "x" * 410_000}}, LimitExceededError, "MAX_ITEM_BYTES"),
    ("long-index-pk", {"set": {"title": "t" * 2100}}, LimitExceededError, "'GSI1PK'.*MAX_PART"),
    ("add-float-to-int", {"add": {"priority": 0.5}}, CodecError, r"Issue\.priority \(int\): 0\.5"),
    ("add-bool", {"add": {"priority": True}}, CodecError, r"Issue\.priority \(int\): True"),
    ("add-big", {"add": {"priority": 10**40 + 1}}, CodecError, "41 significant digits"),
    ("add-empty-set", {"add": {"labels": set()}}, ExpressionError, "refuses an empty set"),
    ("add-to-str", {"add": {"title": "x"}}, ExpressionError, "add= adds numbers to numbers"),
    ("add-wrong-set", {"add": {"labels": {1}}}, CodecError, r"Issue\.labels member 1 \(str\)"),
    (
        "condition",
        {"set": {"title": "new"}, "condition": Attr("priority") == "1"},
        CodecError,
        r"Issue\.priority \(int\): '1' is a str",
    ),
]
UPDATE_IDS = [case[0] for case in BAD_UPDATES]


async def refused_without_a_request(
    db: Database, write: Callable[[], Awaitable[object]], error: type[DynormError], message: str
) -> None:
    await db.put(GOOD)
    before = await stored(db)
    with count_requests(db) as log, pytest.raises(error, match=message):
        await write()
    assert len(log) == 0
    assert await stored(db) == before


@pytest.mark.parametrize(("case", "arguments", "error", "message"), BAD_UPDATES, ids=UPDATE_IDS)
async def test_update_sends_nothing(
    db: Database, case: str, arguments: dict[str, Any], error: type[DynormError], message: str
) -> None:
    async def write() -> None:
        await db.update(GOOD, **arguments)

    await refused_without_a_request(db, write, error, message)


@pytest.mark.transactions
@pytest.mark.parametrize(("case", "arguments", "error", "message"), BAD_UPDATES, ids=UPDATE_IDS)
async def test_transaction_update_sends_nothing(
    db: Database, case: str, arguments: dict[str, Any], error: type[DynormError], message: str
) -> None:
    async def write() -> None:
        async with db.transaction() as tx:
            tx.put(Issue("other"))
            tx.update(GOOD, **arguments)

    await refused_without_a_request(db, write, error, message)


async def test_put_all_validates_every_item_before_the_first_request(db: Database) -> None:
    good = [Issue(f"i{n:02d}", body="x" * 1000) for n in range(50)]
    huge = Issue("huge", body="x" * 410_000)
    with count_requests(db) as log, pytest.raises(LimitExceededError, match="MAX_ITEM_BYTES"):
        await db.put_all([*good, huge])
    assert len(log) == 0
    assert await stored(db) == []  # not 50 stored and one refused: nothing


async def test_delete_all_validates_every_key_before_the_first_request(db: Database) -> None:
    kept = [Issue(f"i{n}") for n in range(3)]
    await db.put_all(kept)
    with count_requests(db) as log, pytest.raises(LimitExceededError, match="MAX_PARTITION"):
        await db.delete_all([*kept, Issue("p" * 2100)])
    assert len(log) == 0
    assert len(await stored(db)) == 3


@pytest.mark.transactions
async def test_a_transaction_over_4_mb_sends_nothing(db: Database) -> None:
    async def write() -> None:
        async with db.transaction() as tx:
            for n in range(11):  # 11 items of 390,000 bytes: over 4 MiB at the 11th
                tx.put(Issue(f"i{n}", body="x" * 390_000))

    with count_requests(db) as log, pytest.raises(LimitExceededError) as caught:
        await write()
    assert "action 10 (Put)" in str(caught.value)
    assert "MAX_TRANSACTION_BYTES" in str(caught.value)
    assert len(log) == 0
    assert await stored(db) == []


async def test_values_at_the_limits_are_stored_and_read_back(db: Database) -> None:
    # The checks are DynamoDB's limits, not stricter: each of these is one byte or digit short.
    edge = [
        Issue("n", priority=10**38 - 1, price=MAX_NUMBER),
        Issue("m", priority=-(10**125), price=-MIN_NUMBER),
        Issue("k" * 1018, title="t" * 2042),  # sk: 1024 bytes; GSI1PK: 2048 bytes
        Issue("d", extra=nested(32)),
        Issue("b", body="x" * 399_000),
    ]
    await db.put_all(edge)
    for issue in edge:
        assert await db.get(Issue, issue_id=issue.issue_id) == issue
    await db.update(edge[0], add={"priority": -1, "labels": {"x"}})
    assert (await db.get(Issue, issue_id="n")).priority == 10**38 - 2
