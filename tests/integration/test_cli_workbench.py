"""``dynorm workbench export`` and ``dynorm workbench import``, run as a user runs them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from dynorm import MAX_ITEM_BYTES, Database, Request, TableNotFoundError
from dynorm.testing import RunningServer
from dynorm.workbench import WorkbenchError, load_model
from tests.faultproxy import FaultProxy, connect_to
from tests.seed_models import app

from .cli import Cli
from .raw import raw_scan

pytestmark = pytest.mark.integration

EXAMPLES = "tests.integration.cli_models:examples"
#: An item a Workbench user added by hand: no model of ``app`` maps its key.
STRAY = {"pk": {"S": "CONFIG"}, "sk": {"S": "v1"}, "plan_type": {"S": "Internal"}}


@pytest.fixture
def name() -> str:
    return f"cli-wb-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def db(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """A connection to the table the command imports into; dropped afterwards if made."""
    async with connect_to(dynorm_server.url, app, name) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()


async def describe(db: Database) -> dict[str, Any]:
    table: dict[str, Any] = (await db.send(Request("DescribeTable", {"TableName": db.table_name})))[
        "Table"
    ]
    return table


async def stored(db: Database) -> dict[tuple[str, str], dict[str, Any]]:
    """Every stored item (consistent raw Scan) by its key."""
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for item in await raw_scan(db):
        key = (item["pk"]["S"], item["sk"]["S"])
        assert key not in items
        items[key] = item
    return items


def file_items(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every item of a model file (the table's and its facets') by its key."""
    (table,) = data["DataModel"]
    items = [*table["TableData"], *(i for f in table["TableFacets"] for i in f["TableData"])]
    return {(i["pk"]["S"], i["sk"]["S"]): i for i in items}


def undated(data: dict[str, Any]) -> dict[str, Any]:
    meta = {
        k: v
        for k, v in data["ModelMetadata"].items()
        if k not in ("DateCreated", "DateLastModified")
    }
    return {**data, "ModelMetadata": meta}


async def test_export_import_and_export_live_give_the_same_model(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    exported = tmp_path / "app.json"
    ran = await cli.run(
        "workbench", "export", "tests.seed_models:app", "-o", str(exported),
        "--examples", EXAMPLES, cwd=tmp_path,
    )  # fmt: skip
    assert ran.code == 0, ran.output
    assert f"Wrote {exported}: 3 facets, 5 sample items" in ran.err
    data = json.loads(exported.read_text())
    data["DataModel"][0]["TableData"].append(STRAY)  # added in Workbench
    exported.write_text(json.dumps(data, indent=2))

    imported = await cli.run(
        "workbench", "import", str(exported), "--table", name, "--models",
        "tests.seed_models:app", cwd=tmp_path,
    )  # fmt: skip

    assert imported.code == 0, imported.output
    lines = imported.out.splitlines()
    assert (
        lines[0] == f"Created {name!r} (pk, sk; indexes GSI1 (GSI1PK, GSI1SK)) at {cli.server.url}"
    )
    assert lines[1] == f"Loaded 6 items into {name!r}"
    rows = {
        cells[1].strip(): int(cells[2])
        for line in lines
        if len(cells := line.split("│")) == 4 and cells[2].strip().isdigit()
    }
    assert rows == {"Org": 1, "User": 2, "Ticket": 2, "no model": 1}
    assert "  no model maps pk='CONFIG', sk='v1'" in lines
    table = await describe(db)
    assert table["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    [gsi] = table["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "GSI1"
    assert gsi["KeySchema"] == [
        {"AttributeName": "GSI1PK", "KeyType": "HASH"},
        {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
    ]
    assert gsi["Projection"] == {"ProjectionType": "ALL"}
    items = await stored(db)
    assert items == file_items(data)
    assert items[("ORG#ACME", "USER#ada")]["GSI1PK"] == {"S": "ORG#ACME#USER#ada"}

    again = tmp_path / "live.json"
    live = await cli.run(
        "workbench", "export", "tests.seed_models:app", "--live", "--table", name,
        "-o", str(again), cwd=tmp_path,
    )  # fmt: skip

    assert live.code == 0, live.output
    assert f"Wrote {again}: 3 facets, 6 sample items" in live.err
    relive = json.loads(again.read_text())
    assert relive["DataModel"][0]["TableName"] == name  # the live table's name
    relive["DataModel"][0]["TableName"] = "app"
    assert undated(relive) == undated(data)

    twice = await cli.run("workbench", "import", str(exported), "--table-name", name, cwd=tmp_path)

    assert twice.code == 0, twice.output
    assert twice.out == f"Loaded 6 items into {name!r}\n"  # no table created, no models given
    assert await stored(db) == items


@pytest.mark.offline
@pytest.mark.parametrize("output", [(), ("-o", "-")], ids=["no -o", "-o -"])
async def test_export_to_standard_output_writes_only_the_json(
    cli: Cli, output: tuple[str, ...]
) -> None:
    ran = await cli.run("workbench", "export", "tests.seed_models:app", *output)

    assert ran.code == 0, ran.output
    data = json.loads(ran.out)
    assert data["ModelName"] == "app"
    (table,) = data["DataModel"]
    assert table["TableName"] == "app"
    assert table["KeyAttributes"] == {
        "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
        "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
    }
    assert [f["FacetName"] for f in table["TableFacets"]] == ["Org", "User", "Ticket"]
    assert [f["KeyAttributeAlias"]["PartitionKeyAlias"] for f in table["TableFacets"]] == [
        "ORG#{name}",
        "ORG#{org_name}",
        "TICKET#{ticket_id}",
    ]
    assert ran.err == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"ModelName": "x",', "not JSON (Expecting"),
        (
            '{"ModelName": "x", "DataModel": [{"TableName": "t", "KeyAttributes": {}}]}',
            "DataModel[0].KeyAttributes.PartitionKey is missing",
        ),
    ],
)
async def test_a_broken_file_is_an_error_that_names_the_place(
    cli: Cli, db: Database, tmp_path: Path, text: str, message: str
) -> None:
    name = db.table_name
    broken = tmp_path / "broken.json"
    broken.write_text(text)

    ran = await cli.run("workbench", "import", str(broken), "--table-name", name, cwd=tmp_path)

    assert ran.code == 1
    assert f"Error: WorkbenchError: {broken}: {message}" in ran.err
    assert "Traceback" not in ran.err
    with pytest.raises(TableNotFoundError):
        await describe(db)  # nothing created


#: Values DynamoDB refuses, as a file can hold them: (attributes of the item, what the error says).
REFUSED_VALUES: dict[str, tuple[dict[str, Any], str]] = {
    "39 digits": (
        {"n": {"N": "1" * 39}},
        r"\.n: 1{39} has 39 significant digits; DynamoDB numbers hold at most 38",
    ),
    "a lone surrogate": (
        {"note": {"S": "caf\udce9"}},
        r"\.note: 'caf\\udce9' holds a lone surrogate \('\\udce9' at index 3\)",
    ),
    "a lone surrogate in a name": (
        {"caf\udce9": {"S": "x"}},
        r": an attribute name: 'caf\\udce9' holds a lone surrogate",
    ),
    "a lone surrogate in a map": (
        {"m": {"M": {"k": {"SS": ["ok", "\ud800"]}}}},
        r"\.m: '\\ud800' holds a lone surrogate",
    ),
    "an empty set": ({"tags": {"SS": []}}, r"\.tags: DynamoDB has no empty sets"),
    "an item over 400 KB": (
        {"big": {"S": "x" * MAX_ITEM_BYTES}},
        r": the item is 4096\d\d bytes, over DynamoDB's item limit of 409600 bytes",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED_VALUES))
async def test_a_value_dynamodb_refuses_is_an_error_naming_the_item_and_field(
    cli: Cli, db: Database, tmp_path: Path, case: str
) -> None:
    attributes, message = REFUSED_VALUES[case]
    good = {"pk": {"S": "ORG#A"}, "sk": {"S": "A"}}
    bad = {"pk": {"S": "ORG#B"}, "sk": {"S": "B"}, **attributes}
    data = {
        "ModelName": "refused",
        "DataModel": [
            {
                "TableName": "refused",
                "KeyAttributes": {
                    "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
                    "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                },
                "TableData": [good, bad],
            }
        ],
    }
    path = tmp_path / "refused.json"
    path.write_text(json.dumps(data))  # ASCII: a lone surrogate as the escape "\udce9"
    place = re.escape(f"{path}: DataModel[0].TableData[1]")

    ran = await cli.run("workbench", "import", str(path), "--table-name", db.table_name)

    assert ran.code == 1, ran.output
    assert "Traceback" not in ran.err
    assert re.search(f"Error: WorkbenchError: {place}{message}", ran.err), ran.err
    with pytest.raises(TableNotFoundError):
        await describe(db)  # nothing created, nothing written
    # The Python API says the same, when the file is read (load_model), before any request.
    with pytest.raises(WorkbenchError, match=f"{place}{message}"):
        load_model(path)


async def test_no_create_refuses_a_missing_table(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    exported = tmp_path / "app.json"
    exported.write_text(
        json.dumps(
            {
                "ModelName": "app",
                "DataModel": [
                    {
                        "TableName": "app",
                        "KeyAttributes": {
                            "PartitionKey": {"AttributeName": "pk", "AttributeType": "S"},
                            "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                        },
                        "TableData": [STRAY],
                    }
                ],
            }
        )
    )

    ran = await cli.run(
        "workbench", "import", str(exported), "--table-name", name, "--no-create", cwd=tmp_path
    )

    assert ran.code == 1
    assert f"there is no table {name!r} at {cli.server.url}; leave out --no-create" in ran.err
    with pytest.raises(TableNotFoundError):
        await describe(db)


async def test_export_says_what_to_change_before_reading_anything(
    cli: Cli, name: str, tmp_path: Path
) -> None:
    nowhere = await cli.run(
        "workbench", "export", "tests.seed_models:app", "-o", str(tmp_path / "no" / "app.json"),
        "--live", "--endpoint-url", "http://127.0.0.1:9", cwd=tmp_path,
    )  # fmt: skip
    missing = await cli.run(
        "workbench", "export", "tests.seed_models:app", "-o", str(tmp_path / "app.json"),
        "--live", "--table-name", name, cwd=tmp_path,
    )  # fmt: skip

    assert nowhere.code == 2
    assert f"there is no directory {str(tmp_path / 'no')!r} to write 'app.json' in" in nowhere.err
    assert missing.code == 1
    assert f"there is no table {name!r} at {cli.server.url} to read" in missing.err
    assert "--table-name" in missing.err
    assert "Traceback" not in nowhere.err + missing.err
    assert not (tmp_path / "app.json").exists()


# -- an import stopped part-way -----------------------------------------------------------------


def many_items(count: int) -> dict[str, Any]:
    """A model of ``count`` items (``ITEM#0000`` ...), 25 to a batch in file order."""
    key = {"AttributeName": "pk", "AttributeType": "S"}
    return {
        "ModelName": "many",
        "ModelMetadata": {"Version": "3.0", "AWSService": "Amazon DynamoDB"},
        "DataModel": [
            {
                "TableName": "Many",
                "KeyAttributes": {
                    "PartitionKey": key,
                    "SortKey": {"AttributeName": "sk", "AttributeType": "S"},
                },
                "TableData": [
                    {"pk": {"S": f"ITEM#{i:04}"}, "sk": {"S": "A"}} for i in range(count)
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


def flat(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as one space (rich wraps messages)."""
    return " ".join(text.split())


async def test_an_import_stopped_by_server_errors_says_how_many_items_are_stored(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many_items(400)))
    async with FaultProxy.running(cli.server.url) as proxy:
        # Every try of the batch holding ITEM#0300 (the 13th of 16) fails with a 500.
        proxy.inject(
            "error_500", operation="BatchWriteItem", times=100, when=writes_key("ITEM#0300")
        )
        ran = await cli.run(
            "workbench", "import", str(path), "--table-name", name, "--endpoint-url", proxy.url,
            "--max-attempts", "2", cwd=tmp_path,
        )  # fmt: skip

    assert ran.code == 1, ran.output
    assert "Traceback" not in ran.err
    said = flat(ran.err)
    assert (
        f"Error: ImportIncompleteError: the import into {name!r} stopped part-way: 375 of 400 "
        "items are stored, 25 may not be (DatabaseError: BatchWriteItem: Internal server error"
    ) in said
    assert "Run the same import again to store the rest" in said
    assert "Stored 375 of 400 items" in ran.err.splitlines()
    assert len(await stored(db)) == 375

    again = await cli.run("workbench", "import", str(path), "--table-name", name, cwd=tmp_path)

    assert again.code == 0, again.output
    assert again.out == f"Loaded 400 items into {name!r}\n"
    assert len(await stored(db)) == 400


async def test_ctrl_c_during_an_import_exits_130_saying_how_many_items_are_stored(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many_items(400)))
    async with FaultProxy.running(cli.server.url) as proxy:
        # The batch holding ITEM#0300 is held: the import waits there, the others are stored.
        held = proxy.pause("BatchWriteItem", when=writes_key("ITEM#0300"))
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "dynorm", "workbench", "import", str(path),
            "--table-name", name, "--endpoint-url", proxy.url,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path, env=cli.environment(tmp_path),
        )  # fmt: skip
        assert process.stderr is not None
        printed: list[str] = []
        while "Stored 375 of 400 items" not in printed:
            line = await asyncio.wait_for(process.stderr.readline(), timeout=60)
            assert line, printed  # the command ended before it stored 375 items
            printed.append(line.decode().rstrip("\n"))
        await asyncio.wait_for(held.arrived.wait(), timeout=60)

        process.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)

    assert process.returncode == 130, (out, err)
    said = flat(err.decode())
    assert (
        f"Interrupted: 375 of 400 items are stored in {name!r}. Run the same command again to "
        "complete the import"
    ) in said
    assert "Traceback" not in said
    assert "Aborted" not in said
    assert len(await stored(db)) == 375

    again = await cli.run("workbench", "import", str(path), "--table-name", name, cwd=tmp_path)

    assert again.code == 0, again.output
    assert again.out == f"Loaded 400 items into {name!r}\n"
    assert len(await stored(db)) == 400


SAMPLES = Path(__file__).parents[1] / "data" / "workbench"


async def test_aws_published_models_import_as_they_are(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    vehicles = await cli.run(
        "workbench", "import", str(SAMPLES / "ConnectedVehiclesSchema.json"), "--table-name",
        name, cwd=tmp_path,
    )  # fmt: skip
    assert vehicles.code == 0, vehicles.output
    assert f"Loaded 12 items into {name!r}" in vehicles.out.splitlines()
    assert len(await raw_scan(db)) == 12
    await db.delete_table()

    bank = SAMPLES / "BankModel.json"  # format 2.0, two tables
    unnamed = await cli.run("workbench", "import", str(bank), "--table-name", name, cwd=tmp_path)
    named = await cli.run(
        "workbench", "import", str(bank), "--source", "TransactionHistory", "--table-name", name,
        cwd=tmp_path,
    )  # fmt: skip

    assert unnamed.code == 2
    assert (
        f"{bank} holds 2 tables ('PaymentScheduler', 'TransactionHistory'); name the one to "
        "import with --source"
    ) in flat(unnamed.err)
    assert "Traceback" not in unnamed.err
    assert named.code == 0, named.output
    assert f"Loaded 2 items into {name!r}" in named.out.splitlines()
    assert len(await raw_scan(db)) == 2
