"""The earlier typed style still checks: ``ClassVar[HasMany[User]]`` and ``@attrs.define`` stacked
under ``@table.model`` (the plugin leaves a class another attrs decorator builds to that one).

The docs show only the short style (tests/typing/test_api_types.py); this file keeps the other
one from breaking for users who wrote it. mypy strict runs over it in `make typecheck`.
"""

from __future__ import annotations

from typing import ClassVar, assert_type

import attrs

from dynorm import (
    BelongsTo,
    BelongsToRelation,
    Database,
    HasMany,
    HasManyRelation,
    Page,
    ParentLoader,
    Partition,
    Query,
    RelationLoader,
    Table,
)

table = Table("typing", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    plan: str = "free"
    n: int = 0
    tags: list[int] = attrs.Factory(list)
    s: set[str] = attrs.Factory(set)
    users: ClassVar[HasMany[User]] = HasMany("User", via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
@attrs.define
class User:
    org_name: str
    username: str
    org: ClassVar[BelongsTo[Org]] = BelongsTo(Org)


async def _typed_usage(db: Database) -> None:
    org = await db.get(Org, name="MICROSOFT", load=[Org.users])
    assert_type(org, Org)
    assert_type(org.users, RelationLoader[Org, User])
    assert_type(org.users.loaded, list[User])
    assert_type(await org.users.page(limit=10), Page[User])
    assert_type(await org.users.all(), list[User])
    async for user in org.users:
        assert_type(user, User)
        assert_type(user.org, ParentLoader[User, Org])
        assert_type(user.org.loaded, Org | None)
        assert_type(await user.org.get(), Org)
    assert_type(Org.users, HasManyRelation[User, Org])
    assert_type(User.org, BelongsToRelation[Org, User])
    assert_type(db.query(User, org_name="MICROSOFT"), Query[User])
    assert_type(await db.query(User, org_name="MICROSOFT").first(), User | None)
    assert_type(await db.get_many(Org, [{"name": "A"}]), list[Org | None])
    assert_type(await db.add(org, Org.users, User("MICROSOFT", "SATYA")), User)
    pair = await db.transact_get((Org, {"name": "A"}), (User, {"org_name": "A", "username": "B"}))
    assert_type(pair, tuple[Org | None, User | None])
    many = await db.transact_get(*[(Org, {"name": n}) for n in "ABCD"])
    assert_type(many, tuple[Org | None, ...])


def test_models_declare_with_typed_relationships() -> None:
    assert Org.users.target_name == "User"
    assert User.org.target_name == "Org"
    assert set(table.models) == {"Org", "User"}


async def _typed_updates(db: Database, org: Org) -> None:
    assert_type(await db.update(org, set={"plan": "A"}), Org)
    assert_type(await db.update(org, append={"tags": [1]}, upsert=True, returns="new"), Org)
    assert_type(await db.update(org, remove=["plan"], returns="old"), Org | None)
    assert_type(await db.update(org, add={"n": 1}, returns="updated_new"), dict[str, object])
    assert_type(await db.update(org, discard={"s": {"a"}}, returns=None), None)
    async with db.transaction() as tx:
        assert_type(tx.update(org, if_not_exists={"plan": "A"}, upsert=True), None)
