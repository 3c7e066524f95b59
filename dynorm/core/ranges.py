"""Sort key conditions on the last component a query gives: ``due=between(a, b)``, ``year=gt(y)``.

A marker stands in for a component's value in ``db.query(Model, ..., field=marker)``. The value
is formatted through the key template (format specs apply, the delimiter is escaped) and the
text before the component (literals and earlier components) is put in front, so the condition
compares whole sort keys and stays inside the model's own key prefix: ``gt("5")`` on
``"A#{x}"`` never reaches keys of ``"B#..."``.

DynamoDB takes one sort key condition, so a bound on one side and the prefix on the other make
a BETWEEN; an exclusive bound (``gt``, ``lt``) inside a prefix is sent inclusive and the one key
it excludes is dropped when the items arrive (:attr:`SortRange.excluded`).

The component may be an inner one, the components after it left free (``year=2025,
month=between(3, 5)`` on ``"REVIEW#{year}#{month:02d}#{id}"``): the bounds then end at
component boundaries, so ``2025#1`` never reaches ``2025#10`` (see :func:`_inner_bounds`).
"""

from __future__ import annotations

import base64
import decimal
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import msgspec

from .errors import ExpressionError, KeyTemplateError
from .keys import KeyTemplate, KeyType, key_string, number_order, typed_key_text
from .requests import KeyRange, upper_bound

__all__ = [
    "SortCondition",
    "SortRange",
    "begins_with",
    "between",
    "ge",
    "gt",
    "le",
    "lt",
    "sort_range",
    "typed_range",
]

Op = Literal["between", "begins_with", "gt", "ge", "lt", "le"]


class SortCondition(msgspec.Struct, frozen=True):
    """A condition on one sort key component, given as its value: ``due=between(a, b)``."""

    op: Op
    values: tuple[object, ...]

    def __repr__(self) -> str:
        return f"{self.op}({', '.join(map(repr, self.values))})"


def between(low: object, high: object) -> SortCondition:
    """The component lies between ``low`` and ``high``, both included."""
    return SortCondition("between", (low, high))


def begins_with(prefix: str | bytes | bytearray) -> SortCondition:
    """The component's text starts with ``prefix`` (a partial component).

    On a binary (B) sort key, ``prefix`` is the bytes the key starts with.
    """
    if isinstance(prefix, bytes | bytearray):
        return SortCondition("begins_with", (bytes(prefix),))
    if not isinstance(prefix, str):
        raise ExpressionError(
            f"begins_with takes the text a component starts with (a str), or on a binary sort "
            f"key the bytes it starts with; got {prefix!r} ({type(prefix).__name__}): format "
            f"a number first, e.g. begins_with(f'{{value:06d}}')"
        )
    return SortCondition("begins_with", (prefix,))


def gt(value: object) -> SortCondition:
    """The component sorts after ``value``."""
    return SortCondition("gt", (value,))


def ge(value: object) -> SortCondition:
    """The component sorts at or after ``value``."""
    return SortCondition("ge", (value,))


def lt(value: object) -> SortCondition:
    """The component sorts before ``value``."""
    return SortCondition("lt", (value,))


def le(value: object) -> SortCondition:
    """The component sorts at or before ``value``."""
    return SortCondition("le", (value,))


class SortRange(msgspec.Struct, frozen=True):
    """The sort key condition to send, and a key it lets through that must be dropped."""

    range: KeyRange | None
    #: A sort key the sent condition includes but the marker excludes (``gt``/``lt``).
    excluded: str | None = None


def sort_range(
    template: KeyTemplate, components: Mapping[str, object], call: str, kind: KeyType = "S"
) -> SortRange:
    """The condition for ``components`` on the sort key ``template`` (None: the whole partition).

    ``call`` opens error messages (``"db.query(Reading)"``). ``kind`` is the sort key
    attribute's type: a number (N) or binary (B) key is one field, compared by value.
    """
    if kind != "S":
        return typed_range(template, components, call, kind)
    marked = [f for f in template.fields if isinstance(components.get(f), SortCondition)]
    if not marked:
        return SortRange(KeyRange.from_template(template, components))
    if len(marked) > 1:
        raise KeyTemplateError(
            f"{call}: {', '.join(marked)} all have conditions; a sort key takes one, on the "
            "last component given: give the others values"
        )
    (name,) = marked
    marker = components[name]
    assert isinstance(marker, SortCondition)  # noqa: S101 - found by the isinstance above
    position = template.fields.index(name)
    later = [f for f in template.fields[position + 1 :] if f in components]
    if later:
        raise KeyTemplateError(
            f"{call}: {name}={marker!r} must be on the last sort key component given, but "
            f"{', '.join(later)} follow{'s' if len(later) == 1 else ''}; drop "
            f"{', '.join(later)}, or give {name} a value"
        )
    missing = [f for f in template.fields[:position] if f not in components]
    if missing:
        raise KeyTemplateError(
            f"{call}: {name}={marker!r} needs the components before it in "
            f"{template.source!r}: give {', '.join(missing)}"
        )
    earlier = {f: components[f] for f in template.fields[:position]}
    # The text every key with these earlier components starts with, up to this component.
    prefix = template.prefix(earlier)
    segment = next(s for s in template.segments if s.field == name)
    if marker.op == "begins_with":
        (text,) = marker.values
        if not isinstance(text, str):
            raise ExpressionError(
                f"{call}: {name}={marker!r}: the sort key is text (S), so begins_with takes "
                f"the text {name} starts with, a str (bytes are for a binary sort key)"
            )
        value = prefix + template.escaped(text)
        return SortRange(KeyRange("begins_with", (value,)) if value else None)
    if segment is not template.segments[-1]:
        return _inner_bounds(
            marker,
            template,
            prefix,
            spec=segment.spec,
            suffix=segment.suffix,
            call=f"{call}: {name}",
        )
    if segment.suffix:
        raise KeyTemplateError(
            f"{call}: {name}={marker!r}: a range on the last component of {template.source!r} "
            f"compares whole sort keys, and the text {segment.suffix!r} after {{{name}}} would "
            "sort with it; use begins_with, or end the template with the placeholder"
        )

    def key(value: object) -> str:
        return prefix + template.escaped(key_string(value, segment.spec))

    return _bounds(marker, key, prefix, call, name)


def _inner_bounds(
    marker: SortCondition,
    template: KeyTemplate,
    prefix: str,
    *,
    spec: str,
    suffix: str,
    call: str,
) -> SortRange:
    """A range on a component that later components follow: bounds at component boundaries.

    ``year=gt(2023)`` on ``"REVIEW#{year}#{month:02d}#{id}"``, ``call`` naming the query and
    the field (``"db.query(Review): year"``).

    The keys whose component is ``v`` all start with ``prefix + v + delimiter`` (the *start* of
    v's block) and sort below ``prefix + v + next(delimiter)`` (its *end*), so ``2025#1`` never
    reaches ``2025#10#...``. No key equals a start or an end (a delimiter and another component
    follow every inner component), so no key needs dropping afterwards. Components compare as
    their key text: numbers need a width (``{month:02d}``) to sort as numbers.
    """
    texts = [key_string(v, spec) for v in marker.values]
    if not all(texts):
        raise ExpressionError(
            f"{call}={marker!r} bounds the component by an empty string; bound it "
            "by a non-empty value"
        )
    blocks = [prefix + template.escaped(t) + suffix for t in texts]
    start = [b + template.delimiter for b in blocks]
    end = [upper_bound(b + template.delimiter) for b in blocks]
    if marker.op == "between":
        if blocks[0] > blocks[1]:
            raise ExpressionError(
                f"{call}={marker!r}: the low bound sorts after the high one "
                f"({texts[0]!r} > {texts[1]!r} as key text); swap them"
            )
        return SortRange(KeyRange("between", (start[0], end[1])))
    if marker.op in ("ge", "gt"):
        low = start[0] if marker.op == "ge" else end[0]
        if not prefix:
            return SortRange(KeyRange("ge", (low,)))
        return SortRange(KeyRange("between", (low, upper_bound(prefix))))
    # lt: below the block of v (the block itself, without a delimiter, sorts below its keys);
    # le: below the end of v's block.
    high = blocks[0] if marker.op == "lt" else end[0]
    if not prefix:
        return SortRange(KeyRange("lt", (high,)))
    return SortRange(KeyRange("between", (prefix, high)))


def _bounds(
    marker: SortCondition, key: Callable[[object], str], prefix: str, call: str, name: str
) -> SortRange:
    keys = [key(v) for v in marker.values]
    if not all(keys):
        raise ExpressionError(
            f"{call}: {name}={marker!r} bounds the sort key by an empty string, which "
            "DynamoDB refuses; bound it by a non-empty value"
        )
    if marker.op == "between":
        low, high = keys
        if low > high:
            raise ExpressionError(
                f"{call}: {name}={marker!r}: the low bound sorts after the high one "
                f"({low!r} > {high!r}); swap them"
            )
        return SortRange(KeyRange("between", (low, high)))
    (bound,) = keys
    if not prefix:
        # No prefix to stay inside: DynamoDB's own comparison is exact.
        return SortRange(KeyRange(marker.op, (bound,)))
    excluded = bound if marker.op in ("gt", "lt") else None
    if marker.op in ("gt", "ge"):
        return SortRange(KeyRange("between", (bound, upper_bound(prefix))), excluded)
    return SortRange(KeyRange("between", (prefix, bound)), excluded)


# -- number and binary sort keys -----------------------------------------------------------------


def typed_range(
    template: KeyTemplate, components: Mapping[str, object], call: str, kind: KeyType
) -> SortRange:
    """The condition on a number (N) or binary (B) sort key: its one field, compared by value.

    The bounds are sent as numbers (or bytes), so DynamoDB compares them as it orders the keys
    (99 < 100 < 1000); no prefix is involved, since such a key holds nothing but the value.
    """
    (name,) = template.fields
    if name not in components:
        return SortRange(None)
    marker = components[name]
    if not isinstance(marker, SortCondition):
        return SortRange(KeyRange("eq", (_typed_text(marker, kind, call, name),), kind))
    if marker.op == "begins_with" and kind == "N":
        raise ExpressionError(
            f"{call}: {name}={marker!r}: the sort key holds {name} as a number (N), which "
            "DynamoDB compares by value, not as text, so it has no prefix to begin with; use "
            "between, gt, ge, lt or le"
        )
    if marker.op == "begins_with":  # a binary key: the bytes it starts with
        (start,) = marker.values
        if not isinstance(start, bytes) or not start:
            raise ExpressionError(
                f"{call}: {name}={marker!r}: {name} is a binary (B) sort key: begins_with "
                "takes the bytes it starts with, at least one (b'\\x01')"
            )
        return SortRange(KeyRange("begins_with", (_typed_text(start, kind, call, name),), kind))
    texts = tuple(_typed_text(v, kind, call, name) for v in marker.values)
    if marker.op == "between":
        order: Callable[[str], Any] = number_order if kind == "N" else _binary_order
        low: Any = order(texts[0])
        if low > order(texts[1]):
            raise ExpressionError(
                f"{call}: {name}={marker!r}: the low bound is greater than the high one; swap them"
            )
    return SortRange(KeyRange(marker.op, texts, kind))


def _binary_order(text: str) -> bytes:
    return base64.b64decode(text)


def _typed_text(value: object, kind: KeyType, call: str, name: str) -> str:
    """A bound's key text: a number's digits (N) or base64 (B); ExpressionError for other values."""
    if kind == "N":
        if isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool):
            if isinstance(value, float | decimal.Decimal) and not math.isfinite(value):
                raise ExpressionError(
                    f"{call}: {name} bounds a number key by {value!r}; give a finite number"
                )
            return key_string(value)
        wanted = "a number (int, Decimal or float)"
    elif isinstance(value, bytes | bytearray):
        return typed_key_text(bytes(value))
    else:
        wanted = "bytes"
    raise ExpressionError(
        f"{call}: {name} is a {'number (N)' if kind == 'N' else 'binary (B)'} sort key: give "
        f"{wanted}, not {value!r} ({type(value).__name__})"
    )
