"""``import dynorm`` does not import the AWS and HTTP stack: a connection imports it when opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: The packages a connection needs and a process that only declares models does not.
HEAVY = {"aiobotocore", "botocore", "aiohttp", "yarl", "urllib3"}


def test_import_dynorm_imports_no_aws_or_http_package() -> None:
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    script = (
        "import dynorm, sys; "
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(HEAVY)!r}))"
    )
    ran = subprocess.run(  # noqa: S603  (this interpreter, a fixed script)
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert ran.stdout.strip() == "[]", ran.stdout


def test_declaring_and_connecting_imports_no_optional_extra() -> None:
    """A model declared and a Database built load neither pydantic's hooks' code nor tracing."""
    root = Path(__file__).resolve().parents[2]
    env = {key: value for key, value in os.environ.items() if key != "OTEL_PYTHON_TRACER_PROVIDER"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    script = """
import sys
import dynorm
from dynorm.io.otel import Tracing

table = dynorm.Table("t", pk="pk", sk="sk")

@table.model(pk="ORG#{name}", sk="ORG#{name}")
class Org:
    name: str

assert hasattr(Org, "__get_pydantic_core_schema__")
assert Tracing().start(dynorm.Request("GetItem", {"TableName": "t"})) is None
optional = ("pydantic", "fastapi", "opentelemetry", "dynorm.mapping.pydantic_schema")
print(sorted(m for m in sys.modules if m.startswith(optional)))
"""
    ran = subprocess.run(  # noqa: S603  (this interpreter, a fixed script)
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]", ran.stdout
