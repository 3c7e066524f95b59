"""``Embedded``: children stored inside the parent item (seed 003 §11.1, customer addresses).

A customer's addresses are a map keyed by nickname, bounded to 20; the customer's GetItem
brings them, and each change is one UpdateItem checked against the bound and DynamoDB's 400 KB
item limit before it is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    Database,
    DefinitionError,
    Embedded,
    HasMany,
    LimitExceededError,
    NotLoadedError,
    Request,
    Table,
)
from dynorm.mapping.state import state_of
from dynorm.testing import Connect, count_requests

from .raw import raw_item

pytestmark = pytest.mark.integration

table = Table("rel-embedded", pk="pk", sk="sk")


@attrs.define
class Address:
    nickname: str
    street: str
    city: str = "Springfield"


@attrs.define
class Phone:
    number: str
    kind: str = "mobile"


MAX_ADDRESSES = 20


@table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
@attrs.define
class Customer:
    customer_id: str
    name: str = ""
    addresses = HasMany[Address](Address, via=Embedded(key="nickname", max_items=MAX_ADDRESSES))
    phones = HasMany[Phone](Phone, via=Embedded())


HOME = Address("home", "1 Main St")
WORK = Address("work", "9 Dock Rd", "Shelbyville")
KEY = {"pk": "CUSTOMER#c1", "sk": "CUSTOMER#c1"}


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        yield database


@pytest.fixture
async def stored(db: Database) -> Database:
    """Customer c1 with two addresses (home, work)."""
    customer = await db.put(Customer("c1", "Ada"))
    await db.add(customer, Customer.addresses, HOME)
    await db.add(customer, Customer.addresses, WORK)
    return db


async def stored_map(db: Database) -> dict[str, Any]:
    item = await raw_item(db, KEY)
    assert item is not None
    stored: dict[str, Any] = item["addresses"]["M"]
    return stored


async def load(db: Database) -> Customer:
    return await db.get(Customer, customer_id="c1", load=[Customer.addresses])


async def test_add_is_one_update_item_into_the_map(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    with count_requests(db) as log:
        stored = await db.add(customer, Customer.addresses, HOME)
    assert log.operations == ["UpdateItem"]
    assert stored == HOME
    assert await stored_map(db) == {
        "home": {
            "M": {
                "nickname": {"S": "home"},
                "street": {"S": "1 Main St"},
                "city": {"S": "Springfield"},
            }
        }
    }


async def test_the_parents_getitem_brings_the_children(stored: Database) -> None:
    with count_requests(stored) as log:
        customer = await load(stored)
    assert log.operations == ["GetItem"]
    assert customer == Customer("c1", "Ada")
    assert customer.addresses.loaded == [HOME, WORK]
    assert [
        r.operation
        for r in stored.explain.get(Customer, customer_id="c1", load=[Customer.addresses])
    ] == ["GetItem"]
    with count_requests(stored) as log:
        assert await customer.addresses.all() == [HOME, WORK]
        assert (await customer.addresses.page(limit=1)).items == [HOME]
    assert len(log) == 0


async def test_a_plain_get_brings_them_too(stored: Database) -> None:
    with count_requests(stored) as log:
        customer = await stored.get(Customer, customer_id="c1")
    assert log.operations == ["GetItem"]
    assert customer.addresses.loaded == [HOME, WORK]


async def test_a_parent_stored_without_the_attribute_loads_no_children(db: Database) -> None:
    # Written by another tool: no addresses attribute at all.
    item = {**{k: {"S": v} for k, v in KEY.items()}, "customer_id": {"S": "c1"}}
    await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))
    customer = await load(db)
    assert customer == Customer("c1")
    assert customer.addresses.loaded == []
    assert await customer.addresses.all() == []


async def test_a_limited_load_shows_some_and_keeps_all(stored: Database) -> None:
    with count_requests(stored) as log:
        customer = await stored.get(Customer, customer_id="c1", load=[Customer.addresses.limit(1)])
    assert log.operations == ["GetItem"]
    assert customer.addresses.loaded == [HOME]
    assert await customer.addresses.all() == [HOME, WORK]
    # Writing the parent back keeps every child, not only the ones shown.
    customer.name = "Ada Lovelace"
    await stored.put(customer)
    assert set(await stored_map(stored)) == {"home", "work"}


async def test_a_customer_built_in_code_reads_its_children_once(stored: Database) -> None:
    customer = stored.attach(Customer("c1", "Ada"))
    with pytest.raises(NotLoadedError, match=r"Customer\.addresses"):
        _ = customer.addresses.loaded
    with count_requests(stored) as log:
        assert await customer.addresses.all() == [HOME, WORK]
        assert await customer.addresses.all() == [HOME, WORK]
    assert log.operations == ["GetItem"]


async def test_adding_an_existing_key_replaces_it(stored: Database) -> None:
    customer = await load(stored)
    moved = Address("home", "2 New St")
    with count_requests(stored) as log:
        await stored.add(customer, Customer.addresses, moved)
    assert log.operations == ["UpdateItem"]
    stored_addresses = await stored_map(stored)
    assert set(stored_addresses) == {"home", "work"}
    assert stored_addresses["home"]["M"]["street"] == {"S": "2 New St"}
    assert customer.addresses.loaded == [moved, WORK]  # in key order, as a fresh read has them
    assert (await load(stored)).addresses.loaded == [moved, WORK]


async def test_remove_is_one_update_item(stored: Database) -> None:
    customer = await load(stored)
    with count_requests(stored) as log:
        await stored.remove(customer, Customer.addresses, HOME)
    assert log.operations == ["UpdateItem"]
    assert set(await stored_map(stored)) == {"work"}
    assert customer.addresses.loaded == [WORK]
    assert (await load(stored)).addresses.loaded == [WORK]


async def test_removing_a_child_that_is_not_there_writes_nothing(stored: Database) -> None:
    customer = await load(stored)
    with count_requests(stored) as log:
        await stored.remove(customer, Customer.addresses, Address("cabin", "Lake Rd"))
    assert len(log) == 0
    assert set(await stored_map(stored)) == {"home", "work"}


# -- bounds ---------------------------------------------------------------------------------------


async def fill(db: Database, n: int) -> Customer:
    customer = await db.put(Customer("c1", "Ada"))
    for i in range(n):
        await db.add(customer, Customer.addresses, Address(f"a{i:02d}", f"{i} Main St"))
    return customer


async def test_max_items_is_refused_before_sending(db: Database) -> None:
    await fill(db, MAX_ADDRESSES)
    customer = await load(db)
    assert len(customer.addresses.loaded) == MAX_ADDRESSES
    with count_requests(db) as log, pytest.raises(LimitExceededError) as caught:
        await db.add(customer, Customer.addresses, Address("one-too-many", "x"))
    assert len(log) == 0
    message = str(caught.value)
    assert "Customer.addresses" in message
    assert "20" in message
    assert "max_items" in message
    assert len(await stored_map(db)) == MAX_ADDRESSES
    assert len(customer.addresses.loaded) == MAX_ADDRESSES


async def test_replacing_at_max_items_is_allowed(db: Database) -> None:
    await fill(db, MAX_ADDRESSES)
    customer = await load(db)
    with count_requests(db) as log:
        await db.add(customer, Customer.addresses, Address("a00", "moved"))
    assert log.operations == ["UpdateItem"]
    stored_addresses = await stored_map(db)
    assert len(stored_addresses) == MAX_ADDRESSES
    assert stored_addresses["a00"]["M"]["street"] == {"S": "moved"}


async def test_max_items_holds_for_a_parent_whose_children_were_not_loaded(
    db: Database, dynorm_backend: str
) -> None:
    await fill(db, MAX_ADDRESSES)
    # Built in code: dynorm cannot count its children, so the UpdateItem's condition does.
    customer = db.attach(Customer("c1", "Ada"))
    with count_requests(db) as log, pytest.raises(LimitExceededError) as caught:
        await db.add(customer, Customer.addresses, Address("one-too-many", "x"))
    # The refusal carries the stored item (moto, DynamoDB): the map is there, so it is full.
    # dynalite sends none back: the map is created if missing (a no-op here) and the add sent
    # again, refused again.
    again = [] if dynorm_backend == "moto" else ["UpdateItem", "UpdateItem"]
    assert log.operations == ["UpdateItem", *again]
    assert "Customer.addresses" in str(caught.value)
    assert "20" in str(caught.value)
    assert len(await stored_map(db)) == MAX_ADDRESSES


async def test_replacing_at_max_items_without_loading_is_allowed(db: Database) -> None:
    await fill(db, MAX_ADDRESSES)
    customer = db.attach(Customer("c1", "Ada"))
    with count_requests(db) as log:
        await db.add(customer, Customer.addresses, Address("a05", "moved"))
    assert log.operations == ["UpdateItem"]
    stored_addresses = await stored_map(db)
    assert len(stored_addresses) == MAX_ADDRESSES
    assert stored_addresses["a05"]["M"]["street"] == {"S": "moved"}


async def test_the_400_kb_item_limit_is_refused_before_sending(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    with count_requests(db) as log, pytest.raises(LimitExceededError) as caught:
        await db.add(customer, Customer.addresses, Address("huge", "x" * 410_000))
    assert len(log) == 0
    assert "Customer.addresses" in str(caught.value)
    assert "409600" in str(caught.value)
    assert await stored_map(db) == {}


async def test_the_400_kb_limit_counts_the_children_already_stored(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    for i in range(3):
        await db.add(customer, Customer.addresses, Address(f"big{i}", "x" * 120_000))
    loaded = await load(db)
    assert len(loaded.addresses.loaded) == 3
    with count_requests(db) as log, pytest.raises(LimitExceededError, match="bytes"):
        await db.add(loaded, Customer.addresses, Address("big3", "x" * 120_000))
    assert len(log) == 0
    assert set(await stored_map(db)) == {"big0", "big1", "big2"}


# -- whole-parent writes --------------------------------------------------------------------------


async def test_put_of_the_parent_keeps_stored_children(stored: Database) -> None:
    renamed = Customer("c1", "Ada Lovelace")  # built in code: its addresses are unknown
    with count_requests(stored) as log:
        await stored.put(renamed)
    assert log.operations == ["UpdateItem"]
    customer = await load(stored)
    assert customer.name == "Ada Lovelace"
    assert customer.addresses.loaded == [HOME, WORK]


async def test_put_of_a_loaded_parent_writes_its_children(stored: Database) -> None:
    customer = await load(stored)
    customer.name = "Countess"
    await stored.put(customer)
    again = await load(stored)
    assert again.name == "Countess"
    assert again.addresses.loaded == [HOME, WORK]


async def test_put_all_of_an_object_built_in_code_keeps_the_stored_children(
    stored: Database,
) -> None:
    with count_requests(stored) as log:
        await stored.put_all([Customer("c1", "Ada Lovelace")])
    # Sent as db.put sends it: an UpdateItem that leaves the stored children as they are when it
    # lands (a read, then a batch writing them back, would undo a change made in between).
    assert log.operations == ["UpdateItem"]
    again = await load(stored)
    assert again.name == "Ada Lovelace"
    assert again.addresses.loaded == [HOME, WORK]


async def test_put_all_of_new_objects_stores_them_with_no_children(db: Database) -> None:
    new = [Customer(f"n{i}", f"New {i}") for i in range(30)]
    with count_requests(db) as log:
        assert await db.put_all(new) == 30
    # One UpdateItem each (sent concurrently): one that creates the empty map if none is stored.
    assert log.operations == ["UpdateItem"] * 30
    first = await db.get(Customer, customer_id="n0", load=[Customer.addresses])
    assert first.addresses.loaded == []
    await db.add(first, Customer.addresses, HOME)  # the empty map is there to add to
    again = await db.get(Customer, customer_id="n0", load=[Customer.addresses])
    assert again.addresses.loaded == [HOME]


async def test_put_all_refuses_a_parent_read_without_its_children(stored: Database) -> None:
    customer = await stored.get(Customer, customer_id="c1")
    state = state_of(customer)
    assert state is not None
    state.loaded.pop("addresses")  # as if it had been read without them
    with (
        count_requests(stored) as log,
        pytest.raises(DefinitionError, match=r"Customer\.addresses"),
    ):
        await stored.put_all([customer])
    assert len(log) == 0


async def test_put_all_of_loaded_parents_keeps_their_children(stored: Database) -> None:
    customer = await load(stored)
    customer.name = "Ada Lovelace"
    with count_requests(stored) as log:
        await stored.put_all([customer])
    assert log.operations == ["BatchWriteItem"]
    again = await load(stored)
    assert again.name == "Ada Lovelace"
    assert again.addresses.loaded == [HOME, WORK]


async def test_load_many_parents_reads_their_items_in_one_batch(stored: Database) -> None:
    other = await stored.put(Customer("c2", "Grace"))
    await stored.add(other, Customer.addresses, WORK)
    customers = [stored.attach(Customer("c1")), stored.attach(Customer("c2"))]
    with count_requests(stored) as log:
        await stored.load(customers, Customer.addresses)
    assert log.operations == ["BatchGetItem"]
    assert customers[0].addresses.loaded == [HOME, WORK]
    assert customers[1].addresses.loaded == [WORK]


# -- list form ------------------------------------------------------------------------------------


async def test_list_form_add_and_remove(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    first, second = Phone("555-0100"), Phone("555-0199", "work")
    with count_requests(db) as log:
        await db.add(customer, Customer.phones, first)
        await db.add(customer, Customer.phones, second)
    assert log.operations == ["UpdateItem", "UpdateItem"]
    item = await raw_item(db, KEY)
    assert item is not None
    assert [p["M"]["number"]["S"] for p in item["phones"]["L"]] == ["555-0100", "555-0199"]

    loaded = await db.get(Customer, customer_id="c1", load=[Customer.phones])
    assert loaded.phones.loaded == [first, second]
    with count_requests(db) as log:
        await db.remove(loaded, Customer.phones, first)
    assert log.operations == ["UpdateItem"]
    assert loaded.phones.loaded == [second]
    assert (await db.get(Customer, customer_id="c1")).phones.loaded == [second]


async def test_list_form_keeps_duplicates_in_order(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    same = Phone("555-0100")
    await db.add(customer, Customer.phones, same)
    await db.add(customer, Customer.phones, same)
    loaded = await db.get(Customer, customer_id="c1")
    assert loaded.phones.loaded == [same, same]
    await db.remove(loaded, Customer.phones, same)
    assert (await db.get(Customer, customer_id="c1")).phones.loaded == [same]


async def test_a_child_of_another_class_is_refused_before_sending(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    with count_requests(db) as log, pytest.raises(TypeError, match="Address"):
        await db.add(customer, Customer.addresses, Phone("555"))  # type: ignore[misc]
    assert len(log) == 0


async def test_removing_from_a_map_needs_no_read_of_the_parent(stored: Database) -> None:
    customer = stored.attach(Customer("c1", "Ada"))  # built in code: its addresses are unknown
    with count_requests(stored) as log:
        await stored.remove(customer, Customer.addresses, HOME)
    assert log.operations == ["UpdateItem"]
    found = await stored.get(Customer, customer_id="c1", load=[Customer.addresses])
    assert found.addresses.loaded == [WORK]


async def test_a_map_key_with_dots_and_brackets_is_one_key(db: Database) -> None:
    customer = await db.put(Customer("c1", "Ada"))
    odd = Address("a.b[0]", "1 Odd St")
    await db.add(customer, Customer.addresses, odd)
    assert list(await stored_map(db)) == ["a.b[0]"]
    assert (await load(db)).addresses.loaded == [odd]
    await db.remove(customer, Customer.addresses, odd)
    assert await stored_map(db) == {}
