"""The lean sender: dynorm's own HTTP client and static credentials; aiohttp is never imported.

A lean connection (see ``dynorm.io.lean._lean_settings``) posts every signed request
(:mod:`dynorm.io.senders.signed`) through a :class:`dynorm.io.http.Pool` of keep-alive
connections, set up as aiobotocore's AIOHTTPSession would be, and signs with the static keys
connect()'s arguments or the environment gave. The pool's errors are said as the
:mod:`dynorm.io.senders.base` failures.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from dynorm.core.requests import Request
from dynorm.wire.sigv4 import canonical_host

from .base import ClosedError, Failure, Timeouts, TLSSetupError, WireError
from .signed import SignedJSON

if TYPE_CHECKING:
    import ssl

    from dynorm.io.http import Pool
    from dynorm.io.lean import _Keys

__all__ = ["LeanSender"]

#: aiobotocore's keep-alive for pooled connections (its DEFAULT_KEEPALIVE_TIMEOUT): below
#: AWS's 20-second idle timeout.
_KEEPALIVE_TIMEOUT: Final = 12


class LeanSender:
    """dynorm's own HTTP client (:class:`dynorm.io.http.Pool`) and static credentials.

    The pool holds ``max_concurrency`` connections (``max_pool_connections``), with the
    connect and read timeouts, aiobotocore's keep-alive, no decompression and no automatic
    Content-Type; TLS verifies against ``ca_bundle`` (AWS_CA_BUNDLE, REQUESTS_CA_BUNDLE) or
    certifi's bundle, as botocore does. No proxy: a proxied environment takes aiobotocore's.
    Closed with the connection.
    """

    def __init__(
        self,
        keys: _Keys,
        *,
        endpoint: str,
        region: str,
        max_concurrency: int,
        timeouts: Timeouts,
        ca_bundle: str | None,
    ) -> None:
        from dynorm.io import http  # noqa: PLC0415 - loaded with the connection

        self._http = http
        self._signed = SignedJSON(endpoint=endpoint, region=region)
        self._keys = keys
        self._endpoint = endpoint
        self._limit = max_concurrency
        self._timeouts = timeouts
        self._ca_bundle = ca_bundle
        self._pool: Pool | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._wire_errors: tuple[type[BaseException], ...] = (http.HTTPError, OSError)

    async def send(self, request: Request) -> dict[str, Any]:
        signed = self._signed
        body = signed.body(request)
        headers = signed.headers(request.operation, body, self._keys)
        pool = self._pool or await self._open()
        if pool.closed:
            raise ClosedError
        try:
            reply = await pool.post(headers, body)
        except self._http.PoolClosedError:  # closed while this request waited for a connection
            raise ClosedError from None
        except self._wire_errors as exc:
            raise self._failure(exc) from exc
        return signed.reply(request, reply.status, reply.headers, reply.body)

    async def _open(self) -> Pool:
        async with self._lock:
            if self._closed:
                raise ClosedError
            if self._pool is None:
                parts = urlsplit(self._endpoint)
                tls = parts.scheme == "https"
                try:
                    # Loading a CA bundle is file I/O: off the event loop, as aiobotocore does.
                    context = (
                        await asyncio.to_thread(_ssl_context, self._ca_bundle) if tls else None
                    )
                except OSError as exc:  # the CA bundle cannot be read
                    raise TLSSetupError(self._endpoint, exc) from exc
                if self._closed:
                    raise ClosedError
                self._pool = self._http.Pool(
                    parts.hostname or "",
                    parts.port or (443 if tls else 80),
                    host_header=canonical_host(parts.netloc, parts.scheme),
                    tls=context,
                    limit=self._limit,
                    connect_timeout=self._timeouts.connect_timeout,
                    read_timeout=self._timeouts.read_timeout,
                    keepalive=_KEEPALIVE_TIMEOUT,
                    deadline=self._timeouts.attempt_timeout,
                )
            return self._pool

    def _failure(self, exc: BaseException) -> WireError:
        """What one of the pool's errors (or the socket's) stands for."""
        http = self._http
        kind: Failure
        if isinstance(exc, http.ConnectTimeoutError):
            kind = "connect_timeout"
        elif isinstance(exc, http.ConnectError):
            kind = "refused"  # refused, unreachable, TLS handshake, unknown host
        elif isinstance(exc, http.ReadTimeoutError):
            kind = "read_timeout"
        elif isinstance(exc, http.DeadlineError):
            kind = "deadline" if exc.sent else "unsent_deadline"
        else:
            kind = "broken"  # reset, disconnected, truncated or malformed: after it went out
        # Chained from the socket's or the stream's error (refused, reset, timed out) if any.
        cause = (exc.__cause__ if isinstance(exc, http.HTTPError) else None) or exc
        return WireError(kind, self._endpoint, exc, cause=cause)

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()


def _ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The TLS context botocore's ``create_urllib3_context`` and aiobotocore's session make."""
    import ssl  # noqa: PLC0415 - costly at a cold start; an https endpoint only

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.options |= ssl.OP_NO_SSLv2 | ssl.OP_NO_SSLv3 | ssl.OP_NO_COMPRESSION | ssl.OP_NO_TICKET
    if getattr(context, "post_handshake_auth", None) is not None:
        context.post_handshake_auth = True
    context.verify_mode = ssl.CERT_REQUIRED
    context.check_hostname = True
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog and hasattr(context, "keylog_filename"):
        context.keylog_filename = keylog
    bundle = ca_bundle or _default_ca_bundle()
    if bundle:
        context.load_verify_locations(bundle)
    else:
        context.load_default_certs()
    return context


def _default_ca_bundle() -> str | None:
    """The CA bundle: certifi's, else botocore's own (found without importing it), else none."""
    try:
        import certifi  # noqa: PLC0415 - once per connection
    except ImportError:
        import importlib.util  # noqa: PLC0415 - without certifi only

        spec = importlib.util.find_spec("botocore")
        for folder in (spec and spec.submodule_search_locations) or ():
            vendored = Path(folder, "cacert.pem")
            if vendored.is_file():
                return str(vendored)
        return None
    return certifi.where()
