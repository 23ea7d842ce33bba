"""What the fuzzing (test_fuzzing.py) runs over, and how much of it: the schema of our own `/openapi.json`, its
operations, and the requests a whole run must send (tests/architecture/conftest.py counts them)."""
from __future__ import annotations

import math
import os

import schemathesis

from app import app as chalice_app
from chalicelib.apidocs import openapi

MIN_REQUESTS = 5000
"""A whole run (every operation) sends at least this many requests: tests/architecture/conftest.py counts."""
schema = schemathesis.openapi.from_dict(openapi.document(chalice_app.routes))
OPERATIONS = sum(1 for _ in schema.get_all_operations())
EXAMPLES_PER_OPERATION = int(os.environ.get("PAS_FUZZ_EXAMPLES") or math.ceil(MIN_REQUESTS * 1.25 / OPERATIONS))
"""A quarter more than MIN_REQUESTS asks (an operation with few inputs has fewer examples than this): as routes
are added, each gets fewer, and `make test` spends the same time fuzzing. `make fuzz` runs 500 an operation."""
