"""OpenTelemetry spans for the requests dynorm sends, when ``opentelemetry-api`` is installed.

One CLIENT span per request dynorm sends (``db.get`` sends one GetItem: one span), covering
all its attempts, which are recorded as span events (``dynorm.attempt``). This is how the AWS
SDK instrumentations draw an API call, and an HTTP instrumentation below (aiohttp's) adds one
span per attempt under it where wanted. Attributes follow the database semantic conventions
(``db.system.name="aws.dynamodb"``, ``db.operation.name``, ``server.address`` ...) and the AWS
DynamoDB ones (``aws.dynamodb.table_names``, ``aws.dynamodb.index_name``,
``aws.dynamodb.consumed_capacity`` ...); the legacy ``db.system="dynamodb"`` is set too, for
backends that still group by it.

Without a configured tracer provider (the API's default no-op/proxy provider), nothing is
created: one global lookup per request.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

import msgspec
import orjson

from dynorm.core.errors import DatabaseError
from dynorm.core.events import RequestEvent, targets_of
from dynorm.core.requests import Request
from dynorm.core.versions import installed_version

if TYPE_CHECKING:
    from opentelemetry.trace import Span as OtelSpan
    from opentelemetry.trace import Tracer

#: A tracer provider named in the environment, which opentelemetry builds on first use.
_PROVIDER_FROM_ENV: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ


def _opentelemetry() -> ModuleType | None:
    """``opentelemetry.trace`` when a tracer provider may be configured, else None.

    A provider is set by code that imported ``opentelemetry.trace`` (or named in
    OTEL_PYTHON_TRACER_PROVIDER); until then dynorm does not import it either, as it costs
    milliseconds of every cold start. Looked up per request: tracing set up after connect()
    is seen.
    """
    trace = sys.modules.get("opentelemetry.trace")
    if trace is not None or not _PROVIDER_FROM_ENV:
        return trace
    try:
        from opentelemetry import trace  # noqa: PLC0415
    except ImportError:  # the optional extra is not installed
        return None
    return trace


def _trace() -> Any:
    """``opentelemetry.trace``, once a span exists (so it is imported)."""
    return sys.modules["opentelemetry.trace"]


__all__ = ["Span", "Tracing"]

_SCOPE: Final = "dynorm"
#: Request parameters recorded as aws.dynamodb.* attributes, by their semantic-convention name.
_PARAMETERS: Final = {
    "ConsistentRead": "aws.dynamodb.consistent_read",
    "Limit": "aws.dynamodb.limit",
    "ScanIndexForward": "aws.dynamodb.scan_forward",
    "Segment": "aws.dynamodb.segment",
    "TotalSegments": "aws.dynamodb.total_segments",
    "Select": "aws.dynamodb.select",
    "ProjectionExpression": "aws.dynamodb.projection",
}


class Tracing(msgspec.Struct):
    """Starts spans for one Database's requests; ``server``/``port`` name its endpoint."""

    server: str | None = None
    port: int | None = None
    # The provider the tracer was taken from, and that tracer (None: spans are not recorded).
    _provider: object = None
    _tracer: Tracer | None = None

    def _current(self) -> Tracer | None:
        trace = _opentelemetry()
        if trace is None:
            return None
        provider = trace.get_tracer_provider()
        if provider is not self._provider:
            self._provider = provider
            noop = isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)
            self._tracer = (
                None if noop else provider.get_tracer(_SCOPE, installed_version("dynorm"))
            )
        return self._tracer

    def start(self, request: Request) -> Span | None:
        """A span for ``request``, or None when no tracer provider is configured."""
        tracer = self._current()
        if tracer is None:
            return None
        tables, index = targets_of(request)
        operation = request.operation
        attributes: dict[str, Any] = {
            "db.system.name": "aws.dynamodb",
            "db.system": "dynamodb",
            "db.operation.name": operation,
            "rpc.system": "aws-api",
            "rpc.service": "DynamoDB",
            "rpc.method": operation,
        }
        if tables:
            attributes["aws.dynamodb.table_names"] = list(tables)
        if index is not None:
            attributes["aws.dynamodb.index_name"] = index
        params = request.params
        for name, attribute in _PARAMETERS.items():
            value = params.get(name)
            if value is not None:
                attributes[attribute] = value
        if self.server is not None:
            attributes["server.address"] = self.server
        if self.port is not None:
            attributes["server.port"] = self.port
        name = f"{operation} {tables[0]}" if len(tables) == 1 else operation
        kind = _trace().SpanKind.CLIENT
        return Span(tracer.start_span(name, kind=kind, attributes=attributes))


class Span(msgspec.Struct):
    """One request's span: attempts become events; ``succeed``/``fail`` end it."""

    span: OtelSpan

    @property
    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """The span made current (so spans of the HTTP layer nest under it), not ended."""
        with _trace().use_span(
            self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        ):
            yield

    def attempt(self, event: RequestEvent) -> None:
        """Record one attempt.

        A throttled attempt's partition key values go on its event and on the span
        (``dynorm.throttled_partition_keys``), so a hot partition shows in the trace.
        """
        attributes: dict[str, Any] = {
            "dynorm.attempt": event.attempt,
            "dynorm.outcome": event.outcome,
            "dynorm.latency": event.latency,
            "dynorm.retrying": event.retrying,
        }
        if event.partition_keys:
            keys = list(event.partition_keys)
            attributes["dynorm.partition_keys"] = keys
            self.span.set_attribute("dynorm.throttled_partition_keys", keys)
        self.span.add_event("dynorm.attempt", attributes)

    def succeed(self, response: Mapping[str, Any]) -> None:
        """End the span of a request that succeeded with ``response``."""
        span = self.span
        consumed = response.get("ConsumedCapacity")
        if consumed is not None:
            each = consumed if isinstance(consumed, list) else [consumed]
            span.set_attribute(
                "aws.dynamodb.consumed_capacity", [orjson.dumps(c).decode() for c in each]
            )
        for field, attribute in (
            ("Count", "aws.dynamodb.count"),
            ("ScannedCount", "aws.dynamodb.scanned_count"),
        ):
            value = response.get(field)
            if value is not None:
                span.set_attribute(attribute, value)
        span.end()

    def fail(self, error: BaseException) -> None:
        """End the span of a request that failed with ``error``."""
        span = self.span
        span.set_attribute("error.type", _error_type(error))
        span.record_exception(error)
        trace = _trace()
        span.set_status(trace.Status(trace.StatusCode.ERROR, str(error)))
        span.end()


def _error_type(error: BaseException) -> str:
    """DynamoDB's error code where it gave one, else the exception's qualified class name."""
    if isinstance(error, DatabaseError) and error.code:
        return error.code
    kind = type(error)
    module = "dynorm" if kind.__module__.startswith("dynorm") else kind.__module__
    return f"{module}.{kind.__qualname__}"
