"""The options of ``connect()`` that every command which talks to a table takes."""

from __future__ import annotations

import functools
import ipaddress
import math
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import attrs
import click

from dynorm.core.errors import DynormError
from dynorm.core.ratespec import RATE_LIMIT_FORMS, parse_rate_limit
from dynorm.core.throughput import LimiterStats, RateLimit, Stats
from dynorm.io.database import DEFAULT_MAX_ATTEMPTS, Database, connect
from dynorm.mapping.table import Table

from ._output import err

__all__ = [
    "ConnectOptions",
    "EndpointParam",
    "RateLimitParam",
    "RegionParam",
    "Seconds",
    "TableNameParam",
    "connection_options",
    "describe_limits",
    "rate_limit_option",
]

F = TypeVar("F", bound=Callable[..., Any])


@attrs.frozen
class ConnectOptions:
    """``connect()``'s arguments as given on the command line; unset ones follow AWS's config."""

    endpoint_url: str | None = None
    region_name: str | None = None
    profile: str | None = None
    aws_access_key_id: str | None = None
    aws_secret_access_key: str | None = None
    aws_session_token: str | None = None
    table_name: str | None = None
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    max_concurrency: int | None = None
    connect_timeout: float | None = None
    read_timeout: float | None = None
    attempt_timeout: float | None = None
    fast_path: bool = True
    #: ``--rate-limit``, on the commands that move data (see ``rate_limit_option``)
    rate_limit: RateLimit | Literal["adaptive"] | None = None

    def name_of(self, table: Table) -> str:
        """The name of the table the command works on (``--table-name`` or the Table's)."""
        return self.table_name or table.name

    def where(self) -> str:
        """Where requests go, for messages: the endpoint or the AWS configuration's."""
        return self.endpoint_url or "the endpoint of your AWS configuration"

    @asynccontextmanager
    async def open(self, table: Table, *others: Table) -> AsyncIterator[Database]:
        """``connect(table, *others, ...)`` with these options; then what ``--rate-limit`` did.

        ``--table-name`` renames ``table`` alone (the others keep their own names).
        """
        given: dict[str, Any] = {
            k: v
            for k, v in attrs.asdict(self, recurse=False).items()
            if v is not None and k != "fast_path"
        }
        if others:
            renamed = given.pop("table_name", None)
            given["table_names"] = {table: renamed} if renamed is not None else None
        async with connect(table, *others, fast_path=self.fast_path, **given) as db:
            try:
                yield db
            finally:
                limits = describe_limits(db.stats())
                if limits is not None:
                    err.print(limits)


class EndpointParam(click.ParamType):  # type: ignore[type-arg]
    """``--endpoint-url``: an http(s) URL with a host, as botocore accepts it."""

    name = "URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        example = "e.g. http://localhost:8000 or https://dynamodb.eu-west-1.amazonaws.com"
        if not text.strip():
            self.fail(f"the endpoint is empty; give a URL, {example}", param, ctx)
        try:
            parts = urlsplit(text)
            parts.port  # noqa: B018  (raises ValueError for a port that is not a number)
        except ValueError as exc:
            self.fail(f"{text!r} is not a URL ({exc}); {example}", param, ctx)
        if parts.scheme not in {"http", "https"}:
            hint = f"; write http://{text}" if "://" not in text else ""
            self.fail(f"{text!r} is not an http:// or https:// URL{hint} ({example})", param, ctx)
        if not _is_host(parts.hostname or "") or any(c.isspace() for c in text):
            self.fail(f"{text!r} does not name a host; {example}", param, ctx)
        return text


#: A host name as botocore accepts it: dot-separated labels of letters, digits and hyphens.
_HOST = re.compile(r"^((?!-)[A-Z\d-]{1,63}(?<!-)\.)*((?!-)[A-Z\d-]{1,63}(?<!-))\.?$", re.IGNORECASE)


def _is_host(host: str) -> bool:
    if _HOST.match(host) and len(host) <= 255:
        return True
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


#: A region is a host label: eu-west-1 (botocore's check, so that it is refused up front).
_REGION = re.compile(r"^(?![0-9]+$)(?!-)[a-zA-Z0-9-]{1,63}(?<!-)$")


class RegionParam(click.ParamType):  # type: ignore[type-arg]
    """``--region``: a region name such as eu-west-1."""

    name = "REGION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if not _REGION.match(text):
            self.fail(f"{text!r} is not a region name; give one such as eu-west-1", param, ctx)
        return text


#: DynamoDB's table names: 3 to 255 of letters, digits, _ - and .
_TABLE_NAME = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")


class TableNameParam(click.ParamType):  # type: ignore[type-arg]
    """``--table-name``: a name DynamoDB accepts for a table."""

    name = "NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value)
        if not _TABLE_NAME.match(text):
            shown = text if len(text) <= 40 else f"{text[:40]}…"
            self.fail(
                f"{shown!r} ({len(text)} characters) is not a DynamoDB table name: "
                "3 to 255 letters, digits, '_', '-' or '.'",
                param,
                ctx,
            )
        return text


class RateLimitParam(click.ParamType):  # type: ignore[type-arg]
    """``--rate-limit``: ``connect(rate_limit=...)`` as text (see dynorm.core.ratespec)."""

    name = "RATE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, RateLimit) or value == "adaptive":
            return value
        try:
            return parse_rate_limit(str(value))
        except DynormError as exc:
            self.fail(str(exc), param, ctx)


def rate_limit_option(command: F) -> F:
    """``--rate-limit`` for a command that moves data; put it above ``@connection_options``."""
    option = click.option(
        "--rate-limit",
        type=RateLimitParam(),
        help=f"Client-side throughput, as connect(rate_limit=...): {RATE_LIMIT_FORMS} "
        "(capacity units a second; default: no limit).",
    )
    return option(command)


def describe_limits(stats: Stats) -> str | None:
    """What ``--rate-limit`` did, one line (None: no limit was given)."""
    parts = [
        _describe_bucket(kind, bucket)
        for kind, bucket in (("reads", stats.read), ("writes", stats.write))
        if bucket is not None
    ]
    return f"Rate limit: {'; '.join(parts)}" if parts else None


def _describe_bucket(kind: str, bucket: LimiterStats) -> str:
    rate = "unlimited now" if bucket.rate is None else f"{bucket.rate:g} units/s now"
    cuts = f", cut {bucket.cuts} times by throttling" if bucket.cuts else ""
    return f"{kind} {rate}{cuts}, {bucket.waits} requests waited {bucket.waited:.1f}s in all"


class Seconds(click.FloatRange):
    """A number of seconds, 0 or more (more than 0 when ``positive``); not nan."""

    name = "SECONDS"

    def __init__(self, *, positive: bool = False) -> None:
        super().__init__(min=0, min_open=positive)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if math.isnan(seconds):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return seconds


_OPTIONS: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "--endpoint-url",
        type=EndpointParam(),
        envvar="DYNORM_ENDPOINT_URL",
        help="DynamoDB endpoint, e.g. http://localhost:8000 (env: DYNORM_ENDPOINT_URL; "
        "default: AWS's, from your configuration).",
    ),
    click.option(
        "--region",
        "region_name",
        type=RegionParam(),
        help="AWS region (default: your configuration's).",
    ),
    click.option("--profile", help="AWS profile of your shared configuration files."),
    click.option("--aws-access-key-id", help="Access key id (default: your configuration's)."),
    click.option("--aws-secret-access-key", help="Secret access key."),
    click.option("--aws-session-token", help="Session token of temporary credentials."),
    click.option(
        "--table-name",
        "--table",
        "table_name",
        type=TableNameParam(),
        help="Work on this table instead of the name the Table (or file) gives.",
    ),
    click.option(
        "--max-attempts",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_ATTEMPTS,
        show_default=True,
        help="Tries per request when throttled, failed on the server or cut off.",
    ),
    click.option(
        "--max-concurrency", type=click.IntRange(min=1), help="Requests in flight at most."
    ),
    click.option("--connect-timeout", type=Seconds(), help="Seconds to connect."),
    click.option("--read-timeout", type=Seconds(), help="Seconds to wait for a reply."),
    click.option(
        "--attempt-timeout",
        type=Seconds(positive=True),
        help="Seconds one attempt may take in all, however slowly a reply comes.",
    ),
    click.option(
        "--fast-path/--no-fast-path",
        default=True,
        show_default=True,
        envvar="DYNORM_FAST_PATH",
        help="dynorm's own request path, or botocore's (env: DYNORM_FAST_PATH=0|1).",
    ),
]


def connection_options(command: F) -> F:
    """Add ``connect()``'s options to a command; it receives them as ``connection``."""
    names = [f.name for f in attrs.fields(ConnectOptions)]

    def gather(**kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in names if name in kwargs}
        return command(connection=ConnectOptions(**given), **kwargs)

    # update_wrapper also carries over the options declared below this decorator.
    wrapped = functools.update_wrapper(gather, command)
    for option in reversed(_OPTIONS):
        wrapped = option(wrapped)
    return wrapped  # type: ignore[return-value]
