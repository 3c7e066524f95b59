"""Number (N) and binary (B) key attributes: tables another tool created and filled, mapped.

A plain boto3 client creates a game scores table (a number sort key, an index with a number sort
key) and a table of binary-keyed chunks, and writes items into them; dynorm reads them, queries
them by numeric ranges in numeric order (99 < 100 < 1000), pages through them with cursors, and
writes them back attribute for attribute. An event log keyed by epoch seconds is created by
``db.create_table()`` from the Table's ``key_types``.
"""

from __future__ import annotations

import decimal
import uuid
from collections.abc import AsyncIterator

import attrs
import pytest

import dynorm
from dynorm import GSI, Attr, Database, ExpressionError, Table, between, ge, gt, le, lt
from dynorm.migrations import backfill_index
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    Connect,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from dynorm.workbench import export_model, import_model, read_model, scan_items

from .tool import Raw, Tool, written_by_tool

pytestmark = pytest.mark.integration


# -- the models ------------------------------------------------------------------------------------

scores = Table(
    "GameScores",
    pk="UserId",
    sk="Score",
    indexes=[GSI("ByGame", pk="GameTitle", sk="TopScore")],
    key_types={"Score": "N", "TopScore": "N"},
)


@scores.model(pk="{user_id}", sk="{score}", ByGame=("{game}", "{top}"))
class Score:
    user_id: str = dynorm.field(name="UserId")
    score: int = dynorm.field(name="Score")
    game: str = dynorm.field(name="GameTitle")
    top: int = dynorm.field(name="TopScore")
    wins: int = dynorm.field(name="Wins", default=0)


chunks = Table("Chunks", pk="Digest", sk="Part", key_types={"Digest": "B", "Part": "N"})


@chunks.model(pk="{digest}", sk="{part}")
class Chunk:
    digest: bytes = dynorm.field(name="Digest")
    part: decimal.Decimal = dynorm.field(name="Part")
    data: bytes = dynorm.field(name="Data")


events = Table("Events", pk="pk", sk="sk", key_types={"sk": "N"})


@events.model(pk="DEVICE#{device_id}", sk="{at}")
class Event:
    device_id: str = dynorm.field(key_only=True)
    at: int = dynorm.field(key_only=True)  # epoch seconds, only inside the number sort key
    kind: str = "ping"


readings = Table(
    "Readings",
    pk="pk",
    sk="sk",
    indexes=[GSI("ByLevel", pk="lpk", sk="lsk")],
    key_types={"sk": "N", "lpk": "B", "lsk": "N"},
)


@readings.model(pk="S#{sensor}", sk="{at}", ByLevel=("{site}", "{level}"))
class Level:
    sensor: str
    at: int
    site: bytes
    level: decimal.Decimal  # stored "1.50" is read back as "1.5": the same number


# -- the tool's side -------------------------------------------------------------------------------


def _keys(pk: str, sk: str) -> list[dict[str, str]]:
    return [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}]


SCORES_SCHEMA: Raw = {
    "AttributeDefinitions": [
        {"AttributeName": "UserId", "AttributeType": "S"},
        {"AttributeName": "Score", "AttributeType": "N"},
        {"AttributeName": "GameTitle", "AttributeType": "S"},
        {"AttributeName": "TopScore", "AttributeType": "N"},
    ],
    "KeySchema": _keys("UserId", "Score"),
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "ByGame",
            "KeySchema": _keys("GameTitle", "TopScore"),
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
}

CHUNKS_SCHEMA: Raw = {
    "AttributeDefinitions": [
        {"AttributeName": "Digest", "AttributeType": "B"},
        {"AttributeName": "Part", "AttributeType": "N"},
    ],
    "KeySchema": _keys("Digest", "Part"),
    "BillingMode": "PAY_PER_REQUEST",
}


def tool_score(user: str, score: int, game: str, top: int, wins: int) -> Raw:
    return {
        "UserId": {"S": user},
        "Score": {"N": str(score)},
        "GameTitle": {"S": game},
        "TopScore": {"N": str(top)},
        "Wins": {"N": str(wins)},
    }


# Written in neither numeric nor text order: 1000 sorts before 99 as text.
SCORE_ITEMS = [
    tool_score("u1", 1000, "Galaxy", 1000, 7),
    tool_score("u1", 99, "Galaxy", 99, 1),
    tool_score("u1", 150, "Meteor", 150, 3),
    tool_score("u1", 100, "Galaxy", 100, 2),
    tool_score("u1", 200, "Meteor", 200, 4),
    tool_score("u2", 5, "Galaxy", 5, 0),
]

DIGEST = bytes(range(250, 256)) + b"\x00#%"  # not UTF-8, and with a delimiter inside
OTHER = b"\x01\x02"
CHUNK_ITEMS = [
    {"Digest": {"B": DIGEST}, "Part": {"N": str(n)}, "Data": {"B": bytes([n]) * 3}}
    for n in (10, 2, 1)
] + [{"Digest": {"B": OTHER}, "Part": {"N": "1"}, "Data": {"B": b"x"}, "Note": {"S": "kept"}}]


@pytest.fixture
async def game(dynorm_server: RunningServer) -> AsyncIterator[tuple[Database, Tool]]:
    async with written_by_tool(dynorm_server, scores, SCORES_SCHEMA, SCORE_ITEMS) as pair:
        yield pair


@pytest.fixture
async def blobs(dynorm_server: RunningServer) -> AsyncIterator[tuple[Database, Tool]]:
    async with written_by_tool(dynorm_server, chunks, CHUNKS_SCHEMA, CHUNK_ITEMS) as pair:
        yield pair


def numbers(found: list[Score]) -> list[int]:
    return [s.score for s in found]


# -- number keys -----------------------------------------------------------------------------------


async def test_numeric_ranges_compare_numbers_in_numeric_order(
    game: tuple[Database, Tool],
) -> None:
    db, _ = game
    with count_requests(db) as log:
        found = await db.query(Score, user_id="u1", score=between(100, 200)).all()
    assert numbers(found) == [100, 150, 200]
    assert log.operations == ["Query"]
    assert numbers(await db.query(Score, user_id="u1").all()) == [99, 100, 150, 200, 1000]
    assert numbers(await db.query(Score, user_id="u1", score=gt(99)).all()) == [100, 150, 200, 1000]
    assert numbers(await db.query(Score, user_id="u1", score=lt(100)).all()) == [99]
    assert numbers(await db.query(Score, user_id="u1", score=le(100.5)).all()) == [99, 100]
    assert numbers(await db.query(Score, user_id="u1", score=1000).all()) == [1000]


async def test_numeric_ranges_on_an_index_with_a_number_sort_key(
    game: tuple[Database, Tool],
) -> None:
    db, _ = game
    with count_requests(db) as log:
        found = await db.query(Score, index="ByGame", game="Galaxy", top=between(6, 1000)).all()
    assert [s.top for s in found] == [99, 100, 1000]
    assert log.operations == ["Query"]
    assert [s.top for s in await db.query(Score, index="ByGame", game="Galaxy").all()] == [
        5,
        99,
        100,
        1000,
    ]


async def test_begins_with_on_a_number_key_is_refused_saying_why(
    game: tuple[Database, Tool],
) -> None:
    db, _ = game
    with count_requests(db) as log, pytest.raises(ExpressionError, match="compares by value"):
        await db.query(Score, user_id="u1", score=dynorm.begins_with("1")).all()
    assert log.operations == []


@pytest.mark.parametrize("secret", [None, b"s" * 32])
async def test_cursors_page_across_number_keys(
    dynorm_server: RunningServer, secret: bytes | None
) -> None:
    async with written_by_tool(
        dynorm_server, scores, SCORES_SCHEMA, SCORE_ITEMS, cursor_secret=secret
    ) as (db, _):
        query = db.query(Score, user_id="u1", score=gt(99))
        seen: list[int] = []
        cursor = None
        while True:
            page = await query.page(limit=2, cursor=cursor)
            seen += numbers(page.items)
            cursor = page.cursor
            if cursor is None:
                break
        assert seen == [100, 150, 200, 1000]
        index = db.query(Score, index="ByGame", game="Galaxy")
        first = await index.page(limit=3)
        rest = await index.page(limit=3, cursor=first.cursor)
        assert [s.top for s in first.items + rest.items] == [5, 99, 100, 1000]
        scan = db.scan(Score)
        scanned: list[Score] = []
        cursor = None
        while True:
            page = await scan.page(limit=4, cursor=cursor)
            scanned += page.items
            if (cursor := page.cursor) is None:
                break
        assert sorted(numbers(scanned)) == [5, 99, 100, 150, 200, 1000]


async def test_get_update_delete_by_number_key(game: tuple[Database, Tool]) -> None:
    db, tool = game
    key = {"UserId": {"S": "u1"}, "Score": {"N": "100"}}
    with count_requests(db) as log:
        score = await db.get(Score, user_id="u1", score=100)
    assert score == Score("u1", 100, "Galaxy", 100, 2)
    assert log.operations == ["GetItem"]
    await db.update(score, set={"wins": 9, "top": 120}, condition=Attr("wins") == 2)
    assert await tool.get(key) == tool_score("u1", 100, "Galaxy", 120, 9)
    found = await db.query(Score, index="ByGame", game="Galaxy", top=120).all()
    assert found == [Score("u1", 100, "Galaxy", 120, 9)]
    assert await db.get_many(
        Score, [{"user_id": "u1", "score": 99}, {"user_id": "u1", "score": 7}]
    ) == [
        Score("u1", 99, "Galaxy", 99, 1),
        None,
    ]
    await db.delete(found[0])
    assert await tool.get(key) is None


async def test_what_dynorm_writes_back_is_the_tools_item(game: tuple[Database, Tool]) -> None:
    db, tool = game
    original = SCORE_ITEMS[0]
    key = {"UserId": original["UserId"], "Score": original["Score"]}
    score = await db.get(Score, user_id="u1", score=1000)
    await tool.delete(key)
    await db.put(score, overwrite=False)
    assert await tool.get(key) == original


# -- binary keys -----------------------------------------------------------------------------------


async def test_binary_keys_read_query_page_and_write_back(blobs: tuple[Database, Tool]) -> None:
    db, tool = blobs
    with count_requests(db) as log:
        chunk = await db.get(Chunk, digest=DIGEST, part=decimal.Decimal(2))
    assert chunk == Chunk(DIGEST, decimal.Decimal(2), b"\x02" * 3)
    assert log.operations == ["GetItem"]
    parts = await db.query(Chunk, digest=DIGEST).all()
    assert [c.part for c in parts] == [1, 2, 10]
    # BatchGetItem's items are matched to the keys asked for by value: base64 text or bytes,
    # "10" for 10.0
    asked = [(DIGEST, "2"), (DIGEST, "10.0"), (OTHER, "5"), (OTHER, "1")]
    keys = [{"digest": d, "part": decimal.Decimal(p)} for d, p in asked]
    with count_requests(db) as log:
        many = await db.get_many(Chunk, keys)
    assert log.operations == ["BatchGetItem"]
    found = [None if c is None else (c.digest, int(c.part)) for c in many]
    assert found == [(DIGEST, 2), (DIGEST, 10), None, (OTHER, 1)]
    assert [c.part for c in await db.query(Chunk, digest=DIGEST, part=gt(1)).all()] == [2, 10]
    first = await db.query(Chunk, digest=DIGEST).page(limit=2)
    rest = await db.query(Chunk, digest=DIGEST).page(limit=2, cursor=first.cursor)
    assert [c.part for c in first.items + rest.items] == [1, 2, 10]
    key = {"Digest": {"B": DIGEST}, "Part": {"N": "10"}}
    await tool.delete(key)
    await db.put(parts[2])
    assert await tool.get(key) == CHUNK_ITEMS[0]
    other = await db.get(Chunk, digest=OTHER, part=decimal.Decimal(1))
    await db.update(other, set={"data": b"y"})
    assert await tool.get({"Digest": {"B": OTHER}, "Part": {"N": "1"}}) == CHUNK_ITEMS[3] | {
        "Data": {"B": b"y"}
    }


# -- created by dynorm: an event log keyed by epoch seconds ----------------------------------------


async def test_create_table_uses_the_tables_key_types(dynorm_connect: Connect) -> None:
    async with dynorm_connect(events) as db:
        described = await db.describe_table()
        assert described is not None
        types = {a["AttributeName"]: a["AttributeType"] for a in described["AttributeDefinitions"]}
        assert types == {"pk": "S", "sk": "N"}
        await db.put_all([Event("d1", t, "ping") for t in (1_700_000_100, 999, 1_700_000_000)])
        found = await db.query(Event, device_id="d1", at=between(1_000, 1_800_000_000)).all()
        assert [e.at for e in found] == [1_700_000_000, 1_700_000_100]
        assert [e.at for e in await db.query(Event, device_id="d1").all()] == [
            999,
            1_700_000_000,
            1_700_000_100,
        ]
        stored = await db.send(
            dynorm.Request(
                "GetItem",
                {"TableName": db.table_name, "Key": {"pk": {"S": "DEVICE#d1"}, "sk": {"N": "999"}}},
            )
        )
        assert stored["Item"] == {
            "pk": {"S": "DEVICE#d1"},
            "sk": {"N": "999"},
            "kind": {"S": "ping"},
        }
        assert await db.get(Event, device_id="d1", at=999) == Event("d1", 999, "ping")


def test_workbench_export_shows_number_and_binary_key_types() -> None:
    model = export_model(scores)
    (table,) = model["DataModel"]
    assert table["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "UserId", "AttributeType": "S"},
        "SortKey": {"AttributeName": "Score", "AttributeType": "N"},
    }
    assert table["GlobalSecondaryIndexes"][0]["KeyAttributes"]["SortKey"] == {
        "AttributeName": "TopScore",
        "AttributeType": "N",
    }
    (table,) = export_model(chunks)["DataModel"]
    assert table["KeyAttributes"]["PartitionKey"]["AttributeType"] == "B"


# -- a migration: index keys backfilled as numbers -------------------------------------------------


async def test_backfill_writes_number_index_keys_once(dynorm_connect: Connect) -> None:
    async with dynorm_connect(readings) as db:
        for at, level in ((10, "1.50"), (20, "12"), (30, "9.25")):
            item: Raw = {"pk": {"S": "S#s1"}, "sk": {"N": str(at)}}  # before the index
            item |= {"sensor": {"S": "s1"}, "at": {"N": str(at)}, "site": {"B": b"\x00n"}}
            item |= {"level": {"N": level}}
            await db.send(dynorm.Request("PutItem", {"TableName": db.table_name, "Item": item}))
        assert await db.query(Level, index="ByLevel", site=b"\x00n").all() == []

        report = await backfill_index(db, Level, "ByLevel")

        assert (report.written, report.ok) == (3, True)
        found = await db.query(Level, index="ByLevel", site=b"\x00n", level=gt(1.5)).all()
        assert [(x.at, x.level) for x in found] == [(30, decimal.Decimal("9.25")), (20, 12)]
        # what is stored now is what the model writes (binaries read back as base64 text on the
        # fast path, as bytes on botocore's: the same value)
        with count_requests(db) as log:
            again = await backfill_index(db, Level, "ByLevel")
        assert again.changes == 0
        assert not {"PutItem", "BatchWriteItem", "UpdateItem"} & set(log.operations)


# -- NoSQL Workbench: export, import, export again -------------------------------------------------


async def test_workbench_round_trip_keeps_number_keys(dynorm_server: RunningServer) -> None:
    objects = [Score("u1", n, "Galaxy", n, 1) for n in (1000, 99, 100)]
    exported = export_model(scores, items=objects, table_name="GameScores")
    model = read_model(exported)
    name = f"GameScores-wb-{uuid.uuid4().hex[:8]}"
    async with dynorm.connect(
        scores,
        endpoint_url=dynorm_server.url,
        region_name=TEST_REGION,
        aws_access_key_id=TEST_ACCESS_KEY_ID,
        aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
        table_name=name,
        fast_path=fast_path_selected(),
    ) as db:
        try:
            report = await import_model(db, model, models=scores)  # creates the table, N keys
            assert report.written == 3
            found = await db.query(Score, user_id="u1", score=between(99, 100)).all()
            assert found == [Score("u1", 99, "Galaxy", 99, 1), Score("u1", 100, "Galaxy", 100, 1)]
            live = await scan_items(db)
        finally:
            await db.delete_table()
    again = export_model(scores, raw_items=live, table_name="GameScores", when=None)
    assert again["DataModel"] == exported["DataModel"]


# -- one partition, several models: told apart by the type attribute -------------------------------

feed = Table("Feed", pk="pk", sk="at", key_types={"at": "N"}, type_attribute="type")


@feed.model(pk="DEVICE#{device_id}", sk="{at}", entity="device")
class Device:
    device_id: str
    at: int = 0  # the device's own item sorts first: no event is at 0
    name: str = ""
    events = dynorm.HasMany["Reading"](via=dynorm.Partition())


@feed.model(pk="DEVICE#{device_id}", sk="{at}", entity="reading")
class Reading:
    device_id: str
    at: int
    value: int = 0


async def test_a_parent_and_its_number_keyed_children_in_one_query(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(feed) as db:
        await db.put_all(
            [Device("d1", name="pump"), *(Reading("d1", 1_700_000_000 + i, i) for i in range(5))]
        )
        with count_requests(db) as log:
            device = await db.get(Device, device_id="d1", at=0, load=[Device.events])
        assert log.operations == ["Query"]
        assert device.name == "pump"
        assert [r.value for r in device.events.loaded] == [0, 1, 2, 3, 4]
        page = await device.events.page(limit=2)
        rest = await device.events.page(limit=10, cursor=page.cursor)
        assert [r.value for r in page.items + rest.items] == [0, 1, 2, 3, 4]
        later = await db.query(Reading, device_id="d1", at=gt(1_700_000_002)).all()
        assert [r.value for r in later] == [3, 4]
        assert await db.query(Device, device_id="d1").all() == [device]
        await db.add(device, Device.events, Reading("d1", 1_600_000_000, 9))
        found = await db.query(Reading, device_id="d1").all()
        assert [r.value for r in found] == [9, 0, 1, 2, 3, 4]


@pytest.mark.transactions
async def test_transactions_write_and_read_number_and_binary_keys(
    game: tuple[Database, Tool], blobs: tuple[Database, Tool]
) -> None:
    db, tool = game
    async with db.transaction() as tx:
        tx.put(Score("u3", 7, "Galaxy", 7))
        tx.delete(Score("u2", 5, "Galaxy", 5, 0))
    assert await tool.get({"UserId": {"S": "u2"}, "Score": {"N": "5"}}) is None
    got = await db.transact_get((Score, {"user_id": "u3", "score": 7}))
    assert got == (Score("u3", 7, "Galaxy", 7),)

    async def write() -> None:
        async with db.transaction() as tx:
            tx.put(Score("u4", 1, "Galaxy", 1))
            tx.put(Score("u3", 7, "Galaxy", 8), condition=Attr("top") == 0)  # it is 7

    with pytest.raises(dynorm.TransactionCanceledError):
        await write()
    assert await tool.get({"UserId": {"S": "u4"}, "Score": {"N": "1"}}) is None
    chunks_db, _ = blobs
    (chunk,) = await chunks_db.transact_get((Chunk, {"digest": OTHER, "part": 1}))
    assert chunk is not None
    assert chunk.data == b"x"


# -- copies: a parent's field copied into children found through a number-sorted index -----------

ledger = Table(
    "Ledger",
    pk="pk",
    sk="sk",
    indexes=[GSI("ByAccount", pk="apk", sk="seq")],
    key_types={"seq": "N"},
)


@ledger.model(pk="ACCOUNT#{account}", sk="ACCOUNT#{account}")
class Account:
    account: str
    owner: str = ""
    entries = dynorm.HasMany["Entry"](
        via=dynorm.Denormalized(copy={"owner": "owner"}, where=dynorm.Index("ByAccount"))
    )


@ledger.model(
    pk="ENTRY#{entry_id}", sk="ENTRY#{entry_id}", ByAccount=("ACCOUNT#{account}", "{seq}")
)
class Entry:
    entry_id: str
    account: str
    seq: int  # the entry's place in its account: the index's number sort key
    amount: decimal.Decimal = decimal.Decimal(0)
    owner: str | None = None  # the copy


@pytest.mark.transactions
async def test_copies_in_children_of_a_number_sorted_index_are_rewritten(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(ledger) as db:
        account = await db.put(Account("a1", owner="ada"))
        for seq in (1, 2, 10):
            await db.add(account, Account.entries, Entry(f"e{seq}", "a1", seq))
        with count_requests(db) as log:
            await db.put(attrs.evolve(account, owner="grace"))
        assert "TransactWriteItems" in log.operations
        entries = await db.query(Entry, index="ByAccount", account="a1", seq=ge(2)).all()
        assert [(e.seq, e.owner) for e in entries] == [(2, "grace"), (10, "grace")]
        loaded = await db.get(Account, account="a1", load=[Account.entries])
        assert [(e.seq, e.owner) for e in loaded.entries.loaded] == [
            (1, "grace"),
            (2, "grace"),
            (10, "grace"),
        ]
