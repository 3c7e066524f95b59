"""dynorm's own HTTP/1.1 client for the lean connection: POSTs to one host over asyncio streams.

A lean connection (see ``transport._lean_settings``) sends every fast-path request through a
:class:`Pool` of keep-alive connections to its endpoint, so a process that only uses one never
imports aiohttp (nor yarl, multidict...). It does what aiobotocore's aiohttp session does for
DynamoDB and no more: ``POST /`` with the signed headers and a Content-Length, replies framed by
Content-Length, chunked transfer coding or the connection's end, no compression, no proxy, no
redirects.

Failures are told apart as aiohttp tells them, so the transport's messages and its
``request_sent`` stay the same: :class:`ConnectError` and :class:`ConnectTimeoutError` before
anything was sent; :class:`ReadTimeoutError` and :class:`BrokenConnectionError` (reset, closed,
truncated, malformed) after the request went out. Only the standard library is imported here.
"""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import ssl

__all__ = [
    "BrokenConnectionError",
    "ConnectError",
    "ConnectTimeoutError",
    "HTTPError",
    "Head",
    "MalformedReplyError",
    "Pool",
    "PoolClosedError",
    "ReadTimeoutError",
    "Reply",
    "parse_head",
    "read_body",
]

#: The most a reply's status line and headers may take (also the streams' buffer limit).
MAX_HEAD: Final = 65536
#: The longest status or header line (aiohttp's max_line_size and max_field_size).
MAX_LINE: Final = 8190
#: The most header fields a reply may have.
MAX_FIELDS: Final = 128
#: The longest chunk-size line of a chunked body.
MAX_CHUNK_LINE: Final = 1024


class HTTPError(Exception):
    """A request that failed on the wire."""


class ConnectError(HTTPError):
    """No connection: refused, unreachable, unknown host, TLS handshake. Nothing was sent."""


class ConnectTimeoutError(HTTPError):
    """No connection (and TLS handshake) within the connect timeout. Nothing was sent."""


class ReadTimeoutError(HTTPError):
    """No data of the reply within the read timeout, after the request was sent."""


class BrokenConnectionError(HTTPError):
    """The connection broke after the request was (or may have been) sent."""


class MalformedReplyError(BrokenConnectionError):
    """The reply is not an HTTP/1.x reply dynorm can read."""


class PoolClosedError(HTTPError):
    """The pool was closed before the request got a connection. Nothing was sent."""


class Reply:
    """A reply: its status, its headers by lower-case name, its body."""

    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(
        self, status: int, headers: dict[str, str], body: bytes, *, keep_alive: bool
    ) -> None:
        self.status = status
        #: Lower-case names (lookups through :meth:`header` are case-insensitive).
        self.headers = headers
        self.body = body
        #: Whether the connection may carry another request.
        self.keep_alive = keep_alive

    def header(self, name: str) -> str | None:
        """The value of the header ``name`` (any case), or None."""
        return self.headers.get(name.lower())

    def __repr__(self) -> str:
        return f"Reply(status={self.status}, headers={self.headers!r}, body={self.body!r})"


#: How a reply's body is delimited: by length, by chunks, or by the end of the connection.
_LENGTH: Final = 0
_CHUNKED: Final = 1
_UNTIL_CLOSE: Final = 2


class Head:
    """A reply's status line and headers, and how its body is delimited."""

    __slots__ = ("framing", "headers", "keep_alive", "length", "status")

    def __init__(
        self, status: int, headers: dict[str, str], framing: int, length: int, *, keep_alive: bool
    ) -> None:
        self.status = status
        self.headers = headers
        self.framing = framing
        self.length = length
        self.keep_alive = keep_alive


def _malformed(what: str, line: str) -> MalformedReplyError:
    shown = line if len(line) <= 80 else line[:77] + "..."
    return MalformedReplyError(f"malformed HTTP reply: {what}: {shown!r}")


def parse_head(head: bytes) -> Head:
    """The status line and headers of ``head`` (ending with an empty line), checked.

    Raises :class:`MalformedReplyError` for anything that is not an HTTP/1.0 or HTTP/1.1 reply
    within the size limits, or whose body cannot be delimited.
    """
    if len(head) > MAX_HEAD:
        raise MalformedReplyError(f"malformed HTTP reply: its headers exceed {MAX_HEAD} bytes")
    lines = head.decode("latin-1").split("\r\n")
    status_line = lines[0]
    if len(status_line) > MAX_LINE:
        raise _malformed(f"a status line longer than {MAX_LINE} bytes", status_line)
    version, _, rest = status_line.partition(" ")
    if version == "HTTP/1.1":
        eleven = True
    elif version == "HTTP/1.0":
        eleven = False
    else:
        raise _malformed("not an HTTP/1.x status line", status_line)
    code = rest[:3]
    if not (len(code) == 3 and code.isascii() and code.isdigit()) or rest[3:4] not in {"", " "}:
        raise _malformed("no status code", status_line)
    status = int(code)
    if len(lines) > MAX_FIELDS + 3:
        raise MalformedReplyError(f"malformed HTTP reply: more than {MAX_FIELDS} header fields")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue  # the empty lines that end the head
        if len(line) > MAX_LINE:
            raise _malformed(f"a header line longer than {MAX_LINE} bytes", line)
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or not name.isascii():
            raise _malformed("not a header line", line)
        name = name.lower()
        value = value.strip(" \t")
        seen = headers.get(name)
        headers[name] = value if seen is None else f"{seen}, {value}"
    connection = headers.get("connection", "").lower()
    keep_alive = "close" not in connection if eleven else "keep-alive" in connection
    if status < 200 or status in {204, 304}:
        return Head(status, headers, _LENGTH, 0, keep_alive=keep_alive)
    coding = headers.get("transfer-encoding")
    if coding is not None:
        if coding.strip().lower() != "chunked":
            raise _malformed("a transfer coding other than chunked", coding)
        return Head(status, headers, _CHUNKED, 0, keep_alive=keep_alive)
    length = headers.get("content-length")
    if length is None:
        return Head(status, headers, _UNTIL_CLOSE, 0, keep_alive=False)
    values = {v.strip() for v in length.split(",")}  # repeated, they must agree
    value = values.pop()
    if values or not (value.isascii() and value.isdigit()) or len(value) > 18:
        raise _malformed("a Content-Length that is not a length", length)
    return Head(status, headers, _LENGTH, int(value), keep_alive=keep_alive)


def _renew(timeout: asyncio.Timeout | None, seconds: float) -> None:
    if timeout is not None:
        timeout.reschedule(asyncio.get_running_loop().time() + seconds)


async def read_body(
    reader: asyncio.StreamReader,
    head: Head,
    timeout: asyncio.Timeout | None = None,
    seconds: float = 0,
) -> bytes:
    """The body that follows ``head`` on ``reader``.

    With ``timeout``, each read gets ``seconds`` again (aiohttp's sock_read: the timeout starts
    again whenever data arrives). Raises :class:`MalformedReplyError` for a bad chunk and
    :class:`BrokenConnectionError` when the connection ends before the body does.
    """
    try:
        if head.framing == _LENGTH:
            return await _read_exactly(reader, head.length, timeout, seconds)
        if head.framing == _UNTIL_CLOSE:
            parts: list[bytes] = []
            while True:
                _renew(timeout, seconds)
                part = await reader.read(MAX_HEAD)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        chunks: list[bytes] = []
        while True:
            _renew(timeout, seconds)
            line = await reader.readuntil(b"\r\n")
            text = line[:-2].split(b";", 1)[0].strip()
            if (
                not text
                or len(line) > MAX_CHUNK_LINE
                or text.strip(b"0123456789abcdefABCDEF")
                or len(text) > 15
            ):
                raise _malformed("a bad chunk size", line.decode("latin-1"))
            size = int(text, 16)
            if not size:
                break
            chunk = await _read_exactly(reader, size + 2, timeout, seconds)
            if chunk[-2:] != b"\r\n":
                raise _malformed("a chunk not ended by CRLF", chunk[-2:].decode("latin-1"))
            chunks.append(chunk[:-2])
        while True:  # trailer fields, up to the empty line
            _renew(timeout, seconds)
            line = await reader.readuntil(b"\r\n")
            if line == b"\r\n":
                return b"".join(chunks)
    except asyncio.IncompleteReadError as exc:
        raise BrokenConnectionError(
            f"the connection closed in the reply's body ({len(exc.partial)} bytes of "
            f"{exc.expected} read)"
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise MalformedReplyError(
            "malformed HTTP reply: a chunk-size or trailer line too long"
        ) from exc


async def _read_exactly(
    reader: asyncio.StreamReader, length: int, timeout: asyncio.Timeout | None, seconds: float
) -> bytes:
    """``length`` bytes, read as they arrive (each read with the whole read timeout)."""
    if not length:
        return b""
    _renew(timeout, seconds)
    data = await reader.read(length)  # at once when the reply is in the buffer already
    if len(data) == length:
        return data
    parts = [data]
    got = len(data)
    while data and got < length:
        _renew(timeout, seconds)
        data = await reader.read(length - got)
        parts.append(data)
        got += len(data)
    if got < length:
        raise asyncio.IncompleteReadError(b"".join(parts), length)
    return b"".join(parts)


async def _read_head(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise BrokenConnectionError("the connection closed in the reply's headers") from exc
        raise BrokenConnectionError("server disconnected before replying") from exc
    except asyncio.LimitOverrunError as exc:
        raise MalformedReplyError(
            f"malformed HTTP reply: its headers exceed {MAX_HEAD} bytes"
        ) from exc


async def read_reply(
    reader: asyncio.StreamReader, timeout: asyncio.Timeout | None = None, seconds: float = 0
) -> Reply:
    """One whole reply from ``reader``, interim 1xx replies skipped.

    With ``timeout``, each read gets ``seconds`` again.
    """
    head = parse_head(await _read_head(reader))
    while head.status < 200:  # 100 Continue and the like: the real reply follows
        _renew(timeout, seconds)
        head = parse_head(await _read_head(reader))
    body = await read_body(reader, head, timeout, seconds)
    return Reply(head.status, head.headers, body, keep_alive=head.keep_alive)


class _Connection:
    """One open connection of a pool."""

    __slots__ = ("idle_since", "reader", "transport", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.transport = writer.transport
        self.idle_since = 0.0

    def usable(self) -> bool:
        """Whether it may carry a request: the server has not closed it nor sent anything.

        Anything received while idle (a server's 408 before it hangs up, say) would be read as
        the next request's reply, so a connection with unread data is not reused either.
        """
        reader = self.reader
        return (
            not self.transport.is_closing()
            and not reader.at_eof()
            and not reader._buffer  # type: ignore[attr-defined]  # StreamReader's, since 3.4
            and reader.exception() is None
        )

    def close(self) -> None:
        self.transport.close()


class Pool:
    """Keep-alive connections to one HTTP(S) host, at most ``limit`` at a time.

    A request waits for a free connection when ``limit`` are busy; an idle connection is reused
    (newest first) unless the server closed it or it has been idle for ``keepalive`` seconds.
    A connection is reused only after a whole reply; a failure or a cancellation closes it.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        host_header: str,
        tls: ssl.SSLContext | None,
        limit: int,
        connect_timeout: float,
        read_timeout: float,
        keepalive: float,
    ) -> None:
        self._host = host
        self._port = port
        self._tls = tls
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._keepalive = keepalive
        self._slots = asyncio.Semaphore(limit)
        self._idle: collections.deque[_Connection] = collections.deque()
        self._busy: set[_Connection] = set()
        self._prefix = f"POST / HTTP/1.1\r\nHost: {host_header}\r\n"
        self._sweep: asyncio.TimerHandle | None = None
        self.closed = False
        #: Connections opened so far.
        self.opened = 0

    async def post(self, headers: dict[str, str], body: bytes) -> Reply:
        """POST ``body`` to ``/`` with ``headers`` (and Host, Content-Length); the reply."""
        lines = [self._prefix]
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                raise ValueError(f"a newline in the value of the header {name}")
            lines.append(f"{name}: {value}\r\n")
        lines.append(f"Content-Length: {len(body)}\r\n\r\n")
        data = "".join(lines).encode("latin-1") + body
        async with self._slots:
            if self.closed:
                raise PoolClosedError("the connection pool is closed")
            connection = self._reuse() or await self._connect()
            busy = self._busy
            busy.add(connection)
            keep = False
            try:
                reply = await self._exchange(connection, data)
                keep = reply.keep_alive
            finally:  # a failure or a cancellation: the connection may be half-read, closed
                busy.discard(connection)
                if keep and not self.closed:
                    self._release(connection)
                else:
                    connection.close()
            return reply

    def _reuse(self) -> _Connection | None:
        idle = self._idle
        if not idle:
            return None
        expired = asyncio.get_running_loop().time() - self._keepalive
        while idle:
            connection = idle.pop()
            if connection.idle_since > expired and connection.usable():
                return connection
            connection.close()
        return None

    def _release(self, connection: _Connection) -> None:
        loop = asyncio.get_running_loop()
        connection.idle_since = loop.time()
        self._idle.append(connection)
        if self._sweep is None:
            self._sweep = loop.call_later(self._keepalive, self._drop_expired)

    def _drop_expired(self) -> None:
        """Closes the connections idle for the keep-alive timeout (as aiohttp's connector does)."""
        self._sweep = None
        idle = self._idle
        loop = asyncio.get_running_loop()
        expired = loop.time() - self._keepalive
        while idle and (idle[0].idle_since <= expired or not idle[0].usable()):
            idle.popleft().close()
        if idle:
            self._sweep = loop.call_at(idle[0].idle_since + self._keepalive, self._drop_expired)

    async def _connect(self) -> _Connection:
        host, port = self._host, self._port
        try:
            async with asyncio.timeout(self._connect_timeout):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=self._tls,
                    server_hostname=host if self._tls is not None else None,
                    limit=MAX_HEAD,
                )
        except TimeoutError as exc:
            raise ConnectTimeoutError(
                f"connection to {host}:{port} timed out after {self._connect_timeout}s"
            ) from exc
        except OSError as exc:  # refused, unreachable, unknown host (gaierror), TLS (SSLError)
            scheme = "https" if self._tls is not None else "http"
            raise ConnectError(f"cannot connect to {scheme}://{host}:{port} [{exc}]") from exc
        self.opened += 1
        return _Connection(reader, writer)

    async def _exchange(self, connection: _Connection, data: bytes) -> Reply:
        seconds = self._read_timeout
        try:
            connection.writer.write(data)
            async with asyncio.timeout(seconds) as timeout:
                await connection.writer.drain()
                return await read_reply(connection.reader, timeout, seconds)
        except TimeoutError as exc:
            raise ReadTimeoutError(f"no reply data within {seconds}s") from exc
        except OSError as exc:  # reset, broken pipe
            raise BrokenConnectionError(str(exc) or type(exc).__name__) from exc

    async def close(self) -> None:
        """Closes every connection, idle or busy; a request after this fails."""
        self.closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        connections = [*self._idle, *self._busy]
        self._idle.clear()
        for connection in connections:
            connection.close()
        if connections:
            await asyncio.sleep(0)  # the transports' connection_lost run, the sockets close
