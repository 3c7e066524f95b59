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


def test_the_exception_handlers_install_on_a_fastapi_app() -> None:
    from fastapi import FastAPI  # noqa: PLC0415 - the web framework, only here
    from starlette.applications import Starlette  # noqa: PLC0415

    from dynorm.web import install_exception_handlers  # noqa: PLC0415

    app = FastAPI()
    assert_type(install_exception_handlers(app), None)
    install_exception_handlers(Starlette(), retry_after=2)
    assert app.exception_handlers
