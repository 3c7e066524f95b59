"""An item another tool wrote that fits a model's templates but holds another type.

Every read path names the model, the item's key and the attribute that failed in its
``CodecError``, on both request paths (the typed fast path and botocore's).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    CodecError,
    Database,
    Embedded,
    HasMany,
    Index,
    Partition,
    Request,
    Table,
)
from dynorm.testing import RunningServer, fresh_table
from tests.faultproxy import connect_to

pytestmark = pytest.mark.integration

table = Table("foreign", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="ORDER#{order_id}", sk="ORDER#{order_id}", GSI1=("ORDER#{order_id}", "#"))
@attrs.define
class Order:
    order_id: str
    lines = HasMany["Line"]("Line", via=Partition())
    notes = HasMany["Note"]("Note", via=Index("GSI1"))


@table.model(pk="ORDER#{order_id}", sk="LINE#{line:03d}")
@attrs.define
class Line:
    order_id: str
    line: int
    qty: int = 0


@table.model(pk="NOTE#{note_id}", sk="NOTE#{note_id}", GSI1=("ORDER#{order_id}", "NOTE#{note_id}"))
@attrs.define
class Note:
    note_id: str
    order_id: str
    stars: int = 0


@attrs.define
class Address:
    nickname: str
    zip: int = 0


@table.model(pk="CUSTOMER#{cid}", sk="CUSTOMER#{cid}")
@attrs.define
class Customer:
    cid: str
    addresses = HasMany["Address"](Address, via=Embedded(key="nickname"))


@pytest.fixture(params=[True, False], ids=["fast-path", "botocore"])
async def db(
    dynorm_server: RunningServer, request: pytest.FixtureRequest
) -> AsyncIterator[Database]:
    name = f"foreign-{uuid.uuid4().hex[:8]}"
    connecting = connect_to(dynorm_server.url, table, name, fast_path=request.param)
    async with connecting as database, fresh_table(database):
        await database.put(Order("o1"))
        await database.put(Line("o1", 1, 2))
        await database.put(Note("n1", "o1", 5))
        foreign = [
            {"pk": {"S": "ORDER#o1"}, "sk": {"S": "LINE#002"}, "qty": {"S": "many"}},
            {
                "pk": {"S": "NOTE#n2"},
                "sk": {"S": "NOTE#n2"},
                "GSI1PK": {"S": "ORDER#o1"},
                "GSI1SK": {"S": "NOTE#n2"},
                "order_id": {"S": "o1"},
                "stars": {"BOOL": True},
            },
            {
                "pk": {"S": "CUSTOMER#c1"},
                "sk": {"S": "CUSTOMER#c1"},
                "cid": {"S": "c1"},
                "addresses": {
                    "M": {"home": {"M": {"nickname": {"S": "home"}, "zip": {"S": "many"}}}}
                },
            },
        ]
        for item in foreign:
            await database.send(Request("PutItem", {"TableName": name, "Item": item}))
        yield database


Read = Callable[[Database], Awaitable[Any]]

LINE = (
    r"Line: item pk='ORDER#o1', sk='LINE#002': attribute 'qty' \(field 'qty': int\) holds "
    r"\{'S': 'many'\}, which does not read as int"
)
NOTE = (
    r"Note: item pk='NOTE#n2', sk='NOTE#n2': attribute 'stars' \(field 'stars': int\) holds "
    r"\{'BOOL': True\}, which does not read as int"
)


async def _loaded(db: Database) -> Any:
    order = await db.get(Order, order_id="o1")
    return await order.lines.all()


async def _db_load(db: Database) -> Any:
    orders = await db.query(Order, order_id="o1").all()
    return await db.load(orders, Order.notes)


ADDRESS = (
    r"Customer\.addresses: item pk='CUSTOMER#c1', sk='CUSTOMER#c1': attribute 'addresses', "
    r"child 'home': attribute 'zip' \(field Address\.zip\) holds \{'S': 'many'\}, which does "
    r"not read as int"
)

READS: dict[str, tuple[Read, str]] = {
    "get": (lambda db: db.get(Line, order_id="o1", line=2), LINE),
    "get consistent": (lambda db: db.get(Line, order_id="o1", line=2, consistent=True), LINE),
    "query": (lambda db: db.query(Line, order_id="o1").all(), LINE),
    "query page": (lambda db: db.query(Line, order_id="o1").page(limit=5), LINE),
    "query first": (lambda db: db.query(Line, order_id="o1", line=2).first(), LINE),
    "index query": (lambda db: db.query(Note, index="GSI1", order_id="o1").all(), NOTE),
    "get_many": (lambda db: db.get_many(Line, [{"order_id": "o1", "line": 2}]), LINE),
    "scan": (lambda db: db.scan(Line).all(), LINE),
    "load=Partition": (lambda db: db.get(Order, order_id="o1", load=[Order.lines]), LINE),
    "load=Index": (lambda db: db.get(Order, order_id="o1", load=[Order.notes]), NOTE),
    "query load=": (lambda db: db.query(Order, order_id="o1", load=[Order.lines]).all(), LINE),
    "loader": (_loaded, LINE),
    "db.load": (_db_load, NOTE),
    "get embedded": (lambda db: db.get(Customer, cid="c1"), ADDRESS),
    "query embedded": (lambda db: db.query(Customer, cid="c1").all(), ADDRESS),
    "embedded loader": (lambda db: db.attach(Customer("c1")).addresses.all(), ADDRESS),
}


@pytest.mark.parametrize("path", list(READS))
async def test_a_foreign_item_of_another_type_is_named_on_every_read_path(
    db: Database, path: str
) -> None:
    read, message = READS[path]
    with pytest.raises(CodecError, match=message) as info:
        await read(db)
    text = str(info.value)
    assert "(no key)" not in text
