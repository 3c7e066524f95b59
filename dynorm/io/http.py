"""dynorm's own HTTP/1.1 client for the lean connection: POSTs to one host over asyncio streams.

A lean connection (see ``lean._lean_settings``) sends every fast-path request through a
:class:`Pool` of keep-alive connections to its endpoint, so a process that only uses one never
imports aiohttp (nor yarl, multidict...). It does what aiobotocore's aiohttp session does for
DynamoDB and no more: ``POST /`` with the signed headers and a Content-Length, replies framed by
Content-Length, chunked transfer coding or the connection's end, no compression, no proxy, no
redirects.

Failures are told apart as aiohttp tells them, so the transport's messages and its
``request_sent`` stay the same: :class:`ConnectError` and :class:`ConnectTimeoutError` before
anything was sent; :class:`ReadTimeoutError` and :class:`BrokenConnectionError` (reset, closed,
truncated, malformed) after the request went out; :class:`DeadlineError` says which. Only the
standard library is imported here.

A server cannot hold a request or the process's memory for ever: a reply's head, interim
replies, body and trailer fields each have a bound (the ``MAX_*`` constants), and every
exchange a deadline (``deadline``), besides the read timeout that restarts whenever data comes.
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
    "DeadlineError",
    "HTTPError",
    "Head",
    "MalformedReplyError",
    "Pool",
    "PoolClosedError",
    "ReadTimeoutError",
    "Reply",
    "Timer",
    "header_value_problem",
    "parse_head",
    "read_body",
    "read_reply",
]

#: The most a reply's status line and headers may take (also the streams' buffer limit).
MAX_HEAD: Final = 65536
#: The longest status or header line (aiohttp's max_line_size and max_field_size).
MAX_LINE: Final = 8190
#: The most header fields a reply may have.
MAX_FIELDS: Final = 128
#: The longest chunk-size line of a chunked body.
MAX_CHUNK_LINE: Final = 1024
#: The most interim (1xx) replies before the final one: a server may send 100 Continue or
#: 103 Early Hints once or twice, never a stream of them.
MAX_INTERIM: Final = 16
#: The largest body a reply may have. DynamoDB's largest reply is a BatchGetItem's, up to 16 MB
#: of item data; in JSON every value is wrapped in its type (``{"N":"1"}``), binary values are
#: base64 (4/3) and control characters escaped (``\u0001``: 6 bytes for 1), so a reply of
#: tiny attributes can be several times its data. 128 MiB is well above any of them and still
#: bounds what a misbehaving server can make a process hold.
MAX_BODY: Final = 128 * 1024 * 1024


class HTTPError(Exception):
    """A request that failed on the wire."""


class ConnectError(HTTPError):
    """No connection: refused, unreachable, unknown host, TLS handshake. Nothing was sent."""


class ConnectTimeoutError(HTTPError):
    """No connection (and TLS handshake) within the connect timeout. Nothing was sent."""


class ReadTimeoutError(HTTPError):
    """No data of the reply within the read timeout, after the request was sent."""


class DeadlineError(HTTPError):
    """The exchange (connecting, sending, the whole reply) did not end within its deadline.

    ``sent`` tells whether the request had gone out (it may have been applied).
    """

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


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
    coding = headers.get("transfer-encoding")
    if coding is not None and "content-length" in headers:
        # RFC 9112 6.3: an error, and a sign of response splitting (another reply hidden in
        # this one's body): neither framing can be trusted, nor what follows on the connection.
        raise _malformed("both Transfer-Encoding and Content-Length", coding)
    if coding is not None and not eleven:
        raise _malformed("Transfer-Encoding in an HTTP/1.0 reply (RFC 9112 6.1)", coding)
    if status < 200 or status in {204, 304}:
        return Head(status, headers, _LENGTH, 0, keep_alive=keep_alive)
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


class Timer:
    """One exchange's read timeout: restarted whenever data comes, never past its deadline.

    aiohttp's sock_read restarts the timeout on every read, so a server that trickles a byte at
    a time would hold a request for ever; the deadline (a time of the event loop's clock) ends
    the exchange whatever the server does.
    """

    __slots__ = ("deadline", "seconds", "timeout")

    def __init__(self, timeout: asyncio.Timeout, seconds: float, deadline: float) -> None:
        self.timeout = timeout
        self.seconds = seconds
        self.deadline = deadline

    def renew(self) -> None:
        """The read timeout starts again (data came), within the deadline."""
        now = asyncio.get_running_loop().time()
        self.timeout.reschedule(min(now + self.seconds, self.deadline))

    def at_deadline(self) -> bool:
        """Whether the timeout is set to the deadline (so its expiry is the deadline's)."""
        when = self.timeout.when()
        return when is not None and when >= self.deadline


def _renew(timer: Timer | None) -> None:
    if timer is not None:
        timer.renew()


def _too_large(limit: int) -> MalformedReplyError:
    return MalformedReplyError(f"HTTP reply refused: its body exceeds {limit} bytes")


async def read_body(
    reader: asyncio.StreamReader,
    head: Head,
    timer: Timer | None = None,
    *,
    max_body: int = MAX_BODY,
) -> bytes:
    """The body that follows ``head`` on ``reader``, at most ``max_body`` bytes.

    With ``timer``, each read gets the read timeout again (aiohttp's sock_read: the timeout
    starts again whenever data arrives), within the deadline. Raises
    :class:`MalformedReplyError` for a bad chunk or a body over ``max_body`` (found before
    more than ``max_body`` bytes are read) and :class:`BrokenConnectionError` when the
    connection ends before the body does.
    """
    try:
        if head.framing == _LENGTH:
            if head.length > max_body:
                raise _too_large(max_body)
            return await _read_exactly(reader, head.length, timer)
        if head.framing == _UNTIL_CLOSE:
            return await _read_to_end(reader, timer, max_body)
        return await _read_chunked(reader, timer, max_body)
    except asyncio.IncompleteReadError as exc:
        raise BrokenConnectionError(
            f"the connection closed in the reply's body ({len(exc.partial)} bytes of "
            f"{exc.expected} read)"
        ) from exc
    except asyncio.LimitOverrunError as exc:
        raise MalformedReplyError(
            "malformed HTTP reply: a chunk-size or trailer line too long"
        ) from exc


async def _read_to_end(reader: asyncio.StreamReader, timer: Timer | None, max_body: int) -> bytes:
    """A body framed by the connection's end: what comes until then."""
    parts: list[bytes] = []
    got = 0
    while True:
        _renew(timer)
        part = await reader.read(min(MAX_HEAD, max_body - got + 1))
        if not part:
            return b"".join(parts)
        got += len(part)
        if got > max_body:
            raise _too_large(max_body)
        parts.append(part)


async def _read_chunked(reader: asyncio.StreamReader, timer: Timer | None, max_body: int) -> bytes:
    """A chunked body: its chunks joined, its trailer fields read and dropped."""
    chunks: list[bytes] = []
    got = 0
    while True:
        _renew(timer)
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
        got += size
        if got > max_body:  # refused on the chunk's size, before its bytes are read
            raise _too_large(max_body)
        chunk = await _read_exactly(reader, size + 2, timer)
        if chunk[-2:] != b"\r\n":
            raise _malformed("a chunk not ended by CRLF", chunk[-2:].decode("latin-1"))
        chunks.append(chunk[:-2])
    await _skip_trailers(reader, timer)
    return b"".join(chunks)


async def _skip_trailers(reader: asyncio.StreamReader, timer: Timer | None) -> None:
    """Reads the trailer fields up to the empty line, within the limits of a head's fields."""
    fields = size = 0
    while True:
        _renew(timer)
        line = await reader.readuntil(b"\r\n")
        if line == b"\r\n":
            return
        fields += 1
        size += len(line)
        if len(line) > MAX_LINE + 2:
            raise _malformed(f"a trailer line longer than {MAX_LINE} bytes", line.decode("latin-1"))
        if fields > MAX_FIELDS or size > MAX_HEAD:
            raise MalformedReplyError(
                f"malformed HTTP reply: its trailer fields exceed {MAX_FIELDS} fields or "
                f"{MAX_HEAD} bytes"
            )


async def _read_exactly(reader: asyncio.StreamReader, length: int, timer: Timer | None) -> bytes:
    """``length`` bytes, read as they arrive (each read with the whole read timeout)."""
    if not length:
        return b""
    _renew(timer)
    data = await reader.read(length)  # at once when the reply is in the buffer already
    if len(data) == length:
        return data
    parts = [data]
    got = len(data)
    while data and got < length:
        _renew(timer)
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
    reader: asyncio.StreamReader, timer: Timer | None = None, *, max_body: int = MAX_BODY
) -> Reply:
    """One whole reply from ``reader``, up to :data:`MAX_INTERIM` interim 1xx replies skipped.

    With ``timer``, each read gets the read timeout again, within the deadline.
    """
    head = parse_head(await _read_head(reader))
    interim = 0
    while head.status < 200:  # 100 Continue and the like: the real reply follows
        interim += 1
        if interim > MAX_INTERIM:
            raise MalformedReplyError(
                f"malformed HTTP reply: more than {MAX_INTERIM} interim (1xx) replies"
            )
        _renew(timer)
        head = parse_head(await _read_head(reader))
    body = await read_body(reader, head, timer, max_body=max_body)
    return Reply(head.status, head.headers, body, keep_alive=head.keep_alive)


def header_value_problem(value: str) -> str | None:
    """What makes ``value`` unfit for an HTTP/1.1 header field (RFC 9110 5.5), or None.

    A line break would end the field and start another (header injection); other control
    characters are not field text; HTTP/1.1 carries Latin-1 bytes, nothing beyond.
    """
    if value.isascii() and value.isprintable():
        return None  # every value dynorm sends, checked at once
    for char in value:
        if char in "\r\n":
            return "a line break (CR or LF)"
        code = ord(char)
        if code > 0xFF:
            return f"the character {char!r}, outside Latin-1"
        if (code < 0x20 and char != "\t") or code == 0x7F:
            return f"the control character {char!r}"
    return None


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
    Each exchange (connecting if need be, sending, reading the reply) ends within ``deadline``
    seconds; a reply's body is at most ``max_body`` bytes.
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
        deadline: float,
        max_body: int = MAX_BODY,
    ) -> None:
        self._host = host
        self._port = port
        self._tls = tls
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._keepalive = keepalive
        self._deadline = deadline
        self._max_body = max_body
        self._slots = asyncio.Semaphore(limit)
        self._idle: collections.deque[_Connection] = collections.deque()
        self._busy: set[_Connection] = set()
        self._prefix = f"POST / HTTP/1.1\r\nHost: {host_header}\r\n"
        self._sweep: asyncio.TimerHandle | None = None
        self.closed = False
        #: Connections opened so far.
        self.opened = 0

    async def post(self, headers: dict[str, str], body: bytes) -> Reply:
        """POST ``body`` to ``/`` with ``headers`` (and Host, Content-Length); the reply.

        A header value that cannot be sent (a line break, a character outside Latin-1) is a
        ValueError, raised before anything is sent. That is the last guard, checked at little
        cost per request: the transport refuses such settings (and control characters) before,
        with a message naming them (``dynorm.io.settings``).
        """
        lines = [self._prefix]
        for name, value in headers.items():
            if "\r" in value or "\n" in value:  # the cheap part of header_value_problem
                raise ValueError(
                    f"the value of the header {name} has {header_value_problem(value)}"
                )
            lines.append(f"{name}: {value}\r\n")
        lines.append(f"Content-Length: {len(body)}\r\n\r\n")
        try:
            data = "".join(lines).encode("latin-1") + body
        except UnicodeEncodeError as exc:
            char = exc.object[exc.start]
            raise ValueError(f"a header value has the character {char!r}, outside Latin-1") from exc
        async with self._slots:
            if self.closed:
                raise PoolClosedError("the connection pool is closed")
            deadline = asyncio.get_running_loop().time() + self._deadline
            connection = self._reuse() or await self._connect(deadline)
            busy = self._busy
            busy.add(connection)
            keep = False
            try:
                reply = await self._exchange(connection, data, deadline)
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

    async def _connect(self, deadline: float) -> _Connection:
        host, port = self._host, self._port
        limit = asyncio.get_running_loop().time() + self._connect_timeout
        try:
            async with asyncio.timeout_at(min(limit, deadline)):
                reader, writer = await asyncio.open_connection(
                    host,
                    port,
                    ssl=self._tls,
                    server_hostname=host if self._tls is not None else None,
                    limit=MAX_HEAD,
                )
        except TimeoutError as exc:
            if deadline < limit:
                raise DeadlineError(
                    f"no connection to {host}:{port} within the exchange's deadline of "
                    f"{self._deadline}s",
                    sent=False,
                ) from exc
            raise ConnectTimeoutError(
                f"connection to {host}:{port} timed out after {self._connect_timeout}s"
            ) from exc
        except OSError as exc:  # refused, unreachable, unknown host (gaierror), TLS (SSLError)
            scheme = "https" if self._tls is not None else "http"
            raise ConnectError(f"cannot connect to {scheme}://{host}:{port} [{exc}]") from exc
        self.opened += 1
        return _Connection(reader, writer)

    async def _exchange(self, connection: _Connection, data: bytes, deadline: float) -> Reply:
        seconds = self._read_timeout
        now = asyncio.get_running_loop().time()
        timeout = asyncio.timeout_at(min(now + seconds, deadline))
        timer = Timer(timeout, seconds, deadline)
        try:
            connection.writer.write(data)
            async with timeout:
                await connection.writer.drain()
                return await read_reply(connection.reader, timer, max_body=self._max_body)
        except TimeoutError as exc:
            if timer.at_deadline():
                raise DeadlineError(
                    f"the reply did not end within the exchange's deadline of {self._deadline}s",
                    sent=True,
                ) from exc
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
