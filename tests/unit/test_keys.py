"""Key templates: format, parse, prefix, overlap and alignment (``dynorm.core.keys``)."""

import datetime
import decimal
import enum
import uuid

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dynorm import DefinitionError, KeyTemplate, KeyTemplateError
from dynorm.core.keys import escape, key_string, key_value_parser, unescape

# Text that is likely to contain the delimiter, the escape character and escape-like sequences.
tricky_text = st.lists(
    st.one_of(st.sampled_from(["#", "%", "2", "3", "5", "%23", "%25", "|"]), st.characters())
).map("".join)

LOCATION = KeyTemplate("{state}#{city}#{zip}")
USER = KeyTemplate("ORG#{org_name}#USER#{username}")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


# -- format / parse ------------------------------------------------------------------------------


def test_format_fills_literals_and_fields() -> None:
    assert USER.format({"org_name": "MICROSOFT", "username": "BILLGATES"}) == (
        "ORG#MICROSOFT#USER#BILLGATES"
    )
    assert USER.fields == ("org_name", "username")


def test_format_escapes_delimiter_and_escape_char() -> None:
    key = USER.format({"org_name": "A#B", "username": "50%"})
    assert key == "ORG#A%23B#USER#50%25"
    assert USER.parse(key) == {"org_name": "A#B", "username": "50%"}


def test_format_missing_field_names_it() -> None:
    with pytest.raises(KeyTemplateError, match=r"needs 'username'; got \['org_name'\]"):
        USER.format({"org_name": "X"})


def test_parse_rejects_keys_of_another_shape() -> None:
    assert USER.parse("ORG#X#TICKET#1") is None
    assert USER.parse("ORG#X#USER#A#B") is None  # one segment too many
    assert USER.parse("ORG#X#USER") is None
    assert not USER.matches("ORG#X#USER#A#B")
    assert USER.matches("ORG#X#USER#")  # an empty value is still a value


def test_segment_with_prefix_and_suffix() -> None:
    template = KeyTemplate("V{version}x#{name}")
    key = template.format({"version": 3, "name": "n"})
    assert key == "V3x#n"
    assert template.parse(key) == {"version": "3", "name": "n"}
    assert template.parse("W3x#n") is None


def test_literal_template() -> None:
    template = KeyTemplate("#METADATA")
    assert template.is_literal
    assert template.fields == ()
    assert template.format({}) == "#METADATA"
    assert template.parse("#METADATA") == {}
    assert template.literal_prefix == "#METADATA"


def test_literal_braces_are_unescaped() -> None:
    template = KeyTemplate("{{x}}#{name}")
    assert template.format({"name": "n"}) == "{x}#n"
    assert template.parse("{x}#n") == {"name": "n"}


def test_format_spec_round_trips() -> None:
    template = KeyTemplate("N#{n:06d}")
    key = template.format({"n": 42})
    assert key == "N#000042"
    parsed = template.parse(key)
    assert parsed == {"n": "000042"}
    assert key_value_parser(int)(parsed["n"]) == 42


@given(st.lists(st.integers(min_value=0, max_value=999_999), min_size=2, max_size=20))
def test_zero_padded_keys_sort_like_their_numbers(numbers: list[int]) -> None:
    template = KeyTemplate("N#{n:06d}")
    keys = [template.format({"n": n}) for n in numbers]
    assert sorted(keys) == [template.format({"n": n}) for n in sorted(numbers)]
    for key, n in zip(keys, numbers, strict=True):
        parsed = template.parse(key)
        assert parsed is not None
        assert int(parsed["n"]) == n


def test_custom_delimiter_escapes_only_itself() -> None:
    template = KeyTemplate("A|{x}|{y}", delimiter="|")
    key = template.format({"x": "a#b", "y": "c|d"})
    assert key == "A|a#b|c%7Cd"
    assert template.parse(key) == {"x": "a#b", "y": "c|d"}


def test_non_ascii_delimiter() -> None:
    template = KeyTemplate("A§{x}", delimiter="§")
    key = template.format({"x": "1§2%"})
    assert "§" not in key.removeprefix("A§")
    assert template.parse(key) == {"x": "1§2%"}


tail_values = st.one_of(
    tricky_text,
    st.integers(),
    st.booleans(),
    st.dates(),
    st.sampled_from(list(Color)),
    st.decimals(allow_nan=False, allow_infinity=False),
)


@given(st.sampled_from(["#", "|", "§", "/"]), tricky_text, tail_values)
def test_one_trailing_field_formats_as_the_segments_join(
    delimiter: str, lead: str, value: object
) -> None:
    # Templates whose one field comes last take a shortcut: the same text as the join.
    assume(delimiter not in lead and not set(lead) & set("{}"))
    for source, head in [
        (f"A{delimiter}{{v}}", f"A{delimiter}"),
        (f"A{delimiter}B{delimiter}x{{v}}", f"A{delimiter}B{delimiter}x"),
        (f"{lead}{{v}}", lead),
        ("{v}", ""),
    ]:
        template = KeyTemplate(source, delimiter=delimiter)
        expected = head + escape(key_string(value), delimiter)
        if expected:
            assert template.format({"v": value}) == expected
            assert template.parse(expected) is not None
        else:
            with pytest.raises(KeyTemplateError, match="gives an empty key"):
                template.format({"v": value})
        with pytest.raises(KeyTemplateError, match=r"needs 'v'; got \['w'\]"):
            template.format({"w": value})


def test_one_trailing_field_with_a_spec() -> None:
    template = KeyTemplate("N#{n:08d}")
    assert template.format({"n": 42}) == "N#00000042"
    assert KeyTemplate("{v}").format({"v": "a#b"}) == "a%23b"


# -- hypothesis: exact round trips and no collisions ---------------------------------------------


@given(tricky_text, tricky_text)
def test_parse_inverts_format_exactly(org: str, user: str) -> None:
    values = {"org_name": org, "username": user}
    key = USER.format(values)
    assert USER.matches(key)
    assert USER.parse(key) == values


# Any delimiter but %, digits and braces (refused), and the letters of the template text below.
delimiters = st.characters(exclude_characters="%0123456789{}ABxy", exclude_categories=["Cs"])


@given(delimiters, tricky_text, tricky_text)
def test_round_trip_with_any_allowed_delimiter(delimiter: str, x: str, y: str) -> None:
    template = KeyTemplate(f"A{delimiter}{{x}}{delimiter}B{{y}}", delimiter=delimiter)
    key = template.format({"x": x, "y": y})
    assert template.parse(key) == {"x": x, "y": y}
    assert key.count(delimiter) == f"A{delimiter}{delimiter}B".count(delimiter)


@given(tricky_text, delimiters)
def test_escaped_value_never_contains_delimiter(value: str, delimiter: str) -> None:
    KeyTemplate("{x}", delimiter=delimiter)  # every delimiter tried here is accepted
    escaped = escape(value, delimiter)
    assert delimiter not in escaped
    assert unescape(escaped, delimiter) == value


@given(
    st.tuples(tricky_text, tricky_text, tricky_text),
    st.tuples(tricky_text, tricky_text, tricky_text),
)
def test_different_values_make_different_keys(
    a: tuple[str, str, str], b: tuple[str, str, str]
) -> None:
    assume(a != b)
    names = ("state", "city", "zip")
    assert LOCATION.format(dict(zip(names, a, strict=True))) != LOCATION.format(
        dict(zip(names, b, strict=True))
    )


@given(tricky_text, tricky_text, tricky_text.filter(bool), tricky_text)
def test_prefix_never_matches_a_longer_component(
    state: str, city: str, extra: str, zip_code: str
) -> None:
    prefix = LOCATION.prefix({"state": state, "city": city})
    longer = LOCATION.format({"state": state, "city": city + extra, "zip": zip_code})
    assert not longer.startswith(prefix)
    same = LOCATION.format({"state": state, "city": city, "zip": zip_code})
    assert same.startswith(prefix)


@given(
    st.tuples(tricky_text, tricky_text),
    st.tuples(tricky_text, tricky_text, tricky_text),
)
def test_prefix_selects_exactly_the_matching_components(
    given_values: tuple[str, str], key_values: tuple[str, str, str]
) -> None:
    prefix = LOCATION.prefix({"state": given_values[0], "city": given_values[1]})
    key = LOCATION.format(dict(zip(("state", "city", "zip"), key_values, strict=True)))
    assert key.startswith(prefix) == (key_values[:2] == given_values)


# -- prefixes ------------------------------------------------------------------------------------


def test_prefix_ends_at_a_component_boundary() -> None:
    assert LOCATION.prefix({"state": "WA", "city": "SEATTLE"}) == "WA#SEATTLE#"
    assert LOCATION.prefix({"state": "WA"}) == "WA#"
    assert LOCATION.prefix({}) == ""
    heights = LOCATION.format({"state": "WA", "city": "SEATTLEHEIGHTS", "zip": "98101"})
    assert not heights.startswith(LOCATION.prefix({"state": "WA", "city": "SEATTLE"}))


def test_prefix_includes_the_next_literal() -> None:
    assert USER.prefix({"org_name": "MS"}) == "ORG#MS#USER#"
    assert USER.prefix({}) == "ORG#"
    assert KeyTemplate("USER#{username}").prefix({}) == "USER#"
    assert KeyTemplate("#METADATA#{game_id}").prefix({}) == "#METADATA#"


def test_prefix_escapes_values() -> None:
    assert LOCATION.prefix({"state": "W#A"}) == "W%23A#"


def test_prefix_with_every_field_is_the_key() -> None:
    values = {"state": "WA", "city": "SEATTLE", "zip": "98101"}
    assert LOCATION.prefix(values) == LOCATION.format(values)


def test_later_component_without_earlier_one_is_an_error() -> None:
    with pytest.raises(KeyTemplateError, match=r"'city' was given without 'state'") as info:
        LOCATION.prefix({"city": "SEATTLE"})
    assert "state, city, zip" in str(info.value)
    with pytest.raises(KeyTemplateError, match=r"'zip' was given without 'city'"):
        LOCATION.prefix({"state": "WA", "zip": "98101"})


def test_literal_prefix() -> None:
    assert USER.literal_prefix == "ORG#"
    assert LOCATION.literal_prefix == ""


def test_covers() -> None:
    assert USER.covers({"org_name": 1, "username": 2, "other": 3})
    assert not USER.covers({"org_name": 1})
    assert KeyTemplate("#METADATA").covers(set())


# -- definition errors ---------------------------------------------------------------------------


def test_two_placeholders_in_one_segment() -> None:
    with pytest.raises(DefinitionError, match=r"segment '\{a\}\{b\}' holds two placeholders"):
        KeyTemplate("X#{a}{b}")


def test_duplicate_field() -> None:
    with pytest.raises(DefinitionError, match="names a field twice"):
        KeyTemplate("{a}#{a}")


@pytest.mark.parametrize("delimiter", ["", "##", "%", "0", "2", "5", "9", "{", "}"])
def test_bad_delimiter(delimiter: str) -> None:
    with pytest.raises(DefinitionError, match="delimiter must be one character"):
        KeyTemplate("{a}", delimiter=delimiter)


@pytest.mark.parametrize("source", ["X#{}", "X#{0}", "X#{a.b}"])
def test_placeholder_must_name_a_field(source: str) -> None:
    with pytest.raises(DefinitionError, match="placeholders must name a field"):
        KeyTemplate(source)


def test_conversion_is_rejected() -> None:
    with pytest.raises(DefinitionError, match="conversions like !r are not allowed"):
        KeyTemplate("X#{a!r}")


@pytest.mark.parametrize("source", ["X#{a", "X#a}"])
def test_unbalanced_braces(source: str) -> None:
    with pytest.raises(DefinitionError, match="key template"):
        KeyTemplate(source)


# -- overlap and alignment -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("USER#{u}", "USER#{x}", True),
        ("USER#{u}", "TICKET#{t}", False),
        ("{a}#{b}", "{a}", False),
        ("USER{a}", "USER", True),
        ("USER{a}", "US", False),
        ("A{x}", "{y}B", True),
        ("A{x}", "B{y}", False),
        ("{x}A", "{y}B", False),
        ("#METADATA#{game_id}", "USER#{username}", False),
        ("#METADATA#{game_id}", "#METADATA#{other}", True),
        ("METADATA#{name}", "USER#{username}", False),
    ],
)
def test_could_overlap(a: str, b: str, expected: bool) -> None:
    assert KeyTemplate(a).could_overlap(KeyTemplate(b)) is expected
    assert KeyTemplate(b).could_overlap(KeyTemplate(a)) is expected


@given(tricky_text, tricky_text)
def test_overlap_is_conservative(u: str, x: str) -> None:
    # Whenever two templates produce the same key, could_overlap must have said so.
    a, b = KeyTemplate("USER{u}"), KeyTemplate("US{x}")
    if a.format({"u": u}) == b.format({"x": x}):
        assert a.could_overlap(b)


def test_align_maps_child_fields_to_parent_fields() -> None:
    parent = KeyTemplate("ORG#{name}")
    assert parent.align(KeyTemplate("ORG#{org_name}")) == {"org_name": "name"}
    assert USER.align(KeyTemplate("ORG#{o}#USER#{u}")) == {"o": "org_name", "u": "username"}


@pytest.mark.parametrize(
    "child",
    ["COMPANY#{org}", "ORG#{org}#X", "ORG", "{org}#{x}", "ORG#x{org}", "ORG#{org:>5}"],
)
def test_align_refuses_other_shapes(child: str) -> None:
    assert KeyTemplate("ORG#{name}").align(KeyTemplate(child)) is None


# -- key text of typed values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tp", "text"),
    [
        ("x", str, "x"),
        (12345678901234567890123, int, "12345678901234567890123"),
        (-7, int, "-7"),
        (decimal.Decimal("1.50"), decimal.Decimal, "1.50"),
        (0.1, float, "0.1"),
        (True, bool, "true"),
        (False, bool, "false"),
        (uuid.UUID(int=1), uuid.UUID, "00000000-0000-0000-0000-000000000001"),
        (datetime.date(2024, 2, 29), datetime.date, "2024-02-29"),
        (
            datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.UTC),
            datetime.datetime,
            "2024-01-02T03:04:05.000006+00:00",
        ),
        (Color.BLUE, Color, "blue"),
        (Level.HIGH, Level, "2"),
    ],
)
def test_key_string_round_trips_through_its_parser(value: object, tp: object, text: str) -> None:
    assert key_string(value) == text
    back = key_value_parser(tp)(text)
    assert back == value
    assert type(back) is type(value)


def test_key_string_rejects_other_types() -> None:
    with pytest.raises(KeyTemplateError, match="a list value cannot be part of a key"):
        key_string([1])


def test_bool_parser_rejects_other_text() -> None:
    with pytest.raises(ValueError, match="expected 'true' or 'false'"):
        key_value_parser(bool)("True")


def test_key_value_parser_rejects_unsupported_types() -> None:
    with pytest.raises(DefinitionError, match="cannot be part of a key template"):
        key_value_parser(list[str])


def test_unknown_enum_text_is_a_lookup_error() -> None:
    with pytest.raises(KeyError):
        key_value_parser(Color)("green")


def test_align_leading_maps_a_nested_child_sort_key() -> None:
    parent = KeyTemplate("USER#{username}")
    assert parent.align_leading(KeyTemplate("USER#{login}#DEVICE#{serial}")) == {
        "login": "username"
    }
    assert parent.align_leading(KeyTemplate("USER#{login}")) is None  # not longer: not nested
    assert KeyTemplate("order#{id}").align_leading(KeyTemplate("item#{id}#x")) is None


def test_a_key_cannot_be_empty() -> None:
    template = KeyTemplate("{country}")
    with pytest.raises(KeyTemplateError, match=r"empty key for \{'country': ''\}"):
        template.format({"country": ""})
    assert template.prefix({}) == ""  # an empty *prefix* only means "no sort key condition"
