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


def relationships_are_not_constructor_arguments() -> None:
    Org(name="A", users=[])  # type: ignore[call-arg]


async def max_items_bounds_a_cascade_only(db: Database, org: Org) -> None:
    await db.delete(org, max_items=5)  # type: ignore[call-overload]
