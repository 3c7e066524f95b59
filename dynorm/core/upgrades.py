"""Model schema versions: which version wrote an item, and the upgrade chain to the current one.

``@table.model(..., schema_version=N, upgrades={1: f, ..., N-1: g})`` declares them (see
docs/migrations.md, "Model versions"). Every write of the model stores ``N`` in the item's
schema attribute (``_v`` unless ``schema_attribute=`` names another); an item without it is
version 1. Reading an item below ``N`` runs it through the chain in memory: each function
takes the whole item (keys included) by stored attribute name as plain values (str, Decimal,
bytes, bool, None, list, dict, set) and returns the next version's. An item above ``N`` was
written by newer code: a CodecError, never read as an older shape.

Pure: the generated decoders call :meth:`SchemaVersions.upgrade` when the one lookup they make
finds another version (``dynorm.core.codec.decoders``).
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from dynorm.core.codec.generic import decode_binary, encode_any
from dynorm.core.errors import CodecError, DefinitionError, UpgradeError
from dynorm.core.expressions import Condition, ExpressionBuilder

from .codec import AttributeValue, Item

__all__ = [
    "SCHEMA_ATTRIBUTE",
    "SchemaVersions",
    "Upgrade",
    "declare_versions",
    "plain_item",
    "typed_item",
]

#: Where an item stores the schema version that wrote it, unless the model names another.
SCHEMA_ATTRIBUTE: Final = "_v"

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]
"""One step of a chain: an item of version ``n`` (plain values) -> the item of version ``n+1``."""


@attrs.frozen
class SchemaVersions:
    """A model's current schema version, where items store it, and the upgrades up to it."""

    model: str
    current: int
    attribute: str = SCHEMA_ATTRIBUTE
    upgrades: Mapping[int, Upgrade] = attrs.field(factory=dict)

    @property
    def stored(self) -> AttributeValue:
        """The attribute value every write stores: the current version."""
        return {"N": str(self.current)}

    def version_of(self, item: Mapping[str, AttributeValue]) -> int:
        """The version that wrote ``item`` (1 when it holds none); CodecError when malformed."""
        value: object = item.get(self.attribute)  # stored data: any shape another tool wrote
        if value is None:
            return 1
        text = value.get("N") if isinstance(value, Mapping) else None
        version = int(text) if isinstance(text, str) and text.isdigit() else 0
        if version < 1:
            raise CodecError(
                f"{self.model}: attribute {self.attribute!r} holds {value!r}, which is no schema "
                f"version (a whole number from 1); {self.attribute!r} is where dynorm keeps the "
                "version that wrote the item, so no other data may be stored there"
            )
        return version

    def is_current(self, item: Mapping[str, AttributeValue]) -> bool:
        return self.version_of(item) == self.current

    def guard(self, key_attribute: str, *, upsert: bool = False) -> Condition:
        """The condition an update needs: the stored item is at the current version.

        An update changes some attributes of the item as stored; on an item of an older shape
        it would leave it half upgraded (see ``StaleItemError``). ``upsert``: no item at all
        passes too (the update creates it, storing the current version).
        """
        return _AtVersion(self.attribute, self.current, key_attribute if upsert else None)

    def upgrade(self, item: Mapping[str, AttributeValue], key: str = "") -> Item:
        """``item`` at the current version: upgraded through the chain, or as it is.

        CodecError for an item newer than the code; UpgradeError when a step raises or returns
        no dict (``key`` names the item in the message). The result stores the current version.
        """
        version = self.version_of(item)
        if version == self.current:
            return dict(item.items())
        if version > self.current:
            raise CodecError(
                f"{self.model}: item {key or '(no key)'} is stored at schema version {version}, "
                f"but this code knows {self.model} up to version {self.current}; it was written "
                "by newer code and is not read as an older shape: deploy the code that declares "
                f"schema_version={version} (or later)"
            )
        plain = plain_item(item)
        for step in range(version, self.current):
            plain = self._step(step, plain, key)
        plain[self.attribute] = decimal.Decimal(self.current)
        try:
            return typed_item(plain)
        except CodecError as exc:
            raise self._failed(
                self.current - 1, key, f"returned a value DynamoDB cannot hold: {exc}"
            ) from exc

    def _step(self, step: int, plain: dict[str, Any], key: str) -> dict[str, Any]:
        function = self.upgrades[step]
        try:
            upgraded = function(plain)
        except Exception as exc:  # the user's function: any failure is chained, with its model
            raise self._failed(step, key, f"raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(upgraded, dict):
            raise self._failed(
                step, key, f"returned {type(upgraded).__name__}, not the item as a dict"
            )
        return upgraded

    def _failed(self, step: int, key: str, why: str) -> UpgradeError:
        name = getattr(self.upgrades.get(step), "__qualname__", "the upgrade")
        error = UpgradeError(
            f"{self.model}: upgrading item {key or '(no key)'} from schema version {step} to "
            f"{step + 1}, upgrades[{step}] ({name}) {why}; fix the function (it takes the item "
            "by stored attribute name as plain values, keys included, and returns the next "
            "version's)"
        )
        error.version = step
        return error


def declare_versions(
    model: str,
    schema_version: int | None,
    upgrades: Mapping[int, Upgrade] | None,
    attribute: str | None,
    stored_names: Mapping[str, str],
) -> SchemaVersions | None:
    """The model's SchemaVersions (None: unversioned); DefinitionError saying what to change.

    ``stored_names``: the model's attribute names (key and type attributes too) -> what stores
    them there ("field 'v'", "the partition key"), none of which the schema attribute may be.
    """
    if schema_version is None:
        if upgrades:
            raise DefinitionError(
                f"{model}: upgrades= needs schema_version= (the version the code writes); "
                f"declare @table.model(..., schema_version={len(upgrades) + 1}, upgrades=...)"
            )
        if attribute is not None:
            raise DefinitionError(
                f"{model}: schema_attribute= needs schema_version=; declare both, or neither"
            )
        return None
    if type(schema_version) is not int or schema_version < 1:
        raise DefinitionError(
            f"{model}: schema_version= is the version of the model's shape, a whole number "
            f"from 1; got {schema_version!r}"
        )
    given = dict(upgrades or {})
    wanted = list(range(1, schema_version))
    if sorted(given, key=repr) != sorted(wanted, key=repr) or any(
        type(k) is not int for k in given
    ):
        shown = ", ".join(f"{n}: v{n}_to_v{n + 1}" for n in wanted) or "none"
        raise DefinitionError(
            f"{model}: schema_version={schema_version} needs an upgrade from each older version "
            f"to the next, upgrades={{{shown}}}; got keys {sorted(given, key=repr)} (an "
            "upgrade is kept while items of its version may be stored)"
        )
    for step, function in given.items():
        if not callable(function):
            raise DefinitionError(
                f"{model}: upgrades[{step}] is {function!r}; give a function taking the item "
                f"of version {step} (a dict) and returning the item of version {step + 1}"
            )
    name: object = SCHEMA_ATTRIBUTE if attribute is None else attribute
    if not isinstance(name, str) or not name:
        raise DefinitionError(f"{model}: schema_attribute= takes an attribute name; got {name!r}")
    if name in stored_names:
        raise DefinitionError(
            f"{model}: the schema version is stored in attribute {name!r}, which is already "
            f"{stored_names[name]}; rename that (dynorm.field(name=...)), or give "
            "@table.model(..., schema_attribute=...) another name"
        )
    return SchemaVersions(model, schema_version, name, given)


@attrs.frozen
class _AtVersion(Condition):
    attribute: str
    current: int
    #: The partition key attribute, when an absent item passes too (an upsert).
    absent: str | None = None

    def render(self, builder: ExpressionBuilder) -> str:
        name = builder.attribute(self.attribute)
        value = builder.value({"N": str(self.current)})
        parts = [f"{name} = {value}"]
        if self.current == 1:
            parts.append(f"attribute_not_exists({name})")  # no version stored: version 1
        elif self.absent is not None:
            parts.append(f"attribute_not_exists({builder.attribute(self.absent)})")
        return " OR ".join(parts)


# -- plain values ---------------------------------------------------------------------------------


def plain_item(item: Mapping[str, AttributeValue]) -> dict[str, Any]:
    """An item as plain values, as boto3's resource layer gives them (bytes for binaries).

    S str, N Decimal, B bytes, BOOL bool, NULL None, L list, M dict, SS/NS/BS sets.
    """
    return {name: _plain(value) for name, value in item.items()}


def _plain(av: AttributeValue) -> Any:
    ((tag, value),) = av.items()
    if tag in {"S", "BOOL"}:
        return value
    if tag == "N":
        return decimal.Decimal(value)
    if tag == "M":
        return {k: _plain(v) for k, v in value.items()}
    if tag == "L":
        return [_plain(v) for v in value]
    if tag == "NULL":
        return None
    if tag == "SS":
        return set(value)
    if tag == "NS":
        return {decimal.Decimal(v) for v in value}
    if tag == "B":
        return decode_binary(value)
    if tag == "BS":
        return {decode_binary(v) for v in value}
    raise CodecError(f"unknown DynamoDB type tag {tag!r}")


def typed_item(plain: Mapping[str, Any]) -> Item:
    """Plain values back as an item; CodecError for a value DynamoDB cannot hold."""
    item: Item = {}
    for name, value in plain.items():
        if not isinstance(name, str):
            raise CodecError(f"attribute names are strings; got {name!r}")
        item[name] = encode_any(value)
    return item
