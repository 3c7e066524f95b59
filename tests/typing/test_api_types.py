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
    BelongsToRelation,
    CascadeReport,
    Change,
    ConsumedCapacity,
    Database,
    HasMany,
    HasManyRelation,
    Index,
    LoadOption,
    Page,
    ParentLoader,
    Partition,
    Query,
    RelationLoader,
    Request,
    RequestEvent,
    Scan,
    Table,
)
from dynorm.core.events import Capacity
from dynorm.mapping.writes import Returns

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


ledger = Table("typing_ledger", pk="pk", sk="sk", indexes=[dynorm.GSI("GSI1", pk="g", sk="h")])


@ledger.model(pk="LEDGER#{customer_id}", sk="ENTRY#{entry_id}", GSI1=("C#{customer_id}", "{at}"))
class Entry:
    """A model of another table: its relationships are typed as any other's."""

    customer_id: str
    entry_id: str
    at: str
    customer = BelongsTo(Customer)


@table.model(pk="ACCOUNT#{customer_id}", sk="ACCOUNT#{customer_id}")
class Account:
    customer_id: str
    entries = HasMany["Entry"](via=Index("GSI1"))  # found in this module, on Table ledger


async def _across_tables(db: Database, entry: Entry, account: Account) -> None:
    assert_type(entry.customer.loaded, Customer | None)
    assert_type(account.entries.loaded, list[Entry])
    got = await db.get(Entry, customer_id="c", entry_id="e", load=[Entry.customer])
    assert_type(got.customer.loaded, Customer | None)
    found = await db.get(Account, customer_id="c", load=[Account.entries])
    assert_type(found.entries.loaded, list[Entry])


def test_constructors_are_the_attrs_ones() -> None:
    assert_type(Org(name="MICROSOFT"), Org)
    assert_type(Org("MICROSOFT", "Enterprise"), Org)
    assert_type(User(org_name="A", username="B", joined=datetime.date(2026, 1, 1)), User)
    assert Customer("C1").tags == []


def test_the_descriptor_on_the_class() -> None:
    # On the class, a relationship is bound to its owner: db.add and load= check it.
    assert_type(Org.users, HasManyRelation[User, Org])
    assert_type(User.org, BelongsToRelation[Org, User])
    assert_type(Customer.orders, HasManyRelation[Order, Customer])
    assert_type(Org.users.limit(5), LoadOption[Org])
    assert Org.users.target_name == "User"
    assert User.org.target_name == "Org"


async def _loaders(db: Database, org: Org, user: User) -> None:
    assert_type(org.users, RelationLoader[Org, User])
    assert_type(org.users.loaded, list[User])
    assert_type(await org.users.page(limit=10), Page[User])
    assert_type(await org.users.all(), list[User])
    assert_type(org.users.query(), Query[User])
    assert_type(await org.users.count(), int)
    assert_type(org.users.explain_count(), list[Request])
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
    assert_type(await db.get(User, org_name="A", username="B", load=[User.org]), User)
    assert_type(await db.query(Org, name="A", load=[Org.users.limit(3)]).all(), list[Org])
    assert_type(db.explain.get(Org, name="A"), list[Request])
    assert_type(db.explain.query(Org, name="A"), list[Request])
    assert_type(db.query(Org, name="A").explain(), list[Request])
    assert_type(db.explain.transact_get((Org, {"name": "A"})), list[Request])
    assert_type(db.explain.remove(org, Org.users, User("A", "B")), list[Request])
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


async def _updates(db: Database, org: Org, returns: Returns) -> None:
    assert_type(await db.update(org, set={"plan_type": "Pro"}), Org)
    assert_type(await db.update(org, set={"plan_type": "Pro"}, returns="old"), Org | None)
    assert_type(await db.update(org, set={"plan_type": "Pro"}, returns=None), None)
    changed = await db.update(org, set={"plan_type": "Pro"}, returns="updated_new")
    assert_type(changed, dict[str, object])
    assert_type(await db.update(org, returns=returns), Org | dict[str, object] | None)


def _events(event: RequestEvent) -> None:
    capacity = event.consumed_capacity
    assert_type(capacity, ConsumedCapacity | list[ConsumedCapacity] | None)
    if isinstance(capacity, dict):
        assert_type(capacity.get("CapacityUnits"), float | None)
        assert_type(capacity.get("GlobalSecondaryIndexes", {}), dict[str, Capacity])


def test_field_defaults_are_typed() -> None:
    stamps = Table("stamps", pk="pk", sk="sk")

    @stamps.model(pk="STAMP#{stamp_id}", sk="STAMP#{stamp_id}")
    class Stamp:
        stamp_id: str
        at: datetime.datetime = dynorm.field(default=datetime.datetime(2026, 1, 1))
        note: str | None = dynorm.field(name="Note", default=None)
        count: float = dynorm.field(default=0)
        tags: set[str] = dynorm.field(factory=set)
        size: int = dynorm.field(default="0", converter=int)

    assert_type(dynorm.field(default=1), int)
    assert_type(dynorm.field(factory=list[str]), list[str])
    assert Stamp("s").size == 0


def _streams(record: dict[str, Any]) -> None:
    change = table.decode_record(record)
    assert_type(change, Change[object])
    assert_type(change.of(User), Change[User] | None)
