"""Writes of children while ``was=`` is declared."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    ConditionFailedError,
    Database,
    Embedded,
    HasMany,
    Index,
    ItemNotFoundError,
    Partition,
    Table,
)
from dynorm.testing import Connect, RunningServer, count_requests
from tests.faultproxy import connect_to

from .raw import raw_put, stored
from .was_models import (
    EOrder,
    Item,
    Line,
    OldItem,
    OldParent,
    Parent,
    RLine,
    ROrder,
    embedded,
    new_move,
    old_move,
    rows,
)

pytestmark = [pytest.mark.integration, pytest.mark.transactions]


@contextlib.asynccontextmanager
async def both(
    dynorm_connect: Connect, server: RunningServer, new: Table, old: Table
) -> AsyncIterator[tuple[Database, Database]]:
    async with dynorm_connect(new) as db, connect_to(server.url, old, db.table_name) as old_db:
        yield db, old_db


async def test_cascade_delete_of_a_parent_takes_children_of_both_layouts(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3)])
        await db.put(Item("a", "fig", 1))
        parent = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert sorted(i.name for i in parent.items.loaded) == ["apple", "fig"]

        await db.delete(parent, cascade=True)

        left = [(i["pk"], i["sk"]) for i in await stored(db)]
        assert left == [], left


async def test_a_recreated_parent_does_not_resurrect_cascade_deleted_children(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 3)])
        parent = await db.get(Parent, parent_id="a")
        await db.delete(parent, cascade=True)
        await db.put(Parent("a"))
        again = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert again.items.loaded == []


async def test_a_transaction_deleting_a_child_and_updating_its_parent_removes_the_old_entry(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        await old.add(order, EOrder.lines, Line("a", 1))
        await old.add(order, EOrder.lines, Line("b", 2))

        async with db.transaction() as tx:
            tx.check(ROrder("o1"), Attr("order_id") == "o1")  # the parent checked
            tx.delete(RLine("o1", "a", 1))

        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert [line.name for line in found.lines.loaded] == ["b"]


# -- a child whose index template holds a field outside its table key ------------------------------

INDEXES = [GSI("GSI1", pk="GSI1PK", sk="GSI1SK")]
bykey_old = Table("probe-bykey", pk="pk", sk="sk", indexes=INDEXES)
bykey_new = Table("probe-bykey", pk="pk", sk="sk", indexes=INDEXES)


@bykey_old.model(pk="K#{owner}", sk="#K#{owner}")
class KOwner0:
    owner: str
    notes = HasMany["KNote0"](via=Partition())


@bykey_old.model(pk="K#{owner}", sk="NOTE#{note_id}")
class KNote0:
    note_id: str
    owner: str


@bykey_new.model(pk="K#{owner}", sk="#K#{owner}", GSI1=("K#{owner}", "#K#{owner}"))
class KOwner:
    owner: str
    notes = HasMany["KNote"](via=Index("GSI1"), was=Partition())


@bykey_new.model(pk="N#{note_id}", sk="N#{note_id}", GSI1=("K#{owner}", "NOTE#{note_id}"))
class KNote:
    note_id: str
    owner: str


async def test_delete_by_key_of_a_child_whose_old_key_needs_a_non_key_field(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, bykey_new, bykey_old) as (db, old):
        await old.put_all([KOwner0("o"), KNote0("n1", "o")])
        await db.put(KNote("n1", "o"))  # new copy written, old removed
        # The key alone does not say where the old copy was: a clear error or the old copy
        # found, not a traceback.
        await db.delete(KNote, note_id="n1")
        assert [i["pk"] for i in await stored(db)] == ["K#o"]


async def test_a_transaction_deleting_two_children_of_one_map_removes_both_entries(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        for line in (Line("a", 1), Line("b", 2), Line("c", 3)):
            await old.add(order, EOrder.lines, line)

        async with db.transaction() as tx:
            tx.delete(RLine("o1", "a", 1))
            tx.delete(RLine("o1", "b", 2))

        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert [line.name for line in found.lines.loaded] == ["c"]


async def test_a_transaction_putting_two_children_of_one_map_moves_both(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        for line in (Line("a", 1), Line("b", 2)):
            await old.add(order, EOrder.lines, line)

        async with db.transaction() as tx:
            tx.put(RLine("o1", "a", 5))
            tx.put(RLine("o1", "b", 6))

        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert [(x.name, x.qty) for x in found.lines.loaded] == [("a", 5), ("b", 6)]


async def test_cascade_delete_of_a_parent_embedding_its_children_takes_the_old_items(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    from .was_models import MLine, MOrder, into_map  # noqa: PLC0415

    async with dynorm_connect(into_map) as db:
        order = await db.put(MOrder("o1"))
        await db.put(MLine("o1", "a", 1))  # an item of the old layout (Partition)
        await db.add(order, MOrder.lines, MLine("o1", "b", 2))
        loaded = await db.get(MOrder, order_id="o1", load=[MOrder.lines])
        assert sorted(x.name for x in loaded.lines.loaded) == ["a", "b"]

        await db.delete(loaded, cascade=True)
        assert [(i["pk"], i["sk"]) for i in await stored(db)] == []


def _send_now(url: str, operation: str, body: dict[str, Any]) -> None:
    """One request to the test server, sent at once (blocking), as another process would."""
    import json  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    request = urllib.request.Request(  # noqa: S310 - the local test server
        url,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": f"DynamoDB_20120810.{operation}",
            "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/"
            "aws4_request, SignedHeaders=host, Signature=0",
        },
    )
    with urllib.request.urlopen(request) as reply:  # noqa: S310 - the local test server
        assert reply.status == 200


@pytest.mark.parametrize("returns", ["new", None])
async def test_an_update_whose_old_entry_a_migration_moved_meanwhile_goes_on(
    dynorm_connect: Connect, dynorm_server: RunningServer, returns: Any
) -> None:
    """The entry read (it is there), then the migration moves it before the update is sent."""
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        await old.add(order, EOrder.lines, Line("a", 1))
        moved = False

        def migration_moves_it(event: Any) -> None:
            nonlocal moved
            if moved or event.operation != "GetItem":
                return
            moved = True  # as migrate() would: the new item put, the entry removed
            _send_now(dynorm_server.url, "TransactWriteItems", {
                "TransactItems": [
                    {"Put": {"TableName": db.table_name, "Item": {
                        "pk": {"S": "O#o1"}, "sk": {"S": "LINE#a"}, "order_id": {"S": "o1"},
                        "name": {"S": "a"}, "qty": {"N": "1"}}}},
                    {"Update": {"TableName": db.table_name,
                                "Key": {"pk": {"S": "O#o1"}, "sk": {"S": "#ORDER#o1"}},
                                "UpdateExpression": "REMOVE #l.#a",
                                "ExpressionAttributeNames": {"#l": "lines", "#a": "a"}}},
                ]
            })  # fmt: skip

        stop = db.on_request(migration_moves_it)
        try:
            await db.update(RLine("o1", "a", 1), set={"qty": 5}, returns=returns)
        finally:
            stop()
        assert moved
        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert [(x.name, x.qty) for x in found.lines.loaded] == [("a", 5)]


def _migration_moves_line_a(url: str, table_name: str) -> dict[str, Any]:
    """What migrate() sends for line a of order o1: the item put, the entry removed."""
    return {
        "TransactItems": [
            {"Put": {"TableName": table_name, "Item": {
                "pk": {"S": "O#o1"}, "sk": {"S": "LINE#a"}, "order_id": {"S": "o1"},
                "name": {"S": "a"}, "qty": {"N": "1"}}}},
            {"Update": {"TableName": table_name,
                        "Key": {"pk": {"S": "O#o1"}, "sk": {"S": "#ORDER#o1"}},
                        "UpdateExpression": "REMOVE #l.#a",
                        "ExpressionAttributeNames": {"#l": "lines", "#a": "a"}}},
        ]
    }  # fmt: skip


@pytest.mark.parametrize(
    "write",
    [
        "delete_all",
        "tx_delete",
        "delete",
    ],
)
async def test_a_delete_whose_old_entry_a_migration_moved_meanwhile_goes_on(
    dynorm_connect: Connect, dynorm_server: RunningServer, write: str
) -> None:
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        await old.add(order, EOrder.lines, Line("a", 1))
        await old.add(order, EOrder.lines, Line("b", 2))
        moved = False
        error: Exception | None = None

        def migration_moves_it(event: Any) -> None:
            nonlocal moved
            if not moved and event.operation == "GetItem":
                moved = True
                body = _migration_moves_line_a(dynorm_server.url, db.table_name)
                _send_now(dynorm_server.url, "TransactWriteItems", body)

        stop = db.on_request(migration_moves_it)
        try:
            if write == "delete_all":
                try:
                    await db.delete_all([RLine("o1", "a", 1), RLine("o1", "b", 2)])
                except ConditionFailedError as exc:  # reported with what is read after
                    error = exc
            elif write == "delete":
                await db.delete(RLine("o1", "a", 1))
                await db.delete(RLine("o1", "b", 2))
            else:
                async with db.transaction() as tx:
                    tx.delete(RLine("o1", "a", 1))
                await db.delete(RLine("o1", "b", 2))
        finally:
            stop()
        assert moved
        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        # delete_all: ConditionFailedError, and b's old entry never removed (b is read again)
        assert (error, [x.name for x in found.lines.loaded]) == (None, [])


async def test_a_transaction_of_60_children_with_no_old_copies_goes_through(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """Worked before was= was declared; the old layout is empty (the migration is done)."""
    async with dynorm_connect(new_move) as db:
        await db.put(Parent("a"))
        async with db.transaction() as tx:
            for n in range(60):
                tx.put(Item("a", f"n{n:02}", 1))
        found = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert len(found.items.loaded) == 60


# -- a child out of a map whose table key does not hold its parent's ------------------------------

emap_old = Table("probe-emap", pk="pk", sk="sk", indexes=INDEXES)
emap_new = Table("probe-emap", pk="pk", sk="sk", indexes=INDEXES)


@attrs.define
class PlainNote:
    note_id: str
    text: str = ""


@emap_old.model(pk="B#{board}", sk="#B#{board}")
class Board0:
    board: str
    notes = HasMany[PlainNote](PlainNote, via=Embedded(key="note_id"))


@emap_new.model(pk="B#{board}", sk="#B#{board}", GSI1=("B#{board}", "#B#{board}"))
class Board:
    board: str
    notes = HasMany["BNote"](via=Index("GSI1"), was=Embedded(key="note_id"))


@emap_new.model(pk="N#{note_id}", sk="N#{note_id}", GSI1=("B#{board}", "NOTE#{note_id}"))
class BNote:
    note_id: str
    board: str
    text: str = ""


async def test_delete_by_key_of_a_child_out_of_a_map_takes_its_entry(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """The key lacks the parent's field: the item is read for it (one consistent GetItem)."""
    async with both(dynorm_connect, dynorm_server, emap_new, emap_old) as (db, old):
        board = await old.put(Board0("b"))
        await old.add(board, Board0.notes, PlainNote("n1", "hello"))
        await old.add(board, Board0.notes, PlainNote("n2", "there"))
        await raw_put(db, {"pk": {"S": "N#n1"}, "sk": {"S": "N#n1"}, "GSI1PK": {"S": "B#b"},
                           "GSI1SK": {"S": "NOTE#n1"}, "note_id": {"S": "n1"},
                           "board": {"S": "b"}, "text": {"S": "hello"}})  # fmt: skip

        # explain shows the read of the item, and cannot know the old copy's removal.
        explained = db.explain.delete(BNote, note_id="n1")
        assert [r.operation for r in explained] == ["GetItem", "DeleteItem"]
        with count_requests(db) as log:
            await db.delete(BNote, note_id="n1")  # a delete by key, as before was=
        # The item read for its board, the entry read, the delete and the removal together.
        assert log.operations == ["GetItem", "GetItem", "TransactWriteItems"]
        again = await db.get(Board, board="b", load=[Board.notes])
        assert [n.note_id for n in again.notes.loaded] == ["n2"]


async def test_delete_by_key_of_a_child_only_in_a_map_is_refused_with_advice(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """No new item to read the parent's field from: refused, nothing sent; the object works."""
    async with both(dynorm_connect, dynorm_server, emap_new, emap_old) as (db, old):
        board = await old.put(Board0("b"))
        await old.add(board, Board0.notes, PlainNote("n1", "hello"))

        with (
            count_requests(db) as log,
            pytest.raises(ItemNotFoundError, match=r"db\.delete\(obj\)"),
        ):
            await db.delete(BNote, note_id="n1")
        assert log.operations == ["GetItem"]

        found = await db.get(Board, board="b", load=[Board.notes])
        (note,) = found.notes.loaded
        await db.delete(note)
        again = await db.get(Board, board="b", load=[Board.notes])
        assert again.notes.loaded == []


async def test_an_update_returning_old_values_raced_by_the_migration_reports_success(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    """An update that was applied must not raise: a caller retrying it adds twice."""
    async with both(dynorm_connect, dynorm_server, rows, embedded) as (db, old):
        order = await old.put(EOrder("o1"))
        await old.add(order, EOrder.lines, Line("a", 1))
        moved = False

        def migration_moves_it(event: Any) -> None:
            nonlocal moved
            if not moved and event.operation == "GetItem":
                moved = True
                body = _migration_moves_line_a(dynorm_server.url, db.table_name)
                _send_now(dynorm_server.url, "TransactWriteItems", body)

        stop = db.on_request(migration_moves_it)
        error: Exception | None = None
        try:
            await db.update(RLine("o1", "a", 1), add={"qty": 1}, returns="old")
        except Exception as exc:  # noqa: BLE001 - reported with what is stored
            error = exc
        finally:
            stop()
        assert moved
        found = await db.get(ROrder, order_id="o1", load=[ROrder.lines])
        assert (error, [(x.name, x.qty) for x in found.lines.loaded]) == (None, [("a", 2)])


async def test_put_all_of_parents_and_children_moves_every_child_once(
    dynorm_connect: Connect, dynorm_server: RunningServer
) -> None:
    async with both(dynorm_connect, dynorm_server, new_move, old_move) as (db, old):
        await old.put_all([OldParent("a"), OldItem("a", "apple", 1), OldItem("a", "fig", 1)])
        await db.put_all([Parent("a", "A"), Item("a", "apple", 2), Parent("b"), Item("b", "x", 1)])
        a = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert [(i.name, i.qty) for i in a.items.loaded] == [("apple", 2), ("fig", 1)]
        assert a.title == "A"
        left = [(i["pk"], i["sk"]) for i in await stored(db) if i["sk"].startswith("ITEM#")]
        assert left == [("P#a", "ITEM#fig")]
        await db.delete_all([Item("a", "fig", 1), Item("a", "apple", 2)])
        a = await db.get(Parent, parent_id="a", load=[Parent.items])
        assert a.items.loaded == []
