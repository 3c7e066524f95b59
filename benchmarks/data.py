"""The data every client reads: one order and its items as DynamoDB JSON (deterministic).

An order item has strings, numbers (an int, a price, floats), booleans, a list of strings and a
nested map: about 480 bytes of compact JSON. A 5,001-item page is thus 2.4 MB, more than the 1 MB
DynamoDB puts in one real page; the point is many items per request. Values vary with the item's
number but never at random, so every run (and every client) reads byte-identical pages.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

TABLE: Final = "bench"
ORDER_ID: Final = "ORD-2024-000042"
USER_ID: Final = "user-8f3a2c"
#: Sort key prefix of order items; their ids are zero-padded so they sort by number.
ITEM_PREFIX: Final = "item#"

_PRODUCTS: Final = (
    "Stainless steel water bottle, 750 ml",
    "Organic cotton t-shirt, crew neck",
    "Wireless noise-cancelling headphones",
    "Cast iron skillet, 26 cm",
    "Recycled paper notebook, A5 dotted",
    "USB-C charging cable, braided, 2 m",
    "Bamboo cutting board set",
    "Merino wool hiking socks",
)
_TAGS: Final = ("gift", "eco", "bestseller", "clearance", "new", "bundle", "fragile", "bulky")
_COLORS: Final = ("black", "white", "navy", "forest green", "sand", "charcoal")

DynamoItem = dict[str, dict[str, Any]]


def item_id(n: int) -> str:
    """The id of order item number ``n`` (1-based), sortable as text."""
    return f"{n:06d}"


def order_key(order_id: str = ORDER_ID) -> DynamoItem:
    """The primary key of an order (its partition holds the order and its items)."""
    return {"pk": {"S": f"order#{order_id}"}, "sk": {"S": f"order#{order_id}"}}


def order_item(n: int, order_id: str = ORDER_ID) -> DynamoItem:
    """Order item number ``n`` (1-based) as DynamoDB JSON."""
    tags = [_TAGS[(n + k * 3) % len(_TAGS)] for k in range(1 + n % 3)]
    cents = 199 + (n * 7919) % 24_800
    return {
        "pk": {"S": f"order#{order_id}"},
        "sk": {"S": f"{ITEM_PREFIX}{item_id(n)}"},
        "order_id": {"S": order_id},
        "id": {"S": item_id(n)},
        "product_id": {"S": f"prod-{(n * 104_729) % 100_000:05d}"},
        "name": {"S": _PRODUCTS[n % len(_PRODUCTS)]},
        "quantity": {"N": str(1 + n % 5)},
        "price": {"N": f"{cents // 100}.{cents % 100:02d}"},
        "gift_wrap": {"BOOL": n % 7 == 0},
        "backordered": {"BOOL": n % 11 == 0},
        "tags": {"L": [{"S": t} for t in tags]},
        "dimensions": {
            "M": {
                "width_cm": {"N": str(5 + n % 40)},
                "height_cm": {"N": f"{2 + n % 30}.5"},
                "depth_cm": {"N": str(1 + n % 12)},
                "weight_kg": {"N": f"0.{100 + n % 900}"},
                "color": {"S": _COLORS[n % len(_COLORS)]},
            }
        },
    }


def order_item_fields(n: int, order_id: str = ORDER_ID) -> dict[str, Any]:
    """Order item number ``n`` as plain Python values: what a writer starts from.

    The same values as :func:`order_item` (without the keys, which a mapper derives): strings,
    ``int`` quantity, ``Decimal`` price, booleans, a list of strings and a dict.
    """
    item = order_item(n, order_id)
    dimensions = item["dimensions"]["M"]
    return {
        "order_id": order_id,
        "id": item_id(n),
        "product_id": item["product_id"]["S"],
        "name": item["name"]["S"],
        "quantity": int(item["quantity"]["N"]),
        "price": Decimal(item["price"]["N"]),
        "gift_wrap": item["gift_wrap"]["BOOL"],
        "backordered": item["backordered"]["BOOL"],
        "tags": [t["S"] for t in item["tags"]["L"]],
        "dimensions": {
            "width_cm": float(dimensions["width_cm"]["N"]),
            "height_cm": float(dimensions["height_cm"]["N"]),
            "depth_cm": float(dimensions["depth_cm"]["N"]),
            "weight_kg": float(dimensions["weight_kg"]["N"]),
            "color": dimensions["color"]["S"],
        },
    }


def order_item_keys(n: int, order_id: str = ORDER_ID) -> dict[str, str]:
    """The primary key of order item ``n`` as plain strings (``pk``, ``sk``)."""
    return {"pk": f"order#{order_id}", "sk": f"{ITEM_PREFIX}{item_id(n)}"}


def order(items: int, order_id: str = ORDER_ID) -> DynamoItem:
    """The order itself (the parent item of its items' collection)."""
    return {
        **order_key(order_id),
        "id": {"S": order_id},
        "user_id": {"S": USER_ID},
        "status": {"S": "shipped"},
        "currency": {"S": "EUR"},
        "total": {"N": "18734.55"},
        "item_count": {"N": str(items)},
        "express": {"BOOL": False},
    }


def query_page(items: int, order_id: str = ORDER_ID) -> dict[str, Any]:
    """A Query response with the order's ``items`` items and the order, in sort key order.

    ``item#…`` sorts before ``order#…``, so the order comes last, as DynamoDB would return the
    collection.
    """
    rows = [order_item(n, order_id) for n in range(1, items + 1)]
    rows.append(order(items, order_id))
    return {"Items": rows, "Count": len(rows), "ScannedCount": len(rows)}


def children_page(start: int, count: int, total: int, order_id: str = ORDER_ID) -> dict[str, Any]:
    """Items ``start`` … ``start + count - 1`` of a ``total``-item collection, as a Query page.

    Carries ``LastEvaluatedKey`` while items remain, like a page DynamoDB cut at its size limit.
    """
    stop = min(start + count, total + 1)
    rows = [order_item(n, order_id) for n in range(start, stop)]
    page: dict[str, Any] = {"Items": rows, "Count": len(rows), "ScannedCount": len(rows)}
    if stop <= total and rows:
        page["LastEvaluatedKey"] = {"pk": rows[-1]["pk"], "sk": rows[-1]["sk"]}
    return page


def table_description() -> dict[str, Any]:
    """A DescribeTable answer, for clients that ask for the key schema."""
    return {
        "Table": {
            "TableName": TABLE,
            "TableStatus": "ACTIVE",
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
            "ItemCount": 0,
            "TableSizeBytes": 0,
        }
    }
