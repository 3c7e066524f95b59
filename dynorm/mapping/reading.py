"""Planning reads beyond a key: filters, projections into views, counts, scans.

Pure: everything here decides what a Query or Scan sends and how its items become objects;
``dynorm/io/query.py`` sends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

import attrs
import msgspec

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import DefinitionError, ExpressionError, LimitExceededError
from dynorm.core.expressions import Condition, ExpressionBuilder, entity_is, path_steps
from dynorm.core.requests import CollectionRead, Rendered, ScanRead, upper_bound

from .model import ModelInfo, ModelTable, careful_decoder, resolve_field_types, typed_keys
from .table import Table

__all__ = [
    "Finished",
    "View",
    "count_match",
    "entity_filter",
    "finish_query",
    "finish_scan",
    "identifying",
    "models_in_range",
    "narrowed",
    "partial_of",
    "render_filter",
    "scan_match",
    "scan_read",
    "view_of",
    "view_reads_whole",
]

T = TypeVar("T")
V = TypeVar("V")
R = TypeVar("R", CollectionRead, ScanRead)


def render_filter(
    info: ModelInfo[Any] | None,
    condition: Condition,
    *,
    keys: tuple[str, ...] = (),
    index: str | None = None,
) -> Rendered:
    """A FilterExpression for ``condition``; field paths are sent as their stored attributes.

    Without a model (``db.scan(None)``) paths name stored attributes. A path that starts at one
    of ``keys`` (the key attributes a Query addresses, which DynamoDB refuses in its filters) is
    an ExpressionError, and so is an attribute that ``index`` does not project: DynamoDB
    filters the index's copies, where it would never match.
    """
    if not isinstance(condition, Condition):
        raise ExpressionError(
            f".filter() takes a condition such as Attr('status') == 'OK'; got {condition!r}"
        )
    builder = info.builder() if info is not None else ExpressionBuilder()
    translate = builder.renamer or path_steps
    touched: list[str] = []
    held = None if info is None or index is None else info.table.projected_attributes(index)

    def recording(path: str) -> list[tuple[str, str]]:
        steps = translate(path)
        touched.append(steps[0][0])
        if steps[0][0] in keys:
            what = f"{info.name}.{path}" if info is not None else repr(path)
            raise ExpressionError(
                f"{what} is stored in the key attribute {steps[0][0]!r}, which a Query "
                "addresses by its key condition and cannot filter on: give it as a key "
                "component (a value, or between/gt/begins_with...) instead of in .filter()"
            )
        if held is not None and steps[0][0] not in held:
            what = f"{info.name}.{path}" if info is not None else repr(path)
            raise ExpressionError(
                f"{what} is stored as {steps[0][0]!r}, which index {index!r} does not project, "
                "so a filter on it would match nothing; filter the items in Python after "
                "reading, or project the attribute into the index"
            )
        return steps

    builder.renamer = recording
    text = condition.render(builder)
    return Rendered(text, dict(builder.names), dict(builder.values))


def narrowed(
    accept: Callable[[Item], T | None], read: CollectionRead
) -> Callable[[Item], T | None]:
    """``accept``, also dropping the one sort key a ``gt``/``lt`` range lets through."""
    excluded, attr = read.excluded, read.sk_attr
    if excluded is None or attr is None:
        return accept

    def accept_in_range(raw: Item) -> T | None:
        if raw.get(attr, {}).get("S") == excluded:
            return None
        return accept(raw)

    return accept_in_range


def identifying(table: ModelTable, key_attrs: tuple[str, ...]) -> tuple[str, ...]:
    """The attributes that tell an item's model and place: its keys and the type attribute."""
    if table.type_attribute is None:
        return key_attrs
    return (*key_attrs, table.type_attribute)


def entity_filter(info: ModelInfo[Any], read: CollectionRead | None) -> Condition | None:
    """The filter on the type attribute a read of ``info``'s items needs, if any.

    Needed where another model's items may fall into the read (a scan; a query whose key range
    other models' templates reach): DynamoDB then drops them rather than sending them back.
    """
    if info.entity is None or info.table.type_attribute is None:
        return None
    others = len(info.table.models) > 1 if read is None else _others_in_range(info, read)
    return entity_is(info.table.type_attribute, info.entity) if others else None


def _others_in_range(info: ModelInfo[Any], read: CollectionRead) -> bool:
    """Whether another declared model can have items in ``read``'s key range."""
    return any(other is not info for other in models_in_range(info.table, read))


def models_in_range(table: ModelTable, read: CollectionRead) -> list[ModelInfo[Any]]:
    """The declared models whose items can be in ``read``'s key range (read from templates).

    A model's partition key template must be able to make the read's partition key, and the
    literal text its sort key starts with must be able to fall in the range (a sort key that
    starts with a field can fall anywhere).
    """
    low, high = read.range.span() if read.range is not None else ("", upper_bound(""))
    found = []
    for other in table.models.values():
        if read.index is not None and not other.in_index(read.index):
            continue
        pk, sk = other.key_templates(read.index)
        if not pk.matches(read.pk_value):
            continue
        first = sk.literal_prefix if sk is not None else ""
        if first <= high and low <= upper_bound(first):
            found.append(other)
    return found


def count_match(info: ModelInfo[Any], read: CollectionRead) -> Callable[[Item], bool] | None:
    """How to count ``info``'s items of ``read``: None when DynamoDB's Select=COUNT is exact.

    It is exact when no other declared model can have items in the queried key range of this
    partition, the range lets nothing through that the query excludes, and the table has no
    type attribute. Otherwise the count reads the identifying attributes only (keys, type
    attribute) and counts what ``.all()`` accepts (the same requests; more bytes come back). On
    a table with a type attribute that is always so: an entity no model declares (another
    service's) may sit in any range, and ``.all()`` drops it.
    """
    matches = info.tests(read.index).in_collection
    if read.excluded is not None:
        attr, excluded = read.sk_attr, read.excluded
        return lambda raw: matches(raw) and raw.get(attr or "", {}).get("S") != excluded
    return matches if _typed(info) or _others_in_range(info, read) else None


def scan_match(info: ModelInfo[Any], index: str | None) -> Callable[[Item], bool] | None:
    """How to count a scan of ``info``'s items: None when every scanned item is the model's.

    Never None on a table with a type attribute (see :func:`count_match`).
    """
    others = [m for m in info.table.models.values() if m is not info]
    if index is not None:
        others = [m for m in others if m.in_index(index)]
    if not others and not _typed(info):
        return None
    return info.tests(index).whole


def _typed(info: ModelInfo[Any]) -> bool:
    """Whether ``.all()`` tells ``info``'s items by the type attribute (dropping others')."""
    return info.entity is not None and info.table.type_attribute is not None


def scan_read(
    table: Table,
    table_name: str,
    index: str | None,
    *,
    segments: int,
    consistent: bool,
    models: tuple[str, ...],
) -> ScanRead:
    """The first segment's Scan of the table or ``index``."""
    if type(segments) is not int or not 1 <= segments <= 1_000_000:
        raise LimitExceededError(
            f"segments must be an int from 1 to 1000000 (DynamoDB's TotalSegments); "
            f"got {segments!r}"
        )
    return ScanRead(
        table_name=table_name,
        index=index,
        segments=segments,
        consistent=consistent and index is None,
        key_attrs=table.start_key_attributes(index),
        key_types=typed_keys(table, table.start_key_attributes(index)),
        models=models,
        parse=table.parser("Scan", index),
    )


class Finished(msgspec.Struct, Generic[R], frozen=True):
    """A read as it is sent: the filter on the type attribute added, whole-item fetches decided.

    ``db.query``, a relationship's ``.query()``, ``db.explain.query`` and ``db.scan`` all
    finish their reads here, so what ``explain`` shows is what is sent.
    """

    read: R
    #: the filter on the type attribute the read carries (None: none needed).
    entity: Condition | None
    #: the models whose items the index holds only in part, read whole after each page.
    partial: frozenset[str]


def finish_query(info: ModelInfo[Any], read: CollectionRead) -> Finished[CollectionRead]:
    """``read`` of ``info``'s items as ``db.query`` sends it (pure)."""
    where = entity_filter(info, read)
    if where is not None:
        keys = tuple(a for a in (read.pk_attr, read.sk_attr) if a)
        read = msgspec.structs.replace(read, filter=render_filter(info, where, keys=keys))
    return Finished(read, where, partial_of(info.table, read.index, (info.name,)))


def finish_scan(table: Table, info: ModelInfo[Any] | None, read: ScanRead) -> Finished[ScanRead]:
    """``read`` of ``info``'s items (None: of every model) as ``db.scan`` sends it (pure)."""
    where = None if info is None else entity_filter(info, None)
    if where is not None:
        read = msgspec.structs.replace(read, filter=render_filter(info, where))
    return Finished(read, where, partial_of(table, read.index, read.models))


def partial_of(table: ModelTable, index: str | None, models: tuple[str, ...]) -> frozenset[str]:
    """Which of ``models`` (all when empty) ``index`` holds in part: read whole by table key."""
    if index is None:
        return frozenset()
    partial = table.partial_models(index)
    return partial if not models else partial & frozenset(models)


def view_reads_whole(info: ModelInfo[Any], view: type[Any], index: str | None) -> bool:
    """Whether reading ``view``'s fields through ``index`` needs the whole items.

    Not when the index copies each field's own attribute or a key attribute it is parsed from.
    """
    projected = None if index is None else info.table.projected_attributes(index)
    if projected is None:
        return False
    for field in attrs.fields(view):
        held = [a for a, t in info.templates.items() if field.name in t.fields]
        if not any(a in projected for a in (info.codec.attributes[field.name], *held)):
            return True
    return False


class View(msgspec.Struct, Generic[V], frozen=True, eq=False):
    """How a projection reads a model's items into a view class of some of its fields."""

    cls: type[V]
    #: the stored attributes to read: each field's own and the key attributes holding it.
    attributes: tuple[str, ...]
    decode: Callable[[Mapping[str, AttributeValue]], V]

    def projection(self, key_attrs: tuple[str, ...]) -> tuple[str, ...]:
        """What to project: the view's attributes and the keys that tell models apart and page."""
        return tuple(dict.fromkeys((*key_attrs, *self.attributes)))


_views: dict[tuple[ModelInfo[Any], type], View[Any]] = {}


def view_of(info: ModelInfo[Any], cls: type[V]) -> View[V]:
    """The view of ``info``'s model as ``cls``: an attrs class with some of the model's fields.

    Each field of ``cls`` must be a field of the model of the same type, so every field a view
    holds is read from the database, never a placeholder.
    """
    found: View[V] | None = _views.get((info, cls))
    if found is None:
        found = _views[info, cls] = _build_view(info, cls)
    return found


def _build_view(info: ModelInfo[Any], cls: type[V]) -> View[V]:
    candidate: object = cls
    if not (isinstance(candidate, type) and attrs.has(candidate)):
        raise DefinitionError(
            f"project() takes an attrs class whose fields are some of {info.name}'s; got {cls!r}"
        )
    types = resolve_field_types(cls)
    for name, tp in types.items():
        if name not in info.field_types:
            raise DefinitionError(
                f"{cls.__name__}.{name} is not a field of {info.name}; a view holds some of "
                f"{info.name}'s fields ({', '.join(info.field_types)}) under their names"
            )
        if tp != info.field_types[name]:
            raise DefinitionError(
                f"{cls.__name__}.{name} is {tp!r}, but {info.name}.{name} is "
                f"{info.field_types[name]!r}; declare it with the model's type"
            )
    attributes: list[str] = []
    for name in types:
        attributes.append(info.codec.attributes[name])
        attributes += [k.attribute for k in info.key_fields.values() if name in k.parsers]
    if info.versions is not None:
        attributes.append(info.versions.attribute)  # an older item cannot be read in part
    # A view reads each field as the model does (a ttl field as epoch seconds, say).
    decode = careful_decoder(info, cls, f"{cls.__name__} (a view of {info.name})")
    # The type attribute too: it decides which model an item is.
    attributes = list(identifying(info.table, tuple(attributes)))
    return View(cls, tuple(dict.fromkeys(attributes)), decode)
