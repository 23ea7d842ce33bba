"""Deploying the largest real package: mgt-commercial (290 JSON files, 71 bootstrap CSVs, 3 products).

Runs the whole HTTP path in-process (chalice test client, moto for DynamoDB and S3) and prints, for
createTenant (validation, tenant record, 71 bootstrap files, first version), a redeploy, a cold and a
warm data-model read and a download: the wall time and the DynamoDB and S3 calls each one made.
moto answers in microseconds, so the times are the service's own CPU work; on AWS add one network
round trip per call (bootstrap files go up 8 at a time).

    .venv/bin/python benchmarks/config_deploy.py [--repeat N]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tests" / "fixtures" / "socotra-configs" / "mgt-commercial"

os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "benchmark",
        "AWS_SECRET_ACCESS_KEY": "benchmark",
        "AWS_SESSION_TOKEN": "benchmark",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "PAS_STAGE": "test",
    }
)
os.environ.pop("PAS_AWS_ENDPOINT_URL", None)
sys.path.insert(0, str(ROOT))

from _in_process import Calls  # noqa: E402


def package_zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


def measure(label: str, calls: Calls, action: Callable[[], Any], repeat: int) -> Any:
    times, result = [], None
    for _ in range(repeat):
        calls.counts.clear()
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    ddb, s3 = calls.of("dynamodb"), calls.of("s3")
    print(f"{label:<34} {statistics.median(times) * 1000:8.1f} ms   DynamoDB {sum(ddb.values()):3d} {ddb}")
    print(f"{'':<34} {'':>11}   S3       {sum(s3.values()):3d} {s3}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per step; the median time is shown")
    repeat = parser.parse_args().repeat

    import boto3
    from chalice.test import Client
    from moto import mock_aws

    from chalicelib.configuration import cache
    from chalicelib.core.clock import SystemClock
    from chalicelib.core.ids import new_locator
    from chalicelib.identity import service as identity
    from chalicelib.settings import reload, settings
    from chalicelib.storage import clients
    from local.resources import create_all

    reload()
    with mock_aws():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        from app import app

        token, _ = identity.sign_in(
            settings().admin_username, settings().admin_password, SystemClock().now(), new_locator()
        )
        calls = Calls()
        calls.attach(clients.dynamodb(), "dynamodb")
        calls.attach(clients.s3(), "s3")
        body = package_zip(PACKAGE)
        upload = {"Authorization": f"Bearer {token}", "Content-Type": "application/zip", "Accept": "application/zip"}
        read = {"Authorization": f"Bearer {token}", "Accept": "application/zip"}
        files = len([p for p in PACKAGE.rglob("*") if p.is_file()])
        print(f"mgt-commercial: {files} files, {len(body) / 1024:.0f} KiB zipped; median of {repeat} run(s)\n")

        with Client(app, stage_name="test", project_dir=str(ROOT)) as api:

            def check(response: Any) -> Any:
                assert response.status_code == 200, response.body[:500]
                return response

            def create() -> str:
                result = check(api.http.post("/config/createTenant?name=mgt", headers=upload, body=body)).json_body
                assert result["deploymentResult"]["isSuccess"], result["deploymentResult"]["errors"]
                return result["locator"]

            tenant = measure("createTenant (with 71 bootstrap CSVs)", calls, create, repeat)
            measure(
                "redeploy (deployments/deploy)",
                calls,
                lambda: check(api.http.post(f"/config/{tenant}/deployments/deploy", headers=upload, body=body)),
                repeat,
            )

            def cold_datamodel() -> Any:
                cache.clear()
                return check(api.http.get(f"/config/{tenant}/deployments/datamodel", headers=read))

            measure("datamodel, cold process", calls, cold_datamodel, repeat)
            measure(
                "datamodel, warm",
                calls,
                lambda: check(api.http.get(f"/config/{tenant}/deployments/datamodel?resolve=true", headers=read)),
                repeat,
            )
            measure(
                "download",
                calls,
                lambda: check(api.http.get(f"/config/{tenant}/deployments/download", headers=read)),
                repeat,
            )
            measure(
                "validateConfig",
                calls,
                lambda: check(api.http.post("/config/validateConfig", headers=upload, body=body)),
                repeat,
            )


if __name__ == "__main__":
    main()
