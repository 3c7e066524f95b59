"""Models as JSON-ready values and back: ``dynorm.jsonable`` and ``dynorm.from_jsonable``.

What a web framework sends and receives. Each value kind has one representation, chosen so that
``from_jsonable(Model, jsonable(obj))`` gives back an equal object:

===========================  =========================================================
value                        JSON
===========================  =========================================================
str, int, bool, None         as is
float                        a number
Decimal                      a string of its exact digits (``"12.50"``); ``from_jsonable``
                             takes a string, an int, a Decimal (JSON read with
                             ``parse_float=Decimal``), or a float of at most 15 significant
                             digits (read as its shortest repr; a longer float is refused, as
                             its digits may not be the ones sent)
datetime, date, time         ISO 8601 text (``isoformat()``; an aware datetime keeps its offset)
UUID                         its text
bytes                        base64 text (standard alphabet, padded)
enum member                  its value, made JSON-ready the same way
list, tuple                  an array
set, frozenset               a sorted array
dict                         an object (keys as text)
attrs class (nested,         an object of its fields by field name (not the stored name),
embedded child)              recursively
model                        the same, plus each *loaded* relationship by its name: a HasMany
                             as an array of its children (what ``.loaded`` shows), a BelongsTo
                             as the parent object or null; relationships not loaded are left out
                             (embedded children too: they come inside the item, but show only
                             when the call loaded them, so the JSON is the same for every
                             strategy)
===========================  =========================================================

The conversion of each class is built once, on first use, from the field types dynorm resolved at
declaration (a table of per-field functions), not by looking at every value's type.
``from_jsonable`` checks every field and reports every problem at once (``InvalidDataError``,
each problem with its place, as ``users[0].username``); unknown keys are refused. Each model it
builds is then held to the checks ``db.put`` makes (:mod:`dynorm.mapping.storable`), so what it
returns can be stored.
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
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import attrs

from dynorm.core.codec.typeforms import is_attrs_type, resolved_fields, type_text
from dynorm.core.errors import DefinitionError, InvalidDataError, did_you_mean
from dynorm.core.requests import Page

from .model import ModelInfo, info_of, is_model, resolve_field_types
from .refusals import refusals
from .relations import BelongsToRelation, HasManyRelation, relationships_of
from .state import Loaded, bind, state_of
from .storable import storage_problems

__all__ = ["class_shape", "from_jsonable", "jsonable"]

T = TypeVar("T")

#: A place inside the data: field names and list positions.
Loc = tuple[str | int, ...]
Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]

_NONE_TYPE: Final = type(None)


class _InvalidError(Exception):
    """Problems found while reading data, each with its place (filled in on the way out)."""

    def __init__(self, problems: list[tuple[Loc, str]]) -> None:
        super().__init__(problems)
        self.problems = problems

    def at(self, step: str | int) -> _InvalidError:
        self.problems = [((step, *loc), text) for loc, text in self.problems]
        return self


def _bad(text: str) -> _InvalidError:
    return _InvalidError([((), text)])


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:48]}...{text[-8:]}"


def _json_kind(value: object) -> str:
    """A JSON value's kind as a client sees it: "a string", "a number", "an array"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | decimal.Decimal):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _wrong(value: object, wanted: str) -> _InvalidError:
    if value is None:
        return _bad(f"null is not {wanted}; the field does not allow null")
    return _bad(f"{_shown(value)} is {_json_kind(value)}, not {wanted}")


# -- values of any type (fields typed Any, dict values, enum values) ------------------------------


def _plain(value: object) -> Any:
    """Any value as JSON-ready data, by its own type (fields typed Any, enum values)."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, decimal.Decimal):
        return _decimal_text(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Page):
        return {"items": [_plain(v) for v in value.items], "cursor": value.cursor}
    if isinstance(value, Mapping):
        return {_key_text(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return [_plain(v) for v in _in_order(value)]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if attrs.has(type(value)):
        return _class_codec(type(value)).encode(value, set())
    raise TypeError(
        f"dynorm.jsonable cannot represent {_shown(value)} ({type(value).__name__}); give a "
        "model, an attrs instance, a list or a Page of them, or JSON-ready values"
    )


def _key_text(key: object) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, enum.Enum):
        return _key_text(key.value)
    return str(_plain(key))


def _in_order(values: collections.abc.Set[Any]) -> list[Any]:
    """A set's values in their own order (numbers numerically, text and bytes as such).

    Values that do not compare with each other (a set of mixed kinds) go by their repr.
    """
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=repr)


def _decimal_text(value: decimal.Decimal) -> str:
    return str(value)


# -- per-type codecs -----------------------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def _scalar(base: type, wanted: str) -> tuple[Encode, Decode]:
    def decode(value: Any) -> Any:
        if type(value) is base:
            return value
        raise _wrong(value, wanted)

    return _identity, decode


# JSON parsed with ``parse_float=Decimal`` (to read numbers exactly) gives Decimals where
# ``json.loads`` gives floats: number fields take them as they take floats.


def _int_decode(value: Any) -> int:
    if type(value) is int:
        return value
    if type(value) is float and value.is_integer():
        return int(value)
    if type(value) is decimal.Decimal and value.is_finite() and value == value.to_integral_value():
        return int(value)
    raise _wrong(value, "an integer")


def _float_decode(value: Any) -> float:
    if type(value) in (int, float, decimal.Decimal):
        return float(value)
    raise _wrong(value, "a number")


def _decimal_decode(value: Any) -> decimal.Decimal:
    if type(value) is str:
        try:
            found = decimal.Decimal(value)
        except decimal.InvalidOperation:
            raise _bad(f"{_shown(value)} is not a decimal number") from None
        if not found.is_finite():
            raise _bad(f"{_shown(value)} is not a finite decimal number")
        return found
    if type(value) is int:
        return decimal.Decimal(value)
    if type(value) is float:
        return _decimal_of_float(value)
    if type(value) is decimal.Decimal:  # a JSON number read exactly
        if not value.is_finite():
            raise _bad(f"{_shown(value)} is not a finite decimal number")
        return value
    raise _wrong(value, "a decimal number (a string of its digits, or a number)")


#: The significant digits a float gives back as sent: every decimal number of at most this many
#: digits parses to a float whose shortest form is those digits (C's DBL_DIG).
_FLOAT_DIGITS: Final = 15


def _decimal_of_float(value: float) -> decimal.Decimal:
    """The Decimal a JSON number read as a float (``json.loads``, as FastAPI does) was sent as.

    Only a float of at most _FLOAT_DIGITS significant digits says which digits were sent; a
    longer one may be another number's nearest float (``12345678901234567890.123456789``
    arrives as ``1.2345678901234567e+19``), so it is refused rather than stored changed.
    """
    if not math.isfinite(value):
        raise _bad(
            f"{value!r} is not a finite decimal number (a JSON number too large for a float "
            "arrives as inf); send the decimal as a string of its digits"
        )
    found = decimal.Decimal(repr(value))
    significant = len(bytes(found.as_tuple().digits).rstrip(b"\0"))  # "100.0" has 1
    if significant > _FLOAT_DIGITS:
        raise _bad(
            f"{value!r} came as a JSON number read through a float, which keeps "
            f"{_FLOAT_DIGITS} significant digits exactly; this one has more, so its digits may "
            'not be the ones sent: send the decimal as a string of its digits ("12.50")'
        )
    return found


def _bytes_decode(value: Any) -> bytes:
    if type(value) is not str:
        raise _wrong(value, "base64 text")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise _bad(f"{_shown(value)} is not base64 text") from None


def _iso(parse: Callable[[str], Any], wanted: str) -> tuple[Encode, Decode]:
    def encode(value: Any) -> Any:
        return value.isoformat()

    def decode(value: Any) -> Any:
        if type(value) is not str:
            raise _wrong(value, wanted)
        try:
            found = parse(value)
        except ValueError:
            raise _bad(f"{_shown(value)} is not {wanted}") from None
        return found

    return encode, decode


def _uuid_decode(value: Any) -> uuid.UUID:
    if type(value) is not str:
        raise _wrong(value, "a UUID (text)")
    try:
        return uuid.UUID(value)
    except ValueError:
        raise _bad(f"{_shown(value)} is not a UUID") from None


_SCALARS: Final[dict[object, tuple[Encode, Decode]]] = {
    str: _scalar(str, "a string"),
    bool: _scalar(bool, "a boolean"),
    int: (_identity, _int_decode),
    float: (_identity, _float_decode),
    decimal.Decimal: (_decimal_text, _decimal_decode),
    bytes: (lambda v: base64.b64encode(v).decode("ascii"), _bytes_decode),
    datetime.datetime: _iso(datetime.datetime.fromisoformat, "an ISO 8601 date and time"),
    datetime.date: _iso(datetime.date.fromisoformat, "an ISO 8601 date"),
    datetime.time: _iso(datetime.time.fromisoformat, "an ISO 8601 time"),
    uuid.UUID: (str, _uuid_decode),
    Any: (_plain, _identity),
    _NONE_TYPE: (_identity, lambda v: v if v is None else _raise(_wrong(v, "null"))),
}


def _raise(exc: Exception) -> Any:
    raise exc


def _enum_codec(tp: type[enum.Enum]) -> tuple[Encode, Decode]:
    members = [(_plain(m.value), m) for m in tp]
    names = ", ".join(repr(v) for v, _ in members)

    def encode(value: Any) -> Any:
        return _plain(value.value)

    def decode(value: Any) -> Any:
        for data, member in members:
            if data == value and type(data) is type(value):
                return member
        raise _bad(f"{_shown(value)} is not one of {tp.__name__}'s values ({names})")

    return encode, decode


def _literal_codec(tp: object) -> tuple[Encode, Decode]:
    values = typing.get_args(tp)
    allowed = [(_plain(v), v) for v in values]
    names = ", ".join(repr(v) for v, _ in allowed)

    def decode(value: Any) -> Any:
        for data, literal in allowed:
            if data == value and type(data) is type(value):
                return literal
        raise _bad(f"{_shown(value)} is not one of {names}")

    return _plain, decode


def _union_codec(tp: object) -> tuple[Encode, Decode]:
    args = typing.get_args(tp)
    others = [a for a in args if a is not _NONE_TYPE]
    if len(others) == 1:
        inner_encode, inner_decode = codec_for(others[0])

        def encode(value: Any) -> Any:
            return None if value is None else inner_encode(value)

        def decode(value: Any) -> Any:
            return None if value is None else inner_decode(value)

        return encode, decode
    codecs = [codec_for(a) for a in args]
    wanted = type_text(tp)

    def decode_any(value: Any) -> Any:
        for _, each in codecs:
            try:
                return each(value)
            except _InvalidError:
                continue
        raise _bad(f"{_shown(value)} is no value of {wanted}")

    return _plain, decode_any


def _list_codec(tp: object, origin: object) -> tuple[Encode, Decode]:
    args = typing.get_args(tp)
    fixed = origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis)
    if fixed:
        codecs = [codec_for(a) for a in args]

        def encode_fixed(value: Any) -> Any:
            return [enc(v) for (enc, _), v in zip(codecs, value, strict=True)]

        def decode_fixed(value: Any) -> Any:
            if not isinstance(value, list | tuple):
                raise _wrong(value, f"an array of {len(codecs)} values")
            if len(value) != len(codecs):
                raise _bad(f"{len(value)} values given; {type_text(tp)} holds {len(codecs)}")
            return tuple(_each(value, [dec for _, dec in codecs]))

        return encode_fixed, decode_fixed
    element_encode, element_decode = codec_for(args[0] if args else Any)
    build: Callable[[list[Any]], Any] = tuple if origin is tuple else list

    def encode(value: Any) -> Any:
        return [element_encode(v) for v in value]

    def decode(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong(value, "an array")
        return build(_each(value, [element_decode] * len(value)))

    return encode, decode


def _each(values: Sequence[Any], decoders: Sequence[Decode]) -> list[Any]:
    """Each value decoded, every problem kept with its position."""
    found: list[Any] = []
    problems: list[tuple[Loc, str]] = []
    for i, (value, decode) in enumerate(zip(values, decoders, strict=True)):
        try:
            found.append(decode(value))
        except _InvalidError as exc:
            problems += exc.at(i).problems
    if problems:
        raise _InvalidError(problems)
    return found


def _set_codec(tp: object, origin: object) -> tuple[Encode, Decode]:
    args = typing.get_args(tp)
    element_encode, element_decode = codec_for(args[0] if args else Any)
    build: Callable[[list[Any]], Any] = frozenset if origin is frozenset else set

    def encode(value: Any) -> Any:
        return [element_encode(v) for v in _in_order(value)]

    def decode(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise _wrong(value, "an array")
        return build(_each(value, [element_decode] * len(value)))

    return encode, decode


def _map_codec(tp: object) -> tuple[Encode, Decode]:
    args = typing.get_args(tp)
    key_tp, value_tp = (args[0], args[1]) if len(args) == 2 else (str, Any)
    value_encode, value_decode = codec_for(value_tp)
    key_decode = _key_decoder(key_tp)

    def encode(value: Any) -> Any:
        return {_key_text(k): value_encode(v) for k, v in value.items()}

    def decode(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _wrong(value, "an object")
        found: dict[Any, Any] = {}
        problems: list[tuple[Loc, str]] = []
        for k, v in value.items():
            try:
                found[key_decode(k)] = value_decode(v)
            except _InvalidError as exc:
                problems += exc.at(str(k)).problems
        if problems:
            raise _InvalidError(problems)
        return found

    return encode, decode


def _key_decoder(tp: object) -> Decode:
    if tp in (str, Any):
        return _identity
    if tp is int:

        def int_key(text: Any) -> int:
            try:
                return int(text)
            except ValueError:
                raise _bad(f"the key {_shown(text)} is not an integer") from None

        return int_key
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        by_text = {_key_text(m): m for m in tp}

        def enum_key(text: Any) -> Any:
            try:
                return by_text[text]
            except KeyError:
                raise _bad(f"the key {_shown(text)} is not one of {tp.__name__}'s") from None

        return enum_key
    _, decode = codec_for(tp)
    return decode


_CODECS: dict[object, tuple[Encode, Decode]] = {}


def codec_for(tp: object) -> tuple[Encode, Decode]:
    """How values of type ``tp`` become JSON-ready data and back; built once per type."""
    try:
        return _CODECS[tp]
    except KeyError:
        pass
    except TypeError:  # an unhashable annotation
        return _build(tp)
    found = _build(tp)
    if not _names_a_class(tp):  # classes are kept weakly, by _class_codec
        _CODECS[tp] = found
    return found


def _names_a_class(tp: object) -> bool:
    if is_attrs_type(tp):
        return True
    return any(_names_a_class(a) for a in typing.get_args(tp))


def _build(tp: object) -> tuple[Encode, Decode]:
    if tp in _SCALARS:
        return _SCALARS[tp]
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return codec_for(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return _union_codec(tp)
    if origin is typing.Literal:
        return _literal_codec(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_codec(tp)
    if is_attrs_type(tp):
        holder = _class_codec(cast("type", tp))
        return holder.encode_value, holder.decode
    container = origin if origin is not None else tp
    if container in (list, tuple, collections.abc.Sequence, collections.abc.MutableSequence):
        return _list_codec(tp, container)
    if container in (set, frozenset, collections.abc.Set, collections.abc.MutableSet):
        return _set_codec(tp, container)
    if container in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        return _map_codec(tp)
    raise DefinitionError(
        f"dynorm.jsonable has no JSON form for values of type {type_text(tp)}; declare the "
        "field with a type dynorm stores (str, int, float, Decimal, bool, bytes, datetime, "
        "date, time, UUID, an enum, a Literal, list, set, dict, tuple, an attrs class)"
    )


# -- attrs classes and models --------------------------------------------------------------------


class _Field(typing.NamedTuple):
    """One field of a class's table: its name, how it is passed to the class, its conversions."""

    name: str
    alias: str
    init: bool
    required: bool
    encode: Encode
    decode: Decode


class _Relation(typing.NamedTuple):
    """One relationship of a model: its name, whether it holds many, its target class."""

    name: str
    many: bool
    target: type


class _ClassCodec:
    """One attrs class (or model) as JSON-ready data: its field table, built on first use."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self._fields: tuple[_Field, ...] | None = None
        self._relations: tuple[_Relation, ...] = ()

    @property
    def fields(self) -> tuple[_Field, ...]:
        if self._fields is None:
            self._build()
        assert self._fields is not None  # noqa: S101 - filled by _build
        return self._fields

    @property
    def relations(self) -> tuple[_Relation, ...]:
        self.fields  # noqa: B018 - builds the table
        return self._relations

    def _build(self) -> None:
        cls = self.cls
        base = typing.get_origin(cls) or cls  # Box[int]: Box's annotations, bound to int
        if any(isinstance(f.type, str) for f in attrs.fields(base)):
            resolve_field_types(base)
        table = []
        for f in resolved_fields(cls):
            encode, decode = codec_for(f.type if f.type is not None else Any)
            table.append(
                _Field(
                    name=f.name,
                    alias=f.alias or f.name,
                    init=f.init,
                    required=f.init and f.default is attrs.NOTHING,
                    encode=encode,
                    decode=decode,
                )
            )
        relations = []
        if is_model(cls):
            for name, rel in relationships_of(info_of(cls)).items():
                if isinstance(rel, HasManyRelation | BelongsToRelation):
                    relations.append(
                        _Relation(name, isinstance(rel, HasManyRelation), rel.target_cls)
                    )
        self._relations = tuple(relations)
        self._fields = tuple(table)

    # -- to JSON -------------------------------------------------------------------------------

    def encode_value(self, obj: Any) -> Any:
        return self.encode(obj, set())

    def encode(self, obj: Any, active: set[int]) -> dict[str, Any]:
        data: dict[str, Any] = {f.name: f.encode(getattr(obj, f.name)) for f in self.fields}
        if not self._relations:
            return data
        state = state_of(obj)
        if state is None or not state.loaded:
            return data
        active.add(id(obj))
        try:
            for rel in self._relations:
                loaded = state.loaded.get(rel.name)
                if loaded is None or not loaded.asked:
                    continue  # not loaded by the call (embedded children came unasked)
                items = loaded.items if loaded.shown is None else loaded.items[: loaded.shown]
                if any(id(child) in active for child in items):
                    continue  # the object it came from: shown once, higher up
                target = _class_codec(rel.target)
                if rel.many:
                    data[rel.name] = [target.encode(child, active) for child in items]
                else:
                    data[rel.name] = target.encode(items[0], active) if items else None
        finally:
            active.discard(id(obj))
        return data

    # -- from JSON -----------------------------------------------------------------------------

    def decode(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise _wrong(data, f"an object ({self.cls.__name__})")
        problems: list[tuple[Loc, str]] = []
        values: dict[str, Any] = {}
        by_name = {f.name: f for f in self.fields}
        relations = {r.name: r for r in self._relations}
        children: dict[str, Loaded] = {}
        for key, value in data.items():
            field = by_name.get(key)
            if field is not None:
                if not field.init:
                    continue  # computed by the class itself
                try:
                    values[field.alias] = field.decode(value)
                except _InvalidError as exc:
                    problems += exc.at(key).problems
                continue
            rel = relations.get(key)
            if rel is not None:
                try:
                    children[key] = self._decode_relation(rel, value)
                except _InvalidError as exc:
                    problems += exc.at(key).problems
                continue
            known = [*by_name, *relations]
            hint = did_you_mean(str(key), known)
            problems.append(((str(key),), f"{self.cls.__name__} has no field {key!r}{hint}"))
        for field in self.fields:
            if field.required and field.name not in data:
                problems.append(((field.name,), "missing; this field has no default"))
        if problems:
            raise _InvalidError(problems)
        try:
            obj = self.cls(**values)
        except (TypeError, ValueError) as exc:  # the class's own validators, at their fields
            raise _InvalidError(refusals(self.cls, values, exc)) from None
        if children:
            state = state_of(obj) or bind(obj, None)
            state.loaded.update(children)
        return obj

    def decode_item(self, data: Any) -> Any:
        """An instance from ``data`` that ``db.put`` can store, if the class is a model.

        The put's own checks run on it (:mod:`dynorm.mapping.storable`): a value that reads as
        its type but that DynamoDB would refuse is a problem at its field here, not an error at
        the put. A model held as a field's value is stored inside another item, not as one.
        """
        obj = self.decode(data)
        if self.info is not None:
            problems = storage_problems(self.info, obj)
            if problems:
                raise _InvalidError(problems)
        return obj

    @functools.cached_property
    def info(self) -> ModelInfo[Any] | None:
        return info_of(self.cls) if is_model(self.cls) else None

    def _decode_relation(self, rel: _Relation, value: Any) -> Loaded:
        target = _class_codec(rel.target)
        if not rel.many:
            return Loaded([] if value is None else [target.decode_item(value)], None)
        if not isinstance(value, list):
            raise _wrong(value, f"an array of {rel.target.__name__}")
        return Loaded(_each(value, [target.decode_item] * len(value)), None)


_CLASSES: weakref.WeakKeyDictionary[type, _ClassCodec] = weakref.WeakKeyDictionary()


def _class_codec(cls: type) -> _ClassCodec:
    found = _CLASSES.get(cls)
    if found is None:
        found = _CLASSES[cls] = _ClassCodec(cls)
    return found


# -- the public functions ------------------------------------------------------------------------


def jsonable(obj: object) -> Any:
    """JSON-ready values (dicts, lists, str, int, float, bool, None) for ``obj``.

    ``obj`` is a model instance, an attrs instance, a list or tuple of them, a ``Page`` (an
    object ``{"items": [...], "cursor": "..." | null}``), a dict, or a plain value. A model's
    loaded relationships are included by name (a HasMany as an array, a BelongsTo as an object
    or null); relationships not loaded are left out, and nothing is ever read to fill them.
    """
    if attrs.has(type(obj)) and not isinstance(obj, Page):
        return _class_codec(type(obj)).encode(obj, set())
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, Page):
        return {"items": [jsonable(v) for v in obj.items], "cursor": obj.cursor}
    return _plain(obj)


def from_jsonable(cls: type[T], data: object) -> T:
    """An instance of the model (or attrs class) ``cls`` from JSON-ready ``data``, validated.

    The inverse of :func:`jsonable`: relationships present in ``data`` come back as loaded
    (``org.users.loaded``). Raises ``InvalidDataError`` naming every field that is missing,
    unknown, or holds a value of the wrong kind.
    """
    if not attrs.has(cast("type", cls)):
        raise DefinitionError(
            f"dynorm.from_jsonable reads models and attrs classes; {cls!r} is neither"
        )
    try:
        return cast("T", _class_codec(cls).decode_item(data))
    except _InvalidError as exc:
        raise InvalidDataError(cls.__name__, exc.problems) from None


def class_shape(
    cls: type,
) -> tuple[list[tuple[str, object, bool, object]], list[tuple[str, type, bool]]]:
    """A class's JSON shape, for schemas: its fields and its relationships.

    Each field as (name, type, required, default), the default ``attrs.NOTHING`` where the field
    has none or it is made by a factory; each relationship as (name, target class, many).
    """
    codec = _class_codec(cls)
    declared = {f.name: f for f in resolved_fields(cls)}
    fields: list[tuple[str, object, bool, object]] = []
    for f in codec.fields:
        tp: object = declared[f.name].type
        default = declared[f.name].default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = attrs.NOTHING
        fields.append((f.name, tp if tp is not None else Any, f.required, default))
    return fields, [(r.name, r.target, r.many) for r in codec.relations]
