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

Defaults stated in prose (`` `max_concurrency=` (…, default 64)``, `` `max_fanout` (default
100)``, `` `max_concurrency` (64 by default)``) are compared with the code's defaults too: a name
the test does not know fails, so add it to ``_defaults()`` when documenting a new one.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import re
import sys
import types
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
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
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
RUN_MARKER = "<!-- test: run -->"
#: A runnable block that sends TransactWriteItems: skipped where the server lacks it (dynalite).
RUN_TRANSACTIONS_MARKER = "<!-- test: run, transactions -->"
_FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


@attrs.frozen
class Snippet:
    """One ```python block: where it is, its code, and whether it is marked to run."""

    path: Path
    line: int
    code: str
    run: bool
    transactions: bool = False

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
        yield Snippet(path, line, match.group(1), run=run, transactions=transactions)


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
        for field in attrs.fields(strategy):
            if isinstance(field.default, int | float | str):  # not NOTHING, not a Factory
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
