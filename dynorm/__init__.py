"""dynorm: an async, attrs-based mapper for DynamoDB single-table design.

Declare models on a :class:`Table` with key templates, describe relationships with
:class:`HasMany` / :class:`BelongsTo` and a strategy, and read a parent with its children in one
request: ``await db.get(Org, name="MICROSOFT", load=[Org.users])``.
"""

from dynorm.core.ranges import SortCondition, begins_with, between, ge, gt, le, lt
from dynorm.core.requests import Request
from dynorm.core.steps import FromRead
from dynorm.io.database import Database, Transaction, connect
from dynorm.io.loaders import BelongsTo, HasMany, ParentLoader, RelationLoader
from dynorm.io.paging import Page
from dynorm.io.query import Query, Scan
from dynorm.mapping.cascade import CascadeReport
from dynorm.mapping.jsonable import from_jsonable, jsonable
from dynorm.mapping.relations import BelongsToRelation, HasManyRelation, LoadOption, Relationship
from dynorm.mapping.strategies import Denormalized, Embedded, Index, Partition, Strategy
from dynorm.mapping.streams import Change
from dynorm.mapping.table import GSI, LSI, Table

from .core.chunks import BATCH_GET_MAX, BATCH_WRITE_MAX, TRANSACT_MAX
from .core.codec.converter import converter
from .core.errors import (
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
    InvalidDataError,
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
    "Index",
    "InvalidDataError",
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
    "from_jsonable",
    "ge",
    "gt",
    "jsonable",
    "le",
    "lt",
]
