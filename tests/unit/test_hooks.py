"""``Hooks``: the codec's hooks without cattrs, until a type needs it (issue 19, cold start).

Each hook made without cattrs must be the hook ``make_converter()``'s converter gives: the same
object where the converter's is a shared one, else a hook made by the same factory, which reads
and writes every sample alike and fails alike.
"""

from __future__ import annotations

import collections.abc
import datetime
import decimal
import enum
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest

from dynorm.core.codec.converter import Hooks, make_converter
from dynorm.core.codec.decoders import LIST_HOOK_MARK, NESTED_HOOK_MARK, WIRE_HOOK_MARK
from dynorm.core.codec.encoders import ENCODE_LIST_MARK, ENCODE_MAP_MARK, ENCODE_OPTIONAL_MARK
from dynorm.core.codec.scalars import unstructure_hook
from dynorm.core.errors import CodecError, DefinitionError

MARKS = (
    LIST_HOOK_MARK,
    NESTED_HOOK_MARK,
    WIRE_HOOK_MARK,
    ENCODE_LIST_MARK,
    ENCODE_MAP_MARK,
    ENCODE_OPTIONAL_MARK,
)


class Color(enum.Enum):
    RED = "red"
    ONE = 1


class Perm(enum.Flag):
    R = 1
    W = 2


class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


@attrs.define
class Point:
    x: int


NOW = datetime.datetime(2026, 11, 26, 7, 30, tzinfo=datetime.UTC)

#: Types dynorm's own hooks answer, with values of them.
OWN: list[tuple[object, list[object]]] = [
    (str, ["", "ü"]),
    (int, [0, -(10**30)]),
    (float, [1.5, 0.0]),
    (bool, [True, False]),
    (decimal.Decimal, [decimal.Decimal("1.25")]),
    (bytes, [b"", b"\x00\xff"]),
    (datetime.datetime, [NOW]),
    (datetime.date, [NOW.date()]),
    (datetime.time, [datetime.time(7, 30)]),
    (uuid.UUID, [uuid.UUID(int=7)]),
    (Any, [None, {"a": [1, "b"]}, {1, 2}]),
    (Color, [Color.RED, Color.ONE]),
    (Perm, [Perm.R, Perm.R | Perm.W]),
    (Literal["a", 1, None], ["a", 1, None]),
    (tuple[str, int], [("a", 1)]),
    (tuple[int, ...], [(), (1, 2)]),
    (list[str], [[], ["a", "b"]]),
    (list[int] | None, [None, [1]]),
    (collections.abc.Sequence[decimal.Decimal], [[decimal.Decimal(2)]]),
    (set[str], [set(), {"a", "b"}]),
    (frozenset[int], [frozenset({1, 2})]),
    (set[bytes], [{b"a"}]),
    (dict[str, int], [{}, {"a": 1}]),
    (collections.abc.Mapping[str, list[str]], [{"a": ["b"]}]),
    (dict[str, Any], [{"a": {"b": None}}]),
    (list[Color], [[Color.ONE, Color.RED]]),
    (Color | None, [None, Color.RED]),
    (dict[str, Color] | None, [None, {"c": Color.ONE}]),
    (list[list[decimal.Decimal]], [[[decimal.Decimal("0.1")]]]),
    (tuple[str, Color], [("a", Color.RED)]),
]

#: Types only cattrs answers: Hooks makes the converter for them.
CATTRS = [Level, Name, Point, list]


def _same(own: object, made: object) -> None:
    if own is made:
        return
    assert callable(own)
    assert callable(made)
    assert getattr(own, "__qualname__", None) == getattr(made, "__qualname__", None)
    assert [getattr(own, m, None) for m in MARKS] == [getattr(made, m, None) for m in MARKS]


@pytest.mark.parametrize(("tp", "values"), OWN, ids=[repr(tp) for tp, _ in OWN])
def test_hooks_made_without_cattrs_are_the_converters(tp: object, values: list[object]) -> None:
    hooks, converter = Hooks(), make_converter()
    write, read = unstructure_hook(hooks, tp), hooks.get_structure_hook(tp)
    assert hooks._converter is None  # answered without cattrs
    cattrs_write, cattrs_read = unstructure_hook(converter, tp), converter.get_structure_hook(tp)
    _same(write, cattrs_write)
    _same(read, cattrs_read)
    for value in values:
        stored = write(value)
        assert stored == cattrs_write(value)
        assert read(stored, tp) == cattrs_read(stored, tp) == value


@pytest.mark.parametrize(
    ("tp", "bad"),
    [
        (int, True),
        (Color, "red"),
        (list[str], ["a", 1]),
        (set[str], {1}),
        (tuple[str, int], ("a",)),
    ],
)
def test_refused_values_are_refused_alike(tp: object, bad: object) -> None:
    errors = []
    for source in (Hooks(), make_converter()):
        with pytest.raises(CodecError) as caught:
            unstructure_hook(source, tp)(bad)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("tp", [set[list[str]], dict[int, str], set[str] | None])
def test_unstorable_forms_are_refused_alike(tp: object) -> None:
    errors = []
    for source in (Hooks(), make_converter()):
        with pytest.raises(DefinitionError) as caught:
            source.get_structure_hook(tp)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("tp", CATTRS, ids=repr)
def test_other_types_are_asked_of_the_converter(tp: object) -> None:
    hooks = Hooks()
    read = hooks.get_structure_hook(tp)
    assert hooks._converter is not None
    _same(read, make_converter().get_structure_hook(tp))


def test_a_type_holding_an_attrs_class_makes_the_converter_for_that_class_only() -> None:
    hooks = Hooks()
    read = hooks.get_structure_hook(list[Point])
    assert getattr(read, LIST_HOOK_MARK)
    assert hooks._converter is not None
    assert read({"L": [{"M": {"x": {"N": "3"}}}]}, list[Point]) == [Point(3)]


def test_once_made_every_type_is_asked_of_the_converter_with_its_users_hooks() -> None:
    hooks = Hooks()
    assert hooks.get_structure_hook(str)({"S": "a"}, str) == "a"
    hooks.converter.register_structure_hook(str, lambda v, _: v["S"].upper())
    assert hooks.get_structure_hook(str)({"S": "a"}, str) == "A"


def _run(script: str) -> str:
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    ran = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip()


DECLARE = """
import sys, enum, decimal
import attrs, dynorm
from dynorm.mapping.model import info_of

class Kind(enum.Enum):
    A = "a"

table = dynorm.Table("t", pk="pk", sk="sk")

@table.model(pk="O#{id}", sk="O")
class Order:
    id: str
    total: decimal.Decimal
    tags: list[str]
    kind: Kind = Kind.A
    note: str | None = None
    labels: set[str] = attrs.Factory(set)

order = Order("1", decimal.Decimal("2.5"), ["x"], labels={"l"})
codec = info_of(Order).codec
"""


def test_plain_models_are_declared_written_and_read_without_importing_cattrs() -> None:
    said = _run(
        DECLARE
        + "assert codec.decode(codec.encode(order)) == order\n"
        + "print(sorted(m for m in sys.modules if m.startswith('cattrs')))"
    )
    assert said == "[]"


def test_hooks_registered_after_declaration_are_used() -> None:
    """``dynorm.converter`` makes the converter; a hook registered on it before a model's first
    use is used by that model's generated functions, as before the converter was lazy."""
    said = _run(
        DECLARE
        + 'dynorm.converter.register_unstructure_hook(str, lambda v: {"S": v + "!"})\n'
        + "print(codec.encode(order)['id'])"
    )
    assert said == "{'S': '1!'}"
