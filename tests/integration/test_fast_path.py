"""The fast request path (dynorm's own JSON requests and parser) and botocore's agree.

``connect(fast_path=True)`` (the default) builds, signs and parses data-plane requests itself; with
``False`` botocore does everything. Objects must come back identical either way.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import pytest

from dynorm import Database, HasMany, Partition, Request, Table, connect
from dynorm.testing import RunningServer

pytestmark = pytest.mark.integration

table = Table("fast-path", pk="pk", sk="sk")


@attrs.define
class Size:
    width: float
    label: str


@table.model(pk="BOX#{box_id}", sk="BOX#{box_id}")
@attrs.define
class Box:
    box_id: str
    items = HasMany["Thing"]("Thing", via=Partition())


@table.model(pk="BOX#{box_id}", sk="THING#{n:04d}")
@attrs.define
class Thing:
    box_id: str
    n: int
    blob: bytes
    price: decimal.Decimal
    ratio: float
    fragile: bool
    tags: set[str]
    notes: list[str]
    size: Size
    made: datetime.date
    gone: str | None = None


THINGS = [
    Thing(
        "b1",
        n,
        bytes([n, 0, 255]),
        decimal.Decimal(f"{n}.10"),
        n / 3,
        n % 2 == 0,
        {f"t{n}", "all"},
        [f"note {n}"],
        Size(n * 1.5, f"L{n}"),
        datetime.date(2024, 1, 1 + n),
    )
    for n in range(1, 6)
]


@asynccontextmanager
async def database(server: RunningServer, *, fast: bool, name: str) -> AsyncIterator[Database]:
    async with connect(
        table,
        endpoint_url=server.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        table_name=name,
        fast_path=fast,
    ) as db:
        yield db


async def test_the_installed_aiobotocore_supports_the_fast_path(
    dynorm_server: RunningServer,
) -> None:
    # The fast path falls back to botocore (with a warning) when aiobotocore's internals move;
    # this pins that the versions the project installs keep it on.
    async with (
        database(dynorm_server, fast=True, name="fast-path-on") as fast,
        database(dynorm_server, fast=False, name="fast-path-on") as slow,
    ):
        assert fast.fast_path is True
        assert slow.fast_path is False


async def test_both_paths_read_the_same_objects(dynorm_server: RunningServer) -> None:
    async with (
        database(dynorm_server, fast=True, name="fast-path-a") as fast,
        database(dynorm_server, fast=False, name="fast-path-a") as slow,
    ):
        await fast.create_table()
        try:
            await fast.put_all([Box("b1"), *THINGS])
            results = []
            for db in (fast, slow):
                box = await db.get(Box, box_id="b1", load=[Box.items])
                many = await db.get_many(
                    Thing, [{"box_id": "b1", "n": 2}, {"box_id": "b1", "n": 9}]
                )
                results.append((box, box.items.loaded, many))
            assert results[0] == results[1]
            assert results[0][1] == THINGS
            assert results[0][2] == [THINGS[1], None]
        finally:
            await fast.delete_table()


async def test_raw_responses_differ_only_in_binary_encoding(dynorm_server: RunningServer) -> None:
    # db.send hands back what each parser makes: botocore decodes B to bytes, the fast path
    # keeps DynamoDB's base64 text (dynorm's decoders accept both).
    key = {"pk": {"S": "BOX#b1"}, "sk": {"S": "THING#0001"}}
    async with (
        database(dynorm_server, fast=True, name="fast-path-b") as fast,
        database(dynorm_server, fast=False, name="fast-path-b") as slow,
    ):
        await fast.create_table()
        try:
            await fast.put(THINGS[0])
            request = Request("GetItem", {"TableName": "fast-path-b", "Key": key})
            fast_item = (await fast.send(request))["Item"]
            slow_item = (await slow.send(request))["Item"]
            assert fast_item["blob"] == {"B": "AQD/"}
            assert slow_item["blob"] == {"B": b"\x01\x00\xff"}
            assert {k: v for k, v in fast_item.items() if k != "blob"} == {
                k: v for k, v in slow_item.items() if k != "blob"
            }
        finally:
            await fast.delete_table()


async def _collection(db: Database) -> dict[str, Any]:
    """The box's collection read with the table's wire decoder, as dynorm's reads send it."""
    params = {
        "TableName": db.table_name,
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "BOX#b1"}},
    }
    return await db.send(Request("Query", params, parse=table.parser("Query")))


async def test_a_page_with_an_item_that_does_not_fit_is_read_the_generic_way(
    dynorm_server: RunningServer,
) -> None:
    async with database(dynorm_server, fast=True, name="fast-path-b") as db:
        await db.create_table()
        try:
            await db.put_all([Box("b1"), *THINGS])
            typed = await _collection(db)
            assert {type(item).__name__ for item in typed["Items"]} == {"Wirefast-pathItem"}
            # Another tool wrote an item into the collection whose `fragile` is no boolean.
            stray = {"pk": {"S": "BOX#b1"}, "sk": {"S": "NOTE#1"}, "fragile": {"S": "yes"}}
            await db.send(Request("PutItem", {"TableName": db.table_name, "Item": stray}))
            generic = await _collection(db)
            assert all(type(item) is dict for item in generic["Items"])
            assert stray in generic["Items"]
            box = await db.get(Box, box_id="b1", load=[Box.items])
            assert box.items.loaded == THINGS
            assert await db.query(Thing, box_id="b1").all() == THINGS
        finally:
            await db.delete_table()
