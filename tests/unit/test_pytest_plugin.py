"""The pytest plugin costs nothing where it is not used, and ``dynorm.testing`` needs no pytest.

Installing dynorm registers its pytest plugin with every pytest run in the environment, so the
module it registers imports neither the package's mapping and I/O layers nor moto, aiobotocore,
botocore or aiohttp: each run below is a fresh pytest process on a trivial test, which reports
what was loaded. And the examples, ``dynorm.testing`` and ``dynorm design`` work with dynorm
installed without its ``testing`` extra (pytest and moto blocked from importing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "dynorm.tools.pytest_plugin"
#: What no pytest run may import only because dynorm is installed.
HEAVY = ("moto", "aiobotocore", "botocore", "aiohttp", "dynorm.io", "dynorm.mapping")
#: All of dynorm that loading the registered plugin module imports.
LIGHT = ["dynorm", "dynorm.tools", "dynorm.tools.pytest_plugin", "dynorm.tools.testenv"]

TRIVIAL_TEST = """
import sys

HEAVY = {heavy!r}


def test_trivial(request):
    plugin = request.config.pluginmanager.get_plugin({name!r})
    assert plugin is not None, "the dynorm plugin was not loaded"
    heavy = sorted(
        m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in HEAVY)
    )
    assert heavy == []
    print("DYNORM", sorted(m for m in sys.modules if m.split(".")[0] == "dynorm"))
"""


def run_trivial(tmp_path: Path, plugin_name: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_trivial.py").write_text(TRIVIAL_TEST.format(heavy=HEAVY, name=plugin_name))
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DYNORM_"))}
    environment["PYTHONPATH"] = str(ROOT)
    return subprocess.run(  # noqa: S603 - this interpreter's pytest, fixed arguments
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_registered_plugin_is_the_light_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"dynorm": PLUGIN}


def test_a_pytest_run_loads_nothing_heavy_for_the_installed_plugin(tmp_path: Path) -> None:
    # Whatever module the installed distribution registers (an editable install made before
    # the entry point moved still names dynorm.testing, which must be as light on these).
    ran = run_trivial(tmp_path, "dynorm")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


def test_the_plugin_module_loads_no_more_of_dynorm_than_itself(tmp_path: Path) -> None:
    # The module pyproject.toml registers, loaded as pytest loads an entry point.
    ran = run_trivial(tmp_path, PLUGIN, "-p", "no:dynorm", "-p", PLUGIN)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"DYNORM {LIGHT!r}" in ran.stdout


# -- without the testing extra ---------------------------------------------------------------

#: Makes `import pytest` and `import moto` raise ImportError, as without dynorm[testing].
BLOCK = "import sys; sys.modules['pytest'] = None; sys.modules['moto'] = None; "
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.py"))


def run_python(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DYNORM_"))}
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "examples")])
    return subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", BLOCK + code],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_blocking_works() -> None:
    # The check below cannot pass by pytest being importable after all.
    ran = run_python("import pytest")
    assert ran.returncode != 0
    assert "import of pytest halted" in ran.stderr


def test_dynorm_testing_needs_no_pytest() -> None:
    ran = run_python(
        "import dynorm.testing as t; "
        "print(sorted(n for n in ('start_server', 'count_requests', 'fresh_table', "
        "'dynorm_connect') if hasattr(t, n)), sorted(t.__all__) == sorted(set(t.__all__)))"
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["['count_requests',", "'fresh_table',", "'start_server']", "True"]


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_example_imports_without_pytest(example: str) -> None:
    ran = run_python(f"import {example}")
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.startswith("seed_")])
def test_dynorm_design_runs_on_an_example_without_pytest(example: str) -> None:
    # As the `dynorm` console script runs: its main() reads sys.argv.
    ran = run_python(
        f"sys.argv = ['dynorm', 'design', 'examples/{example}.py:table', '--format', 'json']; "
        "from dynorm.cli import main; main()"
    )
    assert ran.returncode == 0, ran.stderr
    assert '"table"' in ran.stdout


def test_the_testing_extra_brings_the_asyncio_runner_the_fixtures_need() -> None:
    # Read from the source, not importlib.metadata: an installed dist's metadata may be stale.
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    names = [
        requirement.split(">")[0].split("=")[0].split("[")[0] for requirement in extras["testing"]
    ]
    assert "pytest-asyncio" in names
