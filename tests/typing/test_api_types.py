"""What users see in their type checker, in the short declaration style of the README.

`make typecheck` runs mypy strict (with the `dynorm.mypy` plugin) and pyright (standard) over
this file: each `assert_type` must hold in both. The test functions also run under pytest, but
only declare models; the point is what the checkers infer.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any, assert_type

import dynorm
from dynorm import (
    Attr,
    BelongsTo,
    CascadeReport,
    Change,
    Database,
    HasMany,
    Page,
    ParentLoader,
    Partition,
    Query,
    RelationLoader,
    Request,
    Scan,
    Table,
)

table = Table("typing", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"](via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
class User:
    org_name: str
    username: str
    user_type: str = "Member"
    joined: datetime.date | None = dynorm.field(name="Joined", default=None)
    org = BelongsTo(Org)


@table.model(pk="CUSTOMER#{customer_id}", sk="ORDER#{order_id}")
class Order:
    customer_id: str
    order_id: str


@table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
class Customer:
    customer_id: str
    tags: list[str] = dynorm.field(factory=list)
    # A class target: the child type is inferred from it.
    orders = HasMany(Order, via=Partition())


def test_constructors_are_the_attrs_ones() -> None:
    assert_type(Org(name="MICROSOFT"), Org)
    assert_type(Org("MICROSOFT", "Enterprise"), Org)
    assert_type(User(org_name="A", username="B", joined=datetime.date(2026, 1, 1)), User)
    assert Customer("C1").tags == []


def test_the_descriptor_on_the_class() -> None:
    assert_type(Org.users, HasMany[User])
    assert_type(User.org, BelongsTo[Org])
    assert_type(Customer.orders, HasMany[Order])
    assert Org.users.target_name == "User"
    assert User.org.target_name == "Org"


async def _loaders(db: Database, org: Org, user: User) -> None:
    assert_type(org.users, RelationLoader[Org, User])
    assert_type(org.users.loaded, list[User])
    assert_type(await org.users.page(limit=10), Page[User])
    assert_type(await org.users.all(), list[User])
    assert_type(org.users.query(), Query[User])
    async for child in org.users:
        assert_type(child, User)
    assert_type(user.org, ParentLoader[User, Org])
    assert_type(user.org.loaded, Org | None)
    assert_type(await user.org.get(), Org)


async def _database(db: Database) -> None:
    org = await db.get(Org, name="MICROSOFT", load=[Org.users, Org.users.limit(5)])
    assert_type(org, Org)
    assert_type(await db.get_many(Org, [{"name": "A"}]), list[Org | None])
    assert_type(await db.load([org], Org.users), Sequence[Org])
    assert_type(await db.add(org, Org.users, User("MICROSOFT", "SATYA")), User)
    query = db.query(User, org_name="MICROSOFT")
    assert_type(query, Query[User])
    assert_type(query.filter(Attr("user_type") == "Admin"), Query[User])
    assert_type(await query.first(), User | None)
    assert_type(await query.count(), int)
    page = await query.page(limit=10)
    assert_type(page, Page[User])
    assert_type(page.cursor, str | None)
    for item in page:
        assert_type(item, User)
    assert_type(db.scan(User, segments=4), Scan[User])
    assert_type(db.scan(None), Scan[object])
    pair = await db.transact_get((Org, {"name": "A"}), (User, {"org_name": "A", "username": "B"}))
    assert_type(pair, tuple[Org | None, User | None])
    many = await db.transact_get(*[(Org, {"name": n}) for n in "ABCD"])
    assert_type(many, tuple[Org | None, ...])
    assert_type(db.explain.get(Org, name="A"), list[Request])
    assert_type(db.explain.put(Org(name="A")), list[Request])
    assert_type(db.explain.update(Org(name="A"), set={"plan_type": "Pro"}), list[Request])
    assert_type(db.explain.delete(Org, name="A", cascade=True), list[Request])
    assert_type(await db.delete(org), None)
    assert_type(await db.delete(Org, name="A"), None)
    assert_type(await db.delete(org, cascade=True), CascadeReport)
    assert_type(await db.delete(Org, name="A", cascade=True, max_items=None), CascadeReport)
    flag: bool = bool(org.name)
    assert_type(await db.delete(org, cascade=flag, max_items=50), CascadeReport | None)
    assert_type((await db.delete(org, cascade=True)).total, int)
    assert_type(db.explain.add(Org(name="A"), Org.users, User("A", "B")), list[Request])


def _streams(record: dict[str, Any]) -> None:
    change = table.decode_record(record)
    assert_type(change, Change[object])
    assert_type(change.of(User), Change[User] | None)
