"""Sort key conditions, filters and scans as plain request values (no server)."""

from __future__ import annotations

import attrs
import msgspec
import pytest

from dynorm import (
    GSI,
    Attr,
    DefinitionError,
    ExpressionError,
    KeyTemplate,
    KeyTemplateError,
    Table,
    begins_with,
    between,
    ge,
    gt,
    le,
    lt,
)
from dynorm.core.ranges import SortRange, sort_range
from dynorm.core.requests import KeyRange, ScanRead
from dynorm.mapping.explain import Explain
from dynorm.mapping.reading import count_match, render_filter, view_of
from dynorm.mapping.writeplan import WritePlanner

table = Table("t", pk="PK", sk="SK", indexes=[GSI("GSI1", pk="GSI1-PK", sk="GSI1-SK")])


@table.model(pk="B#{book_id}", sk="L#{loan_id}", GSI1=("M#{member_id}", "{due}"))
@attrs.define
class Loan:
    book_id: str
    loan_id: str
    member_id: str
    due: str
    renewals: int = 0


@table.model(pk="B#{book_id}", sk="R#{n:06d}")
@attrs.define
class Review:
    book_id: str
    n: int
    stars: int = 0


@attrs.define
class LoanDue:
    due: str
    member_id: str


def explain() -> Explain:
    return Explain(table, "t", WritePlanner(table, "t"))


SK = KeyTemplate("A#{x}")
HIER = KeyTemplate("{state}#{city}#{zip}")


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        (ge("5"), SortRange(KeyRange("between", ("A#5", "A$")))),
        (gt("5"), SortRange(KeyRange("between", ("A#5", "A$")), excluded="A#5")),
        (le("5"), SortRange(KeyRange("between", ("A#", "A#5")))),
        (lt("5"), SortRange(KeyRange("between", ("A#", "A#5")), excluded="A#5")),
        (between("1", "3"), SortRange(KeyRange("between", ("A#1", "A#3")))),
        (begins_with("12"), SortRange(KeyRange("begins_with", ("A#12",)))),
        (begins_with("a#b"), SortRange(KeyRange("begins_with", ("A#a%23b",)))),
    ],
)
def test_markers_stay_inside_the_prefix(marker: object, expected: SortRange) -> None:
    assert sort_range(SK, {"x": marker}, "q") == expected


def test_without_a_prefix_dynamodb_compares_exactly() -> None:
    template = KeyTemplate("{due}")
    assert sort_range(template, {"due": gt("b")}, "q").range == KeyRange("gt", ("b",))
    assert sort_range(template, {"due": lt("b")}, "q") == SortRange(KeyRange("lt", ("b",)))


def test_format_spec_and_earlier_components() -> None:
    assert sort_range(KeyTemplate("R#{n:06d}"), {"n": gt(7)}, "q").range == KeyRange(
        "between", ("R#000007", "R$")
    )
    found = sort_range(HIER, {"state": "WA", "city": begins_with("SEA")}, "q")
    assert found.range == KeyRange("begins_with", ("WA#SEA",))
    found = sort_range(HIER, {"state": "WA", "city": "X", "zip": ge("9")}, "q")
    assert found.range == KeyRange("between", ("WA#X#9", "WA#X$"))


@pytest.mark.parametrize(
    ("components", "error", "message"),
    [
        ({"state": gt("A"), "city": "X"}, KeyTemplateError, "last sort key component given"),
        ({"state": "WA", "city": between("B", "A")}, ExpressionError, "swap"),
        ({"city": begins_with("S")}, KeyTemplateError, "give state"),
        ({"state": begins_with("W"), "city": begins_with("S")}, KeyTemplateError, "takes one"),
        ({"state": "W", "city": "S", "zip": between("9", "1")}, ExpressionError, "swap"),
    ],
)
def test_bad_conditions(components: dict[str, object], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sort_range(HIER, components, "q")


REVIEWS = KeyTemplate("REVIEW#{year}#{month:02d}#{review_id}")


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        # the bounds end at component boundaries: "#" opens a block, "$" (next after "#") ends it
        (
            {"year": 2025, "month": between(3, 5)},
            KeyRange("between", ("REVIEW#2025#03#", "REVIEW#2025#05$")),
        ),
        ({"year": gt(2023)}, KeyRange("between", ("REVIEW#2023$", "REVIEW$"))),
        ({"year": ge(2023)}, KeyRange("between", ("REVIEW#2023#", "REVIEW$"))),
        ({"year": lt(2023)}, KeyRange("between", ("REVIEW#", "REVIEW#2023"))),
        ({"year": le(2023)}, KeyRange("between", ("REVIEW#", "REVIEW#2023$"))),
        ({"year": 2025, "month": begins_with("1")}, KeyRange("begins_with", ("REVIEW#2025#1",))),
    ],
)
def test_ranges_on_an_inner_component(components: dict[str, object], expected: KeyRange) -> None:
    assert sort_range(REVIEWS, components, "q") == SortRange(expected)


@pytest.mark.parametrize(
    ("marker", "inside", "outside"),
    [
        (between("2025#1", "2025#1"), ["2025%231#z"], ["2025%2310#z", "2025%231"]),
        (gt("1"), ["10#z", "2#z", "1%23#z"], ["1#z", "0#z", "1#"]),
        (ge("1"), ["1#z", "1#", "10#z"], ["0#z", "09#z"]),
        (lt("10"), ["1#z", "0#z"], ["10#z", "100#z", "2#z"]),
        (le("1"), ["1#z", "0#z"], ["10#z", "2#z"]),
    ],
)
def test_inner_bounds_never_cross_a_component_boundary(
    marker: object, inside: list[str], outside: list[str]
) -> None:
    # No prefix before the component: the ranges use DynamoDB's own comparisons.
    found = sort_range(KeyTemplate("{a}#{b}"), {"a": marker}, "q").range
    assert found is not None
    assert [k for k in inside if not found.contains(k)] == []
    assert [k for k in outside if found.contains(k)] == []


def test_a_range_on_a_last_component_with_text_after_it_is_refused() -> None:
    with pytest.raises(KeyTemplateError, match="end the template with the placeholder"):
        sort_range(KeyTemplate("A#{x}X"), {"x": gt("1")}, "q")


def test_an_empty_bound_without_a_prefix_is_refused() -> None:
    with pytest.raises(ExpressionError, match="empty"):
        sort_range(KeyTemplate("{due}"), {"due": gt("")}, "q")


def test_begins_with_needs_text_or_bytes() -> None:
    with pytest.raises(ExpressionError, match="format a number first"):
        begins_with(5)  # type: ignore[arg-type]
    assert begins_with(bytearray(b"\x01")).values == (b"\x01",)


def test_begins_with_bytes_on_a_binary_key_is_a_binary_prefix() -> None:
    found = sort_range(KeyTemplate("{blob}"), {"blob": begins_with(b"\x01\xff")}, "q", "B")
    assert found.range == KeyRange("begins_with", ("Af8=",), "B")
    assert found.range.render()[1] == {":sk": {"B": b"\x01\xff"}}
    assert found.range.contains("Af8Q")  # b"\x01\xff\x10", as a cursor holds it
    assert not found.range.contains("AQA=")  # b"\x01\x00"


@pytest.mark.parametrize(
    ("kind", "marker", "message"),
    [
        ("B", begins_with("a"), "binary .* takes the bytes it starts with"),
        ("B", begins_with(b""), "at least one"),
        ("N", begins_with(b"\x01"), "number .* no prefix to begin with"),
        ("S", begins_with(b"\x01"), r"text \(S\), so begins_with takes the text"),
    ],
)
def test_a_prefix_of_the_wrong_kind_is_refused(kind: str, marker: object, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        sort_range(KeyTemplate("{blob}"), {"blob": marker}, "q", kind)  # type: ignore[arg-type]


def test_key_range_contains_matches_dynamodb() -> None:
    assert KeyRange("gt", ("b",)).contains("c")
    assert not KeyRange("gt", ("b",)).contains("b")
    assert KeyRange("lt", ("b",)).contains("a")
    assert not KeyRange("lt", ("b",)).contains("b")
    assert KeyRange("le", ("b",)).contains("b")
    assert KeyRange("ge", ("b",)).contains("b")
    assert KeyRange("between", ("a", "c")).contains("c")


def test_query_request_on_an_index_with_a_range() -> None:
    read = (
        explain()
        .query_read(
            Loan.__dynorm_model__,  # type: ignore[attr-defined]
            "GSI1",
            {"member_id": "7", "due": between("2026-01-01", "2026-01-31")},
        )
        .read
    )
    params = read.request().params
    assert params["KeyConditionExpression"] == "#pk = :pk AND #sk BETWEEN :sk AND :sk2"
    assert params["ExpressionAttributeNames"] == {"#pk": "GSI1-PK", "#sk": "GSI1-SK"}
    assert params["ExpressionAttributeValues"][":sk2"] == {"S": "2026-01-31"}


def test_partition_key_conditions_are_refused() -> None:
    with pytest.raises(KeyTemplateError, match="partition key"):
        explain().query(Loan, book_id=gt("1"))


def test_filter_renders_with_placeholders_and_refuses_key_attributes() -> None:
    info = Loan.__dynorm_model__  # type: ignore[attr-defined]
    rendered = render_filter(info, (Attr("renewals") > 1) & Attr("member_id").exists())
    assert rendered.text == "(#n0 > :v0) AND (attribute_exists(#n1))"
    assert rendered.names == {"#n0": "renewals", "#n1": "member_id"}
    assert rendered.values == {":v0": {"N": "1"}}
    with pytest.raises(ExpressionError, match="'SK'"):
        render_filter(info, Attr("SK") == "x", keys=("PK", "SK"))
    with pytest.raises(ExpressionError, match="takes a condition"):
        render_filter(info, "renewals > 1", keys=())  # type: ignore[arg-type]


def test_filter_projection_and_capacity_merge_into_the_query() -> None:
    info = Loan.__dynorm_model__  # type: ignore[attr-defined]
    read = explain().query_read(info, None, {"book_id": "1"}).read
    read = msgspec.structs.replace(
        read,
        filter=render_filter(info, Attr("renewals") == 2),
        projection=("PK", "SK", "renewals"),
        capacity=True,
    )
    params = read.request().params
    assert params["FilterExpression"] == "#n0 = :v0"
    assert params["ProjectionExpression"] == "#p0, #p1, #p2"
    assert params["ExpressionAttributeNames"]["#p2"] == "renewals"
    assert params["ReturnConsumedCapacity"] == "TOTAL"
    counting = read.count_request().params
    assert counting["Select"] == "COUNT"
    assert "ProjectionExpression" not in counting
    assert set(counting["ExpressionAttributeNames"]) == {"#pk", "#sk", "#n0"}


def test_count_is_exact_only_when_no_other_model_shares_the_range() -> None:
    info = Review.__dynorm_model__  # type: ignore[attr-defined]
    reviews = explain().query_read(info, None, {"book_id": "1"}).read
    assert count_match(info, reviews) is None
    above = explain().query_read(info, None, {"book_id": "1", "n": gt(3)}).read
    assert count_match(info, above) is not None  # the bound itself must not be counted


def test_scan_request() -> None:
    read = ScanRead("t", segment=2, segments=4, key_attrs=("PK", "SK"))
    assert read.request().params == {"TableName": "t", "Segment": 2, "TotalSegments": 4}
    assert read.count_request().params["Select"] == "COUNT"
    assert ScanRead("t").request().params == {"TableName": "t"}


def test_model_of_tells_items_apart() -> None:
    loan = {"PK": {"S": "B#1"}, "SK": {"S": "L#2"}}
    assert table.model_of(loan) is Loan.__dynorm_model__  # type: ignore[attr-defined]
    assert table.model_of({"PK": {"S": "B#1"}, "SK": {"S": "X"}}) is None


def test_views_are_checked_against_the_model() -> None:
    info = Loan.__dynorm_model__  # type: ignore[attr-defined]
    view = view_of(info, LoanDue)
    assert set(view.attributes) >= {"due", "member_id", "GSI1-PK", "GSI1-SK"}
    # a field kept only inside a key is parsed from it
    assert view.decode({"GSI1-PK": {"S": "M#7"}, "GSI1-SK": {"S": "2026"}}) == LoanDue("2026", "7")

    @attrs.define
    class Wrong:
        renewals: str

    @attrs.define
    class Unknown:
        title: str

    with pytest.raises(DefinitionError, match="model's type"):
        view_of(info, Wrong)
    with pytest.raises(DefinitionError, match="not a field of Loan"):
        view_of(info, Unknown)
    with pytest.raises(DefinitionError, match="attrs class"):
        view_of(info, int)
