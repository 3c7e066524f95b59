"""The folders are the layers: each imports only from the layers below it, and nothing cycles.

::

    public   dynorm.design / .workbench / .migrations / .testing / .mypy / .web, ``__main__``, cli/
    tools    tools/: design view, Workbench files, migrations, test servers, plugins, web
    api      dynorm/__init__.py: the names users import
    io       io/: senders, connection, transport, runner, Database, transactions, paging, batching
    mapping  mapping/: tables, models, relationships, strategies, read and write plans
    wire     wire/: JSON protocol, SigV4, typed page structures, retry rules
    core     core/: keys, expressions, limits, cursors, errors, requests, steps, codec/

A module's layer is its folder, so a new module is placed by where it is written. Imports are read
from the source with ``ast`` -- those under ``TYPE_CHECKING`` and inside functions too -- so no
upward import and no cycle hides anywhere.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dynorm

PACKAGE = Path(dynorm.__file__).parent
ORDER = ("core", "wire", "mapping", "io", "api", "tools", "public")
FOLDERS = {"core", "wire", "mapping", "io", "tools"}
#: The modules at the package's top: its public names, each a thin module over tools/ (or the
#: command line's entry point).
PUBLIC = {"__main__", "design", "migrations", "mypy", "testing", "web", "workbench"}
#: The layers that decide without sending: nothing in them awaits.
PURE = ("core", "wire", "mapping")


def modules() -> list[str]:
    """Every module as a dotted name inside the package (``core.keys``; ``cli`` for its init)."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if len(parts) > 1 and parts[-1] == "__init__":
            parts = parts[:-1]
        found.append(".".join(parts))
    return sorted(found)


def layer_of(module: str) -> str:
    top = module.split(".", maxsplit=1)[0]
    if top in FOLDERS:
        return top
    if top == "cli" or module in PUBLIC:
        return "public"
    if module == "__init__":
        return "api"
    raise AssertionError(
        f"dynorm/{module}.py is outside the layer folders; put it in one of {sorted(FOLDERS)}"
    )


def source(module: str) -> Path:
    package = PACKAGE.joinpath(*module.split("."))
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


def _package_of(module: str) -> list[str]:
    if module == "__init__":
        return []
    parts = module.split(".")
    return parts if source(module).name == "__init__.py" else parts[:-1]


def _known(dotted: list[str], known: set[str]) -> str | None:
    """The module of the package that a dotted path inside it names (longest match)."""
    for end in range(len(dotted), 0, -1):
        name = ".".join(dotted[:end])
        if name in known:
            return name
    return "__init__" if not dotted else None


def imports(module: str) -> list[str]:
    """Every dynorm module that ``module`` imports, wherever the import statement stands."""
    known = set(modules())
    tree = ast.parse(source(module).read_text(), filename=str(source(module)))
    found: set[str] = set()
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
        found |= {n for t in targets if (n := _known(t, known) or _known(t[:-1], known))}
    found.discard(module)
    return sorted(found)


def test_every_module_is_in_a_layer_folder() -> None:
    for module in modules():
        assert layer_of(module) in ORDER


@pytest.mark.parametrize("module", modules())
def test_imports_go_downward_only(module: str) -> None:
    here = ORDER.index(layer_of(module))
    upward = [name for name in imports(module) if ORDER.index(layer_of(name)) > here]
    assert upward == [], f"{module} ({layer_of(module)}) imports from a higher layer: {upward}"


def test_the_modules_import_no_cycle() -> None:
    graph = {m: imports(m) for m in modules()}
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


#: The senders that are aiobotocore's adapters: the only modules that import its libraries.
AWS_ADAPTERS = ["io.senders.aio", "io.senders.botocore_client"]


def test_only_the_aiobotocore_adapters_import_aiobotocore_botocore_or_aiohttp() -> None:
    talkers = [
        m
        for m in modules()
        if any(
            isinstance(n, ast.Import | ast.ImportFrom)
            and any(
                (getattr(n, "module", None) or a.name).split(".")[0]
                in {"aiobotocore", "botocore", "aiohttp"}
                for a in n.names
            )
            for n in ast.walk(ast.parse(source(m).read_text()))
        )
    ]
    assert talkers == AWS_ADAPTERS


@pytest.mark.parametrize("module", [m for m in modules() if layer_of(m) in PURE])
def test_the_pure_layers_never_await(module: str) -> None:
    awaiting = [
        f"line {n.lineno}"
        for n in ast.walk(ast.parse(source(module).read_text()))
        if isinstance(n, ast.AsyncFunctionDef | ast.Await | ast.AsyncFor | ast.AsyncWith)
    ]
    assert awaiting == [], f"{module} ({layer_of(module)}) awaits: {awaiting}"
