"""Every field type a model may declare reads back what was written, on every read path.

A value is written by the model's encoder, then read back through the generated decoder (items
as botocore gives them: bytes), through it again from a response body (binaries as base64
text, numbers as DynamoDB normalises them: ``1.0`` comes back as ``"1"``), and through the
typed wire structures of the fast path (``dynorm.wire.structs``), with no careful decoder behind
them to hide a failure. A type that cannot read back is refused when the model is declared.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import enum
import uuid
from typing import Any, Generic, Literal, TypeVar

import attrs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynorm
from dynorm import CodecError, DefinitionError, Table


class Answer(enum.Enum):
    YES = True
    NO = False


class Blob(enum.Enum):
    A = b"\x00a"
    B = b"b\xff"


class Mixed(enum.Enum):
    TEXT_ONE = "1"
    ONE = 1
    HALF = 0.5
    BYTES = b"1"
    ON = "on"


class Ratio(enum.Enum):
    WHOLE = 1.0
    HALF = 0.5
    HUGE = 1e20


class Rgb(enum.Enum):
    RED = (255, 0, 0)
    GREEN = (0, 255, 0)


class Nothing(enum.Enum):
    NONE = None
    SOME = "some"


class Perm(enum.Flag):
    R = 1
    W = 2


class Level(enum.IntEnum):
    LOW = 0
    HIGH = 1


@attrs.define
class Inner:
    answer: Answer
    blobs: list[Blob]
    tags: frozenset[str] = frozenset()


@attrs.define
class Node:
    name: str
    kids: list[Node] = attrs.Factory(list)


V = TypeVar("V")


@attrs.define
class Box(Generic[V]):
    """A generic attrs class: a field of it is typed by its argument (``Box[int]``)."""

    value: V
    more: list[V] = attrs.Factory(list)


NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC)

#: (type, values of it): every value is written and read back on every path.
CASES: list[tuple[Any, list[Any]]] = [
    (str, ["", "x", "ünï"]),
    (int, [0, -(10**37), 10**37]),
    (float, [0.0, 1.0, 0.1, 1e20, -2.5e-100]),
    (decimal.Decimal, [decimal.Decimal("1.50"), decimal.Decimal("-1E+5")]),
    (bool, [True, False]),
    (bytes, [b"", b"\x00\xff"]),
    (datetime.datetime, [NOW, NOW.replace(tzinfo=None)]),
    (datetime.date, [NOW.date()]),
    (datetime.time, [NOW.time()]),
    (uuid.UUID, [uuid.UUID(int=7)]),
    (Answer, list(Answer)),
    (Blob, list(Blob)),
    (Mixed, list(Mixed)),
    (Ratio, list(Ratio)),
    (Rgb, list(Rgb)),
    (Nothing, list(Nothing)),
    (Perm, [Perm.R, Perm.R | Perm.W, Perm(0)]),
    (Level, list(Level)),
    (Answer | None, [None, Answer.NO]),
    (Blob | None, [None, Blob.B]),
    (Literal[True, False], [True, False]),
    (Literal[b"x", b"y"], [b"x", b"y"]),
    (Literal["1", 1, 1.5], ["1", 1, 1.5]),
    (Literal[Answer.YES, "a"], [Answer.YES, "a"]),
    (Literal["a"] | None, [None, "a"]),
    (list[Answer], [[], [Answer.YES, Answer.NO]]),
    (list[Blob | None], [[None, Blob.A]]),
    (tuple[Answer, Blob, int], [(Answer.NO, Blob.A, 3)]),
    (tuple[int, ...], [(), (1, 2)]),
    (dict[str, Mixed], [{}, {"a": Mixed.BYTES, "b": Mixed.TEXT_ONE}]),
    (dict[str, set[int]], [{"a": set(), "b": {1, 2}}]),
    (set[str], [set(), {"a", "b"}]),
    (frozenset[str], [frozenset(), frozenset({"a"})]),
    (frozenset[bytes], [frozenset({b"a", b"\x00"})]),
    (set[float], [{0.5, 1.0}]),
    (frozenset[decimal.Decimal], [frozenset({decimal.Decimal("1.10")})]),
    (list[set[str]], [[set(), {"x"}]]),
    (Inner, [Inner(Answer.YES, [Blob.A, Blob.B], frozenset({"t"})), Inner(Answer.NO, [])]),
    (Inner | None, [None, Inner(Answer.NO, [Blob.B])]),
    (list[Inner], [[Inner(Answer.NO, [Blob.A])]]),
    (Node, [Node("a", [Node("b", [Node("c")])])]),
    (Box[int], [Box(3, [4, 5])]),
    (Box[Answer] | None, [None, Box(Answer.YES)]),
    (list[Box[str]], [[Box("a"), Box("b", ["c"])]]),
]


def info_of(cls: type) -> Any:
    """A model's description (its codec, its decoders), from the class the model decorated."""
    return cls.__dynorm_model__  # type: ignore[attr-defined]


table = Table("field-types", pk="PK", sk="SK")
MODELS: dict[str, Any] = {}


def _declare(i: int, tp: Any) -> Any:
    cls = attrs.make_class(
        f"Holder{i}", {"key": attrs.field(type=str), "value": attrs.field(type=tp)}
    )
    table.model(pk=f"T{i}#{{key}}", sk="VALUE")(cls)
    return info_of(cls)


for _i, (_tp, _) in enumerate(CASES):
    MODELS[repr(_tp)] = _declare(_i, _tp)


def _same(got: Any, want: Any) -> bool:
    """Equal, and of the same type all the way down (True == 1, 1.0 == 1, [] == () are not)."""
    if type(got) is not type(want):
        return False
    if isinstance(want, list | tuple):
        return len(got) == len(want) and all(map(_same, got, want))
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    if attrs.has(type(want)):
        return all(
            _same(getattr(got, f.name), getattr(want, f.name)) for f in attrs.fields(type(want))
        )
    return bool(got == want)


def _as_sent_back(value: object) -> object:
    """An item as a JSON reply carries it: binaries as base64, numbers normalised by DynamoDB."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {
            k: _normal_number(v)
            if k == "N"
            else [_normal_number(n) for n in v]
            if k == "NS"
            else _as_sent_back(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_as_sent_back(v) for v in value]
    return value


def _normal_number(text: str) -> str:
    """The text DynamoDB sends a number back as: no exponent, no trailing zeros (1.0 -> 1)."""
    number = decimal.Decimal(text)
    if number == 0:
        return "0"
    return f"{number.normalize():f}"


def _paths(info: Any, obj: object) -> dict[str, Any]:
    """``obj`` written by ``info``'s encoder and read back by each read path."""
    item = info.encode(obj)
    reply = _as_sent_back({"Items": [item], "Count": 1, "ScannedCount": 1})
    body = orjson.dumps(reply)
    wire = table.parser("Query")(body)["Items"][0]
    converted = (
        type(wire).__dynorm_converters__[info.cls](wire) if not isinstance(wire, dict) else None
    )
    return {
        "botocore": info.codec.decode(item),
        "json": info.codec.decode(orjson.loads(body)["Items"][0]),
        "wire": converted if converted is not None else info.codec.decode(wire),
        "careful": info.decode(orjson.loads(body)["Items"][0]),
    }


@pytest.mark.parametrize(
    ("tp", "value"),
    [pytest.param(tp, v, id=f"{tp!r}-{i}") for tp, values in CASES for i, v in enumerate(values)],
)
def test_every_value_reads_back_on_every_path(tp: Any, value: object) -> None:
    info = MODELS[repr(tp)]
    obj = info.cls(key="k", value=value)
    for path, back in _paths(info, obj).items():
        assert _same(back.value, value), f"{path}: {back.value!r} != {value!r}"


# -- Enums of any member values ------------------------------------------------------------------

member_values = st.one_of(
    st.text(max_size=4),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30).filter(
        lambda f: f == 0 or abs(f) >= 1e-100
    ),
    st.booleans(),
    st.binary(max_size=4),
    st.tuples(st.integers(0, 9), st.text(max_size=2)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(member_values, min_size=1, max_size=6))
def test_an_enum_of_any_stored_values_reads_back(values: list[object]) -> None:
    kind = enum.Enum("Kind", {f"M{i}": v for i, v in enumerate(values)})  # type: ignore[misc]
    local = Table("enum-kinds", pk="PK", sk="SK")
    cls = attrs.make_class(
        "HasKind", {"key": attrs.field(type=str), "value": attrs.field(type=kind)}
    )
    local.model(pk="K#{key}", sk="K")(cls)
    info: Any = info_of(cls)
    for member in kind:
        item = info.encode(cls(key="k", value=member))
        reply = orjson.dumps(_as_sent_back({"Items": [item]}))
        assert info.codec.decode(item).value is member
        assert info.codec.decode(orjson.loads(reply)["Items"][0]).value is member
        wire = local.parser("Query")(reply)["Items"][0]
        assert info.codec.decode(wire).value is member


def test_a_stored_value_of_no_member_is_a_codec_error() -> None:
    info = MODELS[repr(Answer)]
    item = info.encode(info.cls(key="k", value=Answer.YES))
    item["value"] = {"S": "True"}
    with pytest.raises(
        CodecError, match=r"field 'value': Answer\) holds .*'True' is not a value of Answer"
    ):
        info.decode(item)


# -- what cannot read back is refused where it is declared ----------------------------------------


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (set[str] | None, r"set\[str\] \| None cannot be stored: .*declare set\[str\]"),
        (frozenset[int] | None, r"frozenset\[int\] \| None cannot be stored"),
        (list[set[bytes] | None], r"set\[bytes\] \| None cannot be stored"),
        (Nothing | None, r"Nothing\.NONE has the value None, .*give that member another value"),
    ],
)
def test_types_that_cannot_read_back_are_refused_at_declaration(tp: Any, message: str) -> None:
    cls = attrs.make_class("Refused", {"key": attrs.field(type=str), "value": attrs.field(type=tp)})
    with pytest.raises(DefinitionError, match=rf"Refused\.value: {message}"):
        Table("refused", pk="PK", sk="SK").model(pk="R#{key}", sk="R")(cls)


@pytest.mark.parametrize("text", ["!!", "YQ", "YQ==\n", "äÄ=="])
def test_binary_text_that_is_not_base64_is_refused_naming_the_field(text: str) -> None:
    info = MODELS[repr(bytes)]
    item = {"PK": {"S": "T5#k"}, "SK": {"S": "VALUE"}, "key": {"S": "k"}, "value": {"B": text}}
    with pytest.raises(CodecError, match=r"field 'value': .* is not base64 text"):
        info.decode(item)
    body = orjson.dumps({"Items": [item]})
    with pytest.raises(CodecError, match=r"field 'value': .* is not base64 text"):
        info.decode(table.parser("Query")(body)["Items"][0])


# -- values kept only inside keys -----------------------------------------------------------------


class Kind(enum.Enum):
    TEXT_ONE = "1"
    ONE = 1


@pytest.mark.parametrize(
    ("tp", "values"),
    [(Answer, list(Answer)), (Ratio, list(Ratio)), (Level, list(Level)), (bool, [True, False])],
)
def test_a_key_only_field_reads_back_from_its_key(tp: Any, values: list[Any]) -> None:
    local = Table("key-only", pk="PK", sk="SK")
    fields = {"key": attrs.field(type=str), "value": dynorm.field(key_only=True)}
    cls = attrs.make_class("Keyed", fields)
    cls.__annotations__["value"] = tp
    attrs.resolve_types(cls)
    local.model(pk="K#{key}", sk="V#{value}")(cls)
    info: Any = info_of(cls)
    for value in values:
        item = info.encode(cls(key="k", value=value))
        assert "value" not in item
        assert info.decode(item).value is value


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (Kind, r"Kind\.TEXT_ONE \('1'\) and Kind\.ONE \(1\) are both written as '1' in a key"),
        (Blob, r"Blob\.A: a bytes value cannot be part of a key"),
        (Rgb, r"Rgb\.RED: a tuple value cannot be part of a key"),
    ],
)
def test_an_enum_a_key_cannot_tell_apart_is_refused_in_a_template(tp: Any, message: str) -> None:
    cls = attrs.make_class("InKey", {"key": attrs.field(type=str), "value": attrs.field(type=tp)})
    with pytest.raises(DefinitionError, match=rf"InKey\.value: {message}"):
        Table("in-key", pk="PK", sk="SK").model(pk="K#{key}", sk="V#{value}")(cls)
