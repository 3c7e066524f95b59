"""dynorm: an async, attrs-based mapper for DynamoDB single-table design.

Declare models on a :class:`Table` with key templates, describe relationships with
:class:`HasMany` / :class:`BelongsTo` and a strategy, and read a parent with its children in one
request: ``await db.get(Org, name="MICROSOFT", load=[Org.users])``.
"""

# Every public name is imported when first used (PEP 562 ``__getattr__`` below), not by
# ``import dynorm``: the pytest plugin, ``dynorm.testing`` and ``dynorm --help`` import the
# package without needing its I/O or mapping layers. Type checkers read the imports here.
# (``typing`` as a module, so that no name of its shows among dynorm's.)
import typing

if typing.TYPE_CHECKING:
    from dynorm.core.ranges import SortCondition, begins_with, between, ge, gt, le, lt
    from dynorm.core.requests import Request
    from dynorm.core.steps import FromRead
    from dynorm.io.database import Database, connect
    from dynorm.io.loaders import BelongsTo, HasMany, ParentLoader, RelationLoader
    from dynorm.io.paging import Page
    from dynorm.io.query import Query, Scan
    from dynorm.io.transaction import Transaction
    from dynorm.mapping.cascade import CascadeReport
    from dynorm.mapping.jsonable import from_jsonable, jsonable
    from dynorm.mapping.relations import (
        BelongsToRelation,
        HasManyRelation,
        LoadOption,
        Relationship,
    )
    from dynorm.mapping.strategies import Denormalized, Embedded, Index, Partition, Strategy
    from dynorm.mapping.streams import Change
    from dynorm.mapping.table import GSI, LSI, Table

    from .core.chunks import BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_MAX
    from .core.codec.converter import converter
    from .core.errors import (
        CancellationReason,
        CodecError,
        ConditionFailedError,
        ConfigurationError,
        CopiesIncompleteError,
        CursorError,
        DatabaseError,
        DefinitionError,
        DetachedError,
        DynormError,
        ExpressionError,
        InvalidDataError,
        ItemNotFoundError,
        KeyTemplateError,
        LimitExceededError,
        NotLoadedError,
        OutcomeUnknownError,
        StaleItemError,
        TableNotFoundError,
        ThrottledError,
        TransactionCanceledError,
        TransportError,
        UnsupportedOperationError,
        UpgradeError,
        ValidationError,
        VersionConflictError,
    )
    from .core.events import ConsumedCapacity, RequestEvent
    from .core.expressions import Attr, Condition
    from .core.fields import field
    from .core.keys import KeyTemplate
    from .core.limits import (
        MAX_DEPTH,
        MAX_ITEM_BYTES,
        MAX_NUMBER,
        MAX_NUMBER_DIGITS,
        MAX_PARTITION_KEY_BYTES,
        MAX_SORT_KEY_BYTES,
        MAX_TRANSACTION_BYTES,
        MIN_NUMBER,
    )
    from .core.throughput import HotPartition, LimiterStats, RateLimit, Stats

    __version__: str
    """The installed distribution's version (its metadata), read on first use."""

__all__ = [
    "BATCH_GET_MAX",
    "BATCH_WRITE_MAX",
    "GSI",
    "LSI",
    "MAX_DEPTH",
    "MAX_ITEM_BYTES",
    "MAX_NUMBER",
    "MAX_NUMBER_DIGITS",
    "MAX_PARTITION_KEY_BYTES",
    "MAX_SORT_KEY_BYTES",
    "MAX_TRANSACTION_BYTES",
    "MIN_NUMBER",
    "TRANSACT_MAX",
    "Attr",
    "BelongsTo",
    "BelongsToRelation",
    "CancellationReason",
    "CascadeReport",
    "Change",
    "CodecError",
    "Condition",
    "ConditionFailedError",
    "ConfigurationError",
    "ConsumedCapacity",
    "CopiesIncompleteError",
    "CursorError",
    "Database",
    "DatabaseError",
    "DefinitionError",
    "Denormalized",
    "DetachedError",
    "DynormError",
    "Embedded",
    "ExpressionError",
    "FromRead",
    "HasMany",
    "HasManyRelation",
    "HotPartition",
    "Index",
    "InvalidDataError",
    "ItemNotFoundError",
    "KeyTemplate",
    "KeyTemplateError",
    "LimitExceededError",
    "LimiterStats",
    "LoadOption",
    "NotLoadedError",
    "OutcomeUnknownError",
    "Page",
    "ParentLoader",
    "Partition",
    "Query",
    "RateLimit",
    "RelationLoader",
    "Relationship",
    "Request",
    "RequestEvent",
    "Scan",
    "SortCondition",
    "StaleItemError",
    "Stats",
    "Strategy",
    "Table",
    "TableNotFoundError",
    "ThrottledError",
    "Transaction",
    "TransactionCanceledError",
    "TransportError",
    "UnsupportedOperationError",
    "UpgradeError",
    "ValidationError",
    "VersionConflictError",
    "begins_with",
    "between",
    "connect",
    "converter",
    "field",
    "from_jsonable",
    "ge",
    "gt",
    "jsonable",
    "le",
    "lt",
]

#: Where each public name is defined, by module (the same names as the imports above; a unit
#: test holds them equal).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "dynorm.core.ranges": ("SortCondition", "begins_with", "between", "ge", "gt", "le", "lt"),
    "dynorm.core.requests": ("Request",),
    "dynorm.core.steps": ("FromRead",),
    "dynorm.io.database": ("Database", "connect"),
    "dynorm.io.loaders": ("BelongsTo", "HasMany", "ParentLoader", "RelationLoader"),
    "dynorm.io.paging": ("Page",),
    "dynorm.io.query": ("Query", "Scan"),
    "dynorm.io.transaction": ("Transaction",),
    "dynorm.mapping.cascade": ("CascadeReport",),
    "dynorm.mapping.jsonable": ("from_jsonable", "jsonable"),
    "dynorm.mapping.relations": (
        "BelongsToRelation",
        "HasManyRelation",
        "LoadOption",
        "Relationship",
    ),
    "dynorm.mapping.strategies": ("Denormalized", "Embedded", "Index", "Partition", "Strategy"),
    "dynorm.mapping.streams": ("Change",),
    "dynorm.mapping.table": ("GSI", "LSI", "Table"),
    "dynorm.core.chunks": ("BATCH_GET_MAX", "BATCH_WRITE_MAX", "TRANSACT_MAX"),
    "dynorm.core.codec.converter": ("converter",),
    "dynorm.core.errors": (
        "CancellationReason",
        "CodecError",
        "ConditionFailedError",
        "ConfigurationError",
        "CopiesIncompleteError",
        "CursorError",
        "DatabaseError",
        "DefinitionError",
        "DetachedError",
        "DynormError",
        "ExpressionError",
        "InvalidDataError",
        "ItemNotFoundError",
        "KeyTemplateError",
        "LimitExceededError",
        "NotLoadedError",
        "OutcomeUnknownError",
        "StaleItemError",
        "TableNotFoundError",
        "ThrottledError",
        "TransactionCanceledError",
        "TransportError",
        "UnsupportedOperationError",
        "UpgradeError",
        "ValidationError",
        "VersionConflictError",
    ),
    "dynorm.core.events": ("ConsumedCapacity", "RequestEvent"),
    "dynorm.core.throughput": ("HotPartition", "LimiterStats", "RateLimit", "Stats"),
    "dynorm.core.expressions": ("Attr", "Condition"),
    "dynorm.core.fields": ("field",),
    "dynorm.core.keys": ("KeyTemplate",),
    "dynorm.core.limits": (
        "MAX_DEPTH",
        "MAX_ITEM_BYTES",
        "MAX_NUMBER",
        "MAX_NUMBER_DIGITS",
        "MAX_PARTITION_KEY_BYTES",
        "MAX_SORT_KEY_BYTES",
        "MAX_TRANSACTION_BYTES",
        "MIN_NUMBER",
    ),
}
_MODULE_OF: dict[str, str] = {name: module for module, names in _EXPORTS.items() for name in names}


# Defined for the interpreter only: a module ``__getattr__`` that type checkers saw would make
# every misspelt name (``dynorm.Tabel``) type-check as Any.
if not typing.TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """Import a public name on first use, and keep it (the next lookup is a plain attribute)."""
        if name == "__version__":
            from dynorm.core.versions import installed_version  # noqa: PLC0415

            # "0+unknown": run from a source tree that was never installed.
            found = installed_version("dynorm", default="0+unknown")
            globals()[name] = found
            return found
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module 'dynorm' has no attribute {name!r}")
        from importlib import import_module  # noqa: PLC0415

        value = getattr(import_module(module), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        """The public names, imported or not yet."""
        return sorted({*globals(), *__all__, "__version__"})
