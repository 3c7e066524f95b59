"""The public surface: exactly these names, sorted, and nothing else leaks."""

import ast
import importlib
import importlib.metadata
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

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
    # connect(rate_limit=...) and db.stats()
    "RateLimit",
    "Stats",
    "HotPartition",
    "LimiterStats",
    "Scan",
    "SortCondition",
    "Strategy",
    "Table",
    "TableNotFoundError",
    "ThrottledError",
    "Transaction",
    "TransactionCanceledError",
    "TransportError",
    "UnsupportedOperationError",
    # model versions: @table.model(schema_version=..., upgrades=...)
    "UpgradeError",
    "StaleItemError",
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


#: Names a public module imports on first use, each from its tool module (``dynorm.web``'s
#: ExactJSONRoute imports FastAPI, which ``import dynorm.web`` must not).
LAZY = {"web": {"ExactJSONRoute": "web_route"}}


def test_each_public_module_is_its_tool_and_nothing_more() -> None:
    for public, tools in [
        ("design", ["design"]),
        ("migrations", ["migrations"]),
        # dynorm.testing: the helpers, and (pytest being installed here) the plugin's fixtures.
        ("testing", ["testing", "pytest_plugin"]),
        ("workbench", ["workbench"]),
        ("mypy", ["mypy_plugin"]),
        ("web", ["web"]),
    ]:
        module = importlib.import_module(f"dynorm.{public}")
        implementations = [importlib.import_module(f"dynorm.tools.{tool}") for tool in tools]
        names = [n for i in implementations for n in i.__all__ if not n.startswith("pytest_")]
        lazy = LAZY.get(public, {})
        assert sorted(module.__all__) == sorted(names + list(lazy)), public
        for name in module.__all__:
            tool = (
                importlib.import_module(f"dynorm.tools.{lazy[name]}")
                if name in lazy
                else next(i for i in implementations if name in i.__all__)
            )
            assert getattr(module, name) is getattr(tool, name), f"{public}.{name}"


def test_the_pytest_plugin_modules_carry_their_hooks() -> None:
    # pytest registers a plugin's hooks by their names on the module the entry point names;
    # dynorm.testing carries them too, for `-p dynorm.testing` and `pytest_plugins = [...]`.
    for name in ("dynorm.tools.pytest_plugin", "dynorm.testing"):
        plugin = importlib.import_module(name)
        for hook in ("pytest_configure", "pytest_report_header", "pytest_collection_modifyitems"):
            assert callable(getattr(plugin, hook, None)), (name, hook)


def test_the_lazy_exports_are_the_type_checkers_imports() -> None:
    # dynorm/__init__.py imports its names for type checkers only and looks each up in
    # _EXPORTS when first used: both lists must name the same names from the same modules.
    tree = ast.parse(Path(dynorm.__file__).read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING"
    ]
    imported: dict[str, str] = {}
    for node in ast.walk(block):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = f"dynorm.{node.module}" if node.level else node.module
            imported |= {alias.name: module for alias in node.names}
    lazy = {name: module for module, names in dynorm._EXPORTS.items() for name in names}
    assert imported == lazy
    assert set(lazy) == EXPECTED


def test_import_dynorm_imports_none_of_its_layers() -> None:
    # The names are imported on first use: `import dynorm` alone (as the pytest plugin and
    # `dynorm.testing` do) loads no mapping, I/O or AWS code.
    code = (
        "import sys, dynorm; "
        "print(sorted(m for m in sys.modules if m.startswith(('dynorm.', 'attrs', 'cattrs', "
        "'aiobotocore', 'botocore', 'aiohttp'))))"
    )
    ran = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(dynorm.__file__).parents[1])},
    )
    assert ran.stdout.strip() == "[]"


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    table = dynorm.Table
    assert table is importlib.import_module("dynorm.mapping.table").Table
    assert vars(dynorm)["Table"] is table
    with pytest.raises(AttributeError, match="module 'dynorm' has no attribute 'Tabel'"):
        _ = dynorm.Tabel  # type: ignore[attr-defined]
    assert set(dir(dynorm)) >= EXPECTED | {"__version__"}


def test_version_is_the_installed_distributions() -> None:
    assert dynorm.__version__ == importlib.metadata.version("dynorm")
    assert isinstance(dynorm.__version__, str)
    assert dynorm.__version__[0].isdigit()
