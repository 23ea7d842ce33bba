"""Shared fixtures: one emulated AWS per test session, a fresh tenant and a fixed clock per test."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Before anything builds a boto3 client: fake credentials, and never a real AWS endpoint.
os.environ.update({
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
    "PAS_STAGE": "test",
})
os.environ.pop("PAS_AWS_ENDPOINT_URL", None)


@pytest.fixture(scope="session")
def aws() -> Iterator[None]:
    import boto3
    from moto import mock_aws

    from chalicelib.runtime.settings import reload
    from chalicelib.storage import clients, queues
    from local.resources import create_all

    reload()
    with mock_aws(), _lean_moto_dynamodb():
        clients.reset()
        queues.reset()
        create_all(boto3.session.Session(region_name="us-east-1"))
        yield
        clients.reset()
        queues.reset()


@contextmanager
def _lean_moto_dynamodb() -> Iterator[None]:
    """Two moto costs that grow with the table, which one session shares, and make the suite quadratic:
    before each action of a TransactWriteItems moto deep-copies the whole table (its rollback copy), and
    every Query first sorts the whole table. Here a transaction backs up only the items it touches and
    puts those back when it fails, and a Query skips the whole-table sort (it sorts its own matches)."""
    import copy

    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    original_transact, original_query = DynamoDBBackend.transact_write_items, Table.query

    def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
        backups = []
        for action in transact_items:
            op = next(iter(action.values()))
            table = backend.tables.get(op.get("TableName"))
            key = op.get("Key") or op.get("Item") or {}
            if table is None or table.hash_key_attr not in key or (
                    table.range_key_attr is not None and table.range_key_attr not in key):
                continue  # moto rejects it before changing anything
            hash_key = DynamoType(key[table.hash_key_attr])
            range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
            backups.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        Table.__deepcopy__ = lambda table, memo: table  # moto's whole-table copy: now free, and unused
        try:
            original_transact(backend, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(backups):
                items = table.items if range_key is None else table.items[hash_key]
                slot = hash_key if range_key is None else range_key
                if item is None:
                    items.pop(slot, None)
                else:
                    items[slot] = item
            raise
        finally:
            del Table.__deepcopy__

    def query(table: Any, *args: Any, **kwargs: Any) -> Any:
        table.all_items = lambda: [item for items in table.items.values() for item in items.values()]
        try:
            return original_query(table, *args, **kwargs)
        finally:
            del table.all_items

    DynamoDBBackend.transact_write_items, Table.query = transact_write_items, query
    try:
        yield
    finally:
        DynamoDBBackend.transact_write_items, Table.query = original_transact, original_query


@pytest.fixture
def clock():
    from chalicelib.core.clock import FixedClock

    return FixedClock(datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc))


@pytest.fixture
def jobs():
    from chalicelib.runtime.jobs import InlineJobQueue

    return InlineJobQueue()


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


@pytest.fixture(scope="session")
def admin_token(app) -> str:
    """A session token of the bootstrap administrator (signed in once: argon2 is slow on purpose)."""
    from tests.builders import sign_in
    from chalicelib.runtime.settings import settings

    return sign_in(settings().admin_username, settings().admin_password)


@pytest.fixture
def tenant(aws) -> str:
    """A fresh tenant: every test works in its own."""
    from tests.builders import new_tenant

    return new_tenant()
