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
import platform
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import aiobotocore
import aiohttp
import botocore
import botocore.exceptions
import orjson
from aiobotocore.config import AioConfig
from aiobotocore.parsers import AioResponseParserFactory
from aiobotocore.session import get_session
from botocore import xform_name

from ._batch import Sleep
from ._chunks import backoff
from ._codec import Item
from ._errors import (
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
from ._plans import Request
from ._retry import (
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

__all__ = ["RequestListener", "Send", "Transport", "open_client"]

Send = Callable[[Request], Awaitable[dict[str, Any]]]
RequestListener = Callable[[str], None]

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


#: Outputs that carry items. Their bodies are parsed once with orjson instead of botocore's
#: shape walk, which costs most of the time between an HTTP body and attrs objects; the
#: AttributeValues are then decoded straight into models. Errors and every other operation
#: keep botocore's parser.
_ITEM_OUTPUTS: Final = frozenset(
    {"GetItemOutput", "QueryOutput", "ScanOutput", "BatchGetItemOutput", "TransactGetItemsOutput"}
)


class _ItemResponseParser:
    """botocore's JSON parser, bypassed for successful item-carrying responses."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def parse(self, response: dict[str, Any], shape: Any) -> Any:
        if response["status_code"] < 300 and shape is not None and shape.name in _ITEM_OUTPUTS:
            body = response["body"]
            parsed: dict[str, Any] = orjson.loads(body) if body else {}
            parsed["ResponseMetadata"] = {
                "HTTPStatusCode": response["status_code"],
                "HTTPHeaders": response["headers"],
            }
            return parsed
        return await self._inner.parse(response, shape)


class _FastResponseParserFactory(AioResponseParserFactory):
    """Hands out the bypassing parser for DynamoDB's JSON protocol (one per protocol)."""

    def __init__(self) -> None:
        super().__init__()
        self._parsers: dict[str, Any] = {}

    def create_parser(self, protocol_name: str) -> Any:
        parser = self._parsers.get(protocol_name)
        if parser is None:
            parser = super().create_parser(protocol_name)
            if protocol_name == "json":
                parser = _ItemResponseParser(parser)
            self._parsers[protocol_name] = parser
        return parser


def _translate(exc: botocore.exceptions.ClientError, request: Request) -> DatabaseError:
    error = exc.response.get("Error", {})
    code = str(error.get("Code", ""))
    message = str(error.get("Message", "")) or str(exc)
    if code == "TransactionCanceledException":
        reasons = [
            CancellationReason(i, str(r.get("Code", "None")), str(r.get("Message", "")))
            for i, r in enumerate(exc.response.get("CancellationReasons", []))
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
    cls = _ERRORS.get(code, DatabaseError)
    translated = cls(f"{request.operation}: {message}", code=code, operation=request.operation)
    if isinstance(translated, ConditionFailedError):
        stored = exc.response.get("Item")
        translated.item = stored if isinstance(stored, dict) else None
    return translated


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


def _transport_error(exc: Exception, request: Request, config: Any) -> TransportError:
    """A TransportError whose message says what happened and what to check."""
    endpoint = getattr(exc, "kwargs", {}).get("endpoint_url", "the endpoint")
    operation = request.operation
    if isinstance(exc, botocore.exceptions.BotoCoreError) and _never_connected(exc):
        if isinstance(exc, botocore.exceptions.ConnectTimeoutError):
            what = f"no connection to {endpoint} within connect_timeout={config.connect_timeout}s"
        elif isinstance(exc, botocore.exceptions.ProxyConnectionError):
            what = f"could not connect through the proxy ({exc})"
        else:
            what = f"could not connect to {endpoint} ({exc.kwargs.get('error', exc)})"
        return TransportError(
            f"{operation}: {what}; nothing was sent. Check connect(endpoint_url=...) and "
            "region_name, that the network (proxy, firewall, VPC endpoint) reaches it, and "
            "connect(connect_timeout=...)",
            operation=operation,
            request_sent=False,
        )
    if isinstance(exc, botocore.exceptions.ReadTimeoutError | TimeoutError):
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


class _ClientSender:
    """One attempt of one request through the aiobotocore client, every failure mapped."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.listeners: list[RequestListener] = []
        client.meta.events.register("before-send.dynamodb", self._before_send)

    def _before_send(self, request: Any, **_: Any) -> None:
        # One call per HTTP attempt: what tests count as "requests".
        target = str(request.headers.get("X-Amz-Target", b""), "ascii", "replace")
        operation = target.rsplit(".", 1)[-1].strip("'")
        for listener in list(self.listeners):
            listener(operation)

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
            raise DynormError(
                f"{request.operation}: no usable AWS credentials ({exc}); pass "
                "connect(aws_access_key_id=..., aws_secret_access_key=...) or profile=, or set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            ) from exc
        except (botocore.exceptions.BotoCoreError, aiohttp.ClientError, OSError) as exc:
            raise _transport_error(exc, request, self._client.meta.config) from exc
        return response


class Transport:
    """Sends requests with retries, at most ``max_concurrency`` at a time.

    ``attempt`` sends one request once (one HTTP request) and raises DynormErrors; ``sleep``
    waits between attempts (tests pass a fake); ``key_attributes`` name the table's primary
    key, to read back an item a lost write may have stored.
    """

    def __init__(
        self,
        attempt: Send,
        *,
        key_attributes: Sequence[str],
        max_attempts: int,
        max_concurrency: int,
        sleep: Sleep = asyncio.sleep,
        quota: RetryQuota | None = None,
        token: Callable[[], str] = new_token,
    ) -> None:
        if max_attempts < 1:
            raise LimitExceededError(f"max_attempts must be at least 1; got {max_attempts}")
        self._attempt = attempt
        self._key_attributes = tuple(key_attributes)
        self._max_attempts = max_attempts
        self._gate = asyncio.Semaphore(max_concurrency)
        self._sleep = sleep
        self._quota = quota
        self._token = token
        self.listeners: list[RequestListener] = []

    @classmethod
    def for_client(cls, client: Any, **options: Any) -> Transport:
        """A Transport sending through an aiobotocore DynamoDB client."""
        sender = _ClientSender(client)
        transport = cls(sender, **options)
        sender.listeners = transport.listeners
        return transport

    async def send(self, request: Request) -> dict[str, Any]:
        """Send ``request``, retrying as its failures allow; DynormError on failure."""
        async with self._gate:
            return await self._send(request)

    async def _send(self, request: Request) -> dict[str, Any]:
        token = self._token() if needs_token(request) else ""
        prepared = prepare(request, token)
        mode = request.retry
        lost: DynormError | None = None  # the failure of an attempt that may have been applied
        spent = 0
        attempt = 0
        while True:
            attempt += 1
            # A repeat of a checked write asks for the stored item with a refusal (it is free).
            again = attempt > 1 and (mode == "token" or (mode == "verify" and lost is not None))
            try:
                response = await self._attempt(asking_for_old(prepared) if again else prepared)
            except ConditionFailedError as error:
                if not again:
                    raise  # nothing sent before could have been applied: a real refusal
                return await self._settle(prepared, error.item, token, lost or error)
            except DynormError as error:
                verdict = classify(error)
                if verdict.outcome == "unknown" and mode == "token":
                    # Sent again, it would apply twice if another write replaced our token in
                    # between; only the stored item can tell, so read it instead.
                    return await self._settle(prepared, None, token, error)
                if verdict.outcome == "unknown" and lost is None:
                    lost = error
                stop = self._stop(verdict, attempt)
                if stop is not None:
                    if lost is not None and mode != "safe":
                        raise _unknown(request, attempt, error) from error
                    if attempt > 1 or verdict.retry:
                        error.add_note(f"dynorm gave up after {attempt} attempts{stop}")
                    raise
                spent += verdict.cost
                await self._sleep(backoff(attempt - 1))
                continue
            if self._quota is not None:
                self._quota.release(spent or NO_RETRY_INCREMENT)
            return response

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
        self, prepared: Request, stored: Item | None, token: str, cause: DynormError
    ) -> dict[str, Any]:
        """Was a checked write applied by one of its attempts? The stored item tells.

        ``stored`` came with a refusal (None: read it). ``cause`` is the failure that made the
        outcome unknown, or the refusal itself when every earlier attempt was surely refused.
        """
        if stored is None:
            # Absent, or not returned (not every server honours ReturnValuesOnCondition...).
            try:
                read = await self._send(verification_read(prepared, self._key_attributes))
            except DynormError as exc:
                raise _unknown(prepared, 0, cause) from exc
            stored = read.get("Item")
        if applied(prepared, stored, token):
            return settled_response(prepared, stored)
        if isinstance(cause, ConditionFailedError):
            raise cause
        raise _unknown(prepared, 0, cause) from cause


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
    fast_responses: bool,
) -> AsyncIterator[Any]:
    """An aiobotocore DynamoDB client with botocore's retries off (the Transport retries)."""
    session = get_session()
    if fast_responses:
        session.register_component("response_parser_factory", _FastResponseParserFactory())
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
