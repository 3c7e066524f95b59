"""A table's design as data: its key table and its access patterns with their request cost.

``design(table)`` is what ``dynorm design MODULE:TABLE`` prints. The key table has one row per
entity with the key templates it writes into each key attribute of the table and its indexes.
Each access pattern is planned by the planner that sends requests (``db.get(..., load=[...])``,
``db.query(...)``), with placeholder key values, so its cost is the cost of the real call.
"""

from __future__ import annotations

import decimal
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

import attrs

from dynorm.core.errors import DefinitionError, KeyTemplateError
from dynorm.core.keys import key_string, key_value_parser
from dynorm.core.requests import Request, batch_get, whole_item_reads
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import ModelInfo, ModelTable
from dynorm.mapping.readplan import normalize_options, plan_get
from dynorm.mapping.relations import (
    BelongsToRelation,
    HasManyRelation,
    Relationship,
    embedded_of,
    relationships_of,
)
from dynorm.mapping.table import Table
from dynorm.mapping.union import union_read
from dynorm.mapping.writeplan import WritePlanner

__all__ = ["AccessPattern", "Design", "EntityRow", "design"]


@attrs.frozen
class EntityRow:
    """One entity of the key table: the template it writes into each key attribute."""

    entity: str
    #: key attribute -> template source (only the attributes this entity writes).
    keys: Mapping[str, str]
    #: the other attributes it stores (stored names).
    attributes: tuple[str, ...]
    #: where it lives when it is not an item of its own ("inside Customer.addresses").
    inside: str | None = None


@attrs.frozen
class AccessPattern:
    """One way to read: the call, the strategy behind it, and the requests it sends."""

    name: str
    call: str
    strategy: str
    cost: str
    #: the requests, in order, as ``Query GSI1: GSI1PK = "USER#{user}" ...`` lines.
    requests: tuple[str, ...]


@attrs.frozen
class Design:
    """The key table and the access patterns of one Table."""

    table: str
    key_attributes: tuple[str, ...]
    #: index name -> its key attributes and projection, as declared.
    indexes: Mapping[str, str]
    entities: tuple[EntityRow, ...]
    patterns: tuple[AccessPattern, ...]

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for ``--format json``)."""
        return attrs.asdict(self)

    def markdown(self) -> str:
        """Two markdown tables: the key table, then the access patterns."""
        head = ["Entity", *self.key_attributes, "Attributes"]
        rows = [
            [
                e.entity + (f" (in {e.inside})" if e.inside else ""),
                *(f"`{e.keys[a]}`" if a in e.keys else "" for a in self.key_attributes),
                ", ".join(e.attributes),
            ]
            for e in self.entities
        ]
        patterns = [
            [p.name, f"`{p.call}`", p.strategy, p.cost, "<br>".join(f"`{r}`" for r in p.requests)]
            for p in self.patterns
        ]
        return (
            f"### Table `{self.table}`\n\n"
            + _markdown_table(head, rows)
            + "\n"
            + _markdown_table(["Pattern", "Call", "Strategy", "Cost", "Requests"], patterns)
        )


def _markdown_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n"

    return line(head) + line(["---"] * len(head)) + "".join(line(r) for r in rows)


# -- placeholder key values -------------------------------------------------------------------

#: Key text that parses into a value of each key type (tried in order): the placeholder that a
#: non-str field stands for in a planned request, shown back as ``{field}``.
_SAMPLE_TEXTS = (
    "987654321",
    "1987-06-05T04:03:02",
    "1987-06-05",
    "true",
    "98765432-1000-4000-8000-000000000001",
)


def _sample(field: str, tp: object) -> object | None:
    if tp is str or tp is Any:
        return "{" + field + "}"  # a str placeholder renders as the template's own text
    if tp is bytes:  # a binary key's field: shown back by its bytes
        return ("{" + field + "}").encode()
    try:
        parse = key_value_parser(tp)
    except DefinitionError:
        return None
    if isinstance(tp, type) and hasattr(tp, "__members__"):
        return next(iter(tp.__members__.values()), None)  # an Enum: its first member
    for text in _SAMPLE_TEXTS:
        try:
            return parse(text)
        except (ValueError, KeyError, TypeError):
            continue
    return None


class _Samples:
    """Placeholder values for a model's fields, and how to show them back as ``{field}``.

    A str field's placeholder is ``"{field}"`` itself. Other fields get a value of their type,
    shown back as ``{field}`` where it forms a whole key component.
    """

    def __init__(self, delimiter: str) -> None:
        self.delimiter = delimiter
        self.shown: dict[str, str] = {}
        self.binary: dict[bytes, str] = {}

    def of(self, info: ModelInfo[Any]) -> dict[str, object]:
        values: dict[str, object] = {}
        for field, tp in info.field_types.items():
            value = _sample(field, tp)
            if value is None:
                continue
            if type(value) in (int, decimal.Decimal):  # not a bool, nor an IntEnum member
                # each number field its own, to be shown back by it
                value = cast("int", value) + len(self.shown)
            values[field] = value
            if isinstance(value, bytes):
                self.binary[value] = "{" + field + "}"
            elif not isinstance(value, str):
                self.shown[key_string(value)] = "{" + field + "}"
        return values

    def value(self, value: Any) -> str:
        """One attribute value of a request, quoted, placeholders shown as ``{field}``.

        A number (N) or binary (B) value is shown unquoted: ``Score = {score}``.
        """
        if isinstance(value, Mapping) and len(value) == 1:
            ((tag, value),) = value.items()
            if tag == "N" and isinstance(value, str):
                return self.shown.get(value, value)
            if tag == "B" and isinstance(value, bytes):
                return self.binary.get(value, repr(value))
        if not isinstance(value, str):
            return repr(value)
        parts = [self.shown.get(part, part) for part in value.split(self.delimiter)]
        return '"' + self.delimiter.join(parts).replace('"', '\\"') + '"'


# -- requests as one line each ----------------------------------------------------------------

_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")


def _expression(
    text: str, names: Mapping[str, str], values: Mapping[str, Any], samples: _Samples
) -> str:
    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in names:
            return names[token]
        return samples.value(values[token]) if token in values else token

    return _PLACEHOLDER.sub(one, text)


def _scope(params: Mapping[str, Any], home: str) -> str:
    index = params.get("IndexName")
    other = _elsewhere(params.get("TableName"), home)
    if index:
        return f"on {index}{other}"
    return f"on Table {params['TableName']!r}" if other else "on the table"


def _elsewhere(name: object, home: str) -> str:
    """`` of Table 'audit'`` for a request to another table than the design's (``home``)."""
    return f" of Table {name!r}" if home and name != home else ""


#: A model's sharded key attributes: attribute -> (the segment holding the shard, shards).
_Sharded = Mapping[str, tuple[int, int]]


def _sharded(info: ModelInfo[Any]) -> dict[str, tuple[int, int]]:
    return {
        attr: (template.shard_at, info.shards.get(attr, 0))
        for attr, template in info.templates.items()
        if template.shard_at is not None
    }


def _key_value(samples: _Samples, attr: str, value: Any, sharded: _Sharded) -> str:
    """A key attribute's value, its shard shown as ``{shard}``, not the samples' own shard."""
    shown = samples.value(value)
    if attr not in sharded:
        return shown
    parts = shown[1:-1].split(samples.delimiter)
    parts[sharded[attr][0]] = "{shard}"
    return '"' + samples.delimiter.join(parts) + '"'


def _shard_note(info: ModelInfo[Any], sharded: _Sharded, request: Request) -> str:
    """What ``{shard}`` stands for in the key ``request`` reads by: one of how many, from what."""
    key = request.params.get("Key", {})
    counts = sorted({n for attr, (_, n) in sharded.items() if attr in key})
    if not counts:
        return ""
    fields = ", ".join(_key_fields(info))
    return f" ({{shard}}: one of {' or '.join(map(str, counts))}, from {fields})"


def _line(
    request: Request, samples: _Samples, home: str = "", sharded: _Sharded | None = None
) -> str:
    """One request as a line; ``sharded``: the keys read by key whose shard to show as such."""
    params = request.params
    op = request.operation
    sharded = sharded or {}
    if op == "Query":
        text = _expression(
            params["KeyConditionExpression"],
            params.get("ExpressionAttributeNames", {}),
            params.get("ExpressionAttributeValues", {}),
            samples,
        )
        order = ", newest first" if params.get("ScanIndexForward") is False else ""
        line = f"Query {_scope(params, home)}: {text}{order}"
    elif op == "GetItem":
        line = f"GetItem{_elsewhere(params['TableName'], home)}: " + ", ".join(
            f"{k} = {_key_value(samples, k, v, sharded)}" for k, v in params["Key"].items()
        )
    elif op == "BatchGetItem":
        shown = "; ".join(
            ", ".join(f"{a} = {samples.value(v)}" for a, v in k.items())
            + _elsewhere(name, home).replace(" of ", " in ")
            for name, spec in params["RequestItems"].items()
            for k in spec["Keys"]
        )
        line = f"BatchGetItem: {shown}" if shown else "BatchGetItem: the table keys of each page"
    else:  # pragma: no cover - reads are the three above
        line = op
    return line


def _reads_whole_items(request: Request) -> bool:
    """The BatchGetItem that follows each page of an index holding items in part."""
    return request.operation == "BatchGetItem" and not any(
        spec["Keys"] for spec in request.params["RequestItems"].values()
    )


def _rounds(requests: Sequence[Request]) -> tuple[list[Request], list[Request]]:
    """Requests sent at once, and those that wait for their pages (whole-item reads)."""
    first = [r for r in requests if not _reads_whole_items(r)]
    return first, [r for r in requests if _reads_whole_items(r)]


#: A Query and what its count depends on (``CollectionLoad.note``): said after it.
Notes = Sequence[tuple[Request, str]]


def _phrase(request: Request, home: str, notes: Notes = ()) -> str:
    if request.operation == "Query":
        order = ", newest first" if request.params.get("ScanIndexForward") is False else ""
        note = next((f" ({n})" for r, n in notes if r == request), "")
        return f"1 Query {_scope(request.params, home)}{order}{note}"
    if _reads_whole_items(request):
        return "1 BatchGetItem per page (the index holds the items in part)"
    names = request.params.get("RequestItems") or [request.params.get("TableName")]
    others = [n for n in names if _elsewhere(n, home)]
    if others:  # one request reading another table (a BatchGetItem may read both)
        tables = " and ".join(f"Table {n!r}" for n in names)
        return f"1 {request.operation} of {tables}"
    return f"1 {request.operation}"


def _grouped(phrases: Sequence[str]) -> list[str]:
    """Equal Queries side by side said once: "8 Queries on the table in parallel".

    A sharded collection reads one Query per shard, all at once.
    """
    groups: list[tuple[str, int]] = []
    for phrase in phrases:
        if groups and groups[-1][0] == phrase and phrase.startswith("1 Query "):
            groups[-1] = (phrase, groups[-1][1] + 1)
        else:
            groups.append((phrase, 1))
    return [
        phrase if n == 1 else f"{n} Queries {phrase.removeprefix('1 Query ')} in parallel"
        for phrase, n in groups
    ]


def _cost(
    first: Sequence[Request], then: Sequence[Request], home: str = "", notes: Notes = ()
) -> str:
    phrases = _grouped([_phrase(r, home, notes) for r in first])
    cost = " + ".join(phrases)
    if len(phrases) > 1:
        cost += " (at once)"
    if then:
        cost += ", then " + " + ".join(_grouped([_phrase(r, home) for r in then]))
    return cost


# -- the design -------------------------------------------------------------------------------


def _call(info: ModelInfo[Any], fields: Sequence[str], extra: str = "") -> str:
    args = "".join(f", {f}=…" for f in fields)
    return f"db.get({info.name}{args}{extra})"


def _entity_rows(table: Table) -> list[EntityRow]:
    rows: list[EntityRow] = []
    for info in table.models.values():
        keys = {attribute: template.source for attribute, template in info.templates.items()}
        stored = [a for a in info.codec.attributes.values() if a not in keys]
        stored += [r.embedded.attribute for r in embedded_of(info) if r.embedded is not None]
        rows.append(EntityRow(info.entity or info.name, keys, tuple(stored)))
        rows += [
            EntityRow(
                rel.target_cls.__name__,
                {},
                tuple(a.name for a in attrs.fields(rel.target_cls)),
                inside=f"{info.name}.{rel.name}",
            )
            for rel in embedded_of(info)
            if rel.embedded is not None and rel.target_cls.__name__ not in table.models
        ]
    return rows


def _key_fields(info: ModelInfo[Any]) -> list[str]:
    pk, sk = info.key_templates()
    return list(dict.fromkeys(pk.fields + (sk.fields if sk else ())))


def _relationship_pattern(
    info: ModelInfo[Any],
    rel: Relationship[Any],
    table_name: str,
    values: Mapping[str, object],
    samples: _Samples,
) -> AccessPattern:
    key_fields = _key_fields(info)
    key = {f: values[f] for f in key_fields}

    def name_of(table: ModelTable) -> str:
        # Another table of the application: under its own name (the design's may be renamed).
        return table_name if table is info.table else table.name

    options = normalize_options(info, [rel])
    plan = plan_get(info, key, options, table_name, name_of=name_of)
    first, then = _rounds(plan.requests)
    then += plan.then  # a relationship with was=: the new layout, once the old is answered
    for option in plan.after_parent:
        later = option.relationship
        if isinstance(later, HasManyRelation) and later.was is not None:
            then += union_read(later, name_of(later.children_table), values).reads()
        elif isinstance(later, HasManyRelation):
            reads = later.children_reads(name_of(later.children_table), values)
            then += [read.request() for read in reads]
        elif isinstance(later, BelongsToRelation):
            parent_key = later.parent_key_from(values)
            if parent_key is not None:
                where = name_of(later.target_info.table)
                then.append(batch_get(where, {"Keys": [parent_key]}))
    strategy = rel.via.describe() if isinstance(rel, HasManyRelation) else "BelongsTo"
    if isinstance(rel, HasManyRelation) and rel.was is not None:
        strategy += f", was={rel.was.describe()} (the old layout read first)"
    if rel.crosses_tables:
        strategy += f" (Table {rel.target_info.table.name!r})"
    notes = [(c.read.request(), n) for c in plan.collections if (n := c.note()) is not None]
    cost = _cost(first, then, table_name, notes)
    if isinstance(rel, HasManyRelation) and rel.embedded is not None and rel.was is None:
        cost = "the parent's GetItem"
    return AccessPattern(
        name=f"{info.name}.{rel.name}",
        call=_call(info, key_fields, f", load=[{info.name}.{rel.name}]"),
        strategy=strategy,
        cost=cost,
        requests=tuple(_line(r, samples, table_name) for r in (*first, *then)),
    )


def _query_patterns(
    info: ModelInfo[Any], explain: Explain, values: Mapping[str, object], samples: _Samples
) -> list[AccessPattern]:
    found: list[AccessPattern] = []
    scopes: list[str | None] = [None, *(i for i in info.table.indexes if info.in_index(i))]
    for index in scopes:
        pk, sk = info.key_templates(index)
        if index is None and (sk is None or set(sk.fields) <= set(pk.fields)):
            continue  # one item per partition: reading it is the get by key
        components = {f: values[f] for f in pk.fields if f in values}
        if len(components) < len(pk.fields):
            continue  # a partition key field with no key text (cannot happen once declared)
        try:
            finished = explain.query_read(info, index, components)
        except (DefinitionError, KeyTemplateError):
            continue
        # What db.query sends: the Query, then whole items when the index holds them in part.
        then = [whole_item_reads(explain.table_name)] if finished.partial else []
        requests = [finished.read.request(), *then]
        found.append(_query_pattern(info, index, components, requests, samples))
        # A hierarchical sort key (``{state}#{city}#{zip}``) is queried at every level.
        levels = [f for f in (sk.fields if sk else ()) if f not in components]
        for level in levels[:-1]:
            if level not in values:
                break
            components = {**components, level: values[level]}
            requests = [explain.query_read(info, index, components).read.request(), *then]
            found.append(_query_pattern(info, index, components, requests, samples))
    return found


def _query_pattern(
    info: ModelInfo[Any],
    index: str | None,
    components: Mapping[str, object],
    requests: Sequence[Request],
    samples: _Samples,
) -> AccessPattern:
    args = "".join(f", {f}=…" for f in components)
    where = f", index={index!r}" if index else ""
    return AccessPattern(
        name=f"{info.name} by {', '.join(components)}" + (f" ({index})" if index else ""),
        call=f"db.query({info.name}{where}{args})",
        strategy="",
        cost=_cost(*_rounds(requests)),
        requests=tuple(_line(r, samples) for r in requests),
    )


def design(table: Table, *, table_name: str | None = None) -> Design:
    """The key table and the access patterns of ``table``, planned as they are sent.

    Every relationship is resolved first (``table.check()``), so a relationship naming a model
    that was never declared is a DefinitionError here, as on first use.
    """
    table.check()
    name = table_name or table.name
    explain = Explain(table, name, WritePlanner(table, name))
    samples = _Samples(table.delimiter)
    patterns: list[AccessPattern] = []
    for info in table.models.values():
        values = samples.of(info)  # a placeholder for each field that can be in a key
        key_fields = _key_fields(info)
        key = {f: values[f] for f in key_fields}
        get = plan_get(info, key, (), name).requests
        sharded = _sharded(info)
        patterns.append(
            AccessPattern(
                name=f"{info.name} by key",
                call=_call(info, key_fields),
                strategy="",
                cost=_cost(get, ()),
                requests=tuple(
                    _line(r, samples, sharded=sharded) + _shard_note(info, sharded, r) for r in get
                ),
            )
        )
        patterns += [
            _relationship_pattern(info, rel, name, values, samples)
            for rel in relationships_of(info).values()
        ]
        patterns += _query_patterns(info, explain, values, samples)
    indexes = {
        index: ", ".join(a for a in table.key_attributes(index) if a)
        + f" ({_projection(table, index)})"
        for index in table.indexes
    }
    return Design(
        table=name,
        key_attributes=tuple(table.attribute_names()),
        indexes=indexes,
        entities=tuple(_entity_rows(table)),
        patterns=tuple(patterns),
    )


def _projection(table: Table, index: str) -> str:
    projection = table.index(index).projection
    return projection if isinstance(projection, str) else "INCLUDE " + ", ".join(projection)
