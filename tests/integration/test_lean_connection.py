"""The lean connection: the fast path without aiobotocore's session, where nothing else applies.

With credentials passed to connect() or in the environment, the region passed or in
AWS_DEFAULT_REGION and no AWS configuration files, a process opens its connection, sends and
reads without importing aiobotocore, botocore or aiohttp (run in fresh processes, where
``sys.modules`` tells); a profile, a configuration file or an operation the fast path does not
send bring aiobotocore's session back, and work as before.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import attrs
import pytest

import dynorm
from dynorm import Database, connect
from dynorm.testing import RunningServer, fast_path_selected
from tests.integration.test_connect_config import AWS_VARIABLES
from tests.integration.test_transport import closed_port, read_request, serving
from tests.seed_models import Org, app

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

#: Run in a fresh process: a table of its own, create, put, get, query, then (phase two) an
#: operation outside the fast path's set. Prints what it found as JSON lines.
SCRIPT = """
import asyncio, json, sys, attrs, dynorm

t = dynorm.Table("lean", pk="pk", sk="sk")

@t.model(pk="U#{name}", sk="U#{name}")
@attrs.define
class User:
    name: str
    email: str = ""

def stack():  # what a plain model's reads and writes need not import (cattrs, aiohttp: issue 19)
    unused = ("botocore", "aiobotocore", "cattrs", "aiohttp", "yarl", "multidict")
    return sorted(m for m in sys.modules if m.split(".")[0] in unused)

async def main(options):
    async with dynorm.connect(t, **options) as db:
        await db.create_table()
        try:
            await db.put(User(name="ada", email="a@b"))
            got = await db.get(User, name="ada")
            found = await db.query(User, name="ada").all()
            print(json.dumps({"fast_path": db.fast_path, "region": db.region,
                              "got": got.email, "found": [u.email for u in found],
                              "stack": stack()}))
            arn = (await db.describe_table())["TableArn"]
            tags = await db.send(dynorm.Request("ListTagsOfResource", {"ResourceArn": arn}))
            print(json.dumps({"tags": tags.get("Tags", []), "stack": stack()}))
        finally:
            await db.delete_table()

asyncio.run(main(json.loads(sys.argv[1])))
"""


def clean_environment(tmp_path: Path, **variables: str) -> dict[str, str]:
    """This process's environment without any AWS configuration, no files, plus ``variables``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in AWS_VARIABLES and not k.lower().endswith("_proxy")
    }
    env["AWS_CONFIG_FILE"] = str(tmp_path / "no-config")
    env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "no-credentials")
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(variables)
    return env


async def run(env: dict[str, str], **options: object) -> list[dict[str, Any]]:
    """SCRIPT in a fresh process with ``env``; its two JSON lines."""
    options.setdefault("table_name", f"lean-{uuid.uuid4().hex[:8]}")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SCRIPT,
        json.dumps(options),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode == 0, err.decode()
    return [json.loads(line) for line in out.decode().splitlines()]


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_environment_credentials_and_region_import_neither_aiobotocore_nor_botocore(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    env = clean_environment(
        tmp_path,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_SESSION_TOKEN="a-session-token",
        AWS_DEFAULT_REGION="eu-west-1",
        AWS_REGION="us-west-2",  # botocore reads only AWS_DEFAULT_REGION
    )
    data, other = await run(env, endpoint_url=dynorm_server.url)
    assert data == {
        "fast_path": True,
        "region": "eu-west-1",
        "got": "a@b",
        "found": ["a@b"],
        "stack": [],
    }
    # An operation outside the fast path's set: aiobotocore's client, built then, works.
    assert other["tags"] == []
    assert "aiobotocore.session" in other["stack"]
    assert "botocore.client" in other["stack"]
    assert "aiohttp" in other["stack"]  # aiobotocore's HTTP session, for that operation only


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_credentials_passed_to_connect_are_lean_too(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    env = clean_environment(tmp_path)
    data, _ = await run(
        env,
        endpoint_url=dynorm_server.url,
        region_name="ap-northeast-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    assert (data["got"], data["region"], data["stack"]) == ("a@b", "ap-northeast-1", [])


async def test_a_profile_takes_aiobotocores_session_and_works(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    (tmp_path / "credentials").write_text(
        "[tester]\naws_access_key_id = testing\naws_secret_access_key = testing\n"
    )
    (tmp_path / "config").write_text("[profile tester]\nregion = sa-east-1\n")
    env = clean_environment(
        tmp_path,
        AWS_CONFIG_FILE=str(tmp_path / "config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
    )
    data, _ = await run(
        env,
        endpoint_url=dynorm_server.url,
        profile="tester",
        fast_path=fast_path_selected(),
    )
    assert (data["got"], data["found"], data["region"]) == ("a@b", ["a@b"], "sa-east-1")
    assert data["fast_path"] == fast_path_selected()
    assert "aiobotocore.session" in data["stack"]
    assert "botocore.credentials" in data["stack"]
    assert "aiohttp" in data["stack"]  # aiobotocore's HTTP session, as before


async def test_a_configuration_file_takes_aiobotocores_session_and_is_honoured(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    # The environment's keys and region would do for a lean connection, but the file's
    # default profile names the endpoint: only aiobotocore's session reads it.
    (tmp_path / "config").write_text(
        "[default]\nservices = local-dynamodb\n\n"
        f"[services local-dynamodb]\ndynamodb =\n  endpoint_url = {dynorm_server.url}\n"
    )
    env = clean_environment(
        tmp_path,
        AWS_CONFIG_FILE=str(tmp_path / "config"),
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="eu-west-1",
    )
    data, _ = await run(env, fast_path=fast_path_selected())
    assert (data["got"], data["region"]) == ("a@b", "eu-west-1")
    assert "aiobotocore.session" in data["stack"]


def channel_of(db: Database) -> str:
    """The kind of fast-path connection ``db`` has: ``LeanSender`` or ``AioSender``."""
    return type(db._transport._attempt._sender).__name__  # type: ignore[attr-defined]


@pytest.fixture(params=["LeanSender", "AioSender"])
def kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Each kind of fast-path connection in turn (a config file with anything in it: aio's)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config"
    config.write_text("" if request.param == "LeanSender" else "[default]\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return str(request.param)


async def failures(url: str, kind: str, **options: Any) -> str:
    """The TransportError a GetItem to ``url`` ends in, with any port number taken out."""
    async with connect(
        app,
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        max_attempts=1,
        **options,
    ) as db:
        assert channel_of(db) == kind
        with pytest.raises(dynorm.TransportError) as caught:
            await db.get(Org, name="ACME")
    return str(caught.value)


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_both_kinds_of_connection_fail_with_the_same_errors(kind: str) -> None:
    port = closed_port()
    refused = await failures(f"http://127.0.0.1:{port}", kind)
    assert refused.startswith(f"GetItem: could not connect to http://127.0.0.1:{port} (")
    assert "nothing was sent. Check connect(endpoint_url=...)" in refused

    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with serving(never_answer) as url:
        silent = await failures(url, kind, read_timeout=0.2)
    assert silent == (
        f"GetItem: no reply from {url} within read_timeout=0.2s; the request may have been "
        "applied. Check that the endpoint is up and reachable (network, proxy, load balancer), "
        "or raise connect(read_timeout=...)"
    )

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        while not writer.transport.is_closing():  # a byte every 20 ms, for ever
            writer.write(b"1\r\n \r\n")
            await writer.drain()
            await asyncio.sleep(0.02)

    async with serving(trickle) as url:
        slow = await failures(url, kind, read_timeout=5, attempt_timeout=0.5)
    assert slow == (
        f"GetItem: the reply from {url} did not end within attempt_timeout=0.5s (it came too "
        "slowly, or never ended); the request may have been applied. Check that the endpoint "
        "is up and reachable (network, proxy, load balancer), or raise "
        "connect(attempt_timeout=...)"
    )

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with serving(hang_up) as url:
        broken = await failures(url, kind)
    assert broken.startswith(f"GetItem: the connection to {url} broke before a reply came (")
    assert broken.endswith(
        "; the request may have been applied. Check that the endpoint is up "
        "and reachable (network, proxy, load balancer), or raise connect(read_timeout=...)"
    )


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_both_kinds_of_connection_refuse_a_token_no_header_can_carry(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdz\nIQoJb3JpZ2lu")
    accepted = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1

    async with serving(count) as url:
        with pytest.raises(dynorm.ConfigurationError) as caught:
            async with connect(app, endpoint_url=url, region_name="us-east-1") as db:
                await db.get(Org, name="ACME")
    # botocore's chain takes the environment's keys first too: both name the variable.
    assert str(caught.value).startswith(
        "the AWS session token from the environment variable AWS_SESSION_TOKEN has a line "
        "break (CR or LF), which an HTTP header cannot carry; nothing was sent."
    )
    assert accepted == 0


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_a_profiles_token_no_header_can_carry_is_refused_before_sending(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    credentials = tmp_path / "credentials"
    # An indented line continues the value: the token holds a line break.
    credentials.write_text(
        "[default]\naws_access_key_id = AKID\naws_secret_access_key = secret\n"
        "aws_session_token = FwoGZXIvYXdz\n    IQoJb3JpZ2lu\n"
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    accepted = 0

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1

    async with serving(count) as url, connect(app, endpoint_url=url, region_name="us-east-1") as db:
        assert channel_of(db) == "AioSender"
        with pytest.raises(dynorm.ConfigurationError) as caught:
            await db.get(Org, name="ACME")
    assert str(caught.value).startswith(
        "the AWS session token from connect(aws_session_token=...), AWS_SESSION_TOKEN or the "
        "profile's aws_session_token has a line break (CR or LF)"
    )
    assert accepted == 0


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_both_kinds_of_connection_say_when_used_after_connect_ends(kind: str) -> None:
    async with connect(
        app,
        endpoint_url="http://127.0.0.1:9",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ) as db:
        assert channel_of(db) == kind
    with pytest.raises(dynorm.DynormError, match="the Database's connection is closed"):
        await db.get(Org, name="ACME")


@pytest.mark.skipif(not fast_path_selected(), reason="the slow path is aiobotocore's client")
async def test_a_ca_bundle_that_cannot_be_read_is_an_error_naming_it(
    kind: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWS_CA_BUNDLE", str(tmp_path / "no-such-bundle.pem"))
    async with connect(
        app,
        endpoint_url="https://127.0.0.1:9",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ) as db:
        assert channel_of(db) == kind
        with pytest.raises(dynorm.DynormError) as caught:
            await db.get(Org, name="ACME")
    assert "GetItem: cannot set up TLS for https://127.0.0.1:9" in str(caught.value)
    assert "AWS_CA_BUNDLE" in str(caught.value)
    assert not isinstance(caught.value, dynorm.TransportError)  # not retried: nothing to retry


#: What a process that only reads never imports: the write side (planner, copies, cascades,
#: update expressions), explain, transactions, batches, coalescing, rate limits and their
#: arithmetic, stream records, sharded reads and table definitions.
WRITE_SIDE = (
    "difflib",  # the "did you mean" of errors
    "dynorm.core.throughput",
    "dynorm.io.batch",
    "dynorm.io.coalesce",
    "dynorm.io.explaining",
    "dynorm.io.ratelimit",
    "dynorm.io.sharded",
    "dynorm.io.transaction",
    "dynorm.mapping.cascade",
    "dynorm.mapping.copies",
    "dynorm.mapping.explain",
    "dynorm.mapping.sharded",
    "dynorm.mapping.streams",
    "dynorm.mapping.tabledef",
    "dynorm.mapping.writeplan",
    "dynorm.mapping.writes",
)

#: Run in a fresh process against a table the test created and filled: as an application
#: that only reads (coldstart_child.py), then a put, then explain, a transaction and stats.
READER = """
import asyncio, json, sys, attrs
from dynorm import Table, connect

WRITE_SIDE = json.loads(sys.argv[2])
t = Table("lazy", pk="pk", sk="sk")

@t.model(pk="U#{name}", sk="U#{name}")
@attrs.define
class User:
    name: str
    email: str = ""

def loaded():
    return [m for m in WRITE_SIDE if m in sys.modules]

async def main(options):
    async with connect(t, **options) as db:
        got = await db.get(User, name="ada")
        page = await db.query(User, name="ada").page()
        print(json.dumps({"got": got.email, "found": [u.email for u in page], "loaded": loaded()}))
        await db.put(User(name="bob", email="b@c"))
        print(json.dumps({"got": (await db.get(User, name="bob")).email, "loaded": loaded()}))
        explained = db.explain.put(User(name="cy"))
        tx = db.transaction()
        print(json.dumps({
            "explained": [r.operation for r in explained],
            "transaction": type(tx).__name__,
            "requests": db.stats().requests,
            "loaded": loaded(),
        }))

asyncio.run(main(json.loads(sys.argv[1])))
"""


async def test_a_process_that_only_reads_imports_no_write_side_module(
    tmp_path: Path, dynorm_server: RunningServer
) -> None:
    reader = dynorm.Table("lazy", pk="pk", sk="sk")

    @reader.model(pk="U#{name}", sk="U#{name}")
    @attrs.define
    class User:
        name: str
        email: str = ""

    options: dict[str, Any] = {
        "endpoint_url": dynorm_server.url,
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "fast_path": fast_path_selected(),
        "table_name": f"lazy-{uuid.uuid4().hex[:8]}",
    }
    async with connect(reader, **options) as db:
        await db.create_table()
        try:
            await db.put(User(name="ada", email="a@b"))
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                READER,
                json.dumps(options),
                json.dumps(WRITE_SIDE),
                env=clean_environment(tmp_path),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await process.communicate()
        finally:
            await db.delete_table()
    assert process.returncode == 0, err.decode()
    reads, write, tools = [json.loads(line) for line in out.decode().splitlines()]
    assert reads == {"got": "a@b", "found": ["a@b"], "loaded": []}
    # The first write brings the write side in, and it works as before.
    assert write["got"] == "b@c"
    assert {
        "dynorm.mapping.writeplan",
        "dynorm.mapping.writes",
        "dynorm.mapping.copies",
        "dynorm.mapping.cascade",
    } <= set(write["loaded"])
    assert "dynorm.io.transaction" not in write["loaded"]
    assert tools["explained"] == ["PutItem"]
    assert tools["transaction"] == "Transaction"
    assert tools["requests"] >= 4
    assert {
        "dynorm.mapping.explain",
        "dynorm.io.explaining",
        "dynorm.io.transaction",
        "dynorm.core.throughput",
    } <= set(tools["loaded"])
