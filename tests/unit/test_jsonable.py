"""dynorm.jsonable and dynorm.from_jsonable: every value kind there and back, loaders, errors."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import re
import subprocess
import sys
import uuid
from typing import Any, Literal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dynorm
from dynorm import BelongsTo, Embedded, HasMany, InvalidDataError, Page, Partition, Table
from dynorm.mapping.state import Loaded, bind

shop = Table("shop", pk="pk", sk="sk")


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.define
class Address:
    street: str
    number: int
    unit: str | None = None


@attrs.define
class Shelf:
    """An embedded child: a plain attrs class."""

    nickname: str
    size: int = 1


@shop.model(pk="STORE#{store_id}", sk="STORE#{store_id}")
class Store:
    store_id: str
    text: str = ""
    count: int = 0
    big: int = 0
    ratio: float = 0.0
    price: decimal.Decimal = decimal.Decimal(0)
    flag: bool = False
    blob: bytes = b""
    when: datetime.datetime = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    day: datetime.date = datetime.date(2000, 1, 1)
    clock: datetime.time = datetime.time(0, 0)
    ident: uuid.UUID = uuid.UUID(int=0)
    color: Color = Color.RED
    level: Level = Level.LOW
    size: Literal["S", "M"] = "S"
    numbers: list[int] = attrs.field(factory=list)
    pair: tuple[str, int] = ("", 0)
    names: set[str] = attrs.field(factory=set)
    scores: frozenset[int] = frozenset()
    blobs: frozenset[bytes] = frozenset()
    prices: set[decimal.Decimal] = attrs.field(factory=set)
    counts: dict[str, int] = attrs.field(factory=dict)
    address: Address | None = None
    addresses: list[Address] = attrs.field(factory=list)
    anything: Any = None
    items = HasMany["Item"](via=Partition())
    shelves = HasMany["Shelf"](via=Embedded(key="nickname", max_items=5))


@shop.model(pk="STORE#{store_id}", sk="ITEM#{item_id}")
class Item:
    store_id: str
    item_id: str
    price: decimal.Decimal = decimal.Decimal(0)
    store = BelongsTo(Store)


FULL = Store(
    store_id="s1",
    text="héllo #1",
    count=-3,
    big=10**30,
    ratio=0.1,
    price=decimal.Decimal("12.50"),
    flag=True,
    blob=b"\x00\xff",
    when=datetime.datetime(2024, 9, 5, 22, 31, 54, 123456, tzinfo=datetime.UTC),
    day=datetime.date(2024, 2, 29),
    clock=datetime.time(23, 59, 1),
    ident=uuid.UUID("12345678-1234-5678-1234-567812345678"),
    color=Color.GREEN,
    level=Level.HIGH,
    size="M",
    numbers=[3, 1, 2],
    pair=("a", 1),
    names={"b", "a", "c"},
    scores=frozenset({10, 9, 100}),
    blobs=frozenset({b"b", b"a"}),
    prices={decimal.Decimal("10"), decimal.Decimal("9.5")},
    counts={"x": 1},
    address=Address("Main", 1),
    addresses=[Address("A", 2, "3b")],
    anything={"k": [1, "two", None]},
)


def test_every_value_kind_has_its_json_form() -> None:
    data = dynorm.jsonable(FULL)
    assert data == {
        "store_id": "s1",
        "text": "héllo #1",
        "count": -3,
        "big": 10**30,
        "ratio": 0.1,
        "price": "12.50",
        "flag": True,
        "blob": "AP8=",
        "when": "2024-09-05T22:31:54.123456+00:00",
        "day": "2024-02-29",
        "clock": "23:59:01",
        "ident": "12345678-1234-5678-1234-567812345678",
        "color": "green",
        "level": 2,
        "size": "M",
        "numbers": [3, 1, 2],
        "pair": ["a", 1],
        "names": ["a", "b", "c"],
        "scores": [9, 10, 100],
        "blobs": ["YQ==", "Yg=="],
        "prices": ["9.5", "10"],
        "counts": {"x": 1},
        "address": {"street": "Main", "number": 1, "unit": None},
        "addresses": [{"street": "A", "number": 2, "unit": "3b"}],
        "anything": {"k": [1, "two", None]},
    }
    assert json.loads(json.dumps(data)) == data  # JSON-ready all the way down


def test_every_value_kind_round_trips_through_json_text() -> None:
    text = json.dumps(dynorm.jsonable(FULL))
    back = dynorm.from_jsonable(Store, json.loads(text))
    assert back == FULL
    assert type(back.price) is decimal.Decimal
    assert str(back.price) == "12.50"  # every digit kept
    assert type(back.pair) is tuple
    assert type(back.scores) is frozenset


def test_defaults_fill_what_the_data_leaves_out() -> None:
    assert dynorm.from_jsonable(Store, {"store_id": "s2"}) == Store("s2")


def test_decimals_are_read_from_numbers_too() -> None:
    item = dynorm.from_jsonable(Item, {"store_id": "s", "item_id": "i", "price": 2.5})
    assert item.price == decimal.Decimal("2.5")
    item = dynorm.from_jsonable(Item, {"store_id": "s", "item_id": "i", "price": 7})
    assert item.price == decimal.Decimal(7)


def test_a_float_with_more_digits_than_it_keeps_is_refused_for_a_decimal() -> None:
    # json.loads reads 12345678901234567890.123456789 as the float 1.2345678901234567e+19:
    # the digits sent are lost, so the value is refused rather than stored changed.
    long = json.loads('{"store_id": "s", "item_id": "i", "price": 12345678901234567890.123456789}')
    with pytest.raises(InvalidDataError) as caught:
        dynorm.from_jsonable(Item, long)
    ((loc, text),) = caught.value.problems
    assert loc == ("price",)
    assert "send the decimal as a string" in text
    fifteen = {"store_id": "s", "item_id": "i", "price": 0.123456789012345}
    exact = dynorm.from_jsonable(Item, fifteen)
    assert exact.price == decimal.Decimal("0.123456789012345")  # 15 digits: kept as sent
    for value in (float("inf"), float("-inf"), float("nan")):
        with pytest.raises(InvalidDataError, match="not a finite decimal number"):
            dynorm.from_jsonable(Item, {"store_id": "s", "item_id": "i", "price": value})


@given(
    digits=st.integers(min_value=1, max_value=10**15 - 1),
    exponent=st.integers(min_value=-115, max_value=110),  # inside DynamoDB's range
)
def test_a_json_number_of_at_most_15_digits_is_read_as_sent(digits: int, exponent: int) -> None:
    sent = decimal.Decimal(digits).scaleb(exponent)
    text = f'{{"store_id": "s", "item_id": "i", "price": {sent:E}}}'
    assert dynorm.from_jsonable(Item, json.loads(text)).price == sent


def test_json_read_with_exact_numbers_gives_the_same_values() -> None:
    # json.loads(..., parse_float=Decimal) reads every number with a fraction exactly.
    text = '{"store_id": "s", "count": 5.0, "ratio": 2.5, "price": 0.10000000000000001}'
    store = dynorm.from_jsonable(Store, json.loads(text, parse_float=decimal.Decimal))
    assert (store.count, store.ratio) == (5, 2.5)
    assert store.price == decimal.Decimal("0.10000000000000001")
    for data in ({"count": decimal.Decimal("5.5")}, {"price": decimal.Decimal("NaN")}):
        with pytest.raises(InvalidDataError):
            dynorm.from_jsonable(Store, {"store_id": "s", **data})


@pytest.mark.parametrize(
    ("data", "loc", "says"),
    [
        ({"price": "1" * 39}, ("price",), "39 significant digits"),
        ({"price": "1E+500"}, ("price",), "outside DynamoDB's number range"),
        ({"big": 10**40 + 1}, ("big",), "significant digits"),
        ({"ratio": float("inf")}, ("ratio",), "DynamoDB numbers cannot be inf"),
        ({"text": "a\ud800"}, ("text",), "lone surrogate"),
        ({"store_id": "\udfff"}, ("store_id",), "lone surrogate"),
        ({"store_id": "k" * 3000}, ("store_id",), "partition key limit"),
        ({"text": "x" * 410_000}, ("text",), "Store: the item is"),
        ({"anything": json.loads("[" * 40 + "]" * 40)}, ("anything",), "MAX_DEPTH"),
        ({"shelves": [{"nickname": "a", "size": 10**40 + 1}]}, ("shelves", 0), "significant"),
        ({"shelves": [{"nickname": "a"}, {"nickname": "\ud800"}]}, ("shelves", 1), "surrogate"),
        ({"shelves": [{"nickname": "x" * 410_000}]}, ("shelves",), "Store: the item is"),
        (
            {"items": [{"store_id": "s", "item_id": "i", "price": "1E+500"}]},
            ("items", 0, "price"),
            "outside DynamoDB's number range",
        ),
    ],
)
def test_a_value_a_put_would_refuse_is_refused_at_its_field(
    data: dict[str, Any], loc: tuple[str | int, ...], says: str
) -> None:
    with pytest.raises(InvalidDataError) as caught:
        dynorm.from_jsonable(Store, {"store_id": "s", **data})
    ((where, text),) = caught.value.problems
    assert where == loc
    assert says in text


def test_what_from_jsonable_accepts_is_what_a_put_stores() -> None:
    from dynorm.mapping.model import info_of  # noqa: PLC0415 - the put's own encoder

    store = dynorm.from_jsonable(Store, {"store_id": "s", "names": [], "price": "1E+125"})
    item = info_of(Store).encode(store)
    assert item["price"] == {"N": "1E+125"}
    assert "names" not in item  # an empty set is left out of the item, and reads back empty


def _loaded(obj: object, name: str, items: list[Any], shown: int | None = None) -> None:
    state = bind(obj, None)
    state.loaded[name] = Loaded(items, None, shown=shown)


def test_loaded_relationships_are_included_and_unloaded_ones_left_out() -> None:
    store = Store("s1")
    assert "items" not in dynorm.jsonable(store)
    assert "shelves" not in dynorm.jsonable(store)

    _loaded(store, "items", [Item("s1", "a"), Item("s1", "b"), Item("s1", "c")], shown=2)
    data = dynorm.jsonable(store)
    # What .loaded shows (a limited load), not everything held.
    assert [i["item_id"] for i in data["items"]] == [i.item_id for i in store.items.loaded]
    assert data["items"][0] == {"store_id": "s1", "item_id": "a", "price": "0"}
    assert "shelves" not in data

    _loaded(store, "shelves", [Shelf("top", 3)])
    assert dynorm.jsonable(store)["shelves"] == [{"nickname": "top", "size": 3}]


def test_embedded_children_that_came_unasked_are_left_out() -> None:
    # A read of the item carries its embedded shelves (kept for .loaded and writes), but the
    # call did not load them: absent, as items in the partition would be (docs/web.md).
    store = Store("s1")
    bind(store, None).loaded["shelves"] = Loaded([Shelf("top", 3)], None, asked=False)
    assert store.shelves.loaded == [Shelf("top", 3)]
    assert "shelves" not in dynorm.jsonable(store)
    bind(store, None).loaded["shelves"].asked = True  # load=[Store.shelves]
    assert dynorm.jsonable(store)["shelves"] == [{"nickname": "top", "size": 3}]


def test_a_belongs_to_is_an_object_or_null_and_a_cycle_is_shown_once() -> None:
    store = Store("s1")
    item = Item("s1", "a")
    _loaded(item, "store", [store])
    _loaded(store, "items", [item])
    data = dynorm.jsonable(item)
    # The store's items hold the item itself, higher up: left out rather than repeated forever.
    assert data["store"] == dynorm.jsonable(Store("s1"))
    assert [i["item_id"] for i in dynorm.jsonable(store)["items"]] == ["a"]

    orphan = Item("s1", "b")
    _loaded(orphan, "store", [])
    assert dynorm.jsonable(orphan)["store"] is None


def test_relationships_in_the_data_come_back_loaded() -> None:
    store = dynorm.from_jsonable(
        Store,
        {"store_id": "s1", "items": [{"store_id": "s1", "item_id": "a"}], "shelves": []},
    )
    assert store.items.loaded == [Item("s1", "a")]
    assert store.shelves.loaded == []
    item = dynorm.from_jsonable(Item, {"store_id": "s1", "item_id": "a", "store": None})
    assert item.store.loaded is None
    again = dynorm.from_jsonable(Item, {"store_id": "s1", "item_id": "a"})
    with pytest.raises(dynorm.NotLoadedError):
        _ = again.store.loaded


def test_lists_pages_and_plain_values() -> None:
    items = [Item("s", "a"), Item("s", "b")]
    assert dynorm.jsonable(items) == [dynorm.jsonable(i) for i in items]
    page = Page(items, "next", scanned=5)
    assert dynorm.jsonable(page) == {"items": dynorm.jsonable(items), "cursor": "next"}
    assert dynorm.jsonable(Page([], None)) == {"items": [], "cursor": None}
    assert dynorm.jsonable({"n": decimal.Decimal("1.0"), "s": {2, 1}}) == {"n": "1.0", "s": [1, 2]}
    with pytest.raises(TypeError, match="cannot represent"):
        dynorm.jsonable(object())


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ({"item_id": "i"}, ["store_id: missing; this field has no default"]),
        (
            {"store_id": 1, "item_id": "i"},
            ["store_id: 1 is a number, not a string"],
        ),
        (
            {"store_id": "s", "item_id": "i", "price": "cheap"},
            ["price: 'cheap' is not a decimal number"],
        ),
        (
            {"store_id": "s", "item_id": "i", "prise": "1"},
            ["prise: Item has no field 'prise' (did you mean 'price'?)"],
        ),
        (
            {"store_id": "s", "item_id": "i", "store": {"store_id": "x", "color": "blue"}},
            ["store.color: 'blue' is not one of Color's values ('red', 'green')"],
        ),
        ([], ["(the data): [] is an array, not an object (Item)"]),
    ],
)
def test_bad_data_names_the_field_and_what_is_wrong(data: object, problems: list[str]) -> None:
    with pytest.raises(InvalidDataError) as caught:
        dynorm.from_jsonable(Item, data)
    assert str(caught.value) == "Item: " + "; ".join(problems)
    assert caught.value.model == "Item"
    assert len(caught.value.problems) == len(problems)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("count", "3", "'3' is a string, not an integer"),
        ("count", True, "True is a boolean, not an integer"),
        ("flag", 1, "1 is a number, not a boolean"),
        ("blob", "!!", "'!!' is not base64 text"),
        ("when", "yesterday", "'yesterday' is not an ISO 8601 date and time"),
        ("day", "2024-02-30", "'2024-02-30' is not an ISO 8601 date"),
        ("day", "2024-02-01T10:00:00", "is not an ISO 8601 date"),
        ("ident", "xyz", "'xyz' is not a UUID"),
        ("level", "2", "'2' is not one of Level's values (1, 2)"),
        ("size", "L", "'L' is not one of 'S', 'M'"),
        ("pair", ["a"], "1 values given; tuple[str, int] holds 2"),
        ("names", "abc", "'abc' is a string, not an array"),
        ("counts", {"x": "1"}, "counts.x: '1' is a string, not an integer"),
        ("address", {"street": "x"}, "address.number: missing"),
        ("addresses", [{"street": "x", "number": None}], "addresses[0].number: null is not"),
        ("price", "NaN", "'NaN' is not a finite decimal number"),
    ],
)
def test_each_kind_refuses_what_is_not_its_value(field: str, value: object, message: str) -> None:
    with pytest.raises(InvalidDataError, match=re.escape(message)):
        dynorm.from_jsonable(Store, {"store_id": "s", field: value})


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(InvalidDataError) as caught:
        dynorm.from_jsonable(
            Store, {"count": "x", "items": [{"store_id": "s"}, {"item_id": 3}], "nope": 1}
        )
    places = [loc for loc, _ in caught.value.problems]
    assert sorted(places, key=repr) == sorted(
        [
            ("count",),
            ("items", 0, "item_id"),
            ("items", 1, "item_id"),
            ("items", 1, "store_id"),
            ("nope",),
            ("store_id",),
        ],
        key=repr,
    )


def test_from_jsonable_refuses_what_is_not_a_model() -> None:
    with pytest.raises(dynorm.DefinitionError, match="models and attrs classes"):
        dynorm.from_jsonable(dict, {})


def test_models_keep_their_attrs_behaviour() -> None:
    assert attrs.asdict(Item("s", "i")) == {
        "store_id": "s",
        "item_id": "i",
        "price": decimal.Decimal(0),
    }
    assert [f.name for f in attrs.fields(Item)] == ["store_id", "item_id", "price"]


def test_importing_dynorm_does_not_import_pydantic_or_fastapi() -> None:
    code = (
        "import sys, dynorm\n"
        "t = dynorm.Table('t', pk='pk', sk='sk')\n"
        "@t.model(pk='A#{a}', sk='A#{a}')\n"
        "class A:\n"
        "    a: str\n"
        "dynorm.jsonable(A('x'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'pydantic_core', 'fastapi', 'starlette')))\n"
    )
    done = subprocess.run(  # noqa: S603 - our own code, in a fresh interpreter
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


class Money:
    """A type of the user's own, unknown to dynorm.jsonable."""


@attrs.define
class Wallet:
    money: Money


def test_a_type_without_a_json_form_says_which() -> None:
    with pytest.raises(dynorm.DefinitionError, match="no JSON form for values of type Money"):
        dynorm.jsonable(Wallet(Money()))


def test_sets_are_sorted_by_their_own_values() -> None:
    store = Store(
        "s",
        names={"9", "10", "a"},
        scores=frozenset({9, 10, -1}),
        prices={decimal.Decimal("9.5"), decimal.Decimal("10"), decimal.Decimal("-0.1")},
    )
    data = dynorm.jsonable(store)
    assert data["names"] == ["10", "9", "a"]  # text as text
    assert data["scores"] == [-1, 9, 10]
    assert data["prices"] == ["-0.1", "9.5", "10"]  # numbers as numbers
    assert dynorm.jsonable({"mixed": {1, "a"}})["mixed"] in ([1, "a"], ["a", 1])
