"""Declaring tables and models: what is accepted, and errors that say what to change."""

from typing import Any, ClassVar

import attrs
import cattrs
import pytest

from dynorm import GSI, LSI, BelongsTo, DefinitionError, HasMany, Index, Partition, Table
from dynorm.mapping.model import info_of


@pytest.fixture
def table() -> Table:
    return Table("app", pk="pk", sk="sk", indexes=[GSI("GSI1", pk="GSI1PK", sk="GSI1SK")])


# -- tables --------------------------------------------------------------------------------------


def test_index_declared_twice() -> None:
    with pytest.raises(DefinitionError, match="declares index 'GSI1' twice"):
        Table("app", indexes=[GSI("GSI1", pk="a"), GSI("GSI1", pk="b")])


def test_local_index_needs_a_sort_key() -> None:
    with pytest.raises(DefinitionError, match="local index 'LSI1' needs a table with a sort key"):
        Table("app", sk=None, indexes=[LSI("LSI1", sk="lsi")])


def test_bad_projection() -> None:
    with pytest.raises(DefinitionError, match="projection must be 'ALL', 'KEYS_ONLY'"):
        GSI("GSI1", pk="a", projection="SOME")


LONG = "é" * 128  # 128 characters, 256 bytes in UTF-8: one byte over DynamoDB's limit


@pytest.mark.parametrize(
    ("declare", "what"),
    [
        (lambda: Table("app", pk=LONG), "key attribute 'éééé"),
        (lambda: Table("app", sk=LONG), "key attribute 'éééé"),
        (lambda: Table("app", indexes=[GSI("GSI1", pk=LONG)]), "key attribute 'éééé"),
        (lambda: Table("app", indexes=[GSI("GSI1", pk="g", sk=LONG)]), "key attribute 'éééé"),
        (lambda: Table("app", indexes=[LSI("LSI1", sk=LONG)]), "key attribute 'éééé"),
        (
            lambda: Table("app", indexes=[GSI("GSI1", pk="g", projection=("ok", LONG))]),
            "attribute projected by index 'GSI1' 'éééé",
        ),
        (lambda: Table("app", pk=""), "key attribute '' is 0 bytes long"),
    ],
)
def test_a_key_or_projected_name_over_255_bytes_is_refused(declare: Any, what: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        declare()
    message = str(caught.value)
    assert what in message
    assert "1 to 255 bytes" in message
    if "is 0" not in message:
        assert "(128 characters) is 256 bytes long (UTF-8)" in message


def test_a_key_attribute_name_that_is_no_string_is_refused() -> None:
    with pytest.raises(DefinitionError, match=r"key attribute 5 is not a name \(str\)"):
        Table("app", sk=5)  # type: ignore[arg-type]


def test_names_of_255_bytes_are_taken() -> None:
    name = "é" * 127 + "x"  # 255 bytes
    table = Table("app", pk=name, indexes=[GSI("GSI1", pk="g", projection=(name,))])
    assert table.pk == name


def test_key_attributes(table: Table) -> None:
    with_lsi = Table("t", indexes=[GSI("GSI", pk="gpk"), LSI("LSI", sk="lsk")])
    assert with_lsi.key_attributes(None) == ("pk", "sk")
    assert with_lsi.key_attributes("GSI") == ("gpk", None)
    assert with_lsi.key_attributes("LSI") == ("pk", "lsk")
    assert with_lsi.attribute_names() == ["pk", "sk", "gpk", "lsk"]
    assert GSI("GSI", pk="a", projection=["x", "y"]).projection == ("x", "y")


def test_unknown_index_lists_the_declared_ones(table: Table) -> None:
    with pytest.raises(
        DefinitionError, match="index 'GSI2' is not declared on Table 'app'; declared: GSI1"
    ):
        table.index("GSI2")


# -- model declarations --------------------------------------------------------------------------


def test_model_becomes_an_attrs_class(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        plan_type: str = "Free"

    assert attrs.has(Org)
    assert [f.name for f in attrs.fields(Org)] == ["name", "plan_type"]
    assert table.models["Org"].cls is Org


def test_already_attrs_class_is_accepted(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    @attrs.frozen
    class Org:
        name: str

    assert info_of(Org).cls is Org
    assert attrs.fields(Org).name.type is str
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Org("x").name = "y"  # type: ignore[misc]


def test_data_fields_only_in_asdict(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        plan_type: str = "Free"
        users: HasMany[Any] = HasMany("User", via=Partition())

    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    @attrs.define
    class User:
        org_name: str
        username: str
        org: ClassVar[BelongsTo[Any]] = BelongsTo(Org)

    org = Org(name="MICROSOFT")
    assert attrs.asdict(org) == {"name": "MICROSOFT", "plan_type": "Free"}
    assert cattrs.unstructure(org) == {"name": "MICROSOFT", "plan_type": "Free"}
    assert attrs.asdict(User("MICROSOFT", "BILL")) == {"org_name": "MICROSOFT", "username": "BILL"}
    assert isinstance(vars(Org)["users"], HasMany)


def test_classvar_relationship_may_name_a_later_model(table: Table) -> None:
    # On an attrs class a relationship is a ClassVar; its annotation may name a model that is
    # declared later (or only inside a function), which must not be evaluated at declaration.
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    @attrs.define
    class Org:
        name: str
        users: ClassVar[HasMany["Member"]] = HasMany("Member")

    @table.model(pk="ORG#{org_name}", sk="MEMBER#{username}")
    @attrs.define
    class Member:
        org_name: str
        username: str

    assert Org.users.target_info.cls is Member
    assert [f.name for f in attrs.fields(Org)] == ["name"]
    table.check()


def test_field_annotation_that_cannot_be_resolved(table: Table) -> None:
    with pytest.raises(DefinitionError, match=r"Broken\.other: its annotation cannot be resolved"):

        @table.model(pk="X#{name}", sk="X")
        @attrs.define
        class Broken:
            name: str
            other: "Missing"  # type: ignore[name-defined]  # noqa: F821


def test_unknown_placeholder_field(table: Table) -> None:
    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORG#{org}", sk="METADATA")
        class Org:
            name: str

    assert str(info.value) == (
        "Org: key template 'ORG#{org}' names 'org', which is not a field; fields: name"
    )


@pytest.mark.parametrize("tp", [list[str], set[int], list[str] | None, dict[str, str]])
def test_key_field_of_unsupported_type(table: Table, tp: Any) -> None:
    # A generic with one argument is not an Optional: list[str] must not pass as str.
    bag = type("Bag", (), {"__annotations__": {"tags": tp}})
    with pytest.raises(DefinitionError, match=r"Bag\.tags: a field of type .* cannot be part"):
        table.model(pk="BAG#{tags}", sk="BAG")(bag)


def test_optional_key_field_is_parsed_as_its_type(table: Table) -> None:
    @table.model(pk="A#{a}", sk="A", GSI1=("N#{n:04d}", "A#{a}"))
    class Numbered:
        a: str
        n: int | None = None

    assert info_of(Numbered).key_parsers["n"]("0042") == 42


def test_bad_template_names_the_model(table: Table) -> None:
    with pytest.raises(DefinitionError, match=r"^Org: key template 'ORG#\{a\}\{b\}': segment"):

        @table.model(pk="ORG#{a}{b}", sk="X")
        class Org:
            a: str
            b: str


def test_index_not_declared_on_the_table(table: Table) -> None:
    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORG#{name}", sk="METADATA", GSI2=("A#{name}", "B"))
        class Org:
            name: str

    assert str(info.value) == "Org: index 'GSI2' is not declared on Table 'app'; declared: GSI1"


def test_wrong_number_of_index_templates(table: Table) -> None:
    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORG#{name}", sk="METADATA", GSI1=("A#{name}",))
        class Org:
            name: str

    assert "Org: index 'GSI1' has key attributes ['GSI1PK', 'GSI1SK']" in str(info.value)
    assert "give 2 template(s) for it, got 1" in str(info.value)


def test_local_index_takes_one_template() -> None:
    table = Table("t", indexes=[LSI("BY_DATE", sk="lsi1")])

    @table.model(pk="ORG#{name}", sk="METADATA", BY_DATE="DATE#{name}")
    class Org:
        name: str

    assert info_of(Org).templates["lsi1"].source == "DATE#{name}"


def test_missing_sort_key_template(table: Table) -> None:
    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORG#{name}")
        class Org:
            name: str

    assert str(info.value) == "Org: Table 'app' has sort key 'sk'; give sk=<template>"


def test_sort_key_template_on_a_table_without_one() -> None:
    table = Table("t", sk=None)
    with pytest.raises(DefinitionError, match="Org: Table 't' has no sort key; drop sk="):

        @table.model(pk="ORG#{name}", sk="X")
        class Org:
            name: str


def test_index_cannot_give_a_table_key_another_template() -> None:
    table = Table("games", indexes=[GSI("inverted", pk="sk", sk="pk")])
    with pytest.raises(DefinitionError, match=r"attribute 'sk' already has template 'USER#\{u\}'"):

        @table.model(pk="GAME#{g}", sk="USER#{u}", inverted=("OTHER#{u}", "GAME#{g}"))
        class Mapping:
            g: str
            u: str


def test_model_named_twice(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA")
    class Org:
        name: str

    with pytest.raises(DefinitionError) as info:

        @table.model(pk="COMPANY#{name}", sk="METADATA")
        class Org:  # type: ignore[no-redef]
            name: str

    assert str(info.value) == "Table 'app' already has a model named Org; rename one"


def test_same_class_name_on_two_tables_is_fine() -> None:
    first, second = Table("one"), Table("two")

    @first.model(pk="ORG#{name}", sk="METADATA")
    class Org:
        name: str

    @second.model(pk="ORG#{name}", sk="METADATA")
    class Org2:
        name: str

    assert info_of(Org).table is first
    with pytest.raises(DefinitionError, match="Org belongs to Table 'one', not 'two'"):
        second.info(Org)


def test_not_a_model() -> None:
    class Plain:
        pass

    with pytest.raises(DefinitionError, match=r"Plain is not a dynorm model; decorate it"):
        info_of(Plain)


# -- telling models apart ------------------------------------------------------------------------


def test_indistinguishable_sort_keys_in_one_collection(table: Table) -> None:
    @table.model(pk="ORG#{org}", sk="USER#{username}")
    class User:
        org: str
        username: str

    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORG#{org}", sk="USER#{admin}")
        class Admin:
            org: str
            admin: str

    message = str(info.value)
    assert "Admin and User can share an item collection in Table 'app'" in message
    assert "sort keys 'USER#{admin}' and 'USER#{username}' cannot be told apart" in message
    assert "give one a distinct literal prefix" in message
    assert (
        "or store each item's model in an attribute: Table(..., type_attribute='type')" in message
    )


def test_indistinguishable_in_an_index(table: Table) -> None:
    @table.model(pk="A#{a}", sk="A", GSI1=("G#{a}", "X#{a}"))
    class First:
        a: str

    with pytest.raises(DefinitionError, match="in index 'GSI1'"):

        @table.model(pk="B#{b}", sk="B", GSI1=("G#{b}", "X#{b}"))
        class Second:
            b: str


def test_distinct_prefixes_share_a_collection(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str

    @table.model(pk="ORG#{org}", sk="USER#{username}")
    class User:
        org: str
        username: str

    @table.model(pk="OTHER#{x}", sk="USER#{y}")  # another partition: may look alike
    class Other:
        x: str
        y: str

    assert set(table.models) == {"Org", "User", "Other"}


# -- relationships -------------------------------------------------------------------------------


def test_forward_reference_resolves_when_the_target_is_declared(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: HasMany[Any] = HasMany("User", via=Partition())

    with pytest.raises(DefinitionError, match=r"Org\.users -> 'User'"):
        table.check()

    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    class User:
        org_name: str
        username: str

    table.check()
    rel = vars(Org)["users"]
    assert rel.target_info.cls is User
    assert rel.link == {"org_name": "name"}


def test_check_reports_every_unresolved_target(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users: HasMany[Any] = HasMany("User")
        teams: HasMany[Any] = HasMany("Team")

    with pytest.raises(DefinitionError) as info:
        table.check()
    assert str(info.value) == (
        "Table 'app': relationships name models that are not declared: "
        "Org.users -> 'User', Org.teams -> 'Team' (a name in a string is looked up on the "
        "owner's table, then in the module that declares the owner: import a model of another "
        "table there, or pass the class)"
    )


def test_child_partition_without_the_parents_shape(table: Table) -> None:
    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        members: HasMany[Any] = HasMany("Member", via=Partition())

    with pytest.raises(DefinitionError) as info:

        @table.model(pk="COMPANY#{org}", sk="MEMBER#{username}")
        class Member:
            org: str
            username: str

    message = str(info.value)
    assert message.startswith("Org.members via Partition(): children must share the parent's")
    assert "Member's template 'COMPANY#{org}'" in message
    assert "Org's 'ORG#{name}'" in message
    assert "make the literals match" in message


def test_index_strategy_on_a_child_without_index_templates(table: Table) -> None:
    @table.model(pk="USER#{u}", sk="USER#{u}", GSI1=("USER#{u}", "USER#{u}"))
    class Person:
        u: str
        orders: HasMany[Any] = HasMany("Order", via=Index("GSI1"))

    with pytest.raises(DefinitionError) as info:

        @table.model(pk="ORDER#{o}", sk="ORDER#{o}")
        class Order:
            o: str
            u: str

    message = str(info.value)
    assert message.startswith("Person.orders via Index('GSI1'): Order has no key templates")
    assert "declare @table.model(..., GSI1=(pk, sk))" in message


def test_index_strategy_naming_an_undeclared_index(table: Table) -> None:
    @table.model(pk="ORDER#{o}", sk="ORDER#{o}")
    class Order:
        o: str

    with pytest.raises(
        DefinitionError, match="index 'GSI9' is not declared on Table 'app'; declared: GSI1"
    ):

        @table.model(pk="USER#{u}", sk="USER#{u}")
        class Person:
            u: str
            orders: HasMany[Any] = HasMany(Order, via=Index("GSI9"))


def test_target_class_that_is_not_a_model(table: Table) -> None:
    class Plain:
        pass

    with pytest.raises(DefinitionError, match=r"Org\.things: target .* is not a dynorm model"):

        @table.model(pk="ORG#{name}", sk="METADATA")
        class Org:
            name: str
            things: HasMany[Any] = HasMany(Plain)


def test_relationships_need_weakref_slots(table: Table) -> None:
    with pytest.raises(DefinitionError, match=r"weakref_slot=True"):

        @table.model(pk="ORG#{name}", sk="METADATA")
        @attrs.define(weakref_slot=False)
        class Org:
            name: str
            users: ClassVar[HasMany[Any]] = HasMany("User")


@pytest.mark.parametrize("name", ["G1", "has space", "x" * 256, ""])
def test_index_names_follow_dynamodbs_rule(name: str) -> None:
    with pytest.raises(DefinitionError, match="3 to 255 characters"):
        GSI(name, pk="a")
    with pytest.raises(DefinitionError, match="3 to 255 characters"):
        LSI(name, sk="a")
