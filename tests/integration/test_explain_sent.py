"""``explain`` is what is sent: every write path, compared with the requests that really go out.

Each case explains a call, then makes it through a recording proxy (``tests/faultproxy.py``,
no faults) and compares the two lists request by request: the operation, the table, the keys,
and the whole body where it is known up front. A :class:`dynorm.FromRead` placeholder in the
explained body stands for a value taken from a read before it; it matches whatever was sent
there. What the transport adds to a request as it sends it (a transaction's
``ClientRequestToken``) is left out of the comparison, as docs/integrity.md says.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs
import pytest

from dynorm import (
    GSI,
    Attr,
    Database,
    Denormalized,
    Embedded,
    FromRead,
    HasMany,
    Index,
    Partition,
    Request,
    Table,
)
from tests.faultproxy import Faulty, FaultyConnect

pytestmark = pytest.mark.integration

table = Table("explain-sent", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="ORG#{name}", sk="ORG#{name}")
@attrs.define
class Org:
    name: str
    plan: str = "Free"
    users = HasMany["User"]("User", via=Partition())


@table.model(pk="ORG#{org}", sk="USER#{username}")
@attrs.define
class User:
    org: str
    username: str


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
@attrs.define
class Author:
    name: str
    born: datetime.date
    books = HasMany["Book"]("Book", via=Denormalized(copy={"born": "author_born"}))


@table.model(pk="AUTHOR#{author}", sk="BOOK#{title}")
@attrs.define
class Book:
    author: str
    title: str
    author_born: datetime.date | None = None


@table.model(pk="LABEL#{name}", sk="LABEL#{name}", GSI1=("LABEL#{name}", "#LABEL#{name}"))
@attrs.define
class Label:
    name: str
    city: str
    albums = HasMany["Album"](
        "Album", via=Denormalized(copy={"city": "label_city"}, where=Index("GSI1"))
    )


@table.model(
    pk="ALBUM#{album_id}", sk="ALBUM#{album_id}", GSI1=("LABEL#{label}", "ALBUM#{album_id}")
)
@attrs.define
class Album:
    album_id: str
    label: str
    label_city: str | None = None


@attrs.define
class Address:
    nickname: str
    city: str


@table.model(pk="CUSTOMER#{cid}", sk="CUSTOMER#{cid}")
@attrs.define
class Customer:
    cid: str
    addresses = HasMany["Address"](Address, via=Embedded(key="nickname"))


@attrs.define
class Remark:
    text: str


@table.model(pk="TICKET#{tid}", sk="TICKET#{tid}")
@attrs.define
class Ticket:
    tid: str
    remarks = HasMany["Remark"](Remark, via=Embedded())  # a list: removed by position


BORN = datetime.date(1929, 10, 21)
LATER = datetime.date(1930, 1, 1)


@pytest.fixture
async def faulty(faulty_connect: FaultyConnect) -> AsyncIterator[Faulty]:
    async with faulty_connect(table) as connected:
        direct = connected.direct
        await direct.put_all([Org("acme"), Org("initech"), User("acme", "wile")])
        await direct.put(Author("Le Guin", BORN))
        await direct.put_all([Book("Le Guin", "Tehanu"), Book("Le Guin", "Lavinia")])
        await direct.put_all([Label("sub", "Seattle"), Label("mute", "London")])
        await direct.put(Album("a1", "sub"))
        await direct.put(Customer("c1"))
        await direct.add(Customer("c1"), Customer.addresses, Address("home", "Oslo"))
        await direct.put(Ticket("t1"))
        await direct.add(Ticket("t1"), Ticket.remarks, Remark("first"))
        connected.proxy.reset()
        yield connected


# -- comparing --------------------------------------------------------------------------------

#: Parameters the transport adds as it sends (see docs/integrity.md, "Retries").
TRANSPORT_ADDS = frozenset({"ClientRequestToken", "ReturnValuesOnConditionCheckFailure"})


def placeholders(value: object) -> bool:
    """Whether a FromRead placeholder stands anywhere in ``value``."""
    if isinstance(value, FromRead):
        return True
    if isinstance(value, dict):
        return any(placeholders(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(placeholders(v) for v in value)
    return False


def fits(explained: object, sent: object) -> bool:
    """``sent`` is ``explained``, a placeholder matching any value."""
    if isinstance(explained, FromRead):
        return True
    if isinstance(explained, dict):
        return (
            isinstance(sent, dict)
            and explained.keys() == sent.keys()
            and all(fits(v, sent[k]) for k, v in explained.items())
        )
    if isinstance(explained, list | tuple):
        return (
            isinstance(sent, list)
            and len(explained) == len(sent)
            and all(fits(e, s) for e, s in zip(explained, sent, strict=True))
        )
    return explained == sent


def in_text(value: object) -> bool:
    """Whether a placeholder is written into an expression's text (a list position)."""
    if isinstance(value, str):
        return "from a read before" in value
    if isinstance(value, dict):
        return any(in_text(v) for v in value.values())
    return False


def tables(params: dict[str, Any]) -> list[str]:
    if "TableName" in params:
        return [params["TableName"]]
    if "RequestItems" in params:
        return list(params["RequestItems"])
    actions = params.get("TransactItems", [])
    return [next(iter(a.values()))["TableName"] for a in actions]


def keys(params: dict[str, Any], table_attrs: tuple[str, ...]) -> list[Any]:
    """The keys a request names, in order (placeholders kept as they are)."""
    if "Key" in params:
        return [params["Key"]]
    if "Item" in params:
        return [{a: params["Item"][a] for a in table_attrs}]
    found: list[Any] = []
    for entry in params.get("RequestItems", {}).values():
        if isinstance(entry, dict):
            found += entry["Keys"]
            continue
        for write in entry:
            ((kind, body),) = write.items()
            found.append(body["Key"] if kind == "DeleteRequest" else None)
            if kind == "PutRequest":
                found[-1] = {a: body["Item"][a] for a in table_attrs}
    for action in params.get("TransactItems", []):
        found += keys(next(iter(action.values())), table_attrs)
    return found


def compare(db: Database, explained: list[Request], sent: list[dict[str, Any]]) -> None:
    operations = [r.operation for r in explained]
    assert len(explained) == len(sent), (operations, len(sent))
    # Each table of the connection by its name (a load may read another table).
    by_name = {c.name: tuple(c.table.primary_attributes) for c in db.connected_tables()}
    for i, (plan, raw) in enumerate(zip(explained, sent, strict=True)):
        params = {k: v for k, v in dict(plan.params).items() if k not in TRANSPORT_ADDS}
        body = {k: v for k, v in raw.items() if k not in TRANSPORT_ADDS}
        where = f"request {i} ({plan.operation})"
        assert tables(params) == tables(body), where
        attributes = by_name[tables(params)[0]] if tables(params) else ()
        explained_keys, sent_keys = keys(params, attributes), keys(body, attributes)
        if not placeholders(explained_keys):
            assert fits(explained_keys, sent_keys), (where, explained_keys, sent_keys)
        if "ExpressionAttributeNames" in params and any(
            n.startswith("#dynorm_read") for n in params["ExpressionAttributeNames"]
        ):
            continue  # an update setting values a read gives: its expression is built then
        if plan.operation == "BatchWriteItem" and placeholders(params):
            continue  # the writes a read gives (a cascade's children): as many as it finds
        if in_text(params):
            continue  # a list position a read gives, written into the expression
        assert fits(params, body), (where, params, body)


Call = Callable[[Database], Awaitable[Any]]
Explained = Callable[[Database], list[Request]]


async def in_transaction(db: Database, fill: Callable[[Any], None]) -> None:
    async with db.transaction() as tx:
        fill(tx)


def transaction_of(db: Database, fill: Callable[[Any], None]) -> list[Request]:
    tx = db.transaction()
    fill(tx)
    return tx.explain()


def plain_actions(tx: Any) -> None:
    tx.put(Org("globex", "Pro"))
    tx.update(Org("acme"), set={"plan": "Team"})
    tx.delete(User("acme", "wile"))
    tx.check(Org("initech"), Attr("plan") == "Free")


def copying_actions(tx: Any) -> None:
    tx.put(Book("Le Guin", "Always Coming Home"))  # a child: its copy from the parent beside it
    tx.put(Author("Le Guin", BORN))  # a parent, unchanged: read to know it is


def child_actions(tx: Any) -> None:
    tx.put(Book("Le Guin", "The Dispossessed"))  # its copy comes from a read of the parent
    tx.put(Org("globex"))


CASES: dict[str, tuple[Explained, Call, list[str]]] = {
    "put": (
        lambda db: db.explain.put(Org("globex")),
        lambda db: db.put(Org("globex")),
        ["PutItem"],
    ),
    "put of a parent with copies (Denormalized)": (
        lambda db: db.explain.put(Author("Le Guin", BORN)),
        lambda db: db.put(Author("Le Guin", BORN)),
        ["PutItem"],
    ),
    "put of a child with copies (Denormalized)": (
        lambda db: db.explain.put(Book("Le Guin", "Earthsea")),
        lambda db: db.put(Book("Le Guin", "Earthsea")),
        ["BatchGetItem", "PutItem", "BatchGetItem"],
    ),
    "put of a parent with embedded children (Embedded)": (
        lambda db: db.explain.put(Customer("c1")),
        lambda db: db.put(Customer("c1")),
        ["UpdateItem"],
    ),
    "put_all of children with copies": (
        lambda db: db.explain.put_all([Book("Le Guin", f"B{i}") for i in range(3)]),
        lambda db: db.put_all([Book("Le Guin", f"B{i}") for i in range(3)]),
        ["BatchGetItem", "BatchWriteItem", "BatchGetItem"],
    ),
    "put_all of a parent with copies": (
        lambda db: db.explain.put_all([Author("Le Guin", BORN), Org("globex")]),
        lambda db: db.put_all([Author("Le Guin", BORN), Org("globex")]),
        ["BatchGetItem", "BatchWriteItem"],
    ),
    "put_all of a parent with embedded children": (
        lambda db: db.explain.put_all([Customer("c1"), Customer("c2")]),
        lambda db: db.put_all([Customer("c1"), Customer("c2")]),
        ["UpdateItem", "UpdateItem"],
    ),
    "update": (
        lambda db: db.explain.update(Org("acme"), set={"plan": "Pro"}),
        lambda db: db.update(Org("acme"), set={"plan": "Pro"}),
        ["UpdateItem"],
    ),
    "update of a copied field, unchanged": (
        lambda db: db.explain.update(Author("Le Guin", BORN), set={"born": BORN}),
        lambda db: db.update(Author("Le Guin", BORN), set={"born": BORN}),
        ["UpdateItem"],
    ),
    "update moving a child to another parent (Index)": (
        lambda db: db.explain.update(Album("a1", "sub"), set={"label": "mute"}),
        lambda db: db.update(Album("a1", "sub"), set={"label": "mute"}),
        ["GetItem", "UpdateItem"],
    ),
    "delete": (
        lambda db: db.explain.delete(Org, name="initech"),
        lambda db: db.delete(Org, name="initech"),
        ["DeleteItem"],
    ),
    "delete cascade (Partition)": (
        lambda db: db.explain.delete(Org("acme"), cascade=True),
        lambda db: db.delete(Org("acme"), cascade=True),
        ["GetItem", "Query", "UpdateItem", "BatchWriteItem", "DeleteItem"],
    ),
    "delete_all": (
        lambda db: db.explain.delete_all([User("acme", "wile"), Org("initech")]),
        lambda db: db.delete_all([User("acme", "wile"), Org("initech")]),
        ["BatchWriteItem"],
    ),
    "add (Partition)": (
        lambda db: db.explain.add(Org("acme"), Org.users, User("acme", "road")),
        lambda db: db.add(Org("acme"), Org.users, User("acme", "road")),
        ["PutItem"],
    ),
    "add (Denormalized)": (
        lambda db: db.explain.add(Author("Le Guin", BORN), Author.books, Book("Le Guin", "X")),
        lambda db: db.add(Author("Le Guin", BORN), Author.books, Book("Le Guin", "X")),
        ["PutItem"],
    ),
    "add (Embedded)": (
        lambda db: db.explain.add(Customer("c1"), Customer.addresses, Address("work", "Rome")),
        lambda db: db.add(Customer("c1"), Customer.addresses, Address("work", "Rome")),
        ["UpdateItem"],
    ),
    "remove (Partition)": (
        lambda db: db.explain.remove(Org("acme"), Org.users, User("acme", "wile")),
        lambda db: db.remove(Org("acme"), Org.users, User("acme", "wile")),
        ["DeleteItem"],
    ),
    "remove (Embedded)": (
        lambda db: db.explain.remove(Customer("c1"), Customer.addresses, Address("home", "Oslo")),
        lambda db: db.remove(Customer("c1"), Customer.addresses, Address("home", "Oslo")),
        ["UpdateItem"],
    ),
    "remove (Embedded list, not loaded)": (
        lambda db: db.explain.remove(Ticket("t1"), Ticket.remarks, Remark("first")),
        lambda db: db.remove(Ticket("t1"), Ticket.remarks, Remark("first")),
        ["GetItem", "UpdateItem"],
    ),
    "transaction": (
        lambda db: transaction_of(db, plain_actions),
        lambda db: in_transaction(db, plain_actions),
        ["TransactWriteItems"],
    ),
    "transaction with a parent and its child": (
        lambda db: transaction_of(db, copying_actions),
        lambda db: in_transaction(db, copying_actions),
        ["BatchGetItem", "TransactWriteItems"],
    ),
    "transaction with a child whose parent is read": (
        lambda db: transaction_of(db, child_actions),
        lambda db: in_transaction(db, child_actions),
        ["BatchGetItem", "TransactWriteItems"],
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        # TransactWriteItems: dynalite has none (the plugin skips these there).
        pytest.param(c, marks=pytest.mark.transactions) if c.startswith("transaction") else c
        for c in CASES
    ],
)
async def test_explain_is_what_is_sent(faulty: Faulty, case: str) -> None:
    explain, call, operations = CASES[case]
    explained = explain(faulty.db)
    assert [r.operation for r in explained] == operations
    assert faulty.proxy.requests == []  # explain sends nothing
    await call(faulty.db)
    assert faulty.proxy.requests == operations
    compare(faulty.db, explained, faulty.proxy.bodies)


async def test_a_copy_taken_from_a_read_is_shown_as_a_placeholder(faulty: Faulty) -> None:
    read, put, again = faulty.db.explain.put(Book("Le Guin", "Earthsea"))
    assert read.params["RequestItems"][faulty.db.table_name]["ConsistentRead"] is True
    item = put.params["Item"]
    assert item["author_born"] == FromRead("Author.born")
    assert repr(item["author_born"]) == "<Author.born, from a read before>"
    assert again == read  # the parent is read again after the write
    await faulty.db.put(Book("Le Guin", "Earthsea"))
    stored = await faulty.direct.get(Book, author="Le Guin", title="Earthsea")
    assert stored.author_born == BORN
