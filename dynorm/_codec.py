"""DynamoDB AttributeValues <-> Python values, through one configured cattrs converter.

The converter's hooks read and write AttributeValue dicts directly (``{"S": "x"}``), so cattrs
generates, once per model, a function that builds the attrs instance straight from an item: no
intermediate plain-Python dict and no per-item reflection.

Numbers stay exact: ``int`` and ``Decimal`` fields round-trip every digit DynamoDB keeps (38), and
a ``float`` field stores ``repr(value)``, the shortest text that reads back to the same float.
"""

from __future__ import annotations

import base64
import collections.abc
import datetime
import decimal
import enum
import functools
import math
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from ._decoders import LIST_HOOK_MARK, NESTED_HOOK_MARK, generate_decoder
from ._errors import CodecError, DefinitionError

__all__ = [
    "AttributeValue",
    "Item",
    "decode_any",
    "encode_any",
    "make_converter",
]

AttributeValue = dict[str, Any]
Item = dict[str, AttributeValue]

_NULL: Final = {"NULL": True}


# -- generic values (fields typed Any, dict[str, Any], condition operands) -------------------------


def _number(text: str) -> int | decimal.Decimal:
    try:
        return int(text)
    except ValueError:
        return decimal.Decimal(text)


def _binary(value: bytes | str) -> bytes:
    # botocore hands over bytes; a raw JSON body carries base64 text.
    return base64.b64decode(value) if isinstance(value, str) else value


def decode_any(av: AttributeValue) -> Any:
    """Any AttributeValue as its natural Python value (N: int when integral, else Decimal)."""
    ((tag, value),) = av.items()
    if tag in {"S", "BOOL"}:
        return value
    if tag == "N":
        return _number(value)
    if tag == "M":
        return {k: decode_any(v) for k, v in value.items()}
    if tag == "L":
        return [decode_any(v) for v in value]
    if tag == "NULL":
        return None
    if tag == "SS":
        return set(value)
    if tag == "NS":
        return {_number(v) for v in value}
    if tag == "B":
        return _binary(value)
    if tag == "BS":
        return {_binary(v) for v in value}
    raise CodecError(f"unknown DynamoDB type tag {tag!r}")


def _float_text(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise CodecError(f"DynamoDB numbers cannot be {value!r}; store None or a sentinel instead")
    return float.__repr__(value)  # not repr(): a float-valued Enum member reprs as "<E.A: 0.5>"


def _decimal_text(value: decimal.Decimal) -> str:
    if not value.is_finite():
        raise CodecError(f"DynamoDB numbers cannot be {value!r}; store None or a sentinel instead")
    return str(value)


def encode_any(value: object) -> AttributeValue:
    """The AttributeValue for a Python value, chosen by its runtime type."""
    if value is None:
        return _NULL
    if isinstance(value, enum.Enum):
        # First: str() of an (int, Enum) member is "Code.OK", not its value.
        return encode_any(value.value)
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, decimal.Decimal):
        return {"N": _decimal_text(value)}
    if isinstance(value, float):
        return {"N": _float_text(value)}
    if isinstance(value, bytes | bytearray):
        return {"B": bytes(value)}
    if isinstance(value, datetime.date | datetime.time):
        return {"S": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {"S": str(value)}
    if attrs.has(type(value)):
        return {
            "M": {
                k: encode_any(v) for k, v in attrs.asdict(cast("Any", value), recurse=False).items()
            }
        }
    if isinstance(value, Mapping):
        return {"M": {str(k): encode_any(v) for k, v in value.items()}}
    if isinstance(value, set | frozenset):
        return _encode_set(value)
    if isinstance(value, list | tuple):
        return {"L": [encode_any(v) for v in value]}
    raise CodecError(f"cannot store a {type(value).__name__} in DynamoDB")


def _encode_set(value: collections.abc.Set[Any]) -> AttributeValue:
    if not value:
        return _NULL  # DynamoDB has no empty sets; NULL reads back as an empty set
    kinds = {_set_kind(v) for v in value}
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind == "SS":
            return {"SS": sorted(value)}
        if kind == "BS":
            return {"BS": sorted(value)}
        if kind == "NS":
            return {"NS": sorted(encode_any(v)["N"] for v in value)}
    names = sorted({type(v).__name__ for v in value})
    raise CodecError(
        f"DynamoDB sets hold only strings, only numbers or only bytes, not {', '.join(names)}"
    )


def _set_kind(value: object) -> str | None:
    if isinstance(value, str):
        return "SS"
    if isinstance(value, bytes):
        return "BS"
    if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
        return "NS"
    return None


# -- typed hooks ---------------------------------------------------------------------------------

_NONE_TYPE: Final = type(None)


def _optional_inner(tp: object) -> object | None:
    """``X`` for ``X | None`` (``Optional[X]``), else None."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not _NONE_TYPE]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            inner: object = args[0]
            return inner
    return None


def _origin(tp: object) -> object:
    return typing.get_origin(tp) or tp


_LIST_ORIGINS: Final = (list, tuple, collections.abc.Sequence, collections.abc.MutableSequence)
_SET_ORIGINS: Final = (set, frozenset, collections.abc.Set, collections.abc.MutableSet)
_MAP_ORIGINS: Final = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def _is_list(tp: object) -> bool:
    return _origin(tp) in _LIST_ORIGINS


def _is_set(tp: object) -> bool:
    return _origin(tp) in _SET_ORIGINS


def _is_map(tp: object) -> bool:
    return _origin(tp) in _MAP_ORIGINS


def _is_enum(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _element(tp: object, index: int = 0) -> object:
    args = typing.get_args(tp)
    if not args or args[index] is Ellipsis:
        return Any
    return args[index]


def _tuple_items(tp: object) -> tuple[object, ...] | None:
    """The element types of a fixed-length tuple (``tuple[str, int]``), else None."""
    args = typing.get_args(tp)
    if _origin(tp) is not tuple or not args or Ellipsis in args:
        return None
    return args


def _configure_tuples(c: cattrs.Converter) -> None:
    """Fixed-length tuples: each position has its own type (``tuple[str, int]`` is no list).

    Registered after the list hooks, so these factories win for the tuples they accept.
    """

    def structure(tp: object) -> Callable[[AttributeValue, object], object]:
        hooks = [(c.get_structure_hook(t), t) for t in _tuple_items(tp) or ()]
        return lambda v, _: tuple([h(x, t) for (h, t), x in zip(hooks, v["L"], strict=True)])

    def unstructure(tp: object) -> Callable[[Any], AttributeValue]:
        hooks = [c.get_unstructure_hook(t) for t in _tuple_items(tp) or ()]
        return lambda v: {"L": [h(x) for h, x in zip(hooks, v, strict=True)]}

    def is_fixed(tp: object) -> bool:
        return _tuple_items(tp) is not None

    c.register_structure_hook_factory(is_fixed, structure)
    c.register_unstructure_hook_factory(is_fixed, unstructure)


@functools.cache
def _enum_structure(tp: type[enum.Enum]) -> Callable[[AttributeValue, object], enum.Enum]:
    by_text = {encode_any(m.value).get("S", encode_any(m.value).get("N")): m for m in tp}

    def structure(v: AttributeValue, _: object) -> enum.Enum:
        text = v["S"] if "S" in v else v["N"]
        try:
            return by_text[text]
        except KeyError:
            raise CodecError(f"{text!r} is not a value of {tp.__name__}") from None

    return structure


def _scalar_structure(base: type, tag: str) -> Callable[[AttributeValue, object], object]:
    # cattrs dispatches on str/int/float by class (subclasses included) before any factory, so
    # `class Code(int, Enum)` and IntEnum/StrEnum fields arrive here too: hand them on.
    def structure(v: AttributeValue, tp: object) -> object:
        if tp is base:
            return base(v[tag])
        if _is_enum(tp):
            return _enum_structure(cast("type[enum.Enum]", tp))(v, tp)
        return cast("type", tp)(base(v[tag]))

    return structure


def _structure_bool(v: AttributeValue, _: object) -> bool:
    return bool(v["BOOL"])


def _structure_decimal(v: AttributeValue, _: object) -> decimal.Decimal:
    return decimal.Decimal(v["N"])


def _structure_bytes(v: AttributeValue, _: object) -> bytes:
    return _binary(v["B"])


_INLINE_HELPERS: Final = {"__Decimal": decimal.Decimal, "__binary": _binary}
_STRUCTURE_STR: Final = _scalar_structure(str, "S")
_STRUCTURE_INT: Final = _scalar_structure(int, "N")
_STRUCTURE_FLOAT: Final = _scalar_structure(float, "N")

#: The default hooks whose work the generated decoders write inline, as expression templates
#: (``{v}`` is the AttributeValue). A hook a user registers instead is called as usual.
INLINE_STRUCTURE: Final[Mapping[type, tuple[object, str]]] = {
    str: (_STRUCTURE_STR, '{v}["S"]'),
    bool: (_structure_bool, '{v}["BOOL"]'),
    int: (_STRUCTURE_INT, 'int({v}["N"])'),
    float: (_STRUCTURE_FLOAT, 'float({v}["N"])'),
    decimal.Decimal: (_structure_decimal, '__Decimal({v}["N"])'),
    bytes: (_structure_bytes, '__binary({v}["B"])'),
}


def _configure_structure(c: cattrs.Converter) -> None:
    c.register_structure_hook(str, _STRUCTURE_STR)
    c.register_structure_hook(bool, _structure_bool)
    c.register_structure_hook(int, _STRUCTURE_INT)
    c.register_structure_hook(float, _STRUCTURE_FLOAT)
    c.register_structure_hook(decimal.Decimal, _structure_decimal)
    c.register_structure_hook(bytes, _structure_bytes)
    c.register_structure_hook(uuid.UUID, lambda v, _: uuid.UUID(v["S"]))
    c.register_structure_hook(
        datetime.datetime, lambda v, _: datetime.datetime.fromisoformat(v["S"])
    )
    c.register_structure_hook(datetime.date, lambda v, _: datetime.date.fromisoformat(v["S"]))
    c.register_structure_hook(datetime.time, lambda v, _: datetime.time.fromisoformat(v["S"]))
    c.register_structure_hook_func(lambda t: t is Any, lambda v, _: decode_any(v))

    c.register_structure_hook_factory(_is_enum, _enum_structure)

    def optional_hook(tp: object) -> Callable[[AttributeValue, object], object]:
        inner = c.get_structure_hook(_optional_inner(tp))
        inner_tp = _optional_inner(tp)
        return lambda v, _: None if "NULL" in v else inner(v, inner_tp)

    def list_hook(tp: object) -> Callable[[AttributeValue, object], object]:
        el_tp = _element(tp)
        el = c.get_structure_hook(el_tp)
        if _origin(tp) is tuple:
            return lambda v, _: tuple([el(x, el_tp) for x in v["L"]])

        def structure_list(v: AttributeValue, _: object) -> list[Any]:
            return [el(x, el_tp) for x in v["L"]]

        setattr(structure_list, LIST_HOOK_MARK, True)  # generated decoders may inline it
        return structure_list

    def set_hook(tp: object) -> Callable[[AttributeValue, object], object]:
        el_tp = _element(tp)
        make = frozenset if _origin(tp) is frozenset else set
        if el_tp is str:
            conv: Callable[[Any], object] = str
            tag = "SS"
        elif el_tp is bytes:
            conv, tag = _binary, "BS"
        elif el_tp in (int, float, decimal.Decimal):
            conv, tag = el_tp, "NS"
        else:
            raise DefinitionError(
                f"{tp!r}: DynamoDB sets hold str, bytes, int, float or Decimal; use a list"
            )
        return lambda v, _: make() if "NULL" in v else make(conv(x) for x in v[tag])

    def map_hook(tp: object) -> Callable[[AttributeValue, object], object]:
        if _element(tp) not in (str, Any):
            raise DefinitionError(f"{tp!r}: DynamoDB map keys are strings; use dict[str, ...]")
        val_tp = _element(tp, 1)
        val = c.get_structure_hook(val_tp)
        return lambda v, _: {k: val(x, val_tp) for k, x in v["M"].items()}

    def nested_hook(tp: type) -> Callable[[AttributeValue, object], object]:
        build: Callable[[Any, Any], object] = make_dict_structure_fn(tp, c)

        def structure_nested(v: AttributeValue, _: object) -> object:
            return build(v["M"], tp)

        setattr(structure_nested, NESTED_HOOK_MARK, True)  # generated decoders may inline it
        return structure_nested

    c.register_structure_hook_factory(lambda t: _optional_inner(t) is not None, optional_hook)
    c.register_structure_hook_factory(_is_list, list_hook)
    c.register_structure_hook_factory(_is_set, set_hook)
    c.register_structure_hook_factory(_is_map, map_hook)
    c.register_structure_hook_factory(attrs.has, nested_hook)


def _configure_unstructure(c: cattrs.Converter) -> None:
    # str.__str__/int.__repr__, not str(): these hooks also serve (str, Enum) and (int, Enum)
    # members, whose str() is "Code.OK" rather than their value. A wrong value (None in a str
    # field) passes through, for the key check or DynamoDB to report.
    c.register_unstructure_hook(str, lambda v: {"S": str.__str__(v) if isinstance(v, str) else v})
    c.register_unstructure_hook(bool, lambda v: {"BOOL": v})
    c.register_unstructure_hook(
        int, lambda v: {"N": int.__repr__(v) if isinstance(v, int) else str(v)}
    )
    c.register_unstructure_hook(float, lambda v: {"N": _float_text(v)})
    c.register_unstructure_hook(decimal.Decimal, lambda v: {"N": _decimal_text(v)})
    c.register_unstructure_hook(bytes, lambda v: {"B": v})
    c.register_unstructure_hook(uuid.UUID, lambda v: {"S": str(v)})
    c.register_unstructure_hook(datetime.datetime, lambda v: {"S": v.isoformat()})
    c.register_unstructure_hook(datetime.date, lambda v: {"S": v.isoformat()})
    c.register_unstructure_hook(datetime.time, lambda v: {"S": v.isoformat()})
    c.register_unstructure_hook_func(lambda t: t is Any, encode_any)
    c.register_unstructure_hook_factory(_is_enum, lambda _: lambda v: encode_any(v.value))

    def optional_hook(tp: object) -> Callable[[Any], AttributeValue]:
        inner = c.get_unstructure_hook(_optional_inner(tp))
        return lambda v: _NULL if v is None else inner(v)

    def list_hook(tp: object) -> Callable[[Any], AttributeValue]:
        el = c.get_unstructure_hook(_element(tp))
        return lambda v: {"L": [el(x) for x in v]}

    def map_hook(tp: object) -> Callable[[Any], AttributeValue]:
        val = c.get_unstructure_hook(_element(tp, 1))
        return lambda v: {"M": {k: val(x) for k, x in v.items()}}

    def nested_hook(tp: type) -> Callable[[Any], AttributeValue]:
        build: Callable[[Any], Item] = make_dict_unstructure_fn(tp, c)
        return lambda v: {"M": build(v)}

    c.register_unstructure_hook_factory(lambda t: _optional_inner(t) is not None, optional_hook)
    c.register_unstructure_hook_factory(_is_list, list_hook)
    c.register_unstructure_hook_factory(_is_set, lambda _: _encode_set)
    c.register_unstructure_hook_factory(_is_map, map_hook)
    c.register_unstructure_hook_factory(attrs.has, nested_hook)


def make_converter() -> cattrs.Converter:
    """A converter whose hooks turn AttributeValues into typed values and back."""
    converter = cattrs.Converter(detailed_validation=False)
    _configure_structure(converter)
    _configure_unstructure(converter)
    _configure_tuples(converter)
    return converter


#: The converter every model's codec is generated from. Users may register extra hooks on it
#: (``dynorm.converter.register_structure_hook(Money, ...)``) before declaring models.
converter: Final = make_converter()


@attrs.frozen
class ModelCodec:
    """The generated functions that turn one model's instances into items and back."""

    decode: Callable[[Mapping[str, AttributeValue]], Any]
    encode: Callable[[Any], Item]
    encode_field: Mapping[str, Callable[[Any], AttributeValue]]
    #: Set fields, which ``encode`` leaves out of the item while they are empty.
    sets: tuple[str, ...] = ()


def build_codec(cls: type) -> ModelCodec:
    """Generate the codec for an attrs class; fails early on field types DynamoDB cannot hold."""
    for field in attrs.fields(cls):
        # One field at a time, so the error can name the field to change.
        try:
            converter.get_structure_hook(field.type)
        except DefinitionError as exc:
            raise DefinitionError(f"{cls.__name__}.{field.name}: {exc}") from None
        except cattrs.errors.StructureHandlerNotFoundError as exc:
            raise DefinitionError(
                f"{cls.__name__}.{field.name}: cannot store {exc.type_!r} in DynamoDB; use str, "
                "int, float, Decimal, bool, bytes, date/datetime/time, UUID, an Enum, an attrs "
                "class, or lists/sets/dicts of those, or register hooks for it on "
                "dynorm.converter"
            ) from None
    sets = tuple(f.name for f in attrs.fields(cls) if _is_set(f.type))
    try:
        decode = generate_decoder(
            cls,
            converter,
            inline=INLINE_STRUCTURE,
            helpers=_INLINE_HELPERS,
            # An empty set field is left out of the item rather than stored as NULL: DynamoDB's
            # ADD refuses a NULL attribute, so `db.update(obj, add={"tags": {...}})` could never
            # fill it. It reads back empty.
            empty_when_missing={
                f.name: frozenset if _origin(f.type) is frozenset else set
                for f in attrs.fields(cls)
                if f.name in sets
            },
        )
        encode: Callable[[Any], Item] = make_dict_unstructure_fn(cls, converter)
        encode_field = {f.name: converter.get_unstructure_hook(f.type) for f in attrs.fields(cls)}
    except DefinitionError as exc:
        raise DefinitionError(f"{cls.__name__}: {exc}") from None
    if not sets:
        return ModelCodec(decode=decode, encode=encode, encode_field=encode_field)

    def encode_item(obj: Any) -> Item:
        item = encode(obj)
        for name in sets:
            if item[name] is _NULL:
                del item[name]
        return item

    return ModelCodec(decode=decode, encode=encode_item, encode_field=encode_field, sets=sets)


#: DynamoDB's item size limit.
MAX_ITEM_BYTES: Final = 400 * 1024


def _value_size(av: AttributeValue) -> int:
    ((tag, value),) = av.items()
    if tag == "S":
        return len(value.encode())
    if tag == "N":
        digits = len(value.lstrip("-").replace(".", "").lstrip("0")) or 1
        return (digits + 1) // 2 + 1
    if tag == "B":
        return len(_binary(value))
    if tag in {"BOOL", "NULL"}:
        return 1
    if tag == "M":
        return 3 + sum(len(k.encode()) + _value_size(v) + 1 for k, v in value.items())
    if tag == "L":
        return 3 + sum(_value_size(v) + 1 for v in value)
    if tag == "SS":
        return sum(len(v.encode()) for v in value)
    if tag == "NS":
        return sum(_value_size({"N": v}) for v in value)
    return sum(len(_binary(v)) for v in value)  # BS


def item_size(item: Mapping[str, AttributeValue]) -> int:
    """DynamoDB's size of an item in bytes, by its published rules (names count too)."""
    return sum(len(name.encode()) + _value_size(av) for name, av in item.items())
