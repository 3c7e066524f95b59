"""Cold start: declaring a model generates no code; each generated function is written on its
first use, once, and then called directly (issue 19)."""

from __future__ import annotations

import builtins
import decimal
import re
import subprocess
import sys
import types
from typing import Any, ClassVar

import attrs
import orjson
import pytest

from dynorm import DefinitionError, Embedded, HasMany, Table
from dynorm.core.keys import KeyTemplate
from dynorm.mapping.model import ModelInfo, info_of
from dynorm.mapping.relations import embedded_of
from dynorm.wire.structs import PENDING_MARK


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions (``compile(..., "exec")``) and regexes compiled while the test runs.

    Annotations resolved from text (``compile(..., "eval")`` in ``typing``) are not counted:
    checking a declaration resolves its field types.
    """
    seen: list[str] = []
    real_compile, real_re_compile = builtins.compile, re.compile

    def counted_compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if mode == "exec":
            seen.append(f"code {filename}")
        return real_compile(source, filename, mode, *args, **kwargs)

    def counted_re_compile(pattern: Any, flags: Any = 0) -> Any:
        seen.append(f"regex {pattern}")
        return real_re_compile(pattern, flags)

    monkeypatch.setattr(builtins, "compile", counted_compile)
    monkeypatch.setattr(re, "compile", counted_re_compile)
    return seen


def _models() -> tuple[Table, type, type]:
    """A table with two models, their classes made attrs classes beforehand (not measured)."""

    @attrs.define
    class Account:
        id: str
        owner: str
        balance: decimal.Decimal
        tags: set[str] = attrs.Factory(set)

    @attrs.define
    class Entry:
        account_id: str
        seq: int
        what: str
        amount: decimal.Decimal

    table = Table("cold", pk="PK", sk="SK")
    return table, Account, Entry


def test_declaring_models_compiles_nothing(compiles: list[str]) -> None:
    table, account, entry = _models()
    compiles.clear()
    table.model(pk="ACCOUNT#{id}", sk="ACCOUNT#{id}")(account)
    table.model(pk="ACCOUNT#{account_id}", sk="ENTRY#{seq:08d}#{what}")(entry)
    assert compiles == []


def test_first_use_generates_once_then_calls_the_function(compiles: list[str]) -> None:
    table, account, entry = _models()
    table.model(pk="ACCOUNT#{id}", sk="ACCOUNT#{id}")(account)
    table.model(pk="ACCOUNT#{account_id}", sk="ENTRY#{seq:08d}#{what}")(entry)
    info: ModelInfo[Any] = info_of(account)
    obj = account(id="a1", owner="o", balance=decimal.Decimal("1.5"), tags={"x"})

    compiles.clear()
    item = info.encode(obj)
    assert compiles, "the encoder is generated on first use"
    assert "encode" in vars(info.codec)  # stored in place of the property that wrote it
    assert info.decode(item) == obj
    assert "decode" in vars(info.codec)
    # The other model's functions were not written for this one's reads and writes.
    assert not {"encode", "decode"} & set(vars(info_of(entry).codec))

    compiles.clear()
    for _ in range(3):
        assert info.decode(info.encode(obj)) == obj
    assert compiles == []


def test_key_template_compiles_its_regex_on_first_use(compiles: list[str]) -> None:
    template = KeyTemplate("ENTRY#{seq}#{what}x")
    assert compiles == []
    assert template.parse("ENTRY#7#payx") == {"seq": "7", "what": "pay"}
    assert len(compiles) == 1
    assert template.matches("ENTRY#8#feex")
    assert template.parse("OTHER#1#2") is None
    assert len(compiles) == 1  # compiled once, then called directly


def test_a_read_generates_the_wire_converter_of_the_model_read_only() -> None:
    table, account, entry = _models()
    table.model(pk="ACCOUNT#{id}", sk="ACCOUNT#{id}")(account)
    table.model(pk="ACCOUNT#{account_id}", sk="ENTRY#{seq:08d}#{what}")(entry)
    body = orjson.dumps(
        {
            "Items": [
                {
                    "PK": {"S": "ACCOUNT#a1"},
                    "SK": {"S": "ENTRY#00000001#pay"},
                    "account_id": {"S": "a1"},
                    "seq": {"N": "1"},
                    "what": {"S": "pay"},
                    "amount": {"N": "2.5"},
                }
            ],
            "Count": 1,
        }
    )
    page = table.parser("Query")(body)
    assert info_of(entry).decode(page["Items"][0]) == entry("a1", 1, "pay", decimal.Decimal("2.5"))
    converters = table.wire(None).converters
    generated = {cls for cls, convert in converters.items() if not hasattr(convert, PENDING_MARK)}
    assert generated == {entry}  # not one for Account, which nothing read


def test_declaration_still_refuses_what_cannot_be_stored() -> None:
    table = Table("cold", pk="PK", sk="SK")

    @attrs.define
    class Bad:
        id: str
        kinds: set[bool]

    with pytest.raises(DefinitionError, match=r"Bad\.kinds.*sets hold"):
        table.model(pk="B#{id}", sk="B")(Bad)
    with pytest.raises(DefinitionError, match="placeholders must name a field"):
        table.model(pk="B#{}", sk="B")(attrs.define(type("Empty", (), {"__annotations__": {}})))


def test_embedded_children_are_checked_at_declaration_and_generated_on_first_use(
    compiles: list[str],
) -> None:
    @attrs.define
    class Address:
        label: str
        city: str

    @attrs.define
    class BadAddress:
        label: str
        flags: set[bool]

    @attrs.define
    class Customer:
        id: str
        addresses: ClassVar[HasMany[Any]] = HasMany(Address, via=Embedded(key="label"))

    @attrs.define
    class Broken:
        id: str
        addresses: ClassVar[HasMany[Any]] = HasMany(BadAddress, via=Embedded())

    table = Table("cold", pk="PK", sk="SK")
    compiles.clear()
    table.model(pk="C#{id}", sk="C")(Customer)
    assert compiles == []
    with pytest.raises(DefinitionError, match=r"Broken\.addresses: BadAddress\.flags"):
        table.model(pk="B#{id}", sk="B")(Broken)

    (relation,) = embedded_of(info_of(Customer))
    codec = relation.embedded
    assert codec is not None
    stored = codec.encode_child(Address("home", "Oslo"))
    assert stored == {"M": {"label": {"S": "home"}, "city": {"S": "Oslo"}}}
    assert compiles  # generated now
    assert codec.decode({"addresses": {"M": {"home": stored}}}) == [Address("home", "Oslo")]


def test_importing_dynorm_leaves_msgspec_to_the_first_read() -> None:
    """The wire structures' msgspec is imported by a table's first read, not by dynorm."""
    code = "import sys, dynorm; print(sorted(m for m in sys.modules if m.startswith('msgspec')))"
    done = subprocess.run(  # noqa: S603 - this interpreter, our code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_builtin_annotations_resolve_fast_unless_the_name_is_rebound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("dynorm_rebinds_float")
    module.float = decimal.Decimal  # type: ignore[attr-defined] # "float" means Decimal there
    monkeypatch.setitem(sys.modules, module.__name__, module)
    annotations = {"id": "str", "amount": "float", "count": "int"}
    price = attrs.define(
        type("Price", (), {"__annotations__": annotations, "__module__": module.__name__})
    )
    table = Table("cold", pk="PK", sk="SK")
    table.model(pk="P#{id}", sk="P")(price)
    assert info_of(price).field_types == {"id": str, "amount": decimal.Decimal, "count": int}
