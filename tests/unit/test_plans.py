"""Requests as plain values: reads (``core.requests``, ``plan_get``) and writes (``writes``)."""

from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dynorm import (
    GSI,
    Attr,
    DefinitionError,
    KeyTemplate,
    KeyTemplateError,
    Request,
    Table,
)
from dynorm.core.requests import CollectionRead, KeyRange, upper_bound
from dynorm.mapping.model import info_of
from dynorm.mapping.readplan import PageShare, normalize_options, plan_get, share_of_page
from dynorm.mapping.writes import UpdateOps, plan_delete, plan_put, plan_update
from tests.seed_models import Org, User

# Models of the write-plan tests, in a table of their own (the plans only see its name).
app = Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


@app.model(pk="AUTHOR#{author_name}", sk="BOOK#{title}", GSI1=("GENRE#{genre}", "BOOK#{title}"))
@attrs.define
class Book:
    author_name: str
    title: str
    genre: str | None = None
    copies: int = 0


@app.model(pk="PLAYER#{player}", sk="BOARD#{board}", GSI1=("BOARD#{board}", "{points:08d}"))
@attrs.define
class Score:
    player: str
    board: str
    points: int = 0


# -- upper_bound ---------------------------------------------------------------------------------


def test_upper_bound_increments_the_last_character() -> None:
    assert upper_bound("USER#") == "USER$"
    assert upper_bound("a") == "b"


def test_upper_bound_skips_maximal_characters() -> None:
    assert upper_bound("a\U0010ffff\U0010ffff") == "b"
    assert upper_bound("") == "\U0010ffff" * 4


def test_upper_bound_never_produces_a_surrogate() -> None:
    bound = upper_bound("a\ud7ff")
    assert bound == "a\ue000"
    bound.encode()  # DynamoDB receives UTF-8; a lone surrogate cannot be sent


@given(st.text(min_size=1), st.text())
def test_upper_bound_is_above_every_extension(prefix: str, rest: str) -> None:
    assume(prefix.rstrip("\U0010ffff"))
    bound = upper_bound(prefix)
    # DynamoDB orders strings by their UTF-8 bytes.
    assert (prefix + rest).encode() < bound.encode()
    assert bound.encode()


# -- KeyRange ------------------------------------------------------------------------------------

LOCATION = KeyTemplate("{state}#{city}#{zip}")


def test_key_range_equality_when_every_field_is_given() -> None:
    values = {"state": "WA", "city": "SEATTLE", "zip": "98101"}
    assert KeyRange.from_template(LOCATION, values) == KeyRange("eq", ("WA#SEATTLE#98101",))


def test_key_range_prefix_ends_at_a_boundary() -> None:
    assert KeyRange.from_template(LOCATION, {"state": "WA", "city": "SEATTLE"}) == KeyRange(
        "begins_with", ("WA#SEATTLE#",)
    )
    assert KeyRange.from_template(KeyTemplate("USER#{username}"), {}) == KeyRange(
        "begins_with", ("USER#",)
    )


def test_key_range_none_without_any_prefix() -> None:
    assert KeyRange.from_template(LOCATION, {}) is None


@pytest.mark.parametrize(
    ("key_range", "inside", "outside"),
    [
        (KeyRange("eq", ("USER#A",)), ["USER#A"], ["USER#", "USER#AB", ""]),
        (
            KeyRange("begins_with", ("USER#",)),
            ["USER#", "USER#A", "USER#\uffff"],
            ["USER", "TICKET#1", ""],
        ),
        (
            KeyRange("between", ("B", "D")),
            ["B", "C", "CZZZ", "D"],
            ["A", "DA", "", "\u00e9"],
        ),
    ],
)
def test_key_range_contains(key_range: KeyRange, inside: list[str], outside: list[str]) -> None:
    assert all(key_range.contains(v) for v in inside)
    assert not any(key_range.contains(v) for v in outside)


def test_key_range_contains_orders_as_dynamodb_does() -> None:
    # DynamoDB compares UTF-8 bytes; code point order is the same, even past the BMP.
    low, high = "\uffff", "\U0001f600"
    assert low.encode() < high.encode()
    assert KeyRange("between", (low, high)).contains("\U00010000")


def test_key_range_refuses_out_of_order_components() -> None:
    with pytest.raises(KeyTemplateError, match="give the components in order"):
        KeyRange.from_template(LOCATION, {"city": "SEATTLE"})


# -- CollectionRead ------------------------------------------------------------------------------


def read(**changes: Any) -> CollectionRead:
    base = CollectionRead(
        table_name="app",
        index=None,
        pk_attr="pk",
        pk_value="ORG#MICROSOFT",
        sk_attr="sk",
        key_attrs=("pk", "sk"),
    )
    return msgspec.structs.replace(base, **changes)


def test_a_read_shows_its_fields_but_not_its_parser() -> None:
    def parse(body: bytes) -> dict[str, Any]:
        return {}

    shown = repr(read(parse=parse))
    assert shown.startswith("CollectionRead(table_name='app', index=None, pk_attr='pk'")
    assert "key_attrs=('pk', 'sk')" in shown
    assert "parse" not in shown
    assert "parse" not in repr(Request("GetItem", {"TableName": "t"}, parse=parse))


def test_request_partition_only() -> None:
    assert read().request() == Request(
        "Query",
        {
            "TableName": "app",
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeNames": {"#pk": "pk"},
            "ExpressionAttributeValues": {":pk": {"S": "ORG#MICROSOFT"}},
        },
    )


def test_request_eq() -> None:
    assert read(range=KeyRange("eq", ("USER#A",))).request().params == {
        "TableName": "app",
        "KeyConditionExpression": "#pk = :pk AND #sk = :sk",
        "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
        "ExpressionAttributeValues": {":pk": {"S": "ORG#MICROSOFT"}, ":sk": {"S": "USER#A"}},
    }


def test_request_begins_with() -> None:
    assert read(range=KeyRange("begins_with", ("USER#",))).request().params == {
        "TableName": "app",
        "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :sk)",
        "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
        "ExpressionAttributeValues": {":pk": {"S": "ORG#MICROSOFT"}, ":sk": {"S": "USER#"}},
    }


def test_request_between_on_an_index_in_reverse() -> None:
    request = read(
        index="GSI1",
        pk_attr="GSI1PK",
        sk_attr="GSI1SK",
        range=KeyRange("between", ("TICKET#", "USER#B")),
        forward=False,
    ).request()
    assert request == Request(
        "Query",
        {
            "TableName": "app",
            "IndexName": "GSI1",
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :sk AND :sk2",
            "ExpressionAttributeNames": {"#pk": "GSI1PK", "#sk": "GSI1SK"},
            "ExpressionAttributeValues": {
                ":pk": {"S": "ORG#MICROSOFT"},
                ":sk": {"S": "TICKET#"},
                ":sk2": {"S": "USER#B"},
            },
            "ScanIndexForward": False,
        },
    )


def test_request_consistent() -> None:
    assert read(consistent=True).request().params["ConsistentRead"] is True
    assert "ConsistentRead" not in read().request().params


def test_range_is_ignored_without_a_sort_key() -> None:
    request = read(sk_attr=None, range=KeyRange("eq", ("x",))).request()
    assert request.params["KeyConditionExpression"] == "#pk = :pk"


def test_fingerprint_is_stable_and_ignores_the_table_name() -> None:
    a = read(range=KeyRange("begins_with", ("USER#",)))
    assert a.fingerprint() == read(range=KeyRange("begins_with", ("USER#",))).fingerprint()
    assert a.fingerprint() == msgspec.structs.replace(a, table_name="app-test-1234").fingerprint()
    assert len(a.fingerprint()) == 16
    int(a.fingerprint(), 16)


@pytest.mark.parametrize(
    "change",
    [
        {"pk_value": "ORG#APPLE"},
        {"range": KeyRange("begins_with", ("TICKET#",))},
        {"range": KeyRange("eq", ("USER#",))},
        {"range": None},
        {"forward": False},
        {"index": "GSI1"},
        {"models": ("Ticket",)},
    ],
)
def test_fingerprint_tells_queries_apart(change: dict[str, Any]) -> None:
    a = read(range=KeyRange("begins_with", ("USER#",)))
    assert a.fingerprint() != msgspec.structs.replace(a, **change).fingerprint()


def test_fingerprint_of_a_known_read() -> None:
    # Cursors outlive processes (and releases): the fingerprint depends on nothing but the read,
    # not on hash randomization. Changing it invalidates every cursor handed out (then bump
    # the cursor format's version in dynorm/core/cursor.py, so old ones get a clear error).
    assert read(models=("User",)).fingerprint() == "18aa5c215b3167fa"


def test_key_of_takes_only_key_attributes() -> None:
    item = {
        "pk": {"S": "ORG#X"},
        "sk": {"S": "USER#A"},
        "GSI1PK": {"S": "G"},
        "name": {"S": "A"},
    }
    assert read().key_of(item) == {"pk": {"S": "ORG#X"}, "sk": {"S": "USER#A"}}
    index_read = read(index="GSI1", key_attrs=("pk", "sk", "GSI1PK", "GSI1SK"))
    assert index_read.key_of(item) == {
        "pk": {"S": "ORG#X"},
        "sk": {"S": "USER#A"},
        "GSI1PK": {"S": "G"},
    }


def test_request_prints_readably() -> None:
    assert str(Request("GetItem", {"TableName": "t"})) == "GetItem {'TableName': 't'}"


# -- share_of_page: several relationships in one Query page ---------------------------------------


def sk(value: str) -> dict[str, Any]:
    return {"pk": {"S": "ISSUE#1"}, "sk": {"S": value}}


COMMENTS = [sk(f"COMMENT#{i:03d}") for i in range(6)]


def test_a_page_that_was_not_cut_short_has_everything() -> None:
    share = share_of_page(read(), "LABEL#", None, [], None, crowded=False)
    assert share == PageShare(keep=0, resume=None)
    share = share_of_page(read(), "COMMENT#", 10, COMMENTS, None, crowded=False)
    assert share == PageShare(keep=6, resume=None)


def test_a_limit_met_in_the_shared_page_resumes_after_its_last_child() -> None:
    cut = sk("COMMENT#200")
    assert share_of_page(read(), "COMMENT#", 5, COMMENTS, cut, crowded=False) == PageShare(
        keep=5, resume=COMMENTS[4]
    )
    # Exactly the limit, the page cut inside the range: more may follow.
    assert share_of_page(read(), "COMMENT#", 6, COMMENTS, cut, crowded=False) == PageShare(
        keep=6, resume=COMMENTS[5]
    )


def test_a_range_the_page_went_past_is_complete() -> None:
    past = sk("ISSUE#1")  # "ISSUE#" sorts after every "COMMENT#..." key
    assert share_of_page(read(), "COMMENT#", 50, COMMENTS, past, crowded=True) == PageShare(
        keep=6, resume=None
    )
    backwards = read(forward=False)
    assert share_of_page(backwards, "LABEL#", None, [], sk("COMMENT#9"), crowded=False) == (
        PageShare(keep=0, resume=None)
    )


def test_a_range_the_page_never_reached_gets_its_own_read() -> None:
    cut = sk("COMMENT#200")
    assert share_of_page(read(), "LABEL#", None, [], cut, crowded=False) == PageShare(
        keep=0, resume=None, more=True, start=None, want=None
    )
    assert share_of_page(read(), "LABEL#", 3, [], cut, crowded=False) == PageShare(
        keep=0, resume=None, more=True, start=None, want=3
    )
    backwards = read(forward=False)
    assert share_of_page(backwards, "COMMENT#", 2, [], sk("LABEL#1"), crowded=False).more


def test_a_limited_range_cut_short_reads_on_after_its_last_child() -> None:
    cut = sk("COMMENT#005")
    assert share_of_page(read(), "COMMENT#", 10, COMMENTS, cut, crowded=True) == PageShare(
        keep=6, resume=None, more=True, start=COMMENTS[5], want=4
    )


def test_an_unlimited_range_cut_short_reads_on_only_if_others_came_first() -> None:
    cut = sk("COMMENT#005")
    # Its children opened the page: the page was its own, as a load of it alone would be.
    assert share_of_page(read(), "COMMENT#", None, COMMENTS, cut, crowded=False) == PageShare(
        keep=6, resume=COMMENTS[5]
    )
    assert share_of_page(read(), "COMMENT#", None, COMMENTS, cut, crowded=True) == PageShare(
        keep=6, resume=None, more=True, start=COMMENTS[5], want=None
    )


def test_a_range_without_a_prefix_is_complete_only_at_the_end() -> None:
    cut = sk("ZZZ")
    assert share_of_page(read(), "", 10, COMMENTS, cut, crowded=False).more


# -- plan_get (seed access patterns) -------------------------------------------------------------


def test_org_with_users_is_one_query_carrying_the_org() -> None:
    info = info_of(Org)
    plan = plan_get(info, {"name": "MICROSOFT"}, normalize_options(info, [Org.users]), "app")
    assert plan.get_parent is None  # the org comes with the users
    assert plan.parent_key == {"pk": {"S": "ORG#MICROSOFT"}, "sk": {"S": "METADATA#MICROSOFT"}}
    assert plan.requests == [
        Request(
            "Query",
            {
                "TableName": "app",
                "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :sk AND :sk2",
                "ExpressionAttributeNames": {"#pk": "pk", "#sk": "sk"},
                "ExpressionAttributeValues": {
                    ":pk": {"S": "ORG#MICROSOFT"},
                    ":sk": {"S": "METADATA#MICROSOFT"},
                    ":sk2": {"S": "USER$"},
                },
            },
        )
    ]
    assert plan.after_parent == ()


def test_user_with_newest_tickets_is_one_reverse_query_on_the_index() -> None:
    info = info_of(User)
    plan = plan_get(
        info,
        {"org_name": "MICROSOFT", "username": "BILLGATES"},
        normalize_options(info, [User.tickets]),
        "app",
    )
    assert plan.get_parent is None  # the user is the first item read backwards
    assert plan.requests == [
        Request(
            "Query",
            {
                "TableName": "app",
                "IndexName": "GSI1",
                "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :sk AND :sk2",
                "ExpressionAttributeNames": {"#pk": "GSI1PK", "#sk": "GSI1SK"},
                "ExpressionAttributeValues": {
                    ":pk": {"S": "ORG#MICROSOFT#USER#BILLGATES"},
                    ":sk": {"S": "TICKET#"},
                    ":sk2": {"S": "USER#BILLGATES"},
                },
                "ScanIndexForward": False,
            },
        )
    ]
    (load,) = plan.collections
    # Resuming after a ticket needs the table key and the index key.
    assert load.read.key_attrs == ("pk", "sk", "GSI1PK", "GSI1SK")


def test_plain_get_is_one_get_item() -> None:
    plan = plan_get(info_of(Org), {"name": "MICROSOFT"}, [], "app")
    assert plan.requests == [
        Request(
            "GetItem",
            {
                "TableName": "app",
                "Key": {"pk": {"S": "ORG#MICROSOFT"}, "sk": {"S": "METADATA#MICROSOFT"}},
            },
        )
    ]


def test_consistent_get_reads_the_table_strongly() -> None:
    info = info_of(Org)
    plan = plan_get(
        info, {"name": "M"}, normalize_options(info, [Org.users]), "app", consistent=True
    )
    (request,) = plan.requests
    assert request.params["ConsistentRead"] is True
    assert (
        plan_get(info, {"name": "M"}, [], "app", consistent=True)
        .requests[0]
        .params["ConsistentRead"]
    )


def test_consistent_reads_are_never_asked_of_an_index() -> None:
    info = info_of(User)
    plan = plan_get(
        info,
        {"org_name": "M", "username": "B"},
        normalize_options(info, [User.tickets]),
        "app",
        consistent=True,
    )
    assert all("ConsistentRead" not in r.params for r in plan.requests if "IndexName" in r.params)


def test_get_needs_the_whole_key() -> None:
    with pytest.raises(KeyTemplateError, match="User needs username"):
        plan_get(info_of(User), {"org_name": "M"}, [], "app")
    with pytest.raises(KeyTemplateError, match="'plan_type' is not one"):
        plan_get(info_of(Org), {"name": "M", "plan_type": "Free"}, [], "app")


def test_load_takes_only_the_models_own_relationships() -> None:
    with pytest.raises(DefinitionError) as raised:
        normalize_options(info_of(Org), [User.tickets])
    assert str(raised.value) == (
        "load=[User.tickets]: User.tickets is a relationship of User, not of Org; load= takes a "
        "list of relationships of Org (Org.users) or their options, such as load=[Org.users]"
    )


@pytest.mark.parametrize(
    ("load", "message"),
    [
        (["users"], r"^load=\['users'\]: pass the relationship, load=\[Org\.users\];"),
        ([42], r"^load=\[42\]: 42 is not a relationship; load= takes a list of relationships"),
        (Org.users, r"^load=Org\.users: load= takes a list, load=\[Org\.users\];"),
        (Org.users.limit(3), r"^load=Org\.users: load= takes a list, load=\[Org\.users\];"),
        (
            [User.tickets.limit(2)],
            r"^load=\[User\.tickets\]: User\.tickets is a relationship of User",
        ),
    ],
)
def test_a_wrong_load_names_the_relationship_and_what_load_takes(load: Any, message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        normalize_options(info_of(Org), load)


# -- writes --------------------------------------------------------------------------------------


def test_put_writes_fields_and_every_key_attribute() -> None:
    request = plan_put(info_of(Book), Book("TOLKIEN", "The Hobbit", "Fantasy"), "app")
    assert request == Request(
        "PutItem",
        {
            "TableName": "app",
            "Item": {
                "author_name": {"S": "TOLKIEN"},
                "title": {"S": "The Hobbit"},
                "genre": {"S": "Fantasy"},
                "copies": {"N": "0"},
                "pk": {"S": "AUTHOR#TOLKIEN"},
                "sk": {"S": "BOOK#The Hobbit"},
                "GSI1PK": {"S": "GENRE#Fantasy"},
                "GSI1SK": {"S": "BOOK#The Hobbit"},
            },
        },
    )


def test_put_leaves_out_index_keys_whose_field_is_none() -> None:
    # No genre: the book stays out of GSI1, so neither of its key attributes is written.
    item = plan_put(info_of(Book), Book("TOLKIEN", "Notes"), "app").params["Item"]
    assert "GSI1PK" not in item
    assert "GSI1SK" not in item


def test_put_without_overwrite_requires_a_new_key() -> None:
    request = plan_put(info_of(Book), Book("A", "T"), "app", overwrite=False)
    assert request.params["ConditionExpression"] == "attribute_not_exists(#n0)"
    assert request.params["ExpressionAttributeNames"] == {"#n0": "pk"}


def test_put_with_condition() -> None:
    request = plan_put(
        info_of(Book), Book("A", "T"), "app", overwrite=False, condition=Attr("copies") < 5
    )
    assert request.params["ConditionExpression"] == "attribute_not_exists(#n0) AND (#n1 < :v0)"
    assert request.params["ExpressionAttributeNames"] == {"#n0": "pk", "#n1": "copies"}
    assert request.params["ExpressionAttributeValues"] == {":v0": {"N": "5"}}
    plain = plan_put(info_of(Book), Book("A", "T"), "app", condition=Attr("copies") < 5)
    assert plain.params["ConditionExpression"] == "#n0 < :v0"


def test_delete() -> None:
    key = info_of(Book).primary_key({"author_name": "A", "title": "T"})
    assert plan_delete(info_of(Book), key, "app") == Request(
        "DeleteItem",
        {"TableName": "app", "Key": {"pk": {"S": "AUTHOR#A"}, "sk": {"S": "BOOK#T"}}},
    )
    conditioned = plan_delete(info_of(Book), key, "app", condition=Attr("genre").not_exists())
    assert conditioned.params["ConditionExpression"] == "attribute_not_exists(#n0)"
    assert conditioned.params["ExpressionAttributeNames"] == {"#n0": "genre"}


BOOK = {"author_name": "TOLKIEN", "title": "The Hobbit", "genre": "Fantasy", "copies": 3}


def test_update_rewrites_index_keys_built_from_changed_fields() -> None:
    # GSI1SK's fields did not change, but an index entry needs both key attributes: a book
    # that was out of GSI1 (no genre) must come back into it whole.
    request = plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"genre": "Classic"}))
    assert request == Request(
        "UpdateItem",
        {
            "TableName": "app",
            "Key": {"pk": {"S": "AUTHOR#TOLKIEN"}, "sk": {"S": "BOOK#The Hobbit"}},
            "UpdateExpression": "SET #n0 = :v0, #n1 = :v1, #n2 = :v2",
            "ReturnValues": "ALL_NEW",
            "ConditionExpression": "attribute_exists(#n3)",
            "ExpressionAttributeNames": {
                "#n0": "genre",
                "#n1": "GSI1PK",
                "#n2": "GSI1SK",
                "#n3": "pk",
            },
            "ExpressionAttributeValues": {
                ":v0": {"S": "Classic"},
                ":v1": {"S": "GENRE#Classic"},
                ":v2": {"S": "BOOK#The Hobbit"},
            },
        },
    )


def test_update_removes_index_keys_whose_field_becomes_none() -> None:
    # The book leaves GSI1: both of its index key attributes go.
    request = plan_update(info_of(Book), BOOK, "app", UpdateOps(remove=["genre"]))
    assert request.params["UpdateExpression"] == "REMOVE #n0, #n1, #n2"
    assert request.params["ExpressionAttributeNames"] == {
        "#n0": "genre",
        "#n1": "GSI1PK",
        "#n2": "GSI1SK",
        "#n3": "pk",
    }
    set_none = plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"genre": None}))
    assert set_none.params["UpdateExpression"] == "SET #n0 = :v0 REMOVE #n1, #n2"
    assert set_none.params["ExpressionAttributeValues"] == {":v0": {"NULL": True}}


def test_update_of_unindexed_field_touches_no_key() -> None:
    request = plan_update(info_of(Book), BOOK, "app", UpdateOps(add={"copies": 2}))
    assert request.params["UpdateExpression"] == "ADD #n0 :v0"
    assert request.params["ExpressionAttributeNames"] == {"#n0": "copies", "#n1": "pk"}


def test_update_formats_index_keys_with_their_spec() -> None:
    current = {"player": "p", "board": "b", "points": 1}
    request = plan_update(info_of(Score), current, "app", UpdateOps(set={"points": 250}))
    names = {v: k for k, v in request.params["ExpressionAttributeNames"].items()}
    expression = request.params["UpdateExpression"]
    value = expression.split(f"{names['GSI1SK']} = ", 1)[1].split(",", 1)[0].split(" ", 1)[0]
    assert request.params["ExpressionAttributeValues"][value] == {"S": "00000250"}


def test_update_with_condition() -> None:
    request = plan_update(
        info_of(Book), BOOK, "app", UpdateOps(set={"copies": 4}), condition=Attr("copies") == 3
    )
    assert request.params["ConditionExpression"] == "attribute_exists(#n1) AND (#n0 = :v1)"


def test_update_refuses_key_fields() -> None:
    with pytest.raises(KeyTemplateError, match=r"Book\.title is part of the primary key"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"title": "New"}))
    with pytest.raises(KeyTemplateError, match="put a new item and delete the old one"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(remove=["author_name"]))


def test_update_refuses_unknown_fields() -> None:
    with pytest.raises(
        KeyTemplateError,
        match=r"Book has no field 'pages'; update paths name fields.*: author_name",
    ):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"pages": 3}))


def test_update_refuses_add_to_an_indexed_field() -> None:
    current = {"player": "p", "board": "b", "points": 1}
    with pytest.raises(KeyTemplateError, match="add= cannot change 'GSI1SK'"):
        plan_update(info_of(Score), current, "app", UpdateOps(add={"points": 1}))


def test_update_must_change_something() -> None:
    with pytest.raises(KeyTemplateError, match="changes nothing"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps())


def test_update_paths_inside_fields() -> None:
    request = plan_update(
        info_of(Book), BOOK, "app", UpdateOps(set={"copies": 2}, remove=["genre"])
    )
    assert request.operation == "UpdateItem"
    with pytest.raises(KeyTemplateError, match="'nope\\[0\\]'"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"nope[0]": 1}))
    with pytest.raises(KeyTemplateError, match="primary key"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"title.x": 1}))
    with pytest.raises(KeyTemplateError, match="GSI1PK is built from; set the whole 'genre'"):
        plan_update(info_of(Book), BOOK, "app", UpdateOps(set={"genre.x": 1}))
