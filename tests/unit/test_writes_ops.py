"""Request building for versions, timestamps, TTL and update operations (no server)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

import attrs
import pytest

from dynorm import Attr, CodecError, DefinitionError, ExpressionError, Table, field
from dynorm.core.requests import time_to_live
from dynorm.core.stamps import Stamps, VersionCheck, Write
from dynorm.mapping.explain import Explain
from dynorm.mapping.model import info_of
from dynorm.mapping.writeplan import WritePlanner
from dynorm.mapping.writes import (
    UpdateOps,
    plan_delete,
    plan_put,
    plan_update,
    return_values,
    transact_action,
)

table = Table("t", pk="pk", sk="sk")


@table.model(pk="D#{doc_id}", sk="D", version="version", ttl="expires", created="born")
@attrs.define
class Doc:
    doc_id: str
    tags: set[str] = attrs.Factory(set)
    notes: list[int] = attrs.Factory(list)
    version: int = 0
    expires: datetime.datetime | None = None
    born: datetime.datetime | None = None


INFO = info_of(Doc)
KEY = {"doc_id": "1"}


def _names(params: Mapping[str, Any]) -> dict[str, str]:
    names: dict[str, str] = params.get("ExpressionAttributeNames", {})
    return names


def _readable(params: Mapping[str, Any], expression: str) -> str:
    """An expression with its name placeholders replaced (values stay placeholders)."""
    text = str(params[expression])
    for placeholder, name in sorted(_names(params).items(), key=lambda p: -len(p[0])):
        text = text.replace(placeholder, name)
    return text


def test_a_new_versioned_put_requires_no_item_and_asks_for_the_stored_one() -> None:
    obj = WritePlanner(table, "t").stamped(Doc(doc_id="1"))
    assert obj.version == 1
    assert obj.born is not None
    request = plan_put(INFO, obj, "t", version=INFO.stamps.check("put", obj))
    assert _readable(request.params, "ConditionExpression") == "attribute_not_exists(pk)"
    assert request.params["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    assert request.retry == "verify"


def test_a_loaded_put_requires_the_version_read() -> None:
    obj = WritePlanner(table, "t").stamped(Doc(doc_id="1", version=4))
    request = plan_put(INFO, obj, "t", version=INFO.stamps.check("put", obj))
    assert request.params["Item"]["version"] == {"N": "5"}
    assert _readable(request.params, "ConditionExpression") == "version = :v0"
    assert request.params["ExpressionAttributeValues"][":v0"] == {"N": "4"}


def test_a_versioned_delete_conditions_on_the_version() -> None:
    request = plan_delete(
        INFO, INFO.primary_key(KEY), "t", version=VersionCheck("version", 3, "delete")
    )
    assert _readable(request.params, "ConditionExpression") == "version = :v0"
    unversioned = plan_delete(
        INFO, INFO.primary_key(KEY), "t", version=VersionCheck("version", None, "delete")
    )
    assert _readable(unversioned.params, "ConditionExpression") == "attribute_not_exists(version)"


def test_transaction_actions_drop_return_values() -> None:
    request = plan_delete(
        INFO, INFO.primary_key(KEY), "t", version=VersionCheck("version", 3, "delete")
    )
    ((_, params),) = transact_action(request).items()
    assert "ReturnValuesOnConditionCheckFailure" not in params


def test_list_and_set_operations_render_and_retry_with_a_token() -> None:
    ops = UpdateOps(append={"notes": [1, 2]}, prepend={}, discard={"tags": {"a"}})
    request = plan_update(INFO, KEY, "t", ops, version=VersionCheck("version", 2, "update"))
    expression = _readable(request.params, "UpdateExpression")
    assert "notes = list_append(if_not_exists(notes, :v0), :v1)" in expression
    assert "DELETE tags :v2" in expression
    values = request.params["ExpressionAttributeValues"]
    assert values[":v1"] == {"L": [{"N": "1"}, {"N": "2"}]}
    assert values[":v2"] == {"SS": ["a"]}
    condition = _readable(request.params, "ConditionExpression")
    assert condition.startswith("attribute_exists(pk) AND version = ")
    assert request.retry == "token"


def test_prepend_puts_the_elements_first() -> None:
    request = plan_update(INFO, KEY, "t", UpdateOps(prepend={"notes": [0]}))
    assert "notes = list_append(:v1, if_not_exists(notes, :v0))" in _readable(
        request.params, "UpdateExpression"
    )


def test_upsert_fills_untouched_attributes_where_missing_and_needs_no_item() -> None:
    item = INFO.encode(Doc(doc_id="1", notes=[7]))
    request = plan_update(
        INFO, KEY, "t", UpdateOps(add={"tags": {"x"}}), upsert=item, returns="ALL_OLD"
    )
    expression = _readable(request.params, "UpdateExpression")
    assert "notes = if_not_exists(notes, " in expression
    assert "doc_id = if_not_exists(doc_id, " in expression
    assert "tags = if_not_exists" not in expression  # changed by the update itself
    assert "ConditionExpression" not in request.params
    assert request.params["ReturnValues"] == "ALL_OLD"


def test_stamped_values_set_version_and_keep_created() -> None:
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    stamped, missing = INFO.stamps.update_values(Doc(doc_id="1", version=2), now)
    request = plan_update(
        INFO, KEY, "t", UpdateOps(set={"notes": [1]}), stamped={**stamped, **missing}
    )
    expression = _readable(request.params, "UpdateExpression")
    assert "version = :v" in expression
    assert "born = if_not_exists(born, :v" in expression


def test_ttl_is_epoch_seconds_and_naive_datetimes_are_refused() -> None:
    when = datetime.datetime(2030, 1, 1, 0, 0, 1, 999_999, tzinfo=datetime.UTC)
    item = INFO.encode(Doc(doc_id="1", expires=when))
    assert item["expires"] == {"N": str(int(when.timestamp()))}
    assert INFO.decode(item).expires == when.replace(microsecond=0)
    with pytest.raises(CodecError, match="naive datetime"):
        INFO.encode(Doc(doc_id="1", expires=datetime.datetime(2030, 1, 1)))
    with pytest.raises(CodecError, match="naive"):
        INFO.builder().typed_value("expires", datetime.datetime(2030, 1, 1))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"version": "nope"}, "names no field"),
        ({"version": "name"}, "needs an int field"),
        ({"ttl": "count"}, "needs a datetime field"),
        ({"created": "when", "updated": "when"}, "both created= and updated="),
        ({"version": "flag"}, "needs an int field"),
        ({"version": "count", "pk": "X#{count}"}, "no key template"),
    ],
)
def test_declaration_errors(options: dict[str, Any], message: str) -> None:
    local = Table("local", pk="pk", sk="sk")
    pk = options.pop("pk", "X#{name}")

    class Bad:
        name: str
        count: int = 0
        flag: bool = False
        when: datetime.datetime | None = None

    with pytest.raises(DefinitionError, match=message):
        local.model(pk=pk, sk="X", **options)(Bad)


def test_an_index_cannot_take_a_model_option_name() -> None:
    from dynorm import GSI  # noqa: PLC0415

    with pytest.raises(DefinitionError, match="cannot be named 'version'"):
        Table("t", indexes=[GSI("version", pk="a")])


def test_update_operations_refuse_managed_fields() -> None:
    with pytest.raises(ExpressionError, match="written by dynorm"):
        plan_update(INFO, KEY, "t", UpdateOps(if_not_exists={"born": None}))


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ({"add": {"tags": {"a"}}, "discard": {"tags": {"b"}}}, "changes 'tags' twice"),
        ({"append": {"notes": [1]}, "prepend": {"notes": [0]}}, "changes 'notes' twice"),
        ({"set": {"notes": [1]}, "remove": ["notes"]}, "changes 'notes' twice"),
        (
            {"set": {"notes[0]": 1}, "append": {"notes": [2]}},
            "'notes[0]' and 'notes', which overlap",
        ),
    ],
)
def test_two_changes_of_one_path_are_refused_before_sending(
    ops: dict[str, Any], message: str
) -> None:
    # Two options naming one path once collapsed into one, and DynamoDB answered with a
    # ValidationError ("Two document paths overlap") instead of dynorm refusing first.
    with pytest.raises(ExpressionError, match=re.escape(message)):
        plan_update(INFO, KEY, "t", UpdateOps(**ops))


# -- one UpdateOps value -------------------------------------------------------------------------


def test_update_ops_copy_the_callers_mappings_and_refuse_wrong_shapes() -> None:
    changes: dict[str, object] = {"notes": [1]}
    ops = UpdateOps(set=changes, remove=["tags"], add=None)
    changes["doc_id"] = "2"  # the caller's dict changing later does not change the update
    assert ops.set == {"notes": [1]}
    assert ops.add == {}
    assert ops.remove == ("tags",)
    assert ops.paths() == ["notes", "tags"]
    with pytest.raises(ExpressionError, match=r"remove=\['tags'\]"):
        UpdateOps(remove="tags")
    with pytest.raises(ExpressionError, match="give a dict"):
        UpdateOps(set=[("notes", [1])])  # type: ignore[arg-type]


def test_returns_maps_to_return_values_and_refuses_anything_else() -> None:
    ops = UpdateOps(set={"notes": [1]})
    assert return_values("updated_new", ops) == "UPDATED_NEW"
    assert return_values(None, ops) == "NONE"
    # A path inside a field asks for whole items, which decode as the field's type.
    assert return_values("updated_old", UpdateOps(set={"notes[0]": 1})) == "ALL_OLD"
    with pytest.raises(ExpressionError, match="returns='all'"):
        return_values("all", ops)


# -- version rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("write", "version", "expected", "new"),
    [("put", 1, None, True), ("put", 5, 4, False), ("update", 0, None, False)],
)
def test_the_check_of_each_write(
    write: Write, version: int, expected: int | None, new: bool
) -> None:
    check = INFO.stamps.check(write, Doc(doc_id="1", version=version))
    assert check == VersionCheck("version", expected, write)
    assert check.new is new
    assert check.key_requirement(None) == ("attribute_not_exists" if new else None)
    assert (check.condition() is None) is new


def test_a_refusal_tells_a_conflict_from_the_callers_condition() -> None:
    read = VersionCheck("version", 3, "update")
    assert read.refusal(exists=True, stored=3) is None  # the caller's condition failed
    assert "3 read, 4 stored" in str(read.refusal(exists=True, stored=4))
    assert read.refusal(exists=False, stored=None) == "was deleted since it was read"
    new = VersionCheck("version", None, "put")
    assert "already exists (version 2)" in str(new.refusal(exists=True, stored=2))


def test_a_condition_check_in_a_transaction_carries_no_version() -> None:
    doc = Doc(doc_id="1", version=3)
    request = WritePlanner(table, "t").check_request(doc, Attr("notes") == [1])
    assert request.operation == "ConditionCheck"
    assert _readable(request.params, "ConditionExpression") == "notes = :v0"
    assert "ReturnValuesOnConditionCheckFailure" not in request.params


@attrs.frozen
class _Frozen:
    version: int = 1


def test_stamps_are_kept_on_mutable_objects_and_frozen_ones_are_left() -> None:
    doc = Doc(doc_id="1", version=1)
    INFO.stamps.keep(doc, {"version": 2, "born": None})
    assert doc.version == 2
    assert doc.born is None
    frozen = _Frozen()
    Stamps(version="version").keep(frozen, {"version": 2})
    assert frozen.version == 1


# -- type attribute and time to live ---------------------------------------------------------------

typed = Table("typed", pk="pk", sk="sk", type_attribute="EntityType")


@typed.model(pk="C#{code}", sk="C", entity="coupon", ttl="ends")
@attrs.define
class Coupon:
    code: str
    uses: int = 0
    ends: datetime.datetime | None = field(name="Expires", default=None)


def test_an_update_leaves_the_type_attribute_and_an_upsert_writes_it_where_missing() -> None:
    info = info_of(Coupon)
    plain = plan_update(info, {"code": "c"}, "t", UpdateOps(add={"uses": 1}))
    assert "EntityType" not in _names(plain.params).values()
    upsert = plan_update(
        info, {"code": "c"}, "t", UpdateOps(add={"uses": 1}), upsert=info.encode(Coupon("c"))
    )
    expression = _readable(upsert.params, "UpdateExpression")
    assert "EntityType = if_not_exists(EntityType, " in expression


def test_time_to_live_is_enabled_on_the_stored_attribute_of_one_per_table() -> None:
    request = time_to_live("t", {"Coupon": info_of(Coupon).codec.attributes["ends"]})
    assert request is not None
    assert request.params["TimeToLiveSpecification"] == {
        "Enabled": True,
        "AttributeName": "Expires",
    }
    assert time_to_live("t", {}) is None
    with pytest.raises(DefinitionError, match="Coupon: Expires, Doc: expires"):
        time_to_live("t", {"Coupon": "Expires", "Doc": "expires"})


def test_remove_of_a_field_without_a_default_is_refused_before_sending() -> None:
    # remove= leaves the attribute absent, which reads back as the field's default: a field
    # without one (not a set, not held in a key) would make the item unreadable.
    shop = Table("shop", pk="pk", sk="sk")

    @shop.model(pk="CART#{cart_id}", sk="CART#{cart_id}")
    class Cart:
        cart_id: str
        owner: str
        views: int = 0
        coupon: str | None = None
        tags: set[str] = field(factory=set)

    explain = Explain(shop, "shop", WritePlanner(shop, "shop"))
    cart = Cart("c", "ann")
    with pytest.raises(ExpressionError, match=r"Cart\.owner has no default.*set= a value"):
        explain.update(cart, remove=["owner"])
    for removable in ("views", "coupon", "tags"):  # read back as 0, None, set()
        (request,) = explain.update(cart, remove=[removable])
        assert request.params["UpdateExpression"] == "REMOVE #n0"
