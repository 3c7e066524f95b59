"""A Lambda runtime for ``examples/lambda_app.py``, run as a script in a fresh process.

``python tests/integration/lambda_runtime.py`` reads a JSON list of ``[method, path, body]``
from standard input, imports ``lambda_app`` as Lambda's runtime imports a function's module, and
invokes ``lambda_app.handler(event, context)`` once per call, in turn, each with an API Gateway
HTTP API event: one execution environment serving invocations one after another. The app reads
its settings from the environment, as on Lambda. It prints one JSON line: each reply's status
and body, how many times the app opened a Database, the requests that Database sent,
whether it took dynorm's fast request path, and whether botocore was imported.

Under ``DYNORM_TEST_FAST_PATH=0`` (the suite on botocore's request path) the app's connection
is opened as the example opens it, with ``fast_path=False`` added.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

import lambda_app
from seed_001_tickets import table

from dynorm import connect
from dynorm.testing import fast_path_selected


def main() -> None:
    calls: list[list[Any]] = json.load(sys.stdin)
    if not fast_path_selected():
        lambda_app.connection.open_database = lambda: connect(
            table,
            table_name=os.environ["DYNORM_TABLE_NAME"],
            endpoint_url=os.environ["DYNORM_ENDPOINT_URL"],
            fast_path=False,
        )
    replies = []
    for method, path, body in calls:
        event = lambda_app.http_api_event(method, path, body)
        reply = lambda_app.handler(event, lambda_app.InvocationContext())
        replies.append({"status": reply["statusCode"], "body": json.loads(reply["body"])})

    async def report() -> dict[str, Any]:
        seen: dict[str, Any] = {"opened": lambda_app.connection.opened}
        async with lambda_app.connection.use() as db:  # opened by the invocations, if they did
            seen.update(requests=db.stats().requests, fast_path=db.fast_path)
        seen["botocore"] = "botocore" in sys.modules
        await lambda_app.connection.close()
        return seen

    # On the loop Mangum ran the invocations on, which the Database belongs to.
    seen = asyncio.get_event_loop().run_until_complete(report())
    sys.stdout.write(json.dumps({"replies": replies, **seen}) + "\n")


if __name__ == "__main__":
    main()
