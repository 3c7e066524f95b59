"""Cursors are bound to their query and parent, checked on every use, and signed on request.

An edited, foreign or forged cursor is a CursorError before anything is sent; with
``connect(cursor_secret=...)`` (or ``DYNORM_CURSOR_SECRET``) any edit at all is.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import orjson
import pytest

import dynorm
from dynorm import GSI, CursorError, Database, Embedded, HasMany, Index, Partition, Table
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
)

pytestmark = pytest.mark.integration

table = Table("cursors", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@attrs.define
class Address:
    nickname: str
    street: str = ""


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    users = HasMany["Member"]("Member", via=Partition())
    addresses = HasMany[Address](Address, via=Embedded(key="nickname"))


@table.model(
    pk="ORG#{org_name}", sk="MEMBER#{username}", GSI1=("USER#{username}", "USER#{username}")
)
@attrs.define
class Member:
    org_name: str
    username: str
    notes = HasMany["Note"]("Note", via=Index("GSI1"))


@table.model(pk="NOTE#{note_id}", sk="NOTE#{note_id}", GSI1=("USER#{username}", "NOTE#{note_id}"))
@attrs.define
class Note:
    note_id: str
    username: str
    body: str = ""


SECRET = b"an HMAC key for these tests, 32+"
ORGS = ("A", "B")


def members(org: str, n: int = 5) -> list[Member]:
    return [Member(org_name=org, username=f"{org}{i}") for i in range(n)]


def orgs() -> list[Org]:
    return [Org(name=name) for name in ORGS]


async def store(db: Database) -> None:
    notes = [Note(note_id=f"{u}-{i}", username=u) for u in ("A0", "B0") for i in range(5)]
    await db.put_all([*members("A"), *members("B"), *notes])
    for org in orgs():
        await db.put(org)
        for i in range(5):
            await db.add(org, Org.addresses, Address(nickname=f"{org.name}-{i}"))


@pytest.fixture
async def db(dynorm_connect: Connect) -> AsyncIterator[Database]:
    async with dynorm_connect(table) as database:
        await store(database)
        yield database


@asynccontextmanager
async def same_table(
    db: Database, server: RunningServer, secret: bytes | None
) -> AsyncIterator[Database]:
    """Another connection to ``db``'s table, with its own cursor secret."""
    async with dynorm.connect(
        table,
        endpoint_url=server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=db.table_name,
        cursor_secret=secret,
    ) as other:
        yield other


def edit(cursor: str, change: Callable[[dict[str, Any]], None]) -> str:
    """Decode a cursor's body, change it, encode it again (keeping any signature as it was)."""
    text, dot, signature = cursor.partition(".")
    body = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    change(body)
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=") + dot + signature


def set_key(**values: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        body["k"].update({name: {"S": value} for name, value in values.items()})

    return change


def set_after(key: object) -> Callable[[dict[str, Any]], None]:
    """Edit an embedded map cursor's position: the map key it resumes after."""

    def change(body: dict[str, Any]) -> None:
        body["a"] = key

    return change


async def get_org(db: Database, name: str) -> Org:
    return await db.get(Org, name=name)


async def get_member(db: Database, username: str) -> Member:
    return await db.get(Member, org_name=username[0], username=username)


# -- queries -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        set_key(sk="METADATA#A"),  # outside begins_with(sk, "MEMBER#")
        set_key(sk="MEMBER"),
        set_key(pk="ORG#B"),  # another partition
        set_key(pk="ORG#B", sk="MEMBER#B3"),
        set_key(GSI1PK="USER#A1"),  # an attribute the read does not resume from
    ],
)
async def test_an_edited_query_cursor_is_refused_before_sending(
    db: Database, change: Callable[[dict[str, Any]], None]
) -> None:
    query = db.query(Member, org_name="A")
    page = await query.page(limit=2)
    assert page.cursor is not None
    with count_requests(db) as log, pytest.raises(CursorError, match="start over"):
        await query.page(limit=2, cursor=edit(page.cursor, change))
    assert len(log) == 0


async def test_without_a_secret_a_key_moved_inside_the_range_is_a_position(db: Database) -> None:
    # What a secret adds: a cursor pointing at another member of the same query is a valid
    # position unless signatures are checked.
    query = db.query(Member, org_name="A")
    page = await query.page(limit=1)
    assert page.cursor is not None
    moved = await query.page(limit=5, cursor=edit(page.cursor, set_key(sk="MEMBER#A3")))
    assert [m.username for m in moved.items] == ["A4"]


async def test_a_signed_database_refuses_any_edit(
    db: Database, dynorm_server: RunningServer
) -> None:
    async with same_table(db, dynorm_server, SECRET) as signed:
        query = signed.query(Member, org_name="A")
        page = await query.page(limit=1)
        assert page.cursor is not None
        assert "." in page.cursor
        with count_requests(signed) as log, pytest.raises(CursorError, match="signature"):
            await query.page(limit=5, cursor=edit(page.cursor, set_key(sk="MEMBER#A3")))
        assert len(log) == 0
        rest = await query.page(limit=10, cursor=page.cursor)
        assert [m.username for m in [*page.items, *rest.items]] == [f"A{i}" for i in range(5)]


async def test_a_query_cursor_chain_works_signed_and_unsigned(
    db: Database, dynorm_server: RunningServer
) -> None:
    async with same_table(db, dynorm_server, SECRET) as signed:
        for database in (db, signed):
            seen: list[str] = []
            cursor: str | None = None
            while True:
                page = await database.query(Member, org_name="B").page(limit=2, cursor=cursor)
                seen += [m.username for m in page.items]
                if page.cursor is None:
                    break
                cursor = page.cursor
            assert seen == [f"B{i}" for i in range(5)]


async def test_cursors_do_not_cross_secrets(db: Database, dynorm_server: RunningServer) -> None:
    unsigned = (await db.query(Member, org_name="A").page(limit=1)).cursor
    assert unsigned is not None
    async with (
        same_table(db, dynorm_server, SECRET) as signed,
        same_table(db, dynorm_server, b"the secret after rotation") as rotated,
    ):
        old = (await signed.query(Member, org_name="A").page(limit=1)).cursor
        assert old is not None
        with pytest.raises(CursorError, match="not signed"):
            await signed.query(Member, org_name="A").page(limit=1, cursor=unsigned)
        with pytest.raises(CursorError, match="signed with another cursor_secret"):
            await rotated.query(Member, org_name="A").page(limit=1, cursor=old)
        with pytest.raises(CursorError, match="has no cursor_secret"):
            await db.query(Member, org_name="A").page(limit=1, cursor=old)
        # Relationship pages go through the same codec.
        org = await get_org(signed, "A")
        users = (await org.users.page(limit=1)).cursor
        assert users is not None
        with pytest.raises(CursorError, match="signed with another cursor_secret"):
            await (await get_org(rotated, "A")).users.page(limit=1, cursor=users)


async def test_the_secret_can_come_from_the_environment(
    dynorm_connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DYNORM_CURSOR_SECRET", SECRET.decode())
    async with dynorm_connect(table) as env_db:
        assert env_db.cursors.signed
        await env_db.put_all(members("A"))
        page = await env_db.query(Member, org_name="A").page(limit=2)
        assert page.cursor is not None
        with pytest.raises(CursorError, match="signature"):
            await env_db.query(Member, org_name="A").page(
                limit=2, cursor=edit(page.cursor, set_key(sk="MEMBER#A3"))
            )


# -- relationships -----------------------------------------------------------------------------


async def test_a_relationship_cursor_of_one_parent_is_refused_by_another(db: Database) -> None:
    a, b = await get_org(db, "A"), await get_org(db, "B")
    cursor = (await a.users.page(limit=2)).cursor
    assert cursor is not None
    with count_requests(db) as log, pytest.raises(CursorError, match="different query"):
        await b.users.page(limit=2, cursor=cursor)
    assert len(log) == 0
    rest = await a.users.page(limit=10, cursor=cursor)
    assert [m.username for m in rest.items] == ["A2", "A3", "A4"]


async def test_an_edited_relationship_cursor_is_refused(db: Database) -> None:
    a = await get_org(db, "A")
    cursor = (await a.users.page(limit=2)).cursor
    assert cursor is not None
    with pytest.raises(CursorError, match="another partition"):
        await a.users.page(limit=2, cursor=edit(cursor, set_key(pk="ORG#B")))
    with pytest.raises(CursorError, match="outside its query"):
        await a.users.page(limit=2, cursor=edit(cursor, set_key(sk="METADATA#A")))


async def test_an_index_relationship_cursor_is_bound_to_its_parent(db: Database) -> None:
    a0, b0 = await get_member(db, "A0"), await get_member(db, "B0")
    page = await a0.notes.page(limit=2)
    assert [n.note_id for n in page.items] == ["A0-0", "A0-1"]
    assert page.cursor is not None
    with count_requests(db) as log:
        with pytest.raises(CursorError, match="different query"):
            await b0.notes.page(limit=2, cursor=page.cursor)
        with pytest.raises(CursorError, match="another partition"):
            await a0.notes.page(limit=2, cursor=edit(page.cursor, set_key(GSI1PK="USER#B0")))
        with pytest.raises(CursorError, match="outside its query"):
            await a0.notes.page(limit=2, cursor=edit(page.cursor, set_key(GSI1SK="USER#A0")))
    assert len(log) == 0
    rest = await a0.notes.page(limit=10, cursor=page.cursor)
    assert [n.note_id for n in rest.items] == ["A0-2", "A0-3", "A0-4"]


def set_typed(**values: dict[str, str]) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        body["k"].update(values)

    return change


async def test_a_cursor_key_of_the_right_names_but_other_types_is_refused_before_sending(
    db: Database,
) -> None:
    # Unsigned cursors: the names fit the read, the types do not (key attributes are strings).
    scan = db.scan(Member)
    scan_page = await scan.page(limit=2)
    query = db.query(Member, org_name="A")
    query_page = await query.page(limit=2)
    a0 = await get_member(db, "A0")
    notes_page = await a0.notes.page(limit=2)
    assert scan_page.cursor is not None
    assert query_page.cursor is not None
    assert notes_page.cursor is not None
    with count_requests(db) as log:
        for attr, value in (("pk", {"N": "1"}), ("sk", {"B": "YQ=="})):
            with pytest.raises(
                CursorError, match=rf"holds {attr} as ., but that key attribute is a string"
            ):
                await scan.page(limit=2, cursor=edit(scan_page.cursor, set_typed(**{attr: value})))
            with pytest.raises(
                CursorError, match=rf"holds {attr} as ., but that key attribute is a string"
            ):
                await query.page(
                    limit=2, cursor=edit(query_page.cursor, set_typed(**{attr: value}))
                )
            with pytest.raises(
                CursorError, match=rf"holds {attr} as ., but that key attribute is a string"
            ):
                await a0.notes.page(
                    limit=2, cursor=edit(notes_page.cursor, set_typed(**{attr: value}))
                )
    assert len(log) == 0
    rest = await scan.page(limit=100, cursor=scan_page.cursor)
    assert len(scan_page.items) + len(rest.items) == 10


# ~4 KB a note: 300 of them are more than DynamoDB returns in one Query page (1 MB).
BIG_BODY = "x" * 4000
BIG_COUNT = 300


async def test_dynamodbs_own_last_key_of_an_index_read_is_a_valid_cursor(
    dynorm_connect: Connect,
) -> None:
    # With limit=None a page is DynamoDB's page, and its cursor holds DynamoDB's
    # LastEvaluatedKey (table and index keys): the checks accept exactly that key.
    async with dynorm_connect(table) as big:
        notes = [Note(note_id=f"{i:04d}", username="A0", body=BIG_BODY) for i in range(BIG_COUNT)]
        await big.put_all([Member(org_name="A", username="A0"), *notes])
        member = await get_member(big, "A0")
        first = await member.notes.page()
        assert 0 < len(first.items) < BIG_COUNT
        assert first.cursor is not None
        rest = await member.notes.page(cursor=first.cursor)
        assert [n.note_id for n in [*first.items, *rest.items]] == [n.note_id for n in notes]
        assert rest.cursor is None
        query = big.query(Note, index="GSI1", username="A0")
        page = await query.page()
        assert page.cursor is not None
        assert len([*page.items, *(await query.page(cursor=page.cursor)).items]) == BIG_COUNT


# -- embedded children ---------------------------------------------------------------------------


async def test_an_embedded_cursor_chain(db: Database) -> None:
    a = await get_org(db, "A")
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await a.addresses.page(limit=2, cursor=cursor)
        seen += [x.nickname for x in page.items]
        if page.cursor is None:
            break
        cursor = page.cursor
    assert seen == [f"A-{i}" for i in range(5)]


async def test_an_embedded_cursor_of_one_parent_is_refused_by_another(db: Database) -> None:
    a, b = await get_org(db, "A"), await get_org(db, "B")
    cursor = (await a.addresses.page(limit=2)).cursor
    assert cursor is not None
    with count_requests(db) as log, pytest.raises(CursorError, match="different query"):
        await b.addresses.page(limit=2, cursor=cursor)
    assert len(log) == 0
    # ... and of another relationship's read.
    with pytest.raises(CursorError, match="different query"):
        await a.users.page(limit=2, cursor=cursor)


async def test_an_embedded_cursor_keeps_its_place_when_children_change(db: Database) -> None:
    # The cursor is the last key returned, as a Query's is: a child added or removed before it
    # between two pages (read by a fresh parent each, as a web API does) moves nothing else.
    a = await get_org(db, "A")
    first = await a.addresses.page(limit=2)
    assert [x.nickname for x in first.items] == ["A-0", "A-1"]
    await db.add(a, Org.addresses, Address(nickname="A-00"))  # sorts before the cursor
    await db.add(a, Org.addresses, Address(nickname="A-1x"))  # sorts right after it
    again = await get_org(db, "A")
    second = await again.addresses.page(limit=2, cursor=first.cursor)
    assert [x.nickname for x in second.items] == ["A-1x", "A-2"]  # A-1 not again
    await db.remove(a, Org.addresses, Address(nickname="A-00"))
    await db.remove(a, Org.addresses, Address(nickname="A-2"))  # the page's own last child
    third = await (await get_org(db, "A")).addresses.page(limit=2, cursor=second.cursor)
    assert [x.nickname for x in third.items] == ["A-3", "A-4"]  # nothing skipped
    assert third.cursor is None


async def test_an_embedded_child_added_to_a_held_parent_pages_in_key_order(db: Database) -> None:
    # The parent object held across pages keeps its children loaded; one added through it
    # takes its place by key, so the pages after it still return every child once, in order.
    a = await get_org(db, "A")
    await db.add(a, Org.addresses, Address(nickname="A-1x"))
    assert [x.nickname for x in a.addresses.loaded][:3] == ["A-0", "A-1", "A-1x"]
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = await a.addresses.page(limit=1, cursor=cursor)
        seen += [x.nickname for x in page.items]
        if page.cursor is None:
            break
        cursor = page.cursor
    assert seen == ["A-0", "A-1", "A-1x", "A-2", "A-3", "A-4"]


@pytest.mark.parametrize("key", [-1, True, 1.5, None, {"S": "A-1"}, ["A-1"]])
async def test_a_forged_embedded_position_is_refused(db: Database, key: object) -> None:
    a = await get_org(db, "A")
    cursor = (await a.addresses.page(limit=2)).cursor
    assert cursor is not None
    with count_requests(db) as log, pytest.raises(CursorError, match="malformed cursor"):
        await a.addresses.page(limit=2, cursor=edit(cursor, set_after(key)))
    assert len(log) == 0


async def test_a_signed_embedded_position_cannot_be_moved(
    db: Database, dynorm_server: RunningServer
) -> None:
    async with same_table(db, dynorm_server, SECRET) as signed:
        a = await get_org(signed, "A")
        cursor = (await a.addresses.page(limit=2)).cursor
        assert cursor is not None
        with pytest.raises(CursorError, match="signature"):
            await a.addresses.page(limit=2, cursor=edit(cursor, set_after("A-3")))
        page = await a.addresses.page(limit=2, cursor=cursor)
        assert [x.nickname for x in page.items] == ["A-2", "A-3"]
