"""Ctrl-C stops every ``dynorm`` command with exit status 130, saying what is done and what next.

SIGINT is sent while a request of the command is held by the fault proxy (so the command is
waiting on DynamoDB at a known point), or while it waits at its confirmation prompt. ``dynorm
migrate``'s own Ctrl-C test is in test_cli_migrate.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import platform
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import attrs
import pytest

from dynorm import Database, TableNotFoundError
from dynorm.testing import RunningServer
from dynorm.workbench import dump_model, export_model
from tests.faultproxy import FaultProxy, connect_to
from tests.seed_models import Org, app

from .cli import Cli

pytestmark = pytest.mark.integration


@attrs.frozen
class Stopped:
    code: int
    out: str
    err: str


@pytest.fixture
def name() -> str:
    return f"cli-int-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def db(dynorm_server: RunningServer, name: str) -> AsyncIterator[Database]:
    """A connection to the table the command works on; dropped afterwards if it exists."""
    async with connect_to(dynorm_server.url, app, name) as database:
        yield database
        with contextlib.suppress(TableNotFoundError):
            await database.delete_table()


async def interrupt_at(
    cli: Cli, server: RunningServer, operation: str, args: Sequence[str], cwd: Path
) -> Stopped:
    """Run ``dynorm *args`` through the proxy; SIGINT once its ``operation`` request arrived."""
    async with FaultProxy.running(server.url) as proxy:
        held = proxy.pause(operation)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dynorm",
            *args,
            "--endpoint-url",
            proxy.url,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=cli.environment(cwd),
        )
        ended = asyncio.create_task(process.wait())
        arrived = asyncio.create_task(held.arrived.wait())
        await asyncio.wait({ended, arrived}, return_when=asyncio.FIRST_COMPLETED)
        assert arrived.done(), f"the command ended before its {operation} request"
        process.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        held.release()
    assert process.returncode is not None
    return Stopped(process.returncode, out.decode(), err.decode())


def assert_interrupted(stopped: Stopped, says: str) -> None:
    assert stopped.code == 130, stopped
    assert "Traceback" not in stopped.err
    assert "Aborted!" not in stopped.err
    assert f"Interrupted: {says}" in stopped.err


async def test_ctrl_c_while_creating_a_table(
    cli: Cli, dynorm_server: RunningServer, db: Database, name: str, tmp_path: Path
) -> None:
    command = ["create-table", "tests.seed_models:app", "--table-name", name]

    stopped = await interrupt_at(cli, dynorm_server, "CreateTable", command, tmp_path)
    again = await cli.run(*command, "--exists-ok", cwd=tmp_path)

    assert_interrupted(stopped, f"CreateTable may have been sent: then table {name!r} at ")
    assert "run the same command again (with --exists-ok to accept it)" in stopped.err
    assert again.code == 0, again.output
    assert await db.describe_table() is not None


async def test_ctrl_c_while_deleting_a_table(
    cli: Cli, dynorm_server: RunningServer, db: Database, name: str, tmp_path: Path
) -> None:
    await db.create_table()
    command = ["delete-table", name, "--yes"]

    stopped = await interrupt_at(cli, dynorm_server, "DeleteTable", command, tmp_path)

    assert_interrupted(stopped, "DeleteTable may have been sent")
    assert "run the same command again to check" in stopped.err


async def test_ctrl_c_while_exporting_the_live_table(
    cli: Cli, dynorm_server: RunningServer, db: Database, name: str, tmp_path: Path
) -> None:
    await db.create_table()
    await db.put(Org(name="acme"))
    output = tmp_path / "model.json"
    command = ["workbench", "export", "tests.seed_models:app", "--live", "--table-name", name]

    stopped = await interrupt_at(
        cli, dynorm_server, "Scan", [*command, "-o", str(output)], tmp_path
    )

    assert_interrupted(stopped, "stopped while reading the live table; nothing was written to")
    assert not output.exists()


async def test_ctrl_c_while_importing_exits_130(
    cli: Cli, dynorm_server: RunningServer, db: Database, name: str, tmp_path: Path
) -> None:
    model = tmp_path / "model.json"
    model.write_text(dump_model(export_model(app, items=[Org(name="acme")])), encoding="utf-8")
    command = ["workbench", "import", str(model), "--table-name", name]

    stopped = await interrupt_at(cli, dynorm_server, "BatchWriteItem", command, tmp_path)

    assert_interrupted(stopped, "")


def reading_stdin(pid: int) -> bool:
    """Whether process ``pid`` is blocked in the read system call on its stdin (Linux)."""
    syscall = Path(f"/proc/{pid}/syscall")
    if not syscall.exists():
        pytest.skip("needs /proc/PID/syscall to see that the prompt waits for input")
    read = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())
    if read is None:
        pytest.skip(f"the read system call's number on {platform.machine()} is not known here")
    return syscall.read_text().split()[:2] == [read, "0x0"]


async def until_reading_stdin(pid: int) -> None:
    # Polls the process's state (no event to await), not a wait for time to pass.
    while not reading_stdin(pid):  # noqa: ASYNC110
        await asyncio.sleep(0.01)


async def test_ctrl_c_at_the_confirmation_prompt_does_nothing(
    cli: Cli, db: Database, name: str, tmp_path: Path
) -> None:
    await db.create_table()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dynorm",
        "delete-table",
        name,
        stdin=asyncio.subprocess.PIPE,  # left open: the prompt waits for an answer
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
        env=cli.environment(tmp_path),
    )
    assert process.stderr is not None
    shown = b""
    while b"[y/N]:" not in shown:
        chunk = await asyncio.wait_for(process.stderr.read(1024), timeout=60)
        assert chunk, f"the command ended before asking: {shown!r}"
        shown += chunk
    # The prompt is written before stdin is read: a SIGINT in between would be handled only
    # once a line comes, so it is sent when the process waits in read(0, ...).
    await asyncio.wait_for(until_reading_stdin(process.pid), timeout=60)
    process.send_signal(signal.SIGINT)
    _, rest = await asyncio.wait_for(process.communicate(), timeout=60)
    err = (shown + rest).decode()

    assert process.returncode == 130, err
    assert "Interrupted: nothing was done" in err
    assert "Aborted!" not in err
    assert "Traceback" not in err
    assert await db.describe_table() is not None
