"""``MODULE:TABLE``: the Table a command works on, named as ``uvicorn app:app`` names an app."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

import click

from dynorm.core.errors import DynormError
from dynorm.mapping.table import Table

from ._output import Interrupted

__all__ = ["TableParam", "TargetError", "load_object", "load_table"]


class TargetError(Exception):
    """``MODULE:TABLE`` does not name a Table; the message says what to change."""


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise TargetError(f"no file {str(path)!r}")
    # The file's own directory comes first, so the modules beside it import as they do when the
    # file is run as a script.
    sys.path.insert(0, str(path.parent.resolve()))
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a spec
        raise TargetError(f"cannot import {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _import(name: str) -> Any:
    # As uvicorn does: modules are looked up from the current directory first.
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise TargetError(
                f"no module {name!r} (looked in {str(Path.cwd())!r} and the installed packages); "
                "run from the directory that holds it, or name the file: path/to/models.py:table"
            ) from None
        raise


def load_object(target: str, what: str = "TABLE") -> Any:
    """Import ``module:attribute`` (or ``path/to/file.py:attribute``) and return the attribute."""
    where, colon, attribute = target.rpartition(":")
    if not colon or not where or not attribute:
        raise TargetError(
            f"{target!r} is not MODULE:{what}; name the module and the object in it, "
            f"e.g. myapp.models:{what.lower()} or path/to/models.py:{what.lower()}"
        )
    try:
        module = _import_file(Path(where)) if where.endswith(".py") else _import(where)
    except TargetError:
        raise
    except DynormError as exc:
        raise TargetError(f"importing {where!r} failed: {_one_line(exc)}") from exc
    except KeyboardInterrupt:
        raise Interrupted(
            f"importing {where!r} raised KeyboardInterrupt; nothing was done"
        ) from None
    except SystemExit as exc:
        raise TargetError(
            f"importing {where!r} failed: it called sys.exit({exc.code!r}) while being "
            "imported; keep script code under `if __name__ == '__main__':`"
        ) from None
    except BaseException as exc:  # noqa: BLE001  (whatever a module raises is reported)
        raise TargetError(
            f"importing {where!r} failed: {type(exc).__name__}: {_one_line(exc)}"
        ) from None
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            tables = sorted(n for n, v in vars(module).items() if isinstance(v, Table))
            hint = f"; its Tables: {', '.join(tables)}" if tables else "; it defines no Table"
            if what != "TABLE":
                hint = ""
            raise TargetError(f"{where!r} has no attribute {attribute!r}{hint}") from None
        except Exception as exc:  # noqa: BLE001  (a module __getattr__ may raise anything)
            raise TargetError(
                f"reading {attribute!r} from {where!r} raised {type(exc).__name__}: "
                f"{_one_line(exc)}"
            ) from None
    return found


def load_table(target: str) -> Table:
    """Import ``module:attribute`` (or ``path/to/file.py:attribute``) and return the Table.

    Every relationship of the table is resolved and checked, as on first use.
    """
    found = load_object(target)
    if not isinstance(found, Table):
        raise TargetError(
            f"{target} is a {type(found).__name__}, not a dynorm.Table; name the Table object"
        )
    try:
        found.check()
    except DynormError as exc:
        raise TargetError(f"{target}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001  (a model's own code: say what it raised)
        raise TargetError(
            f"{target}: checking it raised {type(exc).__name__}: {_one_line(exc)}"
        ) from None
    return found


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line."""
    return " ".join(str(exc).split())


class TableParam(click.ParamType):  # type: ignore[type-arg]
    """A command argument naming a Table as ``MODULE:TABLE``."""

    name = "MODULE:TABLE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Table):
            return value
        try:
            return load_table(str(value))
        except TargetError as exc:
            self.fail(str(exc), param, ctx)
