"""AWS Signature Version 4 for DynamoDB's JSON POSTs, with everything per client computed once.

Every request dynorm sends on the fast path is a POST to ``/`` with no query string and the
same few headers, so most of the canonical request is constant per client: only the time, the
target, the session token and the body hash vary. The signing key changes once a day (it is
derived from the secret key, the date, the region and the service), so it is cached per
credentials and date instead of being derived with four HMACs per request.

Pure: the caller passes the credentials and the time.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Final

import msgspec

__all__ = ["CONTENT_TYPE", "Signer", "canonical_host"]

CONTENT_TYPE: Final = "application/x-amz-json-1.0"
_ALGORITHM: Final = "AWS4-HMAC-SHA256"
#: Signing keys kept per signer: credentials rotate (refreshable roles) and the date rolls over,
#: so an old key is dropped rather than kept forever.
_KEYS_KEPT: Final = 4


def canonical_host(netloc: str, scheme: str) -> str:
    """The Host header value as signed: the port only when it is not the scheme's default."""
    host, _, port = netloc.rpartition(":") if netloc.count(":") == 1 else (netloc, "", "")
    if not host:  # no port given
        return netloc
    if (scheme, port) in {("http", "80"), ("https", "443")}:
        return host
    return netloc


class Signer(msgspec.Struct):
    """Signs DynamoDB requests to one host in one region; one per client.

    ``headers(...)`` returns every header a request needs (Authorization included) except
    those that do not take part in signing (User-Agent, Accept-Encoding).
    """

    region: str
    host: str
    service: str = "dynamodb"
    #: (secret key, date) -> the day's signing key.
    _keys: dict[tuple[str, str], bytes] = msgspec.field(default_factory=dict)
    _scope_tail: str = ""
    _stamp: tuple[int, str, str] = (-1, "", "")

    def __post_init__(self) -> None:
        self._scope_tail = f"/{self.region}/{self.service}/aws4_request"

    def signing_key(self, secret_key: str, date: str) -> bytes:
        """The day's key for ``secret_key`` (``date`` as YYYYMMDD), derived once and cached."""
        cache_key = (secret_key, date)
        key = self._keys.get(cache_key)
        if key is None:
            key = _hmac(("AWS4" + secret_key).encode(), date)
            for part in (self.region, self.service, "aws4_request"):
                key = _hmac(key, part)
            if len(self._keys) >= _KEYS_KEPT:
                self._keys.clear()
            self._keys[cache_key] = key
        return key

    def _timestamps(self, now: float) -> tuple[str, str]:
        """``(YYYYMMDDTHHMMSSZ, YYYYMMDD)`` for ``now``, formatted once per second."""
        second = int(now)
        stamp = self._stamp
        if stamp[0] != second:
            amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(second))
            stamp = self._stamp = (second, amz_date, amz_date[:8])
        return stamp[1], stamp[2]

    def headers(
        self,
        *,
        access_key: str,
        secret_key: str,
        token: str | None,
        target: str,
        body: bytes,
        now: float,
    ) -> dict[str, str]:
        """The signed headers of a POST of ``body`` with ``X-Amz-Target: target`` at ``now``."""
        amz_date, date = self._timestamps(now)
        # Canonical headers, sorted by lower-case name: content-type, host, x-amz-date,
        # [x-amz-security-token], x-amz-target.
        if token:
            canonical = (
                f"content-type:{CONTENT_TYPE}\nhost:{self.host}\nx-amz-date:{amz_date}\n"
                f"x-amz-security-token:{token}\nx-amz-target:{target}\n"
            )
            signed = "content-type;host;x-amz-date;x-amz-security-token;x-amz-target"
        else:
            canonical = (
                f"content-type:{CONTENT_TYPE}\nhost:{self.host}\nx-amz-date:{amz_date}\n"
                f"x-amz-target:{target}\n"
            )
            signed = "content-type;host;x-amz-date;x-amz-target"
        payload = hashlib.sha256(body).hexdigest()
        request = f"POST\n/\n\n{canonical}\n{signed}\n{payload}"
        scope = date + self._scope_tail
        to_sign = (
            f"{_ALGORITHM}\n{amz_date}\n{scope}\n{hashlib.sha256(request.encode()).hexdigest()}"
        )
        signature = hmac.new(
            self.signing_key(secret_key, date), to_sign.encode(), hashlib.sha256
        ).hexdigest()
        headers = {
            "Content-Type": CONTENT_TYPE,
            "X-Amz-Date": amz_date,
            "X-Amz-Target": target,
            "Authorization": (
                f"{_ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={signed}, "
                f"Signature={signature}"
            ),
        }
        if token:
            headers["X-Amz-Security-Token"] = token
        return headers


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()
