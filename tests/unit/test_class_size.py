"""No class of the io layer over 40 methods (issue 28): a Database is a façade over its parts.

Methods and properties count; ``@overload`` stubs do not (they are one method's signatures).
A class that grows past the limit should hand a job to a part of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dynorm

IO = Path(dynorm.__file__).parent / "io"
MAX_METHODS = 40


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list)


def _method_counts(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            counts[node.name] = sum(
                1
                for d in node.body
                if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_overload(d)
            )
    return counts


@pytest.mark.parametrize("path", sorted(IO.glob("*.py")), ids=lambda p: p.name)
def test_no_io_class_is_over_the_method_limit(path: Path) -> None:
    over = {name: n for name, n in _method_counts(path).items() if n > MAX_METHODS}
    assert not over, f"{path.name}: {over} methods; move a job into a part (limit {MAX_METHODS})"


def test_the_database_is_within_the_limit() -> None:
    assert 0 < _method_counts(IO / "database.py")["Database"] <= MAX_METHODS
