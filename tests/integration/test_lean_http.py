"""The lean connection's own HTTP client over real sockets (dynorm.io.http's Pool).

Each test points a lean connection (keys, region and endpoint passed to connect(), no AWS
configuration files) at a tiny server of its own, which counts the connections it accepts and
answers the way the test needs: keep-alive, a connection closed while idle or by
``Connection: close``, chunked replies, a reply cut short or malformed, a cancelled caller, TLS.
The errors are the ones aiohttp's session gives (tests/integration/test_lean_connection.py
compares both kinds of connection).
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Container
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import dynorm
from dynorm import Database, Request, connect
from dynorm.io.http import MAX_BODY, MAX_FIELDS, MAX_HEAD, MAX_INTERIM, MalformedReplyError, Pool
from dynorm.testing import count_requests
from tests.integration.test_connect_config import AWS_VARIABLES
from tests.integration.test_transport import closed_port, serving

pytestmark = pytest.mark.integration

GET = Request("GetItem", {"TableName": "app", "Key": {"pk": {"S": "a"}, "sk": {"S": "a"}}})
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}"

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]
#: A reply as bytes, or played by a coroutine that writes it (for ever, say).
Answer = bytes | Callable[[asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture(autouse=True)
def lean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No AWS configuration: connect()'s keys, region and endpoint make a lean connection."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


@asynccontextmanager
async def lean_db(url: str, **options: Any) -> AsyncIterator[Database]:
    options.setdefault("max_attempts", 1)
    async with connect(
        dynorm.Table("app", pk="pk", sk="sk"),
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        fast_path=True,
        **options,
    ) as db:
        assert type(db._transport._attempt._sender).__name__ == "LeanSender"  # type: ignore[attr-defined]
        yield db


def pool_of(db: Database) -> Pool:
    pool: Pool = db._transport._attempt._sender._pool  # type: ignore[attr-defined]
    return pool


class Server:
    """Counts connections and requests; ``answer(n)`` is the reply to the n-th request (from 0):
    bytes, or a coroutine function that plays it (see :func:`endless`). The connection is
    closed after the replies to the requests in ``closing``."""

    def __init__(
        self, answer: Callable[[int], Answer] = lambda n: OK, closing: Container[int] = ()
    ) -> None:
        self.answer = answer
        self.closing = closing
        self.connections = 0
        self.heads: list[bytes] = []
        #: Set when a connection ended because the client closed it.
        self.client_closed = asyncio.Event()
        #: Set when a connection ended because this server closed it.
        self.server_closed = asyncio.Event()

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.heads.append(head)
                n = len(self.heads) - 1
                answer = self.answer(n)
                if isinstance(answer, bytes):
                    writer.write(answer)
                    await writer.drain()
                else:
                    await answer(writer)
                if n in self.closing:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            self.client_closed.set()
            return
        writer.close()
        await writer.wait_closed()
        self.server_closed.set()


async def test_requests_reuse_one_kept_alive_connection_and_say_what_is_signed() -> None:
    server = Server()
    async with serving(server) as url, lean_db(url) as db:
        for _ in range(5):
            assert await db.send(GET) == {}
        assert server.connections == 1
        assert pool_of(db).opened == 1
    assert len(server.heads) == 5
    lines = server.heads[0].decode().split("\r\n")
    assert lines[0] == "POST / HTTP/1.1"
    headers = [line.split(": ", 1) for line in lines[1:] if line]
    names = [name.lower() for name, _ in headers]
    assert sorted(names) == sorted(
        [
            "host",
            "content-type",
            "x-amz-date",
            "x-amz-target",
            "authorization",
            "user-agent",
            "accept-encoding",
            "content-length",
        ]
    )
    values = {name.lower(): value for name, value in headers}
    assert values["host"] == url.removeprefix("http://")  # as signed: the port is not 80
    assert values["content-type"] == "application/x-amz-json-1.0"
    assert values["accept-encoding"] == "identity"
    assert values["x-amz-target"] == "DynamoDB_20120810.GetItem"
    assert "host;" in values["authorization"]


async def test_at_most_max_concurrency_connections_and_callers_beyond_wait() -> None:
    server = Server()
    accepted = 0
    both_in = asyncio.Event()

    async def answer_when_two_are_in(reader: asyncio.StreamReader, writer: Any) -> None:
        nonlocal accepted
        accepted += 1
        if accepted == 2:
            both_in.set()
        await both_in.wait()  # two requests at once need two connections
        await server(reader, writer)

    async with serving(answer_when_two_are_in) as url, lean_db(url, max_concurrency=2) as db:
        sends = asyncio.gather(*(db.send(GET) for _ in range(8)))
        assert await asyncio.wait_for(sends, 60) == [{}] * 8
        assert server.connections == 2
    assert len(server.heads) == 8


async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    server = Server(closing={0})
    async with serving(server) as url, lean_db(url) as db:
        with count_requests(db) as log:
            assert await db.send(GET) == {}
            await asyncio.wait_for(server.server_closed.wait(), 60)
            idle = pool_of(db)._idle[0]
            for _ in range(100):  # until this event loop has read the server's FIN
                if idle.reader.at_eof():
                    break
                await asyncio.sleep(0)
            assert await db.send(GET) == {}
    assert log.operations == ["GetItem", "GetItem"]  # no failed attempt (max_attempts=1)
    assert server.connections == 2


async def test_a_connection_with_unread_data_is_not_reused() -> None:
    late = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    server = Server(lambda n: OK + late if n == 0 else OK)  # what a server says before it hangs up
    async with serving(server) as url, lean_db(url) as db:
        assert await db.send(GET) == {}
        assert await db.send(GET) == {}  # not the 408: a new connection
    assert server.connections == 2


async def test_connection_close_and_http_1_0_replies_are_honoured() -> None:
    close = OK.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    server = Server([close, old, OK, OK].__getitem__)  # and the server keeps every one open
    async with serving(server) as url, lean_db(url) as db:
        for _ in range(4):
            assert await db.send(GET) == {}
    # Each of the first two replies ended its connection; the third connection carried two.
    assert server.connections == 3


async def test_chunked_replies_and_a_reply_framed_by_the_connection_end() -> None:
    parts = [b'{"Item', b'": {"pk": ', b'{"S": "a"}}}']
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts)
        + b"0\r\n\r\n"
    )
    until_close = b'HTTP/1.1 200 OK\r\n\r\n{"Item": {}}'
    server = Server([chunked, chunked, until_close, OK].__getitem__, closing={2})
    async with serving(server) as url, lean_db(url) as db:
        assert await db.send(GET) == {"Item": {"pk": {"S": "a"}}}
        assert await db.send(GET) == {"Item": {"pk": {"S": "a"}}}
        assert server.connections == 1
        assert await db.send(GET) == {"Item": {}}  # the body is all the connection carried
        assert await db.send(GET) == {}
    assert server.connections == 2


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", "1 bytes of 100"),
        (b"", "server disconnected before replying"),
        (b"HTTP/1.1 200 OK\r\nContent-Le", "in the reply's headers"),
        (b"<html>oops</html>\r\n\r\n", "malformed HTTP reply: not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "a bad chunk size"),
    ],
)
async def test_a_reply_cut_short_or_malformed_is_a_transport_error_after_sending(
    reply: bytes, said: str
) -> None:
    server = Server(lambda n: reply, closing={0})
    async with serving(server) as url, lean_db(url) as db:
        with pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
    error = caught.value
    assert error.request_sent
    assert str(error).startswith(f"GetItem: the connection to {url} broke before a reply came (")
    assert said in str(error)
    assert "may have been applied" in str(error)
    assert isinstance(error.__cause__, Exception)


async def test_a_reset_mid_reply_is_sent_and_a_refused_connection_is_not() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"Item"')
        await writer.drain()
        writer.transport.abort()

    async with serving(reset) as url, lean_db(url) as db:
        with pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
    assert caught.value.request_sent

    port = closed_port()
    async with lean_db(f"http://127.0.0.1:{port}") as db:
        with pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
    assert not caught.value.request_sent
    assert str(caught.value).startswith(
        f"GetItem: could not connect to http://127.0.0.1:{port} (cannot connect to "
        f"http://127.0.0.1:{port} ["
    )
    assert "nothing was sent" in str(caught.value)


async def test_a_reply_that_stops_is_a_read_timeout_and_its_connection_is_closed() -> None:
    server = Server(lambda n: b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{" if n == 0 else OK)
    async with serving(server) as url, lean_db(url, read_timeout=0.2) as db:
        with pytest.raises(dynorm.TransportError) as caught:
            await db.send(GET)
        assert "no reply from" in str(caught.value)
        assert "within read_timeout=0.2s" in str(caught.value)
        assert caught.value.request_sent
        await asyncio.wait_for(server.client_closed.wait(), 60)  # not left in the pool
        assert await db.send(GET) == {}
    assert server.connections == 2


async def test_a_cancelled_caller_leaves_no_half_read_connection_in_the_pool() -> None:
    started = asyncio.Event()

    def answer(n: int) -> bytes:
        if n == 0:
            started.set()
            return b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"  # and the rest never
        return OK

    server = Server(answer)
    async with serving(server) as url, lean_db(url) as db:
        task = asyncio.create_task(db.send(GET))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.client_closed.wait(), 60)
        assert await db.send(GET) == {}
        assert await db.send(GET) == {}
    assert server.connections == 2


async def test_closing_the_connection_closes_its_pooled_connections() -> None:
    server = Server()
    async with serving(server) as url:
        async with lean_db(url) as db:
            await db.send(GET)
            pool = pool_of(db)
        assert pool.closed
        await asyncio.wait_for(server.client_closed.wait(), 60)


async def test_requests_waiting_for_a_connection_when_it_closes_were_not_sent() -> None:
    started = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        started.set()
        await reader.read()  # never answers

    async with serving(hold) as url:
        async with lean_db(url, max_concurrency=1) as db:
            sent = asyncio.create_task(db.send(GET))
            waiting = asyncio.create_task(db.send(GET))
            await started.wait()
        results: list[object] = list(await asyncio.gather(sent, waiting, return_exceptions=True))
    in_flight, queued = results
    assert isinstance(in_flight, dynorm.TransportError)  # as aiohttp's session would say
    assert in_flight.request_sent
    assert isinstance(queued, dynorm.DynormError)
    assert not isinstance(queued, dynorm.TransportError)
    assert "the Database's connection is closed" in str(queued)


async def test_idle_connections_past_the_keepalive_timeout_are_not_reused() -> None:
    server = Server()
    async with serving(server) as url:
        host, port = url.removeprefix("http://").split(":")
        pool = Pool(
            host,
            int(port),
            host_header=f"{host}:{port}",
            tls=None,
            limit=4,
            connect_timeout=5,
            read_timeout=5,
            keepalive=0,  # every idle connection has expired by the next request
            deadline=30,
        )
        try:
            for _ in range(3):
                reply = await pool.post({"X-Amz-Target": "t"}, b"{}")
                assert (reply.status, reply.body) == (200, b"{}")
        finally:
            await pool.close()
        assert pool.opened == server.connections == 3
        await asyncio.wait_for(server.client_closed.wait(), 60)


def test_a_header_with_a_newline_is_refused() -> None:
    pool = Pool(
        "h",
        80,
        host_header="h",
        tls=None,
        limit=1,
        connect_timeout=1,
        read_timeout=1,
        keepalive=1,
        deadline=1,
    )
    with pytest.raises(ValueError, match="a line break"):
        asyncio.run(pool.post({"X-Amz-Security-Token": "a\r\nInjected: yes"}, b"{}"))
    with pytest.raises(ValueError, match="outside Latin-1"):
        asyncio.run(pool.post({"X-Amz-Security-Token": "a\u20ac"}, b"{}"))


# -- TLS -----------------------------------------------------------------------------------------


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key (PEM files)."""
    folder.mkdir(exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def serving_tls(
    handle: Server, cert: Path, key: Path, names: list[str | None]
) -> AsyncIterator[int]:
    """A loopback TLS server with ``cert``; the names clients ask for (SNI) go to ``names``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    def sni(sock: ssl.SSLObject, name: str | None, ctx: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = sni
    tasks: set[asyncio.Task[None]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await handle(reader, writer)
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(tracked, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


async def test_https_verifies_against_the_ca_bundle_sends_sni_and_keeps_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate(tmp_path / "server")
    monkeypatch.setenv("AWS_CA_BUNDLE", str(cert))
    server = Server()
    names: list[str | None] = []
    async with serving_tls(server, cert, key, names) as port:
        async with lean_db(f"https://localhost:{port}") as db:
            for _ in range(3):
                assert await db.send(GET) == {}
        assert server.connections == 1
        assert names == ["localhost"]
        assert f"\r\nHost: localhost:{port}\r\n".encode() in server.heads[0]

        # A certificate the bundle does not vouch for: no connection, nothing sent.
        other, _ = certificate(tmp_path / "other")
        monkeypatch.setenv("AWS_CA_BUNDLE", str(other))
        async with lean_db(f"https://localhost:{port}") as db:
            with pytest.raises(dynorm.TransportError) as caught:
                await db.send(GET)
    assert not caught.value.request_sent
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert server.connections == 1  # the handshake failed: no request reached it


# -- hostile replies: every one ends the request, and its connection, within a bound ------------


def endless(first: bytes, each: bytes, *, pause: float = 0) -> Answer:
    """A reply that starts with ``first`` and repeats ``each`` until the client hangs up."""

    async def play(writer: asyncio.StreamWriter) -> None:
        writer.write(first)
        while not writer.transport.is_closing():  # until the client's close reaches us
            writer.write(each)
            await writer.drain()
            await asyncio.sleep(pause)  # the client shares this event loop

    return play


CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize(
    ("hostile", "said"),
    [
        (  # RFC 9112 6.3; under Content-Length, "0\r\n\r\n" would be read as the next reply
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n"
                b"2\r\n{}\r\n0\r\n\r\n"
            ),
            "malformed HTTP reply: both Transfer-Encoding and Content-Length: 'chunked'",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n{" % (MAX_BODY + 1),
            f"HTTP reply refused: its body exceeds {MAX_BODY} bytes",
        ),
        (
            endless(CHUNKED + b"%x\r\n" % (MAX_BODY + 1), b"x" * 1024),
            f"HTTP reply refused: its body exceeds {MAX_BODY} bytes",
        ),
        (
            endless(b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
            f"malformed HTTP reply: more than {MAX_INTERIM} interim (1xx) replies",
        ),
        (
            endless(CHUNKED + b"2\r\n{}\r\n0\r\n", b"X-Trailer: more\r\n"),
            (
                "malformed HTTP reply: its trailer fields exceed "
                f"{MAX_FIELDS} fields or {MAX_HEAD} bytes"
            ),
        ),
    ],
    ids=["both-framings", "content-length-over-cap", "chunk-over-cap", "endless-1xx", "trailers"],
)
async def test_a_hostile_reply_is_refused_and_its_connection_never_reused(
    hostile: Answer, said: str
) -> None:
    server = Server(lambda n: hostile if n == 0 else OK)  # and the server keeps it open
    async with serving(server) as url, lean_db(url) as db:
        with pytest.raises(dynorm.TransportError) as caught:
            await asyncio.wait_for(db.send(GET), 10)
        error = caught.value
        assert str(error).startswith(
            f"GetItem: the connection to {url} broke before a reply came ({said}"
        )
        assert error.request_sent  # it may have been applied
        assert isinstance(error.__cause__, MalformedReplyError)
        await asyncio.wait_for(server.client_closed.wait(), 10)  # closed, not left in the pool
        assert pool_of(db)._idle == collections.deque()
        assert await db.send(GET) == {}
    assert server.connections == 2  # the next request took a connection of its own


async def test_an_endless_chunked_body_is_refused_at_the_body_cap() -> None:
    # Chunks of 1 KB for ever, in time (no read timeout): only the cap ends it, at its size.
    server = Server(lambda n: endless(CHUNKED, b"400\r\n" + b"x" * 1024 + b"\r\n"))
    async with serving(server) as url:
        host, port = url.removeprefix("http://").split(":")
        pool = Pool(
            host,
            int(port),
            host_header=f"{host}:{port}",
            tls=None,
            limit=1,
            connect_timeout=60,
            read_timeout=60,
            keepalive=60,
            deadline=600,
            max_body=100 * 1024,
        )
        try:
            with pytest.raises(MalformedReplyError, match=f"its body exceeds {100 * 1024} bytes"):
                await asyncio.wait_for(pool.post({"X-Amz-Target": "t"}, b"{}"), 10)
            await asyncio.wait_for(server.client_closed.wait(), 10)
        finally:
            await pool.close()


async def test_a_reply_trickled_for_ever_ends_at_the_attempt_timeout() -> None:
    # A byte of the body every 20 ms: the read timeout (5 s) restarts each time and never ends
    # it; the attempt's deadline does.
    trickle = endless(CHUNKED, b"1\r\nx\r\n", pause=0.02)
    server = Server(lambda n: trickle if n == 0 else OK)
    loop = asyncio.get_running_loop()
    async with serving(server) as url:
        async with lean_db(url, read_timeout=5, attempt_timeout=0.5) as db:
            started = loop.time()
            with pytest.raises(dynorm.TransportError) as caught:
                await asyncio.wait_for(db.send(GET), 30)
            took = loop.time() - started
            await asyncio.wait_for(server.client_closed.wait(), 10)
            assert await db.send(GET) == {}
        assert server.connections == 2
    error = caught.value
    assert str(error).startswith(
        f"GetItem: the reply from {url} did not end within attempt_timeout=0.5s (it came too "
        "slowly, or never ended); the request may have been applied."
    )
    assert str(error).endswith("or raise connect(attempt_timeout=...)")
    assert error.request_sent
    assert isinstance(error.__cause__, TimeoutError)
    assert took < 10  # the deadline (0.5 s), with a margin for a loaded machine; not 5 s * n


async def test_an_attempt_timeout_while_connecting_says_nothing_was_sent() -> None:
    # A TLS endpoint that never answers the handshake: the connection is never made.
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with serving(silent) as url:
        port = url.rsplit(":", 1)[1]
        async with lean_db(
            f"https://127.0.0.1:{port}", connect_timeout=60, attempt_timeout=0.5
        ) as db:
            with pytest.raises(dynorm.TransportError) as caught:
                await asyncio.wait_for(db.send(GET), 30)
    assert not caught.value.request_sent
    assert str(caught.value).startswith(
        f"GetItem: no connection to https://127.0.0.1:{port} within attempt_timeout=0.5s; "
        "nothing was sent."
    )
    assert str(caught.value).endswith("connect(attempt_timeout=...)")


@pytest.mark.parametrize(
    ("options", "environment", "said"),
    [
        (
            {"aws_session_token": "FwoGZXIvYXdz\r\nX-Injected: yes"},
            {},
            "the AWS session token from connect(aws_session_token=...) has a line break",
        ),
        (
            {"aws_access_key_id": "AKID\u2013TEST"},  # an en dash pasted from a document
            {},
            (
                "the AWS access key id from connect(aws_access_key_id=...) has the character "
                "'\u2013', outside Latin-1"
            ),
        ),
        (
            {"aws_access_key_id": None, "aws_secret_access_key": None},
            {
                "AWS_ACCESS_KEY_ID": "AKIDENV",
                "AWS_SECRET_ACCESS_KEY": "secret",
                "AWS_SESSION_TOKEN": "token\u20ac",
            },
            (
                "the AWS session token from the environment variable AWS_SESSION_TOKEN has the "
                "character '\u20ac', outside Latin-1"
            ),
        ),
    ],
    ids=["newline-in-connect", "non-latin-1-key", "non-latin-1-environment"],
)
async def test_credentials_a_header_cannot_carry_are_refused_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
    environment: dict[str, str],
    said: str,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    server = Server()
    async with serving(server) as url:
        arguments = {
            "endpoint_url": url,
            "region_name": "us-east-1",
            "aws_access_key_id": "testing",
            "aws_secret_access_key": "testing",
            "max_attempts": 1,
            **options,
        }
        with pytest.raises(dynorm.ConfigurationError) as caught:
            async with connect(dynorm.Table("app", pk="pk", sk="sk"), **arguments) as db:
                await db.send(GET)
    assert str(caught.value).startswith(said)
    assert "nothing was sent" in str(caught.value)
    assert server.connections == 0
