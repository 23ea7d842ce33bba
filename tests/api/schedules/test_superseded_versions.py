"""After a patch or a delete commits, its cleanup job drops what no reader can show any more: a patched
item keeps only its visible version, a deleted item's record goes. A cleanup that stops halfway leaves
the committed items as they were, and runs again to the end."""
from __future__ import annotations

import pytest

from chalicelib.runtime.job_types import JobType
from chalicelib.schedules import repository
from chalicelib.schedules.models import Owner
from tests.api.schedules.support import every_item, item, schedule_path
from tests.support.api import call, ok

CLEANUP = frozenset({JobType.SCHEDULE_ITEMS_CLEANUP.value})


def _stored(tenant: str, quote: tuple[str, str], locators: list[str]) -> dict[str, int]:
    """How many versions each stored record of `locators` holds (a deleted record is absent)."""
    partition = repository.partition(tenant, Owner(kind="quote", locator=quote[0], staticElementLocator=quote[1]))
    return {locator: len(found.versions)
            for locator, found in repository.items_by_locator(tenant, partition, locators).items()}


def _changed(api, token, tenant, quote) -> tuple[list[dict], list[str]]:
    """60 items, the first 40 patched and the last 20 deleted; the visible items and every locator."""
    path = schedule_path(tenant, *quote)
    ok(call(api, "PUT", path, token, [item(f"AB{n:04d}", value=str(n)) for n in range(60)]))
    locators = [entry["locator"] for entry in every_item(api, token, path)]
    ok(call(api, "PATCH", path, token, [{"locator": locator, "setData": {"kind": "phone"}, "removeData": {}}
                                        for locator in locators[:40]]))
    assert call(api, "DELETE", path, token, locators[40:]).status_code == 200
    return every_item(api, token, path), locators


def test_the_cleanup_keeps_the_visible_version_of_patched_items_and_removes_deleted_ones(
        api, admin_token, tenant, quote, jobs):
    visible, locators = _changed(api, admin_token, tenant, quote)
    assert [entry["data"]["kind"] for entry in visible] == ["phone"] * 40
    assert _stored(tenant, quote, locators) == {locator: 2 for locator in locators}  # before the cleanup

    assert jobs.drain(job_types=CLEANUP) == 2  # the patch's and the delete's

    assert _stored(tenant, quote, locators) == {locator: 1 for locator in locators[:40]}
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible
    patched = call(api, "PATCH", schedule_path(tenant, *quote), admin_token, [
        {"locator": locators[0], "setData": {"value": "7"}, "removeData": {}}])
    assert ok(patched)["success"] is True  # the cleanup let the schedule's lock go
    assert every_item(api, admin_token, schedule_path(tenant, *quote))[0]["data"]["value"] == 7


def test_a_cleanup_that_fails_halfway_leaves_the_committed_items_and_finishes_when_run_again(
        api, admin_token, tenant, quote, jobs, monkeypatch):
    visible, locators = _changed(api, admin_token, tenant, quote)
    trimmed_only = monkeypatch.context()
    with trimmed_only as patch:
        def broken(tenant: str, partition: str, locators: list[str]) -> None:
            if locators:
                raise ConnectionError("the worker lost DynamoDB")
        patch.setattr(repository, "delete_items", broken)
        with pytest.raises(ConnectionError):
            jobs.drain(job_types=CLEANUP)  # the patch's cleanup ran; the delete's stopped after trimming
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible
    assert _stored(tenant, quote, locators) == {**{locator: 1 for locator in locators[:40]},
                                                **{locator: 2 for locator in locators[40:]}}

    jobs.messages.extend(message.model_dump_json() for message in jobs.sent[-1:])  # SQS delivers it again
    assert jobs.drain(job_types=CLEANUP) == 1
    assert _stored(tenant, quote, locators) == {locator: 1 for locator in locators[:40]}
    assert every_item(api, admin_token, schedule_path(tenant, *quote)) == visible
