"""NoSQL Workbench data models as typed values, and the DynamoDB JSON their files hold.

The values :func:`~dynorm.tools.workbench_read.read_model` gives and
:func:`~dynorm.tools.workbench_import.import_model` stores (a model, its tables, indexes and
facets), the error every part of the tool raises, and the conversions of an item between a
file's DynamoDB JSON (binaries as base64) and a request's. See dynorm.tools.workbench.
"""

from __future__ import annotations

import base64
import decimal
import json
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import attrs

from dynorm.core.codec.converter import AttributeValue, Item
from dynorm.core.errors import DynormError

__all__ = [
    "ATTRIBUTE_TYPES",
    "AWS_SERVICE",
    "KEY_TYPES",
    "WORKBENCH_VERSION",
    "Attribute",
    "Facet",
    "KeyType",
    "Projection",
    "WorkbenchError",
    "WorkbenchIndex",
    "WorkbenchModel",
    "WorkbenchTable",
]

#: The data model format version NoSQL Workbench writes, and exports carry (files of every
#: version are read: 1.0, 2.0 and 3.0 hold tables in one shape).
WORKBENCH_VERSION: Final = "3.0"
#: ``ModelMetadata.AWSService`` of a DynamoDB model.
AWS_SERVICE: Final = "Amazon DynamoDB"
#: The attribute types a Workbench model declares (DynamoDB's data type descriptors).
ATTRIBUTE_TYPES: Final = ("S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS")
#: The types a key attribute may have.
KEY_TYPES: Final = ("S", "N", "B")

Projection = Literal["ALL", "KEYS_ONLY"] | tuple[str, ...]
KeyType = Literal["S", "N", "B"]


class WorkbenchError(DynormError, ValueError):
    """A NoSQL Workbench data model cannot be read or imported; the message names the place."""


# -- typed values -------------------------------------------------------------------------------


@attrs.frozen
class Attribute:
    """An attribute a model declares: its name and DynamoDB type (``"S"``, ``"N"``, ``"M"`` …)."""

    name: str
    type: str


@attrs.frozen
class WorkbenchIndex:
    """A global secondary index of a Workbench table."""

    name: str
    pk: Attribute
    sk: Attribute | None
    #: ``"ALL"``, ``"KEYS_ONLY"``, or the non-key attributes an INCLUDE projection copies.
    projection: Projection = "ALL"


@attrs.frozen
class Facet:
    """A facet: one kind of item of a table (in dynorm's exports, one model).

    ``pk_alias``/``sk_alias`` are the labels Workbench shows for the key attributes (dynorm
    writes the model's key templates there); ``attributes`` the non-key attributes it shows;
    ``items`` the facet's own sample items.
    """

    name: str
    pk_alias: str
    sk_alias: str | None
    attributes: tuple[str, ...] = ()
    items: tuple[Item, ...] = ()


@attrs.frozen
class WorkbenchTable:
    """One table of a Workbench model.

    ``items`` holds every sample item of the table, those of its ``TableData`` and of its facets,
    one per primary key, in the order the file gives them (table data first).
    """

    name: str
    pk: Attribute
    sk: Attribute | None
    attributes: tuple[Attribute, ...] = ()
    indexes: tuple[WorkbenchIndex, ...] = ()
    facets: tuple[Facet, ...] = ()
    items: tuple[Item, ...] = ()
    billing_mode: str | None = None

    @property
    def key_attributes(self) -> tuple[Attribute, ...]:
        """The table's key attributes and its indexes', each once (table keys first)."""
        found: dict[str, Attribute] = {}
        for index in (None, *self.indexes):
            keys = (self.pk, self.sk) if index is None else (index.pk, index.sk)
            for key in keys:
                if key is not None:
                    found.setdefault(key.name, key)
        return tuple(found.values())

    def key_of(self, item: Mapping[str, AttributeValue]) -> Item:
        """The primary key of one of the table's items."""
        names = [self.pk.name] + ([self.sk.name] if self.sk else [])
        return {name: item[name] for name in names}


@attrs.frozen
class WorkbenchModel:
    """A NoSQL Workbench data model: its name, metadata and tables."""

    name: str
    tables: tuple[WorkbenchTable, ...]
    author: str = ""
    description: str = ""
    version: str = WORKBENCH_VERSION

    def table(self, name: str | None = None) -> WorkbenchTable:
        """The table called ``name``; without a name, the model's only table."""
        if name is None:
            if len(self.tables) == 1:
                return self.tables[0]
            names = ", ".join(repr(t.name) for t in self.tables)
            raise WorkbenchError(
                f"model {self.name!r} has {len(self.tables)} tables ({names}); name the one to use"
            )
        for table in self.tables:
            if table.name == name:
                return table
        names = ", ".join(repr(t.name) for t in self.tables)
        raise WorkbenchError(f"model {self.name!r} has no table {name!r}; its tables: {names}")


# -- DynamoDB JSON ------------------------------------------------------------------------------


def base64_text(value: object) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return str(value)  # already base64 text (a fast-path reply)


#: Enough digits to hold any DynamoDB number exactly (the default context keeps 28).
_EXACT: Final = decimal.Context(prec=2 * 38)


def same_number(text: str) -> str:
    """One text for every spelling of a number (``"1"``, ``"1.0"``, ``"10E-1"``: ``"1"``)."""
    try:
        value = _EXACT.normalize(decimal.Decimal(text))
    except decimal.InvalidOperation:
        return text  # not a number: checked where the value is read
    return "0" if not value else str(value)


def key_id(item: Mapping[str, AttributeValue], keys: Sequence[str]) -> str:
    """One text per primary key: number keys by value, as DynamoDB compares them."""
    values = []
    for k in keys:
        av = item.get(k)
        if av is not None and "N" in av:
            av = {"N": same_number(str(av["N"]))}
        values.append(av)
    return json.dumps(values, sort_keys=True, default=base64_text)
