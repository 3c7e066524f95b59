"""Model versions: items stored at every schema version, read, written and upgraded in bulk.

Items are written raw (``raw_put``: as an older deploy stored them, or none at all) and every
read path must give the current model; writes store the current version; ``upgrade_items``
rewrites the old ones, checked item by item against a raw Scan.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from dynorm import (
    CodecError,
    Database,
    Partition,
    StaleItemError,
    TransactionCanceledError,
    UpgradeError,
)
from dynorm.migrations import MigrationProgress, Workers, backfill_index, migrate, upgrade_items
from dynorm.testing import Connect, RunningServer, count_requests
from dynorm.tools.migrate_run import migrate_items
from dynorm.tools.migrate_upgrade import Upgrade
from dynorm.workbench import export_model, scan_items
from tests.faultproxy import connect_to

from .raw import raw_item, raw_put, raw_scan
from .versions_models import (
    Crew,
    Hand,
    Member,
    Note,
    OldCrew,
    OldHand,
    Recipe,
    Team,
    User,
    app,
    moved_after,
    moved_before,
    n,
    s,
    same_stored,
    upgraded_item,
    user_item,
)

pytestmark = pytest.mark.integration

WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
ADA = ("Ada", "Lovelace", 36)


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(app) as connected:
        yield connected


def member_item(tid: str, mid: str, nick: str) -> dict[str, Any]:
    """A Member at version 1 (no version stored): ``nick`` is today's ``name``."""
    return {
        "pk": s(f"TEAM#{tid}"),
        "sk": s(f"MEMBER#{mid}"),
        "tid": s(tid),
        "mid": s(mid),
        "nick": s(nick),
    }


def ada(uid: str) -> User:
    return User(uid, *ADA)


async def put_old_users(db: Database) -> dict[str, dict[str, Any]]:
    """u0 (no version), u1, u2 (older), u3 (current): every one reads as Ada."""
    items = {
        "u0": user_item("u0", None),
        "u1": user_item("u1", 1),
        "u2": user_item("u2", 2),
        "u3": user_item("u3", 3),
    }
    for item in items.values():
        await raw_put(db, item)
    return items


def by_key(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f"{i['pk']['S']}|{i['sk']['S']}": i for i in items}


# -- every read path upgrades in memory ----------------------------------------------------------


async def test_every_version_reads_as_the_current_model_on_every_read_by_key(
    db: Database,
) -> None:
    stored = await put_old_users(db)
    uids = sorted(stored)

    assert [await db.get(User, uid=u) for u in uids] == [ada(u) for u in uids]
    assert await db.get_many(User, [{"uid": u} for u in uids]) == [ada(u) for u in uids]
    assert await db.query(User, uid="u1").all() == [ada("u1")]
    assert sorted(await db.scan(User).all(), key=lambda u: u.uid) == [ada(u) for u in uids]
    # Reads upgrade in memory only: nothing was written.
    after = by_key(await raw_scan(db))
    for uid, item in stored.items():
        assert same_stored(after[f"USER#{uid}|USER#{uid}"], item)


@pytest.mark.transactions  # dynalite has no transactions
async def test_transaction_reads_and_writes_upgrade_and_store_the_version(db: Database) -> None:
    stored = await put_old_users(db)
    assert await db.transact_get((User, {"uid": "u0"}), (User, {"uid": "u2"})) == (
        ada("u0"),
        ada("u2"),
    )
    async with db.transaction() as tx:
        tx.put(User("p3", "Edsger", "Dijkstra", 72))
    item = await raw_item(db, {"pk": "USER#p3", "sk": "USER#p3"})
    assert item is not None
    assert item["_v"] == n(3)
    user = await db.get(User, uid="u1")
    # A transaction is cancelled: StaleItemError where the server sends the item back with the
    # reason (ALL_OLD), else the cancellation itself; nothing is written either way.
    with pytest.raises((StaleItemError, TransactionCanceledError)):
        async with db.transaction() as tx:
            tx.update(user, set={"city": "Paris"})
    assert same_stored(await raw_item(db, {"pk": "USER#u1", "sk": "USER#u1"}) or {}, stored["u1"])


async def test_children_are_upgraded_through_load_loaders_and_queries(db: Database) -> None:
    await db.put(Team("t"))
    await raw_put(db, member_item("t", "m1", "ada"))
    await db.put(Member("t", "m2", "bob"))
    raw = await raw_item(db, {"pk": "TEAM#t", "sk": "MEMBER#m2"})
    assert raw is not None
    assert raw["_v"] == n(2)
    want = [Member("t", "m1", "ada"), Member("t", "m2", "bob")]

    team = await db.get(Team, tid="t", load=[Team.members])
    assert await team.members.all() == want
    assert [m async for m in (await db.get(Team, tid="t")).members] == want
    assert await db.query(Member, tid="t").all() == want
    (loaded,) = await db.query(Team, tid="t", load=[Team.members]).all()
    assert await loaded.members.all() == want
    plain = await db.get(Team, tid="t")
    await db.load([plain], Team.members)
    assert await plain.members.all() == want


async def test_an_item_newer_than_the_code_is_a_codec_error_naming_both_versions(
    db: Database,
) -> None:
    newer = user_item("u9", 3) | {"_v": n(4), "age": s("thirty-six")}
    await raw_put(db, newer)
    for read in (
        lambda: db.get(User, uid="u9"),
        lambda: db.get_many(User, [{"uid": "u9"}]),
        lambda: db.query(User, uid="u9").all(),
        lambda: db.scan(User).all(),
    ):
        with pytest.raises(CodecError, match=r"schema version 4.*up to version 3") as caught:
            await read()
        assert not isinstance(caught.value, UpgradeError)
    stored = await raw_item(db, {"pk": "USER#u9", "sk": "USER#u9"})
    assert stored is not None
    assert same_stored(stored, newer)  # never downgraded, never written


async def test_an_upgrade_that_fails_is_an_upgrade_error_naming_the_model_and_version(
    db: Database,
) -> None:
    await raw_put(db, user_item("u1", 2) | {"age": s("old")})
    with pytest.raises(UpgradeError, match=r"User: .*USER#u1.* from schema version 2 to 3") as bad:
        await db.get(User, uid="u1")
    assert bad.value.version == 2
    assert bad.value.__cause__ is not None  # Decimal("old"), chained
    missing = user_item("u2", 1)
    del missing["name"]
    await raw_put(db, missing)
    with pytest.raises(UpgradeError, match=r"from schema version 1 to 2.*KeyError") as gone:
        await db.query(User, uid="u2").all()
    assert isinstance(gone.value.__cause__, KeyError)


async def test_stream_records_and_workbench_exports_are_upgraded(db: Database) -> None:
    record = {
        "eventID": "1",
        "eventName": "INSERT",
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "Keys": {"pk": s("USER#u1"), "sk": s("USER#u1")},
            "NewImage": user_item("u1", 1),
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }
    assert app.decode_record(record).new == ada("u1")

    await put_old_users(db)
    exported = export_model(app, raw_items=await scan_items(db))
    (facet,) = [f for f in exported["DataModel"][0]["TableFacets"] if f["FacetName"] == "User"]
    assert "_v" in facet["NonKeyAttributes"]
    assert {i["uid"]["S"]: (i["_v"], i["first"], i["age"]) for i in facet["TableData"]} == {
        u: ({"N": "3"}, s("Ada"), {"N": "36"}) for u in ("u0", "u1", "u2", "u3")
    }


async def test_a_migration_reads_old_items_upgraded(db: Database) -> None:
    """backfill_index decodes each item to make its index keys: an old one is upgraded first."""
    stored = await put_old_users(db)
    report = await backfill_index(db, User, "GSI1")
    assert report.ok
    assert report.written == 3  # u0, u1, u2 lacked the index keys; u3 has them
    for uid in ("u0", "u1", "u2"):
        item = await raw_item(db, {"pk": f"USER#{uid}", "sk": f"USER#{uid}"})
        assert item is not None
        # Only the index keys are written: the item keeps its old shape and version.
        rest = {k: v for k, v in item.items() if not k.startswith("GSI1")}
        assert same_stored(rest, stored[uid])
        assert (item["GSI1PK"], item["GSI1SK"]) == (s("LAST#Lovelace"), s(f"USER#{uid}"))
    found = await db.query(User, index="GSI1", last="Lovelace").all()
    assert sorted(found, key=lambda u: u.uid) == [ada(u) for u in ("u0", "u1", "u2", "u3")]


# -- writes store the current version; updates refuse older items ---------------------------------


async def test_every_write_stores_the_current_version(db: Database) -> None:
    await db.put(User("p1", "Grace", "Hopper", 85))
    await db.put_all([User("p2", "Alan", "Turing", 41), Member("t", "m1", "ada")])
    await db.update(User("p4", "Barbara", "Liskov", 84), upsert=True, set={"city": "Boston"})
    for pk, version in [("USER#p1", 3), ("USER#p2", 3), ("USER#p4", 3)]:
        item = await raw_item(db, {"pk": pk, "sk": pk})
        assert item is not None
        assert item["_v"] == n(version), pk
    member = await raw_item(db, {"pk": "TEAM#t", "sk": "MEMBER#m1"})
    assert member is not None
    assert member["_v"] == n(2)
    await db.put(Note("n1", "unversioned"))
    note = await raw_item(db, {"pk": "NOTE#n1", "sk": "NOTE#n1"})
    assert note is not None
    assert "_v" not in note


async def test_an_update_of_an_older_item_is_refused_and_changes_nothing(db: Database) -> None:
    stored = await put_old_users(db)
    for uid in ("u0", "u1", "u2"):
        user = await db.get(User, uid=uid)
        with pytest.raises(StaleItemError, match=r"older than 3.*upgrade_items") as refused:
            await db.update(user, set={"city": "Paris"})
        version = 1 if uid in ("u0", "u1") else 2
        assert (refused.value.stored, refused.value.current) == (version, 3)
        key = {"pk": f"USER#{uid}", "sk": f"USER#{uid}"}
        assert same_stored(await raw_item(db, key) or {}, stored[uid])

    # The current item updates; a put of the upgraded object brings an old one to version 3.
    await db.update(await db.get(User, uid="u3"), set={"city": "Paris"})
    user = await db.get(User, uid="u1")
    await db.put(user)
    await db.update(user, set={"city": "Rome"})
    assert await db.get(User, uid="u1") == User("u1", *ADA, city="Rome")
    assert (await raw_item(db, {"pk": "USER#u1", "sk": "USER#u1"}) or {})["_v"] == n(3)


# -- upgrade_items --------------------------------------------------------------------------------


async def test_upgrade_items_rewrites_every_older_item_keeping_what_the_model_lacks(
    db: Database,
) -> None:
    stored = await put_old_users(db)
    newer = user_item("u9", 3) | {"_v": n(4)}
    await raw_put(db, newer)
    await raw_put(db, member_item("t", "m1", "ada"))
    await db.put(Note("n1"))
    before = by_key(await raw_scan(db))

    with count_requests(db) as log:
        dry = await upgrade_items(db, User, dry_run=True)
    assert (dry.kind, dry.dry_run, dry.written) == ("upgrade", True, 3)
    assert not WRITES & set(log.operations)

    report = await upgrade_items(db, User)

    assert (report.kind, report.written, report.deleted, report.updated) == ("upgrade", 3, 0, 0)
    assert report.ok
    assert report.verification is not None
    assert report.verification.leftovers == 0
    assert len(report.skipped) == 1
    assert "USER#u9" in report.skipped[0]
    assert "schema version 4" in report.skipped[0]
    after = by_key(await raw_scan(db))
    assert after.keys() == before.keys()
    for key, item in after.items():
        uid = item.get("uid", {}).get("S", "")
        if key.startswith("USER#") and uid in ("u0", "u1", "u2"):
            assert same_stored(item, upgraded_item(uid)), item
        else:  # current, newer, another model's: as they were
            assert same_stored(item, before[key]), key
    assert same_stored(after["USER#u3|USER#u3"], stored["u3"])
    for uid in ("u0", "u1", "u2", "u3"):
        await db.update(ada(uid), set={"city": "Paris"})  # every one is current now

    with count_requests(db) as log:
        again = await upgrade_items(db, User)
    assert again.written == 0
    assert not WRITES & set(log.operations)


class StopRunError(Exception):
    pass


async def test_an_interrupted_upgrade_resumes_from_its_checkpoint(
    db: Database, tmp_path: Path
) -> None:
    uids = [f"u{i:02}" for i in range(10)]
    for i, uid in enumerate(uids):
        await raw_put(db, user_item(uid, [None, 1, 2][i % 3]))
    checkpoint = tmp_path / "upgrade.json"

    def stop(progress: MigrationProgress) -> None:
        if progress.pages == 2:
            raise StopRunError

    with pytest.raises(StopRunError):
        await upgrade_items(db, User, checkpoint=checkpoint, page_size=2, on_progress=stop)
    saved = json.loads(checkpoint.read_text())
    assert saved["fingerprint"]["kind"] == "upgrade"
    assert saved["counters"]["written"] == 4
    middle = [i for i in await raw_scan(db) if i.get("_v") == n(3)]
    assert len(middle) == 4

    report = await upgrade_items(db, User, checkpoint=checkpoint, page_size=2)

    assert report.resumed
    assert report.ok
    assert report.written == 10  # the earlier run's 4 included
    assert not checkpoint.exists()
    for item in await raw_scan(db):
        assert same_stored(item, upgraded_item(item["uid"]["S"])), item


async def test_two_workers_upgrade_every_item_once(db: Database) -> None:
    uids = [f"w{i:02}" for i in range(24)]
    await asyncio.gather(
        *(raw_put(db, user_item(u, [None, 1, 2][i % 3])) for i, u in enumerate(uids))
    )

    def worker(name: str) -> Workers:
        return Workers(segments=3, lease=30.0, worker=name)

    first, second = await asyncio.gather(
        upgrade_items(db, User, workers=worker("a"), page_size=4),
        upgrade_items(db, User, workers=worker("b"), page_size=4),
    )

    assert first.ok, first
    assert second.ok, second
    assert set(first.segments_finished) | set(second.segments_finished) == {0, 1, 2}
    assert not set(first.segments_finished) & set(second.segments_finished)
    items = await raw_scan(db)
    assert len(items) == len(uids)
    for item in items:
        assert same_stored(item, upgraded_item(item["uid"]["S"])), item


async def test_an_upgrade_write_is_conditioned_on_the_item_as_read(db: Database) -> None:
    await raw_put(db, user_item("u1", 1))
    page = await raw_scan(db)
    # Another writer (old code still running) changes the item after the run read it.
    changed = user_item("u1", 1) | {"name": s("Ada King")}
    await raw_put(db, changed)

    _, sent = await migrate_items(db, Upgrade(app.info(User)), page, dry_run=False)

    assert sent.written == 0
    assert same_stored(await raw_item(db, {"pk": "USER#u1", "sk": "USER#u1"}) or {}, changed)
    # The next run reads it afresh.
    report = await upgrade_items(db, User)
    assert report.written == 1
    assert await db.get(User, uid="u1") == User("u1", "Ada", "King", 36)


@attrs.define
class UserName:
    uid: str
    first: str


async def test_a_view_reads_current_items_and_refuses_older_ones_with_advice(
    db: Database,
) -> None:
    await raw_put(db, user_item("u3", 3))
    assert await db.query(User, uid="u3").project(UserName).all() == [UserName("u3", "Ada")]
    await raw_put(db, user_item("u1", 1))
    with pytest.raises(CodecError, match=r"schema version 1.*too few to upgrade.*upgrade_items"):
        await db.query(User, uid="u1").project(UserName).all()
    await upgrade_items(db, User)
    assert await db.query(User, uid="u1").project(UserName).all() == [UserName("u1", "Ada")]


async def test_a_migration_moves_old_version_children_and_they_read_upgraded(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with (
        dynorm_connect(moved_after) as db,
        connect_to(dynorm_server.url, moved_before, db.table_name) as old,
    ):
        await old.put_all([OldCrew("c"), OldHand("c", "h1", "ada"), OldHand("c", "h2", "bob")])

        report = await migrate(db, Crew.hands, from_=Partition())

        assert report.ok, report
        assert (report.written, report.deleted) == (2, 2)
        for hid, nick in (("h1", "ada"), ("h2", "bob")):
            item = await raw_item(db, {"pk": f"HAND#c#{hid}", "sk": f"HAND#c#{hid}"})
            assert item is not None
            # Moved raw: the old shape and (no) version kept, the new keys written.
            assert (item["nick"], item["GSI1PK"], "_v" in item) == (s(nick), s("CREW#c"), False)
        crew = await db.get(Crew, cid="c", load=[Crew.hands])
        assert await crew.hands.all() == [Hand("c", "h1", "ada"), Hand("c", "h2", "bob")]
        assert (await upgrade_items(db, Hand)).written == 2
        assert await crew.hands.all() == [Hand("c", "h1", "ada"), Hand("c", "h2", "bob")]


async def test_a_put_keeping_unloaded_embedded_children_refuses_an_older_item(
    db: Database,
) -> None:
    old = {"pk": s("RECIPE#r"), "sk": s("RECIPE#r"), "rid": s("r"), "title": s("Soup")}
    await raw_put(db, old)
    recipe = await db.get(Recipe, rid="r")
    assert recipe == Recipe("r", "Soup")
    with pytest.raises(StaleItemError, match=r"put of Recipe .* version 1, older than 2.*load"):
        await db.put(recipe)
    assert same_stored(await raw_item(db, {"pk": "RECIPE#r", "sk": "RECIPE#r"}) or {}, old)
    # With its children loaded, the put writes them whole: the item is at the version after.
    loaded = await db.get(Recipe, rid="r", load=[Recipe.steps])
    await db.put(loaded)
    stored = await raw_item(db, {"pk": "RECIPE#r", "sk": "RECIPE#r"})
    assert stored is not None
    assert (stored["_v"], stored["name"]) == (n(2), s("Soup"))
    await db.put(await db.get(Recipe, rid="r"))  # current now: children kept as stored
