"""`make test`'s coverage stops its tracer while the in-process moto answers a DynamoDB or S3 call
(tests/support/untraced.py): the lines it records of chalicelib are the same as with every call traced. Two
interpreters measure the same service calls (a tenant made and the tenants listed, an S3 write) with coverage's C
tracer, one with the calls untraced, one with PAS_TRACE_AWS_CALLS=1, and their lines are compared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, os, sys
os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "PAS_STAGE": "test",
                   "PAS_EVENT_SETTLE_MS": "0", "PAS_AWS_UNSIGNED": "1",
                   "POWERTOOLS_TRACE_DISABLED": "1"})
os.environ.pop("PAS_AWS_ENDPOINT_URL", None)
import coverage
measured = coverage.Coverage(source=["chalicelib"], data_file=None, config_file=False)
measured.start()
from datetime import datetime, timezone
import boto3
from botocore.client import BaseClient
from moto import mock_aws
import app  # noqa: F401
from chalicelib.identity import service as identity
from chalicelib.core.clock import FixedClock
from chalicelib.runtime import wiring
from chalicelib.runtime.jobs import InlineJobQueue
from chalicelib.storage import clients
from local.lean_moto import lean_dynamodb
from local.resources import create_all
from tests.builders import new_tenant
from tests.support.untraced import aws_calls_untraced

with mock_aws(), lean_dynamodb(), aws_calls_untraced():
    untraced = BaseClient._make_request.__module__ == "tests.support.untraced"
    clients.reset()
    create_all(boto3.session.Session(region_name="us-east-1"))
    wiring.override(clock=FixedClock(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)), job_queue=InlineJobQueue())
    tenant = new_tenant()
    assert tenant in [found.locator for found in identity.tenants_after(None, 100)[0]]
    from chalicelib.settings import settings
    clients.s3().put_object(Bucket=settings().bucket_name, Key="probe", Body=b"x")
measured.stop()
lines = measured.get_data()
found = {name: sorted(lines.lines(name) or []) for name in lines.measured_files()}
print(json.dumps({"untraced": untraced, "lines": found}))
"""


def _measured(trace_aws_calls: bool) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COV_", "COVERAGE_"))}
    env["PAS_TRACE_AWS_CALLS"] = "1" if trace_aws_calls else "0"
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_coverage_records_the_same_lines_with_the_emulated_aws_calls_untraced():
    untraced, traced = _measured(trace_aws_calls=False), _measured(trace_aws_calls=True)
    assert (untraced["untraced"], traced["untraced"]) == (True, False)
    assert untraced["lines"] == traced["lines"]
    assert any(name.endswith("chalicelib/identity/service.py") for name in untraced["lines"])
