"""Stored attribute names, key-only fields and the type attribute: pure, no server."""

from __future__ import annotations

import datetime

import attrs
import pytest

import dynorm
from dynorm import GSI, Attr, DefinitionError, Embedded, ExpressionError, HasMany, Table
from dynorm.mapping.model import info_of
from dynorm.mapping.writes import UpdateOps, plan_update


@attrs.define
class Shelf:
    room: str = dynorm.field(name="Room")
    level: int = dynorm.field(name="Shelf Level", default=0)


def library() -> Table:
    return Table(
        "Library",
        pk="PK",
        sk="SK",
        indexes=[GSI("GSI1", pk="GSI1-PK", sk="GSI1-SK")],
        type_attribute="ItemType",
    )


lib = library()


@lib.model(pk="b#{book_id}", sk="l#{loan_id}", GSI1=("m#{member_id}", "{due}"), entity="loan")
@attrs.define
class Loan:
    book_id: str
    loan_id: str
    member_id: str = dynorm.field(key_only=True)
    due: str = dynorm.field(key_only=True)
    renewals: int = dynorm.field(name="Renewals", default=0)
    shelf: Shelf | None = dynorm.field(name="Shelf", default=None)
    when: datetime.date | None = dynorm.field(name="Due Date", default=None)


sensors = Table("Readings", pk="SensorID", sk="Status#Time", indexes=[GSI("GSI1", "Site", "Time")])


@sensors.model(pk="{sensor_id}", sk="{status}#{time}", GSI1=("{site}", "{time}"))
@attrs.define
class Reading:
    sensor_id: str = dynorm.field(name="SensorID")
    status: str = dynorm.field(name="Status")
    time: str = dynorm.field(name="Time")
    site: str = dynorm.field(name="Site")
    value: float = 0.0


LOAN = Loan("42", "7", "m9", "2026-05-01", 2, Shelf("east", 3), datetime.date(2026, 5, 1))


def test_fields_are_stored_under_their_names_and_key_only_fields_only_in_keys() -> None:
    item = info_of(Loan).encode(LOAN)
    assert item == {
        "PK": {"S": "b#42"},
        "SK": {"S": "l#7"},
        "GSI1-PK": {"S": "m#m9"},
        "GSI1-SK": {"S": "2026-05-01"},
        "ItemType": {"S": "loan"},
        "book_id": {"S": "42"},
        "loan_id": {"S": "7"},
        "Renewals": {"N": "2"},
        "Shelf": {"M": {"Room": {"S": "east"}, "Shelf Level": {"N": "3"}}},
        "Due Date": {"S": "2026-05-01"},
    }


def test_items_decode_from_stored_names_and_key_attributes() -> None:
    info = info_of(Loan)
    assert info.decode(info.encode(LOAN)) == LOAN
    # Attributes no field maps are ignored.
    assert info.decode({**info.encode(LOAN), "Other": {"S": "x"}}) == LOAN


def test_a_key_that_is_the_field_is_stored_once() -> None:
    reading = Reading("s1", "OK", "2026-04-27T10:00", "north", 1.5)
    item = info_of(Reading).encode(reading)
    assert item == {
        "SensorID": {"S": "s1"},
        "Status#Time": {"S": "OK#2026-04-27T10:00"},
        "Status": {"S": "OK"},
        "Time": {"S": "2026-04-27T10:00"},
        "Site": {"S": "north"},
        "value": {"N": "1.5"},
    }
    assert info_of(Reading).decode(item) == reading


def test_conditions_name_fields_and_send_stored_names() -> None:
    builder = info_of(Loan).builder()
    text = ((Attr("renewals") > 1) & (Attr("shelf.level") == 3)).render(builder)
    assert text == "(#n0 > :v0) AND (#n1.#n2 = :v1)"
    assert builder.names == {"#n0": "Renewals", "#n1": "Shelf", "#n2": "Shelf Level"}
    assert builder.values[":v1"] == {"N": "3"}


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("Renewals", r"Loan has no field 'Renewals' \(did you mean 'renewals'\?\)"),
        ("shelf.Room", r"Shelf has no field 'Room' in 'shelf.Room' \(did you mean 'room'\?\)"),
        ("member_id", r"Loan.member_id is kept only inside key attributes"),
    ],
)
def test_conditions_refuse_names_no_field_maps(path: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        (Attr(path) == "x").render(info_of(Loan).builder())


def test_updates_write_stored_names_and_rebuild_keys_of_key_only_fields() -> None:
    info = info_of(Loan)
    current = info.values_of(LOAN)
    request = plan_update(
        info, current, "Library", UpdateOps(set={"renewals": 3, "member_id": "m10"})
    )
    params = request.params
    names = params["ExpressionAttributeNames"]
    assert sorted(names.values()) == ["GSI1-PK", "GSI1-SK", "PK", "Renewals"]
    assert {"S": "m#m10"} in params["ExpressionAttributeValues"].values()


def test_the_type_attribute_decides_which_model_an_item_is() -> None:
    table = library()

    @table.model(pk="b#{book_id}", sk="{part}", entity="book")
    @attrs.define
    class Book:
        book_id: str
        part: str

    @table.model(pk="b#{book_id}", sk="{part}", entity="review")  # same templates: allowed
    @attrs.define
    class Review:
        book_id: str
        part: str

    book, review = info_of(Book), info_of(Review)
    item = book.encode(Book("1", "x"))
    assert item["ItemType"] == {"S": "book"}
    assert [book.matches(item), review.matches(item)] == [True, False]
    assert [book.sort_key_matcher(None)(item), review.sort_key_matcher(None)(item)] == [True, False]
    # An item written without the type attribute is told apart by its keys.
    del item["ItemType"]
    assert [book.matches(item), review.matches(item)] == [True, True]


def test_without_a_type_attribute_templates_must_differ() -> None:
    table = Table("t")

    @table.model(pk="b#{book_id}", sk="{part}")
    @attrs.define
    class Book:
        book_id: str
        part: str

    with pytest.raises(DefinitionError, match="cannot be told apart"):

        @table.model(pk="b#{book_id}", sk="{part}")
        @attrs.define
        class Review:
            book_id: str
            part: str


def _table() -> Table:
    return Table("T", pk="PK", sk="SK", type_attribute="ItemType")


def test_two_fields_stored_under_one_name_are_refused() -> None:
    with pytest.raises(DefinitionError, match=r"Twice.b and Twice.a are both stored as 'X'"):

        @_table().model(pk="{a}", sk="{b}")
        @attrs.define
        class Twice:
            a: str = dynorm.field(name="X")
            b: str = dynorm.field(name="X")


def test_a_field_stored_as_the_type_attribute_is_refused() -> None:
    with pytest.raises(DefinitionError, match=r"T1.b is stored as 'ItemType', the table's type"):

        @_table().model(pk="{a}", sk="x")
        @attrs.define
        class T1:
            a: str
            b: str = dynorm.field(name="ItemType")


def test_a_field_stored_as_a_key_attribute_another_template_fills_is_refused() -> None:
    with pytest.raises(DefinitionError, match=r"K.b is stored as 'SK', which its key template"):

        @_table().model(pk="{a}", sk="S#{b}")
        @attrs.define
        class K:
            a: str
            b: str = dynorm.field(name="SK")


def test_a_key_only_field_no_template_holds_is_refused() -> None:
    with pytest.raises(DefinitionError, match=r"Lost.b is key_only, but no key template of Lost"):

        @_table().model(pk="{a}", sk="x")
        @attrs.define
        class Lost:
            a: str
            b: str = dynorm.field(key_only=True)


def test_a_key_attribute_field_must_be_a_string() -> None:
    table = Table("T", pk="PK", sk="N")

    with pytest.raises(DefinitionError, match=r"M.n is stored as the key attribute 'N'"):

        @table.model(pk="{a}", sk="{n}")
        @attrs.define
        class M:
            a: str
            n: int = dynorm.field(name="N")


def test_entity_names_are_unique_and_need_a_type_attribute() -> None:
    table = Table("T", type_attribute="kind")

    @table.model(pk="A#{a}", sk="A", entity="thing")
    @attrs.define
    class A:
        a: str

    with pytest.raises(DefinitionError, match=r"B and A would both store entity 'thing'"):

        @table.model(pk="B#{b}", sk="B", entity="thing")
        @attrs.define
        class B:
            b: str

    with pytest.raises(DefinitionError, match=r"needs a Table with a type attribute"):
        Table("U").model(pk="{a}", sk="x", entity="thing")


def test_a_type_attribute_cannot_be_a_key_attribute() -> None:
    with pytest.raises(DefinitionError, match="type_attribute 'sk' is a key attribute"):
        Table("T", type_attribute="sk")


def test_entity_defaults_to_the_class_name() -> None:
    table = Table("T", type_attribute="kind")

    @table.model(pk="A#{a}", sk="A")
    @attrs.define
    class Thing:
        a: str

    assert info_of(Thing).encode(Thing("1"))["kind"] == {"S": "Thing"}


def test_field_takes_a_name_and_attrs_options() -> None:
    with pytest.raises(DefinitionError, match="non-empty str"):
        dynorm.field(name="")
    with pytest.raises(DefinitionError, match="default= or factory="):
        dynorm.field(default=1, factory=list)  # type: ignore[call-overload]

    @attrs.define
    class C:
        tags: list[str] = dynorm.field(name="Tags", factory=list)

    assert C().tags == []
    assert attrs.fields(C).tags.metadata["dynorm.name"] == "Tags"


@attrs.define
class Address:
    nickname: str = dynorm.field(name="Nick")


def test_embedded_children_need_an_attribute_no_stored_name_uses() -> None:
    table = _table()

    @table.model(pk="c#{cid}", sk="c#{cid}")
    @attrs.define
    class Customer:
        cid: str
        # Stored as "Addresses": the field's name "addresses" is free for the children.
        addresses_text: str = dynorm.field(name="Addresses", default="")
        addresses = HasMany[Address](Address, via=Embedded(key="nickname"))

    assert Customer.addresses.embedded is not None
    assert Customer.addresses.embedded.attribute == "addresses"
    for attribute in ("Addresses", "ItemType", "SK"):
        with pytest.raises(DefinitionError, match=f"attribute {attribute!r} is already used"):

            @_table().model(pk="c#{cid}", sk="c#{cid}")
            @attrs.define
            class Clash:
                cid: str
                addresses_text: str = dynorm.field(name="Addresses", default="")
                addresses = HasMany[Address](
                    Address, via=Embedded(key="nickname", attribute=attribute)
                )


def test_field_passes_attrs_options_through() -> None:
    @attrs.define
    class C:
        n: int = dynorm.field(name="N", converter=int, validator=attrs.validators.ge(0))
        secret: str = dynorm.field(name="S", alias="token", repr=False, default="")

    c = C("5", token="x")
    assert c.n == 5
    assert c.secret == "x"
    assert "x" not in repr(c)
    with pytest.raises(ValueError, match="must be >= 0"):
        C(-1)


def test_a_none_partner_keeps_the_other_identity_field() -> None:
    table = Table("t", pk="P", sk=None, indexes=[GSI("GSI", pk="Site", sk="Time")])

    @table.model(pk="{p}", GSI=("{site}", "{time}"))
    @attrs.define
    class Sparse:
        p: str = dynorm.field(name="P")
        site: str | None = dynorm.field(name="Site", default=None)
        time: str | None = dynorm.field(name="Time", default=None)

    item = table.info(Sparse).encode(Sparse("1", "north", None))
    assert item == {"P": {"S": "1"}, "Site": {"S": "north"}}


def test_identity_keys_are_not_escaped_and_parse_whole() -> None:
    info = info_of(Reading)
    item = info.encode(Reading("a#b", "OK", "t%1", "x#y"))
    assert item["SensorID"] == {"S": "a#b"}
    assert item["Status#Time"] == {"S": "OK#t%251"}  # a composite key still escapes
    assert info.templates["SensorID"].parse("a#b") == {"sensor_id": "a#b"}
    assert info.templates["SensorID"].matches("any#thing")


def test_a_nested_class_storing_two_fields_under_one_name_is_refused() -> None:
    @attrs.define
    class Inner:
        a: str = dynorm.field(name="X")
        b: str = dynorm.field(name="X")

    @attrs.define
    class Outer:
        inner: list[Inner]

    with pytest.raises(DefinitionError, match=r"Inner.b and Inner.a are both stored as 'X'"):

        @_table().model(pk="{a}", sk="x")
        @attrs.define
        class Holder:
            a: str
            outer: Outer | None = None


def test_models_of_one_table_agree_on_the_ttl_attribute() -> None:
    table = Table("T")

    @table.model(pk="A#{a}", sk="A", ttl="expires")
    @attrs.define
    class A:
        a: str
        expires: datetime.datetime | None = dynorm.field(name="TTL", default=None)

    with pytest.raises(DefinitionError, match=r"B's ttl is stored as 'expires', but A's as 'TTL'"):

        @table.model(pk="B#{b}", sk="B", ttl="expires")
        @attrs.define
        class B:
            b: str
            expires: datetime.datetime | None = None
