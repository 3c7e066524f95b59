"""Mapping an existing table — one another tool created and filled, read and written by dynorm.

The table is created and filled with raw requests, the way NoSQL Workbench or a hand-written
boto3 app lays it out:

| PK     | SK     | GSI1-PK | GSI1-SK    | ItemType | other attributes                     |
|--------|--------|---------|------------|----------|--------------------------------------|
| b#42   | b#42   |         |            | book     | Title, Author, Shelf{Room, Level}    |
| b#42   | l#1    | m#m9    | 2026-05-01 | loan     | Renewals                             |
| m#m9   | m#m9   | m#m9    | m#m9       | member   | Name, Email                          |

Ids, a loan's member and its due date exist only inside keys. See docs/mapping.md.
"""

from __future__ import annotations

from typing import Any

import attrs
from common import Narrator, run

import dynorm
from dynorm import GSI, Attr, BelongsTo, HasMany, Index, Partition, Request, Table, between

#: The scenario creates the table itself, with the tool's CreateTable request.
CREATE = False

table = Table(
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


@table.model(pk="b#{book_id}", sk="b#{book_id}", entity="book")
class Book:
    book_id: str = dynorm.field(key_only=True)
    title: str = dynorm.field(name="Title")
    author: str = dynorm.field(name="Author")
    shelf: Shelf | None = dynorm.field(name="Shelf", default=None)
    loans = HasMany["Loan"](via=Partition())


@table.model(
    pk="m#{member_id}", sk="m#{member_id}", GSI1=("m#{member_id}", "m#{member_id}"), entity="member"
)
class Member:
    member_id: str = dynorm.field(key_only=True)
    name: str = dynorm.field(name="Name")
    email: str = dynorm.field(name="Email")
    loans = HasMany["Loan"](via=Index("GSI1"))


@table.model(pk="b#{book_id}", sk="l#{loan_id}", GSI1=("m#{member_id}", "{due}"), entity="loan")
class Loan:
    book_id: str = dynorm.field(key_only=True)
    loan_id: str = dynorm.field(key_only=True)
    member_id: str = dynorm.field(key_only=True)
    due: str = dynorm.field(key_only=True)
    renewals: int = dynorm.field(name="Renewals", default=0)
    book = BelongsTo(Book)
    member = BelongsTo(Member)


# -- the other tool's side: raw requests ---------------------------------------------------------


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _loan(book: str, loan: str, member: str, due: str, renewals: int) -> dict[str, Any]:
    return {
        "PK": _s(f"b#{book}"),
        "SK": _s(f"l#{loan}"),
        "GSI1-PK": _s(f"m#{member}"),
        "GSI1-SK": _s(due),
        "ItemType": _s("loan"),
        "Renewals": {"N": str(renewals)},
    }


def _member(member: str, name: str, email: str) -> dict[str, Any]:
    key = _s(f"m#{member}")
    return {
        "PK": key,
        "SK": key,
        "GSI1-PK": key,
        "GSI1-SK": key,
        "ItemType": _s("member"),
        "Name": _s(name),
        "Email": _s(email),
    }


ITEMS = [
    {
        "PK": _s("b#42"),
        "SK": _s("b#42"),
        "ItemType": _s("book"),
        "Title": _s("Dune"),
        "Author": _s("Herbert"),
        "Shelf": {"M": {"Room": _s("east"), "Level": {"N": "3"}}},
        "Notes": _s("donated"),  # no field maps it: ignored on read
    },
    {
        "PK": _s("b#43"),
        "SK": _s("b#43"),
        "ItemType": _s("book"),
        "Title": _s("Emma"),
        "Author": _s("Austen"),
    },
    _member("m9", "Ada", "ada@example.org"),
    _member("m10", "Grace", "grace@example.org"),
    _loan("42", "1", "m9", "2026-05-01", 0),
    _loan("42", "2", "m10", "2026-04-20", 1),
    _loan("43", "3", "m9", "2026-05-10", 2),
]


async def create_and_fill(db: dynorm.Database) -> None:
    """What the other tool did: CreateTable and PutItem, as raw requests."""
    keys = [("PK", "HASH"), ("SK", "RANGE")]
    index_keys = [("GSI1-PK", "HASH"), ("GSI1-SK", "RANGE")]
    await db.send(
        Request(
            "CreateTable",
            {
                "TableName": db.table_name,
                "AttributeDefinitions": [
                    {"AttributeName": a, "AttributeType": "S"}
                    for a in ("PK", "SK", "GSI1-PK", "GSI1-SK")
                ],
                "KeySchema": [{"AttributeName": a, "KeyType": t} for a, t in keys],
                "GlobalSecondaryIndexes": [
                    {
                        "IndexName": "GSI1",
                        "KeySchema": [{"AttributeName": a, "KeyType": t} for a, t in index_keys],
                        "Projection": {"ProjectionType": "ALL"},
                    }
                ],
                "BillingMode": "PAY_PER_REQUEST",
            },
        )
    )
    for item in ITEMS:
        await db.send(Request("PutItem", {"TableName": db.table_name, "Item": item}))


async def raw_item(db: dynorm.Database, pk: str, sk: str) -> dict[str, Any]:
    """The item as stored, attribute names and all."""
    key = {"PK": _s(pk), "SK": _s(sk)}
    response = await db.send(Request("GetItem", {"TableName": db.table_name, "Key": key}))
    item: dict[str, Any] = response.get("Item", {})
    return item


async def scenario(tour: Narrator) -> None:
    db = tour.db
    await create_and_fill(db)

    await tour.step("E.1 Get a book (GetItem)", lambda: db.get(Book, book_id="42"))

    async def book_with_loans() -> object:
        book = await db.get(Book, book_id="42", load=[Book.loans])
        return {"book": book, "loans": book.loans.loaded}

    await tour.step("E.2 A book WITH its loans (1 Query, Partition)", book_with_loans)

    async def member_with_loans() -> object:
        member = await db.get(Member, member_id="m9", load=[Member.loans])
        return {"member": member, "loans": member.loans.loaded}

    await tour.step("E.3 A member WITH their loans (1 Query on GSI1)", member_with_loans)
    loans = await tour.step(
        "E.4 A member's loans only: ItemType leaves the member out (1 Query on GSI1)",
        lambda: db.query(Loan, "GSI1", member_id="m9").all(),
    )
    await tour.step(
        "E.5 A book's loans by partial key: begins_with(SK, 'l#') (1 Query)",
        lambda: db.query(Loan, book_id="42").all(),
    )

    async def books_of_loans() -> object:
        await db.load(loans, Loan.book)
        return [(loan.loan_id, loan.book.loaded) for loan in loans]

    await tour.step("E.6 The books of those loans (1 BatchGetItem)", books_of_loans)

    await tour.step(
        "E.7 Renew a loan: fields named, 'Renewals' sent (1 UpdateItem)",
        lambda: db.update(loans[0], set={"renewals": 1}, condition=Attr("renewals") == 0),
    )
    emma = await db.get(Book, book_id="43")
    await tour.step(
        "E.8 Lend a book through the relationship (1 PutItem)",
        lambda: db.add(emma, Book.loans, Loan("43", "4", "m10", "2026-06-01")),
    )

    async def as_stored() -> object:
        return [await raw_item(db, "b#42", "l#1"), await raw_item(db, "b#43", "l#4")]

    await tour.step("E.9 Both loans as stored: the tool's layout (2 raw GetItem)", as_stored)
    await tour.step(
        "E.10 A member's loans due in May: between on GSI1-SK (1 Query)",
        lambda: db.query(
            Loan, index="GSI1", member_id="m9", due=between("2026-05-01", "2026-05-31")
        ).all(),
    )
    await tour.step(
        "E.11 A book's renewed loans: a filter naming a field (1 Query)",
        lambda: db.query(Loan, book_id="42").filter(Attr("renewals") > 0).all(),
    )
    await tour.step(
        "E.12 How many loans a book has: Select=COUNT (1 Query)",
        lambda: db.query(Loan, book_id="42").count(),
    )
    await tour.step(
        "E.13 Every loan in the table: a scan in 2 parallel segments (2 Scan)",
        lambda: db.scan(Loan, segments=2).all(),
    )

    async def books_with_loans() -> object:
        books = await db.query(Book, book_id="42", load=[Book.loans]).all()
        return [(b.title, [loan.loan_id for loan in b.loans.loaded]) for b in books]

    await tour.step("E.14 Books WITH their loans from one query: load= (1 Query)", books_with_loans)


if __name__ == "__main__":
    run(scenario, table, create=CREATE)
