"""Document paths (``address.city``, ``tags[0]``): their steps, stored names and encoders.

Conditions, filters and updates name fields by path. A path is followed through the model's
field types: field names become the attribute names they are stored under, and a value given
for the path is encoded as the type found there (generically where the path leaves the types
dynorm knows), then checked against DynamoDB's limits for its depth.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final

import attrs

from dynorm.core.errors import ExpressionError, did_you_mean
from dynorm.core.fields import is_key_only, stored_name
from dynorm.core.limits import (
    MAX_DEPTH,
    check_value,
)

from . import AttributeValue
from .converter import hooks
from .generic import encode_any
from .refusals import _named
from .scalars import unstructure_hook
from .typeforms import (
    _attrs_class,
    _element,
    _is_list,
    _is_map,
    _optional_inner,
    _tuple_items,
    resolved_fields,
)

__all__ = ["path_steps"]


#: One step of a document path: a name, then any list indexes (``tags``, ``lines[0]``, ``m[1][2]``).
#: Compiled on first use (``re``'s cache), not at import.
_PATH_STEP: Final = r"([^.\[\]]+)((?:\[\d+\])*)"


def path_steps(path: str) -> list[tuple[str, str]]:
    """``a.b[0].c`` -> ``[("a", ""), ("b", "[0]"), ("c", "")]``; ExpressionError if malformed."""
    steps = []
    for step in path.split("."):
        match = re.fullmatch(_PATH_STEP, step)
        if match is None:
            raise ExpressionError(
                f"{path!r} is not an attribute path: write map members as a.b and list "
                "elements as a[0] (a name, then indexes in brackets)"
            )
        steps.append((match[1], match[2]))
    return steps


def _walk(cls: type, path: str) -> tuple[list[tuple[str, str]], object | None]:
    """The stored steps of a field path of ``cls``'s items, and the declared type it reaches.

    Field names become the attribute names they are stored under; map keys and steps below a
    type dynorm cannot follow are kept as written. The type is None where it is not known.
    ExpressionError for a name no field of an attrs class maps, or a key-only field.
    """
    steps = []
    tp: object = cls
    for name, indexes in path_steps(path):
        tp = _optional_inner(tp) or tp
        klass = _attrs_class(tp)
        if klass is not None:
            found = [f for f in resolved_fields(klass) if f.name == name]
            if not found:
                raise _unknown_field(klass, name, path)
            if is_key_only(found[0]):
                raise ExpressionError(
                    f"{klass.__name__}.{name} is kept only inside key attributes "
                    "(dynorm.field(key_only=True)), so no condition, filter or update can name "
                    "it; address items by it through their key instead"
                )
            steps.append((stored_name(found[0]), indexes))
            tp = found[0].type
        else:
            steps.append((name, indexes))
            tp = _element(tp, 1) if _is_map(tp) else Any if tp is Any else None
        for index in re.findall(r"\[(\d+)\]", indexes):
            tp = _optional_inner(tp) or tp
            items = _tuple_items(tp)
            if items is not None and int(index) < len(items):
                tp = items[int(index)]
            elif _is_list(tp):
                tp = _element(tp)
            elif tp is not Any:
                tp = None
    return steps, tp


def _unknown_field(cls: type, name: str, path: str) -> ExpressionError:
    names = [f.name for f in attrs.fields(cls)]
    hint = did_you_mean(name, names)
    where = "" if path == name else f" in {path!r}"
    return ExpressionError(
        f"{cls.__name__} has no field {name!r}{where}{hint}; name fields, not stored attribute "
        f"names: {', '.join(names)}"
    )


def _path_type(cls: type, path: str) -> object | None:
    """The declared type at a document path of ``cls``'s items, or None if it is not known."""
    try:
        return _walk(cls, path)[1]
    except ExpressionError:
        return None


def _path_encoder(cls: type) -> Callable[[str], Callable[[Any], AttributeValue]]:
    # Bounded: map keys in paths (``scores.<user id>``) may be as many as the users.
    @functools.lru_cache(maxsize=512)
    def encode_path(path: str) -> Callable[[Any], AttributeValue]:
        tp = _path_type(cls, path)
        where = f"{cls.__name__}.{path}"
        hook = _named(
            encode_any if tp is None else unstructure_hook(hooks, tp),
            where,
            "Any" if tp is None else tp,
        )
        room = MAX_DEPTH - path.count(".") - path.count("[")

        def encode_checked(value: Any) -> AttributeValue:
            av = hook(value)
            check_value(av, where, room)  # a whole item is checked as one; a value alone here
            return av

        return encode_checked

    return encode_path


def _attribute_steps(cls: type, path: str) -> list[tuple[str, str]]:
    return _walk(cls, path)[0]


def _with_fields(
    encode_path: Callable[[str], Callable[[Any], AttributeValue]],
    encode_field: Mapping[str, Callable[[Any], AttributeValue]],
    names: Collection[str],
) -> Callable[[str], Callable[[Any], AttributeValue]]:
    """``encode_path``, except that the whole fields ``names`` encode with their own hooks."""
    if not names:
        return encode_path
    return lambda path: encode_field[path] if path in names else encode_path(path)
