"""Lookup tables at scale: uploading a 100,000-row table, then 10,000 lookups through the service.

Runs in-process against moto (DynamoDB and S3) and prints, for the upload, the wall time and the AWS
calls it made, and for each lookup pattern the median and p99 latency and the DynamoDB calls per
lookup. moto answers in about a millisecond of Python work per call, so times are the service's CPU
plus moto's; on AWS add a network round trip (single-digit milliseconds) per call, and the upload's
BatchWriteItem calls run 8 at a time.

    .venv/bin/python benchmarks/tables.py [--rows 100000] [--lookups 10000]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

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

STATES = ["CA", "NY", "TX", "FL", "WA", "IL", "PA", "OH", "GA", "NC"]


def package() -> bytes:
    """A configuration declaring the table `Territories` (key: state, zip)."""
    model = {
        "defaultCurrency": "USD",
        "accounts": {"Person": {"data": {"name": {"type": "string"}}}},
        "products": {"Auto": {"eligibleAccountTypes": ["Person"], "contents": ["Vehicle+"], "charges": ["premium"]}},
        "exposures": {"Vehicle": {"data": {"vin": {"type": "string"}}}},
        "charges": {"premium": {"category": "premium"}},
    }
    table = {
        "selectionTimeBasis": "termStartTime",
        "columns": {
            "state": {"dataType": "string", "isKey": True},
            "zip": {"dataType": "int", "isKey": True},
            "territory": {"dataType": "int", "isKey": False},
            "factor": {"dataType": "decimal", "isKey": False},
            "city": {"dataType": "string", "isKey": False},
        },
    }
    files = {
        "config.json": json.dumps({k: v for k, v in model.items() if not isinstance(v, dict)}),
        "tables/Territories/config.json": json.dumps(table),
    }
    for collection, entities in model.items():
        if isinstance(entities, dict):
            for name, body in entities.items():
                files[f"{collection}/{name}/config.json"] = json.dumps(body)
    return _zip(files)


def table_csv(rows: int) -> tuple[bytes, list[list[str]]]:
    keys = [[STATES[n % len(STATES)], str(10000 + n // len(STATES))] for n in range(rows)]
    lines = ["state,zip,territory,factor,city"] + [
        f"{state},{zip_code},{n % 900},{1 + (n % 97) / 100:.2f},City {n}" for n, (state, zip_code) in enumerate(keys)
    ]
    return _zip({"territories.csv": "\n".join(lines) + "\n"}), keys


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--lookups", type=int, default=10_000)
    options = parser.parse_args()

    import boto3
    from moto import mock_aws

    from chalicelib.configuration import service as configuration
    from chalicelib.core.context import SYSTEM, CallContext
    from chalicelib.core.ids import new_locator
    from chalicelib.runtime import wiring
    from chalicelib.settings import reload
    from chalicelib.storage import clients
    from chalicelib.tables import cache, service
    from chalicelib.tables.models import TableKind
    from local.lean_moto import lean_dynamodb
    from local.resources import create_all

    reload()
    # moto copies the whole table before each TransactWriteItems (its rollback copy): with 100,000 rows
    # stored that copy, not the service, would dominate; the tests' lean variant backs up touched items only
    with mock_aws(), lean_dynamodb():
        clients.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        import app  # noqa: F401  (registers every job handler, as the deployed app does)

        def ctx(tenant: str | None = None) -> CallContext:
            return CallContext(
                principal=SYSTEM, request_id=new_locator(), now=wiring.clock().now(), tenant_locator=tenant
            )

        tenant = configuration.create_tenant(ctx(), package(), name="benchmark", description=None).locator
        calls = Calls()
        calls.attach(clients.dynamodb(), "dynamodb")
        calls.attach(clients.s3(), "s3")
        upload, keys = table_csv(options.rows)

        started = time.perf_counter()
        service.create_table(
            ctx(tenant),
            TableKind.LOOKUP,
            name="Territories2026",
            static_name="Territories",
            jurisdictions=[],
            upload=upload,
        )
        upload_seconds = time.perf_counter() - started
        ddb, s3 = calls.of("dynamodb"), calls.of("s3")
        print(f"Upload of a {options.rows:,}-row lookup table ({len(upload) / 1024:.0f} KiB zipped)")
        print(f"  {'wall time':<22} {upload_seconds:8.2f} s   ({options.rows / upload_seconds:,.0f} rows/s)")
        print(f"  {'DynamoDB calls':<22} {sum(ddb.values()):8d}     {ddb}")
        print(f"  {'S3 calls':<22} {sum(s3.values()):8d}     {s3}\n")

        rng = random.Random(7)
        patterns = {
            "distinct keys, cold process": [keys[i] for i in rng.sample(range(len(keys)), options.lookups)],
            "100 hot keys, warm process": [keys[rng.randrange(100)] for _ in range(options.lookups)],
        }
        print(f"{options.lookups:,} lookups through tables.service.lookup")
        print(f"  {'pattern':<30} {'median':>9} {'p99':>9} {'DynamoDB calls/lookup':>22}   calls")
        for index, (label, wanted) in enumerate(patterns.items()):
            if index == 0:
                cache.clear()
            calls.counts.clear()
            times = []
            for key in wanted:
                started = time.perf_counter()
                found = service.lookup(ctx(tenant), "Territories", key)
                times.append(time.perf_counter() - started)
                assert found is not None
            ddb = calls.of("dynamodb")
            print(
                f"  {label:<30} {statistics.median(times) * 1000:7.3f}ms {percentile(times, 0.99) * 1000:7.3f}ms "
                f"{sum(ddb.values()) / len(wanted):22.4f}   {ddb}"
            )


if __name__ == "__main__":
    main()
