"""dynorm's own HTTP/1.1 client, its pure parts: reading a reply's head and body.

A reply's head is parsed by :func:`dynorm.io.http.parse_head`; its body is read from a stream
fed by the test (no socket). What the pool does over real sockets is in
tests/integration/test_lean_http.py.
"""

from __future__ import annotations

import asyncio

import pytest

from dynorm.io.http import (
    MAX_BODY,
    MAX_FIELDS,
    MAX_HEAD,
    MAX_INTERIM,
    MAX_LINE,
    BrokenConnectionError,
    MalformedReplyError,
    header_value_problem,
    parse_head,
    read_body,
    read_reply,
)


def stream(data: bytes, *, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=MAX_HEAD)
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


def test_a_reply_with_a_content_length() -> None:
    head = parse_head(
        b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nX-Amz-Crc32: 123\r\n"
        b"x-amzn-RequestId: abc\r\n\r\n"
    )
    assert head.status == 200
    assert head.length == 12
    assert head.keep_alive
    assert head.headers == {"content-length": "12", "x-amz-crc32": "123", "x-amzn-requestid": "abc"}


def test_header_names_are_lower_case_and_values_trimmed_repeats_joined() -> None:
    head = parse_head(
        b"HTTP/1.1 400 Bad Request\r\nX-Amzn-ErrorType:  Throttling \r\nVia: a\r\nvia: b\r\n"
        b"Content-Length: 0\r\n\r\n"
    )
    assert head.status == 400
    assert head.headers["x-amzn-errortype"] == "Throttling"
    assert head.headers["via"] == "a, b"


async def test_the_reply_looks_headers_up_in_any_case() -> None:
    reply = await read_reply(
        stream(b"HTTP/1.1 200 OK\r\nDate: today\r\nContent-Length: 2\r\n\r\n{}")
    )
    assert (reply.status, reply.body) == (200, b"{}")
    assert reply.header("DATE") == reply.header("date") == "today"
    assert reply.header("x-amz-crc32") is None


def test_connection_close_and_http_1_0_end_the_connection() -> None:
    assert not parse_head(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    ).keep_alive
    assert not parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").keep_alive
    assert parse_head(
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"
    ).keep_alive


def test_a_reply_without_a_length_ends_with_the_connection() -> None:
    head = parse_head(b"HTTP/1.0 200 OK\r\n\r\n")
    assert not head.keep_alive


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/2 200 OK\r\n\r\n",
        b"ICY 200 OK\r\n\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 \xb2\xb2\xb2 OK\r\n\r\n",
        b"<html>\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nName : space before the colon\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n: no name\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        # RFC 9112 6.3: both framings at once (a sign of response splitting), whatever the order
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
        # RFC 9112 6.1: HTTP/1.0 has no transfer coding
        b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
    ],
)
def test_a_malformed_head_is_rejected(head: bytes) -> None:
    with pytest.raises(MalformedReplyError, match="malformed HTTP reply"):
        parse_head(head)


def test_the_same_content_length_repeated_is_one() -> None:
    head = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n")
    assert head.length == 2


def test_oversize_heads_are_rejected() -> None:
    long_line = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * MAX_LINE + b"\r\n\r\n"
    with pytest.raises(MalformedReplyError, match="longer than"):
        parse_head(long_line)
    many = b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_FIELDS + 1) + b"\r\n"
    with pytest.raises(MalformedReplyError, match="header fields"):
        parse_head(many)
    with pytest.raises(MalformedReplyError, match="exceed"):
        parse_head(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEAD // 6) + b"\r\n")


async def test_headers_that_never_end_within_the_limit_are_malformed() -> None:
    endless = b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEAD // 3)
    with pytest.raises(MalformedReplyError, match="exceed"):
        await read_reply(stream(endless, eof=False))


async def test_a_chunked_body_is_joined_with_its_extensions_and_trailers_skipped() -> None:
    reply = await read_reply(
        stream(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'5\r\n{"a":\r\nA;name=value\r\n"abcdefgh"\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n'
            b"HTTP/1.1 200 OK\r\n"  # the next reply's start stays in the stream
        )
    )
    assert reply.body == b'{"a":"abcdefgh"}'
    assert reply.keep_alive


@pytest.mark.parametrize(
    "body",
    [
        b"zz\r\nabc\r\n0\r\n\r\n",  # not hex
        b"\r\n",  # no size
        b"3\r\nabcXY0\r\n\r\n",  # the chunk not ended by CRLF
        b"-3\r\nabc\r\n0\r\n\r\n",
        b"1" * 20 + b"\r\n",  # a size no reply has
    ],
)
async def test_a_malformed_chunked_body_is_rejected(body: bytes) -> None:
    head = parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    with pytest.raises(MalformedReplyError, match="malformed HTTP reply"):
        await read_body(stream(body), head)


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "2 bytes of 10"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "2 bytes of 7"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", "0 bytes of"),
    ],
)
async def test_a_body_cut_short_is_a_broken_connection(raw: bytes, read: str) -> None:
    with pytest.raises(BrokenConnectionError, match=read) as caught:
        await read_reply(stream(raw))
    assert not isinstance(caught.value, MalformedReplyError)


async def test_a_connection_closed_before_or_in_the_head_is_broken() -> None:
    with pytest.raises(BrokenConnectionError, match="server disconnected"):
        await read_reply(stream(b""))
    with pytest.raises(BrokenConnectionError, match="in the reply's headers"):
        await read_reply(stream(b"HTTP/1.1 200 OK\r\nContent-Le"))


async def test_a_body_without_length_is_read_to_the_end_and_interim_replies_skipped() -> None:
    reply = await read_reply(stream(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\n{}"))
    assert (reply.status, reply.body, reply.keep_alive) == (200, b"{}", False)


async def test_no_body_for_204() -> None:
    reply = await read_reply(stream(b"HTTP/1.1 204 No Content\r\n\r\n", eof=False))
    assert (reply.status, reply.body, reply.keep_alive) == (204, b"", True)


def test_both_framings_are_named_in_the_error() -> None:
    with pytest.raises(MalformedReplyError, match="both Transfer-Encoding and Content-Length"):
        parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n")


def the_rest(reader: asyncio.StreamReader) -> bytes:
    """What the client left unread in ``reader`` (fed and ended by the test)."""
    return bytes(reader._buffer)  # type: ignore[attr-defined]  # StreamReader's, since 3.4


async def test_a_body_over_the_cap_is_refused_before_it_is_read() -> None:
    cap = 1000
    # A Content-Length over the cap: refused on the head, no byte of the body read.
    head = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n")
    reader = stream(b"x" * 1001)
    with pytest.raises(MalformedReplyError, match="its body exceeds 1000 bytes"):
        await read_body(reader, head, max_body=cap)
    assert len(the_rest(reader)) == 1001
    # Chunks: refused on the size of the chunk that would pass the cap, before its bytes.
    chunked = parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    reader = stream(b"190\r\n" + b"a" * 400 + b"\r\n" + b"259\r\n" + b"b" * 601 + b"\r\n0\r\n\r\n")
    with pytest.raises(MalformedReplyError, match="exceeds 1000 bytes"):
        await read_body(reader, chunked, max_body=cap)
    assert the_rest(reader) == b"b" * 601 + b"\r\n0\r\n\r\n"
    # Framed by the connection's end: at most one byte past the cap is read.
    until_close = parse_head(b"HTTP/1.0 200 OK\r\n\r\n")
    reader = stream(b"c" * 5000)
    with pytest.raises(MalformedReplyError, match="exceeds 1000 bytes"):
        await read_body(reader, until_close, max_body=cap)
    assert len(the_rest(reader)) == 5000 - cap - 1
    # At the cap exactly, every framing is read.
    assert await read_body(stream(b"d" * cap), until_close, max_body=cap) == b"d" * cap
    exact = b"3e8\r\n" + b"e" * cap + b"\r\n0\r\n\r\n"
    assert await read_body(stream(exact), chunked, max_body=cap) == b"e" * cap


def test_the_body_cap_is_above_dynamodbs_largest_reply() -> None:
    # A BatchGetItem reply holds up to 16 MB of items; its JSON is larger (types, base64).
    assert MAX_BODY >= 4 * 16 * 1024 * 1024


async def test_endless_interim_replies_are_refused() -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    final = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    reply = await read_reply(stream(interim * MAX_INTERIM + final))
    assert reply.body == b"{}"
    reader = stream(interim * 1000, eof=False)  # and more would come
    with pytest.raises(MalformedReplyError, match=f"more than {MAX_INTERIM} interim"):
        await read_reply(reader)
    assert len(the_rest(reader)) == len(interim) * (1000 - MAX_INTERIM - 1)


@pytest.mark.parametrize(
    ("trailers", "said"),
    [
        (b"X: y\r\n" * 10_000, f"exceed {MAX_FIELDS} fields"),  # endless fields
        (b"X: " + b"y" * (MAX_LINE - 10) + b"\r\n" * 1, None),  # one long field is fine
        ((b"X: " + b"y" * 8000 + b"\r\n") * 9, f"or {MAX_HEAD} bytes"),  # too many bytes
        (b"X: " + b"y" * (MAX_LINE + 1) + b"\r\n", "a trailer line longer than"),
    ],
)
async def test_trailer_fields_are_bounded_as_header_fields(
    trailers: bytes, said: str | None
) -> None:
    head = parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    body = b"2\r\n{}\r\n0\r\n" + trailers
    if said is None:
        assert await read_body(stream(body + b"\r\n"), head) == b"{}"
        return
    with pytest.raises(MalformedReplyError, match=said):
        await read_body(stream(body, eof=False), head)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJH+/=", None),
        ("with a\ttab and Latin-1 \u00e9", None),
        ("token\r\nX-Injected: yes", "a line break (CR or LF)"),
        ("token\n", "a line break (CR or LF)"),
        ("nul\x00", "the control character '\\x00'"),
        ("del\x7f", "the control character '\\x7f'"),
        ("euro \u20ac", "the character '\u20ac', outside Latin-1"),
    ],
)
def test_header_values_that_http_cannot_carry(value: str, problem: str | None) -> None:
    assert header_value_problem(value) == problem
