"""Key values of the wrong type are refused before sending, as ``put`` refuses them (issue 30)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dynorm import CodecError, Database, DefinitionError, between, ge, gt
from dynorm.testing import count_requests
from tests.seed_models import Org, User

pytestmark = pytest.mark.integration

Call = Callable[[Database], Awaitable[Any]]
WRONG = 123  # an int where the models' key fields are str


async def _put(db: Database) -> Any:
    return await db.put(Org(name=WRONG))  # type: ignore[arg-type]


async def _get(db: Database) -> Any:
    return await db.get(Org, name=WRONG)  # type: ignore[arg-type]


async def _get_loading(db: Database) -> Any:
    return await db.get(User, org_name="M", username=WRONG, load=[User.tickets])  # type: ignore[arg-type]


async def _query(db: Database) -> Any:
    return await db.query(User, org_name=WRONG).all()  # type: ignore[arg-type]


async def _query_sort(db: Database) -> Any:
    return await db.query(User, org_name="M", username=WRONG).all()  # type: ignore[arg-type]


async def _query_index(db: Database) -> Any:
    return await db.query(User, "GSI1", org_name="M", username=WRONG).first()  # type: ignore[arg-type]


async def _query_gt(db: Database) -> Any:
    return await db.query(User, org_name="M", username=gt(WRONG)).all()  # type: ignore[arg-type]


async def _query_between(db: Database) -> Any:
    return await db.query(User, org_name="M", username=between("A", WRONG)).count()  # type: ignore[arg-type]


async def _delete(db: Database) -> Any:
    return await db.delete(Org, name=WRONG)  # type: ignore[call-overload]


async def _get_many(db: Database) -> Any:
    return await db.get_many(Org, [{"name": "M"}, {"name": WRONG}])  # type: ignore[arg-type]


async def _get_many_pairs(db: Database) -> Any:
    return await db.get_many([(Org, {"name": "M"}), (User, {"org_name": "M", "username": WRONG})])  # type: ignore[arg-type]


async def _transact_get(db: Database) -> Any:
    return await db.transact_get((Org, {"name": "M"}), (Org, {"name": WRONG}))  # type: ignore[arg-type]


async def _loader_query(db: Database) -> Any:
    org = await db.get(Org, name="M")
    with count_requests(db) as log:
        try:
            return await org.users.query(username=ge(WRONG)).all()
        finally:
            assert len(log) == 0


async def _update_set(db: Database) -> Any:
    return await db.update(Org(name="M"), set={"plan_type": WRONG})  # type: ignore[arg-type]


async def _update_add(db: Database) -> Any:
    return await db.update(Org(name="M"), add={"plan_type": WRONG})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (_put, "Org.name (str): 123 is an int, not a str"),
        (_get, "Org.name (str): 123 is an int, not a str"),
        (_get_loading, "User.username (str): 123 is an int, not a str"),
        (_query, "User.org_name (str): 123 is an int, not a str"),
        (_query_sort, "User.username (str): 123 is an int, not a str"),
        (_query_index, "User.username (str): 123 is an int, not a str"),
        (_query_gt, "User.username (str): 123 is an int, not a str"),
        (_query_between, "User.username (str): 123 is an int, not a str"),
        (_delete, "Org.name (str): 123 is an int, not a str"),
        (_get_many, "Org.name (str): 123 is an int, not a str"),
        (_get_many_pairs, "User.username (str): 123 is an int, not a str"),
        (_transact_get, "Org.name (str): 123 is an int, not a str"),
        (_update_set, "Org.plan_type (str): 123 is an int, not a str"),
        (_update_add, "Org.plan_type (str): 123 is an int, not a str"),
    ],
)
async def test_a_key_value_of_the_wrong_type_is_refused_before_sending(
    db: Database, call: Call, message: str
) -> None:
    with count_requests(db) as log, pytest.raises(CodecError) as raised:
        await call(db)
    assert str(raised.value) == message
    assert len(log) == 0


async def test_a_loaders_query_refuses_a_bound_of_the_wrong_type_before_sending(
    db: Database,
) -> None:
    await db.put(Org(name="M"))
    with pytest.raises(CodecError, match=r"User\.username \(str\): 123 is an int, not a str"):
        await _loader_query(db)


async def test_values_of_the_right_types_still_find_the_item(db: Database) -> None:
    await db.put(User(org_name="M", username="B"))
    assert (await db.get(User, org_name="M", username="B")).username == "B"
    assert await db.query(User, org_name="M", username=between("A", "C")).count() == 1


async def test_a_load_of_another_models_relationship_names_it_before_sending(db: Database) -> None:
    with count_requests(db) as log, pytest.raises(DefinitionError) as raised:
        await db.get(User, org_name="M", username="B", load=[Org.users])  # type: ignore[misc]
    assert str(raised.value).startswith(
        "load=[Org.users]: Org.users is a relationship of Org, not of User; load= takes a list "
        "of relationships of User (User.org, User.tickets)"
    )
    assert len(log) == 0
