"""What the fuzzing (test_fuzzing.py) runs over, and how much of it: the schema of our own `/openapi.json`, its
operations, and the requests a whole run must send (tests/architecture/conftest.py counts them)."""

from __future__ import annotations

import math
import os

import schemathesis

from app import app as chalice_app
from chalicelib.apidocs import openapi

MIN_REQUESTS = 2500
"""A whole run (every operation) sends at least this many requests: tests/architecture/conftest.py counts. Was
5,000 until stop 38 (then 3,000, and 2,500 once the simulation's 200 seeds joined the suite): at some 0.035 s of
CPU a request (two thirds of it schemathesis drawing the request) the fuzzing was a sixth of the suite's time;
`make fuzz` sends up to 500 an operation."""
schema = schemathesis.openapi.from_dict(openapi.document(chalice_app.routes))
OPERATIONS = sum(1 for _ in schema.get_all_operations())
EXAMPLES_PER_OPERATION = int(os.environ.get("PAS_FUZZ_EXAMPLES") or math.ceil(MIN_REQUESTS / OPERATIONS))
"""MIN_REQUESTS shared over the operations, rounded up: as routes are added, each gets fewer, and `make test` spends
the same time fuzzing. An operation with few inputs sends fewer than this, and the examples phase adds the schema's
own examples, which more than makes up for them: 9 an operation over 369 sent 3,483 requests, 8 sent 3,119 (1.05
and 1.06 times the operations times the count), so 7 sends some 2,700. Was a quarter more than MIN_REQUESTS until
stop 46 (3,483 requests, 39 % over what a run must send; tests/architecture/conftest.py still fails a whole run
that sends fewer than MIN_REQUESTS). `make fuzz` runs 500 an operation."""
COVERAGE_PHASE = bool(os.environ.get("PAS_FUZZ_COVERAGE"))
"""schemathesis's coverage phase (deterministic cases at every boundary of every schema, valid and invalid, and
each undeclared method) runs in `make fuzz` only. Its count follows the size of the schemas, not
EXAMPLES_PER_OPERATION: some 25,000 requests over our operations (five times the rest of the run, 80 % of the
fuzzing's time), which would put `make test` over its 10-minute budget. `make test` keeps the examples and
the fuzzing phases: valid and invalid requests, at least MIN_REQUESTS of them."""
schema.config.phases.update(phases=["examples", "fuzzing", *(["coverage"] if COVERAGE_PHASE else [])])
