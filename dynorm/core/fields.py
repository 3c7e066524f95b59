"""``dynorm.field``: an ``attrs.field`` that also says how the field is stored.

Tables written by other tools name their attributes their own way (``Email``, ``GSI1-PK``,
``Shelf``); the field keeps its Python name and the item keeps the tool's. The codec, conditions,
filters, update paths and projections all translate through :func:`stored_name`, so user code
only ever names fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, overload

import attrs

from .errors import DefinitionError

__all__ = ["field", "is_key_only", "stored_name"]

#: Metadata keys on the attrs field (namespaced: attrs metadata is shared with other tools).
NAME_KEY: Final = "dynorm.name"
KEY_ONLY_KEY: Final = "dynorm.key_only"

_NOTHING: Any = attrs.NOTHING

T = TypeVar("T")


# The overloads type a field as attrs.field's stubs do, so a default must suit the field:
# `at: datetime = dynorm.field(default="now")` is an error (dynorm has no special default
# values; a time of writing is the model's created=/updated= stamp). With a converter, the
# default is the converter's input, so that form is not checked.
@overload
def field(  # no default: a required field
    *,
    name: str | None = None,
    key_only: bool = False,
    validator: Any = None,
    converter: None = None,
    kw_only: bool = False,
    alias: str | None = None,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool | None = None,
    hash: bool | None = None,
    on_setattr: Any = None,
    metadata: Mapping[Any, Any] | None = None,
) -> Any: ...


@overload
def field(
    *,
    name: str | None = None,
    key_only: bool = False,
    default: T,
    validator: Any = None,
    converter: None = None,
    kw_only: bool = False,
    alias: str | None = None,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool | None = None,
    hash: bool | None = None,
    on_setattr: Any = None,
    metadata: Mapping[Any, Any] | None = None,
) -> T: ...


@overload
def field(
    *,
    name: str | None = None,
    key_only: bool = False,
    factory: Callable[[], T],
    validator: Any = None,
    converter: None = None,
    kw_only: bool = False,
    alias: str | None = None,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool | None = None,
    hash: bool | None = None,
    on_setattr: Any = None,
    metadata: Mapping[Any, Any] | None = None,
) -> T: ...


@overload
def field(
    *,
    name: str | None = None,
    key_only: bool = False,
    default: object = ...,
    factory: Callable[[], object] | None = None,
    validator: Any = None,
    converter: Callable[..., Any],
    kw_only: bool = False,
    alias: str | None = None,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    order: bool | None = None,
    hash: bool | None = None,
    on_setattr: Any = None,
    metadata: Mapping[Any, Any] | None = None,
) -> Any: ...


def field(
    *,
    name: str | None = None,
    key_only: bool = False,
    default: object = _NOTHING,
    factory: Callable[[], object] | None = None,
    validator: Any = None,
    converter: Any = None,
    kw_only: bool = False,
    alias: str | None = None,
    init: bool = True,
    repr: bool = True,  # noqa: A002 - attrs.field's name for it
    eq: bool = True,
    order: bool | None = None,
    hash: bool | None = None,  # noqa: A002 - attrs.field's name for it
    on_setattr: Any = None,
    metadata: Mapping[Any, Any] | None = None,
) -> Any:
    """A model field (or a field of a nested attrs class) with storage options.

    ``name``: the attribute the value is stored under (default: the field's own name). Any
    DynamoDB attribute name works (``"Email"``, ``"GSI1-PK"``, ``"Due Date"``): dynorm always
    sends names through placeholders.

    ``key_only``: the value is kept only inside the key attributes whose templates hold it
    (``"m#{member_id}"``), with no attribute of its own; it is read back by parsing the key.
    That is how many modelling tools lay items out.

    The other keywords are ``attrs.field``'s, passed through.
    """
    given: object = name
    if given is not None and (not isinstance(given, str) or not given):
        raise DefinitionError(f"dynorm.field(name=...) takes a non-empty str; got {name!r}")
    extra: dict[Any, Any] = dict(metadata or {})
    if name is not None:
        extra[NAME_KEY] = name
    if key_only:
        extra[KEY_ONLY_KEY] = True
    if factory is not None:
        if default is not _NOTHING:
            raise DefinitionError("dynorm.field takes default= or factory=, not both")
        default = attrs.Factory(factory)
    spec: Any = attrs.field(
        default=default,
        validator=validator,
        converter=converter,
        kw_only=kw_only,
        alias=alias,
        init=init,
        repr=repr,
        eq=eq,
        order=order,
        hash=hash,
        on_setattr=on_setattr,
        metadata=extra,
    )
    return spec


def stored_name(attribute: attrs.Attribute[Any]) -> str:
    """The attribute name a field is stored under."""
    name: str = attribute.metadata.get(NAME_KEY, attribute.name)
    return name


def is_key_only(attribute: attrs.Attribute[Any]) -> bool:
    """Whether the field lives only inside key attributes."""
    return bool(attribute.metadata.get(KEY_ONLY_KEY, False))
