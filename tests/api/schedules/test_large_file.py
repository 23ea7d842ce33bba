"""A CSV file of exactly six chunks through the deserialization job: terminated after its first step,
restarted, completed, every row an item once; its last chunk ends at the file's last byte, so the step that
reads it must see the end of the file in a chunk that is full (test_deserialization.py's last chunk is short).
The chunk is 500 rows here, not the service's 2,000 (CHUNK_ROWS): the steps, the chunk boundaries and the
end-of-file case are the same, and moto writes a quarter of the items (12,000 rows took 9.7 s of the test on
an idle machine, 3,000 take a quarter). The items are counted in storage (paging them back 100 at a time
through the API would cost more than the file); the API shows the first page. benchmarks/schedules.py runs a
100,000-row file at the service's chunk and measures the rate."""

from __future__ import annotations

import json
from decimal import Decimal
from urllib.parse import quote as escaped

import pytest

from chalicelib.runtime.jobs import JobMessage, dispatch
from chalicelib.schedules import repository, service
from chalicelib.schedules.models import Owner
from chalicelib.storage import clients, keys, table
from tests.api.schedules.support import csv_body, schedule_path
from tests.support.api import call, ok

CHUNK_ROWS = 500
ROWS = 6 * CHUNK_ROWS


@pytest.fixture(autouse=True)
def quarter_chunks(monkeypatch):
    assert service.CHUNK_ROWS == 4 * CHUNK_ROWS  # a quarter of the service's chunk
    monkeypatch.setattr(service, "CHUNK_ROWS", CHUNK_ROWS)


def _stored_items(partition: str) -> int:
    """The schedule's item records, counted by the partition's Query pages."""
    client, name, count, start = clients.dynamodb(), table.gateway().table_name, 0, None
    while True:
        page = client.query(
            TableName=name,
            KeyConditionExpression="PK = :pk AND begins_with(SK, :items)",
            ExpressionAttributeValues={":pk": {"S": partition}, ":items": {"S": keys.SCHEDULE_ITEM_PREFIX}},
            Select="COUNT",
            ConsistentRead=True,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        count += page["Count"]
        start = page.get("LastEvaluatedKey")
        if start is None:
            return count


def test_a_file_of_six_chunks_is_terminated_restarted_and_completed_with_each_row_an_item_once(
    api, admin_token, tenant, quote, jobs
):
    text = "serial,kind,value,insured\n" + "".join(
        f"EQ{n % 10000:04d},{'laptop' if n % 2 else 'phone'},{n}.5,{n % 3 == 0}\n" for n in range(ROWS)
    )
    body, content_type = csv_body(text, name="fleet.csv")
    path = schedule_path(tenant, *quote)
    started = api.http.post(
        f"{path}/deserialize?params=" + escaped(json.dumps({})),
        body=body,
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": content_type},
    )
    locator = ok(started)["jobLocator"]
    job_path = f"/policy/{tenant}/deserializeJobs/{locator}"

    dispatch(JobMessage.model_validate_json(jobs.messages.pop(0)))  # the first 500 rows, written, not shown
    assert call(api, "PATCH", f"{job_path}/terminate", admin_token).status_code == 200
    jobs.drain()  # the terminated run's next step does nothing; its items are dropped
    assert ok(call(api, "GET", job_path, admin_token))["jobState"] == "terminated"
    assert ok(call(api, "GET", path, admin_token))["items"] == []

    assert call(api, "PATCH", f"{job_path}/restart", admin_token).status_code == 200
    assert jobs.drain(max_rounds=ROWS // CHUNK_ROWS + 10) >= ROWS // CHUNK_ROWS

    job = ok(call(api, "GET", job_path, admin_token))
    assert (job["jobState"], job["retryCount"]) == ("completed", 1) and "processingErrors" not in job
    partition = repository.partition(tenant, Owner(kind="quote", locator=quote[0], staticElementLocator=quote[1]))
    assert _stored_items(partition) == ROWS  # the terminated run's 500 are gone
    first = ok(call(api, "GET", path, admin_token))["items"]
    assert [item["data"]["serial"] for item in first[:3]] == ["EQ0000", "EQ0001", "EQ0002"]
    assert first[1]["data"] == {"serial": "EQ0001", "kind": "laptop", "value": Decimal("1.50"), "insured": False}
