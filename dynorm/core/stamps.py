"""Versions, time to live and timestamps: what a model declares, and what each write adds.

``@table.model(version=..., ttl=..., created=..., updated=...)`` names the fields:

- ``version``: an int field for optimistic locking. Every write of an object requires the stored
  version to be the one the object was read with (a new object: that no item exists) and
  writes the next one; a refusal is a :class:`~dynorm.VersionConflictError`.
- ``ttl``: a datetime stored as epoch seconds, the attribute DynamoDB's time to live reads.
- ``created`` / ``updated``: datetimes dynorm fills (UTC): ``created`` once, ``updated`` on every
  write.

Pure: no I/O, no ModelInfo (the model module holds a :class:`Stamps`).
"""

from __future__ import annotations

import datetime
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

import attrs
import msgspec

from .errors import DefinitionError
from .expressions import Attr, Condition

__all__ = ["ROLES", "Stamps", "VersionCheck", "Write", "utc_now"]

#: The keyword options of ``Table.model`` that name a field, in the order they are checked.
ROLES: Final = ("version", "ttl", "created", "updated")

_DATETIME_ROLES: Final = frozenset({"ttl", "created", "updated"})
#: Roles whose field changes on writes dynorm makes itself, so no key may be built from it.
_NOT_IN_KEYS: Final = frozenset({"version", "ttl", "updated"})


def utc_now() -> datetime.datetime:
    """The time written into ``created``/``updated`` fields: aware, UTC."""
    return datetime.datetime.now(datetime.UTC)


def _plain(tp: object) -> tuple[object, bool]:
    """(``X``, True) for ``X | None``; (tp, False) otherwise."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0], True
    return tp, False


#: The writes a version is checked on.
Write = Literal["put", "update", "delete"]


class VersionCheck(msgspec.Struct, frozen=True):
    """What a ``write`` of a versioned item requires: the stored ``field`` equals ``expected``.

    ``expected`` None means the object was never written: a put then requires that no item has
    its key (:attr:`new`); an update or delete, that the stored item has no version yet.
    """

    field: str
    expected: int | None
    write: Write

    @property
    def new(self) -> bool:
        """A put of an object never written: no item may have its key at all."""
        return self.write == "put" and self.expected is None

    def key_requirement(self, require: str | None) -> str | None:
        """The requirement on the key attribute, ``require`` (the caller's) or this check's."""
        return "attribute_not_exists" if self.new else require

    def condition(self) -> Condition | None:
        """The condition on the version attribute (None: the key requirement says it all)."""
        if self.new:
            return None
        if self.expected is None:
            return Attr(self.field).not_exists()
        return Attr(self.field) == self.expected

    def refusal(self, *, exists: bool, stored: int | None) -> str | None:
        """What a refused write met, given what is stored now; None when the version held.

        None means another condition failed (the caller's). ``exists``: whether an item is
        stored under the key; ``stored``: its version.
        """
        if exists and stored == self.expected and not self.new:
            return None
        if not exists:
            return "was deleted since it was read" if self.expected else "does not exist"
        if self.new:
            return f"already exists (version {stored}); this object was never read from it"
        return f"changed since it was read (version {self.expected} read, {stored} stored)"


class Stamps(msgspec.Struct, frozen=True):
    """The fields a model names for versions, time to live and timestamps (None: not used)."""

    version: str | None = None
    ttl: str | None = None
    created: str | None = None
    updated: str | None = None

    @classmethod
    def declare(
        cls,
        model: str,
        field_types: Mapping[str, Any],
        key_fields: Iterable[str],
        **roles: str | None,
    ) -> Stamps:
        """Check the fields named for each role; DefinitionError saying what to change."""
        seen: dict[str, str] = {}
        in_keys = set(key_fields)
        for role in ROLES:
            name = roles.get(role)
            if name is None:
                continue
            if name not in field_types:
                fields = ", ".join(field_types) or "none"
                raise DefinitionError(
                    f"{model}: {role}={name!r} names no field of {model}; fields: {fields}"
                )
            if name in seen:
                raise DefinitionError(
                    f"{model}: field {name!r} is named by both {seen[name]}= and {role}=; "
                    "give each its own field"
                )
            seen[name] = role
            _check_type(model, role, name, field_types[name])
            if role in _NOT_IN_KEYS and name in in_keys:
                raise DefinitionError(
                    f"{model}: {role}={name!r} changes on writes dynorm makes itself, so no key "
                    f"template may hold {{{name}}}; take it out of the templates"
                )
        return cls(**{role: roles.get(role) for role in ROLES})

    def __bool__(self) -> bool:
        return any(getattr(self, role) is not None for role in ROLES)

    @property
    def managed(self) -> tuple[str, ...]:
        """The fields only dynorm writes: an update may not change them itself."""
        return tuple(f for f in (self.version, self.created, self.updated) if f is not None)

    @property
    def epoch(self) -> tuple[str, ...]:
        """The fields stored as epoch seconds."""
        return () if self.ttl is None else (self.ttl,)

    # -- puts ----------------------------------------------------------------------------------

    def put_values(self, obj: object, now: datetime.datetime) -> dict[str, object]:
        """The field values a put of ``obj`` stores on top of its own (next version, times)."""
        values: dict[str, object] = {}
        if self.version is not None:
            values[self.version] = (getattr(obj, self.version) or 0) + 1
        if self.created is not None and getattr(obj, self.created) is None:
            values[self.created] = now
        if self.updated is not None:
            values[self.updated] = now
        return values

    def check(self, write: Write, obj: object) -> VersionCheck | None:
        """The version check of a ``write`` of ``obj`` (None: the model is not versioned).

        A put's ``obj`` is as stamped (its version the one to store); an update's or delete's,
        as it was read.
        """
        if self.version is None:
            return None
        version = int(getattr(obj, self.version) or 0)
        stored = version - 1 if write == "put" else version
        return VersionCheck(self.version, stored or None, write)

    def update_values(
        self, obj: object, now: datetime.datetime
    ) -> tuple[dict[str, object], dict[str, object]]:
        """(values to set, values to set only where missing) for an update of ``obj``."""
        values: dict[str, object] = {}
        if self.version is not None:
            values[self.version] = (getattr(obj, self.version) or 0) + 1
        if self.updated is not None:
            values[self.updated] = now
        missing: dict[str, object] = {} if self.created is None else {self.created: now}
        return values, missing

    # -- after a write -------------------------------------------------------------------------

    def written(self, obj: object) -> dict[str, object]:
        """The values of ``obj``'s fields only dynorm writes."""
        return {name: getattr(obj, name) for name in self.managed}

    def keep(self, target: object, written: Mapping[str, object]) -> None:
        """Give the caller's object the version and times a write stored for it.

        ``written`` holds the values written (by field). A frozen object cannot change (its hash
        would): it is left as it was, and the object the call returns is the one to write next.
        """
        for name in self.managed:
            if name in written:
                try:
                    setattr(target, name, written[name])
                except attrs.exceptions.FrozenInstanceError:
                    return


def _check_type(model: str, role: str, name: str, tp: object) -> None:
    inner, _ = _plain(tp)
    want: type = datetime.datetime if role in _DATETIME_ROLES else int
    if inner is want and not (want is int and inner is bool):
        return
    shown = getattr(tp, "__name__", None) or str(tp).replace("typing.", "")
    fix = "datetime.datetime | None = None" if want is datetime.datetime else "int = 0"
    raise DefinitionError(
        f"{model}.{name} is named by {role}=, which needs "
        f"{'a datetime' if want is datetime.datetime else 'an int'} field; it is {shown}. "
        f"Declare it `{name}: {fix}`"
    )
