"""A `rate` call through the tenant function (the `lambda` runner) against the same call in the local sandbox,
cold and warm, in one run (issue 30, "Measured").

The plugin is benchmarks/plugins.py's: 20 vehicles priced with 5 lookups and 5 range lookups, answered by an
in-memory HostApi (the runners' own cost; on AWS add the table reads the host makes). The tenant function is
published as its deployment's job publishes it (plugins/tenant_code.py: package, function, version, alias; not
the libraries' layer) into moto's Lambda, IAM and S3 in this process, and invoked by the local invoker
(plugins/local_lambda.py), which runs the published handler in the sandbox, one process per invocation: what a
Lambda invocation costs beyond that is the network hop and, cold, Lambda's own start (neither is measured here),
and less a warm one (Lambda keeps the environment; the local invoker starts a process every time). A call at the
function replays the plugin once per pas lookup (plugins/lambda_runner.py): the invocations per call are
counted, for the rate plugin and for one without lookups.

    .venv/bin/python benchmarks/tenant_function.py [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _in_process import use_emulated_aws  # noqa: E402

use_emulated_aws()
from plugins import PLUGIN, MemoryHost, percentile, rating_request  # noqa: E402

NO_LOOKUPS = b"""
def rate_Auto(request):
    return {"items": [{"elementLocator": vehicle["locator"], "chargeType": "premium", "rate": 800}
                      for vehicle in request["segment"]["element"]["elements"]]}
"""


def publish(tenant: str, version: str, files: dict[str, bytes]) -> float:
    """The tenant function of `tenant` at alias `version` running `files`, as the publish job makes it but for
    the libraries' layer (4 s to zip, and the local invoker mounts the same libraries from this environment);
    answers the seconds it took."""
    from chalicelib.plugins import repository, tenant_code

    started = time.perf_counter()
    zipped = tenant_code.package(files)
    bucket, key = repository.store_code(tenant, version, zipped)
    repository.publish(
        tenant_code.function_spec(tenant),
        bucket,
        key,
        tenant_code.code_sha256(zipped),
        alias=version,
        verify=lambda function_version: None,  # the job's import check: one invocation, not the publish's cost
    )
    return time.perf_counter() - started


def timed_calls(
    runner: Any, tenant: str, version: str, files: dict[str, bytes], calls: int
) -> tuple[float, list[float]]:
    """(the first call's seconds, the next `calls` calls' seconds)."""
    host, request = MemoryHost(), rating_request()

    def one() -> float:
        started = time.perf_counter()
        result = runner.call(tenant, version, files, "rate_Auto", request, host)
        elapsed = time.perf_counter() - started
        assert isinstance(result, dict) and len(result["items"]) == 20, result
        return elapsed

    cold = one()
    return cold, [one() for _ in range(calls)]


def report(label: str, cold: float, warm: list[float], invocations: float | None = None) -> None:
    per_call = f"   {invocations:4.1f} invocations a call" if invocations is not None else ""
    print(
        f"{label:<36} cold {cold * 1000:7.1f} ms   warm median {statistics.median(warm) * 1000:7.1f} ms   "
        f"p99 {percentile(warm, 0.99) * 1000:7.1f} ms{per_call}   ({len(warm)} warm calls)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20, help="warm calls measured on each path")
    calls = parser.parse_args().calls

    import boto3
    from moto import mock_aws

    import app  # noqa: F401  the composition root, as every entry point
    from chalicelib.plugins.lambda_runner import LambdaRunner
    from chalicelib.plugins.local import LocalProcessRunner
    from chalicelib.plugins.local_lambda import LocalLambda
    from chalicelib.settings import settings
    from local.resources import create_all

    with mock_aws():
        create_all(boto3.session.Session(region_name="us-east-1"))
        invoker = LocalLambda()
        in_function = LambdaRunner(settings().plugin_function_name, invoke=invoker)
        local = LocalProcessRunner()
        try:
            for number, (label, plugin) in enumerate((("10 lookups", PLUGIN), ("no lookups", NO_LOOKUPS))):
                files = {"plugins/python/rating.py": plugin}
                tenant, version = str(uuid.uuid4()), f"01BENCH{number}"
                seconds = publish(tenant, version, files)
                print(f"publish ({label}): {seconds * 1000:.0f} ms (package, function, version, alias in moto)")
                cold, warm = timed_calls(local, tenant, version, files, calls)
                report(f"local sandbox, {label}", cold, warm)
                before = len(invoker.invocations)
                cold, warm = timed_calls(in_function, tenant, version, files, calls)
                report(f"tenant function, {label}", cold, warm, (len(invoker.invocations) - before) / (calls + 1))
        finally:
            local.close()
            invoker.close()


if __name__ == "__main__":
    main()
