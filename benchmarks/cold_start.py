"""Cold start: the first authenticated request of a fresh process against its floor (issue 28 point 6).

    .venv/bin/python benchmarks/cold_start.py [--runs N] [--root DIR]      (or: make bench)

One emulated AWS (moto's server, in this process, on a free port) holds the table, the administrator and a
token. Then, in fresh interpreters alternating (the order swapped every run), each timing itself from its
first statement, wall and CPU:

- **the app**: `import app`, then one `GET /auth/users/whoami` with the token, given to the app as Lambda
  gives it an API Gateway event (`app.app(event, None)`, in process; no HTTP server in front), which signs the
  token in against DynamoDB; then which of the known-heavy modules are loaded (none should be);
- **its floor**: `import chalice, pydantic, boto3`, one DynamoDB client, one GetItem of the caller's user item:
  the least any authenticated request of a Chalice and pydantic service on DynamoDB pays;
- **the worker**: the SQS worker function's handler module (`chalicelib.workers.queue`, which Lambda imports
  instead of app.py), then the job handlers it loads on its first message.

Both the app and the floor reach the emulator over HTTP on localhost, as a function reaches DynamoDB over
HTTPS. Medians; CPU time is the steadier figure on a shared machine. `--root` measures another checkout (e.g.
a `git archive` of an older commit) with this interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HEAVY = [
    "xhtml2pdf",
    "reportlab",
    "liquid",
    "airspeed",
    "schemathesis",
    "hypothesis",
    "moto",
    "pytest",
    "aws_xray_sdk",
    "jsonschema",
    "openapi_spec_validator",
    "chalicelib.apidocs.openapi",
    "chalicelib.documents.rendering",
]
"""Modules no first request should load: the PDF and template stacks, the test tools, the API description."""

APP_PROBE = """
import json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
import app
imported = (time.perf_counter() - wall, time.process_time() - cpu)
event = {"resource": "/auth/users/whoami", "path": "/auth/users/whoami", "httpMethod": "GET",
         "headers": {"Authorization": "Bearer " + TOKEN, "Accept": "application/json"}, "multiValueHeaders": {},
         "queryStringParameters": None, "multiValueQueryStringParameters": None, "pathParameters": None,
         "stageVariables": None, "body": None, "isBase64Encoded": False,
         "requestContext": {"resourcePath": "/auth/users/whoami", "httpMethod": "GET", "path": "/api/auth/users/whoami",
                            "requestId": "cold-start", "stage": "api", "identity": {"sourceIp": "127.0.0.1"}}}
answer = app.app(event, None)
first = (time.perf_counter() - wall, time.process_time() - cpu)
assert answer["statusCode"] == 200, answer
assert json.loads(answer["body"])["userName"], answer
print(json.dumps({"import": imported, "first request": first, "heavy": [m for m in HEAVY if m in sys.modules]}))
"""

FLOOR_PROBE = """
import json, time
wall, cpu = time.perf_counter(), time.process_time()
import chalice, pydantic, boto3
client = boto3.session.Session().client("dynamodb", region_name="us-east-1", endpoint_url=ENDPOINT)
item = client.get_item(TableName=TABLE, Key=KEY, ConsistentRead=True)
floor = (time.perf_counter() - wall, time.process_time() - cpu)
assert "Item" in item, item
print(json.dumps({"floor": floor}))
"""

WORKER_PROBE = """
import json, time
wall, cpu = time.perf_counter(), time.process_time()
from chalicelib.workers import queue
imported = (time.perf_counter() - wall, time.process_time() - cpu)
wall, cpu = time.perf_counter(), time.process_time()
getattr(queue, "load_job_handlers", lambda: None)()  # older checkouts load the handlers with the import
deferred = (time.perf_counter() - wall, time.process_time() - cpu)
print(json.dumps({"worker import": imported, "worker handlers": deferred}))
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def emulated_aws() -> tuple[Any, dict[str, str], dict[str, Any]]:
    """moto's server with the table, bucket and queues, and the administrator signed in: (the server, the
    environment of a probe, what the probes are told)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    environ = {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "PAS_STAGE": "test",
        "PAS_AWS_ENDPOINT_URL": endpoint,
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "PAS",
    }
    os.environ.update({**environ, "AWS_ENDPOINT_URL": endpoint})
    sys.path.insert(0, str(ROOT))
    import boto3

    from chalicelib.core.clock import SystemClock
    from chalicelib.core.ids import new_locator
    from chalicelib.identity import service
    from chalicelib.settings import settings
    from chalicelib.storage import codec, keys
    from local.resources import create_all

    create_all(boto3.session.Session(region_name="us-east-1"))
    current = settings()
    token, _ = service.sign_in(current.admin_username, current.admin_password, SystemClock().now(), new_locator())
    user = token.split(".")[1]  # the user's locator travels in the token
    told = {
        "TOKEN": token,
        "ENDPOINT": endpoint,
        "TABLE": current.table_name,
        "KEY": codec.serialize(keys.user(user).as_dict()),
    }
    return server, environ, told


def probe_environment(root: Path, environ: dict[str, str]) -> dict[str, str]:
    """The probe's environment: bytecode caches written and read (a shell here may say PYTHONDONTWRITEBYTECODE,
    which would make every fresh interpreter compile the service from source: a bundle ships its caches)."""
    inherited = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**inherited, **environ, "PYTHONPATH": str(root)}


def probe(root: Path, environ: dict[str, str], code: str, told: dict[str, Any]) -> dict[str, Any]:
    preamble = "".join(f"{name} = {value!r}\n" for name, value in told.items())
    result = subprocess.run(
        [sys.executable, "-c", preamble + code],
        cwd=root,
        env=probe_environment(root, environ),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"probe failed in {root}:\n{result.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh interpreters of each kind (default 9)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--smoke", action="store_true", help="one run of each (tests/architecture)")
    parser.add_argument(
        "--importtime",
        action="store_true",
        help="only print `python -X importtime` of the app's first request (to stderr)",
    )
    arguments = parser.parse_args()
    runs = 1 if arguments.smoke else arguments.runs
    server, environ, told = emulated_aws()
    try:
        app_probe = f"HEAVY = {HEAVY!r}\n{APP_PROBE}"
        kinds = [("app", app_probe), ("floor", FLOOR_PROBE), ("worker", WORKER_PROBE)]
        if arguments.importtime:
            probe(arguments.root, environ, app_probe, told)
            preamble = "".join(f"{name} = {value!r}\n" for name, value in told.items())
            subprocess.run(
                [sys.executable, "-X", "importtime", "-c", preamble + app_probe],
                cwd=arguments.root,
                env=probe_environment(arguments.root, environ),
                check=True,
            )
            return
        for _, code in kinds:
            probe(arguments.root, environ, code, told)  # writes the bytecode caches, as a deployed bundle has them
        load_before = os.getloadavg()[0]
        samples: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in kinds}
        for run in range(runs):
            for name, code in kinds if run % 2 == 0 else kinds[1::-1] + kinds[2:]:
                samples[name].append(probe(arguments.root, environ, code, told))
    finally:
        server.stop()

    def median_ms(kind: str, part: str, index: int) -> float:
        return statistics.median(sample[part][index] for sample in samples[kind]) * 1000

    load = f"{load_before:.1f}-{os.getloadavg()[0]:.1f}"
    print(f"{arguments.root}: median of {runs} fresh interpreters of each, alternated, load average {load}")
    rows = [
        ("import app", "app", "import"),
        ("first request (import app + whoami)", "app", "first request"),
        ("floor (import chalice, pydantic, boto3 + GetItem)", "floor", "floor"),
    ]
    for label, kind, part in rows:
        print(f"  {label:<52}{median_ms(kind, part, 0):7.0f} ms wall {median_ms(kind, part, 1):7.0f} ms CPU")
    wall_ratio, cpu_ratio = (median_ms("app", "first request", i) / median_ms("floor", "floor", i) for i in (0, 1))
    print(f"  {'first request / floor':<52}{wall_ratio:7.2f}x wall   {cpu_ratio:7.2f}x CPU")
    print(f"  heavy modules loaded by then: {', '.join(samples['app'][-1]['heavy']) or 'none'}")
    print(
        f"  worker: import:  {median_ms('worker', 'worker import', 0):7.0f} ms wall "
        f"{median_ms('worker', 'worker import', 1):7.0f} ms CPU"
    )
    print(
        f"  + its job handlers: {median_ms('worker', 'worker handlers', 0):7.0f} ms wall "
        f"{median_ms('worker', 'worker handlers', 1):7.0f} ms CPU"
    )


if __name__ == "__main__":
    main()
