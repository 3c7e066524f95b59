"""What type checkers infer for dynorm.jsonable and dynorm.from_jsonable (see test_api_types)."""

from __future__ import annotations

from typing import Any, assert_type

import dynorm
from dynorm import Table

table = Table("typing-web", pk="pk", sk="sk")


@table.model(pk="ORG#{name}", sk="METADATA#{name}")
class Org:
    name: str
    plan_type: str = "Free"


def test_from_jsonable_gives_the_model_and_jsonable_any_json_value() -> None:
    org = dynorm.from_jsonable(Org, {"name": "MICROSOFT"})
    assert_type(org, Org)
    assert_type(dynorm.jsonable(org), Any)
    assert dynorm.jsonable(org) == {"name": "MICROSOFT", "plan_type": "Free"}
