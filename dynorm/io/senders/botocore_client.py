"""The botocore sender: an aiobotocore DynamoDB client validates, serializes, signs and parses.

It sends everything with ``connect(fast_path=False)``, and on the fast path what dynorm does
not sign itself (backups, exports, tags ...). The client (:class:`Client`) is created on first
use, once per connection, with botocore's retries off (the Transport retries) and dynorm's
User-Agent; :class:`BotocoreSender` says botocore's errors as the
:mod:`dynorm.io.senders.base` failures. aiobotocore, botocore and aiohttp are imported inside
the functions, so a lean connection that never needs a client never loads them.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any

from dynorm.core.errors import DynormError
from dynorm.core.requests import Request

from .base import (
    ClosedError,
    CredentialsError,
    Failure,
    ParamsError,
    ReplyError,
    Timeouts,
    WireError,
    user_agent,
)

if TYPE_CHECKING:
    import botocore.exceptions
    from aiobotocore.session import AioSession

__all__ = ["BotocoreSender", "Client", "cannot_create", "credential_errors", "no_region"]


class Client:
    """The aiobotocore DynamoDB client of a connection, created on first use, once.

    The slow path (``connect(fast_path=False)``) creates it when the connection opens; the
    fast path only for an operation it does not send itself (and closes it with the
    connection). Without a ``session`` (a lean connection), aiobotocore's session is built
    then, with the same keys, region and endpoint.
    """

    def __init__(
        self,
        session: AioSession | None,
        *,
        region_name: str | None,
        endpoint_url: str | None,
        aws_access_key_id: str | None,
        aws_secret_access_key: str | None,
        aws_session_token: str | None,
        max_concurrency: int,
        timeouts: Timeouts,
    ) -> None:
        self._session = session
        self._region_name = region_name
        self._endpoint_url = endpoint_url
        self._keys = (aws_access_key_id, aws_secret_access_key, aws_session_token)
        self._max_concurrency = max_concurrency
        self._timeouts = timeouts
        self._context: Any = None
        self._client: Any = None
        self._lock = asyncio.Lock()
        self._closed = False

    async def get(self) -> Any:
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._closed:
                raise ClosedError(named=False)
            if self._client is None:
                context = self._create()
                self._client = await _entered(context)
                self._context = context
        return self._client

    def _create(self) -> Any:
        """The client's context manager (the client is made when it is entered)."""
        session = self._session
        if session is None:
            from aiobotocore.session import get_session

            session = get_session()
        access_key, secret_key, token = self._keys
        return session.create_client(
            "dynamodb",
            region_name=self._region_name,
            endpoint_url=self._endpoint_url,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            aws_session_token=token,
            config=_client_config(self._max_concurrency, self._timeouts),
        )

    async def resolved(self) -> tuple[str, str, Any]:
        """The client's endpoint, region and credentials (creating it if it is not yet)."""
        built = await self.get()
        region: str = built.meta.region_name  # a built client always has one
        return str(built.meta.endpoint_url), region, built._request_signer._credentials

    async def close(self) -> None:
        async with self._lock:
            self._closed = True
            self._client = None
            context, self._context = self._context, None
            if context is not None:
                await context.__aexit__(None, None, None)


class BotocoreSender:
    """One attempt of one request through the connection's botocore client.

    botocore is imported by the first request (a lean connection may never send one).
    """

    def __init__(self, client: Client, timeouts: Timeouts) -> None:
        self._client = client
        self._timeouts = timeouts
        self._exceptions: Any = None

    def _load(self) -> Any:
        import aiohttp
        import botocore.exceptions
        from botocore import xform_name

        self._name = xform_name
        self._credential_errors = credential_errors()
        self._wire_errors = (botocore.exceptions.BotoCoreError, aiohttp.ClientError, OSError)
        self._exceptions = botocore.exceptions
        return botocore.exceptions

    async def send(self, request: Request) -> dict[str, Any]:
        client = await self._client.get()
        exceptions = self._exceptions or self._load()
        method = getattr(client, self._name(request.operation))
        deadline = asyncio.timeout(self._timeouts.attempt_timeout)
        try:
            async with deadline:
                response: dict[str, Any] = await method(**request.params)
        except exceptions.ClientError as exc:
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            message = str(error.get("Message", "")) or str(exc)
            endpoint = str(client.meta.endpoint_url)
            raise ReplyError(code, message, exc.response, endpoint, exc) from exc
        except exceptions.ParamValidationError as exc:
            raise ParamsError(str(exc), exc) from exc
        except self._credential_errors as exc:
            raise CredentialsError(exc, exc) from exc
        except self._wire_errors as exc:  # TimeoutError (the deadline's) is an OSError
            said = getattr(exc, "kwargs", {})
            endpoint = str(said.get("endpoint_url", client.meta.endpoint_url))
            # Past the attempt's deadline botocore may be connecting or reading: say it may
            # have been sent.
            kind = "deadline" if deadline.expired() else _botocore_failure(exc)
            raise WireError(kind, endpoint, exc, cause=exc, detail=said.get("error", exc)) from exc
        return response

    async def aclose(self) -> None:
        await self._client.close()


def credential_errors() -> tuple[type[Exception], ...]:
    """The errors botocore raises for credentials that are missing, partial or cannot be fetched."""
    import botocore.exceptions

    return (
        botocore.exceptions.NoCredentialsError,
        botocore.exceptions.PartialCredentialsError,
        botocore.exceptions.CredentialRetrievalError,
    )


def _never_connected(exc: botocore.exceptions.BotoCoreError) -> bool:
    """Whether the connection failed before anything was sent (so nothing was applied).

    aiobotocore reports a connection reset while reading the reply as an
    EndpointConnectionError too, so the underlying aiohttp error decides.
    """
    import aiohttp
    import botocore.exceptions

    if isinstance(
        exc, botocore.exceptions.ConnectTimeoutError | botocore.exceptions.ProxyConnectionError
    ):
        return True
    if isinstance(exc, botocore.exceptions.ConnectionError):  # EndpointConnectionError, SSLError
        # ClientConnectorError: refused, unreachable, TLS handshake; gaierror: unknown host.
        return isinstance(exc.kwargs.get("error"), aiohttp.ClientConnectorError | socket.gaierror)
    return False


def _botocore_failure(exc: Exception) -> Failure:
    """The failure an exception from aiobotocore's send stands for."""
    import botocore.exceptions

    if isinstance(exc, botocore.exceptions.BotoCoreError) and _never_connected(exc):
        if isinstance(exc, botocore.exceptions.ConnectTimeoutError):
            return "connect_timeout"
        if isinstance(exc, botocore.exceptions.ProxyConnectionError):
            return "proxy"
        return "refused"
    if isinstance(exc, botocore.exceptions.ReadTimeoutError | TimeoutError):
        return "read_timeout"
    return "broken"


def _client_config(max_concurrency: int, timeouts: Timeouts) -> Any:
    """The AioConfig of a connection's botocore client: botocore's retries off, dynorm's UA."""
    from aiobotocore.config import AioConfig

    return AioConfig(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=timeouts.connect_timeout,
        read_timeout=timeouts.read_timeout,
        max_pool_connections=max_concurrency,
        user_agent=user_agent(),
    )


async def _entered(context: Any) -> Any:
    """``await context.__aenter__()``, botocore's configuration errors said as DynormErrors."""
    import botocore.exceptions

    try:
        return await context.__aenter__()
    except botocore.exceptions.NoRegionError:
        raise no_region() from None
    except botocore.exceptions.BotoCoreError as exc:
        raise cannot_create(exc) from exc


def no_region() -> DynormError:
    return DynormError(
        "no AWS region is configured; pass connect(..., region_name='eu-west-1') or set "
        "AWS_DEFAULT_REGION"
    )


def cannot_create(exc: Exception | str) -> DynormError:
    return DynormError(
        f"cannot create the DynamoDB client: {exc}; check connect()'s profile=, "
        "endpoint_url= and region_name= and the AWS configuration files"
    )
