"""The public surface: exactly these names, sorted, and nothing else leaks."""

import importlib
import types

import dynorm
from dynorm.core import errors as dynorm_errors

EXPECTED = {
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
}

# The names DESIGN.md's public contract imports from dynorm.
CONTRACT = {
    "Table",
    "GSI",
    "HasMany",
    "BelongsTo",
    "Partition",
    "Index",
    "Embedded",
    "Denormalized",
    "connect",
    "Page",
    "ItemNotFoundError",
}


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: SCREAMING_CASE constants, then CamelCase classes, then the rest.
    if name.isupper():
        return 0, name
    if name[0].isupper():
        return 1, name
    return 2, name


def test_all_is_exactly_the_public_surface() -> None:
    assert set(dynorm.__all__) == EXPECTED
    assert len(dynorm.__all__) == len(EXPECTED)  # no duplicates


def test_all_is_sorted() -> None:
    assert dynorm.__all__ == sorted(dynorm.__all__, key=_isort_key)


def test_every_exported_name_exists() -> None:
    missing = [name for name in dynorm.__all__ if not hasattr(dynorm, name)]
    assert missing == []


def test_nothing_else_public_leaks() -> None:
    public = {
        name
        for name, value in vars(dynorm).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == EXPECTED


def test_design_contract_names_are_exported() -> None:
    assert set(dynorm.__all__) >= CONTRACT


def test_every_error_is_exported_under_one_root() -> None:
    defined = {
        value
        for value in vars(dynorm_errors).values()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    exported = {
        value
        for value in (getattr(dynorm, name) for name in dynorm.__all__)
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    assert exported == defined
    for error in exported:
        assert issubclass(error, dynorm.DynormError), error
        assert error.__name__.endswith("Error"), error
    assert issubclass(dynorm.ItemNotFoundError, LookupError)
    assert issubclass(dynorm.DefinitionError, TypeError)
    assert issubclass(dynorm.CursorError, ValueError)


def test_transport_errors_are_connection_errors() -> None:
    assert issubclass(dynorm.TransportError, ConnectionError)
    assert issubclass(dynorm.OutcomeUnknownError, dynorm.DatabaseError)
    assert not issubclass(dynorm.OutcomeUnknownError, dynorm.ConditionFailedError)
    error = dynorm.TransportError("down", operation="GetItem", request_sent=False)
    assert str(error) == "down"
    assert (error.operation, error.request_sent) == ("GetItem", False)


def test_each_public_module_is_its_tool_and_nothing_more() -> None:
    for public, tool in [
        ("design", "design"),
        ("migrations", "migrations"),
        ("testing", "testing"),
        ("workbench", "workbench"),
        ("mypy", "mypy_plugin"),
    ]:
        module = importlib.import_module(f"dynorm.{public}")
        implementation = importlib.import_module(f"dynorm.tools.{tool}")
        assert module.__all__ == implementation.__all__, public
        for name in module.__all__:
            assert getattr(module, name) is getattr(implementation, name), f"{public}.{name}"


def test_the_pytest_plugin_module_carries_its_hooks() -> None:
    # pytest registers a plugin's hooks by their names on the module the entry point names.
    plugin = importlib.import_module("dynorm.testing")
    for hook in ("pytest_configure", "pytest_report_header", "pytest_collection_modifyitems"):
        assert callable(getattr(plugin, hook, None)), hook
