"""Enum and Literal fields: each member or value stored as its value, read back by stored value.

A member is stored as ``encode_any`` stores its value; reading looks the stored text up first
(one dict lookup), then by value (``"1"`` for a member 1.0, BOOL, B, L and M members), so
every member written reads back. Literal values are told apart by type too (True is no 1).
"""

from __future__ import annotations

import enum
import functools
import typing
from collections.abc import Callable, Mapping
from typing import Any

from dynorm.core.errors import CodecError

from . import AttributeValue
from .generic import _value_key, decode_any, encode_any
from .refusals import _mismatch, _show
from .typeforms import type_text

__all__ = ["enum_texts"]


@functools.cache
def _member_values(tp: type[enum.Enum]) -> dict[enum.Enum, tuple[str, Any]]:
    """Each member's stored (tag, value); members DynamoDB cannot hold are left out."""
    out = {}
    for member in tp:
        try:
            ((tag, value),) = encode_any(member.value).items()
        except CodecError:
            continue
        out[member] = (tag, value)
    return out


class _Members(dict[str, enum.Enum]):
    """An Enum's members by stored text; a miss looks the text up by value (``"1"`` for 1.0)."""

    def __init__(self, tp: type[enum.Enum], tag: str, members: Mapping[str, enum.Enum]) -> None:
        super().__init__(members)
        self.tp = tp
        self.tag = tag

    def __missing__(self, text: str) -> enum.Enum:
        return _enum_structure(self.tp)({self.tag: text}, self.tp)


@functools.cache
def _enum_structure(tp: type[enum.Enum]) -> Callable[[AttributeValue, object], enum.Enum]:
    members = _member_values(tp)
    # The common case, a stored text as it was written, is one lookup; anything else is
    # looked up by value (so every member written reads back, BOOL, B, L and M ones too).
    texts = {
        m_tag: {value: m for m, (tag, value) in members.items() if tag == m_tag}
        for m_tag in ("S", "N")
    }
    by_s, by_n = texts["S"], texts["N"]
    by_key = {_value_key({tag: value}): m for m, (tag, value) in members.items()}

    def structure(v: AttributeValue, _: object) -> enum.Enum:
        try:
            return by_s[v["S"]] if "S" in v else by_n[v["N"]]
        except (KeyError, TypeError):
            pass
        key = _value_key(v)
        if key in by_key:
            return by_key[key]
        if key is not None and issubclass(tp, enum.Flag):
            # A combination of flags (Perm.R | Perm.W) is no listed member, but is stored.
            try:
                return tp(decode_any(v))
            except (ValueError, TypeError):
                pass
        raise CodecError(f"{_show(_one_value(v))} is not a value of {tp.__name__}")

    return structure


def _one_value(av: object) -> object:
    """What a one-tag AttributeValue holds (what errors show), else ``av`` itself."""
    if isinstance(av, dict) and len(av) == 1:
        return next(iter(av.values()))
    return av


def enum_texts(tp: type[enum.Enum]) -> tuple[str, Mapping[str, enum.Enum]] | None:
    """For wire decoding: the tag every member of ``tp`` is stored with, and members by text.

    The tag is S or N; None when the members are stored with several tags or with others
    (BOOL, B, L, M, NULL): the Enum's hook then reads them from dicts.
    """
    members = _member_values(tp)
    tags = {tag for tag, _ in members.values()}
    if len(tags) != 1 or not tags <= {"S", "N"} or issubclass(tp, enum.Flag):
        return None
    (tag,) = tags
    return tag, _Members(tp, tag, {value: m for m, (_, value) in members.items()})


def _literal_values(tp: object) -> dict[object, object]:
    """A Literal's values by how each is stored: str as S, int as N, bool, bytes, None, Enum."""
    return {_value_key(encode_any(v)): v for v in typing.get_args(tp)}


def _literal_structure(tp: object) -> Callable[[AttributeValue, object], object]:
    allowed = _literal_values(tp)

    def structure_literal(v: AttributeValue, _: object) -> object:
        key = _value_key(v)
        if key is None or key not in allowed:
            raise CodecError(f"expected one of {type_text(tp)}, got {_show(v)}")
        return allowed[key]

    return structure_literal


def _literal_unstructure(tp: object) -> Callable[[Any], AttributeValue]:
    allowed = typing.get_args(tp)

    def unstructure_literal(v: Any) -> AttributeValue:
        # By type too: True == 1, but a bool is no value of Literal[1].
        if not any(v == a and type(v) is type(a) for a in allowed):
            raise _mismatch(v, f"one of {', '.join(map(repr, allowed))}")
        return encode_any(v)

    return unstructure_literal


@functools.cache
def _enum_unstructure(tp: type[enum.Enum]) -> Callable[[Any], AttributeValue]:
    members = _member_values(tp)

    def unstructure_enum(v: Any) -> AttributeValue:
        if isinstance(v, tp):
            stored = members.get(v)
            if stored is None:
                return encode_any(v.value)  # refused with the reason
            tag, value = stored
            return {tag: value}  # a new dict each time: items may be changed by their users
        hint = ""
        try:
            hint = f"; give {tp.__name__}.{tp(v).name}"
        except (ValueError, TypeError):
            names = ", ".join(m.name for m in tp)
            hint = f" (members: {names})" if len(names) < 120 else ""
        raise _mismatch(v, f"a {tp.__name__} member", hint)

    return unstructure_enum
