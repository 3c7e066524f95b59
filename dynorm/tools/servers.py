"""Embedded DynamoDB-compatible servers for dynorm's tests and its demo.

Two backends, both bound to loopback on a free port:

- ``moto``: moto's in-process ``ThreadedMotoServer`` (needs ``dynorm[testing]``, which installs
  moto's DynamoDB server).
- ``dynalite``: the independent Node.js implementation from the npm registry, run as a child
  process from ``<project root>/.dynalite`` (``make dynalite`` installs it there).

This module talks to the servers only to learn that they accept TCP connections; it never
imports aiobotocore or botocore (only ``dynorm/io/senders/{aio,botocore_client}.py`` may, see
the ruff banned-api rule).
"""

from __future__ import annotations

import atexit
import logging
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Final

import attrs

from .testenv import BACKENDS

__all__ = [
    "BACKENDS",
    "RunningServer",
    "ServerStartError",
    "start_dynalite",
    "start_moto",
    "start_server",
]

LOOPBACK: Final = "127.0.0.1"
# Generous: a cold `import moto` or a first `node` start on a loaded CI machine can take seconds;
# both normally answer well under one second, and the wait ends as soon as they do.
STARTUP_TIMEOUT: Final = 30.0
# How long a stopped dynalite gets to exit after SIGTERM before it is killed.
STOP_TIMEOUT: Final = 5.0
# Picking a free port and handing it to a child process is racy (another process may take it in
# between); a dynalite that dies with EADDRINUSE is simply retried on a new port this many times.
_PORT_ATTEMPTS: Final = 3

DYNALITE_DIR: Final = ".dynalite"
DYNALITE_CLI: Final = Path(DYNALITE_DIR, "node_modules", "dynalite", "cli.js")
DYNALITE_INSTALL_HINT: Final = (
    "run `make dynalite` (or `npm install --no-audit --no-fund --prefix .dynalite dynalite@4`) "
    "in the project root"
)


class ServerStartError(RuntimeError):
    """An embedded server could not be started; the message says what to install or change."""


class _PortTakenError(ServerStartError):
    """dynalite lost the race for the port it was given."""


@attrs.frozen
class RunningServer:
    """A DynamoDB-compatible endpoint that is accepting connections.

    ``stop`` is idempotent. The object is also a context manager that stops the server on exit.
    """

    url: str
    """Endpoint URL to pass as ``endpoint_url``, e.g. ``http://127.0.0.1:40123``."""
    name: str
    """Which backend serves it: ``"moto"``, ``"dynalite"`` or ``"external"``."""
    stop: Callable[[], None] = attrs.field(repr=False)
    """Shut the server down and release its port."""

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_server(backend: str, project_root: Path | None = None) -> RunningServer:
    """Start the embedded server named ``backend`` (one of :data:`BACKENDS`).

    Args:
        backend: ``"moto"`` or ``"dynalite"``.
        project_root: Where ``.dynalite/`` lives, for the dynalite backend; defaults to the
            current directory. Ignored by moto.

    Raises:
        ValueError: ``backend`` is not a known name.
        ServerStartError: the server is not installed or did not come up.
    """
    if backend == "moto":
        return start_moto()
    if backend == "dynalite":
        return start_dynalite(Path.cwd() if project_root is None else project_root)
    known = ", ".join(repr(name) for name in BACKENDS)
    msg = f"unknown DynamoDB test backend {backend!r}; choose one of {known}"
    raise ValueError(msg)


def start_moto() -> RunningServer:
    """Start moto's threaded server in this process on a free loopback port.

    Raises:
        ServerStartError: moto's server extra is not installed, or the server did not answer.
    """
    try:
        from moto.server import ThreadedMotoServer  # noqa: PLC0415  (heavy; dev dependency only)
    except ImportError as exc:
        msg = "the moto backend needs moto's DynamoDB server: pip install 'dynorm[testing]'"
        raise ServerStartError(msg) from exc

    _quiet_werkzeug()
    # Port 0 lets the OS choose a free port at bind time, so there is no pick-then-bind race;
    # the bound port is read back from the werkzeug server afterwards. (A fixed port that is
    # taken would also make `start()` hang: the bind fails in the server thread and the
    # readiness event it waits for is never set.)
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()

    stopped = False

    def stop() -> None:
        nonlocal stopped
        if not stopped:
            stopped = True
            server.stop()

    try:
        _wait_for_port(host, port, timeout=STARTUP_TIMEOUT, what="moto server")
    except BaseException:
        stop()
        raise
    return RunningServer(url=f"http://{host}:{port}", name="moto", stop=stop)


def start_dynalite(project_root: Path) -> RunningServer:
    """Run dynalite from ``<project_root>/.dynalite`` as a child process on a free loopback port.

    Tables are created, updated and deleted instantly (``--*TableMs 0``), so tests never wait
    for ``CREATING``/``DELETING`` states. Data lives in memory and vanishes with the process.

    Raises:
        ServerStartError: node or dynalite is not installed, or dynalite did not come up.
    """
    cli = project_root / DYNALITE_CLI
    if not cli.is_file():
        msg = f"dynalite is not installed at {cli}; {DYNALITE_INSTALL_HINT}"
        raise ServerStartError(msg)
    node = shutil.which("node")
    if node is None:
        msg = f"the dynalite backend needs Node.js (`node` on PATH), then {DYNALITE_INSTALL_HINT}"
        raise ServerStartError(msg)

    for attempt in range(1, _PORT_ATTEMPTS + 1):
        try:
            return _start_dynalite_once(node, cli)
        except _PortTakenError:
            if attempt == _PORT_ATTEMPTS:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _start_dynalite_once(node: str, cli: Path) -> RunningServer:
    port = _free_port()
    # stderr goes to a file, not a pipe: nobody reads it while the server runs, and a full pipe
    # would block the server. It is read back only to explain a failed start.
    stderr = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop() or on failure below)
    args = [
        node,
        str(cli),
        "--host",
        LOOPBACK,
        # dynalite reads `--port 0` as "unset" and falls back to 4567, hence a chosen port.
        "--port",
        str(port),
        "--createTableMs",
        "0",
        "--deleteTableMs",
        "0",
        "--updateTableMs",
        "0",
    ]
    process = subprocess.Popen(  # noqa: S603  (fixed argv, no shell; paths are ours)
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # only its "listening at" banner
        stderr=stderr,
    )

    def stop() -> None:
        atexit.unregister(stop)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stderr.close()

    # A test run that ends without calling stop (an interrupted session, a forgotten fixture)
    # must not leave a node process behind holding a port.
    atexit.register(stop)
    try:
        _wait_for_port(
            LOOPBACK,
            port,
            timeout=STARTUP_TIMEOUT,
            what="dynalite",
            exited=lambda: _exit_message(process, stderr),
            details=lambda: f"its stderr so far:\n{_read_all(stderr) or '(empty)'}",
        )
    except BaseException:
        stop()
        raise
    return RunningServer(url=f"http://{LOOPBACK}:{port}", name="dynalite", stop=stop)


def _exit_message(process: subprocess.Popen[bytes], stderr: IO[bytes]) -> str | None:
    """None while ``process`` runs; once it has exited, why, with its stderr."""
    code = process.poll()
    if code is None:
        return None
    output = _read_all(stderr)
    if "EADDRINUSE" in output:
        raise _PortTakenError(f"dynalite's port was taken before it could bind:\n{output}")
    return f"dynalite exited with status {code}; its stderr:\n{output or '(empty)'}"


def _read_all(stream: IO[bytes]) -> str:
    stream.flush()
    stream.seek(0)
    return stream.read().decode(errors="replace").strip()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(
    host: str,
    port: int,
    *,
    timeout: float,
    what: str,
    exited: Callable[[], str | None] = lambda: None,
    details: Callable[[], str] = lambda: "",
) -> None:
    """Poll until ``host:port`` accepts a TCP connection.

    ``exited`` reports a dead server early (with its reason) instead of waiting out the timeout;
    ``details`` adds what is known about a server that is still running when time is up.
    """
    deadline = time.monotonic() + timeout
    while True:
        reason = exited()
        if reason is not None:
            raise ServerStartError(f"{what} did not start: {reason}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            pass
        if time.monotonic() >= deadline:
            extra = details()
            raise ServerStartError(
                f"{what} did not accept connections on {host}:{port} within {timeout:g} s"
                + (f"; {extra}" if extra else "")
            )
        # Connection refused comes back at once; a short pause keeps the poll from spinning.
        time.sleep(0.02)


def _quiet_werkzeug() -> None:
    """Keep werkzeug from logging one line per request to stderr.

    werkzeug attaches its own stderr handler at INFO level the first time it logs, unless the
    application already configured the ``werkzeug`` logger; respect such a configuration.
    """
    logger = logging.getLogger("werkzeug")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
