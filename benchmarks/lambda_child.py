"""One AWS Lambda execution environment, run as a script in a fresh process.

``python lambda_child.py APP WARM``: initialize the function as Lambda's runtime does (import
its module, which builds the app and its handler), invoke the handler once with an API Gateway
HTTP API event for ``GET /orgs/MICROSOFT`` (the cold invocation), then ``WARM`` more times (warm
invocations). ``APP`` is:

- ``dynorm``: ``examples/lambda_app.py`` (FastAPI through Mangum; its Database opened by the first
  invocation and kept), its endpoint reading the organization and its first users in one Query;
- ``boto3``: the same endpoint on a boto3 client created at import (AWS's advice for Lambda),
  the same Query, its items deserialized with boto3's ``TypeDeserializer``;
- ``fastapi``: the same FastAPI app and Mangum handler with no database (a fixed answer): what
  the web stack alone costs.

Settings come from the environment, as on Lambda (``DYNORM_ENDPOINT_URL``,
``DYNORM_TABLE_NAME``, the credentials and the region). It prints one JSON line: ``init_ms`` (the
import, measured here), ``first_ms`` (the cold invocation), ``first_ns`` (``time.time_ns()`` once
it answered: the parent subtracts the time it started this process), ``warm_ms`` (each warm
invocation) and ``rss_kib`` (the peak resident set size). Standard library only before the
measured import, and no import of ``benchmarks``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ORG = "MICROSOFT"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _event(path: str) -> dict[str, Any]:
    """An API Gateway HTTP API (payload format 2.0) GET event."""
    http = {"method": "GET", "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7"}
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": "api.example.com", "accept": "*/*"},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "api",
            "domainName": "api.example.com",
            "http": http,
            "requestId": "benchmark",
            "routeKey": "$default",
            "stage": "$default",
            "timeEpoch": 1795867200000,
        },
        "isBase64Encoded": False,
    }


def _dynorm() -> Any:
    sys.path.insert(0, str(EXAMPLES))
    import lambda_app  # noqa: PLC0415

    return lambda_app.handler


def _boto3() -> Any:
    import boto3  # noqa: PLC0415
    from boto3.dynamodb.types import TypeDeserializer  # noqa: PLC0415
    from fastapi import FastAPI, HTTPException  # noqa: PLC0415
    from mangum import Mangum  # noqa: PLC0415

    client = boto3.client("dynamodb", endpoint_url=os.environ["DYNORM_ENDPOINT_URL"])
    table_name = os.environ["DYNORM_TABLE_NAME"]
    deserialize = TypeDeserializer().deserialize
    app = FastAPI()

    @app.get("/orgs/{name}")
    async def get_org(name: str) -> dict[str, Any]:
        found = client.query(
            TableName=table_name,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": f"ORG#{name}"}},
            Limit=11,
        )
        items = [
            {k: deserialize(v) for k, v in item.items() if k not in {"pk", "sk"}}
            for item in found["Items"]
        ]
        if not items:
            raise HTTPException(404, f"no organization {name!r}")
        org, *users = items
        return {"name": org["name"], "plan_type": org["plan_type"], "users": users}

    return Mangum(app, lifespan="off")


def _fastapi() -> Any:
    from fastapi import FastAPI  # noqa: PLC0415
    from mangum import Mangum  # noqa: PLC0415

    app = FastAPI()

    @app.get("/orgs/{name}")
    async def get_org(name: str) -> dict[str, Any]:
        return {"name": name, "plan_type": "Enterprise", "users": []}

    return Mangum(app, lifespan="off")


APPS = {"dynorm": _dynorm, "boto3": _boto3, "fastapi": _fastapi}


class _Context:
    """The context object Lambda passes beside the event."""

    function_name = "benchmark"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:benchmark"
    memory_limit_in_mb = 512
    aws_request_id = "benchmark"
    log_group_name = "/aws/lambda/benchmark"
    log_stream_name = "benchmark"
    identity = None
    client_context = None


def _invoke(handler: Any) -> float:
    started = time.perf_counter()
    reply = handler(_event(f"/orgs/{ORG}"), _Context())
    took = (time.perf_counter() - started) * 1e3
    if reply["statusCode"] != 200 or ORG not in reply["body"]:
        raise SystemExit(f"unexpected reply: {reply}")
    return took


def _peak_rss_kib() -> int:
    """``VmHWM`` (see ``coldstart_child``: ``ru_maxrss`` would carry the parent's size)."""
    with open("/proc/self/status", encoding="ascii") as status:  # noqa: PTH123 (no pathlib cost)
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main(argv: list[str]) -> None:
    app, warm = argv[0], int(argv[1])
    start = time.perf_counter()
    handler = APPS[app]()
    init_ms = (time.perf_counter() - start) * 1e3
    first_ms = _invoke(handler)
    first_ns = time.time_ns()
    warm_ms = [_invoke(handler) for _ in range(warm)]
    result = {
        "init_ms": init_ms,
        "first_ms": first_ms,
        "first_ns": first_ns,
        "warm_ms": warm_ms,
        "rss_kib": _peak_rss_kib(),
    }
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
