"""Plans for single-item writes: PutItem, DeleteItem, UpdateItem (and their transaction forms)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from ._codec import AttributeValue, Item
from ._errors import ExpressionError, KeyTemplateError
from ._expressions import Condition, ExpressionBuilder, render_update, top_field
from ._model import ModelInfo
from ._plans import Request, Retry

__all__ = ["plan_delete", "plan_put", "plan_put_keeping", "plan_update", "transact_action"]


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
    require: str | None = None,
    key_attr: str = "",
) -> dict[str, Any]:
    """Add the ConditionExpression and placeholders to ``params``.

    ``require`` (``"attribute_exists"`` or ``"attribute_not_exists"``) is applied to
    ``key_attr`` and ANDed with the caller's ``condition``.
    """
    parts = [] if require is None else [f"{require}({builder.attribute(key_attr)})"]
    if condition is not None:
        rendered = condition.render(builder)
        parts.append(f"({rendered})" if parts else rendered)
    if parts:
        params["ConditionExpression"] = " AND ".join(parts)
    params.update(builder.params())
    return params


def _retry_for(condition: Condition | None, *, overwrite: bool = True) -> Retry:
    """A write refused by a condition of the caller's is checked when its reply was lost."""
    return "verify" if condition is not None or not overwrite else "safe"


def plan_put(
    info: ModelInfo[Any],
    obj: object,
    table_name: str,
    *,
    condition: Condition | None = None,
    overwrite: bool = True,
    item: Item | None = None,
) -> Request:
    """PutItem for ``obj``; ``overwrite=False`` adds a condition that no item has its key."""
    params = {"TableName": table_name, "Item": item if item is not None else info.encode(obj)}
    require = None if overwrite else "attribute_not_exists"
    return Request(
        "PutItem",
        _conditioned(params, info.builder(), condition, require=require, key_attr=info.table.pk),
        retry=_retry_for(condition, overwrite=overwrite),
    )


def plan_delete(
    info: ModelInfo[Any], key: Item, table_name: str, *, condition: Condition | None = None
) -> Request:
    params: dict[str, Any] = {"TableName": table_name, "Key": key}
    return Request(
        "DeleteItem", _conditioned(params, info.builder(), condition), retry=_retry_for(condition)
    )


def plan_update(
    info: ModelInfo[Any],
    current: Mapping[str, object],
    table_name: str,
    *,
    set: Mapping[str, object] | None = None,  # noqa: A002 - mirrors DynamoDB's SET clause
    remove: Iterable[str] = (),
    add: Mapping[str, object] | None = None,
    condition: Condition | None = None,
) -> Request:
    """UpdateItem changing some fields of the item ``current`` describes.

    Index key attributes built from a changed field are rewritten (or removed when a field they
    need becomes None), so secondary indexes never go stale. Key fields cannot change: that is a
    new item.
    """
    set_values = dict(set or {})
    add_values = dict(add or {})
    # An empty set field is no attribute at all (see the codec), so that ADD can fill it later.
    emptied = [name for name in info.codec.sets if name in set_values and not set_values[name]]
    for name in emptied:
        del set_values[name]
    removals = [*remove, *emptied]
    changed = [*set_values, *removals, *add_values]
    unknown = [name for name in changed if top_field(name) not in info.field_types]
    if unknown:
        raise KeyTemplateError(
            f"{info.name} has no field {unknown[0]!r}; fields: {', '.join(info.field_types)}"
        )
    identity = info.identity_fields()
    touched_keys = [top_field(name) for name in changed if top_field(name) in identity]
    if touched_keys:
        raise KeyTemplateError(
            f"{info.name}.{touched_keys[0]} is part of the primary key; to change it, put a new "
            "item and delete the old one (in a transaction)"
        )
    if not changed:
        raise KeyTemplateError(f"update of {info.name} changes nothing; give set=, remove= or add=")
    _check_additions(info, add_values)
    after = {**current, **set_values, **dict.fromkeys(removals)}
    primary = info.table.primary_attributes
    touched = {
        attr
        for attr, template in info.templates.items()
        if attr not in primary and {*template.fields} & {*changed}
    }
    # A key attribute is rebuilt from whole field values; a path inside one gives no value.
    inside = {top_field(name): name for name in changed if top_field(name) != name}
    for attr in sorted(touched):
        if any(name in add_values for name in info.templates[attr].fields):
            raise KeyTemplateError(
                f"{info.name}: add= cannot change {attr!r}'s fields; use set= with the new value"
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
    raw_remove = sorted(info.table.index_partners(unfillable) | {*unfillable})
    raw_set: dict[str, Any] = {
        attr: {"S": info.key_value(attr, after)}
        for attr in sorted(touched)
        if attr not in raw_remove
    }
    builder = info.builder()
    # A key-only field has no attribute of its own: only the key attributes it fills change.
    key_only = info.codec.key_only
    expression = render_update(
        builder,
        set_values={p: v for p, v in set_values.items() if p not in key_only},
        set_raw=raw_set,
        remove=[p for p in removals if p not in key_only],
        remove_raw=raw_remove,
        add=add_values,
    )
    params: dict[str, Any] = {
        "TableName": table_name,
        "Key": info.primary_key(current),
        "UpdateExpression": expression,
        "ReturnValues": "ALL_NEW",
    }
    # Updating must never create a half item: require that it exists.
    _conditioned(params, builder, condition, require="attribute_exists", key_attr=info.table.pk)
    # ADD, and a list element set or removed by position, change the item again when repeated.
    repeats = bool(add_values) or any("[" in name for name in changed)
    return Request("UpdateItem", params, retry="token" if repeats else _retry_for(condition))


def plan_put_keeping(
    info: ModelInfo[Any],
    obj: object,
    table_name: str,
    *,
    embedded: Mapping[str, AttributeValue | None],
    empty: Mapping[str, AttributeValue] | None = None,
    condition: Condition | None = None,
    overwrite: bool = True,
) -> Request:
    """A put for a model with embedded children, as an UpdateItem that keeps them.

    PutItem replaces the whole item, which would drop children the object does not carry.
    This writes every field and key attribute instead; each embedded attribute is written
    whole when its children are known (``embedded[attr]``), else created empty if missing:
    as ``empty[attr]`` (a list form needs ``{"L": []}``), by default an empty map.
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
    params: dict[str, Any] = {
        "TableName": table_name,
        "Key": {name: item[name] for name in info.table.primary_attributes},
        "UpdateExpression": expression,
    }
    require = None if overwrite else "attribute_not_exists"
    _conditioned(params, builder, condition, require=require, key_attr=info.table.pk)
    return Request("UpdateItem", params, retry=_retry_for(condition, overwrite=overwrite))


_TRANSACT_KINDS: Final = {"PutItem": "Put", "UpdateItem": "Update", "DeleteItem": "Delete"}


def transact_action(request: Request) -> dict[str, Any]:
    """The TransactWriteItems action for a single-item write (which takes no ReturnValues)."""
    params = {k: v for k, v in request.params.items() if k != "ReturnValues"}
    return {_TRANSACT_KINDS.get(request.operation, "ConditionCheck"): params}
