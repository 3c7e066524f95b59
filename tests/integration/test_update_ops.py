"""Update operations: list append/prepend, set discard, if_not_exists, upsert, returned values.

Each is one UpdateItem; values are encoded as their fields are typed; bad input is refused with
nothing sent; transactions take the same operations (but return no values); an update that
changes a denormalized parent's copied field still rewrites the copies.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    CodecError,
    Database,
    Denormalized,
    ExpressionError,
    HasMany,
    ItemNotFoundError,
    KeyTemplateError,
    Table,
)
from dynorm.core.requests import Request
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

shop = Table("shop", pk="pk", sk="sk")


@attrs.define
class Line:
    sku: str
    qty: int


@shop.model(pk="CART#{cart_id}", sk="CART", version="version", updated="updated_at")
@attrs.define
class Cart:
    cart_id: str
    lines: list[Line] = attrs.Factory(list)
    tags: set[str] = attrs.Factory(set)
    views: int = 0
    owner: str | None = None
    version: int = 0
    updated_at: datetime.datetime | None = None


@shop.model(pk="BRAND#{name}", sk="BRAND#{name}")
@attrs.define
class Brand:
    name: str
    country: str = ""
    history: list[str] = attrs.Factory(list)
    products = HasMany["Product"]("Product", via=Denormalized(copy={"country": "brand_country"}))


@shop.model(pk="BRAND#{brand}", sk="PRODUCT#{sku}")
@attrs.define
class Product:
    brand: str
    sku: str
    brand_country: str | None = None


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(shop) as database:
        yield database


async def test_append_and_prepend_typed_elements_in_one_request(db: Database) -> None:
    cart = await db.put(Cart(cart_id="c", lines=[Line("b", 2)]))
    with count_requests(db) as log:
        new = await db.update(cart, append={"lines": [Line("c", 3)]})
        new = await db.update(new, prepend={"lines": [Line("a", 1)]})
    assert log.operations == ["UpdateItem", "UpdateItem"]
    assert [line.sku for line in new.lines] == ["a", "b", "c"]
    assert new.version == 3
    got = await db.get(Cart, cart_id="c")
    assert got.lines == [Line("a", 1), Line("b", 2), Line("c", 3)]


async def test_discard_takes_elements_out_of_a_set(db: Database) -> None:
    cart = await db.put(Cart(cart_id="c", tags={"a", "b", "c"}))
    new = await db.update(cart, discard={"tags": {"a", "c", "absent"}})
    assert new.tags == {"b"}
    new = await db.update(new, discard={"tags": {"b"}})
    assert new.tags == set()  # the emptied set reads back empty


async def test_if_not_exists_sets_only_a_missing_value(db: Database) -> None:
    cart = await db.put(Cart(cart_id="c"))  # an empty set is no attribute at all
    new = await db.update(cart, if_not_exists={"tags": {"new"}})
    assert new.tags == {"new"}
    new = await db.update(new, if_not_exists={"tags": {"other"}})
    assert new.tags == {"new"}
    # None is stored as NULL, which is a value: if_not_exists leaves it.
    new = await db.update(new, if_not_exists={"owner": "ann"})
    assert new.owner is None


async def test_upsert_creates_the_item_from_the_object(db: Database) -> None:
    with count_requests(db) as log:
        old = await db.update(
            Cart(cart_id="c", owner="ann"), add={"views": 1}, upsert=True, returns="old"
        )
    assert log.operations == ["UpdateItem"]
    assert old is None  # nothing was stored before
    got = await db.get(Cart, cart_id="c")
    assert (got.owner, got.views, got.version) == ("ann", 1, 1)
    # An existing item keeps what the update does not change, and the version must match.
    again = await db.update(got, add={"views": 1}, set={"tags": {"x"}}, upsert=True)
    assert (again.owner, again.views, again.tags, again.version) == ("ann", 2, {"x"}, 2)


async def test_update_without_upsert_needs_the_item(db: Database) -> None:
    with pytest.raises(ItemNotFoundError, match="upsert=True"):
        await db.update(Cart(cart_id="nope"), append={"lines": [Line("a", 1)]})


async def test_returned_values(db: Database) -> None:
    cart = await db.put(Cart(cart_id="c", owner="ann", views=5))
    old = await db.update(cart, set={"owner": "bob"}, returns="old")
    assert old is not None
    assert (old.owner, old.version) == ("ann", 1)
    changed = await db.update(cart, add={"views": 2}, returns="updated_new")
    assert changed["views"] == 7
    assert changed["version"] == 3
    assert set(changed) == {"views", "version", "updated_at"}
    before = await db.update(cart, set={"lines": [Line("a", 1)]}, returns="updated_old")
    assert before["version"] == 3
    assert "lines" in before
    assert before["lines"] == []
    await db.update(cart, add={"views": 1}, returns=None)
    assert cart.version == 5  # kept in step even when nothing is returned
    inside = await db.update(cart, set={"lines[0].qty": 9}, returns="updated_new")
    assert inside["lines"] == [Line("a", 9)]  # the whole field, readable as its type


async def test_bad_update_input_is_refused_before_sending(db: Database) -> None:
    cart = Cart(cart_id="c")
    with count_requests(db) as log:
        with pytest.raises(ExpressionError, match="not a list field"):
            await db.update(cart, append={"tags": ["a"]})  # type: ignore[arg-type]
        with pytest.raises(ExpressionError, match="non-empty list"):
            await db.update(cart, append={"lines": []})
        with pytest.raises(CodecError, match=r"Cart\.lines"):
            await db.update(cart, append={"lines": ["not a line"]})  # type: ignore[arg-type]
        with pytest.raises(ExpressionError, match="non-empty set"):
            await db.update(cart, discard={"tags": set()})
        with pytest.raises(ExpressionError, match="not a set field"):
            await db.update(cart, discard={"views": {1}})  # type: ignore[arg-type]
        with pytest.raises(ExpressionError, match="changes 'lines' twice"):
            await db.update(cart, set={"lines": []}, append={"lines": [Line("a", 1)]})
        with pytest.raises(ExpressionError, match="written by dynorm"):
            await db.update(cart, set={"version": 7})  # type: ignore[misc]
        with pytest.raises(ExpressionError, match="returns="):
            await db.update(cart, set={"owner": "x"}, returns="all")  # type: ignore[call-overload]
        with pytest.raises(ExpressionError, match="a path inside"):
            await db.update(cart, set={"lines[0].qty": 1}, upsert=True)
        with pytest.raises(KeyTemplateError, match="primary key"):
            await db.update(cart, if_not_exists={"cart_id": "x"})  # type: ignore[misc]
        with pytest.raises(TypeError, match="returns"):
            async with db.transaction() as tx:
                tx.update(cart, set={"owner": "x"}, returns="new")  # type: ignore[call-arg]
    assert log.operations == []


@pytest.mark.transactions
async def test_operations_in_a_transaction(db: Database) -> None:
    cart = await db.put(Cart(cart_id="c", tags={"a", "b"}))
    with count_requests(db) as log:
        async with db.transaction() as tx:
            tx.update(cart, append={"lines": [Line("a", 1)]}, discard={"tags": {"a"}})
            tx.update(Cart(cart_id="d"), if_not_exists={"owner": "ann"}, upsert=True)
    assert log.operations == ["TransactWriteItems"]
    assert cart.version == 2
    got = await db.get(Cart, cart_id="c")
    assert (got.lines, got.tags, got.version) == ([Line("a", 1)], {"b"}, 2)
    created = await db.get(Cart, cart_id="d")
    assert (created.owner, created.version) == ("ann", 1)


async def test_operations_on_a_denormalized_parent_read_no_child(db: Database) -> None:
    brand = await db.put(Brand(name="acme", country="FR"))
    await db.add(brand, Brand.products, Product(brand="acme", sku="p1"))
    with count_requests(db) as log:
        await db.update(brand, append={"history": ["founded"]})
    assert log.operations == ["UpdateItem"]  # no copied field changed: no child read
    with count_requests(db) as log, pytest.raises(ExpressionError, match="copies"):
        await db.update(brand, if_not_exists={"country": "DE"})
    assert log.operations == []


@pytest.mark.transactions
async def test_operations_beside_a_copied_field_rewrite_the_copies(db: Database) -> None:
    brand = await db.put(Brand(name="acme", country="FR", history=["founded"]))
    await db.add(brand, Brand.products, Product(brand="acme", sku="p1"))
    await db.update(brand, set={"country": "DE"}, append={"history": ["moved"]})
    product = await db.get(Product, brand="acme", sku="p1")
    assert product.brand_country == "DE"
    got = await db.get(Brand, name="acme")
    assert got.history == ["founded", "moved"]


typed_shop = Table("typed_shop", pk="pk", sk="sk", type_attribute="EntityType")


@typed_shop.model(pk="COUPON#{code}", sk="COUPON", entity="coupon")
@attrs.define
class Coupon:
    code: str
    uses: int = 0


async def _raw(db: Database, code: str) -> dict[str, Any] | None:
    key = {"pk": {"S": f"COUPON#{code}"}, "sk": {"S": "COUPON"}}
    found = await db.send(
        Request("GetItem", {"TableName": db.table_name, "Key": key, "ConsistentRead": True})
    )
    item: dict[str, Any] | None = found.get("Item")
    return item


async def test_an_update_needs_no_type_attribute_and_an_upsert_writes_it(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(typed_shop) as db:
        # Written by another tool, without the type attribute: still a Coupon, and updatable.
        item = {"pk": {"S": "COUPON#a"}, "sk": {"S": "COUPON"}, "code": {"S": "a"}}
        await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))
        with count_requests(db) as log:
            updated = await db.update(Coupon("a"), add={"uses": 1})
        assert updated == Coupon("a", uses=1)
        assert log.operations == ["UpdateItem"]
        assert "EntityType" not in (await _raw(db, "a") or {})
        # An upsert may create the item: it then stores the entity like every other write.
        assert await db.update(Coupon("b"), add={"uses": 2}, upsert=True) == Coupon("b", 2)
        assert (await _raw(db, "b") or {}).get("EntityType") == {"S": "coupon"}
        assert await db.get(Coupon, code="b") == Coupon("b", 2)
