"""``make release-check``: the sdist and the wheel as a user gets them, installed and run.

``python -m tests.release.check`` (from the repository's root, with the dev extra's ``build``):

1. builds the sdist, then the wheel from the sdist (``python -m build``, the build backend in an
   isolated environment, as pip builds an sdist), into a temporary directory;
2. checks what they carry: the wheel ``dynorm/py.typed``, the licence and only the package, the
   sdist the licence, the README and pyproject.toml, both the version of pyproject.toml;
3. installs the wheel into a new virtualenv with only its declared dependencies (not editable,
   no dev extra, no ``PYTHONPATH``; pip's index settings are the environment's, as for ``.venv``);
4. runs from there, outside the source tree: ``smoke.py`` (models, decoding, planning, no
   server), ``python -c "import dynorm; print(dynorm.__version__)"``, ``dynorm --help``,
   ``python -m dynorm --help``, ``dynorm design`` on smoke.py's table, and ``pip check``.

Everything goes in a temporary directory that is removed at the end (``--keep`` keeps it and
says where). Any failure names the step and exits non-zero.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("smoke.py")
#: Variables that would let the venv import something other than what the wheel installed.
LEAKY_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV")


class ReleaseCheckError(Exception):
    """A step of the check failed; the message says which and what it saw."""


def project_version(root: Path = ROOT) -> str:
    """The version pyproject.toml declares: the one place it is written."""
    with (root / "pyproject.toml").open("rb") as file:
        version: str = tomllib.load(file)["project"]["version"]
    return version


def wheel_problems(wheel: Path, version: str) -> list[str]:
    """What is wrong with the wheel's contents (an empty list when nothing is)."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    info = f"dynorm-{version}.dist-info/"
    needed = (
        "dynorm/__init__.py",
        "dynorm/py.typed",
        f"{info}licenses/LICENSE",
        f"{info}METADATA",
        f"{info}entry_points.txt",
    )
    problems = [f"{wheel.name} lacks {name}" for name in needed if name not in names]
    stray = sorted(n for n in names if not n.startswith(("dynorm/", info)))
    if stray:
        problems.append(f"{wheel.name} carries files outside the package: {stray[:5]}")
    return problems


def sdist_problems(sdist: Path, version: str) -> list[str]:
    """What is wrong with the sdist's contents (an empty list when nothing is)."""
    with tarfile.open(sdist) as archive:
        names = set(archive.getnames())
    top = f"dynorm-{version}/"
    needed = ("LICENSE", "README.md", "pyproject.toml", "PKG-INFO", "dynorm/py.typed")
    return [f"{sdist.name} lacks {name}" for name in needed if top + name not in names]


def run(step: str, command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run one step; its output is returned, and shown with the step's name when it fails."""
    done = subprocess.run(  # noqa: S603  (our own commands, no shell)
        command, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ReleaseCheckError(
            f"{step} failed (exit status {done.returncode}): {' '.join(command)}\n"
            f"{done.stdout}{done.stderr}"
        )
    return done.stdout


def build(out: Path) -> tuple[Path, Path]:
    """The sdist and the wheel built from it, by the project's build backend."""
    run(
        "building the sdist and the wheel",
        [sys.executable, "-m", "build", "-o", str(out), "."],
        cwd=ROOT,
    )
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise ReleaseCheckError(f"expected one sdist and one wheel in {out}: {sdists + wheels}")
    return sdists[0], wheels[0]


def clean_env(venv: Path) -> dict[str, str]:
    """This environment without what could import dynorm from elsewhere, the venv first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def install(wheel: Path, venv: Path) -> Path:
    """A new virtualenv with the wheel and its declared dependencies; its python."""
    run("creating the virtualenv", [sys.executable, "-m", "venv", str(venv)], cwd=venv.parent)
    python = venv / "bin" / "python"
    # pip's index settings (pip.conf, PIP_* variables) apply as they do for `make .venv`, with
    # the same constraints file; it bounds only packages the dev extra brings.
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    command = [*pip, "-c", str(ROOT / "constraints.txt"), str(wheel)]
    run("installing the wheel", command, cwd=venv.parent, env=clean_env(venv))
    return python


def smoke(python: Path, venv: Path, version: str) -> None:
    """Use the installed package from outside the source tree, with no PYTHONPATH."""
    env, cwd = clean_env(venv), venv.parent
    said = run("the smoke test", [str(python), "-I", str(SMOKE), version], cwd=cwd, env=env)
    if str(venv) not in said:
        raise ReleaseCheckError(f"the smoke test imported dynorm from outside {venv}: {said}")
    printed = run(
        "printing __version__",
        [str(python), "-I", "-c", "import dynorm; print(dynorm.__version__)"],
        cwd=cwd,
        env=env,
    )
    if printed.strip() != version:
        raise ReleaseCheckError(f"dynorm.__version__ is {printed.strip()!r}, not {version!r}")
    for command in (["dynorm", "--help"], [str(python), "-I", "-m", "dynorm", "--help"]):
        if "design" not in run(f"`{' '.join(command)}`", command, cwd=cwd, env=env):
            raise ReleaseCheckError(f"`{' '.join(command)}` does not list the design command")
    shown = run("`dynorm design`", ["dynorm", "design", f"{SMOKE}:table"], cwd=cwd, env=env)
    if "Query on GSI1" not in shown:
        raise ReleaseCheckError(f"`dynorm design` did not plan smoke.py's table:\n{shown}")
    run("pip check", [str(python), "-m", "pip", "check"], cwd=cwd, env=env)


def check(work: Path) -> str:
    """Every step in ``work``; a line saying what was checked."""
    version = project_version()
    sdist, wheel = build(work / "dist")
    problems = sdist_problems(sdist, version) + wheel_problems(wheel, version)
    if problems:
        raise ReleaseCheckError("; ".join(problems))
    smoke(install(wheel, work / "venv"), work / "venv", version)
    return f"{sdist.name} and {wheel.name} carry py.typed and LICENSE; the wheel installs and runs"


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit status 1 with the failed step's output when it fails."""
    parser = argparse.ArgumentParser(prog="python -m tests.release.check", description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="dynorm-release-"))
    try:
        said = check(work)
    except ReleaseCheckError as error:
        print(f"*** release-check FAILED: {error}", file=sys.stderr)  # noqa: T201
        return 1
    finally:
        if args.keep:
            print(f"release-check: kept {work}")  # noqa: T201
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"release-check: {said} ({time.monotonic() - started:.0f} s)")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
