"""dynorm's own request and reply: the signed JSON POST that the lean and aio senders carry.

Per connection, once: the signer, the constant headers. Per request: the body, the signature,
and, from the reply, the checksum check and the parse. What goes wrong is said as the
:mod:`dynorm.io.senders.base` failures; the senders post the bytes (their HTTP pools,
timeouts, TLS and proxy settings, as a botocore client would have them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from dynorm.core.requests import Request
from dynorm.io.settings import check_credentials
from dynorm.wire.protocol import (
    CONTROL_PLANE,
    clock_offset,
    crc32_matches,
    encode_body,
    is_clock_skew,
    parse_error,
    target_of,
    with_datetimes,
)
from dynorm.wire.sigv4 import Signer, canonical_host

from .base import ParamsError, ReplyError, WireError, user_agent

__all__ = ["SignedJSON"]

#: Where credentials that came through aiobotocore's chain were set, for ConfigurationErrors.
_CHAIN_ACCESS: Final = "connect(aws_access_key_id=...), AWS_ACCESS_KEY_ID or the profile"
_CHAIN_SESSION: Final = (
    "connect(aws_session_token=...), AWS_SESSION_TOKEN or the profile's aws_session_token"
)


class SignedJSON:
    """The signed JSON requests to ``endpoint`` (signed for ``region``) and their replies."""

    def __init__(self, *, endpoint: str, region: str) -> None:
        self.endpoint = endpoint
        parts = urlsplit(endpoint)
        self._signer = Signer(region=region, host=canonical_host(parts.netloc, parts.scheme))
        self._constant_headers = {"User-Agent": user_agent(), "Accept-Encoding": "identity"}
        #: Seconds to add to this machine's clock (set from a server's Date after a skew error).
        self.clock_offset = 0.0
        self._checked: object = None  # the last credentials found fit to send

    def body(self, request: Request) -> bytes:
        """The request's JSON body; a ParamsError for a value JSON cannot carry."""
        try:
            return encode_body(request.params)
        except TypeError as exc:
            raise ParamsError(
                f"{exc} in the request's parameters; pass AttributeValues "
                "(strings, numbers as strings, bytes, lists, dicts)",
                exc,
            ) from exc

    def headers(self, operation: str, body: bytes, credentials: Any) -> dict[str, str]:
        """The signed headers of ``body``, with the frozen ``credentials``.

        ``credentials`` has ``access_key``, ``secret_key`` and ``token``; ones not seen before
        are checked first (a chain's credentials may come from anywhere).
        """
        if credentials is not self._checked:
            check_credentials(
                credentials.access_key,
                credentials.token,
                key_setting=_CHAIN_ACCESS,
                session_setting=_CHAIN_SESSION,
            )
            self._checked = credentials
        headers = self._signer.headers(
            access_key=credentials.access_key,
            secret_key=credentials.secret_key,
            token=credentials.token,
            target=target_of(operation),
            body=body,
            now=time.time() + self.clock_offset,
        )
        headers.update(self._constant_headers)
        return headers

    def reply(
        self, request: Request, status: int, headers: Mapping[str, str], payload: bytes
    ) -> dict[str, Any]:
        """The parsed reply (``headers`` looked up by lower-case name), or its failure."""
        if not crc32_matches(payload, headers.get("x-amz-crc32")):
            raise WireError("damaged", self.endpoint)
        if status < 300:
            if not payload:
                return {}
            # A read names its own parser (typed structures per table; see dynorm.wire.structs),
            # which falls back to orjson by itself when a body does not fit.
            try:
                parsed: dict[str, Any] = (request.parse or orjson.loads)(payload)
            except ValueError as exc:  # orjson.JSONDecodeError: an HTML page from a proxy, say
                raise WireError("not_json", self.endpoint, exc, cause=exc, status=status) from exc
            return with_datetimes(parsed) if request.operation in CONTROL_PLANE else parsed
        error = parse_error(status, payload, headers.get("x-amzn-errortype"))
        if is_clock_skew(error.code, error.message):
            offset = clock_offset(headers.get("date"), time.time())
            if offset is not None:
                self.clock_offset = offset
        raise ReplyError(error.code, error.message, error.body, self.endpoint)
