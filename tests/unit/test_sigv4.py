"""dynorm's SigV4 signer gives botocore's signature, and derives each day's key once."""

from __future__ import annotations

import datetime

import botocore.auth  # noqa: TID251 - the reference the signer is checked against
import pytest
from botocore.auth import SigV4Auth  # noqa: TID251 - the reference the signer is checked against
from botocore.awsrequest import AWSRequest  # noqa: TID251
from botocore.credentials import Credentials  # noqa: TID251

from dynorm.wire.sigv4 import CONTENT_TYPE, Signer, canonical_host

NOW = datetime.datetime(2024, 5, 17, 13, 45, 7, tzinfo=datetime.UTC)
BODY = b'{"TableName":"app","Key":{"pk":{"S":"ORG#1"},"sk":{"S":"ORG#1"}}}'
TARGET = "DynamoDB_20120810.GetItem"


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's signer reads the time from its own helper: pin it for the reference."""
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: NOW.replace(tzinfo=None))


def botocore_authorization(url: str, token: str | None, body: bytes = BODY) -> str:
    request = AWSRequest(
        method="POST",
        url=url,
        data=body,
        headers={"Content-Type": CONTENT_TYPE, "X-Amz-Target": TARGET},
    )
    auth = SigV4Auth(
        Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", token), "dynamodb", "eu-west-1"
    )
    auth.add_auth(request)
    return str(request.headers["Authorization"])


@pytest.mark.parametrize("token", [None, "FQoGZXIvYXdzEJr//////////wEaDOKEN"])
@pytest.mark.parametrize(
    ("url", "netloc", "scheme"),
    [
        ("https://dynamodb.eu-west-1.amazonaws.com/", "dynamodb.eu-west-1.amazonaws.com", "https"),
        ("http://127.0.0.1:8000/", "127.0.0.1:8000", "http"),
        ("https://localhost:443/", "localhost:443", "https"),
    ],
)
def test_same_authorization_as_botocore(
    token: str | None, url: str, netloc: str, scheme: str
) -> None:
    signer = Signer(region="eu-west-1", host=canonical_host(netloc, scheme))
    headers = signer.headers(
        access_key="AKIDEXAMPLE",
        secret_key="wJalrXUtnFEMI/K7MDENG",
        token=token,
        target=TARGET,
        body=BODY,
        now=NOW.timestamp(),
    )
    assert headers["Authorization"] == botocore_authorization(url, token)
    assert headers["X-Amz-Date"] == "20240517T134507Z"
    assert headers.get("X-Amz-Security-Token") == token
    assert headers["X-Amz-Target"] == TARGET


def test_an_empty_body_signs_like_botocore() -> None:
    signer = Signer(region="eu-west-1", host="dynamodb.eu-west-1.amazonaws.com")
    headers = signer.headers(
        access_key="AKIDEXAMPLE",
        secret_key="wJalrXUtnFEMI/K7MDENG",
        token=None,
        target=TARGET,
        body=b"{}",
        now=NOW.timestamp(),
    )
    expected = botocore_authorization("https://dynamodb.eu-west-1.amazonaws.com/", None, b"{}")
    assert headers["Authorization"] == expected


def test_the_signing_key_is_derived_once_per_secret_and_day() -> None:
    signer = Signer(region="eu-west-1", host="h")
    first = signer.signing_key("secret", "20240517")
    assert signer.signing_key("secret", "20240517") is first
    assert signer.signing_key("secret", "20240518") != first
    assert signer.signing_key("rotated", "20240517") != first
    assert signer.signing_key("secret", "20240517") is first


def test_the_key_cache_stays_small_as_credentials_rotate() -> None:
    signer = Signer(region="eu-west-1", host="h")
    for n in range(100):
        signer.signing_key(f"secret-{n}", "20240517")
    assert len(signer._keys) <= 4


def test_the_time_moves_the_signature() -> None:
    signer = Signer(region="eu-west-1", host="h")
    sign = {
        "access_key": "a",
        "secret_key": "s",
        "token": None,
        "target": TARGET,
        "body": BODY,
    }
    one = signer.headers(now=NOW.timestamp(), **sign)  # type: ignore[arg-type]
    same_second = signer.headers(now=NOW.timestamp() + 0.5, **sign)  # type: ignore[arg-type]
    later = signer.headers(now=NOW.timestamp() + 1, **sign)  # type: ignore[arg-type]
    assert one == same_second
    assert later["X-Amz-Date"] == "20240517T134508Z"
    assert later["Authorization"] != one["Authorization"]


@pytest.mark.parametrize(
    ("netloc", "scheme", "host"),
    [
        ("example.com", "https", "example.com"),
        ("example.com:443", "https", "example.com"),
        ("example.com:80", "http", "example.com"),
        ("example.com:8443", "https", "example.com:8443"),
        ("example.com:443", "http", "example.com:443"),
    ],
)
def test_canonical_host_drops_only_default_ports(netloc: str, scheme: str, host: str) -> None:
    assert canonical_host(netloc, scheme) == host
