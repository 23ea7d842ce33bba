"""A cold start near its floor (issue 28 point 6; benchmarks/cold_start.py measures it): a fresh process that
imports the app and answers its first authenticated request loads none of the heavy libraries no such request
needs: the PDF and template stacks (documents render in a sandboxed child), the test tools, the X-Ray SDK where
traces go nowhere (tests, `make run`), the API description's generator."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

HEAVY = [
    "xhtml2pdf",
    "reportlab",
    "liquid",
    "airspeed",
    "schemathesis",
    "hypothesis",
    "aws_xray_sdk",
    "chalicelib.apidocs.openapi",
    "chalicelib.documents.rendering",
    "chalicelib.documents.templates",
    "jsonschema",
    "openapi_spec_validator",
]

PROBE = textwrap.dedent("""
    import json, os, sys
    os.environ.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "PAS_STAGE": "test",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "POWERTOOLS_TRACE_DISABLED": "1"})
    from moto import mock_aws

    with mock_aws():
        import boto3

        from local.resources import create_all

        create_all(boto3.session.Session(region_name="us-east-1"))
        before = [name for name in HEAVY if name in sys.modules]  # what the emulator itself loaded

        import app
        from chalicelib.core.clock import SystemClock
        from chalicelib.identity import service
        from chalicelib.settings import settings

        token, _ = service.sign_in(settings().admin_username, settings().admin_password, SystemClock().now(), "probe")
        path = "/auth/users/whoami"
        event = {"resource": path, "path": path, "httpMethod": "GET", "headers": {"Authorization": "Bearer " + token},
                 "multiValueHeaders": {}, "queryStringParameters": None, "multiValueQueryStringParameters": None,
                 "pathParameters": None, "stageVariables": None, "body": None, "isBase64Encoded": False,
                 "requestContext": {"resourcePath": path, "httpMethod": "GET", "path": "/api" + path,
                                    "requestId": "probe", "stage": "api", "identity": {"sourceIp": "127.0.0.1"}}}
        answer = app.app(event, None)
        print(json.dumps({"status": answer["statusCode"], "before": before,
                          "loaded": [name for name in HEAVY if name in sys.modules]}))
""")


def test_the_first_authenticated_request_loads_no_heavy_library():
    result = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["status"] == 200
    assert found["before"] == []  # else the probe could not tell
    assert found["loaded"] == []
