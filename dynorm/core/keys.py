"""Key templates such as ``"ORG#{org_name}#USER#{username}"``: format, parse back, prefix.

A template is split at the delimiter into *segments*. Each segment holds literal text and at most
one ``{field}`` placeholder. Field values are escaped so that they never contain the delimiter:
a value can therefore never add a segment, which keeps three promises at once:

* an item can never land in (or be read from) another item collection,
* parsing a stored key back to field values is unambiguous,
* a prefix built from leading components always ends at a component boundary, so a query for
  ``SEATTLE`` never matches ``SEATTLEHEIGHTS``.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import enum
import re
import string
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal

import attrs
import msgspec

from .errors import DefinitionError, KeyTemplateError

__all__ = [
    "KEY_TYPES",
    "SHARD",
    "KeyFields",
    "KeyTemplate",
    "KeyType",
    "escape",
    "key_attribute_value",
    "key_string",
    "key_text",
    "key_value_parser",
    "number_order",
    "shard_number",
    "typed_key_text",
    "unescape",
]

#: A key attribute's DynamoDB type: string, number or binary.
KeyType = Literal["S", "N", "B"]
KEY_TYPES: Final = ("S", "N", "B")

_ESCAPE_CHAR: Final = "%"

#: The placeholder a sharded partition key template holds (``"POST#{post_id}#{shard}"``): not a
#: field; dynorm fills it with the item's shard number (see :func:`shard_number`).
SHARD: Final = "shard"


def shard_number(texts: Iterable[str], shards: int) -> int:
    """The shard (0 .. shards-1) of an item whose primary key fields have the key ``texts``.

    CRC-32 of the texts' UTF-8, joined by NUL, modulo ``shards``: the same in every process and
    on every machine (Python's ``hash`` is salted per process), so an item's shard is computed
    again from its own key, never looked up.
    """
    if shards == 1:
        return 0
    return zlib.crc32("\0".join(texts).encode()) % shards


def _percent(char: str) -> str:
    return "".join(f"%{b:02X}" for b in char.encode())


def escape(value: str, delimiter: str) -> str:
    """Escape ``value`` so it contains no ``delimiter``: ``%`` and the delimiter are %-encoded."""
    if _ESCAPE_CHAR not in value and delimiter not in value:
        return value  # the common case costs one scan and no copy
    return value.replace(_ESCAPE_CHAR, "%25").replace(delimiter, _percent(delimiter))


def unescape(value: str, delimiter: str) -> str:
    """Undo :func:`escape`."""
    if _ESCAPE_CHAR not in value:
        return value
    return value.replace(_percent(delimiter), delimiter).replace("%25", _ESCAPE_CHAR)


def key_string(value: object, spec: str = "") -> str:
    """The text a field value contributes to a key, before escaping.

    Datetimes and dates use ISO 8601, which sorts chronologically for values in one time zone.
    """
    if spec:
        return format(value, spec)
    if isinstance(value, str):
        return value
    if isinstance(value, enum.Enum):
        return key_string(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    raise KeyTemplateError(
        f"a {type(value).__name__} value cannot be part of a key; use str, int, Decimal, "
        "bool, date, datetime, UUID or an Enum of those"
    )


def _parse_bool(text: str) -> bool:
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(f"expected 'true' or 'false', got {text!r}")


def key_value_parser(tp: object, kind: KeyType = "S") -> Callable[[str], object]:
    """A function turning key text back into a value of type ``tp`` (the reverse of key_string).

    A binary (B) key's text is base64 (or, read by botocore, the bytes themselves).
    """
    if kind == "B" and tp is bytes:
        return _parse_binary
    if tp is str or tp is Any:
        return str
    if tp is bool:
        return _parse_bool
    if tp in (int, float, decimal.Decimal, uuid.UUID):
        return tp
    if tp is datetime.datetime:
        return datetime.datetime.fromisoformat
    if tp is datetime.date:
        return datetime.date.fromisoformat
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_parser(tp)
    raise DefinitionError(f"a field of type {tp!r} cannot be part of a key template")


def typed_key_text(value: object) -> str:
    """The key text of a number (N) or binary (B) key attribute's value: digits, or base64."""
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(value).decode("ascii")
    return key_string(value)


def _parse_binary(text: str | bytes) -> bytes:
    if isinstance(text, bytes):
        return text
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError(f"{text!r} is not base64 text") from None


def key_attribute_value(kind: KeyType, text: str) -> dict[str, Any]:
    """The AttributeValue of a key attribute of type ``kind`` holding the key text ``text``.

    Key text is what templates make and parse: the string itself for S, the number's text for
    N, base64 for B (sent as bytes, which both request paths write as base64).
    """
    if kind == "S":
        return {"S": text}
    if kind == "N":
        return {"N": text}
    return {"B": base64.b64decode(text)}


def key_text(value: Mapping[str, Any] | None) -> str | None:
    """The key text of a stored key attribute (S, N or B), None if it is none of those.

    A binary comes as bytes from botocore and as base64 text from dynorm's fast path; its key
    text is base64 either way.
    """
    if value is None:
        return None
    text = value.get("S")
    if text is not None:
        return text if isinstance(text, str) else None
    text = value.get("N")
    if text is not None:
        return text if isinstance(text, str) else None
    binary = value.get("B")
    if isinstance(binary, bytes | bytearray):
        return base64.b64encode(binary).decode("ascii")
    return binary if isinstance(binary, str) else None


def number_order(text: str) -> decimal.Decimal:
    """A number key's text as it sorts (DynamoDB compares N keys by value)."""
    return decimal.Decimal(text)


def _enum_parser(tp: type[enum.Enum]) -> Callable[[str], object]:
    """Members by their key text; DefinitionError if a key could not hold or tell them apart."""
    members: dict[str, enum.Enum] = {}
    for member in tp:
        try:
            text = key_string(member.value)
        except KeyTemplateError as exc:
            raise DefinitionError(f"{tp.__name__}.{member.name}: {exc}") from None
        same = members.setdefault(text, member)
        if same is not member:
            raise DefinitionError(
                f"{tp.__name__}.{same.name} ({same.value!r}) and {tp.__name__}.{member.name} "
                f"({member.value!r}) are both written as {text!r} in a key, so it could not tell "
                "them apart; give the members values that differ as text, or keep the field out "
                "of key templates"
            )
    return members.__getitem__


class _Segment(msgspec.Struct, frozen=True):
    """Text between two delimiters: ``prefix{field:spec}suffix`` or a plain literal."""

    prefix: str
    field: str | None = None
    spec: str = ""
    suffix: str = ""

    def could_equal(self, other: _Segment) -> bool:
        """Whether some values could make the two segments produce the same text."""
        if self.field is None and other.field is None:
            return self.prefix == other.prefix
        if self.field is None:
            return other.could_equal(self)
        if other.field is None:
            text = other.prefix
            return (
                len(text) >= len(self.prefix) + len(self.suffix)
                and text.startswith(self.prefix)
                and text.endswith(self.suffix)
            )
        return (self.prefix.startswith(other.prefix) or other.prefix.startswith(self.prefix)) and (
            self.suffix.endswith(other.suffix) or other.suffix.endswith(self.suffix)
        )


def _align_segments(
    mine: tuple[_Segment, ...], theirs: tuple[_Segment, ...]
) -> dict[str, str] | None:
    mapping: dict[str, str] = {}
    for a, b in zip(mine, theirs, strict=True):
        if (a.field is None) != (b.field is None):
            return None
        if (a.prefix, a.suffix, a.spec) != (b.prefix, b.suffix, b.spec):
            return None
        if a.field is not None and b.field is not None:
            mapping[b.field] = a.field
    return mapping


@attrs.frozen(eq=False)
class KeyTemplate:
    """A reversible key template such as ``"{state}#{city}#{zip}"``."""

    source: str
    delimiter: str = "#"
    #: The key is the field's value itself (``"{site}"`` on the field's own attribute): nothing
    #: is escaped, since no delimiter structure needs protecting, and any text fits.
    raw: bool = attrs.field(default=False, kw_only=True)
    segments: tuple[_Segment, ...] = attrs.field(init=False)
    #: The fields the template holds, in order (``{shard}`` is not one).
    fields: tuple[str, ...] = attrs.field(init=False)
    #: The index of the segment holding ``{shard}``, None when the template is not sharded.
    shard_at: int | None = attrs.field(init=False)
    _shard_group: int | None = attrs.field(init=False, repr=False)
    #: The pattern of the keys this template makes, compiled on first use (``_fullmatch``).
    _pattern: str = attrs.field(init=False, repr=False)
    #: ``re.compile(_pattern).fullmatch``: until first called, a function that compiles the
    #: pattern, puts the compiled ``fullmatch`` here in its place and calls it, so declaring a
    #: model compiles no regex and a template in use calls the compiled one directly.
    _fullmatch: Callable[[str], re.Match[str] | None] = attrs.field(init=False, repr=False)
    _literal_prefix: str = attrs.field(init=False, repr=False)
    #: True when a key fits iff it opens with the literal prefix and has the template's number
    #: of delimiters: the last segment is a bare placeholder and all before it are literal
    #: (``USER#{username}``, ``item#{id}``). Matching such keys needs no regex.
    _tail_only: bool = attrs.field(init=False, repr=False)
    #: For a tail-only template, the key's text before the last segment (literals and their
    #: delimiters): its keys are this and the last segment's text.
    _lead: str = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # The delimiter must not occur in the escapes themselves ("%25", "%23"): a digit would
        # reappear in an escaped value and could split it. Braces would split placeholders.
        if len(self.delimiter) != 1 or self.delimiter in _percent(self.delimiter) + "%25{}":
            raise DefinitionError(
                f"delimiter must be one character other than {_ESCAPE_CHAR!r}, a digit or a "
                f"brace; got {self.delimiter!r}"
            )
        segments = tuple(self._parse_segment(s) for s in self.source.split(self.delimiter))
        placeholders = tuple(s.field for s in segments if s.field is not None)
        if len(set(placeholders)) != len(placeholders):
            raise DefinitionError(
                f"key template {self.source!r} names a field twice; each field may appear once"
            )
        fields = tuple(f for f in placeholders if f != SHARD)
        shard_at = next((i for i, s in enumerate(segments) if s.field == SHARD), None)
        if shard_at is not None and self.raw:
            raise DefinitionError(
                f"key template {self.source!r}: {{shard}} goes with other text, as in "
                "'POST#{post_id}#{shard}'"
            )
        if self.raw and (
            len(segments) != 1
            or segments[0].field is None
            or segments[0].spec
            or segments[0].prefix
            or segments[0].suffix
        ):
            raise DefinitionError(f"key template {self.source!r} is not a bare field: not raw")
        pattern = (
            "(.*)"
            if self.raw
            else re.escape(self.delimiter).join(
                re.escape(s.prefix)
                if s.field is None
                else f"{re.escape(s.prefix)}({self._group(s)}){re.escape(s.suffix)}"
                for s in segments
            )
        )
        object.__setattr__(self, "segments", segments)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "shard_at", shard_at)
        # The regex group of the shard among the placeholders' groups (None: not sharded).
        object.__setattr__(
            self, "_shard_group", placeholders.index(SHARD) if shard_at is not None else None
        )
        object.__setattr__(self, "_pattern", pattern)
        object.__setattr__(self, "_fullmatch", self._compile_and_fullmatch)
        object.__setattr__(self, "_literal_prefix", self.prefix({}))
        last = segments[-1]
        tail_only = all(s.field is None for s in segments[:-1]) and not last.suffix
        object.__setattr__(
            self,
            "_tail_only",
            tail_only and last.field is not None and last.field != SHARD and not self.raw,
        )
        lead = self.delimiter.join(s.prefix for s in segments[:-1])
        object.__setattr__(self, "_lead", lead + self.delimiter if len(segments) > 1 else "")

    def _group(self, segment: _Segment) -> str:
        """The regex of a placeholder's text: the shard's digits, else no delimiter."""
        if segment.field == SHARD and not segment.spec:
            return "[0-9]+"
        return f"[^{re.escape(self.delimiter)}]*"

    @property
    def sharded(self) -> bool:
        """Whether the template holds ``{shard}``, which dynorm fills (see ``shard_number``)."""
        return self.shard_at is not None

    def without_shard(self) -> KeyTemplate:
        """The template with its ``{shard}`` segment left out: the collection it shards.

        ``"POST#{post_id}#{shard}"`` shards ``"POST#{post_id}"``.
        """
        if self.shard_at is None:
            return self
        parts = self.source.split(self.delimiter)
        del parts[self.shard_at]
        return KeyTemplate(self.delimiter.join(parts), self.delimiter)

    def _groups(self, match: re.Match[str]) -> tuple[str, ...]:
        """The field texts of a match, in field order (the shard's left out)."""
        groups = match.groups()
        if self._shard_group is None:
            return groups
        return groups[: self._shard_group] + groups[self._shard_group + 1 :]

    def _compile_and_fullmatch(self, key: str) -> re.Match[str] | None:
        fullmatch = re.compile(self._pattern, re.DOTALL).fullmatch
        object.__setattr__(self, "_fullmatch", fullmatch)
        return fullmatch(key)

    def _parse_segment(self, text: str) -> _Segment:
        try:
            parts = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise DefinitionError(f"key template {self.source!r}: {exc}") from None
        placeholders = [p for p in parts if p[1] is not None]
        if not placeholders:
            return _Segment(prefix=text.replace("{{", "{").replace("}}", "}"))
        if len(placeholders) > 1:
            raise DefinitionError(
                f"key template {self.source!r}: segment {text!r} holds two placeholders; "
                f"separate them with the delimiter {self.delimiter!r} so they can be parsed back"
            )
        literal, field, spec, conversion = parts[0]
        if conversion:
            raise DefinitionError(
                f"key template {self.source!r}: conversions like !r are not allowed"
            )
        if not field or not field.isidentifier():
            raise DefinitionError(
                f"key template {self.source!r}: placeholders must name a field, like {{name}}"
            )
        suffix = "".join(p[0] for p in parts[1:])
        return _Segment(prefix=literal, field=field, spec=spec or "", suffix=suffix)

    @property
    def is_literal(self) -> bool:
        """True for templates without placeholders (a constant key such as ``"#METADATA"``)."""
        return not self.fields

    @property
    def literal_prefix(self) -> str:
        """The prefix every key made by this template starts with."""
        return self._literal_prefix

    def escaped(self, text: str) -> str:
        """Component text as this template stores it (escaped, unless the template is raw)."""
        return text if self.raw else escape(text, self.delimiter)

    def _text(self, segment: _Segment, value: object) -> str:
        # A str is the common case: it skips key_string's type tests.
        if type(value) is str and not segment.spec:
            text = value
        elif self.raw:  # one field alone: a binary key's value is written as base64
            text = typed_key_text(value)
        else:
            text = key_string(value, segment.spec)
        if not self.raw and (_ESCAPE_CHAR in text or self.delimiter in text):
            text = escape(text, self.delimiter)
        return segment.prefix + text + segment.suffix

    def format(self, values: Mapping[str, object], shard: int | None = None) -> str:
        """The full key for ``values``; every field of the template must be present.

        A sharded template also needs its ``shard`` number (``ModelInfo.key_value`` computes it
        from the item's key).
        """
        if self._tail_only:
            # The common shape (``item#{id}``): one field, after literals; no loop.
            last = self.segments[-1]
            if last.field is not None and last.field in values:
                key = self._lead + self._text(last, values[last.field])
                if key:
                    return key
        out = []
        for seg in self.segments:
            if seg.field is None:
                out.append(seg.prefix)
                continue
            if seg.field == SHARD:
                if shard is None:
                    raise KeyTemplateError(
                        f"key template {self.source!r} holds {{shard}}, which dynorm fills from "
                        "the item's key: address one item by its key fields (db.get, db.put ...) "
                        "or read the sharded collection through its relationship"
                    )
                out.append(seg.prefix + format(shard, seg.spec) + seg.suffix)
                continue
            try:
                value = values[seg.field]
            except KeyError:
                raise KeyTemplateError(
                    f"key template {self.source!r} needs {seg.field!r}; "
                    f"got {sorted(values) or 'nothing'}"
                ) from None
            out.append(self._text(seg, value))
        key = self.delimiter.join(out)
        if not key:
            # DynamoDB refuses empty key attributes; say which value made it empty.
            raise KeyTemplateError(
                f"key template {self.source!r} gives an empty key for "
                f"{ {f: values[f] for f in self.fields} }; DynamoDB keys cannot be empty"
            )
        return key

    def prefix(self, values: Mapping[str, object]) -> str:
        """The longest prefix fixed by the leading fields present in ``values``.

        The prefix stops at a component boundary: after the last complete segment comes the
        delimiter and the literal text that opens the next segment. Fields must be given in order:
        a later field without an earlier one is an error, since it cannot narrow a prefix.
        """
        out: list[str] = []
        for i, seg in enumerate(self.segments):
            if seg.field is None:
                out.append(seg.prefix)
                continue
            if seg.field not in values:
                later = [
                    s.field
                    for s in self.segments[i + 1 :]
                    if s.field is not None and s.field in values
                ]
                if later:
                    raise KeyTemplateError(
                        f"key template {self.source!r}: {later[0]!r} was given without "
                        f"{seg.field!r}; give the components in order: {', '.join(self.fields)}"
                    )
                out.append(seg.prefix)
                return self.delimiter.join(out)
            out.append(self._text(seg, values[seg.field]))
        return self.delimiter.join(out)

    def covers(self, names: object) -> bool:
        """Whether every field of the template is in ``names`` (a set or mapping)."""
        return all(f in names for f in self.fields)  # type: ignore[operator]

    def tail_only_shape(self) -> tuple[str, str, int] | None:
        """(literal prefix, delimiter, delimiter count) when those alone decide a match.

        True of templates whose only placeholder ends them (``USER#{username}``); per-item
        loops inline this test instead of calling :meth:`matches`.
        """
        if not self._tail_only:
            return None
        return self._literal_prefix, self.delimiter, len(self.segments) - 1

    def matches(self, key: str) -> bool:
        """Whether ``key`` could have been made by this template."""
        if self._tail_only:
            # The hot path of telling mixed results apart: two string scans, no regex.
            return (
                key.startswith(self._literal_prefix)
                and key.count(self.delimiter) == len(self.segments) - 1
            )
        return self._fullmatch(key) is not None

    def parse(self, key: str) -> dict[str, str] | None:
        """The unescaped text of each field in ``key``; None if the key does not fit."""
        match = self._fullmatch(key)
        if match is None:
            return None
        if self.raw:
            return {self.fields[0]: key}
        return {
            f: unescape(text, self.delimiter)
            for f, text in zip(self.fields, self._groups(match), strict=True)
        }

    def shard_of(self, key: str) -> int | None:
        """The shard number a key of this sharded template holds; None if it does not fit."""
        match = self._fullmatch(key)
        if match is None or self._shard_group is None:
            return None
        try:
            return int(match.groups()[self._shard_group])
        except ValueError:
            return None

    def texts(self, key: str) -> tuple[str, ...]:
        """The unescaped text of each field in ``key``, in order; ValueError if it does not fit.

        What generated decoders call to read fields kept only inside keys (see KeyFields).
        """
        if self._tail_only:
            prefix, delimiter = self._literal_prefix, self.delimiter
            if key.startswith(prefix) and key.count(delimiter) == len(self.segments) - 1:
                text = key[len(prefix) :]
                return (text if _ESCAPE_CHAR not in text else unescape(text, delimiter),)
        elif self.raw:
            return (key,)
        else:
            match = self._fullmatch(key)
            if match is not None:
                return tuple(unescape(text, self.delimiter) for text in self._groups(match))
        raise ValueError(f"{key!r} does not fit the key template {self.source!r}")

    def could_overlap(self, other: KeyTemplate) -> bool:
        """Whether some values could make both templates produce the same key."""
        return len(self.segments) == len(other.segments) and all(
            a.could_equal(b) for a, b in zip(self.segments, other.segments, strict=True)
        )

    def align(self, other: KeyTemplate) -> dict[str, str] | None:
        """Map each field of ``other`` to the field of ``self`` in the same position.

        Returns None unless both templates have the same shape (same literals, placeholders in the
        same places), which is what "the child's key is made from the parent's fields" means.
        """
        if len(self.segments) != len(other.segments):
            return None
        return _align_segments(self.segments, other.segments)

    def align_leading(self, other: KeyTemplate) -> dict[str, str] | None:
        """Like :meth:`align`, for a longer ``other`` that opens with this template's segments.

        ``USER#{username}`` opens ``USER#{username}#DEVICE#{serial}``: a child sort key nested
        under its parent's, as in a hierarchy kept in one partition.
        """
        if len(other.segments) <= len(self.segments):
            return None
        return _align_segments(self.segments, other.segments[: len(self.segments)])

    def __repr__(self) -> str:
        return f"KeyTemplate({self.source!r})"


class KeyFields(msgspec.Struct, frozen=True, eq=False):
    """The fields one key attribute holds, and how to read them back out of its text.

    ``parsers`` maps each field of ``template``, in template order, to the function turning its
    key text into the field's value. ``always``: every item has the attribute (a table key); an
    index key is absent from items left out of the index.
    """

    attribute: str
    template: KeyTemplate
    parsers: Mapping[str, Callable[[str], object]]
    always: bool = False
    #: The key attribute's type (a number or binary key holds one field: ``"{score}"``).
    kind: KeyType = "S"

    def texts(self, item: Mapping[str, Mapping[str, Any]]) -> dict[str, str] | None:
        """Each field's unescaped text in the item's key; None if it lacks it or it is unfit."""
        text = key_text(item.get(self.attribute))
        return self.template.parse(text) if isinstance(text, str) else None
