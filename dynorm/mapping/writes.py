"""Plans for single-item writes: PutItem, DeleteItem, UpdateItem (and their transaction forms)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final, Literal, TypedDict

import attrs

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, ExpressionError, KeyTemplateError, did_you_mean
from dynorm.core.expressions import Condition, ExpressionBuilder, render_update, top_field
from dynorm.core.requests import Request, Retry, condition_check, transact_write, update_item
from dynorm.core.stamps import VersionCheck

from .model import ModelInfo

__all__ = [
    "ReturnValues",
    "Returns",
    "UpdateOps",
    "UpdateOptions",
    "plan_check",
    "plan_delete",
    "plan_mark",
    "plan_put",
    "plan_put_keeping",
    "plan_update",
    "return_values",
    "transact_action",
    "transact_once",
]

#: DynamoDB's ReturnValues for an UpdateItem.
ReturnValues = Literal["ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD", "NONE"]


#: What DynamoDB's ADD works on: numbers and sets.
_ADDABLE = frozenset({"N", "SS", "NS", "BS"})


def _check_additions(info: ModelInfo[Any], add: Mapping[str, object]) -> None:
    """Refuse ``add=`` values DynamoDB's ADD cannot apply, or that break the field's type."""
    for path, value in add.items():
        if isinstance(value, set | frozenset) and not value:
            raise ExpressionError(
                f"{info.name}: add={{{path!r}: {value!r}}} adds nothing, and DynamoDB refuses an "
                "empty set; leave the path out of add="
            )
        tag = next(iter(info.codec.encode_path(path)(value)))
        if tag not in _ADDABLE:
            raise ExpressionError(
                f"{info.name}: add= adds numbers to numbers and sets to sets; {path!r} gets "
                f"{value!r}. Use set= to replace a value"
            )


def _conditioned(
    params: dict[str, Any],
    builder: ExpressionBuilder,
    condition: Condition | None,
    *,
    key_attr: str,
    require: str | None = None,
    version: VersionCheck | None = None,
    entity: Condition | None = None,
) -> dict[str, Any]:
    """Add the ConditionExpression and placeholders to ``params``.

    ``require`` (``"attribute_exists"`` or ``"attribute_not_exists"``) is applied to
    ``key_attr`` and ANDed with the caller's ``condition``, and so is the ``version`` check. A
    versioned write asks for the stored item when refused (free), to tell a version conflict
    from the caller's condition failing.
    """
    checked = None
    if version is not None:
        require, checked = version.key_requirement(require), version.condition()
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    parts = [] if require is None else [f"{require}({builder.attribute(key_attr)})"]
    if checked is not None:
        parts.append(checked.render(builder))
    if entity is not None:
        parts.append(f"({entity.render(builder)})")
    if condition is not None:
        rendered = condition.render(builder)
        parts.append(f"({rendered})" if parts else rendered)
    if parts:
        params["ConditionExpression"] = " AND ".join(parts)
    params.update(builder.params())
    return params


def _retry_for(
    condition: Condition | None, *, overwrite: bool = True, version: VersionCheck | None = None
) -> Retry:
    """A write refused by a condition of the caller's is checked when its reply was lost."""
    checked = condition is not None or not overwrite or version is not None
    return "verify" if checked else "safe"


def plan_put(
    info: ModelInfo[Any],
    obj: object,
    table_name: str,
    *,
    condition: Condition | None = None,
    overwrite: bool = True,
    item: Item | None = None,
    version: VersionCheck | None = None,
) -> Request:
    """PutItem for ``obj``; ``overwrite=False`` adds a condition that no item has its key.

    ``version``: the stored version the put requires (a new object: that no item exists).
    """
    params = {"TableName": table_name, "Item": item if item is not None else info.encode(obj)}
    conditioned = _conditioned(
        params,
        info.builder(),
        condition,
        key_attr=info.table.pk,
        require=None if overwrite else "attribute_not_exists",
        version=version,
    )
    return Request(
        "PutItem", conditioned, retry=_retry_for(condition, overwrite=overwrite, version=version)
    )


def plan_delete(
    info: ModelInfo[Any],
    key: Item,
    table_name: str,
    *,
    condition: Condition | None = None,
    version: VersionCheck | None = None,
) -> Request:
    """DeleteItem of ``key``; ``version``: the stored version it requires."""
    params: dict[str, Any] = {"TableName": table_name, "Key": key}
    return Request(
        "DeleteItem",
        _conditioned(
            params,
            info.builder(),
            condition,
            key_attr=info.table.pk,
            version=version,
            entity=info.entity_guard(),
        ),
        retry=_retry_for(condition, version=version),
    )


def plan_mark(
    info: ModelInfo[Any],
    key: Item,
    table_name: str,
    attribute: str,
    *,
    condition: Condition | None = None,
    version: VersionCheck | None = None,
) -> Request:
    """UpdateItem setting ``attribute`` to true on the stored item ``key``, and nothing else.

    It is refused (nothing written) unless the item exists and the caller's ``condition``, the
    ``version`` check and the model's entity guard hold: a delete's conditions, checked by a
    write that deletes nothing.
    """
    params: dict[str, Any] = {"TableName": table_name, "Key": key}
    builder = info.builder()
    assignment = f"SET {builder.attribute(attribute)} = {builder.value({'BOOL': True})}"
    params = _conditioned(
        params,
        builder,
        condition,
        key_attr=info.table.pk,
        require="attribute_exists",
        version=version,
        entity=info.entity_guard(),
    )
    params["UpdateExpression"] = assignment
    return Request("UpdateItem", params, retry="safe")


def plan_check(info: ModelInfo[Any], key: Item, table_name: str, condition: Condition) -> Request:
    """ConditionCheck of ``key`` (a transaction action): ``condition`` must hold."""
    builder = info.builder()
    rendered = condition.render(builder)
    return condition_check(table_name, key, rendered, **builder.params())


#: What ``db.update(..., returns=...)`` gives back.
Returns = Literal["new", "old", "updated_new", "updated_old"] | None
_WIRE: Final[dict[object, ReturnValues]] = {
    "new": "ALL_NEW",
    "old": "ALL_OLD",
    "updated_new": "UPDATED_NEW",
    "updated_old": "UPDATED_OLD",
    None: "NONE",
}


def return_values(returns: object, ops: UpdateOps) -> ReturnValues:
    """DynamoDB's ReturnValues for ``returns=``; ExpressionError for anything else.

    The ``updated_*`` forms ask for whole items when a path reaches inside a field: DynamoDB
    would return only part of that field, which cannot be read as its type.
    """
    try:
        wire = _WIRE[returns]
    except (KeyError, TypeError):
        raise ExpressionError(
            f"returns={returns!r}: give 'new', 'old', 'updated_new', 'updated_old' or None"
        ) from None
    if wire.startswith("UPDATED_") and any(top_field(p) != p for p in ops.paths()):
        return "ALL_NEW" if wire == "UPDATED_NEW" else "ALL_OLD"
    return wire


class UpdateOptions(TypedDict, total=False):
    """The operations ``db.update`` and ``tx.update`` take, as keywords (see :class:`UpdateOps`)."""

    set: Mapping[str, object] | None
    remove: Iterable[str]
    add: Mapping[str, object] | None
    append: Mapping[str, Sequence[object]] | None
    prepend: Mapping[str, Sequence[object]] | None
    discard: Mapping[str, AbstractSet[object]] | None
    if_not_exists: Mapping[str, object] | None


def _by_path(value: Mapping[str, object] | None) -> Mapping[str, object]:
    """A mapping of paths to values, copied (None: no path)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ExpressionError(
            f"update operations map field paths to values; got {value!r}: give a dict"
        )
    return dict(value)


def _removals(value: Iterable[str]) -> tuple[str, ...]:
    """The paths ``remove=`` names; a lone string would be read as its characters."""
    if isinstance(value, str):
        raise ExpressionError(f"remove={value!r} takes a list of paths: write remove=[{value!r}]")
    return tuple(value)


@attrs.frozen
class UpdateOps:
    """What one update does to an item, by field path (see ``db.update``).

    Built once from the caller's keywords (``UpdateOps(**options)``), which it copies and checks
    for shape; what the paths and values mean for a model is checked when the update is planned.
    """

    set: Mapping[str, object] = attrs.field(default=None, converter=_by_path)
    remove: tuple[str, ...] = attrs.field(default=(), converter=_removals)
    add: Mapping[str, object] = attrs.field(default=None, converter=_by_path)
    append: Mapping[str, object] = attrs.field(default=None, converter=_by_path)
    prepend: Mapping[str, object] = attrs.field(default=None, converter=_by_path)
    discard: Mapping[str, object] = attrs.field(default=None, converter=_by_path)
    if_not_exists: Mapping[str, object] = attrs.field(default=None, converter=_by_path)

    @property
    def by_amount(self) -> dict[str, str]:
        """Paths changed relative to what is stored (no whole new value is known): -> option."""
        named = {"add": self.add, "append": self.append, "prepend": self.prepend}
        named |= {"discard": self.discard, "if_not_exists": self.if_not_exists}
        return {path: option for option, values in named.items() for path in values}

    def relative_paths(self) -> list[str]:
        """The paths of ``by_amount``, once per option naming them (so a path twice shows)."""
        named = (self.add, self.append, self.prepend, self.discard, self.if_not_exists)
        return [path for values in named for path in values]

    def paths(self) -> list[str]:
        """Every path the update names (the caller's, before any are added)."""
        return [*self.set, *self.remove, *self.relative_paths()]


def _check_ops(info: ModelInfo[Any], ops: UpdateOps) -> None:
    """Refuse list and set operations on values they cannot apply to, before anything is sent."""
    for option, values in (("append", ops.append), ("prepend", ops.prepend)):
        for path, value in values.items():
            if isinstance(value, str | bytes) or not isinstance(value, list | tuple) or not value:
                raise ExpressionError(
                    f"{info.name}: {option}={{{path!r}: {value!r}}} takes a non-empty list of the "
                    "elements to add"
                )
            if not _holds(info, path, [], "L"):
                raise ExpressionError(
                    f"{info.name}: {option}= adds elements to lists; {path!r} is not a list field"
                )
    for path, value in ops.discard.items():
        if not isinstance(value, set | frozenset) or not value:
            raise ExpressionError(
                f"{info.name}: discard={{{path!r}: {value!r}}} takes a non-empty set of the "
                "elements to take out"
            )
        if not _holds(info, path, value, "SS", "NS", "BS"):
            raise ExpressionError(
                f"{info.name}: discard= takes elements out of sets; {path!r} is not a set field "
                f"that can hold {value!r}"
            )


def _holds(info: ModelInfo[Any], path: str, value: object, *tags: str) -> bool:
    """Whether the field at ``path`` stores ``value`` as one of the DynamoDB types ``tags``."""
    try:
        encoded = info.codec.encode_path(path)(value)
    except CodecError:
        return False
    return next(iter(encoded)) in tags


def _check_overlaps(info: ModelInfo[Any], paths: Iterable[str]) -> None:
    """DynamoDB refuses two changes to one path (or to a path and one inside it): say which."""
    seen: list[str] = []
    for path in paths:
        for other in seen:
            longer, shorter = (path, other) if len(path) >= len(other) else (other, path)
            if longer == shorter:
                raise ExpressionError(
                    f"update of {info.name} changes {path!r} twice; DynamoDB takes one change "
                    "per path: combine them, or send two updates"
                )
            if longer.startswith((f"{shorter}.", f"{shorter}[")):
                raise ExpressionError(
                    f"update of {info.name} changes {other!r} and {path!r}, which overlap; "
                    "DynamoDB takes one change per path: combine them"
                )
        seen.append(path)


def _check_paths(info: ModelInfo[Any], ops: UpdateOps, changed: Sequence[str]) -> None:
    unknown = [name for name in changed if top_field(name) not in info.field_types]
    if unknown:
        hint = did_you_mean(top_field(unknown[0]), list(info.field_types))
        raise KeyTemplateError(
            f"{info.name} has no field {unknown[0]!r}{hint}; update paths name fields, not "
            f"stored attribute names: {', '.join(info.field_types)}"
        )
    managed = [p for p in ops.paths() if top_field(p) in info.stamps.managed]
    if managed:
        raise ExpressionError(
            f"{info.name}.{top_field(managed[0])} is written by dynorm on every write "
            "(version=, created=, updated=); leave it out of the update"
        )
    identity = info.identity_fields()
    touched_keys = [top_field(name) for name in changed if top_field(name) in identity]
    if touched_keys:
        raise KeyTemplateError(
            f"{info.name}.{touched_keys[0]} is part of the primary key; to change it, put a new "
            "item and delete the old one (in a transaction)"
        )
    if not changed:
        raise KeyTemplateError(
            f"update of {info.name} changes nothing; give set=, remove=, add=, append=, "
            "prepend=, discard= or if_not_exists="
        )
    _check_overlaps(info, changed)
    _check_additions(info, ops.add)
    _check_ops(info, ops)


def _key_changes(
    info: ModelInfo[Any], current: Mapping[str, object], ops: UpdateOps, changed: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """(index key attributes to set, to remove) for fields the update changes.

    Index key attributes built from a changed field are rewritten (or removed when a field they
    need becomes None), so secondary indexes never go stale.
    """
    by_amount = ops.by_amount
    after = {**current, **ops.set, **dict.fromkeys(ops.remove)}
    primary = info.table.primary_attributes
    touched = {
        attr
        for attr, template in info.templates.items()
        if attr not in primary and {*template.fields} & {*changed}
    }
    # A key attribute is rebuilt from whole field values; a path inside one gives no value.
    inside = {top_field(name): name for name in changed if top_field(name) != name}
    for attr in sorted(touched):
        field = next((f for f in info.templates[attr].fields if f in by_amount), None)
        if field is not None:
            raise KeyTemplateError(
                f"{info.name}: {by_amount[field]}= cannot change {attr!r}'s fields; use set= "
                "with the new value"
            )
    for attr, template in sorted(info.templates.items()):
        field = next((f for f in template.fields if f in inside), None)
        if attr not in primary and field is not None:
            raise KeyTemplateError(
                f"{info.name}: {inside[field]!r} changes part of {field!r}, which {attr} is built "
                f"from; set the whole {field!r} so the key can be rebuilt"
            )
    # An index entry needs all of its key attributes, so they are written (or removed) together.
    touched |= info.table.index_partners(sorted(touched))
    unfillable = [
        attr for attr in touched if any(after[f] is None for f in info.templates[attr].fields)
    ]
    # A field's own attribute that keeps its value stays (the index entry is then just sparse).
    own = info.codec.attributes.values()
    partners = {a for a in info.table.index_partners(unfillable) if a not in own}
    raw_remove = sorted(partners | {*unfillable})
    raw_set: dict[str, Any] = {
        attr: info.key_attribute(attr, after) for attr in sorted(touched) if attr not in raw_remove
    }
    return raw_set, raw_remove


def _upsert_fill(
    info: ModelInfo[Any], fill: Item, changed: Sequence[str], keys: Iterable[str]
) -> dict[str, AttributeValue]:
    """The attributes of ``fill`` an upsert writes where missing (the ones it does not change)."""
    inside = [p for p in changed if top_field(p) != p]
    if inside:
        raise ExpressionError(
            f"{info.name}: upsert=True may create the item, and {inside[0]!r} is a path inside "
            f"{top_field(inside[0])!r}, which a new item does not have; change the whole field"
        )
    fields_of = {attr: name for name, attr in info.codec.attributes.items()}
    skip = {*info.table.primary_attributes, *keys, *(info.codec.attributes[c] for c in changed)}
    return {
        attr: value
        for attr, value in fill.items()
        if attr not in skip and fields_of.get(attr) not in changed
    }


def plan_update(
    info: ModelInfo[Any],
    current: Mapping[str, object],
    table_name: str,
    ops: UpdateOps,
    *,
    condition: Condition | None = None,
    upsert: Item | None = None,
    returns: ReturnValues = "ALL_NEW",
    stamped: Mapping[str, object] | None = None,
    version: VersionCheck | None = None,
) -> Request:
    """UpdateItem applying ``ops`` (by field path) to the item ``current`` describes.

    Index key attributes built from a changed field are rewritten (or removed when a field they
    need becomes None). Key fields cannot change: that is a new item. The item must exist,
    unless ``upsert`` gives the item to create (its attributes the update does not change are
    written where missing). ``stamped`` are dynorm's own values (``version``, ``updated``: set;
    ``created``: where missing), ``version`` the stored version required.
    """
    set_values = dict(ops.set)
    # An empty set field is no attribute at all (see the codec), so that ADD can fill it later.
    emptied = [name for name in info.codec.sets if name in set_values and not set_values[name]]
    for name in emptied:
        del set_values[name]
    removals = [*ops.remove, *emptied]
    ops = attrs.evolve(ops, set=set_values, remove=tuple(removals))
    changed = [*set_values, *removals, *ops.relative_paths()]
    _check_paths(info, ops, changed)
    raw_set, raw_remove = _key_changes(info, current, ops, changed)
    own = dict(stamped or {})
    created = info.stamps.created
    missing = dict(ops.if_not_exists) | ({created: own.pop(created)} if created in own else {})
    fill = (
        {}
        if upsert is None
        else _upsert_fill(info, upsert, [*changed, *own, *missing], {*raw_set, *raw_remove})
    )
    builder = info.builder()
    # A key-only field has no attribute of its own, and an identity field's attribute is its key:
    # the key attributes they fill are rewritten (or removed for None) by _key_changes.
    key_only = info.key_written
    expression = render_update(
        builder,
        set_values={p: v for p, v in {**set_values, **own}.items() if p not in key_only},
        set_raw=raw_set,
        remove=[p for p in removals if p not in key_only],
        remove_raw=raw_remove,
        add=ops.add,
        append=ops.append,
        prepend=ops.prepend,
        discard=ops.discard,
        if_not_exists=missing,
        missing_raw=fill,
    )
    # Updating must never create a half item: require that it exists (an upsert fills it).
    require = None if upsert is not None else "attribute_exists"
    params: dict[str, Any] = {"ReturnValues": returns}
    guard = info.entity_guard()
    if info.versions is not None:
        # Never a mixed shape: an item stored at an older schema version is refused (and sent
        # back with the refusal, to say so: StaleItemError).
        at_version = info.versions.guard(info.table.pk, upsert=upsert is not None)
        guard = at_version if guard is None else guard & at_version
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    conditioned = _conditioned(
        params,
        builder,
        condition,
        key_attr=info.table.pk,
        require=require,
        version=version,
        entity=guard,
    )
    # ADD, list and set operations, and a list element set or removed by position, change the
    # item again when repeated.
    repeats = bool(ops.add or ops.append or ops.prepend or ops.discard)
    repeats = repeats or any("[" in name for name in changed)
    retry: Retry = "token" if repeats else _retry_for(condition, version=version)
    return update_item(
        table_name, info.primary_key(current), expression, retry=retry, **conditioned
    )


def plan_put_keeping(
    info: ModelInfo[Any],
    obj: object,
    table_name: str,
    *,
    embedded: Mapping[str, AttributeValue | None],
    empty: Mapping[str, AttributeValue] | None = None,
    kept: Sequence[str] = (),
    condition: Condition | None = None,
    overwrite: bool = True,
    version: VersionCheck | None = None,
) -> Request:
    """A put for a model with embedded children, as an UpdateItem that keeps them.

    PutItem replaces the whole item, which would drop children the object does not carry.
    This writes every field and key attribute instead; each embedded attribute is written
    whole when its children are known (``embedded[attr]``), else created empty if missing:
    as ``empty[attr]`` (a list form needs ``{"L": []}``), by default an empty map. ``kept``
    attributes are left as stored, never created: the old embedded layout of a ``was=``
    relationship, whose children no object carries.
    """
    item = info.encode(obj)
    known = {attr: value for attr, value in embedded.items() if value is not None}
    if known:
        info.check_item({**item, **known})  # the item as it will be stored, children included
    builder = info.builder()
    primary = set(info.table.primary_attributes)
    assignments = [
        f"{builder.attribute(name)} = {builder.value(av)}"
        for name, av in item.items()
        if name not in primary
    ]
    for attr, value in embedded.items():
        name = builder.attribute(attr)
        if value is None:
            initial = builder.value((empty or {}).get(attr, {"M": {}}))
            assignments.append(f"{name} = if_not_exists({name}, {initial})")
        else:
            assignments.append(f"{name} = {builder.value(value)}")
    # Attributes the object no longer fills must go, as PutItem would: index keys whose field
    # became None, and set fields that became empty (the codec leaves those out).
    stale = [
        builder.attribute(a)
        for a in (*info.templates, *info.codec.attributes.values())
        if a not in item and a not in primary
    ]
    expression = "SET " + ", ".join(assignments) + (f" REMOVE {', '.join(stale)}" if stale else "")
    require = None if overwrite else "attribute_not_exists"
    params: dict[str, Any] = {}
    guard = None
    if info.versions is not None and (kept or None in embedded.values()):
        # Children kept as stored would be an older version's under the current one: refused
        # (StaleItemError) unless the stored item is at the version, or absent.
        guard = info.versions.guard(info.table.pk, upsert=True)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    conditioned = _conditioned(
        params,
        builder,
        condition,
        key_attr=info.table.pk,
        require=require,
        version=version,
        entity=guard,
    )
    key = {name: item[name] for name in info.table.primary_attributes}
    retry = _retry_for(condition, overwrite=overwrite, version=version)
    return update_item(table_name, key, expression, retry=retry, **conditioned)


_TRANSACT_KINDS: Final = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}


#: Parameters of single-item writes a transaction action does not take (or dynorm does not use
#: there: a cancellation's reasons are enough to tell a version conflict).
_NOT_IN_TRANSACTIONS: Final = frozenset({"ReturnValues", "ReturnValuesOnConditionCheckFailure"})


def transact_action(request: Request) -> dict[str, Any]:
    """The TransactWriteItems action for a single-item write (which takes no ReturnValues)."""
    params = {k: v for k, v in request.params.items() if k not in _NOT_IN_TRANSACTIONS}
    return {_TRANSACT_KINDS.get(request.operation, "ConditionCheck"): params}


def transact_once(request: Request) -> Request:
    """``request`` (a single-item write) as a TransactWriteItems of that one action.

    The transport gives it a ``ClientRequestToken`` made once per call and sent with every
    attempt, so DynamoDB applies it once however its replies are lost (``exactly_once=True``).
    The action keeps the write's Key, expressions and placeholders, and its
    ``ReturnValuesOnConditionCheckFailure`` (a refusal then carries the stored item, as the
    write's own would); no write token is added (``request.retry`` no longer applies: a
    transaction is resent as it is).
    """
    ((kind, params),) = transact_action(request).items()
    asked = request.params.get("ReturnValuesOnConditionCheckFailure")
    if asked is not None:
        params["ReturnValuesOnConditionCheckFailure"] = asked
    return transact_write([{kind: params}])
