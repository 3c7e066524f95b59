"""``update(..., exactly_once=True)``: the planned UpdateItem sent as a one-action transaction.

Planned through ``Explain`` (no server): the TransactWriteItems carries exactly the update a
plain ``update`` sends, and the refusals come before anything is read or sent.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from dynorm import Denormalized, ExpressionError, HasMany, Table
from dynorm.core.requests import Request, consistent_get
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import info_of
from dynorm.mapping.writeplan import WritePlanner
from dynorm.mapping.writes import transact_once

shop = Table("shop", pk="pk", sk="sk")


@shop.model(pk="CART#{cart_id}", sk="CART#{cart_id}", version="version")
@attrs.define
class Cart:
    cart_id: str
    views: int = 0
    items: list[str] = attrs.Factory(list)
    version: int = 0


@shop.model(pk="SELLER#{name}", sk="SELLER#{name}")
@attrs.define
class Seller:
    name: str
    city: str = ""
    sales: int = 0
    listings = HasMany["Listing"]("Listing", via=Denormalized(copy={"city": "seller_city"}))


@shop.model(pk="SELLER#{seller}", sk="LISTING#{n}")
@attrs.define
class Listing:
    seller: str
    n: int
    seller_city: str = ""


EXPLAIN = Explain(shop, "shop", WritePlanner(shop, "shop"))


def without_returns(request: Request) -> dict[str, Any]:
    return {k: v for k, v in request.params.items() if k != "ReturnValues"}


def test_the_transaction_holds_the_plain_update_and_the_item_is_read_back() -> None:
    cart = Cart("c1", version=3)
    (plain,) = EXPLAIN.update(Cart("c1", version=3), add={"views": 1}, append={"items": ["x"]})
    assert plain.operation == "UpdateItem"
    assert plain.retry == "token"  # a plain add= is guarded by the write token when sent
    write, read = EXPLAIN.update(cart, add={"views": 1}, append={"items": ["x"]}, exactly_once=True)
    # Same Key, expressions (the version's condition and increment included) and placeholders;
    # no ReturnValues and no write token: the ClientRequestToken is the transport's.
    assert write.operation == "TransactWriteItems"
    assert write.params == {"TransactItems": [{"Update": without_returns(plain)}]}
    assert "dynorm:wt" not in str(write.params)
    assert "ClientRequestToken" not in write.params
    assert (
        "version" in write.params["TransactItems"][0]["Update"]["ExpressionAttributeNames"].values()
    )
    assert read == consistent_get(info_of(Cart).primary_key(attrs.asdict(cart)), "shop")


def test_returns_none_reads_nothing_back_and_updated_new_does() -> None:
    cart = Cart("c1")
    (write,) = EXPLAIN.update(cart, add={"views": 1}, returns=None, exactly_once=True)
    assert write.operation == "TransactWriteItems"
    requests = EXPLAIN.update(cart, add={"views": 1}, returns="updated_new", exactly_once=True)
    assert [r.operation for r in requests] == ["TransactWriteItems", "GetItem"]


@pytest.mark.parametrize("returns", ["old", "updated_old"])
def test_old_values_are_refused_before_anything_is_planned(returns: Any) -> None:
    with pytest.raises(ExpressionError, match=r"returns='new'.*or None.*exactly_once=False"):
        EXPLAIN.update(Cart("c1"), add={"views": 1}, returns=returns, exactly_once=True)
    assert len(EXPLAIN.update(Cart("c1"), add={"views": 1}, returns=returns)) == 1


def test_an_update_of_copied_fields_is_refused_with_what_to_do() -> None:
    seller = Seller("s1", city="Oslo")
    # Fields no child copies: one action, as any other update.
    write, _ = EXPLAIN.update(seller, add={"sales": 1}, exactly_once=True)
    assert len(write.params["TransactItems"]) == 1
    with pytest.raises(ExpressionError, match=r"city.*db\.transaction\(\).*exactly_once=False"):
        EXPLAIN.update(seller, set={"city": "Bergen"}, exactly_once=True)


def test_transact_once_is_one_action_of_the_write() -> None:
    request = Request(
        "UpdateItem",
        {
            "TableName": "t",
            "Key": {"pk": {"S": "a"}},
            "UpdateExpression": "ADD #n :one",
            "ReturnValues": "ALL_NEW",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        },
        retry="token",
    )
    once = transact_once(request)
    assert once.operation == "TransactWriteItems"
    assert once.retry == "safe"
    (action,) = once.params["TransactItems"]
    assert action == {
        "Update": {
            "TableName": "t",
            "Key": {"pk": {"S": "a"}},
            "UpdateExpression": "ADD #n :one",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
    }
