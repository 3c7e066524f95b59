"""Generated per-model encoders (``dynorm.core.codec.encoders``): the cattrs walk's items, inline.

The walk (``ModelCodec.encode_walk``) is the reference: for every value, the generated function
gives the same item (same keys in the same order, same AttributeValues) or refuses it too, and
``ModelCodec.encode`` raises the walk's error, which names the field.
"""

import datetime
import decimal
import linecache
import uuid
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dynorm
from dynorm import CodecError
from dynorm.core.codec import converter as codec_module
from dynorm.core.codec import model_codec, typeforms
from dynorm.core.codec.model_codec import build_codec
from dynorm.core.fields import NAME_KEY
from tests.unit import test_codec as reference

Address = reference.Address


@attrs.define
class Inner:
    label: str = dynorm.field(name="Label")
    weight: float = 0.5
    hidden: int = attrs.field(init=False, default=7)  # not stored, as cattrs does


FIELD_TYPES: list[Any] = [
    *reference.FIELD_TYPES,
    uuid.UUID,
    datetime.time,
    reference.Code,
    reference.Ratio,
    str | None,
    decimal.Decimal | None,
    tuple[int, ...],
    list[list[int]],
    list[str | None],
    dict[str, Address],
    dict[str, Any],
    set[int],
    set[bytes],
    list[str] | None,
    Inner,
    list[Inner],
    Any,
]


def _holder(tp: Any) -> type:
    # Fields around the one under test, so key order and neighbours are checked too.
    return attrs.make_class(
        "Holder",
        {
            "before": attrs.field(type=str, default="b"),
            "value": attrs.field(type=tp, kw_only=True, metadata={NAME_KEY: "Value"}),
            "after": attrs.field(type=int, default=1),
        },
    )


HOLDERS = {tp: _holder(tp) for tp in FIELD_TYPES}
CODECS = {tp: build_codec(cls) for tp, cls in HOLDERS.items()}


def _generated(cls: type) -> Any:
    sets = [f.name for f in attrs.fields(cls) if typeforms._is_set(f.type)]
    return model_codec._generated_encoder(cls, {}, (), sets)


GENERATED = {tp: _generated(cls) for tp, cls in HOLDERS.items()}


def _outcome(encode: Any, obj: object) -> tuple[str, str]:
    """What encoding ``obj`` gives: the item's repr (order and types included), or the error."""
    try:
        return "item", repr(encode(obj))
    except Exception as exc:  # noqa: BLE001 - whatever it is, both paths must agree
        return "error", f"{type(exc).__name__}: {exc}"


#: Values of each type on their own as often as nested ones (``anything`` mostly nests).
leaves = st.one_of(
    st.binary(max_size=5),
    st.text(max_size=5),
    reference.storable_ints,
    st.integers(),
    reference.storable_floats,
    st.floats(),
    reference.storable_decimals,
    st.decimals(),
    st.booleans(),
    st.none(),
    st.dates(),
    st.datetimes(timezones=st.none() | st.timezones()),
    st.times(),
    st.uuids(),
    st.lists(st.text(max_size=3) | st.integers(-3, 3), max_size=3),
    st.frozensets(st.text(max_size=3), max_size=3),
    st.sets(st.integers(-(10**40), 10**40) | st.binary(max_size=2), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-3, 3) | st.text(max_size=3), max_size=3),
)
values = (
    leaves
    | reference.anything
    | st.sampled_from(
        [
            uuid.UUID(int=5),
            datetime.time(1, 2, 3),
            Inner("x"),
            [Inner("y", 2.0)],
            {"a": Address("s", 1)},
            "\ud800",  # no UTF-8 form: a str all the same, refused later by the item check
            float("nan"),
            1e300,
            -(10**40),
            decimal.Decimal("NaN"),
            set(),
            {1, 2},
            {b"a"},
            reference.Shade.DARK,
        ]
    )
)


@pytest.mark.parametrize("tp", FIELD_TYPES, ids=typeforms.type_text)
@settings(max_examples=80)
@given(value=values)
def test_the_generated_encoder_agrees_with_the_walk(tp: Any, value: Any) -> None:
    obj = HOLDERS[tp](value=value)
    walk = _outcome(CODECS[tp].encode_walk, obj)
    generated = _outcome(GENERATED[tp], obj)
    if generated[0] == "error":
        assert walk[0] == "error"  # it refuses exactly what the walk refuses, explaining nothing
    else:
        assert generated == walk
    # And the codec's encode gives the walk's item, or its error naming the field.
    assert _outcome(CODECS[tp].encode, obj) == walk


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (int, "3", r"Holder\.value \(int\): '3' is a str, not an int"),
        (list[str], ["a", 5], r"Holder\.value\[1\] \(str\): 5 is an int, not a str"),
        (dict[str, Address], {"k": Address("s", "7")}, r"Holder\.value\.k\.number"),  # type: ignore[arg-type]
        (list[Inner], [Inner(5)], r"Holder\.value\[0\]\.label \(str\): 5 is an int"),  # type: ignore[arg-type]
        (float, float("inf"), r"Holder\.value \(float\): DynamoDB numbers cannot be inf"),
        (set[int], {1, "a"}, r"Holder\.value member 'a' \(int\)"),
    ],
)
def test_refusals_name_the_field_and_the_path(tp: Any, value: object, message: str) -> None:
    cls = _holder(tp)
    with pytest.raises(CodecError, match=message):
        build_codec(cls).encode(cls(value=value))


def _source_of(cls: type) -> str:
    keys = [k for k in linecache.cache if f"encoder {cls.__module__}.{cls.__qualname__} " in k]
    return "".join(linecache.getlines(keys[-1]))


def test_common_types_are_inlined_and_the_source_is_kept_for_tracebacks() -> None:
    @attrs.define
    class Line:
        sku: str
        qty: int
        tags: list[str]
        inner: Inner

    build_codec(Line).encode  # noqa: B018 - generated on first use
    source = _source_of(Line)
    assert "i['sku'] = ({\"S\": v} if type(v) is str else" in source
    assert "for e" in source  # list[str] as a comprehension
    assert "__encode" in source  # the nested class through its own generated function
    assert "'Label'" in _source_of(Inner)  # stored names


def test_a_hook_registered_by_the_user_is_called() -> None:
    class Money:
        def __init__(self, cents: int) -> None:
            self.cents = cents

    @attrs.define
    class Box:
        label: str

    @attrs.define
    class Priced:
        price: Money
        box: Box  # a hook for an attrs class replaces its generated function too
        boxes: list[Box]

    converter = codec_module.converter
    converter.register_unstructure_hook(Money, lambda v: {"N": str(v.cents)})
    converter.register_structure_hook(Money, lambda v, _: Money(int(v["N"])))
    converter.register_unstructure_hook(Box, lambda v: {"S": v.label})
    converter.register_structure_hook(Box, lambda v, _: Box(v["S"]))
    codec = build_codec(Priced)
    assert codec.encode(Priced(Money(150), Box("x"), [Box("y")])) == {
        "price": {"N": "150"},
        "box": {"S": "x"},
        "boxes": {"L": [{"S": "y"}]},
    }


def test_key_only_fields_are_checked_but_not_stored_and_empty_sets_left_out() -> None:
    @attrs.define
    class Member:
        group: str
        member_id: str = dynorm.field(key_only=True)
        roles: set[str] = attrs.Factory(set)
        maybe: list[str] | None = None

    codec = build_codec(Member)
    assert codec.encode(Member("g", "m1")) == {"group": {"S": "g"}, "maybe": {"NULL": True}}
    assert codec.encode(Member("g", "m1", {"b", "a"})) == {
        "group": {"S": "g"},
        "roles": {"SS": ["a", "b"]},
        "maybe": {"NULL": True},
    }
    with pytest.raises(CodecError, match=r"Member\.member_id \(str\): 5 is an int"):
        codec.encode(Member("g", 5))  # type: ignore[arg-type]


def test_a_class_that_holds_itself_is_encoded_by_its_hook_below_the_first_level() -> None:
    @attrs.define
    class Node:
        name: str
        children: list["Node"] = attrs.Factory(list)

    attrs.resolve_types(Node, localns={"Node": Node})
    tree = Node("a", [Node("b", [Node("c")])])
    encode = model_codec._generated_encoder(Node, {}, (), ())
    assert encode(tree) == codec_module.converter.get_unstructure_hook(Node)(tree)["M"]


@settings(max_examples=60)
@given(label=values, weight=values)
def test_value_encoders_agree_with_the_hook(label: Any, weight: Any) -> None:
    # Embedded children are encoded one by one through these.
    value = Inner(label, weight)
    hook = codec_module.converter.get_unstructure_hook(Inner)
    assert _outcome(model_codec.value_encoder(Inner), value) == _outcome(hook, value)


def test_a_value_encoder_leaves_a_users_hook_alone() -> None:
    @attrs.define
    class Tag:
        text: str

    codec_module.converter.register_unstructure_hook(Tag, lambda v: {"S": v.text})
    assert model_codec.value_encoder(Tag)(Tag("x")) == {"S": "x"}
