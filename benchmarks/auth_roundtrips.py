"""What an authenticated read costs: DynamoDB round trips and median latency of two identity reads
against a bare route doing one GetItem (same process, same emulated DynamoDB), and the cold import
time of app.py.

    .venv/bin/python benchmarks/auth_roundtrips.py [--requests N]      (or: make bench)

Absolute times are moto's, not AWS's: read the ratios and the round-trip counts. A round trip to
DynamoDB costs a few milliseconds on AWS, so the count is what decides the deployed latency.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "PAS_STAGE": "test",
}


def measure_requests(count: int) -> list[tuple[str, list[str], float]]:
    """(label, DynamoDB operations of one request, median milliseconds) per measured route."""
    import boto3
    from chalice import Chalice
    from chalice.test import Client
    from moto import mock_aws

    with mock_aws():
        from app import app
        from chalicelib.core.clock import SystemClock
        from chalicelib.core.context import SYSTEM, CallContext
        from chalicelib.core.ids import new_locator
        from chalicelib.identity import service
        from chalicelib.identity.models import UserFields
        from chalicelib.settings import settings
        from chalicelib.storage import clients, codec, keys
        from local.resources import create_all

        create_all(boto3.session.Session(region_name="us-east-1"))
        current = settings()
        token, _ = service.sign_in(current.admin_username, current.admin_password, SystemClock().now(), new_locator())
        admin = token.split(".")[1]
        ctx = CallContext(principal=SYSTEM, request_id=new_locator(), now=SystemClock().now())
        other = service.create_user(
            ctx,
            UserFields(userName="reader@example.com", firstName="Bench", lastName="Reader", roles=["admin"]),
            enable_user=True,
        ).user.locator
        headers = {"Authorization": f"Bearer {token}"}

        bare = Chalice(app_name="bare")

        @bare.route("/bare/{locator}")
        def get_bare(locator: str) -> dict[str, Any]:
            item = clients.dynamodb().get_item(
                TableName=current.table_name, Key=codec.serialize(keys.user(locator).as_dict()), ConsistentRead=True
            )
            return {"userName": codec.deserialize(item["Item"])["userName"]}

        calls: list[str] = []

        def record(event_name: str, **_: Any) -> None:
            calls.append(event_name.rsplit(".", 1)[-1])

        clients.dynamodb().meta.events.register("before-call.dynamodb", record)
        results = []
        with (
            Client(app, stage_name="test", project_dir=str(ROOT)) as api,
            Client(bare, stage_name="test", project_dir=str(ROOT)) as bare_api,
        ):
            routes: list[tuple[str, Callable[[], Any]]] = [
                ("bare route: one GetItem", lambda: bare_api.http.get(f"/bare/{admin}")),
                ("GET /auth/users/whoami", lambda: api.http.get("/auth/users/whoami", headers=headers)),
                ("GET /auth/users/{locator}", lambda: api.http.get(f"/auth/users/{other}", headers=headers)),
            ]
            for label, call in routes:
                response = call()
                if response.status_code != 200:
                    raise SystemExit(f"{label}: {response.status_code} {response.body!r}")
                calls.clear()
                call()
                results.append((label, list(calls), 0.0))
                for _ in range(10):
                    call()  # warm up
            # interleaved: each round times every route once, the bare one too, so a change of the machine's
            # load during the run weighs on every route alike (timed one route after the other, their ratios
            # to the bare route flipped between runs under load)
            durations: list[list[float]] = [[] for _ in routes]
            for round_ in range(count):
                shift = round_ % len(routes)  # no route always first
                for index in [*range(shift, len(routes)), *range(shift)]:
                    started = time.perf_counter()
                    routes[index][1]()
                    durations[index].append(time.perf_counter() - started)
            results = [
                (label, one_request, statistics.median(timed) * 1000)
                for (label, one_request, _), timed in zip(results, durations, strict=True)
            ]
        return results


_IMPORT_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)$")


def import_app_once() -> tuple[float, list[tuple[float, str]], bool]:
    """(ms for `import app`, its heaviest direct imports, whether boto3 got imported) in a fresh interpreter."""
    probe = "import sys, app; print('boto3' in sys.modules)"
    environ = {**os.environ, **FAKE_AWS}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    total = 0.0
    children: list[tuple[float, str]] = []
    for line in result.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if not match:
            continue
        cumulative_us, indent, name = int(match.group(2)), len(match.group(3)), match.group(4)
        if indent == 1:  # a top-level import; its children were printed just before it
            if name == "app":
                total = cumulative_us / 1000
                break
            children = []
        elif indent == 3:
            children.append((cumulative_us / 1000, name))
    return total, sorted(children, reverse=True)[:5], result.stdout.strip() == "True"


def measure_import(runs: int) -> tuple[float, list[tuple[float, str]], bool]:
    samples = [import_app_once() for _ in range(runs)]
    median = statistics.median(s[0] for s in samples)
    return median, samples[-1][1], samples[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per route (default 200)")
    parser.add_argument("--import-runs", type=int, default=5, help="fresh interpreters importing app.py")
    arguments = parser.parse_args()
    os.environ.update(FAKE_AWS)
    os.environ.pop("PAS_AWS_ENDPOINT_URL", None)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    sys.path.insert(0, str(ROOT))

    results = measure_requests(arguments.requests)
    bare_ms = results[0][2]
    print(
        f"\n{arguments.requests} requests per route in as many interleaved rounds, chalice test client, "
        "moto in process\n"
    )
    print("({locator}: another user than the caller; the caller's own record comes with the token)\n")
    print(f"{'route':<28}{'DynamoDB calls':<52}{'median ms':>10}{'x bare':>8}")
    for label, calls, median_ms in results:
        print(f"{label:<28}{f'{len(calls)}: ' + ', '.join(calls):<52}{median_ms:>10.2f}{median_ms / bare_ms:>8.2f}")

    import_ms, heaviest, imports_boto3 = measure_import(arguments.import_runs)
    print(
        f"\nimport app (python -X importtime, median of {arguments.import_runs} fresh interpreters): "
        f"{import_ms:.0f} ms; boto3 imported: {'yes' if imports_boto3 else 'no'}"
    )
    for cumulative_ms, name in heaviest:
        print(f"  {name:<40}{cumulative_ms:>8.1f} ms")


if __name__ == "__main__":
    main()
