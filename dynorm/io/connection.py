"""Opening a connection: which senders a connection gets, set up from connect()'s settings.

A connection is lean (:func:`dynorm.io.lean._lean_settings`: keys, region, endpoint, and no
AWS configuration files) when connect()'s arguments and the environment say everything: the
lean sender (:mod:`dynorm.io.senders.lean`) posts, and neither aiobotocore nor botocore is
imported unless an operation outside the fast path is sent. Otherwise aiobotocore's session
resolves the credentials chain, the region and the endpoint, and the aio sender
(:mod:`dynorm.io.senders.aio`) posts on its HTTP session. A botocore client
(:mod:`dynorm.io.senders.botocore_client`) sends the rest, or everything with
``connect(fast_path=False)``. Each connection's senders sit behind one
:class:`~dynorm.io.senders.attempt.Attempt`, the ``send`` the Transport retries around.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from dynorm.core.versions import installed_version

from .lean import _Lean, _lean_settings
from .senders.attempt import Attempt
from .senders.base import Send, Timeouts
from .settings import attempt_timeout_of, check_credentials

if TYPE_CHECKING:
    from .senders.botocore_client import BotocoreSender, Client

__all__ = ["Connection", "open_connection"]


class Connection:
    """An open connection to DynamoDB: where requests go and what sends them.

    ``send`` is one attempt of one request (the Transport retries); ``fast_path`` whether it
    is dynorm's own request path; ``endpoint`` and ``region`` where requests go and what they
    are signed for.
    """

    def __init__(self, send: Send, *, fast_path: bool, endpoint: str, region: str | None) -> None:
        self.send = send
        self.fast_path = fast_path
        self.endpoint = endpoint
        self.region = region


@contextlib.asynccontextmanager
async def open_connection(
    *,
    endpoint_url: str | None,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
    profile: str | None,
    max_concurrency: int,
    connect_timeout: float,
    read_timeout: float,
    attempt_timeout: float | None = None,
    fast_path: bool = True,
) -> AsyncIterator[Connection]:
    """A connection to DynamoDB, open until the block ends.

    ``fast_path=False``: an aiobotocore DynamoDB client (botocore's retries off: the Transport
    retries) sends everything. Otherwise dynorm's own signed requests go out on aiobotocore's
    HTTP session, with the credentials, region and endpoint aiobotocore's session resolves, and
    a botocore client is created only for an operation the fast path does not send. When the
    configuration is connect()'s arguments and the environment only (:func:`_lean_settings`),
    the fast path imports neither aiobotocore nor botocore (:func:`_lean_connection`).
    """
    timeouts = Timeouts(
        connect_timeout,
        read_timeout,
        attempt_timeout_of(attempt_timeout, connect_timeout, read_timeout),
    )
    if aws_access_key_id is not None or aws_session_token is not None:
        check_credentials(  # refused before a client is built, on every path
            aws_access_key_id or "",
            aws_session_token,
            key_setting="connect(aws_access_key_id=...)",
            session_setting="connect(aws_session_token=...)",
        )
    if fast_path and profile is None:
        lean = _lean_settings(
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            environ=os.environ,
        )
        if lean is not None:
            async with _lean_connection(
                lean, max_concurrency=max_concurrency, timeouts=timeouts
            ) as connection:
                yield connection
            return

    # Not a lean connection: aiobotocore's session (imported by these, as they need it).
    from .senders import aio  # noqa: PLC0415
    from .senders.botocore_client import BotocoreSender, Client, cannot_create  # noqa: PLC0415

    session = aio.session_for(profile)
    client = Client(
        session,
        region_name=region_name,
        endpoint_url=endpoint_url,
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(client.close)
        slow = BotocoreSender(client, timeouts)
        if not fast_path:
            yield await _through_botocore(client, slow, timeouts)
            return
        region, endpoint, credentials = await aio.resolve(
            session,
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
        )
        if endpoint is None:
            # Something only botocore resolves (FIPS, dual-stack, another partition): the
            # client's endpoint, then dynorm's requests as before.
            endpoint, region, credentials = await client.resolved()
        elif not aio.valid_endpoint(endpoint):
            # (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL: the configuration files' advice.)
            raise cannot_create(f"Invalid endpoint: {endpoint}")
        # An endpoint behind a path (a gateway's prefix) is left to botocore, which signs the
        # path as it must; the fast path signs and posts to "/".
        if urlsplit(endpoint).path not in ("", "/"):
            yield await _through_botocore(client, slow, timeouts)
            return
        http = aio.http_session(session, endpoint, max_concurrency, timeouts)
        if http is None:
            # A silent fallback would hide a several-fold slowdown; say it once per connection.
            warnings.warn(
                f"aiobotocore {installed_version('aiobotocore')} lacks the HTTP session "
                "dynorm's fast request path sends on, so every request goes through botocore "
                "(slower). Install an aiobotocore version dynorm supports, or pass "
                "connect(fast_path=False) to choose this path and silence the warning",
                RuntimeWarning,
                stacklevel=4,
            )
            yield await _through_botocore(client, slow, timeouts)
            return
        await stack.enter_async_context(http)
        sender = aio.AioSender(
            http,
            credentials,
            endpoint=endpoint,
            region=region,
            deadline=timeouts.attempt_timeout,
        )
        send = Attempt(sender, slow, timeouts=timeouts)
        yield Connection(send, fast_path=True, endpoint=endpoint, region=region)


async def _through_botocore(
    client: Client, sender: BotocoreSender, timeouts: Timeouts
) -> Connection:
    """A connection sending everything through ``client`` (built now) with ``sender``."""
    endpoint, region, _ = await client.resolved()
    send = Attempt(None, sender, timeouts=timeouts)
    return Connection(send, fast_path=False, endpoint=endpoint, region=region)


@contextlib.asynccontextmanager
async def _lean_connection(
    lean: _Lean, *, max_concurrency: int, timeouts: Timeouts
) -> AsyncIterator[Connection]:
    """A fast-path connection that imports neither aiobotocore nor botocore.

    An operation the fast path does not send builds aiobotocore's session and a client then,
    with the same credentials, region and endpoint.
    """
    # Loaded when a connection opens, not by `import dynorm`.
    from .senders.botocore_client import BotocoreSender, Client  # noqa: PLC0415
    from .senders.lean import LeanSender  # noqa: PLC0415

    client = Client(
        None,
        region_name=lean.region,
        endpoint_url=lean.endpoint,
        aws_access_key_id=lean.keys.access_key,
        aws_secret_access_key=lean.keys.secret_key,
        aws_session_token=lean.keys.token,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
    )
    sender = LeanSender(
        lean.keys,
        endpoint=lean.endpoint,
        region=lean.region,
        max_concurrency=max_concurrency,
        timeouts=timeouts,
        ca_bundle=lean.ca_bundle,
    )
    try:
        send = Attempt(sender, BotocoreSender(client, timeouts), timeouts=timeouts)
        yield Connection(send, fast_path=True, endpoint=lean.endpoint, region=lean.region)
    finally:
        try:
            await sender.aclose()
        finally:
            await client.close()
