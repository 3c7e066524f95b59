"""The options of ``connect()`` that every command which talks to a table takes."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import attrs
import click

from dynorm.io.database import DEFAULT_MAX_ATTEMPTS, Database, connect
from dynorm.mapping.table import Table

__all__ = ["ConnectOptions", "connection_options"]

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
    fast_path: bool = True

    def name_of(self, table: Table) -> str:
        """The name of the table the command works on (``--table-name`` or the Table's)."""
        return self.table_name or table.name

    def where(self) -> str:
        """Where requests go, for messages: the endpoint or the AWS configuration's."""
        return self.endpoint_url or "the endpoint of your AWS configuration"

    @asynccontextmanager
    async def open(self, table: Table) -> AsyncIterator[Database]:
        """``connect(table, ...)`` with these options."""
        given: dict[str, Any] = {
            k: v for k, v in attrs.asdict(self).items() if v is not None and k != "fast_path"
        }
        async with connect(table, fast_path=self.fast_path, **given) as db:
            yield db


_OPTIONS: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
    click.option(
        "--endpoint-url",
        envvar="DYNORM_ENDPOINT_URL",
        help="DynamoDB endpoint, e.g. http://localhost:8000 (env: DYNORM_ENDPOINT_URL; "
        "default: AWS's, from your configuration).",
    ),
    click.option("--region", "region_name", help="AWS region (default: your configuration's)."),
    click.option("--profile", help="AWS profile of your shared configuration files."),
    click.option("--aws-access-key-id", help="Access key id (default: your configuration's)."),
    click.option("--aws-secret-access-key", help="Secret access key."),
    click.option("--aws-session-token", help="Session token of temporary credentials."),
    click.option(
        "--table-name",
        "--table",
        "table_name",
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
    click.option("--connect-timeout", type=click.FloatRange(min=0), help="Seconds to connect."),
    click.option(
        "--read-timeout", type=click.FloatRange(min=0), help="Seconds to wait for a reply."
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
