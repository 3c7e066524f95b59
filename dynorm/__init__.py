"""dynorm: an async, attrs-based mapper for DynamoDB single-table design.

Declare models on a :class:`Table` with key templates, describe relationships with
:class:`HasMany` / :class:`BelongsTo` and a strategy, and read a parent with its children in one
request: ``await db.get(Org, name="MICROSOFT", load=[Org.users])``.
"""

from ._chunks import BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_MAX
from ._codec import converter
from ._database import Database, Transaction, connect
from ._errors import (
    CancellationReason,
    CodecError,
    ConditionFailedError,
    CopiesIncompleteError,
    CursorError,
    DatabaseError,
    DefinitionError,
    DetachedError,
    DynormError,
    ExpressionError,
    ItemNotFoundError,
    KeyTemplateError,
    LimitExceededError,
    NotLoadedError,
    OutcomeUnknownError,
    TableNotFoundError,
    ThrottledError,
    TransactionCanceledError,
    TransportError,
    ValidationError,
    VersionConflictError,
)
from ._events import RequestEvent
from ._expressions import Attr, Condition
from ._fields import field
from ._keys import KeyTemplate
from ._limits import (
    MAX_DEPTH,
    MAX_ITEM_BYTES,
    MAX_NUMBER,
    MAX_NUMBER_DIGITS,
    MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES,
    MAX_TRANSACTION_BYTES,
    MIN_NUMBER,
)
from ._paging import Page
from ._plans import Request
from ._query import Query, Scan
from ._ranges import SortCondition, begins_with, between, ge, gt, le, lt
from ._relations import (
    BelongsTo,
    HasMany,
    LoadOption,
    ParentLoader,
    RelationLoader,
    Relationship,
)
from ._steps import FromRead
from ._strategies import Denormalized, Embedded, Index, Partition, Strategy
from ._streams import Change
from ._table import GSI, LSI, Table

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
    "CancellationReason",
    "Change",
    "CodecError",
    "Condition",
    "ConditionFailedError",
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
    "Index",
    "ItemNotFoundError",
    "KeyTemplate",
    "KeyTemplateError",
    "LimitExceededError",
    "LoadOption",
    "NotLoadedError",
    "OutcomeUnknownError",
    "Page",
    "ParentLoader",
    "Partition",
    "Query",
    "RelationLoader",
    "Relationship",
    "Request",
    "RequestEvent",
    "Scan",
    "SortCondition",
    "Strategy",
    "Table",
    "TableNotFoundError",
    "ThrottledError",
    "Transaction",
    "TransactionCanceledError",
    "TransportError",
    "ValidationError",
    "VersionConflictError",
    "begins_with",
    "between",
    "connect",
    "converter",
    "field",
    "ge",
    "gt",
    "le",
    "lt",
]
