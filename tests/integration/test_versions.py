"""Versions, time to live and timestamps (``@table.model(version=, ttl=, created=, updated=)``).

Optimistic locking on every write path: a write requires the stored version to be the one the
object was read with, stores the next, and a refusal is a VersionConflictError; batch writes,
which cannot carry the check, refuse versioned models. TTL fields are stored as epoch seconds
and ``create_table`` enables time to live on them.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator

import attrs
import pytest

from dynorm import (
    Attr,
    ConditionFailedError,
    Database,
    DatabaseError,
    DefinitionError,
    ItemNotFoundError,
    Request,
    Table,
    VersionConflictError,
)
from dynorm.testing import Connect, count_requests

pytestmark = pytest.mark.integration

docs = Table("docs", pk="pk", sk="sk")


@docs.model(
    pk="DOC#{doc_id}",
    sk="DOC#{doc_id}",
    version="version",
    ttl="expires_at",
    created="created_at",
    updated="updated_at",
)
@attrs.define
class Doc:
    doc_id: str
    title: str = ""
    version: int = 0
    expires_at: datetime.datetime | None = None
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None


@docs.model(pk="NOTE#{note_id}", sk="NOTE", created="created_at", updated="updated_at")
@attrs.define
class Note:
    note_id: str
    text: str = ""
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(docs) as database:
        yield database


def _refusal_reads(backend: str) -> list[str]:
    # moto sends the stored item back with a refusal; dynalite does not, so dynorm reads it.
    return [] if backend == "moto" else ["GetItem"]


async def test_a_new_object_is_stored_as_version_1_with_its_times(db: Database) -> None:
    before = datetime.datetime.now(datetime.UTC)
    doc = Doc(doc_id="1", title="draft")
    with count_requests(db) as log:
        stored = await db.put(doc)
    assert log.operations == ["PutItem"]
    assert stored.version == doc.version == 1  # the caller's object too
    assert doc.created_at is not None
    assert doc.updated_at is not None
    assert before <= doc.created_at == doc.updated_at
    got = await db.get(Doc, doc_id="1")
    assert got == doc


async def test_a_loaded_object_puts_the_next_version_and_keeps_created(db: Database) -> None:
    await db.put(Doc(doc_id="1"))
    doc = await db.get(Doc, doc_id="1")
    created = doc.created_at
    doc.title = "second"
    await db.put(doc)
    got = await db.get(Doc, doc_id="1")
    assert (got.version, got.title, got.created_at) == (2, "second", created)
    assert got.updated_at is not None
    assert created is not None
    assert got.updated_at >= created


async def test_two_writers_with_one_version_the_second_conflicts(
    db: Database, dynorm_backend: str
) -> None:
    await db.put(Doc(doc_id="1", title="v1"))
    first = await db.get(Doc, doc_id="1")
    second = await db.get(Doc, doc_id="1")
    first.title = "first's"
    await db.put(first)
    second.title = "second's"
    with count_requests(db) as log, pytest.raises(VersionConflictError) as caught:
        await db.put(second)
    assert log.operations == ["PutItem", *_refusal_reads(dynorm_backend)]
    assert (caught.value.expected, caught.value.stored) == (1, 2)
    assert "changed since it was read" in str(caught.value)
    assert "Read it again" in str(caught.value)
    assert isinstance(caught.value, ConditionFailedError)
    assert second.version == 1  # not advanced: nothing was written
    stored = await db.get(Doc, doc_id="1", consistent=True)
    assert (stored.title, stored.version) == ("first's", 2)


async def test_a_new_object_over_an_existing_item_conflicts(db: Database) -> None:
    await db.put(Doc(doc_id="1", title="kept"))
    with pytest.raises(VersionConflictError, match="already exists"):
        await db.put(Doc(doc_id="1", title="lost"))
    assert (await db.get(Doc, doc_id="1")).title == "kept"


async def test_update_increments_the_version_in_one_request(db: Database) -> None:
    doc = await db.put(Doc(doc_id="1"))
    with count_requests(db) as log:
        new = await db.update(doc, set={"title": "t"})
    assert log.operations == ["UpdateItem"]
    assert (new.version, new.title, doc.version) == (2, "t", 2)
    assert new.created_at == doc.created_at
    assert new.updated_at == doc.updated_at
    stale = attrs.evolve(doc, version=1)
    with pytest.raises(VersionConflictError, match=r"version 1 read, 2 stored"):
        await db.update(stale, set={"title": "lost"})
    assert (await db.get(Doc, doc_id="1")).title == "t"


async def test_update_of_a_missing_item_is_not_found(db: Database) -> None:
    with pytest.raises(ItemNotFoundError):
        await db.update(Doc(doc_id="nope"), set={"title": "t"})


async def test_a_failed_condition_of_the_callers_is_not_a_conflict(db: Database) -> None:
    doc = await db.put(Doc(doc_id="1", title="a"))
    with pytest.raises(ConditionFailedError) as caught:
        await db.update(doc, set={"title": "b"}, condition=Attr("title") == "other")
    assert not isinstance(caught.value, VersionConflictError)
    with pytest.raises(ConditionFailedError) as put_caught:
        await db.put(doc, condition=Attr("title") == "other")
    assert not isinstance(put_caught.value, VersionConflictError)


async def test_delete_requires_the_version_read(db: Database) -> None:
    doc = await db.put(Doc(doc_id="1"))
    stale = attrs.evolve(doc)
    await db.put(doc)  # now version 2
    with pytest.raises(VersionConflictError):
        await db.delete(stale)
    assert (await db.get(Doc, doc_id="1")).version == 2
    with count_requests(db) as log:
        await db.delete(doc)
    assert log.operations == ["DeleteItem"]
    with pytest.raises(ItemNotFoundError):
        await db.get(Doc, doc_id="1")


async def test_batch_writes_refuse_versioned_models_before_sending(db: Database) -> None:
    with count_requests(db) as log:
        with pytest.raises(DefinitionError, match=r"use db\.put"):
            await db.put_all([Doc(doc_id="1")])
        with pytest.raises(DefinitionError, match=r"use db\.delete"):
            await db.delete_all([Doc(doc_id="1")])
    assert log.operations == []


async def test_put_all_fills_timestamps(db: Database) -> None:
    notes = [Note(note_id="a"), Note(note_id="b")]
    await db.put_all(notes)
    assert all(n.created_at is not None for n in notes)
    got = await db.get(Note, note_id="a")
    assert got.created_at == notes[0].created_at


@pytest.mark.transactions
async def test_a_transaction_with_a_stale_version_writes_nothing(db: Database) -> None:
    doc = await db.put(Doc(doc_id="1"))
    stale = attrs.evolve(doc)
    await db.put(doc)
    tx = db.transaction()
    tx.put(Note(note_id="n"))
    tx.update(stale, set={"title": "lost"})
    with count_requests(db) as log, pytest.raises(VersionConflictError, match="action 1"):
        await tx.commit()
    assert log.operations == ["TransactWriteItems"]
    with pytest.raises(ItemNotFoundError):
        await db.get(Note, note_id="n")
    async with db.transaction() as tx:
        tx.update(doc, set={"title": "kept"})
        tx.put(Doc(doc_id="2"))
    assert doc.version == 3
    got = await db.get(Doc, doc_id="1")
    assert (got.title, got.version) == ("kept", 3)
    assert (await db.get(Doc, doc_id="2")).version == 1


async def test_ttl_is_stored_as_epoch_seconds_and_enabled(
    db: Database, dynorm_backend: str
) -> None:
    expires = datetime.datetime(2030, 1, 2, 3, 4, 5, 678, tzinfo=datetime.UTC)
    await db.put(Doc(doc_id="1", expires_at=expires))
    key = {"pk": {"S": "DOC#1"}, "sk": {"S": "DOC#1"}}
    raw = await db.send(Request("GetItem", {"TableName": db.table_name, "Key": key}))
    assert raw["Item"]["expires_at"] == {"N": str(int(expires.timestamp()))}
    got = await db.get(Doc, doc_id="1")
    assert got.expires_at == expires.replace(microsecond=0)  # TTL keeps whole seconds
    if dynorm_backend == "moto":  # dynalite has no time to live: create_table tolerates that
        described = await db.send(Request("DescribeTimeToLive", {"TableName": db.table_name}))
        spec = described["TimeToLiveDescription"]
        assert spec["TimeToLiveStatus"] == "ENABLED"
        assert spec["AttributeName"] == "expires_at"


async def test_create_table_says_what_it_created_and_exists_ok_accepts_an_existing_one(
    db: Database,
) -> None:
    with pytest.raises(DatabaseError) as caught:
        await db.create_table()  # the fixture created it
    assert caught.value.code == "ResourceInUseException"

    with count_requests(db) as log:
        assert await db.create_table(exists_ok=True) == []
    assert log.operations[:2] == ["CreateTable", "DescribeTable"]  # waited for, then its TTL

    await db.delete_table()
    assert await db.create_table(exists_ok=True) == [docs]


async def test_update_sets_ttl_as_epoch_seconds(db: Database) -> None:
    doc = await db.put(Doc(doc_id="1"))
    expires = datetime.datetime(2031, 5, 6, tzinfo=datetime.UTC)
    new = await db.update(doc, set={"expires_at": expires})
    assert new.expires_at == expires
    found = await db.get(Doc, doc_id="1")
    assert found.expires_at == expires
