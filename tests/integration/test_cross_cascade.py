"""Cascades across the tables of one connection (``tests/integration/xcascade_models.py``).

``db.delete(customer, cascade=True)`` follows the customer's invoices into ``billing``, their
lines there, and the lines' remarks back into ``crm``: every item goes, leaves first, each from
its own table, bounded, resumable and under faults. What is stored is checked item by item
with a raw Scan of each table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from dynorm import (
    CascadeReport,
    Database,
    DefinitionError,
    LimitExceededError,
    Request,
    ThrottledError,
    connect,
)
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from tests.faultproxy import FaultProxy

from .xcascade_models import Contact, Customer, Invoice, Line, Remark, billing, crm

pytestmark = [pytest.mark.integration, pytest.mark.asyncio]

Keys = set[tuple[str, str]]


def tree(customer: str, invoices: int = 2, lines: int = 2, *, contacts: int = 0) -> Iterator[Any]:
    """A customer, its contacts, invoices N#1..., their lines, the lines' remarks.

    The contacts are numbered from ``contacts + 1``: from 1 (by default) they have the keys of
    the invoices, each in its own table.
    """
    yield Customer(customer, f"name {customer}")
    for n in range(1, invoices + 1):
        yield Contact(customer, str(contacts + n), f"{customer}-{n}@example.com")
        yield Invoice(customer, str(n), 10 * n)
        for line in range(lines):
            line_id = f"{customer}-{n}-{line}"
            yield Line(customer, str(n), line_id)
            yield Remark(line_id, f"r-{line_id}", "checked")


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(crm, billing) as database:
        yield database


async def scan(db: Database, table: Any) -> Keys:
    """The primary key of every item stored in ``table`` (a consistent Scan, every page)."""
    params: dict[str, Any] = {"TableName": db.name_of(table), "ConsistentRead": True}
    found: Keys = set()
    while True:
        page = await db.send(Request("Scan", params))
        found |= {(i["pk"]["S"], i["sk"]["S"]) for i in page.get("Items", [])}
        if not page.get("LastEvaluatedKey"):
            return found
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


async def stored(db: Database) -> dict[str, Keys]:
    return {"crm": await scan(db, crm), "billing": await scan(db, billing)}


def keys_of(objs: Iterator[Any]) -> dict[str, Keys]:
    """The keys ``objs`` are stored under, by table."""
    out: dict[str, Keys] = {"crm": set(), "billing": set()}
    for obj in objs:
        out["billing" if isinstance(obj, Invoice | Line) else "crm"].add(_key(obj))
    return out


def _key(obj: Any) -> tuple[str, str]:
    if isinstance(obj, Customer):
        return (f"C#{obj.customer_id}", f"#C#{obj.customer_id}")
    if isinstance(obj, Contact | Invoice):
        return (f"C#{obj.customer_id}", f"N#{obj.number}")
    if isinstance(obj, Line):
        return (f"LINE#{obj.line_id}", f"LINE#{obj.line_id}")
    assert isinstance(obj, Remark)
    return (f"REMARK#{obj.remark_id}", f"REMARK#{obj.remark_id}")


FULL = CascadeReport({Customer: 1, Contact: 2, Invoice: 2, Line: 4, Remark: 4})


async def test_a_tree_across_tables_goes_whole_leaves_first(db: Database) -> None:
    await db.put_all([*tree("c1"), *tree("c2", invoices=1, lines=1)])
    sibling = keys_of(tree("c2", invoices=1, lines=1))
    # A contact and an invoice share a key, each in its own table.
    assert _key(Contact("c1", "1")) == _key(Invoice("c1", "1"))
    with count_requests(db) as log:
        report = await db.delete(Customer("c1"), cascade=True)
    assert report == FULL
    assert list(report) == [Customer, Contact, Invoice, Line, Remark]
    assert str(report) == (
        "deleted 13 items (1 Customer (Table 'crm'), 2 Contact (Table 'crm'), "
        "2 Invoice (Table 'billing'), 4 Line (Table 'billing'), 4 Remark (Table 'crm'))"
    )
    assert await stored(db) == sibling
    # Each level's Queries go to the children's table; the deletes go leaves first, each
    # level's BatchWriteItem addressing the tables of its items.
    crm_name, billing_name = db.name_of(crm), db.name_of(billing)
    sent = [(e.operation, sorted(e.tables)) for e in log.events]
    # Events are logged as replies arrive, and a level's Queries go out at once: the reads
    # are compared level by level, in any order within a level.
    assert sent[0] == ("GetItem", [crm_name])
    assert sorted(sent[1:3]) == [("Query", [billing_name]), ("Query", [crm_name])]  # contacts,
    assert sent[3:5] == [("Query", [billing_name])] * 2  # invoices; lines of each invoice
    assert sent[5:9] == [("Query", [crm_name])] * 4  # each line's remarks, through crm's GSI1
    assert sent[9:12] == [
        ("UpdateItem", [crm_name]),  # the mark
        ("BatchWriteItem", [crm_name]),  # remarks
        ("BatchWriteItem", [billing_name]),  # lines
    ]
    # Contacts and invoices: a contact and an invoice have one key (in two tables), which moto
    # refuses in one request, so the level goes table by table (the two at once).
    assert sorted(sent[12:14]) == [
        ("BatchWriteItem", [billing_name]),
        ("BatchWriteItem", [crm_name]),
    ]
    assert sent[14:] == [("DeleteItem", [crm_name])]


async def test_explain_shows_each_request_on_its_table(db: Database) -> None:
    await db.put_all(list(tree("c1", invoices=1, lines=1, contacts=10)))
    explained = db.explain.delete(Customer("c1"), cascade=True)
    with count_requests(db) as log:
        report = await db.delete(Customer("c1"), cascade=True)
    assert report == CascadeReport({Customer: 1, Contact: 1, Invoice: 1, Line: 1, Remark: 1})
    # One parent a level: explain's one Query per relationship and level is what is sent.
    assert [r.operation for r in explained] == log.operations
    tables = [
        sorted([r.params["TableName"]] if "TableName" in r.params else r.params["RequestItems"])
        for r in explained
    ]
    # Replies are logged as they arrive; a level's Queries go out at once, in any order.
    assert sorted(zip([r.operation for r in explained], tables, strict=True)) == sorted(
        (e.operation, sorted(e.tables)) for e in log.events
    )
    assert await stored(db) == {"crm": set(), "billing": set()}
    # The contact and the invoice (distinct keys) go in one request addressing both tables.
    assert set(log.events[-2].tables) == {db.name_of(crm), db.name_of(billing)}


async def test_max_items_counts_every_table_and_refuses_with_nothing_written(
    db: Database,
) -> None:
    await db.put_all(list(tree("c1")))
    before = await stored(db)
    with count_requests(db) as log, pytest.raises(LimitExceededError, match="max_items=10"):
        await db.delete(Customer("c1"), cascade=True, max_items=10)
    assert "BatchWriteItem" not in log.operations
    assert "UpdateItem" not in log.operations
    assert await stored(db) == before
    assert await db.delete(Customer("c1"), cascade=True, max_items=13) == FULL


async def test_a_table_not_connected_is_refused_before_sending(dynorm_connect: Connect) -> None:
    async with dynorm_connect(crm) as db:
        await db.put(Customer("c1"))
        with count_requests(db) as log, pytest.raises(DefinitionError) as caught:
            await db.delete(Customer("c1"), cascade=True)
        assert log.operations == []
        message = str(caught.value)
        assert "follows Customer.invoices into Table 'billing'" in message
        assert "connect(crm, billing, ...)" in message
        assert await db.get(Customer, customer_id="c1") == Customer("c1")


@asynccontextmanager
async def proxied(
    db: Database, server: RunningServer
) -> AsyncIterator[tuple[Database, FaultProxy]]:
    """``db``'s tables reached through a fault proxy."""
    async with (
        FaultProxy.running(server.url) as proxy,
        connect(
            crm,
            billing,
            endpoint_url=proxy.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={crm: db.name_of(crm), billing: db.name_of(billing)},
            fast_path=fast_path_selected(),
        ) as faulty,
    ):
        yield faulty, proxy


async def test_an_interrupted_cascade_leaves_no_orphan_in_any_table_and_a_rerun_finishes(
    db: Database, dynorm_server: RunningServer
) -> None:
    await db.put_all([*tree("c1", invoices=3, lines=3), *tree("c2", invoices=1, lines=1)])
    sibling = keys_of(tree("c2", invoices=1, lines=1))
    async with proxied(db, dynorm_server) as (faulty, proxy):
        # The lines' level (nine lines, in billing) loses part of its batch, then five rounds
        # delete nothing: the cascade gives up there, the remarks below already gone.
        proxy.inject("partial_batch", operation="BatchWriteItem", when=_has_lines)
        proxy.inject("unprocessed_batch", operation="BatchWriteItem", times=5, when=_has_lines)
        with pytest.raises(ThrottledError):
            await faulty.delete(Customer("c1"), cascade=True)
        assert len(proxy.injected) == 6
        left = await stored(db)
        # No remark is left (the level below went whole), some lines are, and the level above
        # (contacts in crm, invoices in billing) and the customer wait untouched.
        assert not any(pk.startswith("REMARK#r-c1") for pk, _ in left["crm"])
        lines = {pk for pk, _ in left["billing"] if pk.startswith("LINE#c1")}
        assert 0 < len(lines) < 9
        whole = keys_of(tree("c1", invoices=3, lines=3))
        assert {k for k in whole["billing"] if k[0].startswith("C#")} <= left["billing"]
        assert {k for k in whole["crm"] if not k[0].startswith("REMARK#")} <= left["crm"]
        # The customer keeps the cascade's mark, which reads leave out.
        assert await db.get(Customer, customer_id="c1") == Customer("c1", "name c1")
        # Running it again finishes the job: the lines left, their invoices, ... the customer.
        report = await faulty.delete(Customer("c1"), cascade=True)
    assert report == CascadeReport({Customer: 1, Contact: 3, Invoice: 3, Line: len(lines)})
    assert await stored(db) == sibling


def _has_lines(body: dict[str, Any]) -> bool:
    return any(
        w["DeleteRequest"]["Key"]["pk"]["S"].startswith("LINE#")
        for writes in body["RequestItems"].values()
        for w in writes
    )


async def test_lost_replies_on_each_table_are_retried_and_the_tree_goes_whole(
    db: Database, dynorm_server: RunningServer
) -> None:
    await db.put_all([*tree("c1", contacts=10), *tree("c2", invoices=1, lines=1)])
    sibling = keys_of(tree("c2", invoices=1, lines=1))
    async with proxied(db, dynorm_server) as (faulty, proxy):
        # A Query of the other table, a batch spanning both tables and the root's delete are
        # applied (or answered) and their replies lost: each is sent again.
        proxy.inject("lost_reply", operation="Query", when=lambda b: b.get("IndexName") == "GSI1")
        proxy.inject(
            "lost_reply", operation="BatchWriteItem", when=lambda b: len(b["RequestItems"]) == 2
        )
        proxy.inject("lost_reply", operation="DeleteItem")
        report = await faulty.delete(Customer("c1"), cascade=True)
        assert sorted(i.operation for i in proxy.injected) == [
            "BatchWriteItem",
            "DeleteItem",
            "Query",
        ]
    assert report == FULL
    assert await stored(db) == sibling
