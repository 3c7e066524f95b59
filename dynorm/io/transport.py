"""The transport: the only module that talks to aiobotocore and botocore.

It creates the client, sends one request at a time through it, maps every failure to a
:class:`~dynorm.DynormError` subclass, and retries: throttling, server-side failures and broken
connections get further attempts with jittered exponential backoff, within a retry quota.
botocore's own retries are off, so each attempt is one HTTP request and the rules of
``_retry`` decide what a lost reply means for a write.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import inspect
import platform
import socket
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import aiobotocore
import aiohttp
import botocore
import botocore.credentials
import botocore.exceptions
import orjson
import yarl
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from botocore import xform_name

from dynorm.core.chunks import backoff
from dynorm.core.codec.converter import Item
from dynorm.core.errors import (
    CancellationReason,
    ConditionFailedError,
    DatabaseError,
    DynormError,
    LimitExceededError,
    OutcomeUnknownError,
    TableNotFoundError,
    ThrottledError,
    TransactionCanceledError,
    TransportError,
    ValidationError,
)
from dynorm.core.events import OK, RequestEvent, outcome_of, targets_of
from dynorm.core.requests import Request
from dynorm.wire.protocol import (
    DATA_PLANE,
    clock_offset,
    crc32_matches,
    encode_body,
    is_clock_skew,
    parse_error,
    target_of,
)
from dynorm.wire.retry import (
    NO_RETRY_INCREMENT,
    THROTTLING_CODES,
    RetryQuota,
    Verdict,
    applied,
    asking_for_old,
    classify,
    is_transient,
    needs_token,
    new_token,
    prepare,
    settled_response,
    verification_read,
)
from dynorm.wire.sigv4 import Signer, canonical_host

from .batch import Sleep
from .otel import Span, Tracing

__all__ = ["RequestListener", "Send", "Transport", "open_client"]

Send = Callable[[Request], Awaitable[dict[str, Any]]]
RequestListener = Callable[[RequestEvent], None]

_ERRORS: Final[Mapping[str, type[DatabaseError]]] = {
    "ConditionalCheckFailedException": ConditionFailedError,
    "ResourceNotFoundException": TableNotFoundError,
    "ProvisionedThroughputExceededException": ThrottledError,
    "ThrottlingException": ThrottledError,
    "RequestLimitExceeded": ThrottledError,
    "TransactionInProgressException": ThrottledError,
    "ValidationException": ValidationError,
}

_CREDENTIAL_ERRORS: Final = (
    botocore.exceptions.NoCredentialsError,
    botocore.exceptions.PartialCredentialsError,
    botocore.exceptions.CredentialRetrievalError,
)


@functools.cache
def _user_agent() -> str:
    """The User-Agent dynorm's requests carry, fixed for the life of the process.

    Without one, botocore rebuilds its own from a dozen components for every request, which
    costs about a seventh of a GetItem's client CPU. Giving it a fixed string (a documented
    ``Config`` option) skips that and still names every layer.
    """
    try:
        version = importlib.metadata.version("dynorm")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return (
        f"dynorm/{version} aiobotocore/{aiobotocore.__version__} "
        f"botocore/{botocore.__version__} Python/{platform.python_version()} "
        f"{platform.system()}/{platform.release()}"
    )


def _translate(exc: botocore.exceptions.ClientError, request: Request) -> DatabaseError:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    message = str(error.get("Message", "")) or str(exc)
    return _database_error(code, message, exc.response, request)


def _database_error(
    code: str, message: str, reply: Mapping[str, Any], request: Request
) -> DatabaseError:
    """The DatabaseError for an error reply; ``reply`` holds its reasons and returned item."""
    if code == "TransactionCanceledException":
        reasons = [
            CancellationReason(
                i, str(r.get("Code", "None")), str(r.get("Message", "")), _item(r.get("Item"))
            )
            for i, r in enumerate(reply.get("CancellationReasons") or [])
        ]
        failed = [
            f"action {r.index}: {r.code} {r.message}".strip() for r in reasons if r.code != "None"
        ]
        return TransactionCanceledError(
            f"transaction cancelled, nothing was written ({'; '.join(failed) or message})",
            reasons=reasons,
        )
    if code == "ResourceNotFoundException":
        table = request.params.get("TableName", "?")
        message = f"{message} (table {table!r}: create it with `await db.create_table()`)"
    elif code in THROTTLING_CODES:
        message += " (throttled: raise the table's capacity, or connect(max_attempts=...))"
    elif is_transient(code):
        message = f"{message or code} (a failure on DynamoDB's side; try again later)"
    elif is_clock_skew(code, message):
        message += " (this machine's clock is off: dynorm corrects for it and retries)"
    cls = _ERRORS.get(code, DatabaseError)
    translated = cls(f"{request.operation}: {message}", code=code, operation=request.operation)
    if isinstance(translated, ConditionFailedError):
        translated.item = _item(reply.get("Item"))
    return translated


def _item(value: object) -> Item | None:
    return value if isinstance(value, dict) else None


def _never_connected(exc: botocore.exceptions.BotoCoreError) -> bool:
    """Whether the connection failed before anything was sent (so nothing was applied).

    aiobotocore reports a connection reset while reading the reply as an
    EndpointConnectionError too, so the underlying aiohttp error decides.
    """
    if isinstance(
        exc, botocore.exceptions.ConnectTimeoutError | botocore.exceptions.ProxyConnectionError
    ):
        return True
    if isinstance(exc, botocore.exceptions.ConnectionError):  # EndpointConnectionError, SSLError
        # ClientConnectorError: refused, unreachable, TLS handshake; gaierror: unknown host.
        return isinstance(exc.kwargs.get("error"), aiohttp.ClientConnectorError | socket.gaierror)
    return False


#: What went wrong on the wire, as the messages below tell it.
_Failure = Literal["connect_timeout", "proxy", "refused", "read_timeout", "broken"]


def _botocore_failure(exc: Exception) -> _Failure:
    """The failure an exception from aiobotocore's send stands for."""
    if isinstance(exc, botocore.exceptions.BotoCoreError) and _never_connected(exc):
        if isinstance(exc, botocore.exceptions.ConnectTimeoutError):
            return "connect_timeout"
        if isinstance(exc, botocore.exceptions.ProxyConnectionError):
            return "proxy"
        return "refused"
    if isinstance(exc, botocore.exceptions.ReadTimeoutError | TimeoutError):
        return "read_timeout"
    return "broken"


def _aiohttp_failure(exc: BaseException) -> _Failure:
    """The failure an exception from aiohttp stands for, told apart as aiobotocore does."""
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


def _transport_error(
    failure: _Failure, exc: BaseException, request: Request, endpoint: str, config: Any
) -> TransportError:
    """A TransportError whose message says what happened and what to check."""
    operation = request.operation
    detail = getattr(exc, "kwargs", {}).get("error", exc)
    if failure in {"connect_timeout", "proxy", "refused"}:
        if failure == "connect_timeout":
            what = f"no connection to {endpoint} within connect_timeout={config.connect_timeout}s"
        elif failure == "proxy":
            what = f"could not connect through the proxy ({exc})"
        else:
            what = f"could not connect to {endpoint} ({detail})"
        return TransportError(
            f"{operation}: {what}; nothing was sent. Check connect(endpoint_url=...) and "
            "region_name, that the network (proxy, firewall, VPC endpoint) reaches it, and "
            "connect(connect_timeout=...)",
            operation=operation,
            request_sent=False,
        )
    if failure == "read_timeout":
        what = f"no reply from {endpoint} within read_timeout={config.read_timeout}s"
    else:
        what = f"the connection to {endpoint} broke before a reply came ({exc})"
    return TransportError(
        f"{operation}: {what}; the request may have been applied. Check that the endpoint is "
        "up and reachable (network, proxy, load balancer), or raise "
        "connect(read_timeout=...)",
        operation=operation,
        request_sent=True,
    )


def _credentials_error(request: Request, cause: object) -> DynormError:
    return DynormError(
        f"{request.operation}: no usable AWS credentials ({cause}); pass "
        "connect(aws_access_key_id=..., aws_secret_access_key=...) or profile=, or set "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
    )


class _ClientSender:
    """One attempt of one request through the aiobotocore client, every failure mapped.

    The slow path: botocore validates, serializes, signs and parses.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    async def __call__(self, request: Request) -> dict[str, Any]:
        method = getattr(self._client, xform_name(request.operation))
        try:
            response: dict[str, Any] = await method(**request.params)
        except botocore.exceptions.ClientError as exc:
            raise _translate(exc, request) from exc
        except botocore.exceptions.ParamValidationError as exc:
            raise ValidationError(
                f"{request.operation}: {exc}", operation=request.operation
            ) from exc
        except _CREDENTIAL_ERRORS as exc:
            raise _credentials_error(request, exc) from exc
        except (botocore.exceptions.BotoCoreError, aiohttp.ClientError, OSError) as exc:
            endpoint = getattr(exc, "kwargs", {}).get("endpoint_url", "the endpoint")
            failure = _botocore_failure(exc)
            raise _transport_error(
                failure, exc, request, endpoint, self._client.meta.config
            ) from exc
        return response


class _FastSender:
    """One attempt of one request as dynorm's own signed JSON POST (the fast request path).

    Per client, once: the endpoint, the signer, the constant headers, the proxy, the
    credentials provider and aiobotocore's aiohttp session (same pool, timeouts, TLS and proxy
    settings as botocore's requests). Per request: the body, the signature, the POST, the
    checksum and the parse. Operations outside :data:`DATA_PLANE` go to ``fallback``.
    """

    def __init__(self, client: Any, http: Any, fallback: Send) -> None:
        meta = client.meta
        self._fallback = fallback
        self._config = meta.config
        self._endpoint = str(meta.endpoint_url)
        parts = urlsplit(self._endpoint)
        self._url = yarl.URL(f"{parts.scheme}://{parts.netloc}/")
        self._signer = Signer(
            region=meta.region_name, host=canonical_host(parts.netloc, parts.scheme)
        )
        self._constant_headers = {"User-Agent": _user_agent(), "Accept-Encoding": "identity"}
        self._http = http
        proxies = http._proxy_config
        self._proxy: str | None = proxies.proxy_url_for(self._endpoint) or None
        self._proxy_headers: dict[str, str] = dict(proxies.proxy_headers_for(self._endpoint))
        self._session: aiohttp.ClientSession | None = None
        self._credentials = client._request_signer._credentials
        self._static: Any = None  # frozen once when the credentials never refresh
        #: Seconds to add to this machine's clock (set from a server's Date after a skew error).
        self.clock_offset = 0.0

    async def _open(self) -> aiohttp.ClientSession:
        # aiobotocore's session: the pool, timeouts, TLS and proxy settings of its AioConfig.
        http = self._http
        if getattr(http, "_sessions", {}) is None:  # aiobotocore closed it: connect() ended
            raise DynormError(
                "the Database's connection is closed; use the Database only inside "
                "`async with connect(...) as db:`"
            )
        if hasattr(http, "_get_session"):  # aiobotocore >= 3: one session per proxy
            session = await http._get_session(self._proxy)
        else:
            session = http._session
        self._session = session
        return session  # type: ignore[no-any-return]

    async def _frozen(self, request: Request) -> Any:
        if self._static is not None:
            return self._static
        credentials = self._credentials
        if credentials is None:
            raise _credentials_error(request, "none were found")
        try:
            frozen = credentials.get_frozen_credentials()
            if inspect.isawaitable(frozen):
                frozen = await frozen
        except _CREDENTIAL_ERRORS as exc:
            raise _credentials_error(request, exc) from exc
        if not isinstance(credentials, botocore.credentials.RefreshableCredentials):
            self._static = frozen
        return frozen

    async def __call__(self, request: Request) -> dict[str, Any]:
        operation = request.operation
        if operation not in DATA_PLANE:
            return await self._fallback(request)
        credentials = await self._frozen(request)
        try:
            body = encode_body(request.params)
        except TypeError as exc:
            raise ValidationError(
                f"{operation}: {exc} in the request's parameters; pass AttributeValues "
                "(strings, numbers as strings, bytes, lists, dicts)",
                operation=operation,
            ) from exc
        headers = self._signer.headers(
            access_key=credentials.access_key,
            secret_key=credentials.secret_key,
            token=credentials.token,
            target=target_of(operation),
            body=body,
            now=time.time() + self.clock_offset,
        )
        headers.update(self._constant_headers)
        session = self._session or await self._open()
        if session.closed:
            raise DynormError(
                f"{operation}: the Database's connection is closed; use the Database only "
                "inside `async with connect(...) as db:`"
            )
        try:
            async with session.post(
                self._url,
                data=body,
                headers=headers,
                proxy=self._proxy,
                proxy_headers=self._proxy_headers or None,
            ) as reply:
                payload = await reply.read()
                status = reply.status
                reply_headers = reply.headers
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            failure = _aiohttp_failure(exc)
            raise _transport_error(failure, exc, request, self._endpoint, self._config) from exc
        if not crc32_matches(payload, reply_headers.get("x-amz-crc32")):
            raise TransportError(
                f"{operation}: the reply from {self._endpoint} does not match its checksum "
                "(x-amz-crc32): it was damaged on the way, and the request may have been "
                "applied. Check the network path (proxies, load balancers)",
                operation=operation,
                request_sent=True,
            )
        if status < 300:
            if not payload:
                return {}
            # A read names its own parser (typed structures per table; see dynorm.wire.structs),
            # which falls back to orjson by itself when a body does not fit.
            try:
                return (request.parse or orjson.loads)(payload)
            except ValueError as exc:  # orjson.JSONDecodeError: an HTML page from a proxy, say
                raise TransportError(
                    f"{operation}: the reply from {self._endpoint} (HTTP {status}) is not "
                    f"DynamoDB's JSON ({exc}), and the request may have been applied. Check "
                    "the endpoint and the network path (proxies, captive portals)",
                    operation=operation,
                    request_sent=True,
                ) from exc
        error = parse_error(status, payload, reply_headers.get("x-amzn-ErrorType"))
        if is_clock_skew(error.code, error.message):
            offset = clock_offset(reply_headers.get("Date"), time.time())
            if offset is not None:
                self.clock_offset = offset
        raise _database_error(error.code, error.message, error.body, request)


class Transport:
    """Sends requests with retries, at most ``max_concurrency`` at a time.

    ``attempt`` sends one request once (one HTTP request) and raises DynormErrors; ``sleep``
    waits between attempts (tests pass a fake); ``key_attributes`` name the primary key of
    each table (by table name; a sequence: of every table), to read back an item a lost write
    may have stored. Every attempt that reached the
    wire is reported to ``listeners`` as a :class:`RequestEvent`, and to OpenTelemetry when a
    tracer provider is configured.
    """

    def __init__(
        self,
        attempt: Send,
        *,
        key_attributes: Sequence[str] | Mapping[str, Sequence[str]],
        max_attempts: int,
        max_concurrency: int,
        sleep: Sleep = asyncio.sleep,
        quota: RetryQuota | None = None,
        token: Callable[[], str] = new_token,
        tracing: Tracing | None = None,
        endpoint: str | None = None,
        region: str | None = None,
    ) -> None:
        if max_attempts < 1:
            raise LimitExceededError(f"max_attempts must be at least 1; got {max_attempts}")
        self._attempt = attempt
        self._key_attributes: Mapping[str, Sequence[str]] | tuple[str, ...] = (
            dict(key_attributes) if isinstance(key_attributes, Mapping) else tuple(key_attributes)
        )
        self._max_attempts = max_attempts
        self._gate = asyncio.Semaphore(max_concurrency)
        self._sleep = sleep
        self._quota = quota
        self._token = token
        self._tracing = tracing or Tracing()
        self.listeners: list[RequestListener] = []
        #: Whether requests go out on dynorm's own fast path (False: through botocore).
        self.fast_path = isinstance(attempt, _FastSender)
        #: The client's endpoint URL and region (None for a Transport built without a client).
        self.endpoint = endpoint
        self.region = region

    @classmethod
    def for_client(cls, client: Any, *, fast_path: bool = True, **options: Any) -> Transport:
        """A Transport sending through an aiobotocore DynamoDB client.

        ``fast_path`` sends the data-plane operations as dynorm's own signed JSON POSTs over
        the client's aiohttp session; False sends everything through botocore.
        """
        sender: Send = _ClientSender(client)
        http = getattr(getattr(client, "_endpoint", None), "http_session", None)
        parts = urlsplit(str(client.meta.endpoint_url))
        # An endpoint behind a path (a gateway's prefix) is left to botocore, which signs the
        # path as it must; the fast path signs and posts to "/".
        if fast_path and parts.path in ("", "/"):
            if http is not None and hasattr(http, "_proxy_config"):
                sender = _FastSender(client, http, sender)
            else:
                # A silent fallback would hide a several-fold slowdown; say it once per client.
                warnings.warn(
                    f"aiobotocore {aiobotocore.__version__} lacks the HTTP session dynorm's fast "
                    "request path sends on, so every request goes through botocore (slower). "
                    "Install an aiobotocore version dynorm supports, or pass "
                    "connect(fast_path=False) to choose this path and silence the warning",
                    RuntimeWarning,
                    stacklevel=3,
                )
        tracing = Tracing(server=parts.hostname, port=parts.port)
        return cls(
            sender,
            tracing=tracing,
            endpoint=str(client.meta.endpoint_url),
            region=client.meta.region_name,
            **options,
        )

    async def send(self, request: Request) -> dict[str, Any]:
        """Send ``request``, retrying as its failures allow; DynormError on failure."""
        async with self._gate:
            span = self._tracing.start(request)
            if span is None:
                return await self._send(request, None)
            with span.scope:
                try:
                    response = await self._send(request, span)
                except BaseException as exc:
                    span.fail(exc)
                    raise
                span.succeed(response)
                return response

    async def _send(self, request: Request, span: Span | None) -> dict[str, Any]:
        token = self._token() if needs_token(request) else ""
        prepared = prepare(request, token)
        mode = request.retry
        lost: DynormError | None = None  # the failure of an attempt that may have been applied
        spent = 0
        attempt = 0
        report = bool(self.listeners) or span is not None
        while True:
            attempt += 1
            # A repeat of a checked write asks for the stored item with a refusal (it is free).
            again = attempt > 1 and (mode == "token" or (mode == "verify" and lost is not None))
            started = time.perf_counter()
            try:
                response = await self._attempt(asking_for_old(prepared) if again else prepared)
            except ConditionFailedError as error:
                if report:
                    self._report(request, attempt, started, span, error=error)
                if not again:
                    raise  # nothing sent before could have been applied: a real refusal
                return await self._settle(prepared, error.item, token, lost or error, span)
            except DynormError as error:
                verdict = classify(error)
                settle = verdict.outcome == "unknown" and mode == "token"
                stop = "" if settle else self._stop(verdict, attempt)
                if report and _was_sent(error):
                    self._report(
                        request, attempt, started, span, error=error, retrying=stop is None
                    )
                if settle:
                    # Sent again, it would apply twice if another write replaced our token in
                    # between; only the stored item can tell, so read it instead.
                    return await self._settle(prepared, None, token, error, span)
                if verdict.outcome == "unknown" and lost is None:
                    lost = error
                if stop is not None:
                    if lost is not None and mode != "safe":
                        raise _unknown(request, attempt, error) from error
                    if attempt > 1 or verdict.retry:
                        error.add_note(f"dynorm gave up after {attempt} attempts{stop}")
                    raise
                spent += verdict.cost
                await self._sleep(backoff(attempt - 1))
                continue
            if report:
                self._report(request, attempt, started, span, response=response)
            if self._quota is not None:
                self._quota.release(spent or NO_RETRY_INCREMENT)
            return response

    def _report(
        self,
        request: Request,
        attempt: int,
        started: float,
        span: Span | None,
        *,
        response: Mapping[str, Any] | None = None,
        error: DynormError | None = None,
        retrying: bool = False,
    ) -> None:
        """Tell the listeners and the span about one attempt that reached the wire.

        A success passes its ``response``; a failure its ``error`` and whether it is retried.
        """
        tables, index = targets_of(request)
        event = RequestEvent(
            operation=request.operation,
            table=tables[0] if len(tables) == 1 else None,
            tables=tables,
            index=index,
            attempt=attempt,
            latency=time.perf_counter() - started,
            consumed_capacity=None if response is None else response.get("ConsumedCapacity"),
            outcome=OK if error is None else outcome_of(error),
            retrying=retrying,
            error=error,
        )
        if span is not None:
            span.attempt(event)
        for listener in list(self.listeners):
            listener(event)

    def _stop(self, verdict: Verdict, attempt: int) -> str | None:
        """None to retry, else why not (a note for the error)."""
        if not verdict.retry:
            return ""
        if attempt >= self._max_attempts:
            return " (connect(max_attempts=...))"
        if self._quota is not None and not self._quota.acquire(verdict.cost):
            return " (the retry quota is spent: too many failures at once; connect(retry_quota=))"
        return None

    async def _settle(
        self,
        prepared: Request,
        stored: Item | None,
        token: str,
        cause: DynormError,
        span: Span | None,
    ) -> dict[str, Any]:
        """Was a checked write applied by one of its attempts? The stored item tells.

        ``stored`` came with a refusal (None: read it). ``cause`` is the failure that made the
        outcome unknown, or the refusal itself when every earlier attempt was surely refused.
        """
        if stored is None:
            # Absent, or not returned (not every server honours ReturnValuesOnCondition...).
            try:
                known = self._key_attributes
                keys: Sequence[str] = (
                    known[prepared.params["TableName"]] if isinstance(known, Mapping) else known
                )
                read = await self._send(verification_read(prepared, keys), span)
            except DynormError as exc:
                raise _unknown(prepared, 0, cause) from exc
            stored = read.get("Item")
        if applied(prepared, stored, token):
            return settled_response(prepared, stored)
        if isinstance(cause, ConditionFailedError):
            raise cause
        raise _unknown(prepared, 0, cause) from cause


def _was_sent(error: DynormError) -> bool:
    """Whether a failed attempt reached the wire.

    A refusal before it (no credentials, botocore's parameter validation) is not an HTTP
    request.
    """
    return isinstance(error, TransportError) or (
        isinstance(error, DatabaseError) and bool(error.code)
    )


def _unknown(request: Request, attempts: int, error: DynormError) -> OutcomeUnknownError:
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    return OutcomeUnknownError(
        f"{request.operation}: the reply to an attempt was lost{tried}, and the write may or may "
        f"not have been applied (last error: {error}). Read the item with consistent=True to "
        "see whether the change is there before repeating it",
        code=getattr(error, "code", ""),
        operation=request.operation,
    )


@contextlib.asynccontextmanager
async def open_client(
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
) -> AsyncIterator[Any]:
    """An aiobotocore DynamoDB client with botocore's retries off (the Transport retries)."""
    session = get_session()
    if profile is not None:
        session.set_config_variable("profile", profile)
    config = AioConfig(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=max_concurrency,
        user_agent=_user_agent(),
    )
    try:
        client_context = session.create_client(
            "dynamodb",
            region_name=region_name,
            endpoint_url=endpoint_url,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            config=config,
        )
        client = await client_context.__aenter__()
    except botocore.exceptions.NoRegionError:
        raise DynormError(
            "no AWS region is configured; pass connect(..., region_name='eu-west-1') or set "
            "AWS_DEFAULT_REGION"
        ) from None
    except botocore.exceptions.BotoCoreError as exc:
        raise DynormError(
            f"cannot create the DynamoDB client: {exc}; check connect()'s profile=, "
            "endpoint_url= and region_name= and the AWS configuration files"
        ) from exc
    try:
        yield client
    finally:
        await client_context.__aexit__(None, None, None)
