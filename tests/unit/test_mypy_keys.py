"""The mypy plugin's messages on key arguments, ``load=`` and update operations.

The hooks are dynorm/tools/mypy_keys.py and mypy_updates.py.

``tests/typing/rejected_keys.py`` proves under `make typecheck` that each line is rejected;
this runs mypy once on a small file to check what the messages say.
"""

from __future__ import annotations

from pathlib import Path

from mypy import api

SOURCE = """
from dynorm import BelongsTo, Database, HasMany, Partition, Table, between, gt

table = Table("t", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="ORG")
class Org:
    name: str
    plan: str = "free"
    users = HasMany["User"](via=Partition())


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
class User:
    org_name: str
    username: str
    org = BelongsTo(Org)


async def calls(db: Database) -> None:
    await db.get(User, org_name="A", usrname="B")
    await db.get(User, org_name=1, username="B")
    await db.get_many(User, [{"org_name": "A", "nme": "B"}])
    await db.transact_get((User, {"org_name": "A", "username": 3}))
    await db.get(User, org_name="A", username="B", load=[Org.users])
    await db.query(User, org_name="A", load=[Org.users.limit(3)]).all()
    await db.query(User, org_name="A", username=gt(3)).all()
    user = User(org_name="A", username="B")
    await db.update(user, set={"usrname": "C"}, append={"org_name": ["x"]})
    async with db.transaction() as tx:
        tx.update(Org(name="A"), add={"plan": 1})


@table.model(pk="S#{name}", sk="S#{points}")
class Score:
    name: str
    points: int


async def bounds(db: Database, window: tuple[int, int]) -> None:
    await db.query(Score, name="A", points=gt("1")).all()
    await db.query(Score, name="A", points=between(*window)).all()


from typing import Generic, TypeVar, Union

import attrs

V = TypeVar("V")


@attrs.define
class Box(Generic[V]):
    value: V


@table.model(pk="H#{name}", sk="H")
class Holder:
    name: str
    box: Box[int]


async def generic(db: Database, holder: Holder) -> None:
    await db.update(holder, set={"box.value": 1})
    await db.update(holder, set={"box.value": "x"})
    await db.update(holder, remove=["[0]"])


Json = Union[str, int, None, list["Json"], dict[str, "Json"]]  # stored through a hook


@table.model(pk="J#{name}", sk="J")
class Doc:
    name: str
    data: Json = None
    items: list[Json] = attrs.field(factory=list)


async def recursive(db: Database, doc: Doc) -> None:
    await db.update(doc, set={"data": {"a": [1, "x"]}, "items": [{"a": 1}]})


@table.model(pk="M#{name}", sk="M")
class Boxed(Generic[V]):
    name: str
    value: V


async def generic_model(db: Database, boxed: Boxed[int]) -> None:
    await db.update(boxed, set={"value": 1})
"""

EXPECTED = [
    (
        ':22: error: Unexpected keyword argument "usrname" for "get" of "Database"; did you mean '
        '"username"?'
    ),
    (
        ':23: error: Argument "org_name" to "get" of "Database" has incompatible type "int"; '
        'expected "str"'
    ),
    (
        ':24: error: db.get_many(User): "nme" is not a key field of User; its key fields are '
        "org_name, username"
    ),
    ':25: error: db.transact_get: key field "username" of User is "str", not "int"',
    (
        ":26: error: load=[Org.users]: a relationship of Org, not of User; load= takes "
        "relationships of User or their options"
    ),
    ":27: error: load=[Org.users]: a relationship of Org, not of User;",
    ':28: error: db.query(User): gt(...) on key field "username", which is "str", not "int"',
    (
        ':30: error: db.update(User): User has no field "usrname" (did you mean "username"?); '
        "update paths name fields: org_name, username"
    ),
    ':30: error: db.update(User): "org_name" is part of User\'s primary key; to change it,',
    (
        ':32: error: tx.update(Org): add= "plan" is "str"; add= adds numbers to numbers and '
        "sets to sets"
    ),
    # The field's own type, not the numbers a bound on it may be:
    ':42: error: db.query(Score): gt(...) on key field "points", which is "int", not "str"',
    # A type variable of a nested attrs class is read as the field's type binds it:
    ':66: error: db.update(Holder): set= "box.value" takes "int", not "str"',
    (
        ':67: error: db.update(Holder): "[0]" is not an update path; a path starts with a field '
        "of Holder (map members as a.b, list elements as a[0])"
    ),
]


def test_the_plugin_names_the_fields_and_the_relationship(tmp_path: Path) -> None:
    (tmp_path / "calls.py").write_text(SOURCE)
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = dynorm.mypy\nstrict = True\n")
    out, _, _ = api.run(
        [
            "--config-file",
            str(tmp_path / "mypy.ini"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(tmp_path / "calls.py"),
        ]
    )
    for message in EXPECTED:
        assert message in out, out
    assert ":43:" not in out, out  # between(*window): the bounds are the run time's to check
    assert ":65:" not in out, out
    assert ":81:" not in out, out  # a recursive alias, not taken apart forever (no crash)
    assert ":91:" not in out, out  # the value of a Boxed[int] is an int
