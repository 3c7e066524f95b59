"""Generated per-model decoders (``core.codec.decoders``): inline where safe, else cattrs hooks."""

import decimal
import linecache
from typing import Any

import attrs
import cattrs

from dynorm.core.codec.converter import make_converter
from dynorm.core.codec.decoders import generate_decoder
from dynorm.core.codec.model_codec import build_codec
from dynorm.core.codec.rules import _INLINE_HELPERS, INLINE_STRUCTURE

CONVERTER = make_converter()


@attrs.define
class Inner:
    label: str
    weight: float


@attrs.define
class Outer:
    name: str
    count: int
    price: decimal.Decimal
    flag: bool
    tags: list[str]
    inner: Inner
    nested: list[Inner]
    note: str = "none"
    extras: list[int] = attrs.Factory(list)
    kinds: set[str] = attrs.Factory(set)


ITEM: dict[str, dict[str, Any]] = {
    "name": {"S": "n"},
    "count": {"N": "3"},
    "price": {"N": "1.10"},
    "flag": {"BOOL": True},
    "tags": {"L": [{"S": "a"}, {"S": "b"}]},
    "inner": {"M": {"label": {"S": "x"}, "weight": {"N": "0.5"}}},
    "nested": {"L": [{"M": {"label": {"S": "y"}, "weight": {"N": "2"}}}]},
}


def _source_of(cls: type) -> str:
    keys = [k for k in linecache.cache if f"decoder {cls.__module__}.{cls.__qualname__} " in k]
    lines = linecache.getlines(keys[-1])  # the newest, if built more than once
    return "".join(lines)


def test_decoder_reads_every_field_and_defaults() -> None:
    decoded = build_codec(Outer).decode(ITEM)
    assert decoded == Outer(
        "n",
        3,
        decimal.Decimal("1.10"),
        flag=True,
        tags=["a", "b"],
        inner=Inner("x", 0.5),
        nested=[Inner("y", 2.0)],
    )
    assert decoded.extras == []
    assert decoded.kinds == set()


def test_common_types_are_inlined_and_the_source_is_kept_for_tracebacks() -> None:
    build_codec(Outer).decode  # noqa: B018 - generated on first use
    source = _source_of(Outer)
    assert "o['name'][\"S\"]" in source
    assert "int(o['count'][\"N\"])" in source
    assert "for e" in source  # list[str] as a comprehension, no hook call per element
    assert "__hook" not in source.split("nested")[0]  # everything before `nested` is inline


def test_a_factory_default_is_called_per_object() -> None:
    codec = build_codec(Outer)
    first, second = codec.decode(ITEM), codec.decode(ITEM)
    first.extras.append(1)
    assert second.extras == []


def test_a_users_hook_is_honoured_instead_of_inlining() -> None:
    converter = make_converter()
    converter.register_structure_hook(str, lambda v, _: v["S"].upper())

    @attrs.define
    class Shout:
        word: str

    decode = generate_decoder(Shout, converter, inline=INLINE_STRUCTURE, helpers=_INLINE_HELPERS)
    assert decode({"word": {"S": "hi"}}) == Shout("HI")


def test_keyword_only_and_self_taking_defaults() -> None:
    @attrs.define(kw_only=True)
    class Kw:
        a: str
        b: str = attrs.field(default=attrs.Factory(lambda self: self.a + "!", takes_self=True))

    codec = build_codec(Kw)
    assert codec.decode({"a": {"S": "x"}}) == Kw(a="x", b="x!")
    assert codec.decode({"a": {"S": "x"}, "b": {"S": "y"}}) == Kw(a="x", b="y")


def test_the_converter_is_a_cattrs_converter() -> None:
    assert isinstance(CONVERTER, cattrs.Converter)
