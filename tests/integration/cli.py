"""Running the ``dynorm`` command in a subprocess against the test server, as a user does."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs

from dynorm.testing import (
    TEST_ACCESS_KEY_ID,
    TEST_REGION,
    TEST_SECRET_ACCESS_KEY,
    RunningServer,
    fast_path_selected,
)

ROOT = Path(__file__).resolve().parents[2]


@attrs.frozen
class Ran:
    """What one run of the command printed, and its exit status."""

    code: int
    out: str
    err: str

    @property
    def output(self) -> str:
        return self.out + self.err


@attrs.frozen
class Cli:
    """``cli("design", "tests.seed_models:app")`` runs ``dynorm design ...`` on the test server.

    The environment holds the test credentials and region, and ``DYNORM_ENDPOINT_URL`` points
    at the server, as a user's shell would (``DYNORM_FAST_PATH`` follows the test run's
    request path); nothing of the developer's AWS setup leaks in.
    """

    server: RunningServer

    def environment(self, cwd: Path) -> dict[str, str]:
        """The environment of a run: the test server, credentials and request path only."""
        return {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(cwd),
            "PYTHONPATH": str(ROOT),
            "AWS_ACCESS_KEY_ID": TEST_ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": TEST_SECRET_ACCESS_KEY,
            "AWS_DEFAULT_REGION": TEST_REGION,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "DYNORM_ENDPOINT_URL": self.server.url,
            "DYNORM_FAST_PATH": "1" if fast_path_selected() else "0",
            "COLUMNS": "200",
        }

    def __call__(
        self,
        *args: str,
        stdin: str = "",
        cwd: Path = ROOT,
        unset: Sequence[str] = (),
        columns: str = "200",
    ) -> Ran:
        """The run, ``columns`` wide, with the environment variables ``unset`` names left out."""
        command = [sys.executable, "-m", "dynorm", *args]
        environment = {k: v for k, v in self.environment(cwd).items() if k not in unset}
        environment["COLUMNS"] = columns
        done = subprocess.run(  # noqa: S603  (our own command, fixed arguments)
            command,
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=environment,
            timeout=120,
            check=False,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    async def run(self, *args: str, stdin: str = "", cwd: Path = ROOT) -> Ran:
        """The same run, awaited: the test's event loop keeps serving (e.g. a fault proxy)."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=self.environment(cwd),
        )
        out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=120)
        assert process.returncode is not None
        return Ran(process.returncode, out.decode(), err.decode())
