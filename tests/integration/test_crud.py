"""Single items: put, get, update, delete, conditions, and the table that create_table makes."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any, Literal

import pytest

import dynorm
from dynorm import Attr, Database, Request
from dynorm.testing import Connect, RunningServer, count_requests
from tests.seed_models import Org, User, app

from .models import Address, Bag, Color, Level, Thing
from .raw import raw_collection, raw_item, strings
from .seed import BILLGATES, MICROSOFT, TICKET_123

pytestmark = pytest.mark.integration

EVERYTHING = Thing(
    thing_id="all#of%them",
    text="héllo wörld ✓",
    count=-42,
    big=12345678901234567890123456789012345678,  # 38 digits, DynamoDB's precision
    ratio=0.1,
    price=decimal.Decimal("-1234567890.0987654321"),
    flag=True,
    blob=bytes(range(256)),
    when=datetime.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=datetime.UTC),
    day=datetime.date(1999, 12, 31),
    clock=datetime.time(7, 8, 9, 10),
    ident=uuid.UUID("12345678-1234-5678-1234-567812345678"),
    color=Color.GREEN,
    level=Level.HIGH,
    numbers=[3, 1, 2, 1],
    pair=("x", 9),
    names={"b", "a", "c"},
    scores={10, -3, 7},
    blobs=frozenset({b"\x00", b"\xff\xfe"}),
    counts={"a": 1, "b with space": 2},
    address=Address(street="Main St", number=7, unit="3B"),
    addresses=[Address(street="A", number=1), Address(street="B", number=2, unit="x")],
    anything={"nested": [1, "two", None, True, {"three": decimal.Decimal("3.5")}]},
    note="a note",
    tag="red",
)


async def test_put_get_round_trip_of_every_field_type(kinds_db: Database) -> None:
    with count_requests(kinds_db) as log:
        await kinds_db.put(EVERYTHING)
        got = await kinds_db.get(Thing, thing_id="all#of%them")
    assert log.operations == ["PutItem", "GetItem"]
    assert got == EVERYTHING
    assert type(got.big) is int
    assert type(got.price) is decimal.Decimal
    assert type(got.pair) is tuple
    assert type(got.blobs) is frozenset
    assert got.when.tzinfo is not None


async def test_defaults_empty_collections_and_none_round_trip(kinds_db: Database) -> None:
    plain = Thing(thing_id="plain")
    await kinds_db.put(plain)
    assert await kinds_db.get(Thing, thing_id="plain") == plain


async def test_stored_attributes_use_native_dynamodb_types(kinds_db: Database) -> None:
    await kinds_db.put(EVERYTHING)
    item = await raw_item(kinds_db, {"pk": "THING#all%23of%25them", "sk": "THING#all%23of%25them"})
    assert item is not None
    assert item["thing_id"] == {"S": "all#of%them"}
    assert item["big"] == {"N": "12345678901234567890123456789012345678"}
    assert item["flag"] == {"BOOL": True}
    assert set(item["names"]["SS"]) == {"a", "b", "c"}
    assert item["address"]["M"]["number"] == {"N": "7"}
    assert strings(item, "GSI1PK", "GSI1SK") == ("TAG#red", "THING#all%23of%25them")


async def test_get_of_a_missing_item_raises_item_not_found(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(dynorm.ItemNotFoundError) as caught:
        await db.get(Org, name="NOPE")
    assert log.operations == ["GetItem"]
    assert isinstance(caught.value, LookupError)
    assert isinstance(caught.value, dynorm.DynormError)
    assert "NOPE" in str(caught.value)


async def test_get_with_a_wrong_key_field_sends_nothing(db: Database) -> None:
    with count_requests(db) as log:
        with pytest.raises(dynorm.KeyTemplateError, match="plan_type"):
            await db.get(Org, name="MICROSOFT", plan_type="Free")  # type: ignore[call-arg]
        with pytest.raises(dynorm.KeyTemplateError, match="username"):
            await db.get(User, org_name="MICROSOFT")  # type: ignore[call-arg]
    assert len(log) == 0


async def test_put_replaces_an_existing_item_by_default(db: Database) -> None:
    await db.put(MICROSOFT)
    await db.put(Org(name="MICROSOFT", plan_type="Free"))
    assert (await db.get(Org, name="MICROSOFT")).plan_type == "Free"


async def test_put_without_overwrite_refuses_an_existing_item(db: Database) -> None:
    with count_requests(db) as log:
        await db.put(MICROSOFT, overwrite=False)
    assert log.operations == ["PutItem"]

    with count_requests(db) as log, pytest.raises(dynorm.ConditionFailedError) as caught:
        await db.put(Org(name="MICROSOFT", plan_type="Free"), overwrite=False)
    assert log.operations == ["PutItem"]
    assert caught.value.code == "ConditionalCheckFailedException"
    assert caught.value.operation == "PutItem"
    assert await db.get(Org, name="MICROSOFT") == MICROSOFT


async def test_put_with_a_condition(db: Database) -> None:
    await db.put(Org(name="ACME", plan_type="Free"))

    upgraded = Org(name="ACME", plan_type="Pro")
    await db.put(upgraded, condition=Attr("plan_type") == "Free")
    assert await db.get(Org, name="ACME") == upgraded

    with pytest.raises(dynorm.ConditionFailedError):
        await db.put(
            Org(name="ACME", plan_type="Enterprise"), condition=Attr("plan_type") == "Free"
        )
    assert await db.get(Org, name="ACME") == upgraded

    # A condition on a missing item sees no attributes at all.
    with pytest.raises(dynorm.ConditionFailedError):
        await db.put(Org(name="NEW"), condition=Attr("plan_type").exists())
    with pytest.raises(dynorm.ItemNotFoundError):
        await db.get(Org, name="NEW")


async def test_put_without_overwrite_and_a_condition_needs_both(db: Database) -> None:
    await db.put(Org(name="FRESH"), overwrite=False, condition=Attr("plan_type").not_exists())
    assert await db.get(Org, name="FRESH") == Org(name="FRESH")
    with pytest.raises(dynorm.ConditionFailedError):
        await db.put(Org(name="FRESH"), overwrite=False, condition=Attr("plan_type").not_exists())


async def test_update_set_remove_add_returns_the_stored_item(kinds_db: Database) -> None:
    thing = Thing(thing_id="t1", count=1, names={"a"}, note="keep me?", text="old")
    await kinds_db.put(thing)

    with count_requests(kinds_db) as log:
        updated = await kinds_db.update(
            thing,
            set={"text": "new", "color": Color.GREEN, "address": Address("Elm", 5)},
            remove=["note"],
            add={"count": 41, "names": {"b"}},
        )
    assert log.operations == ["UpdateItem"]
    expected = Thing(
        thing_id="t1",
        count=42,
        names={"a", "b"},
        note=None,
        text="new",
        color=Color.GREEN,
        address=Address("Elm", 5),
    )
    assert updated == expected
    assert await kinds_db.get(Thing, thing_id="t1") == expected
    item = await raw_item(kinds_db, {"pk": "THING#t1", "sk": "THING#t1"})
    assert item is not None
    assert "note" not in item
    assert item["color"] == {"S": "green"}


async def test_a_removed_field_reads_back_as_its_default(kinds_db: Database) -> None:
    # remove= deletes the attribute; an absent attribute reads as the field's default, which is
    # what docs/writes.md says (count's default is 0, not None).
    await kinds_db.put(Thing(thing_id="t9", count=7, text="x"))
    updated = await kinds_db.update(Thing(thing_id="t9"), remove=["count", "text"])
    assert (updated.count, updated.text) == (0, "")
    item = await raw_item(kinds_db, {"pk": "THING#t9", "sk": "THING#t9"})
    assert item is not None
    assert "count" not in item
    assert "text" not in item
    assert (await kinds_db.get(Thing, thing_id="t9")).count == 0


async def test_update_adds_to_an_empty_set(kinds_db: Database) -> None:
    # DynamoDB has no empty sets, and its ADD refuses a NULL attribute: an empty set field must
    # be stored as no attribute at all, or it could never be added to.
    thing = Thing(thing_id="sets")
    await kinds_db.put(thing)
    item = await raw_item(kinds_db, {"pk": "THING#sets", "sk": "THING#sets"})
    assert item is not None
    assert "names" not in item

    with count_requests(kinds_db) as log:
        updated = await kinds_db.update(thing, add={"names": {"b"}, "scores": {3}})
    assert log.operations == ["UpdateItem"]
    assert updated.names == {"b"}
    assert updated.scores == {3}
    updated = await kinds_db.update(updated, add={"names": {"a"}})
    assert updated.names == {"a", "b"}

    # Emptying a set by update leaves it addable too.
    emptied = await kinds_db.update(updated, set={"names": set()})
    assert emptied.names == set()
    assert (await kinds_db.update(emptied, add={"names": {"c"}})).names == {"c"}
    assert (await kinds_db.get(Thing, thing_id="sets")).names == {"c"}


async def test_empty_set_fields_without_defaults_read_back(kinds_db: Database) -> None:
    empty = Bag(bag_id="b1", labels=set(), sizes=frozenset())
    await kinds_db.put(empty)
    assert await kinds_db.get(Bag, bag_id="b1") == empty
    full = await kinds_db.update(empty, add={"labels": {"x"}, "sizes": {1, 2}})
    assert full == Bag(bag_id="b1", labels={"x"}, sizes=frozenset({1, 2}))
    await kinds_db.put(Bag(bag_id="b1", labels=set(), sizes=frozenset({3})))
    assert await kinds_db.get(Bag, bag_id="b1") == Bag(
        bag_id="b1", labels=set(), sizes=frozenset({3})
    )


async def test_paths_reach_into_lists_and_their_elements(kinds_db: Database) -> None:
    thing = Thing(
        thing_id="listy",
        numbers=[1, 2, 3],
        addresses=[Address("Main St", 1), Address("High St", 2)],
    )
    await kinds_db.put(thing)
    with count_requests(kinds_db) as log:
        updated = await kinds_db.update(
            thing,
            set={"numbers[1]": 20, "addresses[1].unit": "B"},
            remove=["numbers[2]"],
            condition=(Attr("numbers[0]") == 1) & Attr("addresses[0].street").begins_with("Main"),
        )
    assert log.operations == ["UpdateItem"]
    assert updated.numbers == [1, 20]
    assert updated.addresses == [Address("Main St", 1), Address("High St", 2, "B")]
    assert await kinds_db.get(Thing, thing_id="listy") == updated

    with pytest.raises(dynorm.ConditionFailedError):
        await kinds_db.update(thing, set={"count": 1}, condition=Attr("numbers[0]") == 5)
    assert (await kinds_db.get(Thing, thing_id="listy")).count == 0


async def test_a_malformed_path_is_refused_before_sending(kinds_db: Database) -> None:
    thing = Thing(thing_id="listy")
    with count_requests(kinds_db) as log:
        with pytest.raises(dynorm.ExpressionError, match=r"numbers\[x\]"):
            await kinds_db.update(thing, set={"numbers[x]": 1})
        with pytest.raises(dynorm.ExpressionError, match=r"'numbers\['"):
            await kinds_db.update(thing, set={"count": 1}, condition=Attr("numbers[") == 1)
        with pytest.raises(dynorm.KeyTemplateError, match="GSI1PK is built from"):
            await kinds_db.update(thing, set={"tag.color": "red"})  # GSI1PK is built from tag
    assert len(log) == 0


async def test_update_with_a_condition(db: Database) -> None:
    await db.put(MICROSOFT)
    updated = await db.update(
        MICROSOFT, set={"plan_type": "Pro"}, condition=Attr("plan_type") == "Enterprise"
    )
    assert updated == Org(name="MICROSOFT", plan_type="Pro")
    with pytest.raises(dynorm.ConditionFailedError):
        await db.update(MICROSOFT, set={"plan_type": "Free"}, condition=Attr("plan_type") == "X")
    assert (await db.get(Org, name="MICROSOFT")).plan_type == "Pro"


async def test_update_rewrites_index_keys_built_from_changed_fields(seeded: Database) -> None:
    moved = await seeded.update(TICKET_123, set={"username": "SATYANADELLA"})
    assert moved.username == "SATYANADELLA"
    item = await raw_item(seeded, {"pk": "TICKET#123", "sk": "TICKET#123"})
    assert item is not None
    assert strings(item, "GSI1PK", "GSI1SK") == (
        "ORG#MICROSOFT#USER#SATYANADELLA",
        "TICKET#123",
    )

    bill = await seeded.get(User, org_name="MICROSOFT", username="BILLGATES", load=[User.tickets])
    assert [t.ticket_id for t in bill.tickets.loaded] == ["456"]
    satya = await seeded.get(
        User, org_name="MICROSOFT", username="SATYANADELLA", load=[User.tickets]
    )
    assert satya.tickets.loaded == [moved]


async def test_update_that_clears_an_index_field_drops_the_item_from_the_index(
    kinds_db: Database,
) -> None:
    thing = Thing(thing_id="t2")
    await kinds_db.put(thing)
    assert await kinds_db.query(Thing, "GSI1", tag="blue").all() == []

    tagged = await kinds_db.update(thing, set={"tag": "blue"})
    assert await kinds_db.query(Thing, "GSI1", tag="blue").all() == [tagged]

    untagged = await kinds_db.update(tagged, remove=["tag"])
    assert untagged.tag is None
    assert await kinds_db.query(Thing, "GSI1", tag="blue").all() == []
    item = await raw_item(kinds_db, {"pk": "THING#t2", "sk": "THING#t2"})
    assert item is not None
    assert "GSI1PK" not in item
    assert "GSI1SK" not in item  # an index key is written or removed whole


async def test_update_of_a_missing_item_raises_item_not_found(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(dynorm.ItemNotFoundError) as caught:
        await db.update(Org(name="GHOST"), set={"plan_type": "Pro"})
    assert log.operations == ["UpdateItem"]
    assert isinstance(caught.value, LookupError)
    # Nothing was created by the refused update.
    assert await raw_item(db, {"pk": "ORG#GHOST", "sk": "METADATA#GHOST"}) is None


async def test_update_with_a_condition_tells_a_missing_item_from_a_failed_condition(
    seeded: Database,
) -> None:
    with count_requests(seeded) as log, pytest.raises(dynorm.ItemNotFoundError) as missing:
        await seeded.update(
            Org(name="GHOST"), set={"plan_type": "Pro"}, condition=Attr("plan_type") == "Free"
        )
    # The refused update, then one consistent read to see why it was refused.
    assert log.operations == ["UpdateItem", "GetItem"]
    assert missing.value.operation == "UpdateItem"
    assert await raw_item(seeded, {"pk": "ORG#GHOST", "sk": "METADATA#GHOST"}) is None

    with count_requests(seeded) as log, pytest.raises(dynorm.ConditionFailedError) as failed:
        await seeded.update(
            MICROSOFT, set={"plan_type": "Pro"}, condition=Attr("plan_type") == "Free"
        )
    assert log.operations == ["UpdateItem", "GetItem"]
    assert not isinstance(failed.value, dynorm.ItemNotFoundError)
    assert await seeded.get(Org, name="MICROSOFT") == MICROSOFT

    with count_requests(seeded) as log:
        updated = await seeded.update(
            MICROSOFT, set={"plan_type": "Pro"}, condition=Attr("plan_type") == "Enterprise"
        )
    assert log.operations == ["UpdateItem"]  # success costs nothing more
    assert updated.plan_type == "Pro"


async def test_update_of_a_key_field_is_refused_before_sending(seeded: Database) -> None:
    with count_requests(seeded) as log:
        with pytest.raises(dynorm.KeyTemplateError, match="username"):
            await seeded.update(BILLGATES, set={"username": "WILLIAM"})  # type: ignore[misc]
        with pytest.raises(dynorm.KeyTemplateError, match="name"):
            await seeded.update(MICROSOFT, remove=["name"])  # type: ignore[misc]
        with pytest.raises(dynorm.KeyTemplateError, match="nope"):
            await seeded.update(MICROSOFT, set={"nope": 1})  # type: ignore[call-arg]
    assert len(log) == 0
    assert await seeded.get(User, org_name="MICROSOFT", username="BILLGATES") == BILLGATES


async def test_delete_by_object(seeded: Database) -> None:
    with count_requests(seeded) as log:
        await seeded.delete(BILLGATES)
    assert log.operations == ["DeleteItem"]
    with pytest.raises(dynorm.ItemNotFoundError):
        await seeded.get(User, org_name="MICROSOFT", username="BILLGATES")
    # Only that item went.
    assert await seeded.query(User, org_name="MICROSOFT").all() == [
        User(org_name="MICROSOFT", username="SATYANADELLA", user_type="Admin")
    ]


async def test_delete_by_model_and_key(seeded: Database) -> None:
    with count_requests(seeded) as log:
        await seeded.delete(Org, name="MICROSOFT")
    assert log.operations == ["DeleteItem"]
    assert await raw_item(seeded, {"pk": "ORG#MICROSOFT", "sk": "METADATA#MICROSOFT"}) is None
    with pytest.raises(dynorm.ItemNotFoundError):
        await seeded.get(Org, name="MICROSOFT")


async def test_delete_with_a_condition(seeded: Database) -> None:
    with pytest.raises(dynorm.ConditionFailedError):
        await seeded.delete(MICROSOFT, condition=Attr("plan_type") == "Free")
    assert await seeded.get(Org, name="MICROSOFT") == MICROSOFT
    await seeded.delete(MICROSOFT, condition=Attr("plan_type") == "Enterprise")
    with pytest.raises(dynorm.ItemNotFoundError):
        await seeded.get(Org, name="MICROSOFT")


async def test_delete_of_a_missing_item_is_a_no_op(db: Database) -> None:
    with count_requests(db) as log:
        await db.delete(Org, name="NEVER")
    assert log.operations == ["DeleteItem"]


async def test_delete_with_bad_key_fields_sends_nothing(db: Database) -> None:
    with count_requests(db) as log:
        with pytest.raises(dynorm.KeyTemplateError):
            await db.delete(User, org_name="MICROSOFT")  # type: ignore[call-overload]
        with pytest.raises(TypeError):
            await db.delete(MICROSOFT, name="MICROSOFT")  # type: ignore[call-overload]
    assert len(log) == 0


async def _describe(db: Database) -> dict[str, Any]:
    response = await db.send(Request("DescribeTable", {"TableName": db.table_name}))
    table: dict[str, Any] = response["Table"]
    return table


async def test_create_table_creates_keys_and_every_index(db: Database) -> None:
    table = await _describe(db)
    assert table["TableStatus"] == "ACTIVE"
    assert table["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    (gsi,) = table["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "GSI1"
    assert gsi["KeySchema"] == [
        {"AttributeName": "GSI1PK", "KeyType": "HASH"},
        {"AttributeName": "GSI1SK", "KeyType": "RANGE"},
    ]
    assert gsi["Projection"]["ProjectionType"] == "ALL"
    definitions = table["AttributeDefinitions"]
    assert {(d["AttributeName"], d["AttributeType"]) for d in definitions} == {
        ("pk", "S"),
        ("sk", "S"),
        ("GSI1PK", "S"),
        ("GSI1SK", "S"),
    }


async def test_create_table_creates_an_inverted_index(games_db: Database) -> None:
    table = await _describe(games_db)
    (gsi,) = table["GlobalSecondaryIndexes"]
    assert gsi["IndexName"] == "inverted"
    assert gsi["KeySchema"] == [
        {"AttributeName": "sk", "KeyType": "HASH"},
        {"AttributeName": "pk", "KeyType": "RANGE"},
    ]
    definitions = table["AttributeDefinitions"]
    assert sorted(d["AttributeName"] for d in definitions) == ["pk", "sk"]


async def test_create_table_gives_key_attributes_the_key_types_asked(db: Database) -> None:
    await db.delete_table()
    with count_requests(db) as log:
        with pytest.raises(dynorm.DefinitionError, match="names 'title', which is no key"):
            await db.create_table(key_types={"title": "N"})
        with pytest.raises(dynorm.DefinitionError, match=r"key_types\['sk'\] is 'M'"):
            await db.create_table(key_types={"sk": "M"})  # type: ignore[dict-item]
    assert len(log) == 0  # refused before anything was sent
    await db.create_table(key_types={"sk": "N", "GSI1PK": "B"})
    definitions = (await _describe(db))["AttributeDefinitions"]
    assert {(d["AttributeName"], d["AttributeType"]) for d in definitions} == {
        ("pk", "S"),
        ("sk", "N"),
        ("GSI1PK", "B"),
        ("GSI1SK", "S"),
    }
    await db.send(
        Request(
            "PutItem",
            {"TableName": db.table_name, "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}}},
        )
    )
    with pytest.raises(dynorm.DatabaseError):  # the server holds sk to its number type
        await db.send(
            Request(
                "PutItem",
                {"TableName": db.table_name, "Item": {"pk": {"S": "p"}, "sk": {"S": "1"}}},
            )
        )


async def test_the_seed_items_all_land_in_the_tables_own_collections(seeded: Database) -> None:
    # Tickets live in their own partitions, never among an org's users.
    microsoft = await raw_collection(seeded, "pk", "ORG#MICROSOFT")
    assert not any(str(strings(i, "sk")[0]).startswith("TICKET#") for i in microsoft)


async def test_consistent_reads(seeded: Database) -> None:
    (get,) = seeded.explain.get(Org, name="MICROSOFT", consistent=True)
    assert get.params["ConsistentRead"] is True
    assert await seeded.get(Org, name="MICROSOFT", consistent=True) == MICROSOFT
    org = await seeded.get(Org, name="MICROSOFT", load=[Org.users], consistent=True)
    assert len(org.users.loaded) == 2
    users = await seeded.query(User, org_name="MICROSOFT", consistent=True).all()
    assert len(users) == 2
    keys = [{"org_name": "MICROSOFT", "username": "BILLGATES"}]
    assert await seeded.get_many(User, keys, consistent=True) == [BILLGATES]
    # Secondary indexes have no strongly consistent reads: the flag is not sent to them.
    query = seeded.query(User, "GSI1", org_name="MICROSOFT", username="BILLGATES", consistent=True)
    assert "ConsistentRead" not in query.explain()[0].params
    assert await query.all() == [BILLGATES]


async def test_a_missing_table_is_reported_with_what_to_do(
    dynorm_server: RunningServer,
) -> None:
    async with dynorm.connect(
        app,
        endpoint_url=dynorm_server.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        table_name=f"missing-{uuid.uuid4().hex[:8]}",
    ) as db:
        with count_requests(db) as log, pytest.raises(dynorm.TableNotFoundError) as caught:
            await db.get(Org, name="MICROSOFT")
    assert log.operations == ["GetItem"]
    assert isinstance(caught.value, LookupError)
    assert "create_table" in str(caught.value)


literals = dynorm.Table("literals", pk="pk", sk="sk")


@literals.model(pk="J#{job_id}", sk="J#{job_id}")
class Job:
    job_id: str
    mode: Literal["fast", "slow"] = "fast"
    retries: Literal[0, 1, 3] = 0
    lane: Literal["a", "b"] | None = None
    levels: list[Literal["lo", "hi"]] = dynorm.field(factory=list)


async def test_literal_fields_are_stored_as_their_values_and_read_back(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(literals) as db:
        job = Job("1", mode="slow", retries=3, lane="b", levels=["hi", "lo"])
        await db.put(job)
        await db.put_all([Job("2")])

        item = await raw_item(db, {"pk": "J#1", "sk": "J#1"})
        got = await db.get(Job, job_id="1")
        scanned = sorted(await db.scan(Job).all(), key=lambda j: j.job_id)

    assert item is not None
    assert (item["mode"], item["retries"], item["lane"]) == ({"S": "slow"}, {"N": "3"}, {"S": "b"})
    assert item["levels"] == {"L": [{"S": "hi"}, {"S": "lo"}]}
    assert got == job
    assert scanned == [job, Job("2")]


async def test_a_value_outside_a_literal_is_refused_before_sending(
    dynorm_connect: Connect,
) -> None:
    async with dynorm_connect(literals) as db:
        with (
            count_requests(db) as log,
            pytest.raises(dynorm.CodecError, match="one of 'fast', 'slow'"),
        ):
            await db.put(Job("1", mode="medium"))  # type: ignore[arg-type]
    assert len(log) == 0
