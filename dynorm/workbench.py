"""AWS NoSQL Workbench data models: read, write, export from a table, import into DynamoDB.

The implementation lives in ``dynorm/tools/workbench.py``; this module is its public name.
"""

from .tools.workbench import (
    AWS_SERVICE,
    WORKBENCH_VERSION,
    Attribute,
    Facet,
    ImportedItem,
    ImportIncompleteError,
    ImportReport,
    WorkbenchError,
    WorkbenchIndex,
    WorkbenchModel,
    WorkbenchTable,
    dump_model,
    export_model,
    import_model,
    load_model,
    read_model,
    scan_items,
    stored_type,
    table_from_model,
)

__all__ = [
    "AWS_SERVICE",
    "WORKBENCH_VERSION",
    "Attribute",
    "Facet",
    "ImportIncompleteError",
    "ImportReport",
    "ImportedItem",
    "WorkbenchError",
    "WorkbenchIndex",
    "WorkbenchModel",
    "WorkbenchTable",
    "dump_model",
    "export_model",
    "import_model",
    "load_model",
    "read_model",
    "scan_items",
    "stored_type",
    "table_from_model",
]
