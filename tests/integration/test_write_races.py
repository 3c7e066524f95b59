"""Races, faults and corner cases of the write planner, each once a bug (found in review).

Faults are injected by wrapping the send of ``db``'s transport (the one seam every step goes
through); races are made deterministic by running a plan step by step with ``db._runner.step``
and doing the competing write in between.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import pytest

import dynorm.io.runner
from dynorm import (
    GSI,
    CopiesIncompleteError,
    Database,
    Denormalized,
    DynormError,
    Embedded,
    ExpressionError,
    HasMany,
    Index,
    Request,
    Table,
    ThrottledError,
)
from dynorm.core.steps import SendAll
from dynorm.testing import Connect, count_requests

pytestmark = [pytest.mark.integration, pytest.mark.transactions]

table = Table("write-races", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    birthdate: datetime.date
    country: str = "US"
    stars: int = 0
    books = HasMany["Book"](
        "Book",
        via=Denormalized(
            copy={"birthdate": "a_birthdate", "country": "a_country", "stars": "a_stars"},
            max_fanout=500,
        ),
    )


@table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}")
@attrs.define
class Book:
    author_name: str
    title: str
    a_birthdate: datetime.date | None = None
    a_country: str | None = None
    a_stars: int | None = None


# A parent whose children are linked through a field outside its primary key.
@table.model(pk="TEAM#{team_id}", sk="TEAM#{team_id}", GSI1=("SLUG#{slug}", "#TEAM"))
@attrs.define
class Team:
    team_id: str
    slug: str
    members = HasMany["Member"]("Member", via=Index("GSI1"))


@table.model(
    pk="MEMBER#{member_id}", sk="MEMBER#{member_id}", GSI1=("SLUG#{slug}", "MEMBER#{member_id}")
)
@attrs.define
class Member:
    member_id: str
    slug: str


@attrs.define
class Address:
    nickname: str
    street: str


@table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
@attrs.define
class Customer:
    customer_id: str
    name: str = ""
    addresses = HasMany[Address](Address, via=Embedded(key="nickname"))


BORN = datetime.date(1929, 10, 21)
LATER = datetime.date(1930, 1, 1)
OTHER = datetime.date(1931, 1, 1)


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


async def shelf(db: Database, books: int) -> Author:
    author = await db.put(Author("Le Guin", BORN))
    await db.put_all([Book("Le Guin", f"T{i:03d}") for i in range(books)])
    return author


async def copies(db: Database) -> set[tuple[Any, ...]]:
    return {
        (b.a_birthdate, b.a_country, b.a_stars)
        for b in await db.query(Book, author_name="Le Guin").all()
    }


def wrap_send(db: Database, hook: Callable[[Request, int], Awaitable[None]]) -> Callable[[], None]:
    """Call ``hook(request, n)`` before the n-th TransactWriteItems (from 0) is sent."""
    # The transport's: the parts of a Database hold its send, and each sends through this.
    transport = db._transport
    real = transport.send
    seen = [0]

    async def send(request: Request) -> dict[str, Any]:
        if request.operation == "TransactWriteItems":
            n = seen[0]
            seen[0] += 1
            await hook(request, n)
        return await real(request)

    transport.send = send  # type: ignore[method-assign]
    return lambda: setattr(transport, "send", real)


async def finish(db: Database, plan: Any, result: Any) -> Any:
    """Run the rest of ``plan`` as Database.run does, its last step having answered ``result``."""
    return await db.run(_resumed(plan, result))


def _resumed(plan: Any, result: Any) -> Any:
    try:
        step = plan.send(result)
        while True:
            try:
                answer = yield step
            except DynormError as exc:
                step = plan.throw(exc)
                continue
            step = plan.send(answer)
    except StopIteration as stop:
        return stop.value


async def run_until(db: Database, plan: Any, stop: Callable[[Any], bool]) -> Any:
    """Run ``plan`` as Database.run does until it yields a step for which ``stop`` holds."""
    result: Any = None
    error: DynormError | None = None
    while True:
        step = plan.send(result) if error is None else plan.throw(error)
        if stop(step):
            return step
        result, error = None, None
        try:
            result = await db._runner.step(step)
        except DynormError as exc:
            error = exc


def sends(operation: str) -> Callable[[Any], bool]:
    return lambda step: getattr(getattr(step, "request", None), "operation", None) == operation


# -- writing the parent again repairs a fan-out that failed part-way -------------------------------


async def test_writing_the_parent_again_repairs_copies_after_a_partial_fanout(
    db: Database,
) -> None:
    await shelf(db, books=150)  # > 99: the parent is written first, then checked batches

    async def throttle_second(_: Request, n: int) -> None:
        if n == 1:
            raise ThrottledError("injected", code="ThrottlingException")

    restore = wrap_send(db, throttle_second)
    with pytest.raises(CopiesIncompleteError):
        await db.put(Author("Le Guin", LATER))
    restore()
    # docs/integrity.md: "writing the parent again converges too".
    await db.put(Author("Le Guin", LATER))
    assert await copies(db) == {(LATER, "US", 0)}


# -- db.put returns the child as stored ------------------------------------------------------------


async def test_put_of_a_child_returns_it_as_stored(db: Database) -> None:
    await db.put(Author("Le Guin", BORN))
    book = await db.put(Book("Le Guin", "Tehanu", a_birthdate=LATER))
    stored = await db.get(Book, author_name="Le Guin", title="Tehanu")
    assert stored.a_birthdate == BORN
    assert book == stored  # returned: a_birthdate=LATER, a_country=None, a_stars=None


# -- update rewrites only the copies of the fields it changes --------------------------------------


async def test_update_of_one_copied_field_keeps_the_others_as_stored(db: Database) -> None:
    stale = await shelf(db, books=3)
    await db.update(await db.get(Author, name="Le Guin"), set={"country": "FR"})
    assert await copies(db) == {(BORN, "FR", 0)}
    await db.update(stale, set={"birthdate": LATER})  # `stale` still says country="US"
    assert (await db.get(Author, name="Le Guin")).country == "FR"
    assert await copies(db) == {(LATER, "FR", 0)}


async def test_update_past_a_transaction_with_a_stale_object_rewrites_the_copies(
    db: Database,
) -> None:
    stale = await shelf(db, books=120)
    await db.update(await db.get(Author, name="Le Guin"), set={"country": "FR"})
    await db.update(stale, set={"birthdate": LATER})  # only the birthdate's copies follow
    assert (await db.get(Author, name="Le Guin")).birthdate == LATER
    assert await copies(db) == {(LATER, "FR", 0)}


# -- update(add=) of a copied field is refused -----------------------------------------------------


async def test_update_add_on_a_copied_field_is_refused_before_sending(db: Database) -> None:
    author = await shelf(db, books=3)
    with count_requests(db) as log, pytest.raises(ExpressionError, match="set="):
        await db.update(author, add={"stars": 1})
    assert len(log) == 0
    assert (await db.get(Author, name="Le Guin")).stars == 0
    assert await copies(db) == {(BORN, "US", 0)}


# -- transactions ----------------------------------------------------------------------------------


async def test_a_transaction_renaming_a_parent_and_adding_a_child_gives_it_the_new_copy(
    db: Database,
) -> None:
    author = await shelf(db, books=0)
    async with db.transaction() as tx:
        tx.update(author, set={"birthdate": LATER})
        tx.put(Book("Le Guin", "Tehanu"))
    assert (await db.get(Author, name="Le Guin")).birthdate == LATER
    assert await copies(db) == {(LATER, "US", 0)}


async def test_a_transaction_that_changes_no_copy_may_touch_a_child(db: Database) -> None:
    author = await shelf(db, books=3)
    async with db.transaction() as tx:
        tx.put(author)  # nothing copied changes (say, a field of its own is bumped)
        tx.delete(Book("Le Guin", "T000"))  # LimitExceededError: "two actions touch the item"
    assert len(await db.query(Book, author_name="Le Guin").all()) == 2


async def test_a_transaction_that_changes_no_copy_is_not_limited_by_the_children(
    db: Database,
) -> None:
    author = await shelf(db, books=100)
    async with db.transaction() as tx:
        tx.put(author)  # LimitExceededError: "needs 101 actions"


# -- a child written while its parent is renamed ---------------------------------------------------


async def test_a_child_put_racing_a_rename_does_not_keep_the_old_copy(db: Database) -> None:
    await shelf(db, books=2)
    # The child's put has read its parent (BORN) and is about to send its PutItem...
    plan = db.writes.put(Book("Le Guin", "Tehanu"))
    step = await run_until(db, plan, sends("PutItem"))
    # ...when the parent is renamed (its transaction does not see the new child).
    await db.put(Author("Le Guin", LATER))
    # The child's put, then its parent read again.
    await finish(db, plan, await db._runner.step(step))
    assert await copies(db) == {(LATER, "US", 0)}


# -- cascade by key follows the stored item --------------------------------------------------------


async def test_cascade_delete_by_key_deletes_children_linked_by_a_non_key_field(
    db: Database,
) -> None:
    await db.put(Team("t1", "core"))
    await db.put_all([Member(f"m{i}", "core") for i in range(3)])
    await db.delete(Team, team_id="t1", cascade=True)  # returns quietly
    assert await db.query(Member, index="GSI1", slug="core").all() == []


# -- put_all with duplicates: the last one wins ----------------------------------------------------


async def test_put_all_duplicates_the_last_loaded_object_wins(db: Database) -> None:
    await db.put(Customer("c1"))
    await db.add(await db.get(Customer, customer_id="c1"), Customer.addresses, Address("a", "1"))
    loaded = await db.get(Customer, customer_id="c1")  # read with its children: [a]
    await db.add(await db.get(Customer, customer_id="c1"), Customer.addresses, Address("b", "2"))
    # put_all([loaded]) writes loaded whole: addresses [a]. With a duplicate before it, "the last
    # one wins" should give the same, but the fresh duplicate's read of the stored children
    # ([a, b]) is pasted into the last object's item.
    await db.put_all([Customer("c1", "first"), loaded])
    stored = await db.get(Customer, customer_id="c1")
    assert sorted(a.nickname for a in stored.addresses.loaded) == ["a"]  # got ["a", "b"]


# -- an older rename superseded by a newer one -----------------------------------------------------


async def test_an_older_rename_superseded_by_a_newer_one_raises_nothing(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # moto applies a refused transaction's writes and restores the table afterwards; two at once
    # restore each other's writes. Send them one at a time.
    monkeypatch.setattr(dynorm.io.runner, "SEND_ALL_WINDOW", 1)
    await shelf(db, books=250)  # three checked batches
    plan = db.writes.put(Author("Le Guin", LATER))
    step = await run_until(db, plan, lambda s: isinstance(s, SendAll))  # the checked batches
    await db.put(Author("Le Guin", OTHER))  # a newer rename owns the copies now

    async def slow_last(_: Request, n: int) -> None:
        if n == 2:
            await asyncio.sleep(0.3)  # one batch a little slower than the others

    restore = wrap_send(db, slow_last)
    outcomes = await db._runner.step(step)
    restore()
    await finish(db, plan, outcomes)  # no CopiesIncompleteError: the newer rename owns them
    assert await copies(db) == {(OTHER, "US", 0)}


# -- a fan-out failure keeps its cause -------------------------------------------------------------


async def test_a_fanout_failure_keeps_its_cause(db: Database) -> None:
    await shelf(db, books=150)

    async def reset(_: Request, n: int) -> None:
        if n == 1:
            raise ConnectionResetError("injected reset")

    restore = wrap_send(db, reset)
    with pytest.raises((CopiesIncompleteError, ConnectionResetError)) as caught:
        await db.put(Author("Le Guin", LATER))
    restore()
    # A failure outside dynorm's errors (a bug, say) is not swallowed by the fan-out.
    error = caught.value
    assert isinstance(error, ConnectionResetError) or isinstance(
        error.__cause__, ConnectionResetError
    )


# -- copies cannot be given values of their own ----------------------------------------------------


async def test_update_cannot_set_a_copy_to_another_value_than_the_parents(db: Database) -> None:
    await shelf(db, books=1)
    with pytest.raises(ExpressionError, match=r"Author\.birthdate"):
        await db.update(Book("Le Guin", "T000"), set={"a_birthdate": LATER})
    with pytest.raises(ExpressionError, match=r"a_country"):
        async with db.transaction() as tx:
            tx.update(Book("Le Guin", "T000"), remove=["a_country"])
    assert await copies(db) == {(BORN, "US", 0)}


# -- explain ---------------------------------------------------------------------------------------


async def test_explain_put_all_of_a_child_shows_its_parent_reads_and_its_batch(
    db: Database,
) -> None:
    await db.put(Author("Le Guin", BORN))
    requests = db.explain.put_all([Book("Le Guin", "Tehanu")])
    # The parent read for the copies, the batch, the parent read again (see CopyPlanner.recheck).
    assert [r.operation for r in requests] == ["BatchGetItem", "BatchWriteItem", "BatchGetItem"]
    with count_requests(db) as log:
        await db.put_all([Book("Le Guin", "Tehanu")])
    assert log.operations == [r.operation for r in requests]
