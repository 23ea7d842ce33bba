"""Cold start: `import app` in fresh interpreters, and what the first requests add by loading the modules the
route modules defer (chalicelib/http/lazy.py: request/response schemas and services).

    .venv/bin/python benchmarks/cold_start.py [--runs N] [--root DIR]      (or: make bench)

Per run, one fresh interpreter measures, in itself: the wall and CPU time of `import app`, then of loading
every lazy module of every route module (what the first request of each domain pays, all together), and
which known-heavy modules the import alone loaded; another measures the SQS worker function's handler module
(`chalicelib.workers.queue`, which Lambda imports instead of app.py), then the job handlers it loads on its
first message. CPU time is the steadier figure on a shared machine.
`--root` measures another checkout (e.g. a `git archive` of an older commit) with this interpreter.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ["boto3", "botocore", "aws_lambda_powertools", "argon2", "chalicelib.quotes.service",
         "chalicelib.quickquotes.service", "chalicelib.priceable.runner", "chalicelib.plugins.service",
         "chalicelib.events.service", "chalicelib.accounts.service", "chalicelib.policies.service",
         "chalicelib.identity.service", "chalicelib.configuration.datamodel"]

PROBE = """
import importlib, json, sys, time
wall, cpu = time.perf_counter(), time.process_time()
import app
imported = (time.perf_counter() - wall, time.process_time() - cpu)
loaded_at_import = [m for m in HEAVY if m in sys.modules]
wall, cpu = time.perf_counter(), time.process_time()
for name in list(sys.modules):
    if name.startswith("chalicelib.") and name.endswith(".routes"):
        for value in list(vars(sys.modules[name]).values()):
            if type(value).__name__ == "LazyModule":
                value.__name__  # the first attribute read imports the module
deferred = (time.perf_counter() - wall, time.process_time() - cpu)
print(json.dumps({"import": imported, "deferred": deferred, "heavy": loaded_at_import}))
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


def run_once(root: Path) -> dict:
    environ = {**os.environ, "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
               "AWS_DEFAULT_REGION": "us-east-1", "PAS_STAGE": "test", "PYTHONPATH": str(root)}
    sample = {}
    for probe in (f"HEAVY = {HEAVY!r}\n{PROBE}", WORKER_PROBE):
        result = subprocess.run([sys.executable, "-c", probe], cwd=root, env=environ,
                                capture_output=True, text=True, check=True)
        sample.update(json.loads(result.stdout.strip().splitlines()[-1]))
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh interpreters (default 9)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    arguments = parser.parse_args()
    run_once(arguments.root)  # writes the bytecode caches, as a deployed bundle has them
    samples = [run_once(arguments.root) for _ in range(arguments.runs)]

    def median_ms(part: str, index: int) -> float:
        return statistics.median(sample[part][index] for sample in samples) * 1000

    load = os.getloadavg()[0]
    print(f"{arguments.root}: median of {arguments.runs} fresh interpreters, load average {load:.1f}")
    print(f"  import app:            {median_ms('import', 0):7.0f} ms wall  {median_ms('import', 1):7.0f} ms CPU")
    print(f"  + every lazy module:   {median_ms('deferred', 0):7.0f} ms wall  {median_ms('deferred', 1):7.0f} ms CPU")
    print(f"  heavy modules loaded by the import: {', '.join(samples[-1]['heavy']) or 'none'}")
    if all("worker import" in sample for sample in samples):  # the SQS worker function (another Lambda handler)
        print(f"  worker: import:        {median_ms('worker import', 0):7.0f} ms wall  "
              f"{median_ms('worker import', 1):7.0f} ms CPU")
        print(f"  + its job handlers:    {median_ms('worker handlers', 0):7.0f} ms wall  "
              f"{median_ms('worker handlers', 1):7.0f} ms CPU")


if __name__ == "__main__":
    main()
