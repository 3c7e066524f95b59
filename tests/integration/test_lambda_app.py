"""examples/lambda_app.py invoked as AWS Lambda invokes it: one process, several events.

``lambda_runtime.py`` plays Lambda's runtime in a fresh process: it imports the app's module and
calls ``handler(event, context)`` with API Gateway HTTP API events, one invocation after another,
the settings in environment variables. The app reaches the server through the fault proxy
(``tests/faultproxy.py``, no fault injected), which counts the TCP connections it is opened: the
server's own view of how many the app opened across the invocations.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dynorm.testing import TEST_ACCESS_KEY_ID, TEST_REGION, TEST_SECRET_ACCESS_KEY
from tests.faultproxy import FaultyConnect

from .cli import ROOT

sys.path.insert(0, str(ROOT / "examples"))

from seed_001_tickets import table

pytestmark = pytest.mark.integration

RUNTIME = Path(__file__).with_name("lambda_runtime.py")

#: One execution environment's invocations: writes, then reads of what they wrote.
CALLS: list[tuple[str, str, Any]] = [
    ("POST", "/orgs", {"name": "MICROSOFT", "plan_type": "Enterprise"}),
    ("POST", "/orgs/MICROSOFT/users", {"org_name": "MICROSOFT", "username": "SATYA"}),
    ("POST", "/orgs/MICROSOFT/users", {"org_name": "MICROSOFT", "username": "BILL"}),
    ("GET", "/orgs/MICROSOFT", None),
    ("GET", "/orgs/MICROSOFT/users?limit=1", None),
    ("GET", "/orgs/NOPE", None),
    ("POST", "/orgs", {"name": "MICROSOFT"}),
]


async def invoke(endpoint: str, table_name: str, home: Path) -> dict[str, Any]:
    """Run the runtime on ``CALLS`` with Lambda's environment variables; what it printed."""
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        # What Lambda sets: the role's credentials and the region.
        "AWS_ACCESS_KEY_ID": TEST_ACCESS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": TEST_SECRET_ACCESS_KEY,
        "AWS_SESSION_TOKEN": "session-token",
        "AWS_REGION": TEST_REGION,
        "AWS_DEFAULT_REGION": TEST_REGION,
        # The function's own.
        "DYNORM_TABLE_NAME": table_name,
        "DYNORM_ENDPOINT_URL": endpoint,
        "DYNORM_TEST_FAST_PATH": os.environ.get("DYNORM_TEST_FAST_PATH", "1"),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(RUNTIME),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
        cwd=home,
    )
    out, err = await asyncio.wait_for(process.communicate(json.dumps(CALLS).encode()), 120)
    assert process.returncode == 0, err.decode()
    said: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return said


def test_the_function_serves_web_apps_app_built_once() -> None:
    # In a fresh process, as Lambda's init: importing the function builds one FastAPI app.
    code = (
        "import fastapi, json\n"
        "built = []\n"
        "init = fastapi.FastAPI.__init__\n"
        "def counted(self, *args, **kwargs):\n"
        "    built.append(self)\n"
        "    init(self, *args, **kwargs)\n"
        "fastapi.FastAPI.__init__ = counted\n"
        "import lambda_app, web_app\n"
        "print(json.dumps([len(built), lambda_app.app is web_app.app,"
        " lambda_app.handler.app is web_app.app,"
        " web_app.app.state.open_database == lambda_app.connection.use]))\n"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "examples")])}
    ran = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=False
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.strip().splitlines()[-1]) == [1, True, True, True]


async def test_every_invocation_of_an_environment_is_served_on_one_connection(
    faulty_connect: FaultyConnect, tmp_path: Path
) -> None:
    async with faulty_connect(table) as faulty:
        proxy = faulty.proxy
        before = proxy.accepted, len(proxy.requests)

        said = await invoke(proxy.url, faulty.direct.table_name, tmp_path)

        statuses = [reply["status"] for reply in said["replies"]]
        assert statuses == [201, 201, 201, 200, 200, 404, 409]
        org, page = said["replies"][3]["body"], said["replies"][4]["body"]
        assert org["plan_type"] == "Enterprise"
        assert [user["username"] for user in org["users"]] == ["BILL", "SATYA"]
        assert [user["username"] for user in page["items"]] == ["BILL"]
        assert page["cursor"] is not None
        # One Database for the seven invocations, and one TCP connection under it.
        assert said["opened"] == 1
        assert proxy.accepted - before[0] == 1
        sent = proxy.requests[before[1] :]
        assert sent == [
            *("PutItem", "GetItem", "PutItem", "GetItem", "PutItem"),
            *("Query", "Query", "Query", "PutItem"),
        ]
        assert said["requests"] == len(sent)
        fast_path = os.environ.get("DYNORM_TEST_FAST_PATH", "1") != "0"
        assert said["fast_path"] == fast_path
        # Lambda's credentials are environment variables: the fast path needs no botocore.
        assert said["botocore"] == (not fast_path)
