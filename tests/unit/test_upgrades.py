"""Model schema versions, pure: declaration checks, the upgrade chain, errors, the decoder gate."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from dynorm import GSI, CodecError, DefinitionError, Table, UpgradeError, field
from dynorm.core.errors import ConditionFailedError
from dynorm.core.expressions import ExpressionBuilder
from dynorm.core.upgrades import SchemaVersions, declare_versions, plain_item, typed_item
from dynorm.mapping.upgrading import stale_item, stale_items
from dynorm.tools.migrate_upgrade import Upgrade


def rename(item: dict[str, Any]) -> dict[str, Any]:
    item["full_name"] = item.pop("name")
    return item


def as_number(item: dict[str, Any]) -> dict[str, Any]:
    item["age"] = Decimal(item["age"])
    return item


def declared() -> tuple[Table, Any]:
    table = Table("t", pk="pk", sk="sk")

    @table.model(pk="U#{uid}", sk="U#{uid}", schema_version=3, upgrades={1: rename, 2: as_number})
    class User:
        uid: str
        full_name: str
        age: int

    return table, User


KEY = {"pk": {"S": "U#a"}, "sk": {"S": "U#a"}, "uid": {"S": "a"}}


def test_the_chain_runs_from_the_stored_version_to_the_current_one() -> None:
    table, user = declared()
    info = table.info(user)
    v1 = KEY | {"name": {"S": "Ada"}, "age": {"S": "36"}}
    v2 = KEY | {"full_name": {"S": "Ada"}, "age": {"S": "36"}, "_v": {"N": "2"}}
    v3 = KEY | {"full_name": {"S": "Ada"}, "age": {"N": "36"}, "_v": {"N": "3"}}
    for item in (v1, v1 | {"_v": {"N": "1"}}, v2, v3):
        assert info.decode(item) == user("a", "Ada", 36)
        assert info.codec.decode(item) == user("a", "Ada", 36)  # the generated decoder too
    assert info.upgraded(v1) == v3 | {"_v": {"N": "3"}}
    assert info.encode(user("a", "Ada", 36))["_v"] == {"N": "3"}


def test_a_current_item_is_not_upgraded() -> None:
    calls: list[int] = []

    def counted(item: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        return item

    table = Table("t", pk="pk", sk="sk")

    @table.model(pk="U#{uid}", sk="U#{uid}", schema_version=2, upgrades={1: counted})
    class User:
        uid: str

    info = table.info(User)
    info.decode(KEY | {"_v": {"N": "2"}})
    assert calls == []
    info.decode(KEY)
    assert calls == [1]


def test_an_item_newer_than_the_code_is_a_codec_error_naming_both_versions() -> None:
    table, user = declared()
    with pytest.raises(CodecError, match="version 7, but this code knows User up to version 3"):
        table.info(user).decode(KEY | {"_v": {"N": "7"}})


@pytest.mark.parametrize("stored", [{"S": "2"}, {"N": "0"}, {"N": "1.5"}, {"N": "-1"}])
def test_a_malformed_version_is_a_codec_error(stored: dict[str, str]) -> None:
    table, user = declared()
    with pytest.raises(CodecError, match=r"'_v' holds .* which is no schema version"):
        table.info(user).decode(KEY | {"_v": stored})


def test_an_upgrade_that_raises_or_returns_no_dict_is_an_upgrade_error() -> None:
    def boom(item: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("bad data")

    def nothing(item: dict[str, Any]) -> Any:
        return None

    for function, why in ((boom, "raised RuntimeError: bad data"), (nothing, "returned NoneType")):
        versions = SchemaVersions("User", 2, upgrades={1: function})
        with pytest.raises(UpgradeError, match=f"User: upgrading item k from schema version 1 "
                           f"to 2, upgrades\\[1\\] .*{why}") as caught:  # fmt: skip
            versions.upgrade(KEY, "k")
        assert caught.value.version == 1
        assert isinstance(caught.value, CodecError)
    with pytest.raises(UpgradeError) as chained:
        SchemaVersions("User", 2, upgrades={1: boom}).upgrade(KEY)
    assert isinstance(chained.value.__cause__, RuntimeError)


def test_an_upgrade_returning_what_dynamodb_cannot_hold_is_an_upgrade_error() -> None:
    versions = SchemaVersions("User", 2, upgrades={1: lambda item: {**item, "x": object()}})
    with pytest.raises(UpgradeError, match="cannot hold"):
        versions.upgrade(KEY)


def test_plain_values_round_trip() -> None:
    item: dict[str, dict[str, Any]] = {
        "s": {"S": "x"},
        "n": {"N": "1.50"},
        "b": {"B": "AQI="},
        "t": {"BOOL": True},
        "z": {"NULL": True},
        "l": {"L": [{"S": "a"}, {"N": "2"}]},
        "m": {"M": {"k": {"SS": ["a", "b"]}}},
        "ns": {"NS": ["1", "2"]},
        "bs": {"BS": [b"\x01"]},
    }
    plain = plain_item(item)
    assert plain == {
        "s": "x",
        "n": Decimal("1.50"),
        "b": b"\x01\x02",
        "t": True,
        "z": None,
        "l": ["a", Decimal(2)],
        "m": {"k": {"a", "b"}},
        "ns": {Decimal(1), Decimal(2)},
        "bs": {b"\x01"},
    }
    assert plain_item(typed_item(plain)) == plain


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"schema_version": 0}, "a whole number from 1; got 0"),
        ({"schema_version": "2"}, "a whole number from 1; got '2'"),
        ({"schema_version": 2}, r"needs an upgrade .* upgrades=\{1: v1_to_v2\}; got keys \[\]"),
        ({"schema_version": 2, "upgrades": {1: rename, 2: rename}}, r"got keys \[1, 2\]"),
        ({"schema_version": 3, "upgrades": {1: rename}}, r"\{1: v1_to_v2, 2: v2_to_v3\}"),
        ({"schema_version": 2, "upgrades": {1: "rename"}}, r"upgrades\[1\] is 'rename'"),
        ({"upgrades": {1: rename}}, "upgrades= needs schema_version="),
        ({"schema_attribute": "ver"}, "schema_attribute= needs schema_version="),
        ({"schema_version": 1, "schema_attribute": ""}, "takes an attribute name"),
    ],
)
def test_declaration_errors_say_what_to_change(options: dict[str, Any], message: str) -> None:
    table = Table("t", pk="pk", sk="sk")

    class Thing:
        tid: str

    with pytest.raises(DefinitionError, match=message):
        table.model(pk="T#{tid}", sk="T#{tid}", **options)(Thing)
    assert "Thing" not in table.models


def test_the_schema_attribute_may_not_be_another_attribute() -> None:
    table = Table("t", pk="pk", sk="sk", type_attribute="kind")

    class Clash:
        tid: str
        v: int = field(name="_v")

    with pytest.raises(DefinitionError, match="'_v', which is already field 'v''s attribute"):
        table.model(pk="T#{tid}", sk="T#{tid}", schema_version=1)(Clash)

    class OnKey:
        tid: str

    for attribute, what in (("pk", "a key attribute"), ("kind", "type attribute")):
        with pytest.raises(DefinitionError, match=what):
            table.model(pk="T#{tid}", sk="T#{tid}", schema_version=1, schema_attribute=attribute)(
                OnKey
            )

    @table.model(pk="T#{tid}", sk="T#{tid}", schema_version=1, schema_attribute="ver")
    class Renamed:
        tid: str
        v: int = field(name="_v", default=0)

    info = table.info(Renamed)
    assert info.encode(Renamed("a", 5))["ver"] == {"N": "1"}
    assert declare_versions("M", None, None, None, {}) is None


def test_version_one_takes_an_item_without_a_version_as_current() -> None:
    table = Table("t", pk="pk", sk="sk")

    @table.model(pk="U#{uid}", sk="U#{uid}", schema_version=1)
    class User:
        uid: str

    info = table.info(User)
    assert info.decode(KEY) == User("a")
    with pytest.raises(CodecError, match="schema version 2"):
        info.decode(KEY | {"_v": {"N": "2"}})


def test_the_update_guard_requires_the_current_version() -> None:
    builder = ExpressionBuilder()
    text = SchemaVersions("User", 2).guard("pk").render(builder)
    assert text == "#n0 = :v0"
    assert builder.values == {":v0": {"N": "2"}}
    upsert = SchemaVersions("User", 2).guard("pk", upsert=True).render(ExpressionBuilder())
    assert upsert == "#n0 = :v0 OR attribute_not_exists(#n1)"
    first = SchemaVersions("User", 1).guard("pk").render(ExpressionBuilder())
    assert first == "#n0 = :v0 OR attribute_not_exists(#n0)"


def test_a_refused_update_is_a_stale_item_error_only_for_another_version() -> None:
    table, user = declared()
    info = table.info(user)
    cause = ConditionFailedError("refused", code="ConditionalCheckFailedException")
    old = stale_item(info, KEY, KEY | {"_v": {"N": "2"}}, cause)
    assert old is not None
    assert (old.stored, old.current) == (2, 3)
    assert "upgrade_items(db, User)" in str(old)
    newer = stale_item(info, KEY, KEY | {"_v": {"N": "4"}}, cause)
    assert newer is not None
    assert "newer than this code's 3" in str(newer)
    assert stale_item(info, KEY, KEY | {"_v": {"N": "3"}}, cause) is None


def test_wire_bodies_are_parsed_whole_only_when_an_item_is_stale() -> None:
    found, user = declared()
    table: Table = found

    @table.model(pk="N#{nid}", sk="N#{nid}")
    class Note:
        nid: str

    info = table.info(user)
    stale = stale_items(table.classifier(None), [info, table.info(Note)])
    assert stale is not None
    assert not stale(KEY | {"_v": {"N": "3"}})
    assert stale(KEY | {"_v": {"N": "2"}})
    assert stale(KEY)  # version 1
    assert stale(KEY | {"_v": {"S": "x"}})  # malformed: the decoder says what is wrong
    assert not stale({"pk": {"S": "N#a"}, "sk": {"S": "N#a"}})  # an unversioned model's
    assert stale_items(table.classifier(None), [table.info(Note)]) is None


def test_a_wire_body_holding_an_older_item_is_parsed_whole() -> None:
    table, user = declared()
    parse = table.wire(None).parser("Query")
    current = KEY | {"full_name": {"S": "Ada"}, "age": {"N": "36"}, "_v": {"N": "3"}}
    old = KEY | {"name": {"S": "Ada"}, "age": {"S": "36"}, "other": {"S": "kept"}}
    typed = parse(json.dumps({"Items": [current], "Count": 1}).encode())["Items"]
    assert type(typed[0]) is not dict  # the typed structures: the fast path
    whole = parse(json.dumps({"Items": [current, old], "Count": 2}).encode())["Items"]
    assert whole == [current, old]  # plain dicts, every attribute kept
    info = table.info(user)
    assert [info.decode(i) for i in [*typed, *whole]] == [user("a", "Ada", 36)] * 3


def test_an_upgraded_item_keeps_what_the_model_lacks_and_drops_keys_it_no_longer_fills() -> None:
    table = Table("t", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="G1PK", sk="G1SK")])

    def drop_email(item: dict[str, Any]) -> dict[str, Any]:
        del item["email"]
        return item

    @table.model(
        pk="U#{uid}",
        sk="U#{uid}",
        GSI1=("EMAIL#{email}", "U#{uid}"),
        schema_version=2,
        upgrades={1: drop_email},
    )
    class User:
        uid: str
        email: str | None = None

    old = KEY | {
        "email": {"S": "a@x"},
        "G1PK": {"S": "EMAIL#a@x"},
        "G1SK": {"S": "U#a"},
        "extra": {"S": "kept"},
    }
    new = Upgrade(table.info(User)).upgraded(old)
    assert new == KEY | {"email": {"NULL": True}, "extra": {"S": "kept"}, "_v": {"N": "2"}}
    assert Upgrade(table.info(User)).upgraded(new) is None  # current: nothing to write
