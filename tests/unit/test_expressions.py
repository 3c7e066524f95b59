"""Condition and update expressions with placeholders (``dynorm.core.expressions``)."""

import datetime
import enum
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from dynorm import Attr, Condition, ExpressionError
from dynorm.core.codec.converter import AttributeValue
from dynorm.core.codec.generic import encode_any
from dynorm.core.codec.model_codec import build_codec
from dynorm.core.expressions import ExpressionBuilder, extend_condition, grouped, render_update


class Status(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"


@attrs.define
class Ticket:
    name: str
    status: Status
    due: datetime.date
    count: int
    tags: list[str]
    labels: set[str]


CODEC = build_codec(Ticket)


def typed_encoder(name: str) -> Callable[[Any], AttributeValue]:
    return CODEC.encode_field.get(name, encode_any)


def render(condition: Condition, builder: ExpressionBuilder | None = None) -> tuple[str, Any]:
    builder = builder or ExpressionBuilder()
    return condition.render(builder), builder.params()


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (Attr("a") == 1, "#n0 = :v0"),
        (Attr("a") != 1, "#n0 <> :v0"),
        (Attr("a") < 1, "#n0 < :v0"),
        (Attr("a") <= 1, "#n0 <= :v0"),
        (Attr("a") > 1, "#n0 > :v0"),
        (Attr("a") >= 1, "#n0 >= :v0"),
    ],
)
def test_comparisons(condition: Condition, expected: str) -> None:
    assert render(condition) == (
        expected,
        {
            "ExpressionAttributeNames": {"#n0": "a"},
            "ExpressionAttributeValues": {":v0": {"N": "1"}},
        },
    )


def test_reserved_words_only_appear_as_placeholders() -> None:
    text, params = render((Attr("name") == "x") & (Attr("status") == "open"))
    assert "name" not in text
    assert "status" not in text
    assert params["ExpressionAttributeNames"] == {"#n0": "name", "#n1": "status"}


def test_and_or_not_parenthesize_each_part() -> None:
    condition = ~((Attr("a") == 1) | (Attr("b") == 2)) & Attr("c").exists()
    text, params = render(condition)
    assert text == "(NOT ((#n0 = :v0) OR (#n1 = :v1))) AND (attribute_exists(#n2))"
    assert params == {
        "ExpressionAttributeNames": {"#n0": "a", "#n1": "b", "#n2": "c"},
        "ExpressionAttributeValues": {":v0": {"N": "1"}, ":v1": {"N": "2"}},
    }


def test_a_name_used_twice_gets_one_placeholder_and_values_stay_apart() -> None:
    text, params = render((Attr("n") >= 1) & (Attr("n") <= 5))
    assert text == "(#n0 >= :v0) AND (#n0 <= :v1)"
    assert params["ExpressionAttributeNames"] == {"#n0": "n"}
    assert params["ExpressionAttributeValues"] == {":v0": {"N": "1"}, ":v1": {"N": "5"}}


def test_dotted_paths_reach_into_maps() -> None:
    text, params = render(Attr("address.city") == "Oslo")
    assert text == "#n0.#n1 = :v0"
    assert params["ExpressionAttributeNames"] == {"#n0": "address", "#n1": "city"}


@pytest.mark.parametrize(
    ("path", "expected", "names"),
    [
        ("tags[0]", "#n0[0]", {"#n0": "tags"}),
        ("addresses[1].city", "#n0[1].#n1", {"#n0": "addresses", "#n1": "city"}),
        ("grid[0][12]", "#n0[0][12]", {"#n0": "grid"}),
        ("a.b[3].a", "#n0.#n1[3].#n0", {"#n0": "a", "#n1": "b"}),
    ],
)
def test_brackets_reach_into_lists(path: str, expected: str, names: dict[str, str]) -> None:
    text, params = render(Attr(path).exists())
    assert text == f"attribute_exists({expected})"
    assert params["ExpressionAttributeNames"] == names


@pytest.mark.parametrize("path", ["", "tags[x]", "tags[", "tags]", "[0]", "a..b", "a.[0]", "a[0]b"])
def test_a_malformed_path_says_how_to_write_one(path: str) -> None:
    with pytest.raises(ExpressionError, match=r"a\.b.*a\[0\]"):
        render(Attr(path) == 1)


def test_between() -> None:
    assert render(Attr("n").between(1, 9)) == (
        "#n0 BETWEEN :v0 AND :v1",
        {
            "ExpressionAttributeNames": {"#n0": "n"},
            "ExpressionAttributeValues": {":v0": {"N": "1"}, ":v1": {"N": "9"}},
        },
    )


def test_is_in() -> None:
    text, params = render(Attr("s").is_in("a", "b", "c"))
    assert text == "#n0 IN (:v0, :v1, :v2)"
    assert params["ExpressionAttributeValues"] == {
        ":v0": {"S": "a"},
        ":v1": {"S": "b"},
        ":v2": {"S": "c"},
    }


def test_functions() -> None:
    assert render(Attr("a").exists())[0] == "attribute_exists(#n0)"
    assert render(Attr("a").not_exists())[0] == "attribute_not_exists(#n0)"
    text, params = render(Attr("sk").begins_with("USER#"))
    assert text == "begins_with(#n0, :v0)"
    assert params["ExpressionAttributeValues"] == {":v0": {"S": "USER#"}}
    text, params = render(Attr("tags").contains("x"))
    assert text == "contains(#n0, :v0)"
    assert params["ExpressionAttributeValues"] == {":v0": {"S": "x"}}


def test_values_are_encoded_as_their_field_is_typed() -> None:
    builder = ExpressionBuilder(encoder=typed_encoder)
    condition = (
        (Attr("status") == Status.OPEN)
        & (Attr("due") < datetime.date(2024, 5, 1))
        & Attr("count").between(1, 3)
        & Attr("status").is_in(Status.OPEN, Status.CLOSED)
    )
    condition.render(builder)
    assert builder.values == {
        ":v0": {"S": "open"},
        ":v1": {"S": "2024-05-01"},
        ":v2": {"N": "1"},
        ":v3": {"N": "3"},
        ":v4": {"S": "open"},
        ":v5": {"S": "closed"},
    }


def test_member_operands_are_encoded_generically() -> None:
    # contains() tests one element of a list field; the list field's encoder would be wrong.
    builder = ExpressionBuilder(encoder=typed_encoder)
    (Attr("tags").contains("urgent") & Attr("labels").contains("x")).render(builder)
    assert builder.values == {":v0": {"S": "urgent"}, ":v1": {"S": "x"}}


def test_nested_paths_go_to_the_encoder_whole() -> None:
    # The encoder follows the path through the field types (a model's does; see test_codec).
    calls: list[str] = []

    def encoder(name: str) -> Callable[[Any], AttributeValue]:
        calls.append(name)
        return encode_any

    builder = ExpressionBuilder(encoder=encoder)
    ((Attr("due.year") == 2024) & (Attr("counts[0]") == 1)).render(builder)
    assert calls == ["due.year", "counts[0]"]
    assert builder.values == {":v0": {"N": "2024"}, ":v1": {"N": "1"}}


def test_attr_comparison_builds_a_condition_not_a_bool() -> None:
    condition = Attr("a") == 1
    assert isinstance(condition, Condition)
    with pytest.raises(TypeError):
        hash(Attr("a"))


def test_conditions_compare_by_value() -> None:
    assert (Attr("a") == 1) == (Attr("a") == 1)
    assert (Attr("a") == 1) != (Attr("a") == 2)


def test_params_leave_out_empty_maps() -> None:
    builder = ExpressionBuilder()
    assert builder.params() == {}
    Attr("a").exists().render(builder)
    assert builder.params() == {"ExpressionAttributeNames": {"#n0": "a"}}


def test_render_update_all_clauses() -> None:
    builder = ExpressionBuilder(encoder=typed_encoder)
    expression = render_update(
        builder,
        set_values={"status": Status.CLOSED, "due": datetime.date(2024, 1, 2)},
        set_raw={"GSI1PK": {"S": "STATUS#closed"}},
        remove=["tags"],
        add={"count": 1, "labels": {"a"}},
    )
    assert expression == ("SET #n0 = :v0, #n1 = :v1, #n2 = :v2 REMOVE #n3 ADD #n4 :v3, #n5 :v4")
    assert builder.params() == {
        "ExpressionAttributeNames": {
            "#n0": "status",
            "#n1": "due",
            "#n2": "GSI1PK",
            "#n3": "tags",
            "#n4": "count",
            "#n5": "labels",
        },
        "ExpressionAttributeValues": {
            ":v0": {"S": "closed"},
            ":v1": {"S": "2024-01-02"},
            ":v2": {"S": "STATUS#closed"},
            ":v3": {"N": "1"},
            ":v4": {"SS": ["a"]},
        },
    }


def test_render_update_omits_empty_clauses() -> None:
    builder = ExpressionBuilder()
    assert render_update(builder, set_values={}, set_raw={}, remove=["a", "b"], add={}) == (
        "REMOVE #n0, #n1"
    )
    assert render_update(ExpressionBuilder(), set_values={}, set_raw={}, remove=(), add={}) == ""


def test_update_and_condition_share_placeholders() -> None:
    builder = ExpressionBuilder()
    update = render_update(builder, set_values={"a": 1}, set_raw={}, remove=(), add={})
    condition = (Attr("a") == 0).render(builder)
    assert update == "SET #n0 = :v0"
    assert condition == "#n0 = :v1"
    assert builder.values == {":v0": {"N": "1"}, ":v1": {"N": "0"}}


def test_is_in_needs_an_option() -> None:
    with pytest.raises(ExpressionError, match=r"Attr\('status'\)\.is_in\(\) needs at least one"):
        Attr("status").is_in()


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a = :v", "(a = :v)"),
        ("(a = :v OR attribute_not_exists(a))", "(a = :v OR attribute_not_exists(a))"),
        ("(a = :v) AND (b = :w)", "((a = :v) AND (b = :w))"),  # two groups, not one
        ("attribute_exists(a)", "(attribute_exists(a))"),
        ("NOT (a = :v)", "(NOT (a = :v))"),
    ],
)
def test_grouped_adds_parentheses_only_where_none_enclose(expression: str, expected: str) -> None:
    assert grouped(expression) == expected


def test_an_enclosed_condition_is_extended_without_redundant_parentheses() -> None:
    # A delete on a table with a type attribute arrives enclosed; DynamoDB refuses ((...)).
    params: dict[str, Any] = {
        "ConditionExpression": "(#n0 = :v0 OR attribute_not_exists(#n0))",
        "ExpressionAttributeNames": {"#n0": "entity"},
        "ExpressionAttributeValues": {":v0": {"S": "parent"}},
    }
    extend_condition(params, lambda b: f"attribute_exists({b.attribute('dynorm:cascade')})")
    assert params["ConditionExpression"] == (
        "(#n0 = :v0 OR attribute_not_exists(#n0)) AND (attribute_exists(#n1))"
    )
    assert params["ExpressionAttributeNames"] == {"#n0": "entity", "#n1": "dynorm:cascade"}
