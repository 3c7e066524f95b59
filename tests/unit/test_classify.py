"""Which model an item is (``Table.classifier``), and reading fields back out of keys: pure."""

from __future__ import annotations

import datetime
import linecache

import attrs
import pytest

import dynorm
from dynorm import GSI, CodecError, DefinitionError, Table
from dynorm.mapping.model import info_of
from dynorm.mapping.reading import view_of

# -- the classifier ------------------------------------------------------------------------------

typed = Table(
    "typed", pk="PK", sk="SK", indexes=[GSI("GSI1", "G1PK", "G1SK")], type_attribute="Type"
)


@typed.model(pk="O#{order_id}", sk="O#{order_id}", GSI1=("C#{customer}", "O#{order_id}"))
@attrs.define
class Order:
    order_id: str
    customer: str = "c"


@typed.model(pk="O#{order_id}", sk="L#{line}", entity="line")
@attrs.define
class Line:
    order_id: str
    line: str


# Same keys as Line: only the type attribute tells them apart.
@typed.model(pk="O#{order_id}", sk="L#{line}", entity="note")
@attrs.define
class Note:
    order_id: str
    line: str


ORDER, LINE, NOTE = info_of(Order), info_of(Line), info_of(Note)


def test_the_type_attribute_decides_first() -> None:
    classify = typed.classifier()
    note = NOTE.encode(Note("1", "2"))
    assert classify(note) is NOTE  # Line's templates fit too, and Line is declared first
    assert classify({**note, "Type": {"S": "Order"}}) is ORDER  # the keys are not asked
    assert classify({**note, "Type": {"S": "gone"}}) is None  # an entity no model has
    assert [LINE.matches(note), NOTE.matches(note), ORDER.matches(note)] == [False, True, False]


def test_items_without_the_type_attribute_are_decided_by_their_keys() -> None:
    classify = typed.classifier()
    line = LINE.encode(Line("1", "2"))
    del line["Type"]
    assert classify(line) is LINE  # the first declared model whose keys fit
    assert [LINE.matches(line), NOTE.matches(line), ORDER.matches(line)] == [True, True, False]
    order = {"PK": {"S": "O#1"}, "SK": {"S": "O#1"}}
    assert classify(order) is ORDER


def test_items_of_no_model() -> None:
    classify = typed.classifier()
    assert classify({"PK": {"S": "O#1"}, "SK": {"S": "X#1"}}) is None
    assert classify({"PK": {"S": "O#1"}}) is None  # no sort key
    assert classify({"PK": {"S": "O#1"}, "SK": {"N": "1"}}) is None  # not a string
    assert classify({"PK": {"S": "P#1"}, "SK": {"S": "L#1"}}) is None  # the partition differs
    assert typed.model_of({"PK": {"S": "P#1"}, "SK": {"S": "L#1"}}) is None


@pytest.mark.parametrize(
    "item",
    [
        {},
        {"SK": {"S": "O#1"}},  # no partition key
        {"PK": {"N": "1"}, "SK": {"S": "O#1"}},  # a key of another type
        {"PK": {"S": 1}, "SK": {"S": "O#1"}},  # a string that is not one
        {"PK": "O#1", "SK": "O#1"},  # not typed values
        {"PK": None, "SK": {"S": "O#1"}},
        {"PK": {"S": "O#1"}, "SK": {"S": ["O#1"]}},
    ],
    ids=repr,
)
@pytest.mark.parametrize("index", [None, "GSI1"])
def test_a_malformed_item_is_of_no_model(item: dict[str, object], index: str | None) -> None:
    assert typed.model_of(item, index) is None  # type: ignore[arg-type]
    assert untyped.model_of(item, index) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("stored", ["line", ["line"], {"N": "1"}, {"S": None}, {}])
def test_a_malformed_type_attribute_is_of_no_model(stored: object) -> None:
    assert typed.model_of({"PK": {"S": "O#1"}, "SK": {"S": "L#1"}, "Type": stored}) is None  # type: ignore[dict-item]


@pytest.mark.parametrize("item", ["O#1", None, [{"PK": {"S": "O#1"}}], 3])
def test_what_is_not_an_item_is_a_codec_error(item: object) -> None:
    with pytest.raises(CodecError, match=r"model_of takes an item, a mapping of attribute names"):
        typed.model_of(item)  # type: ignore[arg-type]


untyped = Table("untyped", pk="PK", sk="SK", indexes=[GSI("GSI1", "G1PK", "G1SK")])


@untyped.model(pk="O#{order_id}", sk="O#{order_id}", GSI1=("C#{customer}", "O#{order_id}"))
@attrs.define
class Bare:
    order_id: str
    customer: str = "c"


def test_an_index_holds_only_the_models_declared_in_it() -> None:
    classify = typed.classifier("GSI1")
    assert classify.models == (ORDER,)
    entry = {"G1PK": {"S": "C#c"}, "G1SK": {"S": "O#1"}, "PK": {"S": "O#1"}, "SK": {"S": "O#1"}}
    assert classify(entry) is ORDER
    assert classify({**entry, "Type": {"S": "line"}}) is None  # Line is in no GSI1 entry
    assert not LINE.matches({**entry, "Type": {"S": "line"}}, "GSI1")
    assert classify.tests(LINE).whole(entry) is False
    with pytest.raises(DefinitionError, match="index 'GSI9' is not declared"):
        typed.classifier("GSI9")


def test_a_query_tests_the_sort_key_a_scan_both_keys() -> None:
    plain = Table("plain")

    @plain.model(pk="A#{a}", sk="B#{b}")
    @attrs.define
    class Thing:
        a: str
        b: str

    tests = plain.classifier().tests(info_of(Thing))
    other_partition = {"pk": {"S": "Z#1"}, "sk": {"S": "B#2"}}
    assert tests.in_collection(other_partition)  # a Query named the partition already
    assert not tests.whole(other_partition)
    assert tests.shape == ("sk", "B#", "#", 1)  # inlined by the hot loop
    assert typed.classifier().tests(LINE).shape is None  # the type attribute decides first


def test_the_classifier_is_kept_until_a_model_is_declared() -> None:
    table = Table("grows")

    @table.model(pk="A#{a}", sk="A")
    @attrs.define
    class First:
        a: str

    before = table.classifier()
    assert table.classifier() is before
    item = {"pk": {"S": "B#1"}, "sk": {"S": "B"}}
    assert before(item) is None

    @table.model(pk="B#{b}", sk="B")
    @attrs.define
    class Second:
        b: str

    assert table.classifier() is not before
    assert table.classifier()(item) is info_of(Second)


# -- fields read back out of keys ----------------------------------------------------------------

shop = Table("shop", pk="PK", sk="SK", indexes=[GSI("GSI1", "G1PK", "G1SK")])


@shop.model(pk="S#{store}", sk="P#{sku}#{size}", GSI1=("T#{tag}", "N#{number:04d}"))
@attrs.define
class Product:
    store: str = dynorm.field(key_only=True)
    sku: str = dynorm.field(key_only=True)
    size: int = dynorm.field(key_only=True)
    tag: str | None = dynorm.field(key_only=True, default=None)
    number: int = dynorm.field(key_only=True, default=7)
    title: str = ""


PRODUCT = info_of(Product)


def _source() -> str:
    name = PRODUCT.codec.decode.__code__.co_filename
    return "".join(linecache.getlines(name))


def test_key_only_fields_are_parsed_by_the_generated_decoder() -> None:
    product = Product("50%", "a#b", 3, "red", 12, "shirt")
    item = PRODUCT.encode(product)
    assert item["PK"] == {"S": "S#50%25"}  # escaped in the key
    assert item["SK"] == {"S": "P#a%23b#3"}
    assert "store" not in item
    assert PRODUCT.codec.decode(item) == product  # no careful path needed
    source = _source()
    assert source.count("['PK']") == 1  # each key attribute parsed once per item
    assert source.count("'G1PK'") == 1


def test_an_index_key_left_out_gives_the_defaults() -> None:
    product = Product("s", "k", 1, None, 12, "shirt")
    item = PRODUCT.encode(product)
    assert "G1PK" not in item  # None leaves the index sparse
    # number lives only in the index key too, so it reads back as its default.
    assert PRODUCT.codec.decode(item) == Product("s", "k", 1, None, 7, "shirt")


def test_a_key_that_does_not_fit_falls_back_to_the_careful_path() -> None:
    item = PRODUCT.encode(Product("s", "k", 1))
    item["SK"] = {"S": "P#k"}  # one component short
    with pytest.raises(ValueError, match=r"does not fit the key template 'P#\{sku\}#\{size\}'"):
        PRODUCT.codec.decode(item)
    with pytest.raises(CodecError, match=r"Product: item PK='S#s', SK='P#k' lacks field 'sku'"):
        PRODUCT.decode(item)
    item["SK"] = {"S": "P#k#x"}  # not an int
    with pytest.raises(
        CodecError,
        match=r"field 'size' \(int\), read from key attribute 'SK', does not read as int "
        r"\(invalid literal for int",
    ):
        PRODUCT.decode(item)


def test_a_key_only_value_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(CodecError, match=r"Product\.size \(int\)"):
        PRODUCT.encode(Product("s", "k", "1"))  # type: ignore[arg-type]


def test_fields_other_tools_keep_only_in_keys_are_read_from_them() -> None:
    plain = Table("plain")

    @plain.model(pk="U#{user}", sk="D#{day}")
    @attrs.define
    class Visit:
        user: str
        day: datetime.date
        count: int = 0

    info = info_of(Visit)
    item = {"pk": {"S": "U#a%23b"}, "sk": {"S": "D#2026-01-02"}, "count": {"N": "3"}}
    with pytest.raises(KeyError):
        info.codec.decode(item)  # not key-only: the generated decoder reads attributes
    assert info.decode(item) == Visit("a#b", datetime.date(2026, 1, 2), 3)


# -- views ---------------------------------------------------------------------------------------

docs = Table("docs")


@docs.model(pk="D#{doc_id}", sk="D", ttl="expires")
@attrs.define
class Doc:
    doc_id: str = dynorm.field(key_only=True)
    title: str = ""
    expires: datetime.datetime | None = None
    tags: set[str] = attrs.Factory(set)


@attrs.define
class DocExpiry:
    doc_id: str
    expires: datetime.datetime | None
    tags: set[str]


def test_a_view_reads_a_ttl_field_as_epoch_seconds_and_key_only_fields_from_keys() -> None:
    info = info_of(Doc)
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    item = info.encode(Doc("d1", "t", when))
    assert item["expires"] == {"N": str(int(when.timestamp()))}
    assert "tags" not in item  # an empty set is left out
    view = view_of(info, DocExpiry)
    assert view.decode(item) == DocExpiry("d1", when, set())
    assert set(view.attributes) >= {"pk", "expires", "tags"}


def test_an_item_read_without_its_table_key_is_named_by_its_index_key() -> None:
    item = PRODUCT.encode(Product("s", "k", 1, "red"))
    del item["PK"], item["SK"]
    with pytest.raises(CodecError, match=r"Product: item G1PK='T#red', G1SK='N#0007' lacks field"):
        PRODUCT.decode(item)


def test_a_stored_value_of_another_type_names_the_attribute_and_what_it_holds() -> None:
    item = PRODUCT.encode(Product("s", "k", 1, "red"))
    item["title"] = {"N": "1"}  # another tool's number where the model keeps a str
    with pytest.raises(
        CodecError,
        match=r"Product: item PK='S#s', SK='P#k#1': attribute 'title' \(field 'title': str\) "
        r"holds \{'N': '1'\}, which does not read as str",
    ):
        PRODUCT.decode(item)
