"""Wire decoding (``dynorm.wire.structs``): typed structures read back what the dict path reads."""

from __future__ import annotations

import base64
import datetime
import decimal
import enum
import uuid
from typing import Any

import attrs
import msgspec
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

import dynorm
from dynorm import GSI, Table
from dynorm.mapping.model import info_of
from dynorm.wire.structs import WireItem


@attrs.frozen
class Money:
    """A type with hooks of the user's: no typed wire form, read by its hook."""

    cents: int


dynorm.converter.register_structure_hook(Money, lambda v, _: Money(int(v["S"][:-1])))
dynorm.converter.register_unstructure_hook(Money, lambda m: {"S": f"{m.cents}c"})


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.define
class Dims:
    width: float = dynorm.field(name="Width (cm)")
    label: str | None = None
    parts: list[int] = attrs.Factory(list)


table = Table("wire", pk="PK", sk="SK", indexes=[GSI("GSI1", "G1PK", "G1SK")])


@table.model(pk="R#{rid}", sk="RICH", GSI1=("C#{color_key}", "R#{rid}"), ttl="expires")
@attrs.define(kw_only=True)
class Rich:
    rid: str = dynorm.field(key_only=True)
    color_key: str = dynorm.field(key_only=True)
    name: str = dynorm.field(name="the name")
    count: int = dynorm.field(name="count#1")
    ratio: float = dynorm.field(name="ratio-x")
    price: decimal.Decimal = dynorm.field(name="a.b")
    flag: bool
    blob: bytes
    when: datetime.datetime
    day: datetime.date
    at: datetime.time
    uid: uuid.UUID
    color: Color
    level: Level
    maybe: int | None
    maybe_text: str | None
    tags: list[str]
    dims: list[Dims]
    dim: Dims | None
    labels: set[str]
    nums: set[int]
    amounts: frozenset[decimal.Decimal]
    scores: dict[str, float]
    pair: tuple[str, int]
    money: Money
    anything: Any = None
    expires: datetime.datetime | None = None
    note: str = "none"


@table.model(pk="R#{rid}", sk="PART#{n}")
@attrs.define
class Part:
    rid: str = dynorm.field(key_only=True)
    n: int = dynorm.field(key_only=True)
    # Stored under the same name as Rich's int field, as text: read as a dict by both.
    count: str = dynorm.field(name="count#1", default="")
    title: str = ""
    # Stored under Rich's names as the same wire types (S; N for an int and a Decimal): typed
    # for both, each model reading its own type.
    name: str = dynorm.field(name="the name", default="")
    amount: int = dynorm.field(name="a.b", default=0)


RICH, PART = info_of(Rich), info_of(Part)

_keys = st.text("abcxyz019#%", min_size=1, max_size=6)
_text = st.text(max_size=8)
_decimals = st.decimals(min_value=-(10**20), max_value=10**20, places=4, allow_nan=False)
# DynamoDB holds magnitudes from 1e-130: smaller floats are refused when encoding.
_floats = st.just(0.0) | st.floats(1e-100, 1e30) | st.floats(-1e30, -1e-100)
_ints = st.integers(min_value=-(10**30), max_value=10**30)
_dims = st.builds(
    Dims,
    width=_floats,
    label=st.none() | _text,
    parts=st.lists(_ints, max_size=3),
)
_seconds = st.datetimes(
    min_value=datetime.datetime(1971, 1, 1), max_value=datetime.datetime(2100, 1, 1)
).map(lambda d: d.replace(microsecond=0, tzinfo=datetime.UTC))

riches = st.builds(
    Rich,
    rid=_keys,
    color_key=_keys,
    name=_text,
    count=_ints,
    ratio=_floats,
    price=_decimals,
    flag=st.booleans(),
    blob=st.binary(min_size=1, max_size=8),
    when=st.datetimes(timezones=st.none() | st.just(datetime.UTC)),
    day=st.dates(),
    at=st.times(),
    uid=st.uuids(),
    color=st.sampled_from(Color),
    level=st.sampled_from(Level),
    maybe=st.none() | _ints,
    maybe_text=st.none() | _text,
    tags=st.lists(_text, max_size=3),
    dims=st.lists(_dims, max_size=2),
    dim=st.none() | _dims,
    labels=st.sets(_text, max_size=3),
    nums=st.sets(_ints, max_size=3),
    amounts=st.frozensets(_decimals, max_size=3),
    scores=st.dictionaries(_text, _floats, max_size=3),
    pair=st.tuples(_text, _ints),
    money=st.builds(Money, _ints),
    anything=st.none() | _ints | _text | st.lists(_text, max_size=2),
    expires=st.none() | _seconds,
    note=_text,
)
parts = st.builds(
    Part, rid=_keys, n=st.integers(0, 99), count=_text, title=_text, name=_text, amount=_ints
)


def _body(response: dict[str, Any]) -> bytes:
    """A response as DynamoDB sends it: bytes as base64 text."""

    def default(value: object) -> object:
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        raise TypeError(value)

    return orjson.dumps(response, default=default)


def _objects(items: list[Any], index: str | None = None) -> list[Any]:
    classify = table.classifier(index)
    found = []
    for item in items:
        info = classify(item)
        assert info is not None
        found.append(info.decode(item))
    return found


def _converted(items: list[Any], index: str | None = None) -> list[Any]:
    """Through the converters alone: no fallback to the careful decoder hides a failure."""
    classify = table.classifier(index)
    found = []
    for item in items:
        info = classify(item)
        assert info is not None
        found.append(type(item).__dynorm_converters__[info.cls](item))
    return found


@settings(max_examples=40, deadline=None)
@given(st.lists(riches | parts, min_size=1, max_size=5))
def test_wire_items_read_as_the_dict_path_reads_them(objs: list[Any]) -> None:
    items = [info_of(type(o)).encode(o) for o in objs]
    last = {a: items[-1][a] for a in ("PK", "SK")}
    body = _body({"Items": items, "Count": len(items), "ScannedCount": 9, "LastEvaluatedKey": last})
    generic = orjson.loads(body)
    wire = table.parser("Query")(body)
    assert all(isinstance(item, WireItem) for item in wire["Items"])
    assert {k: v for k, v in wire.items() if k != "Items"} == {
        "Count": len(items),
        "ScannedCount": 9,
        "LastEvaluatedKey": last,
    }
    assert _converted(wire["Items"]) == _objects(generic["Items"]) == objs
    # Read as mappings, wire items are the items orjson gives.
    assert [item.to_item() for item in wire["Items"]] == generic["Items"]
    assert [dict(item.items()) for item in wire["Items"]] == generic["Items"]


@settings(max_examples=20, deadline=None)
@given(st.lists(riches, min_size=1, max_size=3))
def test_an_index_scope_has_its_own_structures(objs: list[Rich]) -> None:
    items = [RICH.encode(o) for o in objs]
    body = _body({"Items": items})
    wire = table.parser("Query", "GSI1")(body)
    assert type(wire["Items"][0]) is table.wire("GSI1").item
    assert _converted(wire["Items"], "GSI1") == objs


def _field_types(item: type[WireItem]) -> dict[str, Any]:
    return {f.encode_name: f.type for f in msgspec.structs.fields(item)}


def test_attributes_are_typed_where_every_model_agrees() -> None:
    types = _field_types(table.wire().item)
    generic = dict[str, Any] | None
    # Key attributes, a stored name two models type differently, user hooks, Any, tuples and
    # the time to live stay generic AttributeValue dicts.
    for name in ("PK", "SK", "G1PK", "G1SK", "count#1", "money", "anything", "pair", "expires"):
        assert types[name] == generic, name
    # Typed too: "the name" (str in both models) and "a.b" (Decimal and int, both N).
    for name in ("the name", "ratio-x", "a.b", "flag", "blob", "dims", "labels", "scores"):
        assert types[name] != generic, name


def _rich(**changes: Any) -> dict[str, Any]:
    obj = Rich(
        rid="r1", color_key="c", name="n", count=1, ratio=0.5, price=decimal.Decimal("1.5"),
        flag=True, blob=b"x",
        when=datetime.datetime(2024, 1, 2), day=datetime.date(2024, 1, 2),
        at=datetime.time(1, 2), uid=uuid.UUID(int=7), color=Color.RED, level=Level.LOW,
        maybe=None, maybe_text="m", tags=["t"], dims=[], dim=None, labels=set(), nums={1},
        amounts=frozenset(), scores={}, pair=("p", 1), money=Money(3),
    )  # fmt: skip
    item = RICH.encode(obj)
    item.update(changes)
    return item


def test_missing_attributes_take_defaults_and_empty_sets() -> None:
    item = _rich()
    for name in ("note", "anything", "labels", "expires"):
        item.pop(name, None)
    (wire,) = table.parser("GetItem")(_body({"Item": item})).values()
    assert isinstance(wire, WireItem)
    (obj,) = _converted([wire])
    assert (obj.note, obj.anything, obj.labels, obj.expires) == ("none", None, set(), None)
    assert obj == RICH.decode(item)


def test_an_item_that_does_not_fit_sends_the_whole_body_the_generic_way() -> None:
    # Another tool wrote `the name` as a number: the page is parsed as dicts, as before.
    stray = _rich(**{"the name": {"N": "5"}})
    body = _body({"Items": [_rich(), stray], "Count": 2})
    response = table.parser("Query")(body)
    assert response == orjson.loads(body)
    assert all(type(item) is dict for item in response["Items"])
    # An unknown tag does not fit either.
    odd = _rich(flag={"S": "yes"})
    assert type(table.parser("Scan")(_body({"Items": [odd]}))["Items"][0]) is dict


def test_a_body_without_items_and_an_unprocessed_batch_come_through() -> None:
    assert table.parser("GetItem")(b"{}") == {}
    body = _body({"Responses": {"wire": [_rich()]}, "UnprocessedKeys": {"wire": {"Keys": []}}})
    response = table.parser("BatchGetItem")(body)
    assert response["UnprocessedKeys"] == {"wire": {"Keys": []}}
    assert isinstance(response["Responses"]["wire"][0], WireItem)
    body = _body({"Responses": [{"Item": _rich()}, {}]})
    got = table.parser("TransactGetItems")(body)["Responses"]
    assert got[1] == {}
    assert isinstance(got[0]["Item"], WireItem)


def test_wire_items_are_mappings_for_every_reader_of_raw_items() -> None:
    item = _rich()
    (wire,) = table.parser("GetItem")(_body({"Item": item})).values()
    expected = orjson.loads(_body(item))
    assert wire["PK"] == expected["PK"]
    assert wire.get("the name") == {"S": "n"}
    assert wire.get("nothing") is None
    assert "a.b" in wire
    assert "note" in wire
    assert "nothing" not in wire
    assert len(wire) == len(expected)
    assert set(wire) == set(expected)
    assert RICH.describe(wire) == "PK='R#r1', SK='RICH'"
    # The careful decoder (views, items other tools wrote) reads them as mappings too.
    assert RICH._careful(wire) == RICH.decode(expected)


def test_a_decoder_taken_before_another_model_is_declared_reads_that_model_too() -> None:
    # A query built early keeps its decoder; the structures it parses with are the scope's
    # when the body arrives, so a model declared since is not read with its fields missing.
    late = Table("late-model", pk="pk", sk="sk")

    @late.model(pk="A#{id}", sk="A")
    @attrs.define
    class First:
        id: str
        v: int = 0

    decode = late.parser("Query")

    @late.model(pk="B#{id}", sk="B")
    @attrs.define
    class Second:
        id: str
        w: int = 0

    body = orjson.dumps(
        {"Items": [{"pk": {"S": "B#1"}, "sk": {"S": "B"}, "id": {"S": "1"}, "w": {"N": "4"}}]}
    )
    (item,) = decode(body)["Items"]
    assert info_of(Second).decode(item) == Second("1", 4)
    assert late.parser("Query") is decode
    assert First("x") == First("x", 0)


def test_dynorm_bookkeeping_attributes_survive_typed_parsing() -> None:
    # No field maps them, but writes read them back from items they fetched (pending copies).
    book = Table("bookkeeping", pk="pk", sk="sk")

    @book.model(pk="P#{id}", sk="P")
    @attrs.define
    class Parent:
        id: str

    body = orjson.dumps(
        {
            "Responses": {
                "bookkeeping": [
                    {
                        "pk": {"S": "P#1"},
                        "sk": {"S": "P"},
                        "id": {"S": "1"},
                        "dynorm:copies": {"S": "t1"},
                        "dynorm:wt": {"S": "t2"},
                    }
                ]
            }
        }
    )
    (item,) = book.parser("BatchGetItem")(body)["Responses"]["bookkeeping"]
    assert info_of(Parent).decode(item) == Parent("1")
    assert isinstance(item, WireItem)
    assert item["dynorm:copies"] == {"S": "t1"}
    assert "dynorm:wt" in item
