"""Mapping tables another tool created and filled: a plain boto3 client writes, dynorm reads.

The two tables are laid out the way NoSQL Workbench or a hand-written boto3 app lays them out:
capitalised and hyphenated attribute names (``PK``, ``GSI1-PK``), a ``#`` inside a key
attribute's name (``Status#Time``), index keys on plain attributes (``Site``, ``Time``), fields
kept only inside keys, an entity-type attribute (``ItemType``), nested maps with capitalised
names and attributes no field maps. Every access pattern costs the one request it promises, and
what dynorm writes back is, attribute for attribute, what the tool wrote.

The last section reads beyond a key: key conditions, filters, scans, counts and
``db.query(..., load=)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs
import pytest

import dynorm
from dynorm import (
    GSI,
    Attr,
    BelongsTo,
    ConditionFailedError,
    Database,
    DefinitionError,
    ExpressionError,
    HasMany,
    Index,
    KeyTemplateError,
    Partition,
    Table,
)
from dynorm.testing import (
    Connect,
    RunningServer,
    count_requests,
)

from .tool import Raw, Tool, written_by_tool

pytestmark = pytest.mark.integration

# -- the models: how a dynorm user maps the tool's layout ----------------------------------------

library = Table(
    "Library",
    pk="PK",
    sk="SK",
    indexes=[GSI("GSI1", pk="GSI1-PK", sk="GSI1-SK")],
    type_attribute="ItemType",
)


@attrs.define
class Shelf:
    room: str = dynorm.field(name="Room")
    level: int = dynorm.field(name="Level", default=0)


@library.model(pk="b#{book_id}", sk="b#{book_id}", entity="book")
@attrs.define
class Book:
    book_id: str = dynorm.field(key_only=True)
    title: str = dynorm.field(name="Title")
    author: str = dynorm.field(name="Author")
    shelf: Shelf | None = dynorm.field(name="Shelf", default=None)
    loans = HasMany["Loan"]("Loan", via=Partition())


@library.model(
    pk="m#{member_id}", sk="m#{member_id}", GSI1=("m#{member_id}", "m#{member_id}"), entity="member"
)
@attrs.define
class Member:
    member_id: str = dynorm.field(key_only=True)
    name: str = dynorm.field(name="Name")
    email: str = dynorm.field(name="Email")
    loans = HasMany["Loan"]("Loan", via=Index("GSI1"))


@library.model(pk="b#{book_id}", sk="l#{loan_id}", GSI1=("m#{member_id}", "{due}"), entity="loan")
@attrs.define
class Loan:
    book_id: str = dynorm.field(key_only=True)  # in PK
    loan_id: str = dynorm.field(key_only=True)  # in SK
    member_id: str = dynorm.field(key_only=True)  # only in GSI1-PK
    due: str = dynorm.field(key_only=True)  # only in GSI1-SK
    renewals: int = dynorm.field(name="Renewals", default=0)
    book = BelongsTo[Book](Book)
    member = BelongsTo[Member](Member)


readings = Table(
    "Readings", pk="SensorID", sk="Status#Time", indexes=[GSI("GSI1", pk="Site", sk="Time")]
)


@readings.model(pk="{sensor_id}", sk="SENSOR")
@attrs.define
class Sensor:
    sensor_id: str = dynorm.field(name="SensorID")  # the partition key is the field itself
    model: str = dynorm.field(name="Model")
    readings = HasMany["Reading"]("Reading", via=Partition())


@readings.model(pk="{sensor_id}", sk="{status}#{time}", GSI1=("{site}", "{time}"))
@attrs.define
class Reading:
    sensor_id: str = dynorm.field(name="SensorID")
    status: str = dynorm.field(name="Status")
    time: str = dynorm.field(name="Time")  # also GSI1's sort key
    site: str = dynorm.field(name="Site")  # GSI1's partition key
    value: float = dynorm.field(name="Value", default=0.0)
    sensor = BelongsTo[Sensor](Sensor)


# -- the tool's side: schemas and items exactly as a boto3 app writes them ------------------------


def _strings(*names: str) -> list[dict[str, str]]:
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def _keys(pk: str, sk: str) -> list[dict[str, str]]:
    return [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}]


LIBRARY_SCHEMA: Raw = {
    "AttributeDefinitions": _strings("PK", "SK", "GSI1-PK", "GSI1-SK"),
    "KeySchema": _keys("PK", "SK"),
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "GSI1",
            "KeySchema": _keys("GSI1-PK", "GSI1-SK"),
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
}

READINGS_SCHEMA: Raw = {
    "AttributeDefinitions": _strings("SensorID", "Status#Time", "Site", "Time"),
    "KeySchema": _keys("SensorID", "Status#Time"),
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "GSI1",
            "KeySchema": _keys("Site", "Time"),
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def tool_book(book_id: str, title: str, author: str, shelf: tuple[str, int] | None = None) -> Raw:
    item: Raw = {
        "PK": {"S": f"b#{book_id}"},
        "SK": {"S": f"b#{book_id}"},
        "ItemType": {"S": "book"},
        "Title": {"S": title},
        "Author": {"S": author},
    }
    if shelf is not None:
        item["Shelf"] = {"M": {"Room": {"S": shelf[0]}, "Level": {"N": str(shelf[1])}}}
    return item


def tool_member(member_id: str, name: str, email: str) -> Raw:
    key = {"S": f"m#{member_id}"}
    return {
        "PK": key,
        "SK": key,
        "GSI1-PK": key,
        "GSI1-SK": key,
        "ItemType": {"S": "member"},
        "Name": {"S": name},
        "Email": {"S": email},
    }


def tool_loan(book_id: str, loan_id: str, member_id: str, due: str, renewals: int) -> Raw:
    return {
        "PK": {"S": f"b#{book_id}"},
        "SK": {"S": f"l#{loan_id}"},
        "GSI1-PK": {"S": f"m#{member_id}"},
        "GSI1-SK": {"S": due},
        "ItemType": {"S": "loan"},
        "Renewals": {"N": str(renewals)},
    }


def tool_sensor(sensor_id: str, model: str) -> Raw:
    return {"SensorID": {"S": sensor_id}, "Status#Time": {"S": "SENSOR"}, "Model": {"S": model}}


def tool_reading(sensor_id: str, status: str, time: str, site: str, value: str) -> Raw:
    return {
        "SensorID": {"S": sensor_id},
        "Status#Time": {"S": f"{status}#{time}"},
        "Status": {"S": status},
        "Time": {"S": time},
        "Site": {"S": site},
        "Value": {"N": value},
    }


# Attributes no field maps: dynorm ignores them on read, and an update leaves them alone.
NOTES = {"Notes": {"S": "donated"}}
DESK = {"LoanedBy": {"S": "desk-3"}}
UNIT = {"Unit": {"S": "C"}}

DUNE = tool_book("42", "Dune", "Herbert", ("east", 3)) | NOTES
EMMA = tool_book("43", "Emma", "Austen")
ADA = tool_member("m9", "Ada", "ada@example.org")
GRACE = tool_member("m10", "Grace", "grace@example.org")
LOAN_1 = tool_loan("42", "1", "m9", "2026-05-01", 0)
LOAN_2 = tool_loan("42", "2", "m10", "2026-04-20", 1)
LOAN_3 = tool_loan("43", "3", "m9", "2026-05-10", 2) | DESK
LIBRARY_ITEMS = [DUNE, EMMA, ADA, GRACE, LOAN_1, LOAN_2, LOAN_3]

S1 = tool_sensor("s1", "TMP-36")
S2 = tool_sensor("s2", "DHT-22")
R1 = tool_reading("s1", "OK", "2026-04-27T10:00", "north", "21.5") | UNIT
R2 = tool_reading("s1", "ALARM", "2026-04-27T11:00", "north", "40.5")
R3 = tool_reading("s1", "OK", "2026-04-28T09:00", "north", "19.5")
R4 = tool_reading("s2", "OK", "2026-04-27T10:30", "south", "18.25")
READINGS_ITEMS = [S1, S2, R1, R2, R3, R4]

# The objects those items are.
DUNE_OBJ = Book("42", "Dune", "Herbert", Shelf("east", 3))
EMMA_OBJ = Book("43", "Emma", "Austen")
ADA_OBJ = Member("m9", "Ada", "ada@example.org")
LOAN_1_OBJ = Loan("42", "1", "m9", "2026-05-01", 0)
LOAN_2_OBJ = Loan("42", "2", "m10", "2026-04-20", 1)
LOAN_3_OBJ = Loan("43", "3", "m9", "2026-05-10", 2)
S1_OBJ = Sensor("s1", "TMP-36")
R1_OBJ = Reading("s1", "OK", "2026-04-27T10:00", "north", 21.5)
R2_OBJ = Reading("s1", "ALARM", "2026-04-27T11:00", "north", 40.5)
R3_OBJ = Reading("s1", "OK", "2026-04-28T09:00", "north", 19.5)


@pytest.fixture
async def lib(dynorm_server: RunningServer) -> AsyncIterator[tuple[Database, Tool]]:
    async with written_by_tool(dynorm_server, library, LIBRARY_SCHEMA, LIBRARY_ITEMS) as pair:
        yield pair


@pytest.fixture
async def sensors(dynorm_server: RunningServer) -> AsyncIterator[tuple[Database, Tool]]:
    async with written_by_tool(dynorm_server, readings, READINGS_SCHEMA, READINGS_ITEMS) as pair:
        yield pair


def without(item: Raw, *extra: Mapping[str, Any]) -> Raw:
    """The item without the attributes no field maps."""
    return {k: v for k, v in item.items() if not any(k in e for e in extra)}


# -- reading: every access pattern at one request ------------------------------------------------


async def test_get_reads_renamed_fields_nested_maps_and_key_only_fields(
    lib: tuple[Database, Tool],
) -> None:
    db, _ = lib
    with count_requests(db) as log:
        book = await db.get(Book, book_id="42")
        loan = await db.get(Loan, book_id="43", loan_id="3")
        member = await db.get(Member, member_id="m9")
    assert log.operations == ["GetItem"] * 3
    assert book == DUNE_OBJ  # Title/Author/Shelf.Room/Shelf.Level; Notes ignored
    assert loan == LOAN_3_OBJ  # member_id and due parsed out of GSI1-PK and GSI1-SK
    assert member == ADA_OBJ


async def test_a_book_and_its_loans_in_one_query(lib: tuple[Database, Tool]) -> None:
    db, _ = lib
    with count_requests(db) as log:
        book = await db.get(Book, book_id="42", load=[Book.loans])
    assert log.operations == ["Query"]
    assert book == DUNE_OBJ
    assert book.loans.loaded == [LOAN_1_OBJ, LOAN_2_OBJ]


async def test_a_member_and_their_loans_in_one_index_query(lib: tuple[Database, Tool]) -> None:
    db, _ = lib
    with count_requests(db) as log:
        member = await db.get(Member, member_id="m9", load=[Member.loans])
    assert log.operations == ["Query"]
    assert member == ADA_OBJ
    assert member.loans.loaded == [LOAN_1_OBJ, LOAN_3_OBJ]  # by due date (GSI1-SK)


async def test_relationship_loaders_read_children_at_one_query(
    lib: tuple[Database, Tool],
) -> None:
    db, _ = lib
    book = await db.get(Book, book_id="42")
    member = await db.get(Member, member_id="m10")
    with count_requests(db) as log:
        of_book = await book.loans.all()
        of_member = await member.loans.all()
    assert log.operations == ["Query", "Query"]
    assert of_book == [LOAN_1_OBJ, LOAN_2_OBJ]
    assert of_member == [LOAN_2_OBJ]


async def test_loans_of_a_member_through_the_index(lib: tuple[Database, Tool]) -> None:
    db, _ = lib
    with count_requests(db) as log:
        loans = await db.query(Loan, "GSI1", member_id="m9").all()
        due = await db.query(Loan, "GSI1", member_id="m9", due="2026-05-10").all()
    assert log.operations == ["Query", "Query"]
    assert loans == [LOAN_1_OBJ, LOAN_3_OBJ]  # the member's own item is left out (ItemType)
    assert due == [LOAN_3_OBJ]


async def test_loans_of_a_book_by_partial_key(lib: tuple[Database, Tool]) -> None:
    db, _ = lib
    query = db.query(Loan, book_id="42")
    (request,) = query.explain()
    assert request.params["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)"
    assert request.params["ExpressionAttributeNames"] == {"#pk": "PK", "#sk": "SK"}
    assert request.params["ExpressionAttributeValues"][":sk"] == {"S": "l#"}
    with count_requests(db) as log:
        loans = await query.all()
    assert log.operations == ["Query"]
    assert loans == [LOAN_1_OBJ, LOAN_2_OBJ]


async def test_a_loans_book_and_member_by_key(lib: tuple[Database, Tool]) -> None:
    db, _ = lib
    loans = await db.query(Loan, "GSI1", member_id="m9").all()
    with count_requests(db) as log:
        book = await loans[0].book.get()
    assert log.operations == ["GetItem"]
    assert book == DUNE_OBJ
    with count_requests(db) as log:
        await db.load(loans, Loan.book, Loan.member)
    assert log.operations == ["BatchGetItem"]
    assert [loan.book.loaded for loan in loans] == [DUNE_OBJ, EMMA_OBJ]
    assert [loan.member.loaded for loan in loans] == [ADA_OBJ, ADA_OBJ]


async def test_readings_by_key_partial_key_and_plain_attribute_index(
    sensors: tuple[Database, Tool],
) -> None:
    db, _ = sensors
    with count_requests(db) as log:
        one = await db.get(Reading, sensor_id="s1", status="OK", time="2026-04-27T10:00")
        alarms = await db.query(Reading, sensor_id="s1", status="ALARM").all()
        north = await db.query(Reading, "GSI1", site="north").all()
        at = await db.query(Reading, "GSI1", site="north", time="2026-04-28T09:00").all()
    assert log.operations == ["GetItem", "Query", "Query", "Query"]
    assert one == R1_OBJ  # Unit ignored
    assert alarms == [R2_OBJ]
    assert north == [R1_OBJ, R2_OBJ, R3_OBJ]  # ordered by Time, GSI1's sort key
    assert at == [R3_OBJ]


async def test_a_sensor_and_its_readings_in_one_query(sensors: tuple[Database, Tool]) -> None:
    db, _ = sensors
    with count_requests(db) as log:
        sensor = await db.get(Sensor, sensor_id="s1", load=[Sensor.readings])
    assert log.operations == ["Query"]
    assert sensor == S1_OBJ
    assert sensor.readings.loaded == [R2_OBJ, R1_OBJ, R3_OBJ]  # "ALARM#…" < "OK#…"
    reading = sensor.readings.loaded[0]
    with count_requests(db) as log:
        assert await reading.sensor.get() == S1_OBJ
    assert log.operations == ["GetItem"]


# -- writing: conditions and updates name fields; the tool's layout is kept ------------------------


async def test_update_with_a_condition_naming_fields(lib: tuple[Database, Tool]) -> None:
    db, tool = lib
    loan = await db.get(Loan, book_id="43", loan_id="3")
    with count_requests(db) as log:
        updated = await db.update(loan, set={"renewals": 3}, condition=Attr("renewals") == 2)
    assert log.operations == ["UpdateItem"]
    assert updated == attrs.evolve(LOAN_3_OBJ, renewals=3)
    # The tool's layout, with its own attribute (LoanedBy) kept.
    assert await tool.get({"PK": "b#43", "SK": "l#3"}) == LOAN_3 | {"Renewals": {"N": "3"}}
    with count_requests(db) as log, pytest.raises(ConditionFailedError):
        await db.update(loan, set={"renewals": 4}, condition=Attr("renewals") == 2)
    # A refused update reads the key back to tell a changed item from a missing one.
    assert log.operations == ["UpdateItem", "GetItem"]


async def test_update_of_a_nested_field_writes_its_stored_path(lib: tuple[Database, Tool]) -> None:
    db, tool = lib
    book = await db.get(Book, book_id="42")
    with count_requests(db) as log:
        await db.update(
            book, set={"shelf.room": "west"}, condition=Attr("shelf.level").between(1, 5)
        )
    assert log.operations == ["UpdateItem"]
    stored = await tool.get({"PK": "b#42", "SK": "b#42"})
    assert stored == DUNE | {"Shelf": {"M": {"Room": {"S": "west"}, "Level": {"N": "3"}}}}


async def test_update_of_a_key_only_field_rewrites_the_index_key(
    lib: tuple[Database, Tool],
) -> None:
    db, tool = lib
    loan = await db.get(Loan, book_id="42", loan_id="1")
    with count_requests(db) as log:
        moved = await db.update(loan, set={"member_id": "m10", "due": "2026-06-01"})
    assert log.operations == ["UpdateItem"]
    assert moved == Loan("42", "1", "m10", "2026-06-01", 0)
    assert await tool.get({"PK": "b#42", "SK": "l#1"}) == tool_loan(
        "42", "1", "m10", "2026-06-01", 0
    )
    assert await db.query(Loan, "GSI1", member_id="m10").all() == [LOAN_2_OBJ, moved]
    returned = await db.update(moved, set={"due": "2026-07-01"}, returns="updated_new")
    assert returned == {"due": "2026-07-01"}  # parsed from the key attribute it rewrote


async def test_put_and_delete_with_conditions_naming_fields(lib: tuple[Database, Tool]) -> None:
    db, tool = lib
    emma = await db.get(Book, book_id="43")
    with count_requests(db) as log:
        await db.put(attrs.evolve(emma, title="Emma."), condition=Attr("author") == "Austen")
        with pytest.raises(ConditionFailedError):
            await db.put(emma, condition=Attr("title") == "Emma")
        await db.delete(Loan, book_id="42", loan_id="2", condition=Attr("renewals") < 5)
    assert log.operations == ["PutItem", "PutItem", "DeleteItem"]
    stored = await tool.get({"PK": "b#43", "SK": "b#43"})
    assert stored is not None
    assert stored["Title"] == {"S": "Emma."}
    assert await tool.get({"PK": "b#42", "SK": "l#2"}) is None


@pytest.mark.parametrize(
    ("item", "key", "model", "fields"),
    [
        (DUNE, {"PK": "b#42", "SK": "b#42"}, Book, {"book_id": "42"}),
        (ADA, {"PK": "m#m9", "SK": "m#m9"}, Member, {"member_id": "m9"}),
        (LOAN_2, {"PK": "b#42", "SK": "l#2"}, Loan, {"book_id": "42", "loan_id": "2"}),
        (LOAN_3, {"PK": "b#43", "SK": "l#3"}, Loan, {"book_id": "43", "loan_id": "3"}),
    ],
    ids=["book", "member", "loan", "loan-with-extra"],
)
async def test_what_dynorm_puts_is_the_tools_layout(
    lib: tuple[Database, Tool], item: Raw, key: dict[str, str], model: type[Any], fields: Raw
) -> None:
    db, tool = lib
    obj = await db.get(model, **fields)
    await tool.delete(key)
    with count_requests(db) as log:
        await db.put(obj)
    assert log.operations == ["PutItem"]
    # Attribute for attribute (names, types, values): only the attributes no field maps are gone.
    assert await tool.get(key) == without(item, NOTES, DESK)


async def test_a_none_field_is_stored_as_null_where_the_tool_left_it_out(
    lib: tuple[Database, Tool],
) -> None:
    # The one difference from the tool's layout: dynorm stores None as NULL (as boto3's
    # TypeSerializer does), where the tool wrote no attribute at all. Both read back as None.
    db, tool = lib
    key = {"PK": "b#43", "SK": "b#43"}
    await db.put(await db.get(Book, book_id="43"))
    assert await tool.get(key) == EMMA | {"Shelf": {"NULL": True}}
    assert await db.get(Book, book_id="43") == EMMA_OBJ


async def test_what_dynorm_puts_is_the_tools_layout_for_readings(
    sensors: tuple[Database, Tool],
) -> None:
    db, tool = sensors
    key = {"SensorID": "s1", "Status#Time": "ALARM#2026-04-27T11:00"}
    await tool.delete(key)
    await db.put(R2_OBJ)
    assert await tool.get(key) == R2
    await db.put(S1_OBJ)
    assert await tool.get({"SensorID": "s1", "Status#Time": "SENSOR"}) == S1


async def test_children_added_through_relationships_take_the_tools_layout(
    lib: tuple[Database, Tool], sensors: tuple[Database, Tool]
) -> None:
    db, tool = lib
    book = await db.get(Book, book_id="43")
    member = await db.get(Member, member_id="m10")
    with count_requests(db) as log:
        await db.add(book, Book.loans, Loan("43", "9", "m9", "2026-07-01"))
        await db.add(member, Member.loans, Loan("42", "8", "m10", "2026-07-02", 1))
    assert log.operations == ["PutItem", "PutItem"]
    assert await tool.get({"PK": "b#43", "SK": "l#9"}) == tool_loan(
        "43", "9", "m9", "2026-07-01", 0
    )
    assert await tool.get({"PK": "b#42", "SK": "l#8"}) == tool_loan(
        "42", "8", "m10", "2026-07-02", 1
    )

    rdb, rtool = sensors
    sensor = await rdb.get(Sensor, sensor_id="s2")
    reading = Reading("s2", "ALARM", "2026-04-29T08:00", "south", 33.5)
    await rdb.add(sensor, Sensor.readings, reading)
    stored = await rtool.get({"SensorID": "s2", "Status#Time": "ALARM#2026-04-29T08:00"})
    assert stored == tool_reading("s2", "ALARM", "2026-04-29T08:00", "south", "33.5")


holds = Table("Holds", pk="PK", sk="SK", indexes=[GSI("GSI1", pk="GSI1-PK", sk="GSI1-SK")])


@holds.model(pk="b#{book_id}", sk="h#{hold_id}", GSI1=("m#{member_id}", "{until}"))
@attrs.define
class Hold:
    """Every key-only field has a default: the item alone would decode without them."""

    book_id: str = dynorm.field(name="BookId")
    hold_id: str = dynorm.field(name="HoldId")
    member_id: str | None = dynorm.field(key_only=True, default=None)
    until: str | None = dynorm.field(key_only=True, default=None)


async def test_key_only_fields_with_defaults_are_read_from_keys_by_queries_too(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(holds) as db:
        hold = Hold("42", "1", "m9", "2026-05-01")
        await db.put(hold)
        assert await db.get(Hold, book_id="42", hold_id="1") == hold
        assert await db.query(Hold, book_id="42").all() == [hold]
        assert await db.query(Hold, "GSI1", member_id="m9").all() == [hold]


async def test_items_the_tool_wrote_without_the_type_attribute_are_told_apart_by_keys(
    lib: tuple[Database, Tool],
) -> None:
    db, tool = lib
    # An older writer of the tool left ItemType out; the key templates still decide.
    await asyncio.to_thread(
        tool.client.put_item,
        TableName=tool.table_name,
        Item=without(tool_loan("42", "5", "m9", "2026-08-01", 0), {"ItemType": None}),
    )
    book = await db.get(Book, book_id="42", load=[Book.loans])
    assert [loan.loan_id for loan in book.loans.loaded] == ["1", "2", "5"]


# -- bad input: refused before anything is sent --------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (Attr("Renewals") == 1, r"Loan has no field 'Renewals' \(did you mean 'renewals'\?\)"),
        (Attr("member_id") == "m9", r"Loan.member_id is kept only inside key attributes"),
        (Attr("renewal") > 0, r"Loan has no field 'renewal'"),
    ],
    ids=["stored-name", "key-only", "typo"],
)
async def test_conditions_naming_no_field_are_refused_before_sending(
    lib: tuple[Database, Tool], condition: dynorm.Condition, message: str
) -> None:
    db, _ = lib
    loan = await db.get(Loan, book_id="43", loan_id="3")
    with count_requests(db) as log:
        with pytest.raises(ExpressionError, match=message):
            await db.update(loan, set={"renewals": 9}, condition=condition)
        with pytest.raises(ExpressionError, match=message):
            await db.put(loan, condition=condition)
        with pytest.raises(ExpressionError, match=message):
            await db.delete(loan, condition=condition)
    assert log.operations == []


async def test_bad_reads_and_updates_are_refused_before_sending(
    lib: tuple[Database, Tool],
) -> None:
    db, _ = lib
    book = await db.get(Book, book_id="42")
    with count_requests(db) as log:
        with pytest.raises(ExpressionError, match=r"Shelf has no field 'Room' in 'shelf.Room'"):
            await db.update(book, set={"shelf.Room": "west"})  # type: ignore[call-arg]
        with pytest.raises(
            KeyTemplateError, match=r"Book has no field 'Title' \(did you mean 'title'\?\)"
        ):
            await db.update(book, set={"Title": "x"})  # type: ignore[call-arg]
        with pytest.raises(KeyTemplateError, match=r"'member' \(did you mean 'member_id'\?\)"):
            db.query(Loan, "GSI1", member="m9")  # type: ignore[call-arg]
        with pytest.raises(KeyTemplateError, match=r"Loan needs loan_id"):
            await db.get(Loan, book_id="42")  # type: ignore[call-arg]
        with pytest.raises(KeyTemplateError, match=r"Book.book_id is part of the primary key"):
            await db.update(book, set={"book_id": "44"})  # type: ignore[misc]
    assert log.operations == []


def test_layouts_that_cannot_map_the_tools_table_are_refused() -> None:
    table = Table("T", pk="SensorID", sk="Status#Time", indexes=[GSI("GSI1", "Site", "Time")])
    # Site is GSI1's partition key: a template other than exactly "{site}" would fight the field.
    with pytest.raises(DefinitionError, match=r"R.site is stored as 'Site', which its key"):

        @table.model(pk="{sensor_id}", sk="{status}#{time}", GSI1=("s#{site}", "{time}"))
        class R:
            sensor_id: str = dynorm.field(name="SensorID")
            status: str
            time: str = dynorm.field(name="Time")
            site: str = dynorm.field(name="Site")

    lib_table = Table("L", pk="PK", sk="SK", type_attribute="ItemType")
    with pytest.raises(DefinitionError, match=r"stored as 'ItemType', the table's type attribute"):

        @lib_table.model(pk="b#{book_id}", sk="b#{book_id}")
        class B:
            book_id: str
            kind: str = dynorm.field(name="ItemType")


# -- key conditions, filters, counts, scans and query load= ----------------------------------------
#
# Key conditions, filters, scans and counts come with the `queries` branch; db.query(..., load=)
# with the `reads` branch. The names follow DESIGN.md "Contract, part 2".


async def test_key_conditions_on_the_last_component(
    lib: tuple[Database, Tool], sensors: tuple[Database, Tool]
) -> None:
    from dynorm import begins_with, between, gt  # noqa: PLC0415

    db, _ = lib
    with count_requests(db) as log:
        may = await db.query(
            Loan, "GSI1", member_id="m9", due=between("2026-05-01", "2026-05-31")
        ).all()
    assert log.operations == ["Query"]
    assert may == [LOAN_1_OBJ, LOAN_3_OBJ]

    rdb, _ = sensors
    with count_requests(rdb) as log:
        later = await rdb.query(Reading, "GSI1", site="north", time=gt("2026-04-27T10:00")).all()
        day = await rdb.query(
            Reading, sensor_id="s1", status="OK", time=begins_with("2026-04-27")
        ).all()
    assert log.operations == ["Query", "Query"]
    assert later == [R2_OBJ, R3_OBJ]
    assert day == [R1_OBJ]


async def test_filters_name_fields_and_limit_counts_matches(
    lib: tuple[Database, Tool], sensors: tuple[Database, Tool]
) -> None:
    rdb, _ = sensors
    query = rdb.query(Reading, sensor_id="s1").filter(Attr("status") == "OK")
    with count_requests(rdb) as log:
        page = await query.page(limit=10)
    assert log.operations == ["Query"]
    assert page.items == [R1_OBJ, R3_OBJ]

    db, _ = lib
    renewed = db.query(Loan, "GSI1", member_id="m9").filter(Attr("renewals") > 0)
    with count_requests(db) as log:
        assert await renewed.all() == [LOAN_3_OBJ]
    assert log.operations == ["Query"]


async def test_counts(lib: tuple[Database, Tool], sensors: tuple[Database, Tool]) -> None:
    rdb, _ = sensors
    with count_requests(rdb) as log:
        assert await rdb.query(Reading, sensor_id="s1").count() == 3
    assert log.operations == ["Query"]
    db, _ = lib
    with count_requests(db) as log:
        assert await db.query(Loan, "GSI1", member_id="m9").count() == 2
    assert log.operations == ["Query"]


async def test_scans_decode_the_tools_items(
    lib: tuple[Database, Tool], sensors: tuple[Database, Tool]
) -> None:
    rdb, _ = sensors
    with count_requests(rdb) as log:
        found = [r async for r in rdb.scan(Reading, segments=2)]
    assert log.operations == ["Scan", "Scan"]
    assert sorted(found, key=lambda r: (r.sensor_id, r.time)) == [
        R1_OBJ,
        R2_OBJ,
        R3_OBJ,
        Reading("s2", "OK", "2026-04-27T10:30", "south", 18.25),
    ]

    db, _ = lib
    with count_requests(db) as log:
        everything = [obj async for obj in db.scan(None)]
    assert log.operations == ["Scan"]
    kinds = sorted(type(obj).__name__ for obj in everything)
    assert kinds == ["Book", "Book", "Loan", "Loan", "Loan", "Member", "Member"]


async def test_query_with_load_reads_parents_and_children_in_one_query(
    lib: tuple[Database, Tool],
) -> None:
    db, _ = lib
    with count_requests(db) as log:
        books = await db.query(Book, book_id="42", load=[Book.loans]).all()
    assert log.operations == ["Query"]
    assert books == [DUNE_OBJ]
    assert books[0].loans.loaded == [LOAN_1_OBJ, LOAN_2_OBJ]
