"""Per-model metadata: keys, items, and telling mixed results apart (``dynorm.mapping.model``)."""

import datetime
import enum

import attrs
import pytest

from dynorm import GSI, CodecError, KeyTemplateError, Table
from dynorm.mapping.model import ModelInfo, info_of

app = Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


class Kind(enum.Enum):
    BUG = "bug"
    TASK = "task"


@app.model(pk="ORG#{name}", sk="METADATA#{name}")
@attrs.define
class Org:
    name: str
    plan_type: str = "Free"


@app.model(
    pk="ORG#{org_name}",
    sk="USER#{username}",
    GSI1=("ORG#{org_name}#USER#{username}", "USER#{username}"),
)
@attrs.define
class User:
    org_name: str
    username: str
    user_type: str = "Member"


@app.model(
    pk="ORG#{org_name}",
    sk="ISSUE#{number:06d}",
    GSI1=("KIND#{kind}", "{opened}#{number:06d}"),
)
@attrs.define
class Issue:
    org_name: str
    number: int
    kind: Kind
    opened: datetime.date | None = None


ORG = info_of(Org)
USER = info_of(User)
ISSUE = info_of(Issue)


def test_info_is_typed_by_its_model() -> None:
    info: ModelInfo[User] = info_of(User)
    assert info.cls is User
    assert info.name == "User"
    assert info.table is app


def test_identity_fields_in_template_order() -> None:
    assert ORG.identity_fields() == ("name",)
    assert USER.identity_fields() == ("org_name", "username")
    assert ISSUE.identity_fields() == ("org_name", "number")


def test_primary_key() -> None:
    assert ISSUE.primary_key({"org_name": "M", "number": 7}) == {
        "pk": {"S": "ORG#M"},
        "sk": {"S": "ISSUE#000007"},
    }
    assert USER.key_of(User("M#1", "B")) == {"pk": {"S": "ORG#M%231"}, "sk": {"S": "USER#B"}}


def test_check_key_values() -> None:
    USER.check_key_values({"org_name": "M", "username": "B"})
    with pytest.raises(KeyTemplateError) as info:
        USER.check_key_values({"org_name": "M"})
    assert str(info.value) == "User needs username to address one item (got org_name)"
    with pytest.raises(KeyTemplateError, match="'user_type' is not one"):
        USER.check_key_values({"org_name": "M", "username": "B", "user_type": "x"})


def test_key_templates_for_an_index() -> None:
    pk, sk = USER.key_templates("GSI1")
    assert (pk.source, sk.source if sk else None) == (
        "ORG#{org_name}#USER#{username}",
        "USER#{username}",
    )
    assert USER.in_index("GSI1")
    assert not ORG.in_index("GSI1")


def test_encode_adds_every_key_attribute() -> None:
    item = ISSUE.encode(Issue("M", 42, Kind.BUG, datetime.date(2024, 3, 1)))
    assert item == {
        "org_name": {"S": "M"},
        "number": {"N": "42"},
        "kind": {"S": "bug"},
        "opened": {"S": "2024-03-01"},
        "pk": {"S": "ORG#M"},
        "sk": {"S": "ISSUE#000042"},
        "GSI1PK": {"S": "KIND#bug"},
        "GSI1SK": {"S": "2024-03-01#000042"},
    }


def test_encode_keeps_the_index_sparse() -> None:
    # GSI1SK needs `opened`, which is None: the item stays out of GSI1 with neither key part.
    item = ISSUE.encode(Issue("M", 42, Kind.BUG))
    assert "GSI1SK" not in item
    assert "GSI1PK" not in item
    assert item["opened"] == {"NULL": True}


def test_encode_refuses_none_in_the_primary_key() -> None:
    with pytest.raises(
        KeyTemplateError, match=r"User\.username is None, but it is part of the key"
    ):
        USER.encode(User("M", None))  # type: ignore[arg-type]


def test_encode_refuses_another_model() -> None:
    with pytest.raises(TypeError, match="expected a User, got Org"):
        USER.encode(Org("M"))  # type: ignore[arg-type]


def test_decode_round_trips() -> None:
    issue = Issue("M", 42, Kind.TASK, datetime.date(2024, 3, 1))
    assert ISSUE.decode(ISSUE.encode(issue)) == issue


def test_decode_reads_fields_kept_only_in_keys() -> None:
    # Tables written by other tools may store a field only inside a key.
    item = {
        "pk": {"S": "ORG#MICRO%23SOFT"},
        "sk": {"S": "ISSUE#000042"},
        "GSI1PK": {"S": "KIND#task"},
    }
    assert ISSUE.decode(item) == Issue("MICRO#SOFT", 42, Kind.TASK)


def test_decode_prefers_stored_attributes_over_key_text() -> None:
    item = {
        "pk": {"S": "ORG#M"},
        "sk": {"S": "USER#b"},
        "username": {"S": "B"},
        "user_type": {"S": "Admin"},
    }
    assert USER.decode(item) == User("M", "B", "Admin")


def test_decode_of_an_incomplete_item_names_its_key() -> None:
    with pytest.raises(CodecError, match=r"Issue: item pk='ORG#M', sk='ISSUE#000001' lacks"):
        ISSUE.decode({"pk": {"S": "ORG#M"}, "sk": {"S": "ISSUE#000001"}})


def test_decode_of_a_mangled_value_is_a_codec_error() -> None:
    item = ISSUE.encode(Issue("M", 1, Kind.BUG))
    item["kind"] = {"S": "feature"}
    with pytest.raises(CodecError, match="'feature' is not a value of Kind"):
        ISSUE.decode(item)


def test_matches_tells_mixed_results_apart() -> None:
    org = ORG.encode(Org("M"))
    user = USER.encode(User("M", "B"))
    issue = ISSUE.encode(Issue("M", 1, Kind.BUG, datetime.date(2024, 1, 1)))
    assert [info.name for info in (ORG, USER, ISSUE) if info.matches(org)] == ["Org"]
    assert [info.name for info in (ORG, USER, ISSUE) if info.matches(user)] == ["User"]
    assert [info.name for info in (ORG, USER, ISSUE) if info.matches(issue)] == ["Issue"]


def test_matches_in_an_index() -> None:
    user = USER.encode(User("M", "B"))
    assert USER.matches(user, "GSI1")
    assert not ORG.matches(ORG.encode(Org("M")), "GSI1")  # Org has no GSI1 templates
    assert not ISSUE.matches(user, "GSI1")


def test_matches_needs_string_keys_of_the_right_shape() -> None:
    assert not USER.matches({"pk": {"S": "ORG#M"}})
    assert not USER.matches({"pk": {"S": "ORG#M"}, "sk": {"N": "1"}})
    assert not USER.matches({"pk": {"S": "ORG#M#X"}, "sk": {"S": "USER#B"}})
    assert not ISSUE.matches({"pk": {"S": "ORG#M"}, "sk": {"S": "ISSUE#1#2"}})
