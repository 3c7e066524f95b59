"""The sender interface: one attempt of one request, and the failures an adapter reports.

A :class:`Sender` sends a request once and returns its parsed reply; that is the whole
interface (as httpx's ``AsyncBaseTransport.handle_async_request`` is). An adapter says what
went wrong in the plain terms below (:class:`SendError` and its subclasses), never as a
DynormError: which error a failure becomes, its message, and whether the request may have
been sent (``request_sent``) are decided once, above the adapters, by
:class:`dynorm.io.senders.attempt.Attempt`.
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol

import msgspec

from dynorm.core.requests import Request
from dynorm.core.versions import installed_version

__all__ = [
    "ClosedError",
    "CredentialsError",
    "Failure",
    "ParamsError",
    "ReplyError",
    "Send",
    "SendError",
    "Sender",
    "TLSSetupError",
    "Timeouts",
    "WireError",
    "user_agent",
]


#: One attempt of one request (one HTTP request), failures raised as DynormErrors: what the
#: Transport retries around (:class:`~dynorm.io.senders.attempt.Attempt` for a connection).
Send = Callable[[Request], Awaitable[dict[str, Any]]]


class Sender(Protocol):
    """One way of sending: dynorm's HTTP client, aiobotocore's HTTP session, a botocore client."""

    async def send(self, request: Request) -> dict[str, Any]:
        """Sends ``request`` once (one HTTP request): its parsed reply.

        Raises a :class:`SendError` for a failure (and nothing else but CancelledError and the
        DynormErrors of settings checked before sending).
        """
        ...

    async def aclose(self) -> None:
        """Releases what the sender holds; a request sent after is a :class:`ClosedError`."""
        ...


class Timeouts(msgspec.Struct, frozen=True):
    """The timeouts a connection was opened with (what a TransportError's message names).

    ``attempt_timeout`` bounds one attempt's whole exchange, however the server trickles it.
    """

    connect_timeout: float
    read_timeout: float
    attempt_timeout: float


#: What went wrong on the wire. Before anything was sent: ``connect_timeout``, ``proxy``,
#: ``refused`` (refused, unreachable, TLS handshake, unknown host), ``unsent_deadline``. After
#: the request went out (it may have been applied): ``read_timeout``, ``broken`` (reset,
#: closed, truncated), ``deadline``, ``damaged`` (the checksum does not match), ``not_json``.
Failure = Literal[
    "connect_timeout",
    "proxy",
    "refused",
    "unsent_deadline",
    "read_timeout",
    "broken",
    "deadline",
    "damaged",
    "not_json",
]


class SendError(Exception):
    """A failed attempt, as an adapter reports it. ``cause``: what the DynormError chains from."""

    def __init__(self, cause: BaseException | None = None) -> None:
        super().__init__()
        self.cause = cause


class ReplyError(SendError):
    """The server answered with an error: its code, message and whole body (reasons, item)."""

    def __init__(
        self,
        code: str,
        message: str,
        body: Mapping[str, Any],
        endpoint: str,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(cause)
        self.code = code
        self.message = message
        self.body = body
        self.endpoint = endpoint


class WireError(SendError):
    """A failure on the wire (``kind``) talking to ``endpoint``.

    ``error`` is shown in the message; ``detail`` says why a connection failed (default:
    ``error``); ``status`` is the reply's HTTP status (``not_json``).
    """

    def __init__(
        self,
        kind: Failure,
        endpoint: str,
        error: BaseException | None = None,
        *,
        cause: BaseException | None = None,
        detail: object = None,
        status: int = 0,
    ) -> None:
        super().__init__(cause)
        self.kind: Failure = kind
        self.endpoint = endpoint
        self.error = error
        self.detail = error if detail is None else detail
        self.status = status


class ParamsError(SendError):
    """The request's parameters cannot be sent (``said`` says why); nothing was sent."""

    def __init__(self, said: str, cause: BaseException | None = None) -> None:
        super().__init__(cause)
        self.said = said


class CredentialsError(SendError):
    """No usable credentials (``said`` says why); nothing was sent."""

    def __init__(self, said: object, cause: BaseException | None = None) -> None:
        super().__init__(cause)
        self.said = said


class TLSSetupError(SendError):
    """TLS cannot be set up for ``endpoint`` (its CA bundle cannot be read); nothing was sent."""

    def __init__(self, endpoint: str, cause: OSError) -> None:
        super().__init__(cause)
        self.endpoint = endpoint
        self.error = cause


class ClosedError(SendError):
    """The connection was closed (connect()'s block ended). ``named``: say the operation."""

    def __init__(self, *, named: bool = True) -> None:
        super().__init__()
        self.named = named


@functools.cache
def user_agent() -> str:
    """The User-Agent every sender's requests carry, fixed for the life of the process.

    Without one, botocore rebuilds its own from a dozen components for every request, which
    costs about a seventh of a GetItem's client CPU. Giving it a fixed string (a documented
    ``Config`` option) skips that and still names every layer. The versions come from the
    installed distributions' metadata: reading them imports neither aiobotocore nor botocore.
    """
    return (
        f"dynorm/{installed_version('dynorm')} aiobotocore/{installed_version('aiobotocore')} "
        f"botocore/{installed_version('botocore')} Python/{platform.python_version()} "
        f"{platform.system()}/{platform.release()}"
    )
