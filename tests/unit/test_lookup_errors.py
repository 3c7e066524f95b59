"""A lookup naming fields that are not key fields is a KeyTemplateError, planned without I/O.

``db.get``, ``db.query``, ``db.delete(Model, **key)`` and ``db.get_many`` all check the names
they are given against the model's key fields (``db.explain`` plans the same requests, so these
tests call it); the message names the model, the unknown names, the key fields and a close match.
"""

from __future__ import annotations

import pytest

from dynorm import DefinitionError, DynormError, KeyTemplateError
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import info_of, not_key_fields
from dynorm.mapping.writeplan import WritePlanner
from tests.seed_models import Org, User, app

explain = Explain(app, "app", WritePlanner(app, "app"))


def test_get_with_a_misspelt_key_field() -> None:
    with pytest.raises(KeyTemplateError) as info:
        explain.get(User, org_name="M", usrname="B")
    message = str(info.value)
    assert message.startswith("User is looked up by its key fields org_name, username;")
    assert "'usrname' (did you mean 'username'?) is not one" in message
    assert not isinstance(info.value, DefinitionError)


def test_get_with_load_checks_the_key_first() -> None:
    with pytest.raises(KeyTemplateError, match="'usrname'"):
        explain.get(User, org_name="M", usrname="B", load=[User.tickets])


def test_get_with_a_non_key_field() -> None:
    with pytest.raises(KeyTemplateError, match="'user_type' is not one") as info:
        explain.get(User, org_name="M", username="B", user_type="Admin")
    assert "did you mean" not in str(info.value)
    assert "declare an index whose key template holds the field" in str(info.value)


def test_several_unknown_names() -> None:
    with pytest.raises(KeyTemplateError, match=r"'nam' \(did you mean 'name'\?\), 'plan' are not"):
        explain.get(Org, nam="M", plan="Free")


def test_query_with_a_non_key_field() -> None:
    with pytest.raises(KeyTemplateError) as info:
        explain.query(User, org_name="M", user_type="Admin")
    assert str(info.value).startswith(
        "db.query(User) takes its key fields org_name, username; 'user_type' is not one."
    )


def test_query_on_an_index_names_the_index_and_its_fields() -> None:
    with pytest.raises(KeyTemplateError, match=r"db\.query\(User, index='GSI1'\) takes"):
        explain.query(User, index="GSI1", org_name="M", username="B", user_typ="x")


def test_query_with_a_misspelt_partition_field() -> None:
    with pytest.raises(KeyTemplateError, match="'orgname' \\(did you mean 'org_name'\\?\\)"):
        explain.query(User, orgname="M")


def test_query_without_the_partition_fields() -> None:
    with pytest.raises(KeyTemplateError) as info:
        explain.query(User)
    assert str(info.value) == (
        "db.query(User) needs every field of the partition key 'ORG#{org_name}': give org_name"
    )
    with pytest.raises(KeyTemplateError, match="give username"):
        explain.query(User, index="GSI1", org_name="M")


def test_delete_by_key_with_a_non_key_field() -> None:
    with pytest.raises(KeyTemplateError, match="'plan_type' is not one"):
        explain.delete(Org, name="M", plan_type="Free")
    with pytest.raises(KeyTemplateError, match="User needs username"):
        explain.delete(User, org_name="M")


def test_get_many_checks_every_key() -> None:
    info = info_of(User)
    info.check_key_values({"org_name": "M", "username": "B"})
    with pytest.raises(KeyTemplateError, match="'user' \\(did you mean 'username'\\?\\)"):
        info.check_key_values({"org_name": "M", "user": "B"})


def test_the_error_is_a_dynorm_and_a_value_error() -> None:
    error = not_key_fields("User", "User is looked up by", ["x"], ("org_name", "username"))
    assert isinstance(error, DynormError)
    assert isinstance(error, ValueError)
