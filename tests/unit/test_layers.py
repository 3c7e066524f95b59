"""The package's four layers import downward only, and its modules import no cycle.

::

    tools    the ``dynorm`` command (dynorm/cli/) and what it runs: design view, NoSQL
             Workbench files, migrations
    io       transport, Database, batching, transactions, test servers
    mapping  tables, models, relationships, strategies, read and write planning, paging and
             lazy queries (they await only the sender they are given)
    core     keys, codecs, expressions, cursors, request values, plan steps, limits   (never awaits)

Every module of ``dynorm`` must be placed in one layer here, so a new module is placed on
purpose. Imports are read from the source with ``ast`` — those under ``TYPE_CHECKING`` and inside
functions too — so no upward import hides anywhere. Cycles are checked on the imports that run
(``TYPE_CHECKING`` ones excluded: annotations may name a sibling module of the same layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dynorm

PACKAGE = Path(dynorm.__file__).parent

LAYERS: dict[str, tuple[str, ...]] = {
    "core": (
        "_chunks",
        "_codec",
        "_cursor",
        "_decoders",
        "_encoders",
        "_errors",
        "_events",
        "_fields",
        "_expressions",
        "_keys",
        "_limits",
        "_plans",
        "_ranges",
        "_retry",
        "_sigv4",
        "_steps",
        "_structs",
        "_wire",
    ),
    "mapping": (
        "_classify",
        "_copies",
        "_embedded",
        "_explain",
        "_loading",
        "_model",
        "_paging",
        "_query",
        "_queryload",
        "_reading",
        "_relations",
        "_stamps",
        "_state",
        "_strategies",
        "_streams",
        "_table",
        "_writeplan",
        "_writes",
    ),
    "io": (
        "__init__",
        "_batch",
        "_database",
        "_otel",
        "_servers",
        "_transaction",
        "_transport",
        "mypy",  # the mypy plugin: a tool for the user's type checker, imports no dynorm module
        "testing",
    ),
    "tools": (
        "__main__",
        "cli",
        "cli._app",
        "cli._connection",
        "cli._design",
        "cli._migrate",
        "cli._output",
        "cli._strategy",
        "cli._tables",
        "cli._target",
        "cli._workbench",
        "design",
        "_migrate_kinds",
        "_migrate_run",
        "migrations",
        "workbench",
    ),
}
ORDER = ("core", "mapping", "io", "tools")
LAYER_OF = {module: layer for layer, modules in LAYERS.items() for module in modules}


def modules() -> list[str]:
    """Every module, a subpackage's as dotted names (``cli._app``; ``cli`` for its init)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if len(parts) > 1 and parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(".".join(parts))
    return sorted(found)


def source(module: str) -> Path:
    package = PACKAGE.joinpath(*module.split("."))
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


def _package_of(module: str) -> list[str]:
    parts = module.split(".")
    if module == "__init__":
        return []
    return parts if source(module).name == "__init__.py" else parts[:-1]


def _known(dotted: list[str]) -> str | None:
    """The module of ``LAYER_OF`` that a dotted path inside the package names (longest match)."""
    for end in range(len(dotted), 0, -1):
        name = ".".join(dotted[:end])
        if name in LAYER_OF:
            return name
    return "__init__" if not dotted else None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(module: str) -> list[tuple[str, bool]]:
    """(imported dynorm module, whether it runs: not under TYPE_CHECKING) for each import."""
    tree = ast.parse(source(module).read_text(), filename=str(source(module)))
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            guarded |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        targets: list[list[str]] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module)[: len(_package_of(module)) - (node.level - 1)]
            elif node.module and (node.module == "dynorm" or node.module.startswith("dynorm.")):
                base = []
            else:
                continue
            named = (node.module or "").removeprefix("dynorm").lstrip(".")
            where = [*base, *named.split(".")] if named else base
            # ``from . import x`` / ``from dynorm import Table``: a module if x is one.
            targets = [[*where, a.name] for a in node.names] if not named else [where]
        elif isinstance(node, ast.Import):
            targets = [a.name.split(".")[1:] for a in node.names if a.name.startswith("dynorm.")]
        names = {_known(t) or _known(t[:-1]) for t in targets}
        found += [(name, id(node) not in guarded) for name in sorted(n for n in names if n)]
    return found


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in modules() if m not in LAYER_OF]
    assert unplaced == [], f"place these modules in a layer in {__file__}: {unplaced}"


@pytest.mark.parametrize("module", modules())
def test_imports_go_downward_only(module: str) -> None:
    here = ORDER.index(LAYER_OF[module])
    upward = [
        name
        for name, _ in imports(module)
        if name in LAYER_OF and ORDER.index(LAYER_OF[name]) > here
    ]
    assert upward == [], f"{module} ({LAYER_OF[module]}) imports from a higher layer: {upward}"


def test_the_modules_import_no_cycle() -> None:
    graph = {
        m: sorted({name for name, runs in imports(m) if runs and name in LAYER_OF})
        for m in modules()
    }
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            cycle = [*path[path.index(node) :], node]
            raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
        if node in done:
            return
        for nxt in graph.get(node, []):
            visit(nxt, [*path, node])
        done.add(node)

    for module in graph:
        visit(module, [])


def test_only_the_transport_talks_to_botocore() -> None:
    talkers = [
        m
        for m in modules()
        if any(
            isinstance(n, ast.Import | ast.ImportFrom)
            and any(
                (getattr(n, "module", None) or a.name).split(".")[0] in {"aiobotocore", "botocore"}
                for a in n.names
            )
            for n in ast.walk(ast.parse(source(m).read_text()))
        )
    ]
    assert talkers == ["_transport"]


def test_the_core_never_awaits() -> None:
    awaiting = [
        m
        for m in LAYERS["core"]
        if source(m).exists()
        and any(
            isinstance(n, ast.AsyncFunctionDef | ast.Await)
            for n in ast.walk(ast.parse(source(m).read_text()))
        )
    ]
    assert awaiting == []
