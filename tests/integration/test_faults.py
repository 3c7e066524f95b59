"""Nothing lost, nothing applied twice: every write and read path under injected faults.

Each test talks to the table through the fault proxy (``tests/faultproxy.py``) and checks what is
stored, item by item, through a direct connection afterwards. The proxy's record of what it
injected is asserted too, so a test cannot pass because its fault never happened.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import attrs
import pytest
import pytest_asyncio

from dynorm import (
    Attr,
    CopiesIncompleteError,
    Database,
    DynormError,
    OutcomeUnknownError,
    TransportError,
)
from dynorm.testing import RunningServer
from tests.faultproxy import (
    Fault,
    FaultPlan,
    Faulty,
    Injected,
    connect_through,
    connect_to,
    empty_table,
)

from .fault_models import Author, Book, Counter, Entry, Journal, Step, faults

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="module")]

#: Enough attempts that a request fails for good only when something is wrong, not by bad luck.
ATTEMPTS = 10

#: Faults a client of DynamoDB meets, at rates far above real life; none applies a request
#: without answering it, so every write path must come out exact.
REFUSALS: Mapping[Fault, float] = {
    "throttle": 0.08,
    "provisioned": 0.04,
    "error_500": 0.04,
    "reset": 0.04,
    "partial_batch": 0.3,
}
#: Plus faults that apply a request and lose or spoil its answer.
EVERYTHING: Mapping[Fault, float] = {**REFUSALS, "lost_reply": 0.04, "error_500_after": 0.04}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def connected(dynorm_server: RunningServer) -> AsyncIterator[Faulty]:
    """One table and proxy for the module: connecting costs more than most tests here."""
    async with connect_through(dynorm_server.url, faults, max_attempts=ATTEMPTS) as both:
        yield both


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def impatient(connected: Faulty) -> AsyncIterator[Database]:
    """The module's table through the same proxy, with two attempts per request."""
    async with connect_to(
        connected.proxy.url, faults, connected.db.table_name, max_attempts=2
    ) as db:
        yield db


@pytest_asyncio.fixture(loop_scope="module")
async def faulty(connected: Faulty) -> AsyncIterator[Faulty]:
    """The module's table, empty, and its proxy with no faults planned."""
    connected.proxy.reset()
    yield connected
    connected.proxy.reset()
    await empty_table(connected.direct)
    assert connected.proxy.errors == []


async def stored_entries(direct: Database, box: str) -> list[Entry]:
    return await direct.query(Entry, box=box, consistent=True).all()


def entries(box: str, count: int) -> list[Entry]:
    return [Entry(box, n, f"{box}-{n}") for n in range(count)]


def faulted(faulty: Faulty, *operations: str) -> collections.Counter[Fault]:
    """How many faults each kind the named operations met (all operations if none named)."""
    return collections.Counter(
        e.fault for e in faulty.proxy.injected if not operations or e.operation in operations
    )


# -- paths that are safe to repeat: exact under every fault -------------------------------------


async def test_put_stores_each_item_once(faulty: Faulty) -> None:
    faulty.proxy.use(FaultPlan(seed=1, rates=EVERYTHING))
    wanted = entries("put", 100)
    await asyncio.gather(*(faulty.db.put(e) for e in wanted))
    assert await stored_entries(faulty.direct, "put") == wanted
    assert len(faulted(faulty, "PutItem")) >= 4


async def test_put_all_stores_hundreds_of_items_once(faulty: Faulty) -> None:
    faulty.proxy.use(FaultPlan(seed=2, rates=EVERYTHING))
    wanted = {box: entries(box, 100) for box in ("a", "b", "c")}
    written = await faulty.db.put_all([e for box in wanted.values() for e in box])
    assert written == 300
    for box, expected in wanted.items():
        assert await stored_entries(faulty.direct, box) == expected
    seen = faulted(faulty, "BatchWriteItem")
    assert seen["partial_batch"] >= 3
    assert len(seen) >= 4


async def test_delete_all_deletes_exactly_the_given_items(faulty: Faulty) -> None:
    everything = entries("d", 250)
    await faulty.direct.put_all(everything)
    faulty.proxy.use(FaultPlan(seed=3, rates=EVERYTHING))
    assert await faulty.db.delete_all(everything[:150]) == 150
    assert await stored_entries(faulty.direct, "d") == everything[150:]
    assert faulted(faulty, "BatchWriteItem")["partial_batch"] >= 2


async def test_get_many_reads_every_item_back_equal(faulty: Faulty) -> None:
    everything = entries("g", 200)
    await faulty.direct.put_all(everything)
    faulty.proxy.use(FaultPlan(seed=4, rates=EVERYTHING))
    keys = [{"box": "g", "n": n} for n in range(250)]  # the last 50 are not stored
    found = await faulty.db.get_many(Entry, keys)
    assert found == [*everything, *[None] * 50]
    assert faulted(faulty, "BatchGetItem")["partial_batch"] >= 1


async def test_query_pages_read_every_item_once_in_order(faulty: Faulty) -> None:
    everything = entries("q", 200)
    await faulty.direct.put_all(everything)
    faulty.proxy.use(FaultPlan(seed=5, rates=EVERYTHING))
    query = faulty.db.query(Entry, box="q")
    pages, cursor = [], None
    while True:
        page = await query.page(limit=30, cursor=cursor)
        pages.append(page.items)
        if (cursor := page.cursor) is None:
            break
    assert [e for items in pages for e in items] == everything
    assert [e async for e in faulty.db.query(Entry, box="q")] == everything
    assert faulted(faulty, "Query")


# -- writes that are not safe to repeat: a lost answer must not apply them twice ---------------

#: Faults whose request reached the server although the client got no answer (or an error).
APPLIED_UNANSWERED: list[Fault] = ["lost_reply", "error_500_after"]
#: Faults whose request never reached the server.
NOT_APPLIED: list[Fault] = ["throttle", "error_500", "reset"]


def stored_count(fault: Fault, *, done: bool) -> int:
    """How many times a write met by ``fault`` is stored, given whether the call succeeded.

    A refusal DynamoDB states (throttling) is retried: the call succeeds. After the other
    faults the client cannot tell whether its write was applied, so "outcome unknown" is an
    honest answer; the write is then stored once if it reached the server, else not at all.
    """
    assert done or fault != "throttle", "a throttled write was refused, so it is safe to retry"
    return 1 if done or fault in APPLIED_UNANSWERED else 0


async def attempt(write: Awaitable[Any]) -> bool:
    """Run ``write``: True if it succeeded, False if it raised an "outcome unknown" error."""
    try:
        await write
    except OutcomeUnknownError:
        return False
    return True


@pytest.mark.parametrize("fault", [*NOT_APPLIED, *APPLIED_UNANSWERED])
async def test_add_to_a_counter_counts_once(faulty: Faulty, fault: Fault) -> None:
    counter = await faulty.direct.put(Counter("c"))
    faulty.proxy.inject(fault, operation="UpdateItem")
    done = await attempt(faulty.db.update(counter, add={"hits": 1}))
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    stored = await faulty.direct.get(Counter, name="c", consistent=True)
    assert stored.hits == stored_count(fault, done=done)


@pytest.mark.parametrize("fault", [*NOT_APPLIED, *APPLIED_UNANSWERED])
async def test_append_to_an_embedded_list_appends_once(faulty: Faulty, fault: Fault) -> None:
    journal = await faulty.direct.put(Journal("j"))
    await faulty.direct.add(journal, Journal.steps, Step("first"))
    faulty.proxy.inject(fault, operation="UpdateItem")
    done = await attempt(faulty.db.add(journal, Journal.steps, Step("second")))
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    stored = await faulty.direct.get(Journal, name="j", consistent=True)
    steps = await stored.steps.all()
    assert steps == [Step("first"), *[Step("second")] * stored_count(fault, done=done)]


@pytest.mark.parametrize("fault", [*NOT_APPLIED, *APPLIED_UNANSWERED])
async def test_put_without_overwrite_succeeds_when_its_own_write_is_stored(
    faulty: Faulty, fault: Fault
) -> None:
    faulty.proxy.inject(fault, operation="PutItem")
    await faulty.db.put(Counter("new", note="mine"), overwrite=False)
    assert faulty.proxy.injected == [Injected("PutItem", fault)]
    stored = await faulty.direct.get(Counter, name="new", consistent=True)
    assert stored == Counter("new", note="mine")


@pytest.mark.parametrize("fault", [*NOT_APPLIED, *APPLIED_UNANSWERED])
async def test_conditional_update_succeeds_when_its_own_write_is_stored(
    faulty: Faulty, fault: Fault
) -> None:
    counter = await faulty.direct.put(Counter("v", version=1))
    faulty.proxy.inject(fault, operation="UpdateItem")
    updated = await faulty.db.update(
        counter, set={"version": 2, "note": "mine"}, condition=Attr("version") == 1
    )
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    assert updated == Counter("v", version=2, note="mine")
    assert await faulty.direct.get(Counter, name="v", consistent=True) == updated


# -- another client writes the same item between a lost attempt and the next one -----------------


async def with_a_write_between(
    faulty: Faulty, call: Awaitable[Any], other: Callable[[], Awaitable[object]]
) -> bool:
    """Run ``call`` through the proxy and ``other`` directly, after ``call``'s first request.

    The request ``call`` sends after its first (the retry, or a read that checks) is held at
    the proxy until ``other`` is done. Returns whether ``call`` succeeded (see :func:`attempt`).
    """
    held = faulty.proxy.pause(skip=1)
    calling = asyncio.ensure_future(attempt(call))
    arrived = asyncio.ensure_future(held.arrived.wait())
    await asyncio.wait({calling, arrived}, return_when=asyncio.FIRST_COMPLETED)
    arrived.cancel()
    await other()
    held.release()
    return await calling


@pytest.mark.parametrize("fault", APPLIED_UNANSWERED)
async def test_add_counts_once_when_another_client_adds_before_the_retry(
    faulty: Faulty, fault: Fault
) -> None:
    counter = await faulty.direct.put(Counter("hot"))
    faulty.proxy.inject(fault, operation="UpdateItem")
    await with_a_write_between(
        faulty,
        faulty.db.update(counter, add={"hits": 1}),
        lambda: faulty.direct.update(counter, add={"hits": 1}),
    )
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    assert (await faulty.direct.get(Counter, name="hot", consistent=True)).hits == 2


@pytest.mark.parametrize("fault", APPLIED_UNANSWERED)
async def test_append_appends_once_when_another_client_appends_before_the_retry(
    faulty: Faulty, fault: Fault
) -> None:
    journal = await faulty.direct.put(Journal("hot"))
    faulty.proxy.inject(fault, operation="UpdateItem")
    await with_a_write_between(
        faulty,
        faulty.db.add(journal, Journal.steps, Step("mine")),
        lambda: faulty.direct.add(Journal("hot"), Journal.steps, Step("theirs")),
    )
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    stored = await faulty.direct.get(Journal, name="hot", consistent=True)
    assert sorted(s.text for s in await stored.steps.all()) == ["mine", "theirs"]


@pytest.mark.parametrize("fault", APPLIED_UNANSWERED)
async def test_conditional_update_is_never_a_false_condition_failure(
    faulty: Faulty, fault: Fault
) -> None:
    counter = await faulty.direct.put(Counter("v", version=1))
    faulty.proxy.inject(fault, operation="UpdateItem")
    await with_a_write_between(
        faulty,
        faulty.db.update(
            counter, set={"version": 2, "note": "mine"}, condition=Attr("version") == 1
        ),
        lambda: faulty.direct.update(counter, set={"note": "theirs"}),
    )
    assert faulty.proxy.injected == [Injected("UpdateItem", fault)]
    assert (await faulty.direct.get(Counter, name="v", consistent=True)).version == 2


# -- denormalized copies: a rename reaches every copy, or says what is left ---------------------

BOOKS = 105  # over the 100 writes one transaction takes: the copies go out on their own


@pytest.mark.transactions
async def test_a_rename_under_faults_rewrites_every_copy(faulty: Faulty) -> None:
    await faulty.direct.put(Author("ann", "Old"))
    await faulty.direct.put_all([Book("ann", n, "Old") for n in range(BOOKS)])
    faulty.proxy.use(FaultPlan(seed=9, rates=EVERYTHING))
    await faulty.db.put(Author("ann", "New"))
    assert await faulty.direct.get(Author, name="ann", consistent=True) == Author("ann", "New")
    books = await faulty.direct.query(Book, author="ann", consistent=True).all()
    assert books == [Book("ann", n, "New") for n in range(BOOKS)]
    assert faulty.proxy.injected


def rewrites_book(n: int) -> Callable[[dict[str, Any]], bool]:
    """Whether a TransactWriteItems body rewrites book ``n``'s copy."""
    sk = {"S": f"BOOK#{n:04d}"}
    return lambda body: any(
        action.get("Update", {}).get("Key", {}).get("sk") == sk
        for action in body.get("TransactItems", [])
    )


@pytest.mark.transactions
async def test_a_rename_that_fails_part_way_stops_and_sync_copies_repairs(
    faulty: Faulty, impatient: Database
) -> None:
    await faulty.direct.put(Author("bob", "Old"))
    await faulty.direct.put_all([Book("bob", n, "Old") for n in range(BOOKS)])
    faulty.proxy.inject(
        "throttle", operation="TransactWriteItems", times=2, when=rewrites_book(BOOKS - 1)
    )
    with pytest.raises(CopiesIncompleteError) as failed:
        await impatient.put(Author("bob", "New"))
    sent = len(faulty.proxy.requests)
    stored = await faulty.direct.get(Author, name="bob", consistent=True)
    books = await faulty.direct.query(Book, author="bob", consistent=True).all()
    # Nothing is still being written after the error: the rest of the fan-out was stopped.
    assert len(faulty.proxy.requests) == sent, "copy updates went on after put() raised"
    assert faulty.proxy.injected == [Injected("TransactWriteItems", "throttle")] * 2
    assert stored == Author("bob", "New")
    stale = [b for b in books if b.author_pen_name != "New"]
    assert stale, "the injected failure left no copy stale"
    assert failed.value.pending == len(stale)
    assert f"{len(stale)} of {BOOKS}" in str(failed.value)
    assert await faulty.db.sync_copies(stored) == len(stale)
    books = await faulty.direct.query(Book, author="bob", consistent=True).all()
    assert books == [Book("bob", n, "New") for n in range(BOOKS)]
    assert await faulty.db.sync_copies(stored) == 0


@pytest.mark.parametrize("operation", ["GetItem", "PutItem", "UpdateItem"])
async def test_a_request_that_keeps_failing_raises_a_dynorm_error(
    faulty: Faulty, impatient: Database, operation: str
) -> None:
    counter = await faulty.direct.put(Counter("gone"))
    faulty.proxy.inject("reset", operation=operation, times=2)
    calls = {
        "GetItem": lambda: impatient.get(Counter, name="gone"),
        "PutItem": lambda: impatient.put(counter),
        "UpdateItem": lambda: impatient.update(counter, add={"hits": 1}),
    }
    with pytest.raises(DynormError) as failed:
        await calls[operation]()
    # A reset after the request was sent may have applied it: a write that is not safe to
    # repeat says so (after one attempt and a read that cannot tell); a read or an idempotent
    # put is a TransportError (a ConnectionError) once every attempt is spent.
    if operation == "UpdateItem":
        assert faulty.proxy.injected[0] == Injected(operation, "reset")
        assert isinstance(failed.value, OutcomeUnknownError)
    else:
        assert faulty.proxy.injected == [Injected(operation, "reset")] * 2
        assert isinstance(failed.value, TransportError)
        assert isinstance(failed.value, ConnectionError)
    assert (await faulty.direct.get(Counter, name="gone", consistent=True)).hits == 0


# -- many coroutines, one Database, random faults ------------------------------------------------


@attrs.define
class Ledger:
    """What the workers know they wrote."""

    entries: dict[int, Entry | None] = attrs.field(factory=dict)
    hits: collections.Counter[str] = attrs.field(factory=collections.Counter)
    unknown_hits: collections.Counter[str] = attrs.field(factory=collections.Counter)
    steps: dict[str, list[Step]] = attrs.field(factory=lambda: collections.defaultdict(list))
    unknown_steps: dict[str, list[Step]] = attrs.field(
        factory=lambda: collections.defaultdict(list)
    )


WORKERS = 300
BATCH_EVERY = 50
COUNTERS = [f"counter-{i}" for i in range(10)]
JOURNALS = [f"journal-{i}" for i in range(3)]


def worker(db: Database, ledger: Ledger) -> Callable[[int], Awaitable[None]]:
    """Coroutine ``i``: its own item (put, some updated, some deleted), then shared writes."""

    async def run(i: int) -> None:
        entry = await db.put(Entry("own", i, f"put-{i}"))
        ledger.entries[i] = entry
        if i % 3 == 0:
            entry = await db.update(entry, set={"text": f"updated-{i}"})
            assert entry.text == f"updated-{i}"
            ledger.entries[i] = entry
        if i % 7 == 0:
            await db.delete(entry)
            ledger.entries[i] = None
        if i % 2 == 0:
            name = COUNTERS[i % len(COUNTERS)]
            ok = await attempt(db.update(Counter(name), add={"hits": 1}))
            (ledger.hits if ok else ledger.unknown_hits)[name] += 1
        if i % 5 == 0:
            journal, step = JOURNALS[i % len(JOURNALS)], Step(f"step-{i}")
            ok = await attempt(db.add(Journal(journal), Journal.steps, step))
            (ledger.steps if ok else ledger.unknown_steps)[journal].append(step)
        if i % BATCH_EVERY == 0:
            batch = entries(f"batch-{i}", 40)
            await db.put_all(batch)
            assert await db.get_many(Entry, [{"box": e.box, "n": e.n} for e in batch]) == batch

    return run


@attrs.frozen
class Crowd:
    """One run of the workers under faults: what they know they wrote, and what is stored."""

    ledger: Ledger
    entries: dict[int, Entry]
    batches: dict[int, list[Entry]]
    hits: dict[str, int]
    steps: dict[str, list[Step]]
    faults: collections.Counter[Fault]


async def stored_state(direct: Database, ledger: Ledger, faults_seen: Any) -> Crowd:
    entries = {e.n: e for e in await stored_entries(direct, "own")}
    batches = {
        i: await stored_entries(direct, f"batch-{i}") for i in range(0, WORKERS, BATCH_EVERY)
    }
    hits = {name: (await direct.get(Counter, name=name, consistent=True)).hits for name in COUNTERS}
    steps = {}
    for name in JOURNALS:
        journal = await direct.get(Journal, name=name, consistent=True)
        steps[name] = await journal.steps.all()
    return Crowd(ledger, entries, batches, hits, steps, faults_seen)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def crowd(connected: Faulty) -> AsyncIterator[Crowd]:
    """300 coroutines on one Database under random faults, run once for the tests below."""
    connected.proxy.reset()
    await connected.direct.put_all([Counter(name) for name in COUNTERS])
    for name in JOURNALS:
        await connected.direct.put(Journal(name))
    connected.proxy.use(FaultPlan(seed=8, rates={**EVERYTHING, "partial_batch": 0.5}))
    ledger = Ledger()
    run = worker(connected.db, ledger)
    try:
        async with asyncio.timeout(25):
            await asyncio.gather(*(run(i) for i in range(WORKERS)))
        connected.proxy.use(None)
        yield await stored_state(connected.direct, ledger, faulted(connected))
    finally:
        connected.proxy.reset()
        await empty_table(connected.direct)


async def test_hundreds_of_coroutines_lose_no_item(crowd: Crowd) -> None:
    for i in range(WORKERS):
        assert crowd.entries.get(i) == crowd.ledger.entries[i], i
    for i, batch in crowd.batches.items():
        assert batch == entries(f"batch-{i}", 40)
    assert crowd.faults["lost_reply"] >= 10
    assert crowd.faults["error_500_after"] >= 10
    assert crowd.faults["partial_batch"] >= 2  # arrival order varies; some always come


async def test_hundreds_of_coroutines_apply_nothing_twice(crowd: Crowd) -> None:
    ledger = crowd.ledger
    for name in COUNTERS:
        assert crowd.hits[name] <= ledger.hits[name] + ledger.unknown_hits[name], name
    for name in JOURNALS:
        steps = [s.text for s in crowd.steps[name]]
        assert len(steps) == len(set(steps)), f"{name}: a step appended twice"
        written = {s.text for s in [*ledger.steps[name], *ledger.unknown_steps[name]]}
        assert set(steps) <= written


async def test_hundreds_of_coroutines_lose_no_shared_write(
    crowd: Crowd, dynorm_backend: str
) -> None:
    if dynorm_backend == "moto":
        pytest.skip(
            "moto's UpdateItem is not atomic: concurrent updates of one item can overwrite "
            "each other without any fault (measured: 598 of 600 ADDs, ~150 of 200 list "
            "appends stored), so only dynalite and DynamoDB can show that none is lost"
        )
    ledger = crowd.ledger
    for name in COUNTERS:
        assert crowd.hits[name] >= ledger.hits[name], name
    for name in JOURNALS:
        assert {s.text for s in ledger.steps[name]} <= {s.text for s in crowd.steps[name]}
