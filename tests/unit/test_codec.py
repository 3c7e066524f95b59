"""AttributeValues <-> Python values through generated per-model codecs (``dynorm.core.codec``)."""

import base64
import datetime
import decimal
import enum
import math
import typing
import uuid
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynorm import CodecError, DefinitionError
from dynorm.core.codec import converter as codec_module
from dynorm.core.codec import typeforms
from dynorm.core.codec.converter import converter
from dynorm.core.codec.generic import decode_any, encode_any
from dynorm.core.codec.model_codec import build_codec


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


def test_an_int_in_a_float_field_is_stored_when_a_float_holds_it_exactly() -> None:
    codec = build_codec(_holder(float))
    for number in (3, 2**53, -(2**60)):
        item = codec.encode(_holder(float)(number))
        assert item == {"value": {"N": str(number)}}
        assert codec.decode(item).value == number


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
    home=st.builds(Address, street=st.text(), number=st.none() | storable_ints),
    note=st.none() | st.text(),
)

MIXED_CODEC = build_codec(Mixed)


@given(mixed)
def test_typed_round_trip(value: Mixed) -> None:
    back = MIXED_CODEC.decode(MIXED_CODEC.encode(value))
    assert back == value
    assert back.level is value.level
    assert str(back.price) == str(value.price)  # same digits and exponent, not just equal


# -- refusing values that would not read back -----------------------------------------------------


def _holder(tp: Any) -> type:
    """An attrs class with one field ``value`` of type ``tp``."""
    return attrs.make_class("Holder", {"value": attrs.field(type=tp)})


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (int, 2.5, r"Holder\.value \(int\): 2\.5 is a float, not an int"),
        (int, True, r"Holder\.value \(int\): True is a bool, not an int"),
        (int, "3", r"Holder\.value \(int\): '3' is a str, not an int"),
        (int, None, r"Holder\.value \(int\): None is not an int"),
        (int, decimal.Decimal(1), r"Decimal\('1'\) is a Decimal, not an int"),
        (float, "0.5", r"Holder\.value \(float\): '0\.5' is a str, not a float"),
        (float, False, "False is a bool, not a float"),
        (float, 2**53 + 1, r"Holder\.value \(float\): 9007199254740993 has no exact float value"),
        (set[float], {2**60 + 1}, r"member 1152921504606846977 \(float\): .* no exact float"),
        (decimal.Decimal, 1.5, r"1\.5 is a float, not a Decimal; give Decimal\('1\.5'\)"),
        (decimal.Decimal, True, "True is a bool, not a Decimal"),
        (str, 5, r"Holder\.value \(str\): 5 is an int, not a str"),
        (str, b"x", "b'x' is a bytes, not a str"),
        (bool, 1, r"Holder\.value \(bool\): 1 is an int, not a bool"),
        (bytes, "x", "'x' is a str, not bytes"),
        (datetime.date, datetime.datetime(2024, 1, 1), r"not a date; give value\.date\(\)"),
        (datetime.datetime, "2024-01-01", "'2024-01-01' is a str, not a datetime"),
        (datetime.time, 5, "5 is an int, not a time"),
        (uuid.UUID, "1234", "'1234' is a str, not a UUID"),
        (Color, "red", r"Holder\.value \(Color\): 'red' is a str, not a Color member; "),
        (Level, 5, r"Holder\.value \(Level\): 5 is an int, not a Level member \(members: LOW"),
        (Level, 1, r"1 is an int, not a Level member; give Level\.LOW"),
        (Shade, "dark", r"'dark' is a str, not a Shade member; give Shade\.DARK"),
        (Code, Level.LOW, "is a Level, not a Code member"),
        (list[str], "abc", r"Holder\.value \(list\[str\]\): 'abc' is a str, not a list"),
        (list[str], ["a", 5], r"Holder\.value\[1\] \(str\): 5 is an int, not a str"),
        (list[int], [1, None], r"Holder\.value\[1\] \(int\): None is not an int"),
        (list[list[int]], [[1], [2, "x"]], r"Holder\.value\[1\]\[1\] \(int\): 'x' is a str"),
        (tuple[int, str], (1, 2), r"Holder\.value\[1\] \(str\): 2 is an int, not a str"),
        (tuple[int, str], (1,), r"\(1,\) is a tuple, not a tuple of 2"),
        (dict[str, int], {"a": "1"}, r"Holder\.value\.a \(int\): '1' is a str, not an int"),
        (dict[str, int], {1: 1}, r"Holder\.value \(dict\[str, int\]\): map key 1 is an int"),
        (dict[str, int], [("a", 1)], "is a list, not a dict"),
        (set[str], {"a", 1}, r"Holder\.value member 1 \(str\): 1 is an int, not a str"),
        (set[int], {1.5}, r"Holder\.value member 1\.5 \(int\): 1\.5 is a float, not an int"),
        (set[str], ["a"], r"\['a'\] is a list, not a set"),
        (Address, {"street": "x"}, r"\{'street': 'x'\} is a dict, not an Address"),
        (
            Address,
            Address("Main", "7"),  # type: ignore[arg-type]
            r"Holder\.value\.number \(int \| None\): '7' is a str",
        ),
        (Address | None, Address(5), r"Holder\.value\.street \(str\): 5 is an int"),  # type: ignore[arg-type]
        (list[Address], [Address("a"), Address("b", 2.0)], r"value\[1\]\.number"),  # type: ignore[arg-type]
        (dict[str, Any], {1: "x"}, "map key 1 is an int"),
        (Any, {2: "x"}, "map key 2 is an int"),
    ],
)
def test_values_that_would_not_read_back_are_refused(tp: Any, value: object, message: str) -> None:
    codec = build_codec(_holder(tp))
    obj = _holder(tp)(value)
    with pytest.raises(CodecError, match=message):
        codec.encode(obj)
    with pytest.raises(CodecError, match=message):
        codec.encode_field["value"](value)


@pytest.mark.parametrize(
    ("tp", "value", "back"),
    [
        (float, 3, 3.0),  # ints read back as floats
        (decimal.Decimal, 3, decimal.Decimal(3)),
        (int, Level.HIGH, 2),  # int subclasses: stored as the plain number
        (int, Code.OK, 200),
        (str, Shade.DARK, "dark"),
        (float, Ratio.HALF, 0.5),
        (list[int], (1, 2), [1, 2]),
        (tuple[int, ...], [1, 2], (1, 2)),
        (set[str], frozenset({"a"}), {"a"}),
        (frozenset[int], {1}, frozenset({1})),
        (bytes, bytearray(b"x"), b"x"),
        (datetime.date, datetime.date(2024, 1, 1), datetime.date(2024, 1, 1)),
        (int, 10**100, 10**100),  # one significant digit, in range
    ],
)
def test_values_that_read_back_are_accepted(tp: Any, value: object, back: object) -> None:
    codec = build_codec(_holder(tp))
    decoded = codec.decode(codec.encode(_holder(tp)(value))).value
    assert decoded == back
    assert type(decoded) is type(back)


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (int, 10**38 + 1, r"Holder\.value \(int\): 1000.* has 39 significant digits.*MAX_NUMBER_D"),
        (float, 1e300, r"Holder\.value \(float\): 1e\+300 is outside .*MAX_NUMBER"),
        (decimal.Decimal, decimal.Decimal("1E-131"), r"1E-131 is outside .*MIN_NUMBER"),
        (list[int], [1, -(10**127)], r"Holder\.value\[1\] \(int\): .*outside"),
        (Any, [decimal.Decimal("1." + "0" * 37 + "1")], "39 significant digits"),
        (set[int], {10**40 + 1}, r"Holder\.value member .*41 significant digits"),
    ],
)
def test_numbers_dynamodb_cannot_hold_are_refused(tp: Any, value: object, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        build_codec(_holder(tp)).encode(_holder(tp)(value))


def test_a_users_hook_error_names_the_field() -> None:
    class Money:
        pass

    converter = codec_module.converter
    converter.register_unstructure_hook(Money, lambda v: {"N": v.cents})  # AttributeError on None
    converter.register_structure_hook(Money, lambda v, _: Money())
    codec = build_codec(_holder(Money))
    with pytest.raises(CodecError, match=r"Holder\.value \(Money\): cannot encode None: Attrib"):
        codec.encode(_holder(Money)(None))


def test_paths_are_encoded_as_their_document_is_typed() -> None:
    @attrs.define
    class Doc:
        home: Address
        homes: list[Address]
        by_name: dict[str, Address]
        pairs: list[tuple[int, str]]
        loose: Any

    path = build_codec(Doc).encode_path
    assert path("home.number")(7) == {"N": "7"}
    assert path("homes[0].street")("x") == {"S": "x"}
    assert path("by_name.work.number")(None) == {"NULL": True}
    assert path("pairs[2][1]")("b") == {"S": "b"}
    assert path("loose.anything[3]")(1.5) == {"N": "1.5"}
    assert path("home.unknown")(1.5) == {"N": "1.5"}  # not a field: encoded generically
    with pytest.raises(CodecError, match=r"Doc\.home\.number \(int \| None\): 'x' is a str"):
        path("home.number")("x")
    with pytest.raises(CodecError, match=r"Doc\.homes\[0\]\.street \(str\): 1 is an int"):
        path("homes[0].street")(1)
    with pytest.raises(CodecError, match=r"Doc\.pairs\[2\]\[0\] \(int\): 'b' is a str"):
        path("pairs[2][0]")("b")
    with pytest.raises(CodecError, match=r"Doc\.home\.street: .* lone surrogate"):
        path("home.street")("\ud800")


def test_only_types_that_nest_without_bound_need_a_depth_check() -> None:
    @attrs.define
    class Typed:
        home: Address
        grid: list[list[dict[str, int]]]
        tags: set[str]

    @attrs.define
    class Loose:
        data: dict[str, Any]

    assert not build_codec(Typed).deep
    assert not build_codec(Collections).deep
    assert build_codec(Loose).deep


anything = st.recursive(
    st.none()
    | st.booleans()
    | storable_ints
    | storable_floats
    | storable_decimals
    | st.text(max_size=5)
    | st.binary(max_size=5)
    | st.sampled_from([Color.RED, Level.LOW, Shade.DARK, Code.OK, Ratio.HALF])
    | st.dates()
    | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
        | st.frozensets(st.integers(-5, 5) | st.text(max_size=2), max_size=3)
        | st.builds(Address, street=inner, number=inner)
    ),
    max_leaves=6,
)

FIELD_TYPES: list[Any] = [
    int,
    float,
    decimal.Decimal,
    str,
    bool,
    bytes,
    datetime.date,
    datetime.datetime,
    Color,
    Level,
    Shade,
    int | None,
    list[int],
    tuple[int, str],
    dict[str, int],
    set[str],
    frozenset[int],
    Address,
    list[Address] | None,
]
HOLDER_CLASSES = {tp: _holder(tp) for tp in FIELD_TYPES}
HOLDER_CODECS = {tp: build_codec(cls) for tp, cls in HOLDER_CLASSES.items()}


def _conforms(value: object, tp: Any) -> bool:
    """Whether ``value`` is a value of ``tp``, the way mypy would see it."""
    inner = typeforms._optional_inner(tp)
    if inner is not None:
        return value is None or _conforms(value, inner)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is tuple:
        return isinstance(value, tuple) and all(map(_conforms, value, args))
    if origin is dict:
        return isinstance(value, dict) and all(
            type(k) is str and _conforms(v, args[1]) for k, v in value.items()
        )
    if origin in (set, frozenset):
        return isinstance(value, origin) and all(_conforms(v, args[0]) for v in value)
    if tp is Address:
        return (
            type(value) is Address
            and _conforms(value.street, str)
            and _conforms(value.number, int | None)
        )
    if tp is bool:
        return type(value) is bool
    return isinstance(value, tp) and (tp is not int or type(value) is int)


@pytest.mark.parametrize("tp", FIELD_TYPES, ids=typeforms.type_text)
@settings(max_examples=50)
@given(value=anything)
def test_whatever_is_accepted_reads_back_as_its_type(tp: Any, value: Any) -> None:
    # The promise behind the strict hooks: never an item that later fails to read.
    cls = HOLDER_CLASSES[tp]
    codec = HOLDER_CODECS[tp]
    try:
        item = codec.encode(cls(value))
    except CodecError:
        return
    back = codec.decode(item).value
    assert _conforms(back, tp), (tp, value, back)
    if not isinstance(value, float | tuple | list | frozenset):  # equal up to the widenings
        assert back == value


def test_a_literal_field_stores_its_values_by_their_type() -> None:
    modes: Any = typing.Literal["fast", "slow"]
    counts: Any = typing.Literal[1, 2]
    flags: Any = typing.Literal[b"\x01", None]

    assert converter.unstructure("slow", modes) == {"S": "slow"}
    assert converter.unstructure(2, counts) == {"N": "2"}
    assert converter.structure({"S": "fast"}, modes) == "fast"
    assert converter.structure({"N": "2.0"}, counts) == 2  # the number, not its text
    assert converter.structure({"B": "AQ=="}, flags) == b"\x01"
    assert converter.structure({"NULL": True}, flags) is None


@pytest.mark.parametrize(
    ("value", "tp"),
    [
        ("medium", typing.Literal["fast", "slow"]),
        (True, typing.Literal[1]),
        (1, typing.Literal[True]),
    ],
)
def test_a_value_outside_a_literal_is_a_codec_error(value: object, tp: object) -> None:
    with pytest.raises(CodecError, match="not one of"):
        converter.unstructure(value, tp)


def test_a_stored_value_outside_a_literal_is_a_codec_error() -> None:
    with pytest.raises(CodecError, match=r"expected one of Literal\['a'\], got \{'S': 'b'\}"):
        converter.structure({"S": "b"}, typing.cast("Any", typing.Literal["a"]))
