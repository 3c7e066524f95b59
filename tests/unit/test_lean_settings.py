"""Which configurations open a lean connection (no aiobotocore session), and with what.

``_lean_settings`` reads connect()'s arguments and an environment; None sends the connection
to aiobotocore's session, which resolves (or refuses) what only it knows.
"""

from __future__ import annotations

import importlib.metadata
import ssl
from pathlib import Path
from typing import Any

import pytest

import dynorm
from dynorm.core.versions import installed_version as _version
from dynorm.io.lean import _Keys, _Lean, _lean_settings
from dynorm.io.senders.lean import _ssl_context

ENV_KEYS = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env-secret"}


@pytest.fixture
def no_files(tmp_path: Path) -> dict[str, str]:
    """An environment whose AWS configuration files do not exist."""
    return {
        "AWS_CONFIG_FILE": str(tmp_path / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "credentials"),
    }


def lean(environ: dict[str, str], **options: Any) -> _Lean | None:
    arguments: dict[str, Any] = {
        "endpoint_url": None,
        "region_name": None,
        "aws_access_key_id": None,
        "aws_secret_access_key": None,
        "aws_session_token": None,
    }
    return _lean_settings(**{**arguments, **options}, environ=environ)


def test_a_lambda_environment_is_lean(no_files: dict[str, str]) -> None:
    env = {
        **no_files,
        **ENV_KEYS,
        "AWS_SESSION_TOKEN": "tok",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
    }
    assert lean(env) == _Lean(
        "eu-west-1",
        "https://dynamodb.eu-west-1.amazonaws.com",
        _Keys("AKIDENV", "env-secret", "tok"),
        None,
    )


def test_connects_own_credentials_region_and_endpoint_win(no_files: dict[str, str]) -> None:
    env = {**no_files, **ENV_KEYS, "AWS_SESSION_TOKEN": "tok", "AWS_DEFAULT_REGION": "eu-west-1"}
    settings = lean(
        env,
        endpoint_url="http://127.0.0.1:8000",
        region_name="cn-north-1",
        aws_access_key_id="AKIDARG",
        aws_secret_access_key="arg-secret",
    )
    assert settings == _Lean(
        "cn-north-1", "http://127.0.0.1:8000", _Keys("AKIDARG", "arg-secret", None), None
    )
    assert lean({**no_files, **ENV_KEYS}, region_name="cn-north-1") == _Lean(
        "cn-north-1",
        "https://dynamodb.cn-north-1.amazonaws.com.cn",
        _Keys("AKIDENV", "env-secret", None),
        None,
    )


def test_the_security_token_variable_comes_before_the_session_token(
    no_files: dict[str, str],
) -> None:
    env = {**no_files, **ENV_KEYS, "AWS_SECURITY_TOKEN": "old", "AWS_SESSION_TOKEN": "new"}
    settings = lean(env, region_name="eu-west-1")
    assert settings is not None
    assert settings.keys.token == "old"  # botocore's EnvProvider order


def test_a_ca_bundle_from_the_environment_is_kept(no_files: dict[str, str]) -> None:
    env = {**no_files, **ENV_KEYS, "AWS_CA_BUNDLE": "/etc/ca.pem", "REQUESTS_CA_BUNDLE": "/x"}
    settings = lean(env, region_name="eu-west-1")
    assert settings is not None
    assert settings.ca_bundle == "/etc/ca.pem"
    settings = lean({**no_files, **ENV_KEYS, "REQUESTS_CA_BUNDLE": "/x"}, region_name="eu-west-1")
    assert settings is not None
    assert settings.ca_bundle == "/x"


@pytest.mark.parametrize(
    ("variables", "options"),
    [
        ({}, {}),  # no credentials: the chain's other providers (container, instance, SSO ...)
        ({"AWS_ACCESS_KEY_ID": "AKIDENV"}, {"region_name": "eu-west-1"}),  # partial: its error
        ({**ENV_KEYS, "AWS_CREDENTIAL_EXPIRATION": "2030-01-01T00:00:00Z"}, {}),  # refreshing
        (ENV_KEYS, {"aws_access_key_id": "only-the-id"}),  # partial arguments: botocore's error
        (ENV_KEYS, {"region_name": None}),  # the region from the files, or botocore's error
        (ENV_KEYS, {"region_name": "not a region"}),  # botocore's error
        ({**ENV_KEYS, "AWS_PROFILE": "default"}, {}),  # a profile must exist in the files
        ({**ENV_KEYS, "AWS_DEFAULT_PROFILE": "x"}, {}),
        ({**ENV_KEYS, "AWS_ENDPOINT_URL": "http://h:1"}, {}),  # configured endpoints
        ({**ENV_KEYS, "AWS_ENDPOINT_URL_DYNAMODB": "http://h:1"}, {}),
        ({**ENV_KEYS, "AWS_USE_FIPS_ENDPOINT": "true"}, {}),
        ({**ENV_KEYS, "AWS_USE_DUALSTACK_ENDPOINT": "TRUE"}, {}),
        ({**ENV_KEYS, "HTTPS_PROXY": "http://proxy:3128"}, {}),  # botocore's proxy settings
        (ENV_KEYS, {"region_name": "us-gov-west-1"}),  # another partition
        (ENV_KEYS, {"endpoint_url": "http://h:1/dynamodb"}),  # a path: botocore signs it
        (ENV_KEYS, {"endpoint_url": "http://[::1"}),  # botocore's "Invalid endpoint"
        (ENV_KEYS, {"endpoint_url": "localhost:8000"}),
    ],
)
def test_what_only_aiobotocores_session_resolves(
    no_files: dict[str, str], variables: dict[str, str], options: dict[str, Any]
) -> None:
    options = {"region_name": "eu-west-1", **options}
    assert lean({**no_files, **variables}, **options) is None


def test_configured_endpoints_are_ignored_when_the_environment_says_so(
    no_files: dict[str, str],
) -> None:
    env = {
        **no_files,
        **ENV_KEYS,
        "AWS_ENDPOINT_URL_DYNAMODB": "http://h:1",
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "True",
        "AWS_USE_FIPS_ENDPOINT": "false",
    }
    settings = lean(env, region_name="eu-west-1")
    assert settings is not None
    assert settings.endpoint == "https://dynamodb.eu-west-1.amazonaws.com"


@pytest.mark.parametrize("name", ["AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"])
def test_a_configuration_file_with_anything_in_it_takes_aiobotocores_session(
    no_files: dict[str, str], name: str
) -> None:
    Path(no_files[name]).write_text("")  # empty: it can configure nothing
    assert lean({**no_files, **ENV_KEYS}, region_name="eu-west-1") is not None
    Path(no_files[name]).write_text("[default]\nregion = eu-west-1\n")
    assert lean({**no_files, **ENV_KEYS}, region_name="eu-west-1") is None


def test_the_default_files_in_the_home_folder_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # what ~ expands to
    env = dict(ENV_KEYS)
    assert lean(env, region_name="eu-west-1") is not None
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\n")
    assert lean(env, region_name="eu-west-1") is None


def test_tls_is_verified_as_botocore_verifies_it() -> None:
    context = _ssl_context(None)  # certifi's bundle
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.options & ssl.OP_NO_COMPRESSION
    assert context.cert_store_stats()["x509_ca"] > 0


@pytest.mark.parametrize("distribution", ["dynorm", "aiobotocore", "botocore", "aiohttp"])
def test_the_user_agents_versions_are_importlib_metadatas(distribution: str) -> None:
    assert _version(distribution) == importlib.metadata.version(distribution)


def test_an_egg_info_folder_without_a_version_in_its_name_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "somepkg.egg-info").mkdir()
    (tmp_path / "somepkg.egg-info" / "PKG-INFO").write_text("Name: somepkg\nVersion: 1.2.3\n\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _version("somepkg") == "1.2.3" == importlib.metadata.version("somepkg")
    assert _version("otherpkg-that-is-not-installed") == "unknown"


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"AWS_SESSION_TOKEN": "tok\r\nX-Injected: yes"}, "AWS_SESSION_TOKEN has a line break"),
        ({"AWS_SECURITY_TOKEN": "tok\u20ac", "AWS_SESSION_TOKEN": "ok"}, "AWS_SECURITY_TOKEN"),
        ({"AWS_ACCESS_KEY_ID": "AKID\x00"}, "AWS_ACCESS_KEY_ID has the control character"),
    ],
)
def test_environment_credentials_no_header_can_carry_are_refused_naming_the_variable(
    no_files: dict[str, str], variables: dict[str, str], named: str
) -> None:
    env = {**no_files, **ENV_KEYS, **variables, "AWS_DEFAULT_REGION": "eu-west-1"}
    with pytest.raises(dynorm.ConfigurationError, match=f"from the environment variable {named}"):
        lean(env)
