"""AttributeValues <-> Python values through generated per-model codecs (``dynorm._codec``)."""

import base64
import datetime
import decimal
import enum
import math
import uuid
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dynorm import CodecError, DefinitionError
from dynorm._codec import build_codec, decode_any, encode_any


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.Enum):
    LOW = 1
    HIGH = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shade(enum.StrEnum):
    DARK = "dark"
    LIGHT = "light"


class Code(int, enum.Enum):
    OK = 200
    MISSING = 404


class Ratio(float, enum.Enum):
    HALF = 0.5
    THIRD = 0.25


class Plain:
    """Not an attrs class, not registered: DynamoDB cannot store it."""


@attrs.define
class Address:
    street: str
    number: int | None = None


@attrs.define
class Scalars:
    s: str
    i: int
    f: float
    d: decimal.Decimal
    flag: bool
    raw: bytes
    when: datetime.datetime
    day: datetime.date
    at: datetime.time
    uid: uuid.UUID


@attrs.define
class Enums:
    color: Color
    priority: Priority
    level: Level
    shade: Shade
    code: Code
    ratio: Ratio


@attrs.define
class Collections:
    tags: list[str]
    pair: tuple[int, ...]
    names: set[str]
    numbers: frozenset[int]
    decimals: set[decimal.Decimal]
    blobs: set[bytes]
    counts: dict[str, int]
    addresses: list[Address]
    by_name: dict[str, Address]
    nested: list[list[int]]


@attrs.define
class Loose:
    anything: Any
    mapping: dict[str, Any]
    items: list[Any]
    untyped_list: list  # type: ignore[type-arg]
    untyped_dict: dict  # type: ignore[type-arg]


@attrs.define
class Optionals:
    name: str | None = None
    address: Address | None = None
    tags: list[str] | None = None
    color: Color | None = None


@attrs.define
class Person:
    name: str
    home: Address


@attrs.define
class Measured:
    value: float = 0.0
    exact: decimal.Decimal = decimal.Decimal(0)
    series: list[float] = attrs.Factory(list)


# -- scalars -------------------------------------------------------------------------------------

SCALARS = Scalars(
    s="héllo #%",
    i=2**125,  # 38 digits, DynamoDB's most
    f=0.1,
    d=decimal.Decimal("3.1415926535897932384626433832795028841"),  # 38 significant digits
    flag=False,
    raw=b"\x00\xff",
    when=datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
    day=datetime.date(2024, 2, 29),
    at=datetime.time(23, 59, 1),
    uid=uuid.UUID("12345678-1234-5678-1234-567812345678"),
)


def test_scalars_encode_to_exact_attribute_values() -> None:
    assert build_codec(Scalars).encode(SCALARS) == {
        "s": {"S": "héllo #%"},
        "i": {"N": "42535295865117307932921825928971026432"},
        "f": {"N": "0.1"},
        "d": {"N": "3.1415926535897932384626433832795028841"},
        "flag": {"BOOL": False},
        "raw": {"B": b"\x00\xff"},
        "when": {"S": "2024-01-02T03:04:05.000006+00:00"},
        "day": {"S": "2024-02-29"},
        "at": {"S": "23:59:01"},
        "uid": {"S": "12345678-1234-5678-1234-567812345678"},
    }


def test_scalars_round_trip_exactly() -> None:
    codec = build_codec(Scalars)
    back = codec.decode(codec.encode(SCALARS))
    assert back == SCALARS
    assert type(back.i) is int
    assert back.d.as_tuple() == SCALARS.d.as_tuple()  # every digit kept, not just an equal value


def test_binary_read_from_base64_text() -> None:
    # A raw JSON response body carries binary values as base64 text, botocore as bytes.
    item = build_codec(Scalars).encode(SCALARS)
    item["raw"] = {"B": base64.b64encode(b"\x00\xff").decode()}
    assert build_codec(Scalars).decode(item).raw == b"\x00\xff"


def test_float_field_stores_shortest_repr() -> None:
    codec = build_codec(Measured)
    assert codec.encode(Measured(value=1 / 3))["value"] == {"N": "0.3333333333333333"}
    assert codec.decode({"value": {"N": "1e+300"}}).value == 1e300


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_rejected(bad: float) -> None:
    codec = build_codec(Measured)
    with pytest.raises(CodecError, match="DynamoDB numbers cannot be"):
        codec.encode(Measured(value=bad))
    with pytest.raises(CodecError, match="DynamoDB numbers cannot be"):
        codec.encode(Measured(series=[1.0, bad]))
    with pytest.raises(CodecError, match="DynamoDB numbers cannot be"):
        encode_any(bad)


@pytest.mark.parametrize("bad", ["NaN", "sNaN", "Infinity", "-Infinity"])
def test_non_finite_decimals_are_rejected(bad: str) -> None:
    with pytest.raises(CodecError, match="DynamoDB numbers cannot be"):
        build_codec(Measured).encode(Measured(exact=decimal.Decimal(bad)))
    with pytest.raises(CodecError, match="DynamoDB numbers cannot be"):
        encode_any(decimal.Decimal(bad))


# -- enums ---------------------------------------------------------------------------------------

ENUMS = Enums(Color.BLUE, Priority.HIGH, Level.LOW, Shade.LIGHT, Code.MISSING, Ratio.THIRD)


def test_enums_are_stored_as_their_values() -> None:
    assert build_codec(Enums).encode(ENUMS) == {
        "color": {"S": "blue"},
        "priority": {"N": "2"},
        "level": {"N": "1"},
        "shade": {"S": "light"},
        "code": {"N": "404"},
        "ratio": {"N": "0.25"},
    }


def test_enums_read_back_as_members() -> None:
    codec = build_codec(Enums)
    back = codec.decode(codec.encode(ENUMS))
    for name in ("color", "priority", "level", "shade", "code", "ratio"):
        assert getattr(back, name) is getattr(ENUMS, name), name


class UserId(str):
    """A str subclass that is not an Enum."""


def test_str_subclass_reads_back_as_its_type() -> None:
    @attrs.define
    class Account:
        owner: UserId

    codec = build_codec(Account)
    item = codec.encode(Account(UserId("u-1")))
    assert item == {"owner": {"S": "u-1"}}
    assert type(item["owner"]["S"]) is str
    back = codec.decode(item)
    assert back.owner == "u-1"
    assert type(back.owner) is UserId


def test_unknown_enum_value_is_a_codec_error() -> None:
    item = build_codec(Enums).encode(ENUMS)
    item["color"] = {"S": "green"}
    with pytest.raises(CodecError, match="'green' is not a value of Color"):
        build_codec(Enums).decode(item)


# -- collections ---------------------------------------------------------------------------------

COLLECTIONS = Collections(
    tags=["b", "a", "b"],
    pair=(3, 1),
    names={"y", "x"},
    numbers=frozenset({10, 9}),
    decimals={decimal.Decimal("0.5"), decimal.Decimal("12")},
    blobs={b"\x02", b"\x01"},
    counts={"a": 1},
    addresses=[Address("Main", 1)],
    by_name={"home": Address("Elm")},
    nested=[[1], []],
)


def test_collections_encode_to_lists_sets_and_maps() -> None:
    assert build_codec(Collections).encode(COLLECTIONS) == {
        "tags": {"L": [{"S": "b"}, {"S": "a"}, {"S": "b"}]},
        "pair": {"L": [{"N": "3"}, {"N": "1"}]},
        "names": {"SS": ["x", "y"]},
        "numbers": {"NS": ["10", "9"]},
        "decimals": {"NS": ["0.5", "12"]},
        "blobs": {"BS": [b"\x01", b"\x02"]},
        "counts": {"M": {"a": {"N": "1"}}},
        "addresses": {"L": [{"M": {"street": {"S": "Main"}, "number": {"N": "1"}}}]},
        "by_name": {"M": {"home": {"M": {"street": {"S": "Elm"}, "number": {"NULL": True}}}}},
        "nested": {"L": [{"L": [{"N": "1"}]}, {"L": []}]},
    }


def test_collections_round_trip_with_their_python_types() -> None:
    codec = build_codec(Collections)
    back = codec.decode(codec.encode(COLLECTIONS))
    assert back == COLLECTIONS
    assert type(back.pair) is tuple
    assert type(back.numbers) is frozenset
    assert type(back.names) is set


def test_empty_sets_are_left_out_and_read_back_empty() -> None:
    # DynamoDB has no empty sets, and its ADD refuses a NULL attribute: an empty set field is
    # stored as no attribute, so `db.update(obj, add={"names": {...}})` can fill it later.
    codec = build_codec(Collections)
    empty = attrs.evolve(COLLECTIONS, names=set(), numbers=frozenset(), blobs=set())
    item = codec.encode(empty)
    assert not {"names", "numbers", "blobs"} & item.keys()
    assert codec.sets == ("names", "numbers", "decimals", "blobs")
    back = codec.decode(item)
    assert back.names == set()
    assert back.numbers == frozenset()
    assert type(back.numbers) is frozenset
    # Items that hold NULL for an empty set (written before, or by other tools) read back too.
    null = {**item, "names": {"NULL": True}, "numbers": {"NULL": True}, "blobs": {"NULL": True}}
    assert codec.decode(null) == back


def test_heterogeneous_tuple_is_encoded_per_position() -> None:
    @attrs.define
    class Pair:
        pair: tuple[int, str]

    codec = build_codec(Pair)
    item = codec.encode(Pair((1, "a")))
    assert item == {"pair": {"L": [{"N": "1"}, {"S": "a"}]}}
    assert codec.decode(item) == Pair((1, "a"))


def test_nested_attrs_class_is_a_map() -> None:
    codec = build_codec(Person)
    item = codec.encode(Person("Ann", Address("Main", 7)))
    assert item == {
        "name": {"S": "Ann"},
        "home": {"M": {"street": {"S": "Main"}, "number": {"N": "7"}}},
    }
    assert codec.decode(item) == Person("Ann", Address("Main", 7))


def test_optional_fields_store_null_and_read_none() -> None:
    codec = build_codec(Optionals)
    item = codec.encode(Optionals())
    assert item == {k: {"NULL": True} for k in ("name", "address", "tags", "color")}
    assert codec.decode(item) == Optionals()
    full = Optionals("n", Address("s", 1), ["t"], Color.RED)
    assert codec.decode(codec.encode(full)) == full


def test_missing_optional_attribute_uses_the_default() -> None:
    assert build_codec(Optionals).decode({"name": {"S": "x"}}) == Optionals(name="x")


def test_any_typed_fields_use_natural_types() -> None:
    codec = build_codec(Loose)
    value = Loose(
        anything={"n": 1, "f": decimal.Decimal("1.5"), "l": [True, None, b"x"]},
        mapping={"k": "v"},
        items=[1, "two", {"three"}],
        untyped_list=[1],
        untyped_dict={"a": [2]},
    )
    item = codec.encode(value)
    assert item["anything"] == {
        "M": {
            "n": {"N": "1"},
            "f": {"N": "1.5"},
            "l": {"L": [{"BOOL": True}, {"NULL": True}, {"B": b"x"}]},
        }
    }
    assert item["items"] == {"L": [{"N": "1"}, {"S": "two"}, {"SS": ["three"]}]}
    assert codec.decode(item) == value


# -- definition-time errors ----------------------------------------------------------------------


def test_set_of_unsupported_elements_is_a_definition_error() -> None:
    @attrs.define
    class BadSet:
        members: set[Address]

    with pytest.raises(
        DefinitionError, match=r"BadSet\.members: .*DynamoDB sets hold str, bytes, int"
    ):
        build_codec(BadSet)


def test_set_of_bools_is_a_definition_error() -> None:
    @attrs.define
    class Bools:
        flags: list[set[bool]]

    with pytest.raises(DefinitionError, match="use a list"):
        build_codec(Bools)


def test_map_with_non_string_keys_is_a_definition_error() -> None:
    @attrs.define
    class IntKeys:
        by_id: dict[int, str]

    with pytest.raises(DefinitionError, match=r"IntKeys\.by_id: .*map keys are strings"):
        build_codec(IntKeys)


def test_unregistered_class_is_a_definition_error() -> None:
    @attrs.define
    class Holder:
        thing: Plain

    with pytest.raises(DefinitionError, match=r"Holder\.thing: .*Plain") as info:
        build_codec(Holder)
    assert "register" in str(info.value)


@pytest.mark.parametrize("tp", [complex, datetime.timedelta, int | str])
def test_other_unsupported_types_are_definition_errors(tp: Any) -> None:
    cls = attrs.make_class("Odd", {"value": attrs.field(type=tp)})
    with pytest.raises(DefinitionError, match=r"Odd\.value"):
        build_codec(cls)


# -- field encoders (used for typed condition values) --------------------------------------------


def test_encode_field_uses_the_field_type() -> None:
    codec = build_codec(Scalars)
    assert codec.encode_field["day"](datetime.date(2020, 1, 1)) == {"S": "2020-01-01"}
    assert codec.encode_field["d"](decimal.Decimal("1.0")) == {"N": "1.0"}
    assert build_codec(Enums).encode_field["priority"](Priority.LOW) == {"N": "1"}


# -- generic values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "av"),
    [
        (None, {"NULL": True}),
        ("x", {"S": "x"}),
        (True, {"BOOL": True}),
        (10**40, {"N": str(10**40)}),
        (decimal.Decimal("-0.001"), {"N": "-0.001"}),
        (1.5, {"N": "1.5"}),
        (b"\x01", {"B": b"\x01"}),
        (bytearray(b"\x01"), {"B": b"\x01"}),
        (Color.RED, {"S": "red"}),
        (Priority.LOW, {"N": "1"}),
        (datetime.date(2024, 1, 1), {"S": "2024-01-01"}),
        (uuid.UUID(int=0), {"S": "00000000-0000-0000-0000-000000000000"}),
        (Address("s"), {"M": {"street": {"S": "s"}, "number": {"NULL": True}}}),
        ({"a": [1, "b"]}, {"M": {"a": {"L": [{"N": "1"}, {"S": "b"}]}}}),
        ((1, 2), {"L": [{"N": "1"}, {"N": "2"}]}),
        ({"b", "a"}, {"SS": ["a", "b"]}),
        (frozenset({2, 10}), {"NS": ["10", "2"]}),
        ({b"b", b"a"}, {"BS": [b"a", b"b"]}),
        (set(), {"NULL": True}),
    ],
)
def test_encode_any(value: object, av: dict[str, Any]) -> None:
    assert encode_any(value) == av


@pytest.mark.parametrize(
    ("av", "value"),
    [
        ({"N": "12"}, 12),
        ({"N": "12.50"}, decimal.Decimal("12.50")),
        ({"N": "1E+3"}, decimal.Decimal("1E+3")),
        ({"SS": ["a"]}, {"a"}),
        ({"NS": ["1", "1.5"]}, {1, decimal.Decimal("1.5")}),
        ({"BS": [b"a", base64.b64encode(b"b").decode()]}, {b"a", b"b"}),
        ({"B": base64.b64encode(b"\xff").decode()}, b"\xff"),
        ({"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}]}}}, {"l": [None, False]}),
    ],
)
def test_decode_any(av: dict[str, Any], value: object) -> None:
    decoded = decode_any(av)
    assert decoded == value
    assert type(decoded) is type(value)


def test_decode_any_rejects_unknown_tags() -> None:
    with pytest.raises(CodecError, match="unknown DynamoDB type tag 'X'"):
        decode_any({"X": "1"})


@pytest.mark.parametrize("value", [object(), {1.5j}, {"a", 1}, {True}])
def test_encode_any_rejects_what_dynamodb_cannot_hold(value: object) -> None:
    with pytest.raises(CodecError):
        encode_any(value)


# Numbers DynamoDB holds: 38 significant digits, magnitudes 1E-130 .. 9.99…E+125, or zero.
storable_ints = st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1)
storable_decimals = st.builds(
    lambda digits, exponent: decimal.Decimal(f"{digits}E{exponent}"),
    storable_ints,
    st.integers(min_value=-130, max_value=88),
)
storable_floats = st.floats(
    min_value=-9.9e125, max_value=9.9e125, allow_nan=False, allow_infinity=False
).filter(lambda f: f == 0 or abs(f) >= 1e-130)

json_like = st.recursive(
    st.none() | st.booleans() | st.text() | storable_ints | st.binary() | storable_decimals,
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(json_like)
def test_decode_any_inverts_encode_any(value: object) -> None:
    assert decode_any(encode_any(value)) == value


# -- hypothesis: typed round trip ----------------------------------------------------------------


@attrs.define
class Mixed:
    name: str
    count: int
    ratio: float
    price: decimal.Decimal
    active: bool
    data: bytes
    created: datetime.datetime
    day: datetime.date
    color: Color
    level: Level
    tags: list[str]
    scores: dict[str, int]
    labels: set[str]
    ids: frozenset[int]
    home: Address
    note: str | None = None


mixed = st.builds(
    Mixed,
    name=st.text(),
    count=storable_ints,
    ratio=storable_floats,
    price=storable_decimals,
    active=st.booleans(),
    data=st.binary(),
    created=st.datetimes(timezones=st.sampled_from([None, datetime.UTC])),
    day=st.dates(),
    color=st.sampled_from(Color),
    level=st.sampled_from(Level),
    tags=st.lists(st.text()),
    scores=st.dictionaries(st.text(), storable_ints),
    labels=st.sets(st.text()),
    ids=st.frozensets(storable_ints),
    home=st.builds(Address, street=st.text(), number=st.none() | st.integers()),
    note=st.none() | st.text(),
)

MIXED_CODEC = build_codec(Mixed)


@given(mixed)
def test_typed_round_trip(value: Mixed) -> None:
    back = MIXED_CODEC.decode(MIXED_CODEC.encode(value))
    assert back == value
    assert back.level is value.level
    assert str(back.price) == str(value.price)  # same digits and exponent, not just equal
