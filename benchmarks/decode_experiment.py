"""Decode experiment: a Query page body into objects, orjson + dynorm's decoders against msgspec.

``python -m benchmarks.decode_experiment [--items N] [--repeats N]`` (not part of ``make bench``).
Issue 10 asks whether decoding the body straight into typed structures skips enough of the
intermediate dicts ``orjson.loads`` builds to be worth adopting. Every variant turns the same
body (the benchmark's page: order items and the order, in sort key order) into the same objects,
``OrderItem`` and ``Order`` attrs instances, telling them apart by sort key as dynorm does:

- ``orjson.loads`` alone, and ``msgspec.json.decode`` untyped: the floors, generic dicts.
- orjson + dynorm: ``orjson.loads``, then each model's generated decoder (what dynorm does today).
- msgspec wire: ``msgspec.json.decode`` into ``Struct`` types mirroring the wire format
  (``{"S": ...}``, ``{"N": ...}``, a superset struct for both kinds of item, as a single-table
  page needs), alone and then converted into the attrs objects by hand-written code as good as a
  generated converter would be.
- dynorm wire (generated): what dynorm does with the fast path (``dynorm.wire.structs``): the
  table's generated structs, then each model's generated converter, classified by sort key.
- msgspec wire, one kind: the same, with a struct of the order item's fields only (no optional
  fields), on a page of order items alone: the best case, which mixed collections cannot use.

Memory: bytes per decoded object held (tracemalloc, the list of objects kept) and the traced
peak per item while decoding (the intermediate dicts or structs and the objects).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

import msgspec
import orjson

from benchmarks import data, server
from benchmarks.models import Dimensions, Order, OrderItem, table
from benchmarks.report import Section, number, ratio
from dynorm.io.paging import released

Decode = Callable[[bytes], list[Any]]

ITEM_PREFIX: Final = data.ITEM_PREFIX

# -- the wire format as msgspec structs -------------------------------------------------------


class S(msgspec.Struct, gc=False):
    """A string AttributeValue."""

    S: str


class N(msgspec.Struct, gc=False):
    """A number AttributeValue (DynamoDB sends numbers as text)."""

    N: str


class Bool(msgspec.Struct, gc=False):
    """A boolean AttributeValue."""

    BOOL: bool


class StringList(msgspec.Struct, gc=False):
    """A list of strings AttributeValue."""

    L: list[S]


class DimensionsMap(msgspec.Struct, gc=False):
    """The order item's nested map, its attributes typed."""

    width_cm: N
    height_cm: N
    depth_cm: N
    weight_kg: N
    color: S


class DimensionsValue(msgspec.Struct, gc=False):
    """The nested map as an AttributeValue."""

    M: DimensionsMap


class AnyRow(msgspec.Struct, gc=False):
    """Every attribute of an order or an order item: what a single-table page holds."""

    sk: S
    id: S
    order_id: S | None = None
    product_id: S | None = None
    name: S | None = None
    quantity: N | None = None
    price: N | None = None
    gift_wrap: Bool | None = None
    backordered: Bool | None = None
    tags: StringList | None = None
    dimensions: DimensionsValue | None = None
    user_id: S | None = None
    status: S | None = None
    currency: S | None = None
    total: N | None = None
    item_count: N | None = None
    express: Bool | None = None


class AnyPage(msgspec.Struct):
    """A Query page of orders and order items."""

    Items: list[AnyRow]


class ItemRow(msgspec.Struct, gc=False):
    """An order item alone: every field required."""

    order_id: S
    id: S
    product_id: S
    name: S
    quantity: N
    price: N
    gift_wrap: Bool
    backordered: Bool
    tags: StringList
    dimensions: DimensionsValue


class ItemPage(msgspec.Struct):
    """A Query page of order items alone."""

    Items: list[ItemRow]


# -- from wire structs to the attrs objects ---------------------------------------------------


def _dimensions(value: DimensionsValue) -> Dimensions:
    m = value.M
    return Dimensions(
        float(m.width_cm.N), float(m.height_cm.N), float(m.depth_cm.N), float(m.weight_kg.N),
        m.color.S,
    )  # fmt: skip


def _item(r: Any) -> OrderItem:
    # Attribute access on an optional field needs no None check here: an item row has them all.
    return OrderItem(
        r.order_id.S, r.id.S, r.product_id.S, r.name.S, int(r.quantity.N), Decimal(r.price.N),
        r.gift_wrap.BOOL, r.backordered.BOOL, [t.S for t in r.tags.L], _dimensions(r.dimensions),
    )  # fmt: skip


def _order(r: Any) -> Order:
    return Order(
        r.id.S, r.user_id.S, r.status.S, r.currency.S, Decimal(r.total.N), int(r.item_count.N),
        r.express.BOOL,
    )  # fmt: skip


# -- the variants -----------------------------------------------------------------------------


def variants() -> dict[str, tuple[str, Decode]]:
    """Name -> (what it does, body -> objects)."""
    decode_item = table.info(OrderItem).codec.decode
    decode_order = table.info(Order).codec.decode
    any_page = msgspec.json.Decoder(AnyPage)
    item_page = msgspec.json.Decoder(ItemPage)
    untyped = msgspec.json.Decoder()

    def orjson_dynorm(body: bytes) -> list[Any]:
        return [
            decode_item(raw) if raw["sk"]["S"].startswith(ITEM_PREFIX) else decode_order(raw)
            for raw in orjson.loads(body)["Items"]
        ]

    def msgspec_objects(body: bytes) -> list[Any]:
        return [
            _item(r) if r.sk.S.startswith(ITEM_PREFIX) else _order(r)
            for r in any_page.decode(body).Items
        ]

    wire_decode = table.parser("Query")
    is_item = table.info(OrderItem).sort_key_matcher(None)

    def dynorm_wire(body: bytes) -> list[Any]:
        # dynorm's own wire decoding: the generated structs and converters (through the
        # models' decoders, as its readers call them), classified by sort key.
        return [
            decode_item(raw) if is_item(raw) else decode_order(raw)
            for raw in released(wire_decode(body)["Items"])
        ]

    def msgspec_one_kind(body: bytes) -> list[Any]:
        return [_item(r) for r in item_page.decode(body).Items]

    return {
        "orjson.loads": ("floor: generic dicts, no objects", lambda b: orjson.loads(b)["Items"]),
        "msgspec untyped": ("→ generic dicts", lambda b: untyped.decode(b)["Items"]),
        "orjson + dynorm": ("orjson.loads + generated decoders → attrs", orjson_dynorm),
        "msgspec wire": ("→ wire Structs (superset row)", lambda b: any_page.decode(b).Items),
        "msgspec wire + objects": ("→ wire Structs → attrs", msgspec_objects),
        "dynorm wire (generated)": ("wire.structs → converters → attrs", dynorm_wire),
        "msgspec one kind": ("items-only page → ItemRow Structs → attrs", msgspec_one_kind),
    }  # fmt: skip


def _time(decode: Decode, body: bytes, *, collect: bool) -> float:
    gc.collect()
    if not collect:
        gc.disable()
    try:
        start = time.process_time()
        decode(body)
        return time.process_time() - start
    finally:
        gc.enable()


def _memory(decode: Decode, body: bytes) -> tuple[float, float]:
    """Bytes held per decoded object, and the traced peak per object while decoding."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = decode(body)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (held - before) / len(kept), (peak - before) / len(kept)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="order items in the page")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per variant")
    parser.add_argument(
        "--no-gc",
        dest="collect",
        action="store_false",
        help="turn the garbage collector off during timed runs",
    )
    args = parser.parse_args(argv)
    mixed = server.encode(data.query_page(args.items))
    items_only = server.encode(data.children_page(1, args.items, args.items))
    found = variants()
    expected = found["orjson + dynorm"][1](mixed)
    assert found["msgspec wire + objects"][1](mixed) == expected  # noqa: S101 - same objects
    assert found["dynorm wire (generated)"][1](mixed) == expected  # noqa: S101
    assert found["msgspec one kind"][1](items_only) == expected[:-1]  # noqa: S101
    del expected  # a heap as small as before: the collector's passes grow with it

    bodies = {name: items_only if name == "msgspec one kind" else mixed for name in found}
    timed: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(2):  # warm up, then interleave the variants' repeats
        for name, (_, decode) in found.items():
            decode(bodies[name])
    for _ in range(args.repeats):
        for name, (_, decode) in found.items():
            timed[name].append(_time(decode, bodies[name], collect=args.collect))

    rows = args.items + 1
    floor = statistics.median(timed["orjson.loads"])
    section = Section(
        f"Decode a Query page body of {rows:,} items ({len(mixed) / 1e6:.1f} MB), "
        f"{args.repeats} repeats{'' if args.collect else ', garbage collector off'}; "
        f"msgspec {msgspec.__version__}, orjson {orjson.__version__}",
        [
            "variant",
            "what it does",
            "CPU us/item",
            "spread",
            "x floor",
            "B held/obj",
            "peak B/item",
        ],
    )
    for name, (label, decode) in found.items():
        runs = timed[name]
        median = statistics.median(runs)
        held, peak = _memory(decode, bodies[name])
        section.rows.append(
            [
                name,
                label,
                number(median / rows * 1e6),
                f"{(max(runs) - min(runs)) / median:.0%}",
                ratio(median / floor),
                f"{held:,.0f}",
                f"{peak:,.0f}",
            ]
        )
    section.notes.append(
        "CPU: time.process_time(), median; spread: (max - min) / median; gc.collect() before "
        "each run"
    )
    section.notes.append(
        "B held/obj: bytes the returned list keeps per object; peak: tracemalloc peak while "
        "decoding, per item (body excluded)"
    )
    print("\n".join(section.lines()))


if __name__ == "__main__":
    main()
