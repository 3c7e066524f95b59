"""``db.explain``: the exact requests a call would send, planned without sending anything."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ._errors import DefinitionError
from ._expressions import Condition
from ._loading import GetPlan, normalize_options, plan_get
from ._model import ModelInfo
from ._plans import CollectionRead, KeyRange, Request
from ._relations import LoadOption, Relationship, collection_read
from ._state import held_items
from ._table import Table
from ._writes import plan_delete, plan_put, plan_put_keeping

__all__ = ["Explain"]


@attrs.define
class Explain:
    """``db.explain``: the exact requests a call would send, without sending anything."""

    table: Table
    table_name: str

    def get_plan(
        self,
        model: type[Any],
        *,
        load: Sequence[Relationship[Any, Any] | LoadOption] = (),
        consistent: bool = False,
        **key: object,
    ) -> GetPlan:
        info = self.table.info(model)
        return plan_get(
            info, key, normalize_options(info, load), self.table_name, consistent=consistent
        )

    def get(
        self,
        model: type[Any],
        *,
        load: Sequence[Relationship[Any, Any] | LoadOption] = (),
        consistent: bool = False,
        **key: object,
    ) -> list[Request]:
        """The first round of requests ``db.get`` would send (sent concurrently)."""
        return self.get_plan(model, load=load, consistent=consistent, **key).requests

    def put(
        self, obj: object, *, condition: Condition | None = None, overwrite: bool = True
    ) -> Request:
        info = self.table.info(type(obj))
        table_name = self.table_name
        if not info.embedded:
            return plan_put(info, obj, table_name, condition=condition, overwrite=overwrite)
        embedded: dict[str, Any] = {}
        empty: dict[str, Any] = {}
        for rel in info.embedded:
            assert rel.embedded is not None  # noqa: S101 - info.embedded holds embedded ones only
            children = held_items(obj, rel.name)
            embedded[rel.embedded.attribute] = (
                rel.embedded.encode(children) if children is not None else None
            )
            empty[rel.embedded.attribute] = rel.embedded.empty()
        return plan_put_keeping(
            info,
            obj,
            table_name,
            embedded=embedded,
            empty=empty,
            condition=condition,
            overwrite=overwrite,
        )

    def delete(
        self, target: object, /, *, condition: Condition | None = None, **key: object
    ) -> Request:
        info: ModelInfo[Any]
        if isinstance(target, type):
            info = self.table.info(target)
            info.check_key_values(key)
            primary = info.primary_key(key)
        else:
            if key:
                raise TypeError("db.delete(obj) takes no key fields; use db.delete(Model, **key)")
            info = self.table.info(type(target))
            primary = info.key_of(target)
        return plan_delete(info, primary, self.table_name, condition=condition)

    def query(
        self,
        model: type[Any],
        index: str | None = None,
        *,
        consistent: bool = False,
        **components: object,
    ) -> Request:
        info = self.table.info(model)
        return self.query_read(info, index, components, consistent=consistent).request()

    def query_read(
        self,
        info: ModelInfo[Any],
        index: str | None,
        components: Mapping[str, object],
        *,
        consistent: bool = False,
    ) -> CollectionRead:
        """The collection read behind ``db.query``."""
        pk, sk = info.key_templates(index)
        known = set(pk.fields) | set(sk.fields if sk else ())
        unknown = [name for name in components if name not in known]
        if unknown:
            raise DefinitionError(
                f"db.query({info.name}{', index=' + repr(index) if index else ''}) addresses items "
                f"by {', '.join(sorted(known))}; {', '.join(unknown)} is not a key component"
            )
        missing = [f for f in pk.fields if f not in components]
        if missing:
            raise DefinitionError(
                f"db.query({info.name}) needs the whole partition key {pk.source!r}: "
                f"missing {', '.join(missing)}"
            )
        range_ = KeyRange.from_template(sk, components) if sk is not None else None
        return collection_read(
            info, index, self.table_name, pk.format(components), range_, consistent=consistent
        )
