"""What a lean connection is configured with: connect()'s arguments and the environment only.

:func:`_lean_settings` says whether a connection can be lean (dynorm's own HTTP client and
signer, neither aiobotocore nor botocore imported) and with which keys, region, endpoint and
CA bundle: only when aiobotocore's session would resolve exactly the same.
:mod:`dynorm.io.connection` opens the connection, with the lean sender
(:mod:`dynorm.io.senders.lean`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import msgspec

from .settings import check_credentials

__all__ = ["_STANDARD_REGIONS", "_Keys", "_Lean", "_lean_settings"]


class _Keys(msgspec.Struct, frozen=True):
    """Credentials that never change: connect()'s own, or the environment's."""

    access_key: str
    secret_key: str
    token: str | None


#: The regions whose DynamoDB endpoint is ``https://dynamodb.{region}.{suffix}`` (the aws and
#: aws-cn partitions of botocore's endpoint data). Another region (us-gov-, us-iso-, a
#: ``-fips`` pseudo-region, ``local``) takes botocore's endpoint resolution.
_STANDARD_REGIONS: Final = (
    (r"^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$", "amazonaws.com"),
    (r"^cn-\w+-\d+$", "amazonaws.com.cn"),
)


class _Lean(msgspec.Struct, frozen=True):
    """Everything a lean connection needs, read from connect()'s arguments and the environment."""

    region: str
    endpoint: str
    keys: _Keys
    ca_bundle: str | None


#: A region botocore accepts (``validate_region_name``): a host label.
_REGION: Final = r"^(?![0-9]+$)(?!-)[a-zA-Z0-9-]{,63}(?<!-)$"
#: A host name botocore accepts in an endpoint URL (``is_valid_endpoint_url``).
_HOST: Final = r"(?i)^((?!-)[A-Z\d-]{1,63}(?<!-)\.)*((?!-)[A-Z\d-]{1,63}(?<!-))$"


def _lean_settings(
    *,
    endpoint_url: str | None,
    region_name: str | None,
    aws_access_key_id: str | None,
    aws_secret_access_key: str | None,
    aws_session_token: str | None,
    environ: Mapping[str, str],
) -> _Lean | None:
    """The lean connection's settings, or None when only aiobotocore's session can resolve them.

    Lean when nothing but connect()'s arguments and a few environment variables can configure
    the connection, so that aiobotocore's session would resolve exactly this: credentials
    passed to connect(), else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (botocore's chain
    tries them first unless a profile is passed; AWS_SESSION_TOKEN optional, no
    AWS_CREDENTIAL_EXPIRATION); the region passed or AWS_DEFAULT_REGION; the endpoint passed,
    or the standard one of an aws or aws-cn region; no AWS config or shared credentials file
    with anything in it (a profile, ``services``, ``ca_bundle``, FIPS ... could be there), no
    AWS_PROFILE or AWS_DEFAULT_PROFILE, no AWS_ENDPOINT_URL(_DYNAMODB) (unless
    AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), no FIPS or dual-stack, no proxy. Anything else, and
    any configuration botocore would refuse, goes to aiobotocore's session (and its errors).
    """
    if aws_access_key_id is not None and aws_secret_access_key is not None:
        keys = _Keys(aws_access_key_id, aws_secret_access_key, aws_session_token)
    elif aws_access_key_id is not None or aws_secret_access_key is not None:
        return None  # partial: botocore's error
    else:
        access_key = environ.get("AWS_ACCESS_KEY_ID", "")
        secret_key = environ.get("AWS_SECRET_ACCESS_KEY", "")
        if not access_key or not secret_key or environ.get("AWS_CREDENTIAL_EXPIRATION"):
            return None  # another provider of the chain, a partial error, or refreshing ones
        variable = (
            "AWS_SECURITY_TOKEN" if environ.get("AWS_SECURITY_TOKEN") else "AWS_SESSION_TOKEN"
        )
        token = environ.get(variable) or None
        check_credentials(
            access_key,
            token,
            key_setting="the environment variable AWS_ACCESS_KEY_ID",
            session_setting=f"the environment variable {variable}",
        )
        keys = _Keys(access_key, secret_key, token)
    region = region_name or environ.get("AWS_DEFAULT_REGION")
    if not region or not re.match(_REGION, region):
        return None
    if "AWS_DEFAULT_PROFILE" in environ or "AWS_PROFILE" in environ:
        return None  # the profile must exist in the files (ProfileNotFound), even "default"
    for name, default in (
        ("AWS_CONFIG_FILE", "~/.aws/config"),
        ("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/credentials"),
    ):
        path = Path(os.path.expandvars(environ.get(name, default))).expanduser()
        with contextlib.suppress(OSError):
            if path.is_file() and path.stat().st_size > 0:
                return None
    for name in ("AWS_USE_FIPS_ENDPOINT", "AWS_USE_DUALSTACK_ENDPOINT"):
        if environ.get(name, "false").lower() != "false":
            return None
    if endpoint_url:
        endpoint = endpoint_url
    else:
        if environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").lower() != "true" and (
            "AWS_ENDPOINT_URL_DYNAMODB" in environ or "AWS_ENDPOINT_URL" in environ
        ):
            return None
        standard = next(
            (
                f"https://dynamodb.{region}.{suffix}"
                for p, suffix in _STANDARD_REGIONS
                if re.match(p, region)
            ),
            None,
        )
        if standard is None:
            return None
        endpoint = standard
    try:
        parts = urlsplit(endpoint)
        host = parts.hostname or ""
    except ValueError:  # urllib's "Invalid IPv6 URL": botocore's error
        return None
    if (
        parts.scheme not in ("http", "https")
        or parts.path not in ("", "/")
        or not (re.match(_HOST, host.removesuffix(".")) or _ip_address(host))
    ):
        return None  # botocore's checks and errors, or its path-signing request path
    if _proxied(environ):
        return None  # botocore's proxy settings (NO_PROXY, proxy headers, proxy TLS)
    bundle = environ.get("AWS_CA_BUNDLE") or environ.get("REQUESTS_CA_BUNDLE")
    return _Lean(region, endpoint, keys, bundle if bundle and bundle.strip() else None)


def _proxied(environ: Mapping[str, str]) -> bool:
    """Whether a proxy is configured: ``*_proxy`` variables, or (the process's) system settings.

    Elsewhere than on macOS and Windows, urllib's ``getproxies`` reads only those variables.
    """
    if any(
        value and name.lower().endswith("_proxy") and name.lower() != "no_proxy"
        for name, value in environ.items()
    ):
        return True
    if environ is os.environ and sys.platform in ("darwin", "win32"):
        import urllib.request  # noqa: PLC0415 - macOS and Windows only; costly to import

        return any(scheme != "no" for scheme in urllib.request.getproxies())
    return False


def _ip_address(host: str) -> bool:
    import ipaddress  # noqa: PLC0415 - for an endpoint host only; costly at a cold start

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
