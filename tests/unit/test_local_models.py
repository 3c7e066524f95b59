"""Models declared inside functions, with string annotations naming the function's own classes.

This module uses ``from __future__ import annotations`` on purpose: every annotation below is a
string, and the classes it names exist only in the test function's locals.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs
import pytest

from dynorm import DefinitionError, Embedded, HasMany, Partition, Table
from dynorm.mapping.model import ModelInfo, info_of


def test_a_field_typed_by_a_local_class() -> None:
    table = Table("local")

    class Color(enum.Enum):
        RED = "red"

    @attrs.define
    class Point:
        x: int
        y: int

    @table.model(pk="SHAPE#{name}", sk="SHAPE#{name}")
    @attrs.define
    class Shape:
        name: str
        color: Color
        corners: list[Point]
        center: Point | None = None

    info = info_of(Shape)
    assert info.field_types["color"] is Color
    assert info.field_types["corners"] == list[Point]
    shape = Shape("tri", Color.RED, [Point(0, 0), Point(1, 0)], Point(1, 1))
    item = info.encode(shape)
    assert item["corners"] == {
        "L": [{"M": {"x": {"N": "0"}, "y": {"N": "0"}}}, {"M": {"x": {"N": "1"}, "y": {"N": "0"}}}]
    }
    assert info.decode(item) == shape


def test_a_nested_local_class_naming_another_local_class() -> None:
    table = Table("local")

    @attrs.define
    class Inner:
        value: int

    @attrs.define
    class Outer:
        inner: Inner
        more: list[Inner] = attrs.field(factory=list)

    @table.model(pk="BOX#{box_id}", sk="BOX#{box_id}")
    @attrs.define
    class Box:
        box_id: str
        outer: Outer

    info = info_of(Box)
    box = Box("b", Outer(Inner(1), [Inner(2)]))
    assert info.decode(info.encode(box)) == box


def test_a_key_field_typed_by_a_local_enum() -> None:
    table = Table("local")

    class Kind(enum.Enum):
        BUG = "bug"

    @table.model(pk="ISSUE#{kind}", sk="ISSUE#{issue_id}")
    class Issue:
        kind: Kind
        issue_id: str

    info = info_of(Issue)
    assert info.primary_key({"kind": Kind.BUG, "issue_id": "1"})["pk"] == {"S": "ISSUE#bug"}
    assert info.decode({"pk": {"S": "ISSUE#bug"}, "sk": {"S": "ISSUE#1"}}).kind is Kind.BUG


def test_an_embedded_child_declared_after_its_parent() -> None:
    table = Table("local")

    @attrs.define
    class Street:
        name: str

    @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
    class Customer:
        customer_id: str
        addresses = HasMany["Address"]("Address", via=Embedded(key="nickname"))

    @attrs.define
    class Address:
        nickname: str
        street: Street

    table.check()  # resolves "Address" from this function's locals, now that it exists
    codec = Customer.addresses.embedded
    assert codec is not None
    assert codec.child is Address
    stored = codec.encode([Address("home", Street("Main"))])
    assert codec.decode({"addresses": stored}) == [Address("home", Street("Main"))]


def test_an_embedded_child_class_passed_directly() -> None:
    table = Table("local")

    @attrs.define
    class Street:
        name: str

    @attrs.define
    class Address:
        nickname: str
        street: Street

    @table.model(pk="CUSTOMER#{customer_id}", sk="CUSTOMER#{customer_id}")
    class Customer:
        customer_id: str
        addresses = HasMany[Address](Address, via=Embedded())

    codec = Customer.addresses.embedded
    assert codec is not None
    assert codec.decode({"addresses": codec.encode([Address("a", Street("b"))])}) == [
        Address("a", Street("b"))
    ]


def test_relationships_between_local_models() -> None:
    table = Table("local")

    @table.model(pk="ORG#{name}", sk="METADATA#{name}")
    class Org:
        name: str
        users = HasMany["User"]("User", via=Partition())

    @table.model(pk="ORG#{org_name}", sk="USER#{username}")
    class User:
        org_name: str
        username: str

    table.check()
    assert Org.users.target_cls is User
    assert Org.users.link == {"org_name": "name"}


def test_a_type_that_is_never_defined_still_says_what_to_do() -> None:
    table = Table("local")
    with pytest.raises(DefinitionError, match=r"Shape\.where: .*define the type before the model"):

        @table.model(pk="S#{name}", sk="S#{name}")
        class Shape:
            name: str
            where: Nowhere  # type: ignore[name-defined]  # noqa: F821


def test_a_local_class_defined_after_the_model_is_not_seen_by_its_fields() -> None:
    # Field types are resolved when the model is declared: a class defined later cannot be.
    table = Table("local")
    with pytest.raises(DefinitionError, match="define the type before the model"):

        @table.model(pk="S#{name}", sk="S#{name}")
        class Shape:
            name: str
            where: Later

    @attrs.define
    class Later:
        x: int

    assert Later(1).x == 1


def make_table_in_a_helper() -> tuple[Table, type]:
    table = Table("local")

    @attrs.define
    class Tag:
        label: str

    @table.model(pk="POST#{post_id}", sk="POST#{post_id}")
    class Post:
        post_id: str
        tags: list[Tag]

    return table, Post


def test_models_from_a_factory_function_work_after_it_returned() -> None:
    _, post = make_table_in_a_helper()
    info: ModelInfo[Any] = info_of(post)
    obj = info.decode(
        {
            "pk": {"S": "POST#1"},
            "sk": {"S": "POST#1"},
            "tags": {"L": [{"M": {"label": {"S": "x"}}}]},
        }
    )
    assert obj.tags[0].label == "x"
