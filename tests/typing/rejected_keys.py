"""Key arguments the ``dynorm.mypy`` plugin rejects, each with the error mypy must raise.

As in ``rejected_models.py``, each rejected line carries ``# type: ignore[code]`` and mypy
strict reports an ignore that suppresses nothing (``warn_unused_ignores``), so a line that stops
being rejected fails `make typecheck`. pyright has no plugin: without one it accepts these
lines (docs/mapping.md, "Type checkers"), and this file does not ask it to report them.
"""

from __future__ import annotations

from dynorm import GSI, Database, Table, begins_with, between, gt

table = Table(
    "keys",
    pk="pk",
    sk="sk",
    indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK"), GSI("Ranked", pk="RankPK", sk="Rank")],
    key_types={"Rank": "N"},
)


@table.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    GSI1=("U#{username}", "AGE#{age:03d}"),
    Ranked=("R#{org_name}", "{rank}"),
)
class User:
    org_name: str
    username: str
    age: int = 0
    rank: int | None = None  # a sparse index's key: a number key attribute


async def accepted(db: Database) -> None:
    await db.get(User, org_name="A", username="B")
    await db.delete(User, org_name="A", username="B")
    await db.query(User, org_name="A", username=between("A", "C")).all()
    await db.query(User, "GSI1", username="B", age=between(1, 9)).all()


async def get_with_a_misspelled_key_field(db: Database) -> None:
    await db.get(User, org_name="A", usrname="B")  # type: ignore[call-arg]


async def get_with_a_key_value_of_another_type(db: Database) -> None:
    await db.get(User, org_name=1, username="B")  # type: ignore[arg-type]


async def get_without_a_key_field(db: Database) -> None:
    await db.get(User, org_name="A")  # type: ignore[call-arg]


async def delete_with_a_key_value_of_another_type(db: Database) -> None:
    await db.delete(User, org_name="A", username=2)  # type: ignore[call-overload]


async def query_with_a_field_outside_the_key(db: Database) -> None:
    await db.query(User, org_name="A", age=3).all()  # type: ignore[call-arg]


async def query_with_a_value_of_another_type(db: Database) -> None:
    await db.query(User, org_name=5).all()  # type: ignore[arg-type]


async def query_an_index_with_a_value_of_another_type(db: Database) -> None:
    await db.query(User, "GSI1", username="B", age="3").all()  # type: ignore[arg-type]


async def get_many_with_a_misspelled_key_field(db: Database) -> None:
    await db.get_many(User, [{"org_name": "A", "usrname": "B"}])  # type: ignore[call-arg]


async def get_many_pairs_with_a_key_value_of_another_type(db: Database) -> None:
    await db.get_many([(User, {"org_name": 1, "username": "B"})])  # type: ignore[arg-type]


async def transact_get_with_a_key_value_of_another_type(db: Database) -> None:
    await db.transact_get((User, {"org_name": "A", "username": 3}))  # type: ignore[arg-type]


async def accepted_dict_keys(db: Database) -> None:
    await db.get_many(User, [{"org_name": "A", "username": "B"}])
    await db.transact_get((User, {"org_name": "A", "username": "B"}))


async def query_with_a_bound_of_another_type(db: Database) -> None:
    await db.query(User, "GSI1", username="B", age=between(1, "9")).all()  # type: ignore[arg-type]


async def query_with_a_gt_bound_of_another_type(db: Database) -> None:
    await db.query(User, org_name="A", username=gt(5)).all()  # type: ignore[arg-type]


async def accepted_bounds(db: Database, window: tuple[int, int]) -> None:
    await db.query(User, org_name="A", username=gt("B")).all()
    await db.query(User, "GSI1", username="B", age=between(*window)).all()
    await db.query(User, "Ranked", org_name="A", rank=gt(2.5)).all()
    await db.query(User, org_name="A", username=begins_with("B")).all()
