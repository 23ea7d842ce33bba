"""Shared fixtures: one emulated AWS per test session, a fresh tenant and a fixed clock per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest_plugins = ["tests.support.coverage_scope"]  # which tests coverage measures, when it runs (make test)

# Before anything builds a boto3 client: fake credentials, and never a real AWS endpoint.
os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "PAS_STAGE": "test",
        "PAS_EVENT_SETTLE_MS": "0",
        "PAS_AWS_UNSIGNED": "1",  # moto checks no signature (settings.aws_unsigned)
        "POWERTOOLS_TRACE_DISABLED": "1",  # the Tracer runs, X-Ray does not (there is no daemon to send to)
    }
)
os.environ.pop("PAS_AWS_ENDPOINT_URL", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `before_the_session_grows` run first: each walks every tenant the process made (a schedule's
    fan-out enqueues a job for each), so late in a worker's run it cost a minute. First in the list, they run
    first in the first worker (`--dist worksteal` hands each worker its share in order), what they assert the
    same."""
    first = [item for item in items if item.get_closest_marker("before_the_session_grows")]
    if first:
        items[:] = first + [item for item in items if not item.get_closest_marker("before_the_session_grows")]


DEPLOYED: dict[str, Any] = {}
"""What the session's shortcuts replaced, for tests/architecture/test_test_shortcuts.py."""


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing() -> Iterator[None]:
    """argon2id with the least work it takes (1 pass over 64 KiB) instead of RFC 9106's (3 over 64 MiB, 4
    lanes: a quarter of a second of CPU per hash or check): sign-in tests hash and check hundreds of times.
    Hashes of either kind check with the other (tests/architecture/test_test_shortcuts.py, which also holds
    the deployed parameters to RFC 9106)."""
    from argon2 import PasswordHasher

    from chalicelib.identity import passwords

    cheap = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    DEPLOYED["password hasher"], passwords._hasher = passwords._hasher, lambda: cheap  # type: ignore[assignment]
    passwords._dummy_hash.cache_clear()
    try:
        yield
    finally:
        passwords._hasher = DEPLOYED.pop("password hasher")
        passwords._dummy_hash.cache_clear()


@pytest.fixture(scope="session")
def aws() -> Iterator[None]:
    import boto3
    from moto import mock_aws

    import app  # noqa: F401  the composition root wires the ports (the tenant's clock, the authenticator)
    from chalicelib.settings import reload
    from chalicelib.storage import clients, queues
    from chalicelib.workers.handlers import load_job_handlers
    from local.lean_moto import lean_dynamodb
    from local.moto_lambda import never_reused_versions
    from local.resources import create_all
    from tests.support.untraced import aws_calls_untraced

    reload()
    never_reused_versions()  # as AWS: a deleted function version's number is never published again
    # one table serves the whole session: moto's costs that grow with it would make the suite quadratic
    with mock_aws(), lean_dynamodb(), aws_calls_untraced():
        clients.reset()
        queues.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        load_job_handlers()  # as the SQS worker does on its first message: InlineJobQueue.drain dispatches
        yield
        clients.reset()
        queues.reset()


@pytest.fixture
def clock():
    from chalicelib.core.clock import FixedClock

    return FixedClock(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc))


@pytest.fixture
def jobs():
    from chalicelib.runtime.jobs import InlineJobQueue

    return InlineJobQueue()


@pytest.fixture(autouse=True)
def declared_errors_only() -> Iterator[None]:
    """A route that answers an error code it does not declare fails the test: the generated OpenAPI lists
    each route's codes from its declaration, so the description stays true. With PAS_RECORD_UNDECLARED set
    to a folder, the codes are written there instead (one file per process), to declare them at once."""
    from chalicelib.http import endpoint

    seen: list[tuple[str, str]] = []
    endpoint.undeclared_error_seen = lambda view, code: seen.append((view, code))
    yield
    endpoint.undeclared_error_seen = None
    folder = os.environ.get("PAS_RECORD_UNDECLARED")
    if folder:
        with open(Path(folder) / f"{os.getpid()}.tsv", "a") as record:
            record.writelines(f"{view}\t{code}\n" for view, code in seen)
        return
    assert not seen, (
        "routes answered error codes they do not declare (add them to @endpoint(errors=...)): "
        + ", ".join(sorted({f"{view}: {code}" for view, code in seen}))
    )


@pytest.fixture(autouse=True)
def wired(request, clock, jobs) -> Iterator[None]:
    from chalicelib.runtime import wiring

    wiring.override(clock=clock, job_queue=jobs)
    yield
    wiring.reset()


@pytest.fixture(scope="session")
def app(aws):
    from app import app as chalice_app

    return chalice_app


@pytest.fixture
def api(app):
    from chalice.test import Client

    with Client(app, stage_name="test", project_dir=str(ROOT)) as client:
        yield client


@pytest.fixture
def ddb_calls(aws) -> Iterator[list[str]]:
    """The names of the DynamoDB operations made while the test runs (clear() between requests)."""
    from chalicelib.storage import clients

    calls: list[str] = []

    def count(event_name: str, **_: object) -> None:
        calls.append(event_name.rsplit(".", 1)[-1])

    events = clients.dynamodb().meta.events
    events.register("before-call.dynamodb", count)
    yield calls
    events.unregister("before-call.dynamodb", count)


@dataclass
class Read:
    """One DynamoDB read call: its operation, the keys it asked for by key (GetItem, BatchGetItem), the
    partition it queried, and the items it answered with their size as DynamoDB counts it (what read
    units and a Query's 1 MB page are counted in)."""

    operation: str
    keys: list[tuple[str, str]]
    partition: str | None
    items: int = 0
    bytes: int = 0


class Reads(list[Read]):
    """The `ddb_reads` fixture's record (clear() between requests)."""

    @property
    def bytes(self) -> int:
        return sum(read.bytes for read in self)

    @property
    def items(self) -> int:
        return sum(read.items for read in self)

    def of_key(self, pk: str, sk: str = "#ROOT") -> list[Read]:
        """The GetItem and BatchGetItem calls that asked for the item (pk, sk)."""
        return [read for read in self if (pk, sk) in read.keys]


READ_OPERATIONS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})


@pytest.fixture
def ddb_reads(aws) -> Iterator[Reads]:
    """Every DynamoDB read made while the test runs, with the keys asked for and the bytes answered."""
    from chalicelib.storage import clients, codec

    reads = Reads()

    def before(event_name: str, params: dict[str, Any], **_: object) -> None:
        operation = event_name.rsplit(".", 1)[-1]
        if operation not in READ_OPERATIONS:
            return
        asked = (
            [params["Key"]]
            if "Key" in params
            else [key for request in (params.get("RequestItems") or {}).values() for key in request.get("Keys", [])]
        )
        values = params.get("ExpressionAttributeValues") or {}
        reads.append(
            Read(
                operation,
                [(key["PK"]["S"], key["SK"]["S"]) for key in asked if "PK" in key],
                values.get(":pk", {}).get("S"),
            )
        )

    def after(event_name: str, parsed: dict[str, Any], **_: object) -> None:
        if event_name.rsplit(".", 1)[-1] not in READ_OPERATIONS or not reads:
            return
        answered = [parsed["Item"]] if parsed.get("Item") else list(parsed.get("Items") or [])
        answered += [
            item for found in (parsed.get("Responses") or {}).values() if isinstance(found, list) for item in found
        ]
        reads[-1].items += len(answered)
        reads[-1].bytes += sum(map(codec.item_size, answered))

    events = clients.dynamodb().meta.events
    events.register("before-parameter-build.dynamodb", before)
    events.register("after-call.dynamodb", after)
    yield reads
    events.unregister("before-parameter-build.dynamodb", before)
    events.unregister("after-call.dynamodb", after)


@pytest.fixture(scope="session")
def admin_token(app) -> str:
    """A session token of the bootstrap administrator (signed in once: argon2 is slow on purpose)."""
    from chalicelib.settings import settings
    from tests.builders import sign_in

    username, password = settings().admin_username, settings().admin_password
    assert username is not None and password is not None, "the test settings name the bootstrap administrator"
    return sign_in(username, password)


@pytest.fixture
def tenant(aws) -> str:
    """A fresh tenant: every test works in its own."""
    from tests.builders import new_tenant

    return new_tenant()
