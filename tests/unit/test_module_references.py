"""Comments, docstrings and docs name modules that exist.

Code moves (issue 28 split several modules) leave comments pointing at files that are gone; a
reader following one finds nothing. This test reads every module of the package, the docs, the
README and the tests, and checks two kinds of reference:

- a path of a module of the package (``dynorm/io/paging.py``, ``mapping/copies.py``): the file
  exists;
- a dotted name inside the package's layers (``dynorm.io.paging``,
  ``dynorm.core.keys.shard_number``): it imports, and each name after the module is an attribute
  of what comes before it.

Other dotted words that start with ``dynorm.`` (span attributes such as ``dynorm.attempt``, public
names such as ``dynorm.jsonable``) are not module references and are left alone.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import dynorm

PACKAGE = Path(dynorm.__file__).parent
ROOT = PACKAGE.parent
LAYERS = ("core", "wire", "mapping", "io", "tools", "cli")

#: ``dynorm/io/paging.py`` or, in the package's own text, ``io/paging.py`` / ``core/codec/x.py``.
PATH = re.compile(rf"(?<![\w/.])(?:dynorm/)?(?:(?:{'|'.join(LAYERS)})/)(?:[a-z_]+/)*[a-z_]+\.py\b")
#: ``dynorm/_transport.py``: the package's private top-level modules, named by path.
PRIVATE_PATH = re.compile(r"(?<![\w/.])dynorm/_[a-z][a-z_]*\.py\b")
#: ``dynorm.io.paging`` and what follows it; ``dynorm._steps`` (a private top-level module).
DOTTED = re.compile(rf"\bdynorm\.(?:(?:{'|'.join(LAYERS)})|_[a-z]\w*)(?:\.[A-Za-z_]\w*)*")


def _texts() -> list[Path]:
    found = sorted(PACKAGE.rglob("*.py"))
    found += sorted((ROOT / "docs").glob("*.md"))
    # Not CHANGELOG.md: it tells history, and may name modules that were moved since.
    found.append(ROOT / "README.md")
    found += sorted((ROOT / "tests").rglob("*.py"))
    found += sorted((ROOT / "benchmarks").rglob("*.py"))
    found += sorted((ROOT / "examples").rglob("*.py"))
    return [p for p in found if p.exists() and p.name != Path(__file__).name]


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    # The longest prefix that imports, then attributes for the rest.
    for cut in range(len(parts), 1, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _exists(path: str) -> bool:
    if path.startswith("dynorm/"):
        return (ROOT / path).exists()
    return (PACKAGE / path).exists()


def _problems(line: str) -> list[str]:
    """What is stale in one line of text."""
    found = [f"{m.group()} does not exist" for m in PATH.finditer(line) if not _exists(m.group())]
    found += [f"{m.group()} does not exist" for m in PRIVATE_PATH.finditer(line)]
    found += [
        f"{m.group()} does not resolve" for m in DOTTED.finditer(line) if not _resolves(m.group())
    ]
    return found


def test_every_module_reference_names_a_module_that_exists() -> None:
    stale = [
        f"{file.relative_to(ROOT)}:{number}: {problem}"
        for file in _texts()
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1)
        for problem in _problems(line)
    ]
    assert not stale, "rename each to the module that holds it now:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        ("see dynorm/io/paging.py", False),
        ("see io/paging.py", False),
        ("see dynorm/_transport.py", True),
        ("see mapping/nothing_here.py", True),
        ("dynorm.core.keys.shard_number", False),
        ("dynorm.core.keys.no_such_name", True),
        ("dynorm.io.no_such_module", True),
        ("the span attribute dynorm.attempt", False),
    ],
)
def test_the_checker_tells_stale_from_live(text: str, stale: bool) -> None:
    assert bool(_problems(text)) is stale
