# pyright: reportUnnecessaryTypeIgnoreComment=error
"""Lines both type checkers must reject, each with the error it must raise.

Each rejected line carries ``# type: ignore[code]``, which both checkers honour. mypy strict
reports an ignore that suppresses nothing, or that names another code than the error's
(``warn_unused_ignores``); pyright reports one that suppresses nothing
(``reportUnnecessaryTypeIgnoreComment``, turned on for this file on its first line). So a line
that stops being rejected fails `make typecheck`.
"""

from __future__ import annotations

import datetime

import dynorm
from dynorm import BelongsTo, Database, HasMany, Partition, Table

table = Table("rejected", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
class Org:
    name: str
    plan_type: str = "Free"
    users = HasMany["User"](via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
class User:
    org_name: str
    username: str
    joined: datetime.date | None = None
    org = BelongsTo(Org)


def misspelled_field() -> None:
    Org(nme="MICROSOFT")  # type: ignore[call-arg]


def missing_required_field() -> None:
    User(org_name="MICROSOFT")  # type: ignore[call-arg]


def wrong_field_type() -> None:
    Org(name=42)  # type: ignore[arg-type]


def wrong_type_in_an_optional_field() -> None:
    User("A", "B", joined="2026-01-01")  # type: ignore[arg-type]


def too_many_positional_arguments() -> None:
    Org("A", "Free", "extra")  # type: ignore[call-arg]


def children_are_of_the_target_type(org: Org) -> None:
    child: Org = org.users.loaded[0]  # type: ignore[assignment]
    del child


def the_parent_is_of_the_target_type(user: User) -> None:
    parent: User | None = user.org.loaded  # type: ignore[assignment]
    del parent


def no_such_attribute_on_a_model(org: Org) -> None:
    _ = org.nme  # type: ignore[attr-defined]


def the_parent_and_child_form_of_earlier_versions() -> None:
    # HasMany[Org, User] named the parent first; the parent is now bound by the class.
    _ = HasMany["Org", "User"]  # type: ignore[type-arg]


def relationships_are_not_constructor_arguments() -> None:
    Org(name="A", users=[])  # type: ignore[call-arg]


async def max_items_bounds_a_cascade_only(db: Database, org: Org) -> None:
    await db.delete(org, max_items=5)  # type: ignore[call-overload]


@table.model(pk="ORG#{org_name}", sk="TEAM#{team}")
class Team:
    org_name: str
    team: str


async def add_with_a_parent_of_another_model(db: Database, user: User) -> None:
    await db.add(user, Org.users, User("A", "B"))  # type: ignore[misc]


async def remove_with_a_parent_of_another_model(db: Database, team: Team) -> None:
    await db.remove(team, Org.users, User("A", "B"))  # type: ignore[misc]


async def add_a_child_of_another_model(db: Database, org: Org) -> None:
    await db.add(org, Org.users, Team("A", "B"))  # type: ignore[misc]


async def add_through_a_belongs_to(db: Database, user: User, org: Org) -> None:
    await db.add(user, User.org, org)  # type: ignore[arg-type]


async def load_a_relationship_of_another_model(db: Database) -> None:
    await db.get(User, org_name="A", username="B", load=[Org.users])  # type: ignore[misc]


async def load_an_option_of_another_model(db: Database) -> None:
    await db.query(User, org_name="A", load=[Org.users.limit(5)]).all()  # type: ignore[misc]


async def load_many_with_another_models_relationship(db: Database, users: list[User]) -> None:
    await db.load(users, Org.users)  # type: ignore[misc]


def explain_with_a_parent_of_another_model(db: Database, user: User) -> None:
    db.explain.add(user, Org.users, User("A", "B"))  # type: ignore[misc]


def a_default_of_another_type() -> None:
    @table.model(pk="EVENT#{event_id}", sk="EVENT#{event_id}")
    class Event:
        event_id: str
        at: datetime.datetime = dynorm.field(default="now")  # type: ignore[assignment]
        count: int = dynorm.field(name="Count", default=None)  # type: ignore[assignment]
        tags: list[str] = dynorm.field(factory=dict)  # type: ignore[arg-type]

    del Event


async def a_returned_dict_of_fields_is_not_any(db: Database, org: Org) -> None:
    changed = await db.update(org, set={"plan_type": "Pro"}, returns="updated_new")
    _: str = changed["plan_type"]  # type: ignore[assignment]


def capacity_is_not_any(db: Database) -> None:
    def listener(event: dynorm.RequestEvent) -> None:
        _ = event.consumed_capacity["TableName"]  # type: ignore[call-overload, index]

    del listener
