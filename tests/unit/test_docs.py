"""The documentation says what the code does: its snippets compile, and some of them run.

Every fenced ```python block of README.md and docs/*.md is checked, fast and without a server:

- it compiles (top-level ``await`` and ``async with`` allowed, as in an asyncio REPL), so no
  snippet has a syntax error;
- every name it imports from ``dynorm`` (``from dynorm import X``, ``from dynorm.testing import
  Y``) exists, so a rename cannot leave the docs behind.

A block preceded by the HTML comment ``<!-- test: run -->`` (invisible when the Markdown is
rendered) is also *run*, as a module of its own, against the embedded DynamoDB server of the
test session. Such a block must be self-contained: it declares its own table and models, calls
``connect(table, ...)`` and ``await db.create_table()`` itself, and asserts what it shows
(``<!-- test: run, transactions -->`` marks one that sends transactions, skipped on dynalite). While
it runs, ``dynorm.connect`` points at the test server with a uniquely named copy of the table,
deleted afterwards; every other argument is the block's own. Mark a block when it can run on its
own; fragments that use names defined elsewhere (``org``, ``db``) stay compile-only.

Every page's blocks also run in order, in one namespace, as a reader pastes them into
``python -m asyncio`` (all but those whose first line is ``# partial: <why>``): see
tests/unit/test_docs_pages.py.

Every block is also *type-checked*, by mypy (strict, with the ``dynorm.mypy`` plugin) and
pyright (standard), as a user's module would be: a block that uses names from earlier blocks of
its page (``org``, ``User``, ``table``) is checked after their declarations, and names no block
declares get a type (see "type-checking every snippet" below). A block marked
``<!-- test: not typed -->`` (generated code shown as an illustration, another library's
untyped calls) is only compiled. Imports of modules that are not installed (``myapp``, or a web
framework the environment lacks) read as modules of Any.

Defaults stated in prose (`` `max_concurrency=` (…, default 64)``, `` `max_fanout` (default
100)``, `` `max_concurrency` (64 by default)``) are compared with the code's defaults too: a name
the test does not know fails, so add it to ``_defaults()`` when documenting a new one.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import types
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest

import dynorm
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    RunningServer,
    fast_path_selected,
)

ROOT = Path(__file__).resolve().parents[2]
#: The example apps' folder (see ``_installed``).
_EXAMPLES = ROOT / "examples"
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
RUN_MARKER = "<!-- test: run -->"
#: A runnable block that sends TransactWriteItems: skipped where the server lacks it (dynalite).
RUN_TRANSACTIONS_MARKER = "<!-- test: run, transactions -->"
#: A block that is not type-checked (generated code shown as an illustration, another library's
#: untyped calls): it is still compiled and its dynorm imports checked.
UNTYPED_MARKER = "<!-- test: not typed -->"
_FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@attrs.frozen
class Snippet:
    """One ```python block: where it is, its code, and whether it is marked to run."""

    path: Path
    line: int
    code: str
    run: bool
    transactions: bool = False
    typed: bool = True

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def snippets_of(path: Path) -> Iterator[Snippet]:
    text = path.read_text(encoding="utf-8")
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = text.count("\n", 0, match.start()) + 2  # the block's first line of code
        marker = before.strip()
        transactions = marker == RUN_TRANSACTIONS_MARKER
        run = marker == RUN_MARKER or transactions
        yield Snippet(
            path,
            line,
            match.group(1),
            run=run,
            transactions=transactions,
            typed=marker != UNTYPED_MARKER,
        )


SNIPPETS = [s for path in DOCS for s in snippets_of(path)]
RUNNABLE = [
    pytest.param(s, marks=[pytest.mark.transactions] if s.transactions else [], id=s.name)
    for s in SNIPPETS
    if s.run
]


def compile_snippet(snippet: Snippet) -> types.CodeType:
    code: types.CodeType = compile(
        snippet.code, snippet.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    return code


def test_the_docs_have_snippets_and_some_run() -> None:
    assert len(DOCS) >= 6
    assert len(SNIPPETS) >= 20
    assert RUNNABLE


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_snippet_compiles(snippet: Snippet) -> None:
    compile_snippet(snippet)


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_snippet_imports_exist(snippet: Snippet) -> None:
    tree = ast.parse(snippet.code)
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "dynorm":
            module = importlib.import_module(node.module or "dynorm")
            missing += [
                f"{module.__name__}.{a.name}" for a in node.names if not hasattr(module, a.name)
            ]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "dynorm"
            and not hasattr(dynorm, node.attr)
        ):
            missing.append(f"dynorm.{node.attr}")
    assert not missing, f"{snippet.name} uses names dynorm does not have: {missing}"


# -- defaults stated in prose -------------------------------------------------------------------


def _defaults() -> dict[str, object]:
    """Every documented default, read from the code."""
    found: dict[str, object] = {}
    for fn in (dynorm.connect, dynorm.Database.__init__):
        for name, parameter in inspect.signature(fn).parameters.items():
            if parameter.default is not inspect.Parameter.empty:
                found[name] = parameter.default
    for strategy in (dynorm.Denormalized, dynorm.Embedded):
        for field in msgspec.structs.fields(strategy):
            if isinstance(field.default, int | float | str):  # not NODEFAULT, not a factory
                found[field.name] = field.default
    return found


_VALUE = r"(?P<value>\d+(?:\.\d+)?|None|True|False)"
_STATED = [
    re.compile(rf"`(?P<name>\w+)=?` \([^()`]*?\bdefault {_VALUE}\)"),
    re.compile(rf"`(?P<name>\w+)=?` \({_VALUE} by default\)"),
]


def stated_defaults() -> Iterator[tuple[str, str, str]]:
    """(where, name, value) for each default the docs state, joining wrapped lines."""
    for path in DOCS:
        text = re.sub(r"\s*\n\s*", " ", _FENCE.sub("", path.read_text(encoding="utf-8")))
        for pattern in _STATED:
            for match in pattern.finditer(text):
                yield str(path.relative_to(ROOT)), match["name"], match["value"]


def test_the_docs_state_defaults() -> None:
    names = {name for _, name, _ in stated_defaults()}
    assert {"max_concurrency", "max_attempts", "max_fanout"} <= names


@pytest.mark.parametrize(("where", "name", "value"), sorted(set(stated_defaults())))
def test_a_stated_default_is_the_codes(where: str, name: str, value: str) -> None:
    defaults = _defaults()
    assert name in defaults, f"{where}: {name!r} has a stated default; add it to _defaults()"
    assert str(defaults[name]).removesuffix(".0") == value.removesuffix(".0"), (
        f"{where} says {name} defaults to {value}; the code says {defaults[name]!r}"
    )


# -- running the self-contained snippets --------------------------------------------------------


@contextlib.contextmanager
def module_named(name: str) -> Iterator[types.ModuleType]:
    """A fresh module in sys.modules for the block's lifetime (models look names up there)."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        yield module
    finally:
        del sys.modules[name]


def connect_to(server: RunningServer) -> Any:
    """``dynorm.connect`` on the test server, with a unique table name dropped afterwards."""
    real = dynorm.connect

    @contextlib.asynccontextmanager
    async def connect(*tables: dynorm.Table, **kwargs: Any) -> AsyncIterator[dynorm.Database]:
        suffix = uuid.uuid4().hex[:8]
        kwargs.pop("table_name", None)
        kwargs.update(
            endpoint_url=server.url,
            region_name=TEST_REGION,
            aws_access_key_id=TEST_ACCESS_KEY_ID,
            aws_secret_access_key=TEST_SECRET_ACCESS_KEY,
            table_names={t: f"{t.name}-docs-{suffix}" for t in tables},
        )
        kwargs.setdefault("fast_path", fast_path_selected())
        async with real(*tables, **kwargs) as db:
            try:
                yield db
            finally:
                for table in tables:
                    with contextlib.suppress(dynorm.TableNotFoundError):
                        await db.delete_table(table)

    return connect


@pytest.mark.integration
@pytest.mark.parametrize("snippet", RUNNABLE)
async def test_snippet_runs(
    snippet: Snippet, dynorm_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = compile_snippet(snippet)
    monkeypatch.setattr(dynorm, "connect", connect_to(dynorm_server))
    monkeypatch.delenv("DYNORM_CURSOR_SECRET", raising=False)
    name = f"docs_snippet_{uuid.uuid4().hex[:8]}"
    with module_named(name) as module:
        result = eval(code, vars(module))  # noqa: S307 - the project's own documentation
        if inspect.iscoroutine(result):
            await result


# -- type-checking every snippet ----------------------------------------------------------------
#
# Every block (but those marked `<!-- test: not typed -->`) is type-checked by mypy (strict, with
# the dynorm.mypy plugin) and pyright (standard), as a user's module would be. A block is a
# module of its own, preceded by what it uses from earlier blocks of its page: the declarations
# (imports, classes, functions, assignments without `await`) its names refer to, and theirs in
# turn, as a reader of the page would take them. Its statements from the first `await` (or
# `async with`/`async for`) on run inside an `async def`, since top-level await is the REPL's.
# A name no earlier block declares is given a type: `db` a Database, `tx` a Transaction,
# `org`/`users`/`old_user` an `Org`/`list[User]`/`User` when the page declares that model, a
# dynorm name its import, a module its import, an undeclared class a class accepting anything,
# anything else Any. Imports of modules that are not installed (your own `myapp`, FastAPI
# without it installed) read as modules of Any. All blocks are checked in one run of each
# checker, started together.

_AWAITS = (ast.Await, ast.AsyncFor, ast.AsyncWith)
_DECLARATIONS = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BUILTINS = frozenset(dir(builtins))
#: Names blocks use without declaring them, and their types.
_GIVEN = {"db": "dynorm.Database", "tx": "dynorm.Transaction", "table": "dynorm.Table"}
_HEADER = """\
# {name}: the block, after what it uses from earlier blocks of its page (tests/unit/test_docs.py)
from typing import Any

import dynorm


def _given() -> Any: ...


"""


def _awaits(node: ast.AST) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, _AWAITS):
            return True
        stack += [c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES)]
    return False


def _bound(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        return {stmt.name}
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    found: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            found.add(n.name)
        stack += [
            c for c in ast.iter_child_nodes(n) if not isinstance(c, (*_SCOPES, ast.comprehension))
        ]
    return found


def _used(stmt: ast.stmt) -> set[str]:
    """Names the statement reads (string targets of HasMany["X"]/BelongsTo["X"] included)."""
    inner: set[str] = set()
    names: set[str] = set()
    for n in ast.walk(stmt):
        if isinstance(n, ast.arg):
            inner.add(n.arg)
        elif isinstance(n, ast.Name):
            (names if isinstance(n.ctx, ast.Load) else inner).add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            inner.add(n.name)
        elif (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id in ("HasMany", "BelongsTo")
        ):
            args = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            names |= {
                a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            }
    return names - (inner - _bound(stmt)) - _BUILTINS


@attrs.frozen
class _Statement:
    """One top-level statement of a block, with what it binds and reads."""

    snippet: Snippet
    first: int  # its first line in the block (decorators included)
    lines: tuple[str, ...]
    declares: bool  # a declaration a later block may use
    definition: bool  # a class, function or import
    awaits: bool
    bound: frozenset[str]
    used: frozenset[str]

    def doc_line(self, i: int) -> int:
        return self.snippet.line + self.first - 1 + i


def _statements(snippet: Snippet) -> list[_Statement]:
    lines = snippet.code.splitlines()
    found = []
    for node in ast.parse(snippet.code).body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        awaits = _awaits(node)
        declares = isinstance(node, (*_DECLARATIONS, ast.Assign, ast.AnnAssign)) and not awaits
        found.append(
            _Statement(
                snippet,
                first,
                tuple(lines[first - 1 : node.end_lineno]),
                declares,
                isinstance(node, _DECLARATIONS),
                awaits,
                frozenset(_bound(node)),
                frozenset(_used(node)),
            )
        )
    return found


@attrs.frozen
class TypedModule:
    """A block as a module to type-check, and the doc line of each of its lines."""

    snippet: Snippet
    source: str
    doc_lines: dict[int, tuple[Snippet, int]]


def _model_of(name: str, declared: Callable[[str], bool]) -> str | None:
    """``org`` -> ``Org``, ``users`` -> ``list[User]``, ``old_user`` -> ``User`` if declared."""
    last = name.rsplit("_", 1)[-1]
    for word, plural in ((last, False), (last.removesuffix("s"), True)):
        if plural and word == last:
            continue
        cls = word[:1].upper() + word[1:]
        if word and declared(cls):
            return f"list[{cls}]" if plural else cls
    return None


def typed_module(snippet: Snippet, earlier: list[_Statement]) -> TypedModule:
    own = _statements(snippet)
    page = [*earlier, *own]
    start = len(earlier)
    own_bound = {n for st in own for n in st.bound} | {"dynorm"}

    def binder(i: int, name: str) -> int | None:
        # The last declaration before statement i; else (a forward reference) the first after
        # it in the same block.
        before = [j for j in range(i) if page[j].declares and name in page[j].bound]
        if before:
            return before[-1]
        after = [
            j
            for j in range(i + 1, len(page))
            if page[j].snippet is page[i].snippet and name in page[j].bound
        ]
        return after[0] if after else None

    chosen: set[int] = set()
    given: dict[str, str] = {}
    todo = [(i, n) for i in range(start, len(page)) for n in page[i].used if n not in own_bound]
    while todo:
        i, name = todo.pop()
        j = binder(i, name) if name != "dynorm" else i
        if j is None:
            if name in given:
                continue
            model = None
            if name[:1].islower() and name not in _GIVEN:
                model = _model_of(name, lambda c: binder(start, c) is not None or c in own_bound)
            given[name] = model or ""
            if model is not None:
                todo.append((start, model.removeprefix("list[").removesuffix("]")))
        elif j < start and j not in chosen:
            chosen.add(j)
            todo += [(j, n) for n in page[j].used]
    lines = _HEADER.format(name=snippet.name).splitlines()
    later: list[str] = []  # declarations naming a model, after the models
    for name, model in sorted(given.items()):
        if model:
            later.append(f"{name}: {model} = _given()")
        elif name in _GIVEN:
            lines.append(f"{name}: {_GIVEN[name]} = _given()")
        elif name in dynorm.__all__:
            lines.append(f"from dynorm import {name}")
        elif _installed(name):
            lines.append(f"import {name}")
        elif name[:1].isupper():
            lines.append(f"class {name}(Any): ...  # type: ignore[misc]")
        else:
            lines.append(f"{name}: Any = _given()")
    doc_lines: dict[int, tuple[Snippet, int]] = {}
    module: list[_Statement] = []
    body: list[_Statement] = []
    for st in [*(earlier[i] for i in sorted(chosen)), *own]:
        # Classes, functions and imports at module level; other statements too until the first
        # that awaits, which and all after it run in the async function.
        (module if st.definition or not (body or st.awaits) else body).append(st)

    def emit(st: _Statement, indent: str) -> None:
        for i, text in enumerate(st.lines):
            lines.append(indent + text if text.strip() else text)
            doc_lines[len(lines)] = (st.snippet, st.doc_line(i))

    # Names typed by a model come after the model's declaration.
    models = {m.removeprefix("list[").removesuffix("]") for m in given.values() if m}
    for st in module:
        if later and models <= {n for done in module[: module.index(st)] for n in done.bound}:
            lines += later
            later = []
        emit(st, "")
    lines += later
    if body:
        outer = {n for st in module for n in st.bound} | set(given)
        shared = sorted({n for st in body for n in st.bound} & outer)
        lines += ["", "", "async def _block() -> None:"]
        if shared:
            lines.append(f"    global {', '.join(shared)}")
        for st in body:
            emit(st, "    ")
    return TypedModule(snippet, "\n".join(lines) + "\n", doc_lines)


def typed_modules(snippets: Sequence[Snippet]) -> dict[str, TypedModule]:
    """``snippet_NNN`` -> its module, for every typed block."""
    found: dict[str, TypedModule] = {}
    page: Path | None = None
    earlier: list[_Statement] = []
    for n, snippet in enumerate(snippets):
        if snippet.path != page:
            page, earlier = snippet.path, []
        if snippet.typed:
            found[f"snippet_{n:03d}"] = typed_module(snippet, earlier)
        earlier += _statements(snippet)
    return found


def _installed(name: str) -> bool:
    """Whether the type checkers find module ``name``.

    Not an example app: tests of the examples put their folder on ``sys.path``, which the
    checkers do not search, so ``from web_app import ...`` in a page reads as a user's module.
    """
    spec = importlib.util.find_spec(name)
    return spec is not None and not (spec.origin or "").startswith(str(_EXAMPLES))


def _missing_modules(modules: Iterable[TypedModule]) -> set[str]:
    """Dotted modules the blocks import that are not installed (and their parents)."""
    missing: set[str] = set()
    for module in modules:
        for node in ast.walk(ast.parse(module.source)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if top and not _installed(top):
                    parts = name.split(".")
                    missing |= {".".join(parts[: k + 1]) for k in range(len(parts))}
    return missing


def write_modules(into: Path) -> dict[str, TypedModule]:
    """Every typed block as a module under ``into``; stubs of Any for modules not installed."""
    modules = typed_modules(SNIPPETS)
    for name, module in modules.items():
        (into / f"{name}.py").write_text(module.source, encoding="utf-8")
    stubs = into / "stubs"
    for dotted in _missing_modules(modules.values()):
        path = stubs.joinpath(*dotted.split("."), "__init__.pyi")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("from typing import Any\n\ndef __getattr__(name: str) -> Any: ...\n")
    stubs.mkdir(exist_ok=True)
    return modules


@attrs.frozen
class CheckerRun:
    """What one type checker said about the blocks, by doc location."""

    checker: str
    errors: list[str]


_MYPY_LINE = re.compile(r"^(?P<file>[^:\n]+\.py):(?P<line>\d+): error: (?P<message>.*)$", re.M)


def _locate(modules: Mapping[str, TypedModule], file: str, line: int) -> str:
    module = modules[Path(file).stem]
    snippet, doc_line = module.doc_lines.get(line, (module.snippet, 0))
    where = f"{snippet.path.relative_to(ROOT)}:{doc_line}" if doc_line else snippet.name
    return where if snippet is module.snippet else f"{where} (used by {module.snippet.name})"


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CheckerRun]:
    """mypy and pyright over every typed block, started together, each once."""
    into = tmp_path_factory.mktemp("snippets")
    modules = write_modules(into)
    files = sorted(str(into / f"{name}.py") for name in modules)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    # A block importing a module that is not installed sees Any from it: its decorators
    # (a web framework's routes) are untyped, and what its calls return is Any.
    missing = _missing_modules(modules.values())
    lenient = "".join(
        f"[mypy-{name}]\ndisallow_untyped_decorators = False\nwarn_return_any = False\n"
        for name, module in modules.items()
        if _missing_modules([module]) & missing
    )
    (into / "mypy.ini").write_text(
        "[mypy]\nstrict = True\nplugins = dynorm.mypy\nwarn_unreachable = True\n"
        f"mypy_path = {into / 'stubs'}{os.pathsep}{ROOT}\n"
        "enable_error_code = ignore-without-code, redundant-expr, truthy-bool\n"
        # Another library's untyped modules (boto3 in a block showing another tool's writes).
        "[mypy-boto3.*]\nignore_missing_imports = True\n" + lenient
    )
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed next to this interpreter")
    mypy = subprocess.Popen(  # noqa: S603 - our own interpreter and files
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(into / "mypy.ini"),
            "--cache-dir",
            str(ROOT / ".mypy_cache" / "docs-snippets"),
            *files,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=into,
    )
    pyright_bin = shutil.which("pyright", path=str(Path(sys.executable).parent))
    pyright = None
    if pyright_bin is not None:
        (into / "pyrightconfig.json").write_text(
            json.dumps(
                {
                    "typeCheckingMode": "standard",
                    "pythonVersion": "3.11",
                    "stubPath": str(into / "stubs"),
                    "extraPaths": [str(ROOT)],
                }
            )
        )
        pyright = subprocess.Popen(  # noqa: S603 - the venv's pyright on our files
            [pyright_bin, "--pythonpath", sys.executable, "--outputjson", *files],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=into,
        )
    mypy_out, _ = mypy.communicate(timeout=300)
    runs = {"mypy": CheckerRun("mypy", [])}
    assert mypy.returncode in (0, 1), mypy_out
    for match in _MYPY_LINE.finditer(mypy_out):
        where = _locate(modules, match["file"], int(match["line"]))
        runs["mypy"].errors.append(f"{where}: {match['message']}")
    if pyright is not None:
        out, err = pyright.communicate(timeout=300)
        report = json.loads(out) if out.strip().startswith("{") else None
        assert report is not None, err or out
        errors = []
        for diagnostic in report.get("generalDiagnostics", []):
            if diagnostic.get("severity") != "error":
                continue
            line = diagnostic["range"]["start"]["line"] + 1
            where = _locate(modules, diagnostic["file"], line)
            message = diagnostic["message"].splitlines()[0]
            errors.append(f"{where}: {message} ({diagnostic.get('rule', '')})")
        runs["pyright"] = CheckerRun("pyright", errors)
    return runs


def test_every_typed_block_is_a_module() -> None:
    modules = typed_modules(SNIPPETS)
    assert len(modules) >= len(SNIPPETS) - 5  # only a few blocks are marked not typed
    for module in modules.values():
        compile(module.source, module.snippet.name, "exec", dont_inherit=True)


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_the_blocks_type_check(checker: str, checked: dict[str, CheckerRun]) -> None:
    if checker not in checked:
        pytest.skip(f"{checker} is not installed next to this interpreter")
    errors = checked[checker].errors
    assert not errors, f"{checker} rejects documented code:\n" + "\n".join(sorted(set(errors)))
