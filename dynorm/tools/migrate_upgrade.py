"""The ``upgrade`` migration: items of a versioned model rewritten at its current schema version.

``upgrade_items(db, Model)`` (``dynorm migrate app:table Model --upgrade``) runs it through the
migration runner (``dynorm.tools.migrate_run``): Scan pages, checkpoints, workers, verification.
Each item of the model below ``schema_version`` is upgraded as a read upgrades it (the model's
``upgrades`` chain), decoded and encoded by the model, and rewritten in place: the attributes
that changed are set, those the upgrade took out removed, with an UpdateItem conditioned on
every attribute being as the run read it (so a writer's change meanwhile makes it fail, and the
item is left for the next run, which reads it afresh). Attributes the model does not declare
are kept as the upgrade left them.

A child of a relationship declaring ``was=`` whose old layout is a collection (``Partition``,
``Index``, shards) may still be stored at its old keys, where the model's key templates do not
find it: it is recognised as the relationship's union reads and migration recognise it
(``ItemMove``), and upgraded in place at the keys it is stored under (the migration moves it
later, as it is then). Children in an old ``Embedded`` map are no items: they are upgraded when
they move out of it (``EmbeddedItems``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import CodecError, LimitExceededError
from dynorm.core.expressions import ExpressionBuilder, render_update
from dynorm.core.requests import Request, update_item
from dynorm.core.unchanged import Unchanged
from dynorm.io.database import Database
from dynorm.mapping.model import ModelInfo
from dynorm.mapping.oldlayout import ItemMove
from dynorm.mapping.relations import HasManyRelation, relationships_of
from dynorm.mapping.table import Table
from dynorm.wire.retry import same_value

from .migrate_kinds import Expected, MigrationKind, PagePlan, Reach, Unit

__all__ = ["Upgrade"]


@attrs.define
class _Rewrite(Unit):
    """A unit whose rewrite is conditioned on the whole item as read, not only what changes."""

    def rewrite_request(self, table_name: str, old: Item, new: Item) -> Request:
        table = self.model.table
        changed = {k: v for k, v in new.items() if k not in old or not same_value(old[k], v)}
        gone = [k for k in old if k not in new]
        builder = ExpressionBuilder()
        expression = render_update(
            builder, set_values={}, set_raw=changed, remove=(), add={}, remove_raw=gone
        )
        exists = f"attribute_exists({builder.attribute(table.pk)})"
        same = Unchanged(old, tuple(dict.fromkeys([*old, *changed]))).render(builder)
        key = {a: old[a] for a in table.primary_attributes}
        return update_item(
            table_name,
            key,
            expression,
            ConditionExpression=f"{exists} AND {same}",
            **builder.params(),
        )


class Upgrade:
    """Every item of a versioned model below its schema version, rewritten at it."""

    kind: MigrationKind = "upgrade"

    def __init__(self, info: ModelInfo[Any]) -> None:
        if info.versions is None:  # pragma: no cover - upgrade_items refuses it first
            raise ValueError(f"{info.name} declares no schema_version")
        self.info = info
        self.versions = info.versions
        self._found: list[ItemMove] | None = None

    @property
    def subject(self) -> str:
        return f"{self.info.name}: items below schema version {self.versions.current}"

    def fingerprint(self) -> dict[str, object]:
        return {"model": self.info.name, "schema_version": self.versions.current}

    def upgraded(self, raw: Mapping[str, AttributeValue]) -> Item | None:
        """The item ``raw`` becomes at the current version; None when it is there already.

        CodecError when it is newer, or does not upgrade or decode (UpgradeError for the
        upgrade); LimitExceededError when the upgraded item is too big to store.
        """
        info = self.info
        if self.versions.version_of(raw) == self.versions.current:
            return None
        upgraded = dict(info.upgraded(raw))
        encoded = info.encode(info.decode(upgraded))
        # Key attributes the templates leave out now (a sparse index's field became None) go.
        stale_keys = [a for a in info.templates if a not in encoded]
        new = {k: v for k, v in {**upgraded, **encoded}.items() if k not in stale_keys}
        table = info.table
        moved = [
            a
            for a in table.primary_attributes
            if a not in new or a not in raw or not same_value(new[a], raw[a])
        ]
        if moved:
            raise CodecError(
                f"the upgrade to version {self.versions.current} changes its table key "
                f"({', '.join(moved)}); an upgrade rewrites items in place, so the key must stay"
            )
        return new

    def old_layout(self, table: Table, raw: Item) -> Item | None:
        """``raw`` upgraded in place when it is a child still in a ``was=`` layout.

        None when it is no such child, or at the current version. Its key attributes stay as
        stored: it is upgraded where it is, and moves later as the migration finds it.
        """
        for move in self._moves(table):
            moved = move.moved_item(raw)  # CodecError: its child does not decode (skipped)
            if moved is None:
                continue
            if self.versions.version_of(raw) == self.versions.current:
                return None
            upgraded = dict(self.info.upgraded(raw))
            encoded = self.info.encode(self.info.decode(moved))
            keys = move.key_attributes
            new = {
                **{k: v for k, v in {**upgraded, **encoded}.items() if k not in keys},
                **{k: v for k, v in raw.items() if k in keys},
            }
            again = move.moved_item(new)
            if again is None or {a: again.get(a) for a in keys} != {a: moved.get(a) for a in keys}:
                raise CodecError(
                    f"the upgrade to version {self.versions.current} changes the key of a "
                    f"{self.info.name} still in the old layout of {move.rel.qualname}; an upgrade "
                    "rewrites items in place: run migrate() first, then upgrade_items()"
                )
            return new
        return None

    def _moves(self, table: Table) -> list[ItemMove]:
        """How the model's children still in a ``was=`` collection read (one a relationship)."""
        found = self._found
        if found is None:
            found = self._found = [
                ItemMove(rel, rel.was)
                for model in table.models.values()
                for rel in relationships_of(model).values()
                if isinstance(rel, HasManyRelation)
                and rel.target_info is self.info
                and rel.was is not None
                and rel.embedded is None
                and rel.was.embedded_codec(rel) is None
            ]
        return found

    def plan_page(self, table: Table, items: Sequence[Mapping[str, AttributeValue]]) -> PagePlan:
        plan = PagePlan()
        for raw in items:
            item = {name: raw[name] for name in raw}
            found = table.model_of(item)
            if found is not None and found is not self.info:
                continue
            try:
                new = self.upgraded(item) if found is not None else self.old_layout(table, item)
            except (CodecError, LimitExceededError) as exc:
                plan.set_aside(table, item, exc)
                continue
            if new is not None:
                plan.units.append(_Rewrite(self.info, rewrites=[(item, new)]))
        return plan

    async def plan(self, db: Database, items: Sequence[Item]) -> PagePlan:
        return self.plan_page(db.table, items)

    async def reach(self, db: Database, items: Sequence[Item], expected: Expected) -> Reach:
        # The check is the plan's: an item still below the version is a leftover.
        return Reach()
