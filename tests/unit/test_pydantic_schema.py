"""dynorm[pydantic]: models and Page[Model] as pydantic types, through jsonable/from_jsonable."""

from __future__ import annotations

import datetime
import decimal
import json

import attrs
import pydantic
import pytest
from pydantic_core import core_schema

import dynorm
from dynorm import Page
from dynorm.mapping.state import Loaded, bind

from .test_jsonable import FULL, Item, Shelf, Store


def test_a_model_validates_through_from_jsonable_and_dumps_through_jsonable() -> None:
    adapter = pydantic.TypeAdapter(Store)
    text = json.dumps(dynorm.jsonable(FULL))
    store = adapter.validate_json(text)
    assert store == FULL
    assert adapter.validate_python(json.loads(text)) == FULL
    assert adapter.validate_python(FULL) is FULL  # an instance passes as is
    assert adapter.dump_python(FULL) == dynorm.jsonable(FULL)
    assert adapter.dump_python(FULL, mode="json") == dynorm.jsonable(FULL)
    assert json.loads(adapter.dump_json(FULL)) == dynorm.jsonable(FULL)


def test_loaded_children_are_dumped_and_read_back() -> None:
    store = Store("s1")
    bind(store, None).loaded["items"] = Loaded([Item("s1", "a")], None)
    adapter = pydantic.TypeAdapter(Store)
    dumped = adapter.dump_python(store)
    assert dumped["items"] == [{"store_id": "s1", "item_id": "a", "price": "0"}]
    assert "shelves" not in dumped
    assert adapter.validate_python(dumped).items.loaded == [Item("s1", "a")]


def test_invalid_data_is_a_validation_error_per_place() -> None:
    adapter = pydantic.TypeAdapter(Store)
    with pytest.raises(pydantic.ValidationError) as caught:
        adapter.validate_python({"count": "x", "items": [{"store_id": "s"}]})
    errors = {e["loc"]: e["msg"] for e in caught.value.errors()}
    assert errors == {
        ("count",): "'x' is a string, not an integer",
        ("items", 0, "item_id"): "missing; this field has no default",
        ("store_id",): "missing; this field has no default",
    }


def test_the_json_schema_types_each_field() -> None:
    schema = pydantic.TypeAdapter(Store).json_schema()
    store = schema["$defs"]["Store"]
    assert schema["$ref"] == "#/$defs/Store"
    props = store["properties"]
    assert store["required"] == ["store_id"]
    assert store["additionalProperties"] is False
    assert props["store_id"] == {"title": "Store Id", "type": "string"}
    assert props["count"] == {"default": 0, "title": "Count", "type": "integer"}
    assert props["flag"]["type"] == "boolean"
    assert props["ratio"]["type"] == "number"
    assert props["when"]["format"] == "date-time"
    assert props["day"]["format"] == "date"
    assert props["ident"]["format"] == "uuid"
    assert props["blob"]["type"] == "string"
    assert props["names"] == {"items": {"type": "string"}, "title": "Names", "type": "array"} | {
        "uniqueItems": True
    }
    assert props["color"] == {"$ref": "#/$defs/Color"}
    assert schema["$defs"]["Color"]["enum"] == ["red", "green"]
    assert props["size"]["enum"] == ["S", "M"]
    assert props["address"]["anyOf"] == [{"$ref": "#/$defs/Address"}, {"type": "null"}]
    address = schema["$defs"]["Address"]
    assert address["required"] == ["street", "number"]
    assert address["properties"]["number"]["type"] == "integer"
    # Relationships: optional arrays of the child's schema (embedded children too).
    assert props["items"] == {"items": {"$ref": "#/$defs/Item"}, "title": "Items", "type": "array"}
    assert props["shelves"]["items"] == {"$ref": "#/$defs/Shelf"}
    assert "items" not in store["required"]
    # A BelongsTo: the parent's schema or null, referring back without recursing forever.
    item = schema["$defs"]["Item"]
    assert item["properties"]["store"]["anyOf"] == [{"$ref": "#/$defs/Store"}, {"type": "null"}]


def test_decimals_are_strings_in_responses_and_numbers_or_strings_in_requests() -> None:
    adapter = pydantic.TypeAdapter(Item)
    price_in = adapter.json_schema(mode="validation")["$defs"]["Item"]["properties"]["price"]
    price_out = adapter.json_schema(mode="serialization")["$defs"]["Item"]["properties"]["price"]
    assert {s["type"] for s in price_in["anyOf"]} == {"number", "string"}
    assert price_out["type"] == "string"


def test_a_plain_attrs_class_is_described_by_its_fields() -> None:
    schema = pydantic.TypeAdapter(Store).json_schema()
    assert schema["$defs"]["Shelf"]["properties"]["size"] == {
        "default": 1,
        "title": "Size",
        "type": "integer",
    }
    assert Shelf.__doc__ is not None


def test_a_page_of_models() -> None:
    adapter = pydantic.TypeAdapter(Page[Item])
    page = Page([Item("s", "a", decimal.Decimal("1.10"))], "next", scanned=3)
    assert adapter.dump_python(page) == {
        "items": [{"store_id": "s", "item_id": "a", "price": "1.10"}],
        "cursor": "next",
    }
    back = adapter.validate_json(adapter.dump_json(page))
    assert back.items == page.items
    assert back.cursor == "next"
    assert adapter.validate_python(page) is page
    schema = adapter.json_schema()
    assert set(schema["properties"]) == {"items", "cursor"}
    assert schema["properties"]["items"]["items"] == {"$ref": "#/$defs/Item"}
    assert schema["required"] == ["items"]
    with pytest.raises(pydantic.ValidationError) as caught:
        adapter.validate_python({"items": [{"store_id": "s"}]})
    assert [e["loc"] for e in caught.value.errors()] == [("items", 0, "item_id")]


def test_a_model_inside_a_pydantic_model() -> None:
    class Order(pydantic.BaseModel):
        item: Item
        at: datetime.datetime

    order = Order.model_validate_json(
        '{"item": {"store_id": "s", "item_id": "a", "price": "2"}, "at": "2024-01-01T00:00:00Z"}'
    )
    assert order.item == Item("s", "a", decimal.Decimal(2))
    assert json.loads(order.model_dump_json())["item"] == {
        "store_id": "s",
        "item_id": "a",
        "price": "2",
    }
    assert Order.model_json_schema()["properties"]["item"] == {"$ref": "#/$defs/Item"}


def test_a_model_that_brings_its_own_hook_keeps_it() -> None:
    table = dynorm.Table("own-hook", pk="pk", sk="sk")

    @table.model(pk="A#{a}", sk="A#{a}")
    class Own:
        a: str

        @classmethod
        def __get_pydantic_core_schema__(cls, source: object, handler: object) -> object:
            return core_schema.no_info_plain_validator_function(lambda v: cls(a=str(v)))

    assert pydantic.TypeAdapter(Own).validate_python(7) == Own("7")


def test_models_declared_in_a_function_have_their_own_schemas() -> None:
    table = dynorm.Table("local", pk="pk", sk="sk")

    @table.model(pk="P#{p}", sk="P#{p}")
    class Parent:
        p: str
        kids = dynorm.HasMany["Kid"](via=dynorm.Partition())

    @table.model(pk="P#{p}", sk="K#{k}")
    class Kid:
        p: str
        k: int
        parent = dynorm.BelongsTo(Parent)

    schema = pydantic.TypeAdapter(Parent).json_schema(mode="serialization")
    assert schema["$defs"]["Kid"]["properties"]["k"]["type"] == "integer"
    kid = pydantic.TypeAdapter(Kid).validate_json('{"p": "x", "k": 1, "parent": {"p": "x"}}')
    assert kid.parent.loaded == Parent("x")


@attrs.define
class Outline:
    title: str
    children: list[Outline] = attrs.Factory(list)


outlines = dynorm.Table("outlines", pk="pk", sk="sk")


@outlines.model(pk="DOC#{name}", sk="DOC#{name}")
class Doc:
    name: str
    outline: Outline | None = None
    scans: list[bytes] = attrs.Factory(list)


@outlines.model(pk="NODE#{name}", sk="NODE#{name}")
class Node:
    name: str
    kids: list[Node] = attrs.Factory(list)


def test_a_class_that_holds_itself_has_a_schema_and_validates() -> None:
    adapter = pydantic.TypeAdapter(Doc)
    schema = adapter.json_schema()
    outline = schema["$defs"]["Outline"]
    assert outline["properties"]["children"]["items"] == {"$ref": "#/$defs/Outline"}
    data = {"name": "d", "outline": {"title": "a", "children": [{"title": "b"}]}}
    assert adapter.validate_python(data) == Doc("d", Outline("a", [Outline("b")]))
    node = pydantic.TypeAdapter(Node)
    assert node.json_schema()["$defs"]["Node"]["properties"]["kids"]["items"] == {
        "$ref": "#/$defs/Node"
    }
    assert node.validate_json('{"name": "n", "kids": [{"name": "m"}]}') == Node("n", [Node("m")])


def test_bytes_are_base64_text_in_the_schema() -> None:
    props = pydantic.TypeAdapter(Store).json_schema()["$defs"]["Store"]["properties"]
    base64 = {"type": "string", "contentEncoding": "base64", "format": "base64"}
    assert props["blob"] == {"title": "Blob", **base64}
    scans = pydantic.TypeAdapter(Doc).json_schema()["properties"]["scans"]
    assert scans["items"] == base64
    assert pydantic.TypeAdapter(Doc).validate_python({"name": "d", "scans": ["AAH/"]}).scans == [
        b"\x00\x01\xff"
    ]


def test_an_error_echoes_an_input_json_can_carry() -> None:
    adapter = pydantic.TypeAdapter(Store)
    with pytest.raises(pydantic.ValidationError) as caught:
        adapter.validate_python({"store_id": "s", "text": "\ud800", "ratio": float("inf")})
    inputs = {e["loc"]: e["input"] for e in caught.value.errors()}
    assert inputs == {("text",): "'\\ud800'", ("ratio",): "inf"}
    json.dumps(caught.value.errors(), allow_nan=False).encode()
