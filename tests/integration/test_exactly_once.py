"""``update(..., exactly_once=True)``: counters and appends applied once under any fault.

Through the fault proxy (``tests/faultproxy.py``), which keeps ``ClientRequestToken`` as
DynamoDB does (moto does not): a transaction whose token already succeeded is answered again
without being applied again. A plain ``add=`` under the same faults ends in
OutcomeUnknownError now and then (see test_faults.py); these must not.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import pytest_asyncio

from dynorm import (
    Attr,
    ConditionFailedError,
    Database,
    DatabaseError,
    ExpressionError,
    ItemNotFoundError,
    OutcomeUnknownError,
    Request,
    Table,
    VersionConflictError,
)
from dynorm.testing import RunningServer, count_requests
from tests.faultproxy import Fault, FaultPlan, Faulty, Injected, connect_through, connect_to

pytestmark = [
    pytest.mark.integration,
    pytest.mark.transactions,
    pytest.mark.asyncio(loop_scope="module"),
]

once = Table("once", pk="pk", sk="sk")


@once.model(pk="TALLY#{name}", sk="TALLY#{name}")
@attrs.define
class Tally:
    """A shared counter, and a list that appends grow."""

    name: str
    hits: int = 0
    seen: list[str] = attrs.Factory(list)


@once.model(pk="DOC#{name}", sk="DOC#{name}", version="version")
@attrs.define
class Doc:
    name: str
    hits: int = 0
    version: int = 0


#: Enough attempts that a call fails for good only when something is wrong.
ATTEMPTS = 10
#: Faults that never reach the server, and faults applied whose answer is lost or spoiled.
NOT_APPLIED: list[Fault] = ["throttle", "error_500", "reset"]
APPLIED_UNANSWERED: list[Fault] = ["lost_reply", "error_500_after"]
EVERYTHING: dict[Fault, float] = {
    "throttle": 0.04,
    "error_500": 0.05,
    "reset": 0.05,
    "lost_reply": 0.06,
    "error_500_after": 0.06,
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def connected(dynorm_server: RunningServer) -> AsyncIterator[Faulty]:
    # No retry quota: these tests are about exactness under many faults at once.
    async with connect_through(
        dynorm_server.url, once, max_attempts=ATTEMPTS, retry_quota=None
    ) as both:
        yield both


@pytest_asyncio.fixture(loop_scope="module")
async def faulty(connected: Faulty) -> AsyncIterator[Faulty]:
    """The module's table with a fresh counter ``c``, and a proxy with no faults planned."""
    connected.proxy.reset()
    await connected.direct.put(Tally("c"))
    yield connected
    connected.proxy.reset()
    assert connected.proxy.errors == []


@pytest_asyncio.fixture(loop_scope="module")
async def once_db(faulty: Faulty) -> AsyncIterator[Database]:
    """The same table through the same proxy, connected with ``exactly_once=True``."""
    async with connect_to(
        faulty.proxy.url, once, faulty.db.table_name, max_attempts=ATTEMPTS, exactly_once=True
    ) as db:
        yield db


async def stored(faulty: Faulty, name: str = "c") -> Tally:
    return await faulty.direct.get(Tally, name=name, consistent=True)


def tokens(faulty: Faulty) -> list[str]:
    """The ClientRequestToken of every TransactWriteItems that reached the proxy, in order."""
    return [
        body["ClientRequestToken"]
        for operation, body in zip(faulty.proxy.requests, faulty.proxy.bodies, strict=True)
        if operation == "TransactWriteItems"
    ]


# -- under faults ------------------------------------------------------------------------------


async def test_hundreds_of_coroutines_count_a_shared_counter_exactly(faulty: Faulty) -> None:
    calls = 300
    faulty.proxy.use(FaultPlan(seed=20, rates=EVERYTHING))
    outcomes: collections.Counter[str] = collections.Counter()

    async def add(i: int) -> None:
        try:
            await faulty.db.update(
                Tally("c"), add={"hits": 1}, exactly_once=True, returns=None if i % 2 else "new"
            )
        except OutcomeUnknownError:
            outcomes["unknown"] += 1
        else:
            outcomes["done"] += 1

    async with asyncio.timeout(60):
        await asyncio.gather(*(add(i) for i in range(calls)))
    faulty.proxy.use(None)
    assert outcomes == {"done": calls}
    assert (await stored(faulty)).hits == calls
    seen = collections.Counter(i.fault for i in faulty.proxy.injected)
    assert seen["lost_reply"] >= 5
    assert seen["error_500_after"] >= 5
    assert seen["reset"] >= 5
    assert faulty.proxy.replayed >= 10  # applied attempts retried: answered from their token
    assert "UpdateItem" not in faulty.proxy.requests


@pytest.mark.parametrize("fault", [*NOT_APPLIED, *APPLIED_UNANSWERED])
async def test_an_add_counts_once_whatever_the_fault(faulty: Faulty, fault: Fault) -> None:
    faulty.proxy.inject(fault, operation="TransactWriteItems")
    counter = await faulty.db.update(Tally("c"), add={"hits": 1}, exactly_once=True)
    assert counter.hits == 1
    assert faulty.proxy.injected == [Injected("TransactWriteItems", fault)]
    assert (await stored(faulty)).hits == 1
    assert faulty.proxy.replayed == (1 if fault in APPLIED_UNANSWERED else 0)
    first, again = tokens(faulty)
    assert first == again  # the same token on the retried attempt


async def test_a_transaction_conflict_is_retried_with_the_same_token(faulty: Faulty) -> None:
    # Another transaction holding the item cancels ours (nothing applied): sent again as it was.
    faulty.proxy.inject("transaction_conflict", operation="TransactWriteItems", times=2)
    with count_requests(faulty.db) as log:
        counter = await faulty.db.update(Tally("c"), add={"hits": 1}, exactly_once=True)
    assert counter.hits == 1
    assert log.operations == ["TransactWriteItems"] * 3 + ["GetItem"]
    assert len(set(tokens(faulty))) == 1
    assert faulty.proxy.pending() == 0


async def test_appends_under_lost_replies_store_each_element_once(faulty: Faulty) -> None:
    faulty.proxy.use(FaultPlan(seed=21, rates={"lost_reply": 0.3, "error_500_after": 0.1}))
    wanted = [f"s{i}" for i in range(60)]
    await asyncio.gather(
        *(
            faulty.db.update(Tally("c"), append={"seen": [s]}, exactly_once=True, returns=None)
            for s in wanted
        )
    )
    faulty.proxy.use(None)
    assert sorted((await stored(faulty)).seen) == sorted(wanted)
    assert faulty.proxy.replayed >= 5


# -- what is sent ------------------------------------------------------------------------------


async def test_one_transaction_with_a_token_then_the_read_back(faulty: Faulty) -> None:
    with count_requests(faulty.db) as log:
        counter = await faulty.db.update(Tally("c"), add={"hits": 2}, exactly_once=True)
    assert counter == Tally("c", hits=2)
    assert log.operations == ["TransactWriteItems", "GetItem"]
    (body, read) = faulty.proxy.bodies
    assert len(body["TransactItems"]) == 1
    assert set(body["TransactItems"][0]) == {"Update"}
    assert read["ConsistentRead"] is True
    assert "dynorm:wt" not in str(body)
    raw = await faulty.direct.send(
        Request("GetItem", {"TableName": faulty.direct.table_name, "Key": read["Key"]})
    )
    assert "dynorm:wt" not in raw["Item"]  # no write token is needed, nor stored
    (explained, _) = faulty.db.explain.update(Tally("c"), add={"hits": 2}, exactly_once=True)
    assert {**explained.params, "ClientRequestToken": body["ClientRequestToken"]} == body
    with count_requests(faulty.db) as log:
        await faulty.db.update(Tally("c"), add={"hits": 1}, exactly_once=True, returns=None)
    assert log.operations == ["TransactWriteItems"]
    first, second = tokens(faulty)
    assert first != second  # one token per call


async def test_returns_updated_new_reads_back_and_old_values_are_refused(faulty: Faulty) -> None:
    changed = await faulty.db.update(
        Tally("c"), add={"hits": 3}, exactly_once=True, returns="updated_new"
    )
    assert changed == {"hits": 3}
    for returns in ("old", "updated_old"):
        with (
            count_requests(faulty.db) as log,
            pytest.raises(ExpressionError, match="returns='new'"),
        ):
            await faulty.db.update(
                Tally("c"),
                add={"hits": 1},
                exactly_once=True,
                returns=returns,
            )
        assert len(log) == 0
    assert (await stored(faulty)).hits == 3


async def test_connect_makes_it_the_default_and_a_call_overrides_it(
    faulty: Faulty, once_db: Database
) -> None:
    with count_requests(once_db) as log:
        assert (await once_db.update(Tally("c"), add={"hits": 1})).hits == 1
        assert (await once_db.update(Tally("c"), add={"hits": 1}, exactly_once=False)).hits == 2
    assert log.operations == ["TransactWriteItems", "GetItem", "UpdateItem"]
    assert [r.operation for r in once_db.explain.update(Tally("c"), add={"hits": 1})] == [
        "TransactWriteItems",
        "GetItem",
    ]
    (plain,) = faulty.db.explain.update(Tally("c"), add={"hits": 1})
    assert plain.operation == "UpdateItem"  # connect's default: False


# -- refusals are the plain update's -----------------------------------------------------------


async def refusal(db: Database, obj: object, **options: Any) -> DatabaseError:
    with pytest.raises(DatabaseError) as caught:
        await db.update(obj, **options)
    return caught.value


async def test_a_failed_condition_raises_what_a_plain_update_raises(faulty: Faulty) -> None:
    options: dict[str, Any] = {"add": {"hits": 1}, "condition": Attr("hits") > 5}
    plain = await refusal(faulty.db, Tally("c"), **options)
    exact = await refusal(faulty.db, Tally("c"), exactly_once=True, **options)
    assert type(exact) is type(plain) is ConditionFailedError
    assert str(exact) == str(plain)
    assert exact.code == plain.code == "ConditionalCheckFailedException"
    assert exact.operation == plain.operation == "UpdateItem"
    # No item: ItemNotFoundError, as for a plain update.
    missing = await refusal(faulty.db, Tally("nobody"), add={"hits": 1}, exactly_once=True)
    assert type(missing) is ItemNotFoundError
    assert str(missing) == str(await refusal(faulty.db, Tally("nobody"), add={"hits": 1}))
    assert (await stored(faulty)).hits == 0


async def test_a_stale_version_raises_a_version_conflict(faulty: Faulty) -> None:
    await faulty.direct.put(Doc("d"))
    stale = Doc("d", version=1)
    await faulty.direct.update(Doc("d", version=1), add={"hits": 1})  # now version 2
    plain = await refusal(faulty.db, attrs.evolve(stale), add={"hits": 1})
    exact = await refusal(faulty.db, attrs.evolve(stale), add={"hits": 1}, exactly_once=True)
    assert type(exact) is type(plain) is VersionConflictError
    assert str(exact) == str(plain)
    assert isinstance(exact, VersionConflictError)
    assert (exact.expected, exact.stored) == (1, 2)
    done = await faulty.db.update(Doc("d", version=2), add={"hits": 1}, exactly_once=True)
    assert (done.hits, done.version) == (2, 3)
