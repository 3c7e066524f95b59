"""Importing NoSQL Workbench models into the server, and exporting live tables back."""

from __future__ import annotations

import base64
import copy
import datetime
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import attrs
import pytest

import dynorm
from dynorm import MAX_ITEM_BYTES, Database, LimitExceededError, Request, Table, TableNotFoundError
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    RunningServer,
    count_requests,
    fast_path_selected,
)
from dynorm.workbench import (
    Attribute,
    ImportIncompleteError,
    WorkbenchError,
    export_model,
    import_model,
    load_model,
    read_model,
    scan_items,
    table_from_model,
)
from tests.faultproxy import FaultyConnect
from tests.seed_models import Org, Ticket, User, app

from .raw import raw_item

pytestmark = pytest.mark.integration

WHEN = datetime.datetime(2026, 1, 5, 9, 30)

Open = Callable[[Table], AbstractAsyncContextManager[Database]]
Connect = Callable[[Table, str], AbstractAsyncContextManager[Database]]


@pytest.fixture
def connect_to(dynorm_server: RunningServer) -> Connect:
    """``connect_to(table, table_name)``: a Database on the test server (nothing created)."""

    def connect(table: Table, table_name: str) -> AbstractAsyncContextManager[Database]:
        return dynorm.connect(
            table,
            endpoint_url=dynorm_server.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_name=table_name,
            fast_path=fast_path_selected(),
        )

    return connect


@pytest.fixture
def open_db(connect_to: Connect) -> Open:
    """``open_db(table)``: a Database on a table name no table has yet; dropped afterwards."""

    @asynccontextmanager
    async def open_(table: Table) -> AsyncIterator[Database]:
        async with connect_to(table, f"wb-{uuid.uuid4().hex[:8]}") as db:
            try:
                yield db
            finally:
                with suppress(TableNotFoundError):
                    await db.delete_table()

    return open_


def seed_objects() -> list[object]:
    created = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    return [
        Org("ACME", "Pro"),
        User("ACME", "ada"),
        User("ACME", "bob", "Admin"),
        Ticket("t-1", "ACME", "ada", created),
        Ticket("t-2", "ACME", "bob", created),
    ]


#: An item no model of ``app`` maps, with values of every kind.
STRAY: dict[str, Any] = {
    "pk": {"S": "CONFIG"},
    "sk": {"S": "v1"},
    "blob": {"B": base64.b64encode(b"\x00\xff").decode()},
    "flags": {"BS": [base64.b64encode(b"\x01").decode()]},
    "n": {"N": "7.5"},
    "ok": {"BOOL": True},
    "none": {"NULL": True},
    "names": {"SS": ["a", "b"]},
    "nums": {"NS": ["1", "2"]},
    "doc": {"M": {"list": {"L": [{"S": "x"}, {"N": "1"}]}}},
}


def seed_export() -> dict[str, Any]:
    return export_model(app, items=seed_objects(), raw_items=[STRAY], when=WHEN)


def as_file(item: dict[str, Any]) -> dict[str, Any]:
    """A raw item as the file holds it: binaries as base64 text, sets sorted."""
    out: dict[str, Any] = {}
    for attr, av in item.items():
        ((tag, value),) = av.items()
        if tag == "B":
            value = value if isinstance(value, str) else base64.b64encode(value).decode()
        elif tag == "BS":
            value = sorted(v if isinstance(v, str) else base64.b64encode(v).decode() for v in value)
        elif tag in ("SS", "NS"):
            value = sorted(value)
        elif tag == "M":
            value = as_file(value)
        out[attr] = {tag: value}
    return out


def by_key(items: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(i["pk"]["S"], i["sk"]["S"]): as_file(i) for i in items}


async def describe(db: Database) -> dict[str, Any]:
    response = await db.send(Request("DescribeTable", {"TableName": db.table_name}))
    table: dict[str, Any] = response["Table"]
    return table


async def test_import_creates_the_table_with_its_keys_and_indexes(open_db: Open) -> None:
    model = read_model(seed_export())
    async with open_db(table_from_model(model)) as db:
        report = await import_model(db, model)
        assert (report.table_name, report.created, report.written) == (db.table_name, True, 6)
        table = await describe(db)
        assert table["TableStatus"] == "ACTIVE"
        assert table["KeySchema"] == [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ]
        assert sorted(
            (d["AttributeName"], d["AttributeType"]) for d in table["AttributeDefinitions"]
        ) == [
            ("GSI1PK", "S"),
            ("GSI1SK", "S"),
            ("pk", "S"),
            ("sk", "S"),
        ]
        (gsi,) = table["GlobalSecondaryIndexes"]
        assert gsi["IndexName"] == "GSI1"
        assert gsi["KeySchema"] == [
            {"AttributeName": "GSI1PK", "KeyType": "HASH"},
            {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
        ]
        assert gsi["Projection"] == {"ProjectionType": "ALL"}
        assert not table.get("LocalSecondaryIndexes")  # moto lists none as []


async def test_every_item_is_stored_exactly(open_db: Open) -> None:
    model = read_model(seed_export())
    async with open_db(table_from_model(model)) as db:
        await import_model(db, model)
        stored = by_key(await scan_items(db))
        expected = by_key(list(model.table().items))
        assert stored.keys() == expected.keys()
        for key, item in expected.items():
            assert stored[key] == item, key
        assert stored[("CONFIG", "v1")]["blob"] == {"B": "AP8="}
        # The models read what was imported.
        ada = await db.send(
            Request(
                "GetItem",
                {
                    "TableName": db.table_name,
                    "Key": {"pk": {"S": "ORG#ACME"}, "sk": {"S": "USER#ada"}},
                },
            )
        )
        assert ada["Item"]["GSI1PK"] == {"S": "ORG#ACME#USER#ada"}


async def test_the_models_report_says_which_model_each_item_is(
    open_db: Open, connect_to: Connect
) -> None:
    model = read_model(seed_export())
    async with open_db(table_from_model(model)) as db:
        report = await import_model(db, model, models=app)
        assert report.classified
        assert report.by_model == {"Org": 1, "Ticket": 2, "User": 2}
        assert [i.key for i in report.unmapped] == [{"pk": {"S": "CONFIG"}, "sk": {"S": "v1"}}]
        models = {i.key["sk"]["S"]: i.model for i in report.items}
        assert models == {
            "v1": None,
            "METADATA#ACME": "Org",
            "USER#ada": "User",
            "USER#bob": "User",
            "TICKET#t-1": "Ticket",
            "TICKET#t-2": "Ticket",
        }
        # The models read what was imported.
        async with connect_to(app, db.table_name) as app_db:
            ada = await app_db.get(User, load=[User.tickets], org_name="ACME", username="ada")
            assert ada.user_type == "Member"
            assert [t.ticket_id for t in ada.tickets.loaded] == ["t-1"]
            found = sorted([type(o).__name__ async for o in app_db.scan(None)])
            assert found == ["Org", "Ticket", "Ticket", "User", "User"]  # the stray is skipped


async def test_a_second_import_overwrites_the_same_keys(open_db: Open) -> None:
    data = seed_export()
    model = read_model(data)
    async with open_db(table_from_model(model)) as db:
        await import_model(db, model)
        first = by_key(await scan_items(db))
        changed = copy.deepcopy(data)
        (org,) = changed["DataModel"][0]["TableFacets"][0]["TableData"]
        org["plan_type"] = {"S": "Enterprise"}
        again = await import_model(db, read_model(changed))
        assert (again.created, again.written) == (False, 6)
        second = by_key(await scan_items(db))
        assert second.keys() == first.keys()
        assert second[("ORG#ACME", "METADATA#ACME")]["plan_type"] == {"S": "Enterprise"}
        del second[("ORG#ACME", "METADATA#ACME")], first[("ORG#ACME", "METADATA#ACME")]
        assert second == first


async def test_export_import_export_gives_the_same_model(open_db: Open) -> None:
    exported = seed_export()
    model = read_model(exported)
    async with open_db(table_from_model(model)) as db:
        await import_model(db, model)
        live = await scan_items(db)
    again = export_model(app, raw_items=live, table_name="app", when=WHEN)
    assert again == exported
    assert read_model(again) == model


async def test_number_keys_of_a_workbench_file_keep_their_type(open_db: Open) -> None:
    data: dict[str, Any] = {
        "ModelName": "scores",
        "ModelMetadata": {"AWSService": "Amazon DynamoDB", "Version": "3.0"},
        "DataModel": [
            {
                "TableName": "Scores",
                "KeyAttributes": {
                    "PartitionKey": {"AttributeName": "player", "AttributeType": "S"},
                    "SortKey": {"AttributeName": "round", "AttributeType": "N"},
                },
                "NonKeyAttributes": [{"AttributeName": "points", "AttributeType": "N"}],
                "GlobalSecondaryIndexes": [
                    {
                        "IndexName": "by-points",
                        "KeyAttributes": {
                            "PartitionKey": {"AttributeName": "player", "AttributeType": "S"},
                            "SortKey": {"AttributeName": "points", "AttributeType": "N"},
                        },
                        "Projection": {"ProjectionType": "KEYS_ONLY"},
                    }
                ],
                "TableData": [
                    {"player": {"S": "ada"}, "round": {"N": "1"}, "points": {"N": "30"}},
                    {"player": {"S": "ada"}, "round": {"N": "2"}, "points": {"N": "12"}},
                ],
            }
        ],
    }
    model = read_model(data)
    async with open_db(table_from_model(model)) as db:
        report = await import_model(db, model)
        assert report.written == 2
        table = await describe(db)
        types = {d["AttributeName"]: d["AttributeType"] for d in table["AttributeDefinitions"]}
        assert types == {"player": "S", "round": "N", "points": "N"}
        assert table["GlobalSecondaryIndexes"][0]["Projection"] == {"ProjectionType": "KEYS_ONLY"}
        response = await db.send(
            Request(
                "Query",
                {
                    "TableName": db.table_name,
                    "IndexName": "by-points",
                    "KeyConditionExpression": "player = :p",
                    "ExpressionAttributeValues": {":p": {"S": "ada"}},
                },
            )
        )
        assert [i["round"]["N"] for i in response["Items"]] == ["2", "1"]  # by points


async def test_an_existing_table_with_other_keys_is_refused_before_writing(
    open_db: Open, connect_to: Connect
) -> None:
    other = Table("other", pk="PK", sk="SK")
    model = read_model(seed_export())
    async with open_db(other) as db:
        await db.create_table()
        wrong = table_from_model(model)
        async with connect_to(wrong, db.table_name) as same_name:
            with pytest.raises(WorkbenchError, match="exists with keys pk='PK', sk='SK'"):
                await import_model(same_name, model)
        assert await scan_items(db) == []


async def test_a_database_with_other_keys_is_refused(open_db: Open) -> None:
    model = read_model(seed_export())
    async with open_db(Table("other", pk="PK", sk="SK")) as db:
        with pytest.raises(WorkbenchError, match="Use a Table with the same keys"):
            await import_model(db, model)
        with pytest.raises(TableNotFoundError):
            await describe(db)  # nothing was created


async def test_without_create_a_missing_table_is_an_error(open_db: Open) -> None:
    model = read_model(seed_export())
    async with open_db(table_from_model(model)) as db:
        with pytest.raises(TableNotFoundError, match="import with create=True"):
            await import_model(db, model, create=False)


def test_an_item_over_the_size_limit_is_refused_when_the_file_is_read() -> None:
    data = seed_export()
    data["DataModel"][0]["TableData"][0]["big"] = {"S": "x" * (MAX_ITEM_BYTES + 1)}
    # The check a put makes (core/limits' check_item), so what reads can be imported.
    with pytest.raises(
        WorkbenchError, match=r"DataModel\[0\]\.TableData\[0\]: the item is"
    ) as info:
        read_model(data)
    assert isinstance(info.value.__cause__, LimitExceededError)


def thirty_items(bad: dict[str, Any]) -> dict[str, Any]:
    """A model of 30 items whose 29th is ``bad`` (after the first batch of 25)."""
    items: list[dict[str, Any]] = [
        {"pk": {"S": f"P#{i}"}, "sk": {"S": "A"}, "n": {"N": str(i)}} for i in range(30)
    ]
    items[28] = bad
    key = {"AttributeName": "gpk", "AttributeType": "S"}
    return {
        "ModelName": "thirty",
        "ModelMetadata": {"Version": "3.0", "AWSService": "Amazon DynamoDB"},
        "DataModel": [
            {
                "TableName": "Thirty",
                "KeyAttributes": {
                    "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
                    "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                },
                "GlobalSecondaryIndexes": [
                    {"IndexName": "GSI1", "KeyAttributes": {"PartitionKey": key}}
                ],
                "TableData": items,
            }
        ],
    }


BAD_VALUES: dict[str, tuple[dict[str, Any], str]] = {
    "NaN": ({"n": {"N": "NaN"}}, "DynamoDB numbers cannot be"),
    "1e200": ({"n": {"N": "1e200"}}, "outside DynamoDB's number range"),
    "42 digits": ({"n": {"N": "1" * 42}}, "has 42 significant digits"),
    "empty sort key": ({"sk": {"S": ""}}, r"\.sk: a key attribute .* cannot be empty"),
    "empty index key": ({"gpk": {"S": ""}}, r"\.gpk: a key attribute .* cannot be empty"),
    "SS twice": ({"ss": {"SS": ["a", "a"]}}, "refuses a set holding one value twice"),
    "NS 1 and 1.0": ({"ns": {"NS": ["1", "1.0"]}}, "refuses a set holding one value twice"),
    "5000 digits": ({"n": {"N": "1" * 5000}}, "has 5000 significant digits"),
    "name over 64 KB": ({"a" * 65536: {"S": "x"}}, "is 65536 bytes, over DynamoDB's limit"),
    "map name over 64 KB": (
        {"m": {"M": {"a" * 65536: {"S": "x"}}}},
        "is 65536 bytes, over DynamoDB's limit",
    ),
    "39 digits": ({"n": {"N": "1" * 39}}, "has 39 significant digits"),
    "lone surrogate": ({"s": {"S": "x\ud800"}}, r"\.s: 'x\\ud800' holds a lone surrogate"),
    "lone surrogate in a name": (
        {"x\ud800": {"S": "x"}},
        r"an attribute name: 'x\\ud800' holds a lone surrogate",
    ),
    "lone surrogate in a set": ({"ss": {"SS": ["\udc00"]}}, r"\.ss: .* lone surrogate"),
    "empty set": ({"ns": {"NS": []}}, r"\.ns: DynamoDB has no empty sets"),
    "over 400 KB": (
        {"big": {"S": "x" * MAX_ITEM_BYTES}},
        r"\]: the item is \d+ bytes, over DynamoDB's item limit",
    ),
}


@pytest.mark.parametrize("case", list(BAD_VALUES))
async def test_an_item_dynamodb_refuses_is_refused_before_anything_is_written(
    open_db: Open, case: str
) -> None:
    change, message = BAD_VALUES[case]
    bad = {"pk": {"S": "P#x"}, "sk": {"S": "A"}, **change}
    with pytest.raises(WorkbenchError, match=r"DataModel\[0\]\.TableData\[28\]"):
        read_model(thirty_items(bad))
    # A WorkbenchTable built in code (not read from a file) is checked by the import itself.
    good = read_model(thirty_items({"pk": {"S": "P#x"}, "sk": {"S": "A"}})).table()
    items = list(good.items)
    items[28] = bad
    found = attrs.evolve(good, items=tuple(items))
    async with open_db(table_from_model(found)) as db:
        with count_requests(db) as log, pytest.raises(WorkbenchError, match=message):
            await import_model(db, found)
        assert len(log) == 0  # not even the table was created
        with pytest.raises(TableNotFoundError):
            await describe(db)


# -- AWS's published models (tests/data/workbench, see its README) -------------------------------

SAMPLES = Path(__file__).parents[1] / "data" / "workbench"
#: (file, table) for every table of every sample model.
SAMPLE_TABLES = [
    (path.name, table["TableName"])
    for path in sorted(SAMPLES.glob("*.json"))
    for table in json.loads(path.read_text(encoding="utf-8"))["DataModel"]
]


def file_keys(path: Path, source: str) -> set[str]:
    """The primary keys of one table's items, read from the raw JSON (not by dynorm)."""
    (table,) = [
        t
        for t in json.loads(path.read_text(encoding="utf-8"))["DataModel"]
        if t["TableName"] == source
    ]
    keys = table["KeyAttributes"]
    names = [keys["PartitionKey"]["AttributeName"]]
    if keys.get("SortKey"):
        names.append(keys["SortKey"]["AttributeName"])
    rows = [*table.get("TableData", [])]
    rows += [row for facet in table.get("TableFacets", []) for row in facet.get("TableData", [])]
    return {json.dumps([row[n] for n in names], sort_keys=True) for row in rows}


def live_keys(items: list[dict[str, Any]], table: Table) -> set[str]:
    names = [table.pk] + ([table.sk] if table.sk else [])
    return {json.dumps([item[n] for n in names], sort_keys=True) for item in items}


def test_the_samples_cover_each_published_format_and_plain_json_maps() -> None:
    versions = {
        json.loads(p.read_text(encoding="utf-8"))["ModelMetadata"]["Version"]
        for p in SAMPLES.glob("*.json")
    }
    assert versions == {"2.0", "3.0"}
    assert '"is_enabled": true' in (SAMPLES / "ConnectedVehiclesSchema.json").read_text()
    assert len(SAMPLE_TABLES) == 8


@pytest.mark.parametrize(("file", "source"), SAMPLE_TABLES)
async def test_aws_sample_models_import_as_they_are_and_round_trip(
    open_db: Open, file: str, source: str
) -> None:
    model = load_model(SAMPLES / file)
    table = table_from_model(model, source=source)
    expected = file_keys(SAMPLES / file, source)
    async with open_db(table) as db:
        report = await import_model(db, model, source=source)
        live = await scan_items(db)
    assert report.created
    assert report.written == len(expected)
    assert live_keys(live, table) == expected  # every item of the file, each once
    # What is stored is what the file holds (exported both ways: one normalized form).
    exported = export_model(table, raw_items=live, when=WHEN)
    assert exported == export_model(table, raw_items=model.table(source).items, when=WHEN)

    # export -> import -> export gives the same model.
    again = read_model(exported)
    async with open_db(table_from_model(again)) as db:
        await import_model(db, again)
        relive = await scan_items(db)
    assert export_model(table, raw_items=relive, when=WHEN) == exported
    assert read_model(exported) == again


async def test_map_values_written_as_plain_json_are_stored_as_maps(open_db: Open) -> None:
    model = load_model(SAMPLES / "ConnectedVehiclesSchema.json")
    async with open_db(table_from_model(model)) as db:
        await import_model(db, model)
        item = await raw_item(db, {"PK": "VIN#WDDJK7DA4FF954840", "SK": "FEATURE#CAMERAS"})
    assert item is not None
    assert item["cameras"] == {
        "M": {
            "cameras": {
                "M": {
                    "front_camera_center": {"M": {"foo": {"S": "bar"}}},
                    "rear_camera_center": {"M": {"foo": {"S": "bar"}}},
                }
            },
            "recording_is_active": {"BOOL": True},
        }
    }


async def test_a_key_attribute_name_over_255_bytes_is_refused_before_anything_is_sent(
    open_db: Open,
) -> None:
    good = read_model(thirty_items({"pk": {"S": "P#x"}, "sk": {"S": "A"}})).table()
    (index,) = good.indexes
    long_key = attrs.evolve(good, indexes=(attrs.evolve(index, pk=Attribute("g" * 256, "S")),))
    long_projected = attrs.evolve(good, indexes=(attrs.evolve(index, projection=("p" * 256,)),))
    for found, message in [
        (long_key, r"table 'Thirty': the attribute name 'g+\.\.\.g+' is 256 bytes"),
        (long_projected, r"index 'GSI1' projection: the attribute name .* is 256 bytes"),
    ]:
        # No Table can be declared with such a name either (Table() refuses it).
        with pytest.raises(WorkbenchError, match=r"1 to 255 bytes for the name of a key"):
            table_from_model(found)
        async with open_db(table_from_model(good)) as db:
            with count_requests(db) as log, pytest.raises(WorkbenchError, match=message):
                await import_model(db, found)
            assert len(log) == 0


# -- an import stopped part-way -----------------------------------------------------------------


def many_items(count: int) -> dict[str, Any]:
    """A model of ``count`` items (``ITEM#0000`` ...), 25 to a batch in file order."""
    return {
        "ModelName": "many",
        "ModelMetadata": {"Version": "3.0", "AWSService": "Amazon DynamoDB"},
        "DataModel": [
            {
                "TableName": "Many",
                "KeyAttributes": {
                    "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
                    "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                },
                "TableData": [
                    {"pk": {"S": f"ITEM#{i:04}"}, "sk": {"S": "A"}, "n": {"N": str(i)}}
                    for i in range(count)
                ],
            }
        ],
    }


def writes_key(pk: str) -> Callable[[dict[str, Any]], bool]:
    """Matches a BatchWriteItem body that writes the item whose pk is ``pk``."""

    def match(body: dict[str, Any]) -> bool:
        (writes,) = body["RequestItems"].values()
        return any(w["PutRequest"]["Item"]["pk"]["S"] == pk for w in writes)

    return match


async def test_an_import_stopped_by_server_errors_says_how_many_items_are_stored(
    faulty_connect: FaultyConnect,
) -> None:
    model = read_model(many_items(400))
    async with faulty_connect(table_from_model(model), max_attempts=2) as faulty:
        # Every try of the batch holding ITEM#0300 (the 13th of 16) fails with a 500.
        faulty.proxy.inject(
            "error_500", operation="BatchWriteItem", times=100, when=writes_key("ITEM#0300")
        )
        seen: list[tuple[int, int]] = []
        with pytest.raises(ImportIncompleteError) as info:
            await import_model(faulty.db, model, on_progress=lambda *p: seen.append(p))

        assert (info.value.stored, info.value.total) == (375, 400)
        message = str(info.value)
        assert message.startswith(
            f"the import into {faulty.db.table_name!r} stopped part-way: 375 of 400 items are "
            "stored, 25 may not be (DatabaseError: BatchWriteItem: Internal server error"
        )
        assert message.endswith(
            "). Run the same import again to store the rest: it writes whole items, so the "
            "stored ones are rewritten unchanged"
        )
        assert isinstance(info.value.__cause__, dynorm.DatabaseError)
        assert [p[0] for p in seen] == list(range(25, 376, 25))
        assert {p[1] for p in seen} == {400}
        assert len(await scan_items(faulty.direct)) == 375  # what the error says

        faulty.proxy.reset()
        report = await import_model(faulty.db, model)  # again: completes the table
        assert report.written == 400
        assert len(await scan_items(faulty.direct)) == 400
