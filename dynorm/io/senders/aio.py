"""The aio sender: aiobotocore's HTTP session (pool, timeouts, TLS, proxies) and credentials chain.

When a connection is not lean (a profile, AWS configuration files, a proxy ...), aiobotocore's
session resolves what a botocore client would (:func:`resolve`: the region, the credentials
chain, the configured endpoint) and gives the HTTP session a client with dynorm's settings
would have (:func:`http_session`); :class:`AioSender` posts dynorm's signed requests
(:mod:`dynorm.io.senders.signed`) on it and says aiohttp's errors as the
:mod:`dynorm.io.senders.base` failures. aiobotocore, botocore and aiohttp are imported inside
the functions, when such a connection opens.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import re
import socket
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dynorm.core.requests import Request
from dynorm.io.lean import _STANDARD_REGIONS

from .base import ClosedError, CredentialsError, Failure, Timeouts, TLSSetupError, WireError
from .botocore_client import cannot_create, credential_errors, no_region
from .signed import SignedJSON

if TYPE_CHECKING:
    import aiohttp
    from aiobotocore.session import AioSession

__all__ = ["AioSender", "http_session", "resolve", "session_for", "valid_endpoint"]


class AioSender:
    """dynorm's signed requests on aiobotocore's HTTP session, signed from its credentials."""

    def __init__(
        self, http: Any, credentials: Any, *, endpoint: str, region: str, deadline: float
    ) -> None:
        import aiohttp
        import botocore.credentials
        import yarl

        self._http = http
        self._signed = SignedJSON(endpoint=endpoint, region=region)
        self._deadline = deadline
        proxies = http._proxy_config
        self.proxy: str | None = proxies.proxy_url_for(endpoint) or None
        self.proxy_headers: dict[str, str] = dict(proxies.proxy_headers_for(endpoint))
        self._endpoint = endpoint
        parts = urlsplit(endpoint)
        self._url = yarl.URL(f"{parts.scheme}://{parts.netloc}/")
        self._session: aiohttp.ClientSession | None = None
        self._wire_errors = (aiohttp.ClientError, OSError, TimeoutError)
        self._credentials = credentials
        self._refreshable = isinstance(credentials, botocore.credentials.RefreshableCredentials)
        self._static: Any = None  # frozen once when the credentials never refresh

    async def send(self, request: Request) -> dict[str, Any]:
        signed = self._signed
        credentials = self._static
        if credentials is None:
            credentials = await self._frozen_credentials()
        body = signed.body(request)
        headers = signed.headers(request.operation, body, credentials)
        session = self._session or await self._open()
        if session.closed:
            raise ClosedError
        deadline = asyncio.timeout(self._deadline)
        try:
            async with (
                deadline,
                session.post(
                    self._url,
                    data=body,
                    headers=headers,
                    proxy=self.proxy,
                    proxy_headers=self.proxy_headers or None,
                ) as reply,
            ):
                payload = await reply.read()
                status, reply_headers = reply.status, reply.headers
        except self._wire_errors as exc:
            # Past the deadline aiohttp may be connecting or reading: it may have been sent.
            expired = isinstance(exc, TimeoutError) and deadline.expired()
            kind = "deadline" if expired else _aiohttp_failure(exc)
            raise WireError(kind, self._endpoint, exc, cause=exc) from exc
        return signed.reply(request, status, reply_headers, payload)

    async def session(self) -> aiohttp.ClientSession:
        """The aiohttp session of aiobotocore; ClosedError once the connection ended."""
        http = self._http
        if getattr(http, "_sessions", {}) is None:  # aiobotocore closed it: connect() ended
            raise ClosedError(named=False)
        if hasattr(http, "_get_session"):  # aiobotocore >= 3: one session per proxy
            return await http._get_session(self.proxy)  # type: ignore[no-any-return]
        return http._session  # type: ignore[no-any-return]

    async def _open(self) -> aiohttp.ClientSession:
        try:
            self._session = session = await self.session()
        except OSError as exc:  # the TLS context's CA bundle cannot be read
            raise TLSSetupError(self._endpoint, exc) from exc
        return session

    async def _frozen_credentials(self) -> Any:
        """The frozen credentials (``access_key``, ``secret_key``, ``token``) to sign with."""
        credentials = self._credentials
        if credentials is None:
            raise CredentialsError("none were found")
        try:
            frozen = credentials.get_frozen_credentials()
            if inspect.isawaitable(frozen):
                frozen = await frozen
        except credential_errors() as exc:
            raise CredentialsError(exc, exc) from exc
        if not self._refreshable:
            self._static = frozen
        return frozen

    async def aclose(self) -> None:
        """Nothing: the HTTP session is aiobotocore's, closed with the connection."""


def _aiohttp_failure(exc: BaseException) -> Failure:
    """The failure an exception from aiohttp stands for, told apart as aiobotocore does."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientProxyConnectionError | aiohttp.ClientHttpProxyError):
        return "proxy"
    if isinstance(exc, aiohttp.ServerTimeoutError):
        connecting = isinstance(exc, aiohttp.ConnectionTimeoutError)
        return (
            "connect_timeout"
            if connecting or str(exc).lower().startswith("connect")
            else ("read_timeout")
        )
    if isinstance(exc, aiohttp.ClientConnectorError | socket.gaierror):
        return "refused"  # refused, unreachable, TLS handshake, unknown host
    if isinstance(exc, TimeoutError):
        return "read_timeout"
    return "broken"  # reset, disconnected, truncated body: after the request went out


def session_for(profile: str | None) -> AioSession:
    """The session of aiobotocore, with ``profile`` when one is given."""
    from aiobotocore.session import get_session

    made = get_session()
    if profile is not None:
        made.set_config_variable("profile", profile)
    return made


async def resolve(
    session: AioSession,
    *,
    endpoint_url: str | None,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
) -> tuple[str, str | None, Any]:
    """The region, the endpoint and the credentials, as a client would resolve them.

    The endpoint is None when only a botocore client can resolve it. botocore's errors (a bad
    profile, an invalid region, partial credentials) are said as DynormErrors.
    """
    import botocore.exceptions

    try:
        return await _resolve(
            session,
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
        )
    except botocore.exceptions.BotoCoreError as exc:
        raise cannot_create(exc) from exc


async def _resolve(
    session: AioSession,
    *,
    endpoint_url: str | None,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
) -> tuple[str, str | None, Any]:
    import botocore.exceptions
    from aiobotocore.credentials import AioCredentials
    from botocore.utils import validate_region_name

    session.get_scoped_config()  # ProfileNotFound for a profile the files do not have
    region: str | None = region_name or session.get_config_variable("region")
    if region is None:
        raise no_region()
    validate_region_name(region)
    # What a client creation records: the credentials chain's own clients (STS for an
    # assumed role, SSO) use the region of the client they serve.
    session._last_client_region_used = region  # type: ignore[attr-defined]
    credentials: Any
    if aws_access_key_id is not None and aws_secret_access_key is not None:
        credentials = AioCredentials(aws_access_key_id, aws_secret_access_key, aws_session_token)
    elif aws_access_key_id is not None or aws_secret_access_key is not None:
        missing = "aws_secret_access_key" if aws_secret_access_key is None else "aws_access_key_id"
        raise botocore.exceptions.PartialCredentialsError(provider="explicit", cred_var=missing)
    else:
        credentials = await session.get_credentials()
    endpoint = endpoint_url or _configured_endpoint(session)
    if endpoint is None:
        endpoint = _standard_endpoint(session, region)
    return region, endpoint, credentials


def _standard_endpoint(session: AioSession, region: str) -> str | None:
    """DynamoDB's endpoint for ``region``.

    None when only botocore can tell: FIPS or dual-stack configured, another partition.
    """
    if session.get_config_variable("use_fips_endpoint") or session.get_config_variable(
        "use_dualstack_endpoint"
    ):
        return None
    for pattern, suffix in _STANDARD_REGIONS:
        if re.match(pattern, region):
            return f"https://dynamodb.{region}.{suffix}"
    return None


def _configured_endpoint(session: AioSession) -> str | None:
    """The endpoint the AWS configuration names for DynamoDB, as a botocore client reads it.

    ``AWS_ENDPOINT_URL_DYNAMODB``, ``AWS_ENDPOINT_URL``, or the ``services`` section of the
    profile; none when ``AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`` (or the profile's
    ``ignore_configured_endpoint_urls``) says so.
    """
    from botocore.configprovider import ConfiguredEndpointProvider

    if session.get_config_variable("ignore_configured_endpoint_urls"):
        return None
    provider = ConfiguredEndpointProvider(
        full_config=session.full_config,
        scoped_config=session.get_scoped_config(),
        client_name="dynamodb",
    )
    url: str | None = provider.provide()
    return url


def valid_endpoint(url: str) -> bool:
    """Whether a botocore client would take ``url`` as its endpoint."""
    from botocore.utils import is_valid_endpoint_url, is_valid_ipv6_endpoint_url

    try:
        return bool(is_valid_endpoint_url(url) or is_valid_ipv6_endpoint_url(url))
    except ValueError:  # urllib's "Invalid IPv6 URL"
        return False


def _verify(session: AioSession) -> Any:
    """TLS verification as a client's endpoint sets it: ``ca_bundle``, REQUESTS_CA_BUNDLE."""
    verify = session.get_config_variable("ca_bundle") or os.environ.get("REQUESTS_CA_BUNDLE")
    return verify if isinstance(verify, str) and verify.strip() else True


def http_session(
    session: AioSession, endpoint: str, max_concurrency: int, timeouts: Timeouts
) -> Any | None:
    """The HTTP session (aiobotocore's) a client with dynorm's config would be given.

    The timeouts, the pool size, the environment's proxies, TLS verification, TCP keepalive.
    None when this aiobotocore's session lacks what :class:`AioSender` posts through.
    """
    from aiobotocore.httpsession import AIOHTTPSession
    from botocore.utils import get_environ_proxies

    socket_options = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    if session.get_config_variable("tcp_keepalive"):
        socket_options.append((socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1))
    http = AIOHTTPSession(
        # (connect, read), as botocore's endpoint creator passes them; the stubs say float.
        timeout=(timeouts.connect_timeout, timeouts.read_timeout),  # type: ignore[arg-type]
        proxies=get_environ_proxies(endpoint),
        verify=_verify(session),
        max_pool_connections=max_concurrency,
        socket_options=socket_options,
    )
    return http if hasattr(http, "_proxy_config") else None
