"""The mypy plugin's messages on key arguments and ``load=`` (dynorm/tools/mypy_keys.py).

``tests/typing/rejected_keys.py`` proves under `make typecheck` that each line is rejected;
this runs mypy once on a small file to check what the messages say.
"""

from __future__ import annotations

from pathlib import Path

from mypy import api

SOURCE = """
from dynorm import BelongsTo, Database, HasMany, Partition, Table

table = Table("t", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="ORG")
class Org:
    name: str
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
"""

EXPECTED = [
    (
        ':21: error: Unexpected keyword argument "usrname" for "get" of "Database"; did you mean '
        '"username"?'
    ),
    (
        ':22: error: Argument "org_name" to "get" of "Database" has incompatible type "int"; '
        'expected "str"'
    ),
    (
        ':23: error: db.get_many(User): "nme" is not a key field of User; its key fields are '
        "org_name, username"
    ),
    ':24: error: db.transact_get: key field "username" of User is "str", not "int"',
    (
        ":25: error: load=[Org.users]: a relationship of Org, not of User; load= takes "
        "relationships of User or their options"
    ),
    ":26: error: load=[Org.users]: a relationship of Org, not of User;",
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
