"""Every page of the documentation runs as written, its blocks in order.

A reader pastes a page's ```python blocks, one after the other, into ``python -m asyncio`` (the
README says how, against the embedded server). This test does the same: per page (README.md and
each docs/*.md), every Python block runs in order in one namespace, top-level ``await`` allowed,
against the embedded DynamoDB server of the test session.

A block that is deliberately partial (a fragment using names the page never defines, such as
``db`` inside a web framework's handler, or output shown as an illustration) says so on its first
line with a comment ``# partial: <why>``; it is skipped here but still compiled and type-checked
by tests/unit/test_docs.py. Non-Python blocks (console, json, toml) are not run.

While a page runs, ``dynorm.connect`` points at the test server, every other argument the
block's own; each table is renamed with one suffix per page run, so two blocks connecting to
``Table("app", ...)`` reach the same table, as the reader's two connections would. The page's
tables are deleted when it ends.

A test function a block declares (``async def test_...(dynorm_connect: Connect)``) is run right
after its block, as pytest would run it, with the plugin's ``dynorm_connect`` on the same server
(the real ``connect``, fresh tables). A test needing other fixtures is a whole test module, shown
so, and runs under pytest (``test_a_test_module_on_a_page_passes``).

A page that sends transactions says so with ``<!-- test: run, transactions -->`` before one of
its blocks (or ``<!-- test: transactions -->`` anywhere) and is skipped on dynalite.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import dynorm
from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    RunningServer,
    fast_path_selected,
)
from dynorm.tools.testing import fresh_connect

from .test_docs import DOCS, ROOT, RUN_TRANSACTIONS_MARKER, Snippet, compile_snippet, module_named
from .test_docs import snippets_of as _snippets_of

#: The first line of a block a page run skips, followed by the reason.
PARTIAL = "# partial:"
#: Anywhere in a page: the page sends transactions (skipped on dynalite).
PAGE_TRANSACTIONS_MARKER = "<!-- test: transactions -->"


def partial(snippet: Snippet) -> bool:
    return snippet.code.lstrip().startswith(PARTIAL)


def runs(path: Path) -> list[Snippet]:
    """The blocks of ``path`` a page run executes, in order."""
    return [s for s in _snippets_of(path) if not partial(s)]


def _transactions(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    return RUN_TRANSACTIONS_MARKER in text or PAGE_TRANSACTIONS_MARKER in text


def _marks(path: Path) -> list[pytest.MarkDecorator]:
    return [pytest.mark.transactions] if _transactions(path) else []


PAGES = [
    pytest.param(
        path,
        marks=_marks(path),
        id=str(path.relative_to(ROOT)),
    )
    for path in DOCS
    if any(True for _ in _snippets_of(path))
]


def test_a_partial_block_says_why() -> None:
    for path in DOCS:
        for snippet in _snippets_of(path):
            first = snippet.code.lstrip().splitlines()[0]
            if first.startswith(PARTIAL):
                assert first.removeprefix(PARTIAL).strip(), f"{snippet.name}: partial, but why?"


class _PageTables:
    """``dynorm.connect`` on the test server for one page run: its tables, dropped at the end."""

    def __init__(self, server: RunningServer) -> None:
        self.server = server
        self.suffix = uuid.uuid4().hex[:8]
        self.tables: dict[str, dynorm.Table] = {}
        self.real = dynorm.connect

    def name(self, table: dynorm.Table) -> str:
        return f"{table.name}-docs-{self.suffix}"

    def _settings(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.server.url,
            "region_name": TEST_REGION,
            "aws_access_key_id": TEST_ACCESS_KEY_ID,
            "aws_secret_access_key": TEST_SECRET_ACCESS_KEY,
            "fast_path": fast_path_selected(),
        }

    def connect(self) -> Any:
        @contextlib.asynccontextmanager
        async def connect(*tables: dynorm.Table, **kwargs: Any) -> AsyncIterator[dynorm.Database]:
            kwargs.pop("table_name", None)
            kwargs.pop("endpoint_url", None)
            self.tables.update({self.name(t): t for t in tables})
            kwargs.update(self._settings(), table_names={t: self.name(t) for t in tables})
            async with self.real(*tables, **kwargs) as db:
                yield db

        return connect

    async def drop(self) -> None:
        tables = list(self.tables.values())
        if not tables:
            return
        names = {t: self.name(t) for t in tables}
        async with self.real(*tables, table_names=names, **self._settings()) as db:
            for table in tables:
                with contextlib.suppress(dynorm.TableNotFoundError):
                    await db.delete_table(table)


@pytest.mark.integration
@pytest.mark.parametrize("page", PAGES)
async def test_page_runs_in_order(
    page: Path, dynorm_server: RunningServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # files a page writes (a migration's checkpoint) go there
    tables = _PageTables(dynorm_server)
    monkeypatch.setattr(dynorm, "connect", tables.connect())
    monkeypatch.delenv("DYNORM_CURSOR_SECRET", raising=False)
    name = f"docs_page_{uuid.uuid4().hex[:8]}"
    try:
        with module_named(name) as module:
            for snippet in runs(page):
                before = dict(vars(module))
                code = compile_snippet(snippet)
                try:
                    result = eval(code, vars(module))  # noqa: S307 - the project's own docs
                    if inspect.iscoroutine(result):
                        await result
                    with monkeypatch.context() as m:
                        m.setattr(dynorm, "connect", tables.real)
                        await _run_tests(before, vars(module), dynorm_server)
                except Exception as e:
                    e.add_note(f"in the block at {snippet.name}, run after the page's earlier ones")
                    raise
    finally:
        await tables.drop()


async def _run_tests(before: dict[str, Any], now: dict[str, Any], server: RunningServer) -> None:
    """Run the test functions a block declared, given ``dynorm_connect``."""
    for name, fn in now.items():
        if not name.startswith("test_") or before.get(name) is fn:
            continue
        parameters = list(inspect.signature(fn).parameters)
        if parameters == ["dynorm_connect"] and inspect.iscoroutinefunction(fn):
            await fn(dynorm_connect=fresh_connect(server.url))


# -- test modules shown whole run under pytest ------------------------------------------------


def _module_block(path: Path, first_line: str) -> Snippet:
    """The block of ``path`` that starts with ``first_line`` (``# test_orgs.py``)."""
    found = [s for s in _snippets_of(path) if s.code.startswith(first_line + "\n")]
    assert len(found) == 1, f"{path.name}: one block starting {first_line!r}"
    return found[0]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("page", "first_line"),
    [("docs/testing.md", "# test_orgs.py")],
)
def test_a_test_module_on_a_page_passes(
    page: str, first_line: str, tmp_path: Path, dynorm_server: RunningServer
) -> None:
    """A reader's pytest run of the module as shown: its fixtures, the plugin's, its asserts.

    The run uses this session's server (``DYNORM_TEST_ENDPOINT_URL``), whichever backend it is.
    """
    snippet = _module_block(ROOT / page, first_line)
    (tmp_path / first_line.removeprefix("# ")).write_text(snippet.code, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("DYNORM_CURSOR_SECRET", None)
    env["DYNORM_TEST_ENDPOINT_URL"] = dynorm_server.url
    options = ["asyncio_mode=auto", "asyncio_default_fixture_loop_scope=function"]
    done = subprocess.run(  # noqa: S603 - our own interpreter on the page's module
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + [arg for option in options for arg in ("-o", option)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout
