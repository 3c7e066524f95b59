"""Where a connection's credentials, region and endpoint come from: aiobotocore's whole chain.

Each test takes the credentials from one source only (environment variables, a profile in the
shared files, a container-role credentials endpoint), with every other source removed from the
environment, and shows both that requests are signed with them (the ``Authorization`` header a
loopback server receives names the access key) and that a write and a read work against the
test server. Both request paths: the fast path (the default) resolves the chain itself, without
a botocore client; ``DYNORM_TEST_FAST_PATH=0`` runs the same through botocore's client.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import dynorm
from dynorm import Database, connect
from dynorm.testing import RunningServer, fast_path_selected, fresh_table
from tests.seed_models import Org, app

pytestmark = pytest.mark.integration

#: Every environment variable that could hand the process credentials, a region or an endpoint.
AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_USE_FIPS_ENDPOINT",
    "AWS_USE_DUALSTACK_ENDPOINT",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_CA_BUNDLE",
)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No AWS configuration at all: no variables, empty shared files, no instance metadata."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "credentials").write_text("")
    (tmp_path / "config").write_text("")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return monkeypatch


class Recorder:
    """A loopback HTTP server: keeps each request's path and headers, answers with ``reply``."""

    def __init__(self, reply: bytes = b"{}") -> None:
        self.reply = reply
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.url = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                headers = {}
                for line in head[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((head[0].split()[1], headers))
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(self.reply)}\r\n\r\n".encode()
                    + self.reply
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client hung up
        finally:
            writer.close()

    def signed_keys(self) -> list[str]:
        """The access key id of each request's SigV4 ``Authorization`` header."""
        return [
            h["authorization"].split("Credential=")[1].split("/")[0]
            for _, h in self.requests
            if "authorization" in h
        ]


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    recording = Recorder()
    server = await asyncio.start_server(recording.handle, "127.0.0.1", 0)
    recording.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield recording


async def signed_with(url: str, **options: Any) -> None:
    """One GetItem to ``url`` (a Recorder, whose ``{}`` reads as no item)."""
    async with connect(app, endpoint_url=url, fast_path=fast_path_selected(), **options) as db:
        with pytest.raises(dynorm.ItemNotFoundError):
            await db.get(Org, name="ACME")


async def round_trip(server: RunningServer | None, **options: Any) -> Database:
    """A put and a get on a fresh table of the test server; returns the (closed) Database.

    ``server`` None leaves the endpoint to the AWS configuration.
    """
    if server is not None:
        options["endpoint_url"] = server.url
    async with (
        connect(
            app,
            table_name=f"config-{uuid.uuid4().hex[:8]}",
            fast_path=fast_path_selected(),
            **options,
        ) as db,
        fresh_table(db),
    ):
        await db.put(Org(name="ACME"))
        assert await db.get(Org, name="ACME") == Org(name="ACME")
    return db


async def test_credentials_and_region_from_environment_variables(
    aws_env: pytest.MonkeyPatch, recorder: Recorder, dynorm_server: RunningServer
) -> None:
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "secret-from-env")
    aws_env.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    await signed_with(recorder.url)
    assert recorder.signed_keys() == ["AKIDFROMENV"]
    assert "/eu-west-1/dynamodb/aws4_request" in recorder.requests[0][1]["authorization"]
    db = await round_trip(dynorm_server)
    assert db.region == "eu-west-1"


async def test_credentials_passed_to_connect_beat_the_environments(
    aws_env: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "secret-from-env")
    aws_env.setenv("AWS_SESSION_TOKEN", "token-from-env")
    aws_env.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    await signed_with(recorder.url)  # the environment's, with its session token
    await signed_with(recorder.url, aws_access_key_id="AKIDPASSED", aws_secret_access_key="s")
    assert recorder.signed_keys() == ["AKIDFROMENV", "AKIDPASSED"]
    (_, from_env), (_, passed) = recorder.requests
    assert from_env["x-amz-security-token"] == "token-from-env"
    assert "x-amz-security-token" not in passed  # the environment's token is not mixed in


async def test_credentials_and_region_from_a_profile_in_the_shared_files(
    aws_env: pytest.MonkeyPatch, tmp_path: Path, recorder: Recorder, dynorm_server: RunningServer
) -> None:
    (tmp_path / "credentials").write_text(
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = no\n\n"
        "[tester]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = from-profile\n"
    )
    (tmp_path / "config").write_text("[profile tester]\nregion = ap-southeast-2\n")
    await signed_with(recorder.url, profile="tester")
    assert recorder.signed_keys() == ["AKIDPROFILE"]
    assert "/ap-southeast-2/dynamodb/" in recorder.requests[0][1]["authorization"]
    db = await round_trip(dynorm_server, profile="tester")
    assert db.region == "ap-southeast-2"


async def test_a_profile_the_files_do_not_have_is_an_error_naming_profile(
    aws_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(dynorm.DynormError) as caught:
        async with connect(app, profile="nobody", fast_path=fast_path_selected()):
            pass
    assert "The config profile (nobody) could not be found" in str(caught.value)
    assert "profile=" in str(caught.value)


async def test_no_region_anywhere_is_an_error_naming_region_name(
    aws_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(dynorm.DynormError) as caught:
        async with connect(app, endpoint_url="http://127.0.0.1:1", fast_path=fast_path_selected()):
            pass
    assert "no AWS region is configured; pass connect(..., region_name=" in str(caught.value)


async def test_no_credentials_anywhere_is_an_error_before_anything_is_sent(
    aws_env: pytest.MonkeyPatch, recorder: Recorder
) -> None:
    async with connect(
        app, endpoint_url=recorder.url, region_name="eu-west-1", fast_path=fast_path_selected()
    ) as db:
        with pytest.raises(dynorm.DynormError) as caught:
            await db.get(Org, name="ACME")
    assert "no usable AWS credentials" in str(caught.value)
    assert "aws_access_key_id=" in str(caught.value)
    assert recorder.requests == []


class CredentialsEndpoint:
    """A container-role credentials endpoint (as ECS and EKS serve them), counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.url = ""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            assert head.startswith("GET /creds ")
            self.calls += 1
            expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)
            body = json.dumps(
                {
                    "AccessKeyId": "AKIDCONTAINER",
                    "SecretAccessKey": "from-the-container",
                    "Token": "container-session-token",
                    "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
            ).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        finally:
            writer.close()


@pytest.fixture
async def container_credentials(aws_env: pytest.MonkeyPatch) -> AsyncIterator[CredentialsEndpoint]:
    endpoint = CredentialsEndpoint()
    server = await asyncio.start_server(endpoint.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    aws_env.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://127.0.0.1:{port}/creds")
    aws_env.setenv("AWS_DEFAULT_REGION", "us-west-2")
    async with server:
        yield endpoint


async def test_credentials_from_a_container_role_endpoint(
    container_credentials: CredentialsEndpoint, recorder: Recorder, dynorm_server: RunningServer
) -> None:
    await signed_with(recorder.url)
    assert recorder.signed_keys() == ["AKIDCONTAINER"]
    assert recorder.requests[0][1]["x-amz-security-token"] == "container-session-token"
    assert container_credentials.calls == 1
    await round_trip(dynorm_server)
    assert container_credentials.calls == 2  # once per connection: they are fresh for an hour


async def test_the_endpoint_and_region_from_the_environment(
    aws_env: pytest.MonkeyPatch, dynorm_server: RunningServer
) -> None:
    aws_env.setenv("AWS_ACCESS_KEY_ID", "testing")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws_env.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    aws_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynorm_server.url)
    aws_env.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")  # the service's own one wins
    async with connect(app, fast_path=fast_path_selected()) as db:
        assert db.endpoint == dynorm_server.url
        assert db.region == "eu-central-1"
        async with fresh_table(db):
            await db.put(Org(name="ACME"))
            assert await db.get(Org, name="ACME") == Org(name="ACME")


async def test_the_endpoint_from_a_profiles_services_section(
    aws_env: pytest.MonkeyPatch, tmp_path: Path, dynorm_server: RunningServer
) -> None:
    (tmp_path / "config").write_text(
        "[profile local]\nregion = sa-east-1\nservices = local-dynamodb\n"
        "aws_access_key_id = testing\naws_secret_access_key = testing\n\n"
        f"[services local-dynamodb]\ndynamodb =\n  endpoint_url = {dynorm_server.url}\n"
    )
    db = await round_trip(None, profile="local")
    assert db.endpoint == dynorm_server.url
    assert db.region == "sa-east-1"


@pytest.mark.parametrize(
    ("env", "region", "endpoint"),
    [
        ({}, "eu-west-1", "https://dynamodb.eu-west-1.amazonaws.com"),
        ({}, "cn-north-1", "https://dynamodb.cn-north-1.amazonaws.com.cn"),
        (
            {
                "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1",
                "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
            },
            "eu-west-1",
            "https://dynamodb.eu-west-1.amazonaws.com",
        ),
        # Only botocore's endpoint data knows these: the fast path asks a botocore client.
        ({}, "us-gov-west-1", "https://dynamodb.us-gov-west-1.amazonaws.com"),
        (
            {"AWS_USE_FIPS_ENDPOINT": "true"},
            "us-east-1",
            "https://dynamodb-fips.us-east-1.amazonaws.com",
        ),
    ],
)
async def test_the_endpoint_of_a_region_is_the_one_botocore_resolves(
    aws_env: pytest.MonkeyPatch, env: dict[str, str], region: str, endpoint: str
) -> None:
    for name, value in env.items():
        aws_env.setenv(name, value)
    async with connect(
        app,
        region_name=region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        fast_path=fast_path_selected(),
    ) as db:
        assert db.endpoint == endpoint
        assert db.region == region


def botocore_clients() -> int:
    """How many aiobotocore DynamoDB clients are alive in this process.

    Told by class (botocore names a client's class after its service): only dynorm's transport
    imports aiobotocore.
    """
    gc.collect()  # clients of earlier tests, no longer used, are not counted
    return sum(
        type(o).__name__ == "DynamoDB"
        and any(c.__name__ == "AioBaseClient" for c in type(o).__mro__)
        for o in gc.get_objects()
    )


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is botocore's client")
async def test_the_fast_path_builds_a_botocore_client_only_for_what_it_does_not_send(
    dynorm_server: RunningServer,
) -> None:
    before = botocore_clients()
    async with connect(
        app,
        endpoint_url=dynorm_server.url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        table_name=f"config-{uuid.uuid4().hex[:8]}",
    ) as db:
        assert botocore_clients() == before
        await db.create_table()  # CreateTable, DescribeTable and UpdateTimeToLive
        try:
            await db.put(Org(name="ACME"))
            assert await db.get(Org, name="ACME") == Org(name="ACME")
            assert await db.query(Org, name="ACME").all() == [Org(name="ACME")]
            described = await db.describe_table()
            assert described is not None
            # As botocore parses it: timestamps are datetimes.
            assert isinstance(described["CreationDateTime"], datetime.datetime)
            assert described["CreationDateTime"].tzinfo is not None
            assert botocore_clients() == before
            # An operation outside the fast path's: a client, built once and kept.
            arn = described["TableArn"]
            for _ in range(2):
                tags = await db.send(dynorm.Request("ListTagsOfResource", {"ResourceArn": arn}))
                assert tags.get("Tags", []) == []
            assert botocore_clients() == before + 1
        finally:
            await db.delete_table()


@pytest.mark.skipif(not fast_path_selected(), reason="botocore's client raises its ValueError")
async def test_an_invalid_configured_endpoint_is_an_error_naming_what_to_check(
    aws_env: pytest.MonkeyPatch,
) -> None:
    aws_env.setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://[::1")
    with pytest.raises(dynorm.DynormError) as caught:
        async with connect(
            app, region_name="eu-west-1", aws_access_key_id="a", aws_secret_access_key="b"
        ):
            pass
    assert "Invalid endpoint: http://[::1" in str(caught.value)
    assert "endpoint_url=" in str(caught.value)
