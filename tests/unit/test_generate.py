"""The generation helper every code generator shares (``dynorm.core.codec.generate``)."""

import linecache
import traceback

import attrs
import pytest

from dynorm.core.codec.generate import FieldValue, Namespace, instance_call


@attrs.define
class Point:
    x: int
    y: int = 0
    tags: list[str] = attrs.Factory(list)
    label: str = attrs.field(default=attrs.Factory(lambda self: f"{self.x}", takes_self=True))


def test_bound_names_and_locals_never_collide() -> None:
    names = Namespace({"__fixed": 1})
    first, second = names.bind("hook", len), names.bind("hook", str)
    assert first != second
    assert names.namespace[first] is len
    assert names.namespace[second] is str
    assert names.namespace["__fixed"] == 1
    assert names.local("e") != names.local("e")


def test_a_defined_function_shows_its_source_in_tracebacks() -> None:
    names = Namespace({})
    fail = names.define("fail", "def fail(o):\n    return 1 // o\n", what="test", owner=Point)
    assert names.namespace["fail"] is fail  # others compiled into the namespace may call it
    filename = fail.__code__.co_filename
    assert filename.startswith(f"<dynorm test {__name__}.Point #")
    linecache.checkcache()  # keeps generated entries: they have no file to go stale
    assert linecache.getlines(filename) == ["def fail(o):\n", "    return 1 // o\n"]
    with pytest.raises(ZeroDivisionError) as caught:
        fail(0)
    assert "return 1 // o" in "".join(traceback.format_tb(caught.value.__traceback__))
    again = names.define("fail", "def fail(o):\n    return o\n", what="test", owner=Point)
    assert again.__code__.co_filename != filename  # each compiled source has its own file


def test_instance_call_fills_in_defaults_for_what_the_item_lacks() -> None:
    names = Namespace({})
    fields = attrs.fields(Point)
    values = [
        FieldValue(fields.x, "o['x']", None),
        FieldValue(fields.y, "o['y']", "'y' in o"),
        FieldValue(fields.tags, "o['tags']", "'tags' in o", empty=list),
        FieldValue(fields.label, "o['label']", "'label' in o"),
    ]
    call = instance_call(names, names.bind("cls", Point), values)
    make = names.define("make", f"def make(o):\n    return {call}\n", what="test", owner=Point)
    assert make({"x": 3}) == Point(3, 0, [], "3")
    assert make({"x": 3, "y": 4, "tags": ["a"], "label": "p"}) == Point(3, 4, ["a"], "p")
