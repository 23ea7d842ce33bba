"""local/durable_state.py: what the local stack acknowledged survives a restart (and a kill: nothing is kept
only in memory), the journal is merged into the snapshot by size, and a cycle with no change reads nothing."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REGION = "us-east-1"
KEY_SCHEMA = [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]


class Stack:
    """A table and a bucket of their own in the session's moto, and a state directory; `restart()` empties
    moto's copies, as a new process would find them, and restores them from the directory."""

    def __init__(self, directory: Path):
        import boto3

        self.directory = directory
        self.table_name, self.bucket = f"durable-{uuid.uuid4().hex[:8]}", f"durable-{uuid.uuid4().hex[:8]}"
        self.ddb = boto3.client("dynamodb", region_name=REGION)
        self.s3 = boto3.client("s3", region_name=REGION)
        self._create()

    def _create(self) -> None:
        self.ddb.create_table(
            TableName=self.table_name,
            BillingMode="PAY_PER_REQUEST",
            KeySchema=KEY_SCHEMA,
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("PK", "SK")],
        )
        self.s3.create_bucket(Bucket=self.bucket)

    def _drop(self) -> None:
        self.ddb.delete_table(TableName=self.table_name)
        for entry in self.s3.list_objects_v2(Bucket=self.bucket).get("Contents", []):
            self.s3.delete_object(Bucket=self.bucket, Key=entry["Key"])
        self.s3.delete_bucket(Bucket=self.bucket)

    def moto_table(self) -> Any:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(self.table_name)

    def restore(self) -> tuple[int, int]:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        from local.durable_state import DurableState

        state = DurableState(self.directory)
        try:
            return state.restore(self.moto_table(), self.bucket, s3_backends[DEFAULT_ACCOUNT_ID]["global"])
        finally:
            state.close()

    def restart(self) -> tuple[int, int]:
        self._drop()
        self._create()
        return self.restore()

    def item(self, pk: str, sk: str) -> dict[str, Any] | None:
        return self.ddb.get_item(TableName=self.table_name, Key={"PK": {"S": pk}, "SK": {"S": sk}}).get("Item")


@pytest.fixture
def stack(aws, tmp_path) -> Iterator[Stack]:
    created = Stack(tmp_path / "state")
    yield created
    created._drop()


@pytest.fixture
def recording(stack) -> Iterator[Any]:
    """A DurableState on the stack's directory that sees every change moto makes (as `make run` wires it)."""
    from local.durable_state import DurableState, watch_s3
    from local.lean_moto import lean_dynamodb

    state = DurableState(stack.directory)
    with lean_dynamodb(on_item_change=state.item_changed), watch_s3(state.object_changed):
        yield state
    state.close()


def _acknowledge(state: Any) -> None:
    """What the emulated AWS does before it answers a request."""
    position = state.record_changes()
    assert position is not None
    state.wait_until_durable(position)


POLICY = {
    "PK": {"S": "T#1"},
    "SK": {"S": "POLICY#1"},
    "premium": {"N": "1234.50"},
    "blob": {"B": b"\x00\xffbin"},
    "terms": {"L": [{"M": {"start": {"S": "2026-01-01"}, "paid": {"BOOL": True}}}]},
}


def test_what_requests_changed_is_journalled_and_comes_back_after_a_restart(stack, recording):
    stack.ddb.put_item(TableName=stack.table_name, Item=POLICY)
    stack.ddb.put_item(TableName=stack.table_name, Item={"PK": {"S": "T#1"}, "SK": {"S": "GONE"}})
    stack.ddb.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": stack.table_name,
                    "Key": {"PK": {"S": "T#1"}, "SK": {"S": "POLICY#1"}},
                    "UpdateExpression": "SET version = :v",
                    "ExpressionAttributeValues": {":v": {"N": "2"}},
                }
            },
            {"Delete": {"TableName": stack.table_name, "Key": {"PK": {"S": "T#1"}, "SK": {"S": "GONE"}}}},
        ]
    )
    stack.s3.put_object(Bucket=stack.bucket, Key="t1/config.zip", Body=b"PK\x03\x04zip", ContentType="application/zip")
    stack.s3.put_object(Bucket=stack.bucket, Key="t1/old.csv", Body=b"a,b")
    stack.s3.delete_object(Bucket=stack.bucket, Key="t1/old.csv")
    _acknowledge(recording)
    assert recording.record_changes() is None  # nothing changed since

    assert stack.restart() == (1, 1)
    assert stack.item("T#1", "POLICY#1") == {**POLICY, "version": {"N": "2"}}
    assert stack.item("T#1", "GONE") is None
    saved = stack.s3.get_object(Bucket=stack.bucket, Key="t1/config.zip")
    assert (saved["Body"].read(), saved["ContentType"]) == (b"PK\x03\x04zip", "application/zip")
    assert stack.s3.list_objects_v2(Bucket=stack.bucket)["KeyCount"] == 1


def test_a_write_torn_by_a_kill_is_dropped_and_the_journal_goes_on(stack, recording):
    from local.durable_state import JOURNAL

    stack.ddb.put_item(TableName=stack.table_name, Item=POLICY)
    _acknowledge(recording)
    recording.close()
    with (stack.directory / JOURNAL).open("ab") as journal:
        journal.write(b'["dynamodb","' + stack.table_name.encode() + b'",{"S":"T#1"},{"S":"HALF')

    assert stack.restart() == (1, 0)
    assert stack.item("T#1", "POLICY#1") == POLICY

    from local.durable_state import DurableState

    again = DurableState(stack.directory)
    again.item_changed(stack.moto_table(), *_key("T#1", "LATER"))
    stack.ddb.put_item(TableName=stack.table_name, Item={"PK": {"S": "T#1"}, "SK": {"S": "LATER"}})
    _acknowledge(again)
    again.close()
    assert stack.restart() == (2, 0)


def _key(pk: str, sk: str) -> tuple[Any, Any]:
    from moto.dynamodb.models.dynamo_type import DynamoType

    return DynamoType({"S": pk}), DynamoType({"S": sk})


def test_the_journal_is_merged_into_the_snapshot_by_size_and_a_cycle_without_changes_reads_nothing(
    stack, recording, monkeypatch
):
    from local import durable_state

    monkeypatch.setattr(durable_state, "COMPACT_FROM_BYTES", 1)
    assert recording.compact_if_due() == 0  # nothing written yet

    for n in range(20):
        stack.ddb.put_item(TableName=stack.table_name, Item={"PK": {"S": "T#1"}, "SK": {"S": f"A#{n:02d}"}})
        _acknowledge(recording)
    stack.ddb.delete_item(TableName=stack.table_name, Key={"PK": {"S": "T#1"}, "SK": {"S": "A#00"}})
    _acknowledge(recording)

    assert recording.compact_if_due() > 0
    assert recording.journal.size == 0
    assert len(recording.snapshot_file.read_bytes().splitlines()) == 19  # one record per item; the delete gone
    assert recording.compact_if_due() == 0  # no change since: nothing read

    stack.ddb.put_item(TableName=stack.table_name, Item={"PK": {"S": "T#1"}, "SK": {"S": "B"}})
    _acknowledge(recording)
    assert recording.compact_if_due() == 0  # a journal smaller than the snapshot waits
    assert stack.restart() == (20, 0)
    assert stack.item("T#1", "A#00") is None
    assert stack.item("T#1", "B") is not None


def test_a_merge_interrupted_by_a_kill_is_finished_at_the_next_start(stack, recording):
    from local.durable_state import MERGING

    stack.ddb.put_item(TableName=stack.table_name, Item=POLICY)
    _acknowledge(recording)
    recording.journal.rotate(stack.directory / MERGING)  # killed right after the rotation
    stack.ddb.delete_item(TableName=stack.table_name, Key={"PK": {"S": "T#1"}, "SK": {"S": "POLICY#1"}})
    stack.ddb.put_item(TableName=stack.table_name, Item={"PK": {"S": "T#2"}, "SK": {"S": "LATER"}})
    _acknowledge(recording)

    assert stack.restart() == (1, 0)
    assert (stack.item("T#1", "POLICY#1"), stack.item("T#2", "LATER")) == (
        None,
        {"PK": {"S": "T#2"}, "SK": {"S": "LATER"}},
    )
    assert not (stack.directory / MERGING).exists()


def test_a_snapshot_of_the_earlier_format_is_read_and_replaced(stack):
    from local.durable_state import FORMAT_1_SNAPSHOT, SNAPSHOT

    stack.directory.mkdir(parents=True)
    item = {**POLICY, "blob": {"B": base64.b64encode(b"\x00\xffbin").decode()}}
    (stack.directory / FORMAT_1_SNAPSHOT).write_text(
        json.dumps(
            {
                "format": 1,
                "dynamodb": {"items": [item]},
                "s3": {
                    "objects": [
                        {
                            "key": "t1/a.json",
                            "contentType": "application/json",
                            "body": base64.b64encode(b"{}").decode(),
                        }
                    ]
                },
            }
        )
    )

    assert stack.restore() == (1, 1)
    assert stack.item("T#1", "POLICY#1") == POLICY
    assert stack.s3.get_object(Bucket=stack.bucket, Key="t1/a.json")["ContentType"] == "application/json"
    assert not (stack.directory / FORMAT_1_SNAPSHOT).exists()
    assert (stack.directory / SNAPSHOT).exists()


def test_an_unreadable_snapshot_of_the_earlier_format_stops_the_start_with_advice(stack):
    from local.durable_state import FORMAT_1_SNAPSHOT

    stack.directory.mkdir(parents=True)
    (stack.directory / FORMAT_1_SNAPSHOT).write_text("{not json")
    with pytest.raises(SystemExit, match="make reset"):
        stack.restore()


def test_writers_waiting_at_once_share_an_fdatasync_and_none_returns_before_its_lines_are_on_disk(
    tmp_path, monkeypatch
):
    """Group commit: each request appends its lines in one write, then waits for one fdatasync that covers them;
    requests that append while an fdatasync runs share the next one."""
    import os
    import threading
    import time

    from local import durable_state

    writers, line = 8, b'["dynamodb","t",{"S":"pk"},null]\tnull\n'
    journal = durable_state.Journal(tmp_path / "journal.jsonl")
    synced_sizes: list[int] = []
    real_fdatasync = os.fdatasync

    def slow_disk(fd: int) -> None:
        if not synced_sizes:  # the first fdatasync lasts until every writer has appended
            deadline = time.monotonic() + 10
            while os.fstat(fd).st_size < writers * len(line) and time.monotonic() < deadline:
                time.sleep(0.005)
        size = os.fstat(fd).st_size
        real_fdatasync(fd)
        synced_sizes.append(size)

    monkeypatch.setattr(durable_state.os, "fdatasync", slow_disk)
    ready, late = threading.Barrier(writers), []

    def write() -> None:
        ready.wait()
        position = journal.append(line)
        journal.sync(position)
        if max(synced_sizes, default=0) < position:
            late.append(position)

    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    journal.close()

    assert late == []
    assert len(synced_sizes) <= 3  # at most two for the eight writers, and the close's own
    assert (tmp_path / "journal.jsonl").read_bytes() == line * writers
