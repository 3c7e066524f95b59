"""The release check's content rules (tests/release/check.py), on small archives made here.

The check itself builds, installs and runs the real wheel in `make release-check`; these show that
it refuses a wheel or an sdist that lacks what a release must carry.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from tests.release.check import ROOT, project_version, sdist_problems, wheel_problems

INFO = "dynorm-1.2.3.dist-info/"
WHEEL = (
    "dynorm/__init__.py",
    "dynorm/py.typed",
    f"{INFO}licenses/LICENSE",
    f"{INFO}METADATA",
    f"{INFO}entry_points.txt",
)
SDIST = ("LICENSE", "README.md", "pyproject.toml", "PKG-INFO", "dynorm/py.typed")


def a_wheel(tmp_path: Path, names: tuple[str, ...]) -> Path:
    path = tmp_path / "dynorm-1.2.3-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, "")
    return path


def an_sdist(tmp_path: Path, names: tuple[str, ...]) -> Path:
    path = tmp_path / "dynorm-1.2.3.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name in names:
            archive.addfile(tarfile.TarInfo(f"dynorm-1.2.3/{name}"), io.BytesIO(b""))
    return path


def test_a_complete_wheel_and_sdist_pass(tmp_path: Path) -> None:
    assert wheel_problems(a_wheel(tmp_path, WHEEL), "1.2.3") == []
    assert sdist_problems(an_sdist(tmp_path, SDIST), "1.2.3") == []


def test_a_wheel_without_py_typed_or_the_licence_is_refused(tmp_path: Path) -> None:
    wheel = a_wheel(tmp_path, tuple(n for n in WHEEL if not n.endswith(("py.typed", "LICENSE"))))
    assert wheel_problems(wheel, "1.2.3") == [
        f"{wheel.name} lacks dynorm/py.typed",
        f"{wheel.name} lacks {INFO}licenses/LICENSE",
    ]


def test_a_wheel_of_another_version_or_with_stray_files_is_refused(tmp_path: Path) -> None:
    wheel = a_wheel(tmp_path, (*WHEEL, "tests/__init__.py"))
    assert wheel_problems(wheel, "1.2.3") == [
        f"{wheel.name} carries files outside the package: ['tests/__init__.py']"
    ]
    assert f"{wheel.name} lacks dynorm-1.2.4.dist-info/METADATA" in wheel_problems(wheel, "1.2.4")


def test_an_sdist_without_the_licence_is_refused(tmp_path: Path) -> None:
    sdist = an_sdist(tmp_path, tuple(n for n in SDIST if n != "LICENSE"))
    assert sdist_problems(sdist, "1.2.3") == [f"{sdist.name} lacks LICENSE"]


def test_the_version_is_written_once_in_pyproject() -> None:
    # The release check compares it with the built archives' names and dynorm.__version__.
    assert project_version()[0].isdigit()
    written = [
        path
        for path in ROOT.joinpath("dynorm").rglob("*.py")
        if '__version__ = "' in path.read_text(encoding="utf-8")
    ]
    assert written == []
