"""Orders whose lines are items (``rows``) or a map in the order (``maps``), stored raw.

One stored table, two declarations: the lines as items of their own (``Partition()``) and
embedded in the order (``Embedded(key="name")``). The layouts hold attributes no model
declares, nested ones inside the map entries too. Imported by the tests and, by
``MODULE:TABLE``, by ``dynorm migrate`` in a subprocess.
"""

from __future__ import annotations

from typing import Any

from dynorm import Embedded, HasMany, Partition, Table

Raw = dict[str, Any]


def s(text: str) -> dict[str, str]:
    return {"S": text}


def n(number: int) -> dict[str, str]:
    return {"N": str(number)}


#: What another tool stored in every item: no model declares these.
EXTRA: Raw = {
    "legacy": s("another tool's"),
    "Rating #": {"N": "4.5"},
    "notes": {"M": {"by": s("ops"), "deep": {"M": {"x": {"L": [n(1), {"NULL": True}]}}}}},
}


def by_key(items: list[Raw]) -> list[Raw]:
    return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


# -- the two declarations -----------------------------------------------------------------------

rows = Table("race-orders", pk="pk", sk="sk")
maps = Table("race-orders", pk="pk", sk="sk")


@rows.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class RowOrder:
    order_id: str
    lines = HasMany["RowLine"](via=Partition())


@rows.model(pk="O#{order_id}", sk="LINE#{name}")
class RowLine:
    order_id: str
    name: str
    qty: int = 0


@maps.model(pk="O#{order_id}", sk="#ORDER#{order_id}")
class MapOrder:
    order_id: str
    lines = HasMany["MapLine"](via=Embedded(key="name"))


@maps.model(pk="O#{order_id}", sk="LINE#{name}")  # where the old items are
class MapLine:
    order_id: str
    name: str
    qty: int = 0


ORDERS = [f"{i:02}" for i in range(20)]
LINES = [("apple", 1), ("banana", 2), ("cherry", 3)]


def row_order(order: str) -> Raw:
    return {"pk": s(f"O#{order}"), "sk": s(f"#ORDER#{order}"), "order_id": s(order), **EXTRA}


def row_line(order: str, name: str, qty: int) -> Raw:
    return {
        "pk": s(f"O#{order}"),
        "sk": s(f"LINE#{name}"),
        "order_id": s(order),
        "name": s(name),
        "qty": n(qty),
        "line_note": {"M": {"gift": {"BOOL": True}, "Wrap #": s(f"{order}-{name}")}},
        **EXTRA,
    }


def map_order(order: str) -> Raw:
    entries = {
        name: {"M": {k: v for k, v in row_line(order, name, qty).items() if k not in ("pk", "sk")}}
        for name, qty in LINES
    }
    return {**row_order(order), "lines": {"M": entries}}


ROW_LAYOUT = by_key(
    [row_order(o) for o in ORDERS] + [row_line(o, name, q) for o in ORDERS for name, q in LINES]
)
MAP_LAYOUT = by_key([map_order(o) for o in ORDERS])
