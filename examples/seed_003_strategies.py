"""Seed 003 — the one-to-many strategies side by side: embedded, denormalized, hierarchical.

- 11.1 a Customer's addresses live in a map inside the customer item (bounded: 20 at most);
- 11.2 each Book carries a copy of its Author's birthdate, kept fresh when the Author changes;
- 11.5 Locations keyed ``<state>#<city>#<zip>`` are queryable at every level of the hierarchy.
"""

from __future__ import annotations

import datetime

import attrs
from common import Narrator, run

from dynorm import GSI, Denormalized, Embedded, HasMany, Table

table = Table("strategies", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
class Customer:
    customer_id: str
    name: str
    addresses = HasMany["Address"](via=Embedded(key="nickname", max_items=20))


@attrs.define
class Address:  # embedded children are plain attrs classes, not table models
    nickname: str
    street: str
    city: str


@table.model(pk="AUTHOR#{name}", sk="AUTHOR#{name}")
class Author:
    name: str
    birthdate: datetime.date
    books = HasMany["Book"](via=Denormalized(copy={"birthdate": "author_birthdate"}))


@table.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}", GSI1=("GENRE#{genre}", "BOOK#{title}"))
class Book:
    author_name: str
    title: str
    genre: str
    author_birthdate: datetime.date | None = None  # the copy


@table.model(pk="{country}", sk="{state}#{city}#{zip}")
class Location:
    country: str
    state: str
    city: str
    zip: str


async def embedded(tour: Narrator) -> None:
    db = tour.db
    customer = await db.put(Customer("c-1", "Ada"))
    await tour.step(
        "003.1 Add an address to the customer's map (1 UpdateItem, bound checked first)",
        lambda: db.add(customer, Customer.addresses, Address("home", "1 Main St", "Springfield")),
    )
    await db.add(customer, Customer.addresses, Address("work", "9 Dock Rd", "Shelbyville"))

    async def customer_with_addresses() -> object:
        found = await db.get(Customer, customer_id="c-1", load=[Customer.addresses])
        return {"customer": found, "addresses": found.addresses.loaded}

    await tour.step(
        "003.2 A customer and all addresses (the customer's GetItem)", customer_with_addresses
    )


async def denormalized(tour: Narrator) -> None:
    db = tour.db
    author = await db.put(Author("Ursula K. Le Guin", datetime.date(1929, 10, 21)))
    for title, genre in [("A Wizard of Earthsea", "fantasy"), ("The Dispossessed", "scifi")]:
        await db.add(author, Author.books, Book(author.name, title, genre))
    await tour.step(
        "003.3 Books by genre carry the author's birthdate (1 Query on GSI1, no second read)",
        lambda: db.query(Book, index="GSI1", genre="fantasy").all(),
    )

    async def author_and_books() -> object:
        found = await db.get(Author, name=author.name, load=[Author.books])
        return {"author": found, "books": found.books.loaded}

    await tour.step("003.4 An author and all books (1 Query)", author_and_books)
    fixed = attrs.evolve(author, birthdate=datetime.date(1929, 10, 22))
    await tour.step(
        "003.5 Correct the birthdate: read the copies, then author + copies in one transaction",
        lambda: db.put(fixed),
    )
    await tour.step(
        "003.6 The copies changed with it (1 Query)",
        lambda: db.query(Book, author_name=author.name).all(),
    )


async def hierarchy(tour: Narrator) -> None:
    db = tour.db
    await db.put_all(
        [
            Location("USA", "WA", "SEATTLE", "98101"),
            Location("USA", "WA", "SEATTLE", "98109"),
            Location("USA", "WA", "SEATTLEHEIGHTS", "98000"),
            Location("USA", "WA", "SPOKANE", "99201"),
            Location("USA", "NY", "NEW YORK", "10001"),
        ]
    )
    await tour.step(
        "003.7 All locations in a country (pk = USA)",
        lambda: db.query(Location, country="USA").all(),
    )
    await tour.step(
        "003.8 Locations in a state (begins_with(sk, 'WA#'))",
        lambda: db.query(Location, country="USA", state="WA").all(),
    )
    await tour.step(
        "003.9 Locations in a city (begins_with(sk, 'WA#SEATTLE#'): not SEATTLEHEIGHTS)",
        lambda: db.query(Location, country="USA", state="WA", city="SEATTLE").all(),
    )
    await tour.step(
        "003.10 One zip code (sk = 'WA#SEATTLE#98101')",
        lambda: db.query(Location, country="USA", state="WA", city="SEATTLE", zip="98101").all(),
    )


async def scenario(tour: Narrator) -> None:
    await embedded(tour)
    await denormalized(tour)
    await hierarchy(tour)


if __name__ == "__main__":
    run(scenario, table)
