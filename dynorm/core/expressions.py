"""Condition and update expressions, rendered with placeholders for every name and value.

Every attribute name becomes ``#n<i>`` so reserved words (``name``, ``status`` …) never clash, and
every value becomes ``:v<i>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from .codec.converter import AttributeValue
from .codec.generic import encode_any
from .codec.paths import path_steps
from .errors import ExpressionError

__all__ = [
    "Attr",
    "Condition",
    "ExpressionBuilder",
    "entity_is",
    "equal_to",
    "extend_condition",
    "grouped",
    "path_steps",
    "render_update",
    "top_field",
]

Encoder = Callable[[str], Callable[[Any], AttributeValue]]
#: Turns a field path (``shelf.room``) into the steps of the stored attribute path
#: (``[("Shelf", ""), ("Room", "")]``); raises ExpressionError for a path no field maps.
Renamer = Callable[[str], list[tuple[str, str]]]


def _generic_encoder(_: str) -> Callable[[Any], AttributeValue]:
    return encode_any


def top_field(path: str) -> str:
    """The attribute a document path starts at: ``address`` for ``address.lines[0]``."""
    return path_steps(path)[0][0]


class ExpressionBuilder(msgspec.Struct):
    """Collects the placeholder maps shared by all expressions of one request."""

    encoder: Encoder = _generic_encoder
    #: Field paths -> stored attribute steps; None: paths name stored attributes already.
    renamer: Renamer | None = None
    names: dict[str, str] = msgspec.field(default_factory=dict)
    values: dict[str, AttributeValue] = msgspec.field(default_factory=dict)
    #: Stored attribute name -> its placeholder.
    name_ids: dict[str, str] = msgspec.field(default_factory=dict)

    def name(self, path: str) -> str:
        """The placeholder path for the field path ``a.b[0].c``.

        Map members follow dots, list elements are in brackets; the path is sent under the
        attribute names its fields are stored as.
        """
        steps = path_steps(path) if self.renamer is None else self.renamer(path)
        return ".".join(self.attribute(name) + indexes for name, indexes in steps)

    def attribute(self, name: str) -> str:
        """The placeholder for one stored attribute name, taken as it is (dots and all)."""
        placeholder = self.name_ids.get(name)
        if placeholder is None:
            placeholder = f"#n{len(self.name_ids)}"
            self.name_ids[name] = placeholder
            self.names[placeholder] = name
        return placeholder

    def value(self, av: AttributeValue) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = av
        return placeholder

    def typed_value(self, path: str, value: object) -> str:
        """A value encoded as the document at ``path`` is typed.

        The encoder follows the path; a model's refuses a value of another type.
        """
        return self.value(self.encoder(path)(value))

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = dict(self.values)
        return out


class Condition:
    """A condition expression; combine with ``&``, ``|`` and ``~``."""

    # No instance state here: dynorm's conditions are msgspec Structs, a user's may be attrs.
    __slots__ = ()

    def render(self, builder: ExpressionBuilder) -> str:
        raise NotImplementedError

    def __and__(self, other: Condition) -> Condition:
        return _Join("AND", (self, other))

    def __or__(self, other: Condition) -> Condition:
        return _Join("OR", (self, other))

    def __invert__(self) -> Condition:
        return _Not(self)


class _Join(msgspec.Struct, Condition, frozen=True):
    op: str
    parts: tuple[Condition, ...]

    def render(self, builder: ExpressionBuilder) -> str:
        return f" {self.op} ".join(f"({p.render(builder)})" for p in self.parts)


class _Not(msgspec.Struct, Condition, frozen=True):
    inner: Condition

    def render(self, builder: ExpressionBuilder) -> str:
        return f"NOT ({self.inner.render(builder)})"


class _Compare(msgspec.Struct, Condition, frozen=True):
    path: str
    op: str
    operand: object

    def render(self, builder: ExpressionBuilder) -> str:
        return f"{builder.name(self.path)} {self.op} {builder.typed_value(self.path, self.operand)}"


class _Function(msgspec.Struct, Condition, frozen=True):
    function: str
    path: str
    operands: tuple[object, ...] = ()
    generic: bool = False  # operands are not of the field's type (contains on a list, say)

    def render(self, builder: ExpressionBuilder) -> str:
        args = [builder.name(self.path)]
        for operand in self.operands:
            if self.generic:
                args.append(builder.value(encode_any(operand)))
            else:
                args.append(builder.typed_value(self.path, operand))
        return f"{self.function}({', '.join(args)})"


class _Between(msgspec.Struct, Condition, frozen=True):
    path: str
    low: object
    high: object

    def render(self, builder: ExpressionBuilder) -> str:
        low = builder.typed_value(self.path, self.low)
        high = builder.typed_value(self.path, self.high)
        return f"{builder.name(self.path)} BETWEEN {low} AND {high}"


class _In(msgspec.Struct, Condition, frozen=True):
    path: str
    options: tuple[object, ...]

    def render(self, builder: ExpressionBuilder) -> str:
        values = ", ".join(builder.typed_value(self.path, v) for v in self.options)
        return f"{builder.name(self.path)} IN ({values})"


class _Entity(msgspec.Struct, Condition, frozen=True):
    attribute: str
    entity: str

    def render(self, builder: ExpressionBuilder) -> str:
        name = builder.attribute(self.attribute)
        value = builder.value({"S": self.entity})
        return f"{name} = {value} OR attribute_not_exists({name})"


def entity_is(attribute: str, entity: str) -> Condition:
    """The item holds ``entity`` in the type attribute ``attribute`` (a stored name).

    An item without a type attribute passes too: another tool wrote it, and its keys decide.
    """
    return _Entity(attribute, entity)


class Attr(msgspec.Struct, frozen=True, eq=False):
    """An attribute in a condition: ``Attr("plan_type") == "Free"``, ``Attr("email").exists()``.

    Values are encoded as the model field of the same name is typed, so dates, enums and
    numbers compare the way they are stored. Dotted paths reach into maps (``address.city``) and
    brackets into lists (``tags[0]``, ``addresses[1].city``).
    """

    path: str

    def __eq__(self, other: object) -> Condition:  # type: ignore[override]
        return _Compare(self.path, "=", other)

    def __ne__(self, other: object) -> Condition:  # type: ignore[override]
        return _Compare(self.path, "<>", other)

    def __lt__(self, other: object) -> Condition:
        return _Compare(self.path, "<", other)

    def __le__(self, other: object) -> Condition:
        return _Compare(self.path, "<=", other)

    def __gt__(self, other: object) -> Condition:
        return _Compare(self.path, ">", other)

    def __ge__(self, other: object) -> Condition:
        return _Compare(self.path, ">=", other)

    __hash__ = None  # type: ignore[assignment]

    def exists(self) -> Condition:
        return _Function("attribute_exists", self.path)

    def not_exists(self) -> Condition:
        return _Function("attribute_not_exists", self.path)

    def begins_with(self, prefix: str) -> Condition:
        return _Function("begins_with", self.path, (prefix,), generic=True)

    def contains(self, member: object) -> Condition:
        return _Function("contains", self.path, (member,), generic=True)

    def between(self, low: object, high: object) -> Condition:
        return _Between(self.path, low, high)

    def is_in(self, *options: object) -> Condition:
        if not options:
            # DynamoDB rejects `IN ()`; an empty choice is a bug in the caller's logic.
            raise ExpressionError(f"Attr({self.path!r}).is_in() needs at least one option")
        return _In(self.path, options)


def render_update(
    builder: ExpressionBuilder,
    *,
    set_values: Mapping[str, object],
    set_raw: Mapping[str, AttributeValue],
    remove: Iterable[str],
    add: Mapping[str, object],
    remove_raw: Iterable[str] = (),
    append: Mapping[str, object] | None = None,
    prepend: Mapping[str, object] | None = None,
    discard: Mapping[str, object] | None = None,
    if_not_exists: Mapping[str, object] | None = None,
    missing_raw: Mapping[str, AttributeValue] | None = None,
) -> str:
    """An UpdateExpression; every path is a field path except those of ``*_raw`` (attributes).

    ``set_values`` are typed SET values and ``set_raw`` pre-encoded ones (stored attribute
    names); ``append``/``prepend`` add list elements at the end/start (a missing list counts as
    empty); ``discard`` takes elements out of sets (DELETE); ``if_not_exists`` sets typed values
    only where the path holds none, ``missing_raw`` likewise for stored attributes;
    ``remove_raw`` removes stored attributes (key attributes rebuilt from the fields).
    """
    clauses = []
    assignments = [
        f"{builder.name(p)} = {builder.typed_value(p, v)}" for p, v in set_values.items()
    ]
    assignments += [f"{builder.attribute(a)} = {builder.value(av)}" for a, av in set_raw.items()]
    for path, value in (if_not_exists or {}).items():
        name = builder.name(path)
        assignments.append(f"{name} = if_not_exists({name}, {builder.typed_value(path, value)})")
    for attr, av in (missing_raw or {}).items():
        name = builder.attribute(attr)
        assignments.append(f"{name} = if_not_exists({name}, {builder.value(av)})")
    for path, elements, at_end in [
        *((p, v, True) for p, v in (append or {}).items()),
        *((p, v, False) for p, v in (prepend or {}).items()),
    ]:
        name = builder.name(path)
        existing = f"if_not_exists({name}, {builder.value({'L': []})})"
        added = builder.typed_value(path, elements)
        pair = f"{existing}, {added}" if at_end else f"{added}, {existing}"
        assignments.append(f"{name} = list_append({pair})")
    if assignments:
        clauses.append("SET " + ", ".join(assignments))
    removals = [builder.name(p) for p in remove] + [builder.attribute(a) for a in remove_raw]
    if removals:
        clauses.append("REMOVE " + ", ".join(removals))
    additions = [f"{builder.name(p)} {builder.value(encode_any(v))}" for p, v in add.items()]
    if additions:
        clauses.append("ADD " + ", ".join(additions))
    deletions = [
        f"{builder.name(p)} {builder.typed_value(p, v)}" for p, v in (discard or {}).items()
    ]
    if deletions:
        clauses.append("DELETE " + ", ".join(deletions))
    return " ".join(clauses)


def equal_to(builder: ExpressionBuilder, path: str, value: AttributeValue) -> list[str]:
    """Conditions that all hold when the document at ``path`` (a rendered path) equals ``value``.

    Maps and lists are compared member by member down to scalars (and by size): not every
    DynamoDB implementation compares whole maps with ``=`` (dynalite compares them by identity).
    NULL (and an empty set, which dynorm leaves out of the item) also matches a missing attribute.
    """
    kind, inner = next(iter(value.items()))
    if kind == "M":
        size = builder.value({"N": str(len(inner))})
        out = [f"size({path}) = {size}"]
        for name, member in inner.items():
            out += equal_to(builder, f"{path}.{builder.attribute(name)}", member)
        return out
    if kind == "L":
        size = builder.value({"N": str(len(inner))})
        out = [f"size({path}) = {size}"]
        for i, member in enumerate(inner):
            out += equal_to(builder, f"{path}[{i}]", member)
        return out
    if kind == "NULL":
        null = builder.value({"S": "NULL"})
        return [f"(attribute_not_exists({path}) OR attribute_type({path}, {null}))"]
    return [f"{path} = {builder.value(value)}"]


def extend_condition(params: dict[str, Any], extra: Callable[[ExpressionBuilder], str]) -> None:
    """AND a condition built by ``extra`` onto the request parameters ``params`` (in place).

    The builder continues the placeholder numbering of the names and values already there, so
    the two expressions never collide.
    """
    names = dict(params.get("ExpressionAttributeNames", {}))
    builder = ExpressionBuilder(
        names=names,
        values=dict(params.get("ExpressionAttributeValues", {})),
        name_ids={name: placeholder for placeholder, name in names.items()},
    )
    added = extra(builder)
    existing = params.get("ConditionExpression")
    params["ConditionExpression"] = (
        f"{grouped(existing)} AND {grouped(added)}" if existing else added
    )
    params.update(builder.params())


def grouped(expression: str) -> str:
    """``expression`` in parentheses, unless one pair encloses it already.

    DynamoDB refuses a condition with redundant parentheses (``((a = :v OR b))``), and a
    condition built elsewhere may arrive enclosed (a type check on a table with a type
    attribute). Placeholders stand for every name and value, so no parenthesis is quoted text.
    """
    if expression.startswith("(") and expression.endswith(")"):
        depth = 0
        for i, char in enumerate(expression):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                if i == len(expression) - 1:
                    return expression  # the first parenthesis closes at the end
                break
    return f"({expression})"
