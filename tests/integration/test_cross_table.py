"""Relationships across the tables of one connection: BelongsTo to a model of another table and
HasMany through another table's index load in the same call, their requests sent at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

import dynorm
from dynorm import Database, DefinitionError, Relationship, connect
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from dynorm.tools.design import design
from tests.faultproxy import FaultProxy

from .xtable_models import Account, Entry, Note, Receipt, Star, ledger, people

pytestmark = pytest.mark.integration

ALICE = Account(account_id="a1", name="Alice")
NOTE = Note(account_id="a1", note_id="n1", text="vip")
ENTRIES = [
    Entry(account_id="a1", entry_id=f"e{i}", at=f"2026-01-0{i}", amount=i) for i in (1, 2, 3)
]


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(people, ledger) as database:
        await database.put_all([ALICE, NOTE, *ENTRIES])
        yield database


async def test_belongs_to_another_table_loads_with_the_get_in_one_request(db: Database) -> None:
    planned = db.explain.get(Entry, account_id="a1", entry_id="e1", load=[Entry.account])
    with count_requests(db) as log:
        entry = await db.get(Entry, account_id="a1", entry_id="e1", load=[Entry.account])
    assert entry == ENTRIES[0]
    assert entry.account.loaded == ALICE
    # The entry and its account are both addressed by key: one BatchGetItem reads both tables.
    assert log.operations == ["BatchGetItem"]
    assert set(log.events[0].tables) == {db.name_of(people), db.name_of(ledger)}
    (request,) = planned
    assert request.operation == "BatchGetItem"
    assert list(request.params["RequestItems"]) == [db.name_of(ledger), db.name_of(people)]
    assert request.params["RequestItems"][db.name_of(people)]["Keys"] == [
        {"pk": {"S": "ACCOUNT#a1"}, "sk": {"S": "#ACCOUNT#a1"}}
    ]

    orphan = Entry(account_id="gone", entry_id="e9", at="2026-02-01")
    await db.put(orphan)
    found = await db.get(Entry, account_id="gone", entry_id="e9", load=[Entry.account])
    assert found.account.loaded is None
    assert await (await db.get(Entry, account_id="a1", entry_id="e2")).account.get() == ALICE


async def test_has_many_through_another_tables_index_loads_with_the_parent(db: Database) -> None:
    load: list[Relationship[Any, Account]] = [Account.notes, Account.entries]
    planned = db.explain.get(Account, account_id="a1", load=load)
    with count_requests(db) as log:
        account = await db.get(Account, account_id="a1", load=load)
    assert account == ALICE
    assert account.notes.loaded == [NOTE]
    assert account.entries.loaded == ENTRIES[::-1]  # newest first
    # One Query on each table, in the same round: the account rides with its notes.
    assert sorted(log.operations) == ["Query", "Query"]
    assert {e.tables for e in log.events} == {(db.name_of(people),), (db.name_of(ledger),)}
    assert [(r.params["TableName"], r.params.get("IndexName")) for r in planned] == [
        (db.name_of(people), None),
        (db.name_of(ledger), "GSI1"),
    ]
    assert await account.entries.all() == ENTRIES[::-1]
    assert await account.entries.query().count() == 3
    assert await account.entries.query(at="2026-01-02").all() == [ENTRIES[1]]
    page = await account.entries.page(limit=2)
    assert page.items == ENTRIES[:0:-1]
    rest = await account.entries.page(limit=2, cursor=page.cursor)
    assert rest.items == [ENTRIES[0]]


async def test_the_other_tables_request_goes_out_with_the_parents(
    db: Database, dynorm_server: RunningServer
) -> None:
    async with (
        FaultProxy.running(dynorm_server.url) as proxy,
        connect(
            people,
            ledger,
            endpoint_url=proxy.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={people: db.name_of(people), ledger: db.name_of(ledger)},
            fast_path=fast_path_selected(),
        ) as proxied,
    ):
        own = proxy.pause("Query", when=lambda body: "IndexName" not in body)
        other = proxy.pause("Query", when=lambda body: body.get("IndexName") == "GSI1")
        load: list[Relationship[Any, Account]] = [Account.notes, Account.entries]
        task = asyncio.ensure_future(proxied.get(Account, account_id="a1", load=load))
        # Both are held by the proxy at once: neither waited for the other's reply.
        await asyncio.wait_for(asyncio.gather(own.arrived.wait(), other.arrived.wait()), 30)
        own.release()
        other.release()
        account = await task
        explained = proxied.explain.get(Account, account_id="a1", load=load)
        sent = sorted(proxy.bodies, key=lambda body: body["TableName"])
        assert sent == sorted((r.params for r in explained), key=lambda params: params["TableName"])
        proxy.bodies.clear()
        entry = await proxied.get(Entry, account_id="a1", entry_id="e1", load=[Entry.account])
        assert entry.account.loaded == ALICE
        (planned,) = proxied.explain.get(
            Entry, account_id="a1", entry_id="e1", load=[Entry.account]
        )
        assert proxy.bodies == [planned.params]  # the one BatchGetItem, as explained
    assert account.entries.loaded == ENTRIES[::-1]


async def test_a_query_load_reads_the_other_table_after_the_page(db: Database) -> None:
    query = db.query(Entry, account_id="a1", load=[Entry.account])
    assert query.load_costs() == {
        "Entry.account": "one BatchGetItem per 100 distinct parents of a page, "
        "in Table 'people', after the page"
    }
    with count_requests(db) as log:
        entries = await query.all()
    assert entries == ENTRIES
    assert all(e.account.loaded == ALICE for e in entries)
    # The foreign key is known only from the page: a second round trip, one BatchGetItem.
    assert log.operations == ["Query", "BatchGetItem"]
    assert log.events[1].tables == (db.name_of(people),)

    again = await db.query(Entry, account_id="a1").all()
    with count_requests(db) as log:
        await db.load(again, Entry.account)
    assert log.operations == ["BatchGetItem"]
    assert [e.account.loaded for e in again] == [ALICE] * 3

    accounts = await db.query(Account, account_id="a1", load=[Account.entries]).all()
    assert accounts[0].entries.loaded == ENTRIES[::-1]


async def test_add_and_remove_write_the_childrens_table(db: Database) -> None:
    account = await db.get(Account, account_id="a1", load=[Account.entries])
    new = Entry(account_id="a1", entry_id="e4", at="2026-01-04")
    (put,) = db.explain.add(account, Account.entries, new)
    assert put.params["TableName"] == db.name_of(ledger)
    with count_requests(db) as log:
        await db.add(account, Account.entries, new)
    assert log.operations == ["PutItem"]
    assert log.events[0].tables == (db.name_of(ledger),)
    assert (await db.get(Account, account_id="a1", load=[Account.entries])).entries.loaded[0] == new
    await db.remove(account, Account.entries, new)
    assert await account.entries.all() == ENTRIES[::-1]


async def test_a_table_not_connected_is_named(dynorm_connect: Connect) -> None:
    async with dynorm_connect(ledger) as db:
        await db.put(ENTRIES[0])
        with pytest.raises(DefinitionError) as caught:
            await db.get(Entry, account_id="a1", entry_id="e1", load=[Entry.account])
        message = str(caught.value)
        assert "load=[Entry.account] reads Table 'people'" in message
        assert "connect(ledger, people, ...)" in message
        with pytest.raises(DefinitionError, match=r"connect\(ledger, people, \.\.\.\)"):
            db.explain.get(Entry, account_id="a1", entry_id="e1", load=[Entry.account])


def test_design_shows_the_other_tables_requests() -> None:
    shown = {p.name: p for p in design(people).patterns}
    entries = shown["Account.entries"]
    assert entries.strategy == "Index('GSI1') (Table 'ledger')"
    # The account's GetItem and the other table's Query go out together.
    assert entries.cost == "1 GetItem + 1 Query on GSI1 of Table 'ledger', newest first (at once)"
    assert entries.requests[1] == (
        "Query on GSI1 of Table 'ledger': GSI1PK = \"ACCOUNT#{account_id}\" "
        'AND begins_with(GSI1SK, "AT#"), newest first'
    )
    owned = {p.name: p for p in design(ledger).patterns}["Entry.account"]
    assert owned.cost == "1 BatchGetItem of Table 'ledger' and Table 'people'"
    assert "Query on GSI1 of Table 'ledger'" in design(people).markdown()  # what the CLI prints
    (request,) = owned.requests
    assert request == (
        'BatchGetItem: pk = "LEDGER#{account_id}", sk = "ENTRY#{entry_id}"; '
        'pk = "ACCOUNT#{account_id}", sk = "#ACCOUNT#{account_id}" in Table \'people\''
    )


async def test_a_parent_key_known_from_the_item_only_costs_a_second_round_trip(
    db: Database,
) -> None:
    await db.put(Receipt(receipt_id="r1", account_id="a1"))
    (first,) = db.explain.get(Receipt, receipt_id="r1", load=[Receipt.account])
    assert first.operation == "GetItem"  # the first round; the account's read follows it
    with count_requests(db) as log:
        receipt = await db.get(Receipt, receipt_id="r1", load=[Receipt.account])
    assert receipt.account.loaded == ALICE
    assert log.operations == ["GetItem", "BatchGetItem"]
    assert [e.tables for e in log.events] == [(db.name_of(ledger),), (db.name_of(people),)]
    shown = {p.name: p for p in design(ledger).patterns}["Receipt.account"]
    assert shown.cost == "1 GetItem, then 1 BatchGetItem of Table 'people'"


async def test_a_sharded_index_of_the_other_table_loads_every_shard_at_once(
    db: Database,
) -> None:
    stars = [Star(account_id="a1", user=f"u{i:02d}") for i in range(12)]
    await db.put_all(stars)
    planned = db.explain.get(Account, account_id="a1", load=[Account.stars])
    with count_requests(db) as log:
        account = await db.get(Account, account_id="a1", load=[Account.stars])
    assert account.stars.loaded == stars  # merged in sort key order
    assert sorted(log.operations) == ["GetItem", "Query", "Query", "Query", "Query"]
    assert [r.params["TableName"] for r in planned] == [db.name_of(people)] + [
        db.name_of(ledger)
    ] * 4
    assert await account.stars.all() == stars
    assert dynorm.jsonable(account)["stars"][0] == {"account_id": "a1", "user": "u00"}
