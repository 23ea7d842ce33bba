"""Schedules: DynamoDB round trips and median latency of a 500-item PUT and of a page of items, and the
throughput of a large CSV file (100,000 rows by default) through the deserialization job.

    .venv/bin/python benchmarks/schedules.py [--requests N] [--rows N]

In one process, against one in-process moto and through `chalice.test.Client`, on the schedules test
configuration (tests/api/schedules/support.py: an `Equipment` schedule on every Vehicle). The job runs
its steps through the tests' InlineJobQueue, one step per CHUNK_ROWS rows; items per second count the
rows from the upload to the completed job. Absolute times are moto's; read the counts and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from urllib.parse import quote as escaped

from _in_process import ROOT, json_sender, signed_in_admin, use_emulated_aws

use_emulated_aws()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument(
        "--check",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="read every item back through the API after the job (on moto each page's Query walks "
        "the whole partition: minutes at 100,000 rows)",
    )
    options = parser.parse_args()

    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.settings import reload
    from chalicelib.storage import clients
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    with mock_aws(), lean_dynamodb():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app
        from chalicelib.runtime import wiring
        from chalicelib.runtime.jobs import InlineJobQueue
        from chalicelib.schedules.service import CHUNK_ROWS
        from chalicelib.workers.handlers import load_job_handlers
        from tests.api.schedules.support import draft_quote, schedule_path, schedules_tenant

        load_job_handlers()
        jobs = InlineJobQueue()
        wiring.override(job_queue=jobs)
        token, headers = signed_in_admin()
        calls: list[str] = []
        clients.dynamodb().meta.events.register(
            "before-call.dynamodb", lambda event_name, **_: calls.append(event_name.rsplit(".", 1)[-1])
        )

        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:
            send = json_sender(api, headers)
            tenant = schedules_tenant(api, token)

            def measured(label: str, method: str, path: str, body: object = None) -> None:
                times, per_call = [], Counter[str]()
                for _ in range(options.requests):
                    calls.clear()
                    started = time.perf_counter()
                    send(method, path, body)
                    times.append(time.perf_counter() - started)
                    per_call = Counter(calls)
                print(
                    f"  {label:<36} {statistics.median(times) * 1000:8.1f} ms   {sum(per_call.values()):3d}   "
                    f"{dict(sorted(per_call.items()))}"
                )

            items = [{"data": {"serial": f"AB{n:04d}", "kind": "laptop", "value": n}} for n in range(500)]
            quote, vehicle = draft_quote(api, token, tenant)
            path = schedule_path(tenant, quote, vehicle)
            print(f"{options.requests} requests each; median latency, DynamoDB calls of one request\n")
            measured("PUT 500 schedule items", "PUT", path, items)
            measured("PUT 20 schedule items", "PUT", path, items[:20])
            measured("GET a page of 100 items", "GET", path)

            quote, vehicle = draft_quote(api, token, tenant)
            rows = "serial,kind,value,insured\n" + "".join(
                f"EQ{n % 10000:04d},{'laptop' if n % 2 else 'phone'},{n}.5,{n % 3 == 0}\n" for n in range(options.rows)
            )
            upload = schedule_path(tenant, quote, vehicle, "/deserialize?params=" + escaped("{}"))
            started = time.perf_counter()
            response = api.http.post(upload, body=rows.encode(), headers={**headers, "Content-Type": "text/csv"})
            assert response.status_code == 200, response.body
            steps = jobs.drain(max_rounds=options.rows // CHUNK_ROWS + 10)
            elapsed = time.perf_counter() - started
            job = send("GET", f"/policy/{tenant}/deserializeJobs/{response.json_body['jobLocator']}")
            assert job["jobState"] == "completed", job
            print(
                f"\n  deserialize {options.rows:,} CSV rows ({len(rows) / 1e6:.1f} MB): {steps} steps, "
                f"{elapsed:.1f} s, {options.rows / elapsed:,.0f} items/s",
                flush=True,
            )
            if not options.check:
                return
            shown, last = 0, ""
            while True:
                page = send(
                    "GET",
                    f"{schedule_path(tenant, quote, vehicle)}?lastSeenLocator={last}"
                    if last
                    else schedule_path(tenant, quote, vehicle),
                )
                if not page["items"]:
                    break
                shown, last = shown + len(page["items"]), page["lastSeenLocator"]
            assert shown == options.rows, shown
            print(f"  {shown:,} items shown, page by page", flush=True)


if __name__ == "__main__":
    main()
