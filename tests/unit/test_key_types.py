"""Key values of the wrong type are refused as `put` refuses them (`check_key_types`)."""

from __future__ import annotations

import datetime

import pytest

from dynorm import CodecError, begins_with, between, gt
from dynorm.mapping.model import info_of
from tests.seed_models import Org, Ticket, User


def test_a_key_value_of_the_wrong_type_is_refused_naming_model_field_value_and_type() -> None:
    with pytest.raises(CodecError, match=r"^Org\.name \(str\): 123 is an int, not a str$"):
        info_of(Org).check_key_values({"name": 123})


def test_the_message_is_the_one_put_gives() -> None:
    with pytest.raises(CodecError) as from_key:
        info_of(Org).check_key_types({"name": 123})
    with pytest.raises(CodecError) as from_put:
        info_of(Org).encode(Org(name=123))  # type: ignore[arg-type]
    assert str(from_key.value) == str(from_put.value)


@pytest.mark.parametrize(
    "values",
    [
        {"org_name": "M", "username": "B"},
        {"org_name": "M", "username": gt("B")},
        {"org_name": "M", "username": between("A", "C")},
        {"org_name": "M", "username": begins_with("B")},
    ],
)
def test_values_of_the_field_types_pass(values: dict[str, object]) -> None:
    info_of(User).check_key_types(values)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"org_name": 1}, r"User\.org_name \(str\): 1 is an int"),
        ({"org_name": "M", "username": gt(5)}, r"User\.username \(str\): 5 is an int"),
        ({"org_name": "M", "username": between("A", 9)}, r"User\.username \(str\): 9 is an int"),
        ({"ticket_id": "t", "created": "2024"}, r"Ticket\.created \(datetime\): '2024' is a str"),
    ],
)
def test_a_value_or_a_bound_of_another_type_is_refused(
    values: dict[str, object], message: str
) -> None:
    info = info_of(Ticket) if "ticket_id" in values else info_of(User)
    with pytest.raises(CodecError, match=message):
        info.check_key_types(values)


def test_a_datetime_key_value_passes() -> None:
    info_of(Ticket).check_key_types({"created": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)})
