"""Back from shards with ``was=``: where the old ``{shard}`` segment is, readers and the
migration agree.

The reads (and writes) of ``was=Partition(shards=N)`` query each old shard's partition with the
shard segment last (``S#{pid}#{shard}``). A child stored with it elsewhere (``S#{shard}#{pid}``)
is not seen by them: the live migration does not move it either (a child would appear that the
readers never saw, and writes of it would not take its old copy) but skips and lists it, and
``migration_status`` counts it, so ``was=`` is not deleted while it is there. A migration from
``from_=`` without ``was=`` (writers stopped) finds it at any position.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynorm import HasMany, Partition, Table
from dynorm.migrations import migrate, migration_status
from dynorm.testing import Connect, RunningServer
from tests.faultproxy import connect_to

from .raw import raw_scan

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


def _old(name: str, pk: str) -> tuple[Table, type[Any], type[Any]]:
    table = Table(name, pk="pk", sk="sk")

    @table.model(pk="S#{pid}", sk="#S#{pid}")
    class Parent0:
        pid: str
        kids = HasMany["Kid0"](via=Partition(shards=2))

    @table.model(pk=pk, sk="KID#{name}")
    class Kid0:
        pid: str
        name: str

    return table, Parent0, Kid0


def _new(name: str, was: Partition | None) -> tuple[Table, type[Any]]:
    table = Table(name, pk="pk", sk="sk")

    @table.model(pk="S#{pid}", sk="#S#{pid}")
    class Parent:
        pid: str
        kids = HasMany["Kid"](via=Partition(), was=was)

    @table.model(pk="S#{pid}", sk="KID#{name}")
    class Kid:
        pid: str
        name: str

    return table, Parent


mid_old, MidParent0, MidKid0 = _old("was-midshard", "S#{shard}#{pid}")
last_old, LastParent0, LastKid0 = _old("was-midshard", "S#{pid}#{shard}")
live, LiveParent = _new("was-midshard", Partition(shards=2))
stopped, StoppedParent = _new("was-midshard", None)

NAMES = ["x", "y", "z"]


async def test_children_whose_shard_segment_is_last_are_read_and_moved(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(live) as db,
        connect_to(dynorm_server.url, last_old, db.table_name) as old,
    ):
        await old.put_all([LastParent0("a"), *(LastKid0("a", n) for n in NAMES)])
        assert await migration_status(db, LiveParent.kids) == 3
        found = await db.get(LiveParent, pid="a", load=[LiveParent.kids])
        assert [k.name for k in found.kids.loaded] == NAMES
        report = await migrate(db, LiveParent.kids)
        assert report.ok, report
        assert not report.skipped, report
        assert await migration_status(db, LiveParent.kids) == 0
        again = await db.get(LiveParent, pid="a", load=[LiveParent.kids])
        assert [k.name for k in again.kids.loaded] == NAMES


async def test_a_live_run_skips_and_lists_children_readers_do_not_see(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(live) as db,
        connect_to(dynorm_server.url, mid_old, db.table_name) as old,
    ):
        await old.put_all([MidParent0("a"), *(MidKid0("a", n) for n in NAMES)])
        before = await raw_scan(db)
        assert await migration_status(db, LiveParent.kids) == 3
        found = await db.get(LiveParent, pid="a", load=[LiveParent.kids])
        assert found.kids.loaded == []  # where the reads of was= look, there is none
        report = await migrate(db, LiveParent.kids)
        assert len(report.skipped) == 3, report
        assert all("elsewhere than last" in s for s in report.skipped), report.skipped
        assert all("from_=Partition(shards=2)" in s for s in report.skipped), report.skipped
        assert report.written == 0
        assert sorted(map(str, await raw_scan(db))) == sorted(map(str, before))
        # never 0 while they are there: was= is not deleted with them left behind
        assert await migration_status(db, LiveParent.kids) == 3

        # the advice: writers stopped, was= deleted, migrate from_= finds them
        async with connect_to(dynorm_server.url, stopped, db.table_name) as db2:
            moved = await migrate(db2, StoppedParent.kids, from_=Partition(shards=2))
            assert moved.ok, moved
            assert not moved.skipped, moved
            done = await db2.get(StoppedParent, pid="a", load=[StoppedParent.kids])
            assert [k.name for k in done.kids.loaded] == NAMES
