"""Several tables on one connection: every call routes by its model's table, and the calls
that read or write many items share their requests across the tables."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

import dynorm
from dynorm import Database, DefinitionError, connect
from dynorm.core.requests import Request, consistent_get
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from tests.faultproxy import FaultPlan, FaultProxy

from .tables_models import (
    AuditEntry,
    Customer,
    Invoice,
    Order,
    Store,
    StoreItem,
    audit,
    billing,
    shop,
)

pytestmark = pytest.mark.integration

ALICE = Customer(customer_id="c1", name="Alice")
BOB = Customer(customer_id="c2", name="Bob")


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(shop, audit) as database:
        yield database


async def stored(db: Database, table: dynorm.Table, key: dict[str, str]) -> bool:
    """Whether the item with this raw key is stored in ``table`` (a raw GetItem)."""
    raw = {a: {"S": v} for a, v in key.items()}
    return "Item" in await db.send(consistent_get(raw, db.name_of(table)))


async def test_the_testing_fixture_creates_a_fresh_copy_of_each_table(db: Database) -> None:
    assert db.tables == (shop, audit)
    names = [db.name_of(shop), db.name_of(audit)]
    assert names[0].startswith("shop-")
    assert names[1].startswith("audit-")
    for name in names:
        described = await db.send(Request("DescribeTable", {"TableName": name}))
        assert described["Table"]["TableStatus"] == "ACTIVE"


async def test_each_call_goes_to_its_models_table(db: Database) -> None:
    order = Order(customer_id="c1", order_id="o1", total=30)
    entry = AuditEntry(order_id="o1", what="placed")
    with count_requests(db) as log:
        await db.put(ALICE)
        await db.put(order)
        await db.put(entry)
    assert [e.tables for e in log.events] == [
        (db.name_of(shop),),
        (db.name_of(shop),),
        (db.name_of(audit),),
    ]
    assert await stored(db, audit, {"pk": "ORDER#o1", "sk": "EVENT#placed"})
    assert not await stored(db, shop, {"pk": "ORDER#o1", "sk": "EVENT#placed"})
    assert not await stored(db, audit, {"pk": "CUSTOMER#c1", "sk": "ORDER#o1"})

    assert await db.get(AuditEntry, order_id="o1", what="placed") == entry
    assert await db.query(AuditEntry, order_id="o1").all() == [entry]
    (get,) = db.explain.get(AuditEntry, order_id="o1", what="placed")
    assert get.params["TableName"] == db.name_of(audit)
    assert db.explain.query(Order, customer_id="c1")[0].params["TableName"] == db.name_of(shop)
    with count_requests(db) as log:
        customer = await db.get(Customer, customer_id="c1", load=[Customer.orders])
    assert log.operations == ["Query"]
    assert customer.orders.loaded == [order]
    assert await db.query(Order, index="GSI1", order_id="o1").all() == [order]

    await db.update(entry, set={"note": "by phone"})
    assert (await db.get(AuditEntry, order_id="o1", what="placed")).note == "by phone"
    await db.delete(entry)
    assert await db.query(AuditEntry, order_id="o1").all() == []
    assert await db.get(Order, customer_id="c1", order_id="o1") == order


@pytest.mark.transactions
async def test_one_transaction_writes_both_tables(db: Database) -> None:
    order = Order(customer_id="c1", order_id="o1", total=30)
    with count_requests(db) as log:
        async with db.transaction() as tx:
            tx.put(order)
            tx.put(AuditEntry(order_id="o1", what="placed"))
            (planned,) = tx.explain()
            assert planned.operation == "TransactWriteItems"
            assert [a["Put"]["TableName"] for a in planned.params["TransactItems"]] == [
                db.name_of(shop),
                db.name_of(audit),
            ]
    assert log.operations == ["TransactWriteItems"]
    assert set(log.events[0].tables) == {db.name_of(shop), db.name_of(audit)}
    assert await db.get(Order, customer_id="c1", order_id="o1") == order
    assert await db.get(AuditEntry, order_id="o1", what="placed") == AuditEntry("o1", "placed")


@pytest.mark.transactions
async def test_a_failed_condition_in_one_table_writes_nothing_in_either(db: Database) -> None:
    await db.put(AuditEntry(order_id="o1", what="placed", note="first"))

    tx = db.transaction()
    tx.put(Order(customer_id="c1", order_id="o1", total=30))
    tx.put(AuditEntry(order_id="o1", what="placed", note="again"), overwrite=False)
    with count_requests(db) as log, pytest.raises(dynorm.TransactionCanceledError) as caught:
        await tx.commit()
    assert log.operations == ["TransactWriteItems"]
    assert [r.index for r in caught.value.failed] == [1]

    assert await db.get_many(Order, [{"customer_id": "c1", "order_id": "o1"}]) == [None]
    assert (await db.get(AuditEntry, order_id="o1", what="placed")).note == "first"


@pytest.mark.transactions
async def test_a_transaction_across_tables_keeps_the_copies_of_the_parent_it_renames(
    db: Database,
) -> None:
    store = Store(store_id="s1", name="Old")
    await db.put(store)
    await db.add(store, Store.items, StoreItem(store_id="s1", sku="a"))
    await db.add(store, Store.items, StoreItem(store_id="s1", sku="b"))

    with count_requests(db) as log:
        async with db.transaction() as tx:
            tx.put(Store(store_id="s1", name="New"))
            tx.put(AuditEntry(order_id="s1", what="renamed"))
    # The stored parent is read (its copied field changed), then its children, then one
    # transaction writes the parent, both copies and the audit entry.
    assert log.operations == ["BatchGetItem", "Query", "TransactWriteItems"]
    assert log.events[0].tables == (db.name_of(shop),)
    assert set(log.events[2].tables) == {db.name_of(shop), db.name_of(audit)}
    items = await db.query(StoreItem, store_id="s1").all()
    assert [i.store_name for i in items] == ["New", "New"]
    assert await db.get(AuditEntry, order_id="s1", what="renamed") == AuditEntry("s1", "renamed")


@pytest.mark.transactions
async def test_transact_get_reads_both_tables_in_one_request(db: Database) -> None:
    order = Order(customer_id="c1", order_id="o1", total=30)
    entry = AuditEntry(order_id="o1", what="placed")
    await db.put(order)
    await db.put(entry)
    with count_requests(db) as log:
        got = await db.transact_get(
            (Order, {"customer_id": "c1", "order_id": "o1"}),
            (AuditEntry, {"order_id": "o1", "what": "placed"}),
            (AuditEntry, {"order_id": "o1", "what": "shipped"}),
        )
    assert log.operations == ["TransactGetItems"]
    assert got == (order, entry, None)


async def test_put_all_and_get_many_share_their_requests_across_tables(db: Database) -> None:
    orders = [Order(customer_id="c1", order_id=f"o{i:02d}") for i in range(20)]
    entries = [AuditEntry(order_id=f"o{i:02d}", what="placed") for i in range(10)]
    with count_requests(db) as log:
        written = await db.put_all([*orders, *entries])
    assert written == 30
    # 25 writes a request in all: one carries 20 orders and 5 entries, the other 5 entries
    # (sent at once, so in either order).
    assert log.operations == ["BatchWriteItem", "BatchWriteItem"]
    assert sorted(set(e.tables) for e in log.events) == [
        {db.name_of(audit)},
        {db.name_of(shop), db.name_of(audit)},
    ]

    wanted = [
        *((Order, {"customer_id": "c1", "order_id": o.order_id}) for o in orders),
        *((AuditEntry, {"order_id": e.order_id, "what": "placed"}) for e in entries),
        (AuditEntry, {"order_id": "o99", "what": "placed"}),
    ]
    with count_requests(db) as log:
        found = await db.get_many(wanted)
    assert log.operations == ["BatchGetItem"]
    assert set(log.events[0].tables) == {db.name_of(shop), db.name_of(audit)}
    assert found == [*orders, *entries, None]

    with count_requests(db) as log:
        assert await db.put_all([]) == 0
        assert await db.delete_all([]) == 0
        async with db.transaction():
            pass
    assert len(log) == 0

    with count_requests(db) as log:
        assert await db.delete_all([*orders[:3], *entries[:3]]) == 6
    assert log.operations == ["BatchWriteItem"]
    assert await db.get_many(wanted[:1]) == [None]


async def test_explain_shows_the_shared_batch(db: Database) -> None:
    requests = db.explain.put_all([Order(customer_id="c1", order_id="o1"), AuditEntry("o1", "x")])
    assert [r.operation for r in requests] == ["BatchWriteItem"]
    assert set(requests[0].params["RequestItems"]) == {db.name_of(shop), db.name_of(audit)}


async def test_load_of_many_objects_reads_their_parents_in_one_batch(db: Database) -> None:
    await db.put_all([ALICE, BOB])
    orders = [Order(customer_id=c, order_id=f"o{i}") for i, c in enumerate(["c1", "c2", "c1"])]
    await db.put_all(orders)
    with count_requests(db) as log:
        await db.load(orders, Order.customer)
    assert log.operations == ["BatchGetItem"]
    assert log.events[0].tables == (db.name_of(shop),)
    assert [o.customer.loaded for o in orders] == [ALICE, BOB, ALICE]


async def test_a_model_of_a_table_not_connected_is_refused_before_sending(db: Database) -> None:
    invoice = Invoice(invoice_id="i1")
    with count_requests(db) as log:
        with pytest.raises(DefinitionError) as caught:
            await db.put(invoice)
        message = str(caught.value)
        assert "Invoice" in message
        assert "'billing'" in message
        assert "'shop', 'audit'" in message
        assert "connect()" in message
        with pytest.raises(DefinitionError):
            await db.get(Invoice, invoice_id="i1")
        with pytest.raises(DefinitionError):
            db.query(Invoice, invoice_id="i1")
        with pytest.raises(DefinitionError):
            await db.put_all([Order(customer_id="c1", order_id="o1"), invoice])
        with pytest.raises(DefinitionError):
            await db.get_many([(AuditEntry, {"order_id": "o1", "what": "x"}), (Invoice, {})])
        with pytest.raises(DefinitionError):
            await db.create_table(billing)
        tx = db.transaction()
        with pytest.raises(DefinitionError):
            tx.put(invoice)
    assert len(log) == 0
    assert await db.get_many(Order, [{"customer_id": "c1", "order_id": "o1"}]) == [None]


async def test_one_table_names_are_refused_on_a_connection_of_several(db: Database) -> None:
    with pytest.raises(DefinitionError, match=r"db\.tables"):
        _ = db.table_name
    with pytest.raises(DefinitionError, match=r"db\.scan\(None, table=table\)"):
        db.scan(None)
    with pytest.raises(DefinitionError, match=r"db\.describe_table\(table\)"):
        await db.describe_table()
    assert [type(o) for o in await db.scan(None, table=audit).all()] == []


@pytest.fixture
def names() -> dict[dynorm.Table, str]:
    suffix = uuid.uuid4().hex[:8]
    return {shop: f"shop-{suffix}", audit: f"audit-{suffix}"}


async def test_create_table_creates_every_table_or_the_one_named(
    dynorm_server: RunningServer, names: dict[dynorm.Table, str]
) -> None:
    async with connect(
        shop,
        audit,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_names=names,
        fast_path=fast_path_selected(),
    ) as db:
        await db.create_table(audit)
        assert await db.describe_table(audit) is not None
        assert await db.describe_table(shop) is None
        await db.delete_table(audit)
        with count_requests(db) as log, pytest.raises(DefinitionError, match="'nope'"):
            await db.create_table(key_types={"nope": "N"})
        assert len(log) == 0
        # An entry goes to the tables whose key attributes it names (GSI1SK: shop's index).
        await db.create_table(key_types={"GSI1SK": "S"})
        assert await db.describe_table(shop) is not None
        assert await db.describe_table(audit) is not None
        await db.delete_table()
        assert await db.describe_table(shop) is None
        assert await db.describe_table(audit) is None


async def test_connect_refuses_a_mix_up_of_tables_before_connecting() -> None:
    with pytest.raises(DefinitionError, match="twice"):
        async with connect(shop, shop):
            pass
    with pytest.raises(DefinitionError, match="table_names="):
        async with connect(shop, audit, table_name="x"):
            pass
    with pytest.raises(DefinitionError, match="named 'same'"):
        async with connect(shop, audit, table_names={shop: "same", audit: "same"}):
            pass
    with pytest.raises(DefinitionError, match="not among the tables"):
        async with connect(shop, table_names={audit: "x"}):
            pass
    with pytest.raises(DefinitionError, match="at least one Table"):
        async with connect():
            pass


async def test_one_table_connections_keep_every_call_shape(
    dynorm_server: RunningServer, names: dict[dynorm.Table, str]
) -> None:
    entry = AuditEntry(order_id="o1", what="placed")
    async with connect(
        table=audit,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=names[audit],
        fast_path=fast_path_selected(),
    ) as db:
        assert db.table is audit
        assert db.table_name == names[audit]
        assert repr(db) == f"<Database table={names[audit]!r}>"
        await db.create_table()
        try:
            await db.put(entry)
            assert await db.get_many(AuditEntry, [{"order_id": "o1", "what": "placed"}]) == [entry]
            assert (await db.describe_table() or {})["TableName"] == names[audit]
            assert await db.scan(None).all() == [entry]
        finally:
            await db.delete_table()


async def test_each_tables_unprocessed_rest_is_sent_again(
    db: Database, dynorm_server: RunningServer
) -> None:
    """Through a proxy that leaves part of every batch unprocessed, in each table."""
    orders = [Order(customer_id="c1", order_id=f"o{i:03d}") for i in range(60)]
    entries = [AuditEntry(order_id=f"o{i:03d}", what="placed") for i in range(60)]
    wanted = [
        *((Order, {"customer_id": "c1", "order_id": o.order_id}) for o in orders),
        *((AuditEntry, {"order_id": e.order_id, "what": "placed"}) for e in entries),
    ]
    async with (
        FaultProxy.running(dynorm_server.url) as proxy,
        connect(
            shop,
            audit,
            endpoint_url=proxy.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={shop: db.name_of(shop), audit: db.name_of(audit)},
            fast_path=fast_path_selected(),
        ) as faulty,
    ):
        proxy.use(FaultPlan(seed=11, rates={"partial_batch": 1.0}))  # every batch
        assert await faulty.put_all([*orders, *entries]) == 120
        assert await faulty.get_many(wanted) == [*orders, *entries]
        injected = {(e.operation, e.fault) for e in proxy.injected}
    assert ("BatchWriteItem", "partial_batch") in injected
    assert ("BatchGetItem", "partial_batch") in injected
    assert await db.get_many(wanted) == [*orders, *entries]
