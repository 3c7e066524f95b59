"""``dynorm[pydantic]``: models as pydantic (and FastAPI) types, without a second class per model.

Every model class gets pydantic's two extension hooks at declaration,
``__get_pydantic_core_schema__`` and ``__get_pydantic_json_schema__`` (small forwarders in
:mod:`dynorm.mapping.pydantic_hooks`). pydantic calls them when a model is used as a type
(``response_model=Org``, a request body, ``TypeAdapter(Org)``); only then are this module and
pydantic imported, so neither ``import dynorm`` nor a declaration imports them.

- Validation goes through ``dynorm.from_jsonable`` (an instance of the class passes as is): its
  ``InvalidDataError`` problems become pydantic's ValidationError, one error per place, which
  FastAPI answers with a 422.
- Serialization goes through ``dynorm.jsonable``, in Python and JSON mode alike.
- The JSON schema (OpenAPI) is an object with one property per field, typed from the field's
  annotation (pydantic's schema for ``datetime``, ``Decimal``, nested attrs classes …), and one
  optional property per relationship: an array of the child's schema for a HasMany, the
  parent's schema or null for a BelongsTo. Fields with defaults are optional in requests.
"""

from __future__ import annotations

import collections.abc
import json
import types
import typing
from typing import TYPE_CHECKING, Any, Final

from dynorm.core.codec.typeforms import is_attrs_type
from dynorm.core.errors import InvalidDataError

from .jsonable import class_shape, from_jsonable, jsonable
from .model import is_model

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

__all__ = ["core_schema_of", "json_schema_of"]

#: Classes whose core schema is being built (a relationship back to one refers to it by ref).
_BUILDING: set[type] = set()
#: For each model whose core schema is being built, the definitions of the plain attrs classes
#: its fields hold (ref -> schema). They are handed to pydantic beside the model's schema, at
#: its top, where pydantic collects definitions: one nested deeper (inside the JSON schema's
#: input shape) is not found, and a class that holds itself would refer to nothing.
_DEFINITIONS: list[dict[str, CoreSchema]] = []


def _ref(cls: type) -> str:
    if typing.get_origin(cls) is not None:  # Box[int]: its repr names the class and its arguments
        return f"{cls!r}:{id(cls)}"
    return f"{cls.__module__}.{cls.__qualname__}:{id(cls)}"


def core_schema_of(cls: type, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    from pydantic_core import (  # noqa: PLC0415 - on demand
        PydanticCustomError,
        ValidationError,
        core_schema,
    )

    _DEFINITIONS.append({})
    try:
        shape = _shape_of(cls, handler)
    finally:
        definitions = _DEFINITIONS.pop()

    def validate(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return from_jsonable(cls, value)
        except InvalidDataError as exc:
            # One error per place, as pydantic reports them (FastAPI: a 422 listing each).
            raise ValidationError.from_exception_data(
                cls.__name__,
                [
                    {
                        "type": PydanticCustomError("dynorm_invalid", "{detail}", {"detail": text}),
                        "loc": loc,
                        "input": _shown(_at(value, loc)),
                    }
                    for loc, text in exc.problems
                ],
            ) from None

    schema = core_schema.no_info_plain_validator_function(
        validate,
        ref=_ref(cls),
        json_schema_input_schema=shape,
        serialization=core_schema.plain_serializer_function_ser_schema(jsonable),
    )
    if not definitions:
        return schema
    return core_schema.definitions_schema(schema, list(definitions.values()))


#: The longest input an error echoes as is (FastAPI sends each error's input back).
_SHOWN_INPUT: Final = 200


def _shown(value: Any) -> Any:
    """``value`` as an error's input: as is when JSON carries it and it is short, else clipped.

    A lone surrogate or ``inf`` given as is would make the 422 itself fail to render.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode()
    except (TypeError, ValueError):
        text = repr(value)  # escapes what JSON cannot carry
    else:
        if len(text) <= _SHOWN_INPUT:
            return value
    return text if len(text) <= _SHOWN_INPUT else f"{text[: _SHOWN_INPUT - 12]}...{text[-8:]}"


def _at(data: Any, loc: tuple[str | int, ...]) -> Any:
    """The part of ``data`` at ``loc`` (None where it is missing)."""
    for step in loc:
        try:
            data = data[step]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _shape_of(cls: type, handler: GetCoreSchemaHandler, ref: str | None = None) -> CoreSchema:
    """The JSON object a class (model or attrs class) is, for its JSON schema only."""
    from pydantic_core import core_schema  # noqa: PLC0415 - on demand

    fields, relations = class_shape(cls)
    _BUILDING.add(cls)
    try:
        shape: dict[str, Any] = {}
        for name, tp, required, default in fields:
            schema = _type_schema(tp, handler)
            if _shows_as_is(default):  # the JSON schema's "default"
                schema = core_schema.with_default_schema(schema, default=default)
            shape[name] = core_schema.typed_dict_field(schema, required=required)
        for name, target, many in relations:
            inner = _type_schema(target, handler)
            shape[name] = core_schema.typed_dict_field(
                core_schema.list_schema(inner) if many else core_schema.nullable_schema(inner),
                required=False,
            )
    finally:
        _BUILDING.discard(cls)
    return core_schema.typed_dict_schema(
        shape,
        cls_name=cls.__name__,
        extra_behavior="forbid",
        config={"title": cls.__name__},
        ref=ref,
    )


def _type_schema(tp: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
    """A field type's schema (pydantic's); attrs classes in it described by their fields."""
    from pydantic_core import core_schema  # noqa: PLC0415 - on demand

    if is_attrs_type(tp):
        if tp in _BUILDING:
            return core_schema.definition_reference_schema(_ref(tp))
        if is_model(tp):
            return handler.generate_schema(tp)
        # A plain attrs class (nested value, embedded child): pydantic has no schema of its own
        # for it, and only its JSON schema is needed (the model validates the whole value).
        # Defined once per model and referred to, so that a class holding itself has a schema.
        ref = _ref(tp)
        definitions = _DEFINITIONS[-1]
        if ref not in definitions:
            # Named before its fields are described: a field holding the class refers to it.
            definitions[ref] = core_schema.any_schema()
            definitions[ref] = _shape_of(tp, handler, ref=ref)
        return core_schema.definition_reference_schema(ref)
    if tp is bytes:  # base64 text, as jsonable writes it (pydantic would say "binary")
        return core_schema.str_schema(metadata={"pydantic_js_updates": _BASE64})
    if not _mentions_attrs(tp):
        return handler.generate_schema(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return _type_schema(args[0], handler)
    if origin in (typing.Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        inner = (
            _type_schema(others[0], handler)
            if len(others) == 1
            else core_schema.union_schema([_type_schema(a, handler) for a in others])
        )
        return core_schema.nullable_schema(inner) if len(others) < len(args) else inner
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return core_schema.tuple_schema([_type_schema(a, handler) for a in args])
    if origin in (set, frozenset, collections.abc.Set, collections.abc.MutableSet):
        return core_schema.set_schema(_type_schema(args[0], handler))
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping):
        return core_schema.dict_schema(
            _type_schema(args[0], handler), _type_schema(args[1], handler)
        )
    return core_schema.list_schema(_type_schema(args[0], handler))


#: What the JSON schema says of a bytes value: text in base64 (OpenAPI 3.1 reads
#: ``contentEncoding``; ``format`` is what OpenAPI 3.0 tools and pydantic's Base64Bytes use).
_BASE64: dict[str, str] = {"type": "string", "contentEncoding": "base64", "format": "base64"}


def _mentions_attrs(tp: object) -> bool:
    """Whether the type has parts pydantic would describe otherwise than dynorm's JSON has them."""
    if tp is bytes or is_attrs_type(tp):
        return True
    return any(_mentions_attrs(a) for a in typing.get_args(tp))


def _shows_as_is(default: object) -> bool:
    """A default that is its own JSON (str, int, float, bool, None)."""
    return default is None or type(default) in (str, int, float, bool)


def json_schema_of(cls: type, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
    # Responses (serialization) have the shape requests (validation) have: jsonable's output.
    shape = schema.get("json_schema_input_schema") if schema["type"] == "function-plain" else None
    found = handler(shape if shape is not None else schema)
    found = handler.resolve_ref_schema(found)
    found["title"] = cls.__name__
    if cls.__doc__:
        found.setdefault("description", cls.__doc__.strip().split("\n\n")[0])
    return found
