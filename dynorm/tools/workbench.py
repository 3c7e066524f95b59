"""AWS NoSQL Workbench data models (the JSON files its data modeler imports and exports).

Both directions, for one table at a time:

- :func:`export_model` describes a dynorm :class:`~dynorm.Table` as a Workbench model (format
  version 3.0): the key attributes, every attribute the models store with its DynamoDB type, the
  global secondary indexes, one facet per model (its key templates as the key aliases) and sample
  items, encoded exactly as dynorm writes them. :func:`scan_items` reads a live table's items
  for it. :func:`dump_model` writes the JSON text.
- :func:`read_model` (:func:`load_model` for a file) checks a Workbench file and gives typed
  values; :func:`table_from_model` makes a :class:`~dynorm.Table` with the file's keys and indexes,
  and :func:`import_model` creates the table if missing and stores the file's items.

NoSQL Workbench models have no local secondary indexes: an export leaves a table's LSIs out and
says so in the model's description. Key attributes are strings in dynorm; a file may declare
number or binary keys (a table created from such a file keeps their types).

The file's items are DynamoDB JSON (``{"pk": {"S": "ORG#ACME"}}``), binary values as base64 text;
values inside ``M`` and ``L`` may be plain JSON, as Workbench writes them (``"M": {"on": true}``).
Files of every format version are read (1.0, 2.0 and 3.0 hold tables in one shape); exports are
format 3.0, DynamoDB JSON throughout.

The parts, one job each: dynorm.tools.workbench_model (the typed values, WorkbenchError, DynamoDB
JSON), workbench_read (a file read and checked), workbench_export (a Table as a model) and
workbench_import (a model's items stored). This module gathers their public names.
"""

from .workbench_export import dump_model, export_model, scan_items, stored_type
from .workbench_import import ImportedItem, ImportIncompleteError, ImportReport, import_model
from .workbench_model import (
    AWS_SERVICE,
    WORKBENCH_VERSION,
    Attribute,
    Facet,
    WorkbenchError,
    WorkbenchIndex,
    WorkbenchModel,
    WorkbenchTable,
)
from .workbench_read import load_model, read_model, table_from_model

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
