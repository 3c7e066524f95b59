"""Models built on other attrs classes: an attrs base class, a generic attrs field (no server).

This module postpones its annotations (PEP 563), as many users' modules do: the generic field
is then a string the declaration must resolve.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import attrs
import pydantic
import pytest

from dynorm import InvalidDataError, Table, from_jsonable, jsonable
from dynorm.mapping.model import info_of

app = Table("bases", pk="pk", sk="sk")


T = TypeVar("T")


@attrs.define
class Noted:
    note: str = ""


@app.model(pk="P#{pid}", sk="P")
class Page(Noted):
    """A model inheriting fields from an attrs base, without an attrs decorator of its own."""

    pid: str = ""


@attrs.define
class Box(Generic[T]):
    value: T


@app.model(pk="H#{hid}", sk="H")
class Holder:
    hid: str
    box: Box[int]


def test_a_model_on_an_attrs_base_class_gets_its_own_fields() -> None:
    # attrs.has() is true of the subclass too; table.model once left it as the base built it,
    # and its key field was "not a field".
    page = Page(note="n", pid="1")
    assert [f.name for f in attrs.fields(Page)] == ["note", "pid"]
    assert info_of(Page).decode(info_of(Page).encode(page)) == page


def test_a_generic_attrs_field_reads_back_under_postponed_annotations() -> None:
    # Box[int] with string annotations (this module's __future__ import) once failed to declare
    # with a bare TypeError from typing.get_type_hints.
    holder = Holder("1", Box(3))
    assert info_of(Holder).decode(info_of(Holder).encode(holder)) == holder


def test_a_generic_attrs_field_has_a_json_form_and_schema_bound_to_its_arguments() -> None:
    holder = Holder("1", Box(3))
    data = jsonable(holder)
    assert data == {"hid": "1", "box": {"value": 3}}
    assert from_jsonable(Holder, data) == holder
    with pytest.raises(InvalidDataError, match=r"box\.value: 'x' is a string, not an integer"):
        from_jsonable(Holder, {"hid": "1", "box": {"value": "x"}})
    schema = pydantic.TypeAdapter(Holder).json_schema()
    box = schema["$defs"][schema["properties"]["box"]["$ref"].rpartition("/")[2]]
    assert box["properties"]["value"]["type"] == "integer"


@app.model(pk="U#{uid}", sk="U")
class Member:
    uid: str
    name: str = ""


@app.model(pk="A#{uid}", sk="A")
class Admin(Member):
    """A model on another model: its own field and template, the base's fields."""

    level: int = 0


def test_a_model_on_another_model_keeps_its_own_fields_and_keys() -> None:
    admin = Admin("1", "ann", 3)
    item = info_of(Admin).encode(admin)
    assert item["level"] == {"N": "3"}
    assert item["pk"] == {"S": "A#1"}
    assert info_of(Admin).decode(item) == admin
    assert info_of(Member).encode(Member("2"))["pk"] == {"S": "U#2"}
