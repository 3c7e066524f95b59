"""Update operations the ``dynorm.mypy`` plugin rejects, each with the error mypy must raise.

As in ``rejected_keys.py``, each rejected line carries ``# type: ignore[code]``, and mypy strict
reports an ignore that suppresses nothing, so a line that stops being rejected fails
`make typecheck`. pyright has no plugin and accepts these lines; the run time refuses them
before sending (``tests/unit/test_plans.py``, ``tests/integration/test_key_types.py``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

import attrs

from dynorm import Database, Table

table = Table("updates", pk="pk", sk="sk")


@attrs.define
class Address:
    city: str
    zip: int = 0


@attrs.define
class Office(Address):
    floor: int = 0


@table.model(pk="U#{uid}", sk="U", version="version")
class User:
    uid: str
    age: int = 0
    score: Decimal = Decimal(0)
    nick: str | None = None
    tags: set[str] = attrs.field(factory=set)
    visits: list[int] = attrs.field(factory=list)
    address: Address | None = None
    prefs: dict[str, int] = attrs.field(factory=dict)
    kind: Literal["a", "b"] = "a"
    ratios: dict[str, float] = attrs.field(factory=dict)
    prices: set[Decimal] = attrs.field(factory=set)
    amounts: list[Decimal] = attrs.field(factory=list)
    pair: tuple[int, str] = (0, "")
    office: Office | None = None
    version: int = 0


async def accepted(db: Database, user: User) -> None:
    await db.update(user, set={"age": 3, "score": 1, "nick": None, "address.city": "Oslo"})
    await db.update(user, add={"age": 1, "score": Decimal("0.5"), "tags": {"new"}})
    await db.update(user, append={"visits": [1]}, remove=["nick"])
    await db.update(user, prepend={"visits": (0,)}, set={"prefs.dark": 1})
    await db.update(user, discard={"tags": {"old"}}, if_not_exists={"visits[0]": 0})
    async with db.transaction() as tx:
        tx.update(user, set={"age": 4})


async def accepted_as_a_constructor_takes_them(db: Database, user: User) -> None:
    # Each value is inferred as the field's type, as in User(kind="b"): a literal of a Literal
    # field, ints in a dict of floats, ints for Decimals inside sets and lists.
    await db.update(user, set={"kind": "b", "ratios": {"a": 1}, "prices": {1}, "amounts": [1]})
    await db.update(user, if_not_exists={"kind": "a"}, append={"amounts": [2]})
    await db.update(user, add={"prices": {2}}, discard={"tags": {"old"}})
    await db.update(user, discard={"prices": {Decimal(1)}})
    await db.update(user, set={"pair": [1, "a"], "ratios.b": 2})
    await db.update(user, set={"office.city": "Oslo", "office.floor": 2})


async def set_a_misspelled_field(db: Database, user: User) -> None:
    await db.update(user, set={"agee": 3})  # type: ignore[call-arg]


async def set_a_value_of_another_type(db: Database, user: User) -> None:
    await db.update(user, set={"age": "3"})  # type: ignore[arg-type]


async def set_a_key_field(db: Database, user: User) -> None:
    await db.update(user, set={"uid": "other"})  # type: ignore[misc]


async def set_the_version_dynorm_writes(db: Database, user: User) -> None:
    await db.update(user, set={"version": 7})  # type: ignore[misc]


async def set_a_path_without_a_field(db: Database, user: User) -> None:
    await db.update(user, set={"[0]": 3})  # type: ignore[call-arg]


async def remove_a_misspelled_field(db: Database, user: User) -> None:
    await db.update(user, remove=["nik"])  # type: ignore[call-arg]


async def add_to_a_text(db: Database, user: User) -> None:
    await db.update(user, add={"nick": "x"})  # type: ignore[arg-type]


async def add_a_set_of_another_type(db: Database, user: User) -> None:
    await db.update(user, add={"tags": {1}})  # type: ignore[arg-type]


async def append_to_a_set(db: Database, user: User) -> None:
    await db.update(user, append={"tags": ["x"]})  # type: ignore[arg-type]


async def append_elements_of_another_type(db: Database, user: User) -> None:
    await db.update(user, append={"visits": ["x"]})  # type: ignore[arg-type]


async def discard_from_a_list(db: Database, user: User) -> None:
    await db.update(user, discard={"visits": {1}})  # type: ignore[arg-type]


async def set_a_misspelled_nested_field(db: Database, user: User) -> None:
    await db.update(user, set={"address.cty": "Oslo"})  # type: ignore[call-arg]


async def set_a_value_outside_a_literal(db: Database, user: User) -> None:
    await db.update(user, set={"kind": "c"})  # type: ignore[arg-type]


async def set_a_dict_of_values_of_another_type(db: Database, user: User) -> None:
    await db.update(user, set={"ratios": {"a": "x"}})  # type: ignore[arg-type]


async def add_a_set_of_values_of_another_type(db: Database, user: User) -> None:
    await db.update(user, add={"prices": {"x"}})  # type: ignore[arg-type]


async def set_a_nested_value_of_another_type(db: Database, user: User) -> None:
    await db.update(user, set={"prefs.dark": "yes"})  # type: ignore[arg-type]


async def set_an_inherited_nested_value_of_another_type(db: Database, user: User) -> None:
    await db.update(user, set={"office.city": 5})  # type: ignore[arg-type]


async def set_in_a_transaction(db: Database, user: User) -> None:
    async with db.transaction() as tx:
        tx.update(user, if_not_exists={"age": "3"})  # type: ignore[arg-type]


def explain_an_update(db: Database, user: User) -> None:
    db.explain.update(user, set={"age": "3"})  # type: ignore[arg-type]
