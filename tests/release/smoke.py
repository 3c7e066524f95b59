"""What a user does first with an installed wheel, run from the clean venv ``check.py`` makes.

Only dynorm and its declared dependencies are installed there (no server, no pytest), so
everything here is pure: models declared, items decoded from DynamoDB's typed form, JSON
values round-tripped, requests planned. ``python smoke.py VERSION`` checks ``__version__``;
``dynorm design smoke.py:table`` (which check.py runs too) imports it for its ``table``.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.resources import files

import attrs

import dynorm
from dynorm import GSI, Embedded, HasMany, Index, Partition, Table
from dynorm.design import design

table = Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@attrs.define
class Tag:
    """A child stored inside its parent's item: a plain attrs class."""

    label: str


@table.model(pk="ORG#{org_name}", sk="METADATA#{org_name}")
class Org:
    """A parent with its users in its partition and its tags inside its own item."""

    org_name: str
    plan_type: str = "Free"
    users = HasMany["User"](via=Partition())
    projects = HasMany["Project"](via=Index("GSI1"))
    tags = HasMany[Tag](via=Embedded(key="label"))


@table.model(pk="ORG#{org_name}", sk="USER#{username}")
class User:
    """A child in its parent's partition."""

    org_name: str
    username: str
    age: int = 0


@table.model(pk="PROJECT#{pid}", sk="PROJECT#{pid}", GSI1=("ORG#{org_name}", "P#{pid}"))
class Project:
    """A child found through the index."""

    pid: str
    org_name: str


def check(condition: object, what: str) -> None:
    """Fail with ``what`` (not an assert: ``python -O`` would skip those)."""
    if not condition:
        raise SystemExit(f"release smoke test: {what}")


def main(version: str) -> None:
    """Use the installed package without a server; exit non-zero on the first surprise."""
    check(dynorm.__version__ == version, f"__version__ is {dynorm.__version__!r}, not {version!r}")
    check(files("dynorm").joinpath("py.typed").is_file(), "dynorm/py.typed is not installed")
    check(importlib.util.find_spec("pytest") is None, "pytest is installed: the venv is not clean")

    keys = {"pk": {"S": "ORG#acme"}, "sk": {"S": "USER#ann"}}
    record = {
        "eventName": "INSERT",
        "dynamodb": {"Keys": keys, "NewImage": {**keys, "age": {"N": "7"}}},
    }
    change = table.decode_record(record)
    check(change.new == User("acme", "ann", 7), f"decoded {change.new!r}")

    org = dynorm.from_jsonable(
        Org, {"org_name": "acme", "users": [{"org_name": "acme", "username": "ann"}]}
    )
    check(org.users.loaded == [User("acme", "ann")], f"from_jsonable gave {org.users.loaded!r}")
    check(
        dynorm.jsonable(org)["users"] == [{"org_name": "acme", "username": "ann", "age": 0}],
        "jsonable",
    )

    planned = {p.name: p for p in design(table).patterns}
    requests = planned["Org.projects"].requests
    check(any(r.startswith("Query on GSI1") for r in requests), f"Org.projects plans {requests}")
    # check.py reads where dynorm was imported from: the venv, not the source tree.
    print(f"dynorm {dynorm.__version__} from {dynorm.__file__}: smoke test passed")  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1])
