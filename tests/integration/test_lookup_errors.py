"""Lookups naming fields that are not key fields fail with KeyTemplateError before sending."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dynorm import Database, KeyTemplateError
from dynorm.testing import count_requests
from tests.seed_models import Org, User

pytestmark = pytest.mark.integration

Call = Callable[[Database], Awaitable[Any]]


async def _get(db: Database) -> Any:
    return await db.get(User, org_name="M", usrname="B")  # type: ignore[call-arg]


async def _get_loading(db: Database) -> Any:
    return await db.get(User, org_name="M", usrname="B", load=[User.tickets])  # type: ignore[call-arg]


async def _query(db: Database) -> Any:
    return await db.query(User, org_name="M", user_type="Admin").all()  # type: ignore[call-arg]


async def _query_index(db: Database) -> Any:
    return await db.query(User, index="GSI1", org_name="M", usernam="B").first()  # type: ignore[call-arg]


async def _query_no_partition(db: Database) -> Any:
    return await db.query(User).all()


async def _delete(db: Database) -> Any:
    return await db.delete(Org, name="M", plan_type="Free")  # type: ignore[call-overload]


async def _get_many(db: Database) -> Any:
    return await db.get_many(User, [{"org_name": "M", "username": "A"}, {"org_name": "M"}])


async def _get_many_unknown(db: Database) -> Any:
    return await db.get_many(Org, [{"name": "M"}, {"nme": "N"}])  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (_get, r"'usrname' \(did you mean 'username'\?\) is not one"),
        (_get_loading, "'usrname'"),
        (_query, r"db\.query\(User\) takes its key fields org_name, username; 'user_type'"),
        (_query_index, r"'usernam' \(did you mean 'username'\?\)"),
        (_query_no_partition, "needs every field of the partition key 'ORG#{org_name}'"),
        (_delete, "Org is looked up by its key fields name; 'plan_type' is not one"),
        (_get_many, "User needs username"),
        (_get_many_unknown, r"'nme' \(did you mean 'name'\?\)"),
    ],
)
async def test_a_lookup_by_other_fields_is_refused_before_sending(
    db: Database, call: Call, message: str
) -> None:
    with count_requests(db) as log, pytest.raises(KeyTemplateError, match=message):
        await call(db)
    assert len(log) == 0
