"""``upgrade_items`` reaches the children still in a relationship's old layout (``was=``).

Such a child is stored at its old keys, where the model's templates do not find it; it is
upgraded in place there (the migration moves it later), checked against the raw items.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import GSI, HasMany, Index, Partition, Table
from dynorm.migrations import migrate, upgrade_items
from dynorm.testing import Connect

from .raw import raw_item, raw_put

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


def _nick_to_name(item: dict[str, Any]) -> dict[str, Any]:
    if item["nick"] == "bad":
        raise ValueError("no name")
    item["name"] = item.pop("nick")
    return item


table = Table("upgrade-was", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="G1PK", sk="G1SK")])


@table.model(pk="T#{tid}", sk="#T#{tid}", GSI1=("T#{tid}", "#T#{tid}"))
class Team:
    tid: str
    members = HasMany["Member"](via=Index("GSI1"), was=Partition())


@table.model(
    pk="M#{tid}#{mid}",
    sk="M#{tid}#{mid}",
    GSI1=("T#{tid}", "MEMBER#{mid}"),
    schema_version=2,
    upgrades={1: _nick_to_name},
)
class Member:
    tid: str
    mid: str
    name: str


def _old(mid: str, nick: str) -> dict[str, Any]:
    """A version 1 member in the old layout (``was=Partition()``), with an undeclared note."""
    return {"pk": {"S": "T#t"}, "sk": {"S": f"MEMBER#{mid}"}, "tid": {"S": "t"},
            "mid": {"S": mid}, "nick": {"S": nick}, "note": {"S": "kept"}}  # fmt: skip


async def test_upgrade_items_upgrades_children_still_in_an_old_layout_in_place(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(table) as db:
        await db.put(Team("t"))
        await raw_put(db, _old("m1", "Ada"))
        report = await upgrade_items(db, Member)
        assert report.ok, report
        assert not report.skipped, report
        assert report.written == 1
        stored = await raw_item(db, {"pk": "T#t", "sk": "MEMBER#m1"})
        assert stored is not None
        assert {k: v for k, v in stored.items() if not k.startswith("dynorm:")} == {
            "pk": {"S": "T#t"},
            "sk": {"S": "MEMBER#m1"},
            "tid": {"S": "t"},
            "mid": {"S": "m1"},
            "name": {"S": "Ada"},
            "note": {"S": "kept"},
            "_v": {"N": "2"},
        }
        team = await db.get(Team, tid="t", load=[Team.members])
        assert team.members.loaded == [Member("t", "m1", "Ada")]
        again = await upgrade_items(db, Member)
        assert again.ok, again
        assert again.written == 0
        moved = await migrate(db, Team.members)
        assert moved.ok, moved
        now = await raw_item(db, {"pk": "M#t#m1", "sk": "M#t#m1"})
        assert now is not None
        assert (now["_v"], now["name"]) == ({"N": "2"}, {"S": "Ada"})


async def test_an_old_layout_child_that_does_not_upgrade_is_skipped_and_listed(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(table) as db:
        await db.put(Team("t"))
        await raw_put(db, _old("m2", "bad"))
        report = await upgrade_items(db, Member)
        assert report.skipped, report
        assert any("MEMBER#m2" in s for s in report.skipped), report.skipped
        stored = await raw_item(db, {"pk": "T#t", "sk": "MEMBER#m2"})
        assert stored is not None
        assert "_v" not in stored
