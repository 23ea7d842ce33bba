"""Persistence of schedules and deserialization jobs (storage/keys.py, "schedules").

A write of schedule items puts their versions first (in the request's own transaction when they fit,
else by BatchWriteItem: 25 a call) and then, in one transaction with its events, the write's commit
record: until that exists no reader shows them, so a failed request or job leaves nothing visible.
Patches and deletes rewrite existing items, so they hold the schedule's lock (its root item, on a lease)
from before they read until their commit; adds only create items and take no lock.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.errors import DomainError
from chalicelib.core.paging import Page, PageRequest
from chalicelib.schedules.models import DeserializationJob, Owner, ScheduleItem
from chalicelib.storage import blobs, codec, keys, table
from chalicelib.storage.keys import Key
from chalicelib.storage.table import WriteOp
from chalicelib.storage.unit_of_work import UnitOfWork

LOCK_LEASE = timedelta(seconds=60)
"""How long a patch or delete may hold the schedule before another writer may take it over."""
LAST_ITEM = f"{keys.SCHEDULE_ITEM_PREFIX}~"


def _scope(tenant: str) -> str:
    return keys.tenant_scope(tenant)


def partition(tenant: str, owner: Owner) -> str:
    return keys.schedule_partition(tenant, owner.kind, owner.locator, owner.staticElementLocator)


# --- items -----------------------------------------------------------------------------------------


def _item_record(partition_key: str, item: ScheduleItem) -> dict[str, Any]:
    return {**keys.schedule_item(partition_key, item.locator).as_dict(), "entity": "scheduleItem", **item.model_dump()}


def item_ops(partition_key: str, items: Iterable[ScheduleItem]) -> list[WriteOp]:
    """Puts of `items` for a unit of work (a write small enough for one transaction)."""
    return [table.put(_item_record(partition_key, item)) for item in items]


def write_items(tenant: str, partition_key: str, items: Iterable[ScheduleItem]) -> None:
    """Puts of `items` outside any transaction: versions that show once their write commits."""
    table.gateway().batch_write(_scope(tenant), (_item_record(partition_key, item) for item in items))


def delete_items(tenant: str, partition_key: str, locators: Collection[str]) -> None:
    """Deletes of items no reader shows any more (tombstones), by BatchWriteItem: 25 a call."""
    table.gateway().batch_delete(_scope(tenant), (keys.schedule_item(partition_key, locator) for locator in locators))


def items_by_locator(tenant: str, partition_key: str, locators: Collection[str]) -> dict[str, ScheduleItem]:
    found = table.gateway().batch_get(
        _scope(tenant), [keys.schedule_item(partition_key, locator) for locator in locators]
    )
    return {str(item["locator"]): ScheduleItem.model_validate(codec.without_keys(item)) for item in found}


def committed_tokens(tenant: str, partition_key: str, items: Iterable[ScheduleItem]) -> set[str]:
    """The write tokens among `items`' versions whose commit record exists (one BatchGetItem per hundred)."""
    tokens = {version.token for item in items for version in item.versions}
    if not tokens:
        return set()
    found = table.gateway().batch_get(_scope(tenant), [keys.schedule_commit(partition_key, token) for token in tokens])
    return {str(record["token"]) for record in found}


def visible_page(
    tenant: str, partition_key: str, last_seen: str | None, size: int
) -> list[tuple[ScheduleItem, dict[str, Any]]]:
    """Up to `size` visible items after `last_seen`, by locator, with their data: Queries of the
    schedule's item range and one BatchGetItem of the commit records they name per Query."""
    found: list[tuple[ScheduleItem, dict[str, Any]]] = []
    after = keys.SCHEDULE_ITEM_PREFIX + last_seen if last_seen else None
    start_key = None
    while len(found) < size:
        if after is None:
            raw, start_key = table.gateway().query(
                _scope(tenant),
                partition_key,
                sk_from=keys.SCHEDULE_ITEM_PREFIX,
                sk_to=LAST_ITEM,
                limit=size,
                start_key=start_key,
                consistent=True,
            )
        else:
            raw, start_key = table.gateway().query(
                _scope(tenant),
                partition_key,
                sk_after=after,
                sk_to=LAST_ITEM,
                limit=size,
                start_key=start_key,
                consistent=True,
            )
        items = [ScheduleItem.model_validate(codec.without_keys(record)) for record in raw]
        committed = committed_tokens(tenant, partition_key, items)
        for item in items:
            data = item.visible_data(committed)
            if data is not None and len(found) < size:
                found.append((item, data))
        if start_key is None:
            break
    return found


def every_visible(
    tenant: str, partition_key: str, page_size: int = 1000
) -> Iterator[tuple[ScheduleItem, dict[str, Any]]]:
    """Every visible item of the schedule, by locator, a page at a time."""
    last_seen: str | None = None
    while True:
        page = visible_page(tenant, partition_key, last_seen, page_size)
        yield from page
        if len(page) < page_size:
            return
        last_seen = page[-1][0].locator


def is_owned(tenant: str, partition_key: str) -> bool:
    """Whether a write ever committed to this schedule (before that, a transaction's schedule is its
    base's)."""
    root = table.gateway().get(_scope(tenant), keys.schedule_root(partition_key))
    return bool(root and root.get("owned"))


def mark_owned(uow: UnitOfWork, partition_key: str) -> None:
    uow.add(
        table.update(keys.schedule_root(partition_key), {"owned": True, "entity": "scheduleRoot"}, must_exist=False)
    )


def add_commit(uow: UnitOfWork, partition_key: str, token: str, kind: str, count: int) -> None:
    """The commit record of the write `token` (its items show from this transaction on)."""
    uow.add(
        table.put_new(
            {
                **keys.schedule_commit(partition_key, token).as_dict(),
                "entity": "scheduleCommit",
                "token": token,
                "kind": kind,
                "itemCount": count,
                "createdAt": isoformat(uow.ctx.now),
                "createdBy": uow.ctx.user_locator,
            }
        )
    )


# --- the writer lock of patches and deletes --------------------------------------------------------


def lock(tenant: str, partition_key: str, holder: str, now: datetime) -> None:
    """Take the schedule's lock for `holder` (409 `schedule.busy` while another writer's lease runs)."""
    key = keys.schedule_root(partition_key)
    op = WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "SET #holder = :holder, #until = :until, #entity = :entity",
            "ConditionExpression": "attribute_not_exists(#holder) OR #until < :now",
            "ExpressionAttributeNames": {"#holder": "lockHolder", "#until": "lockUntil", "#entity": "entity"},
            "ExpressionAttributeValues": {
                ":holder": {"S": holder},
                ":until": {"S": isoformat(now + LOCK_LEASE)},
                ":now": {"S": isoformat(now)},
                ":entity": {"S": "scheduleRoot"},
            },
        },
        key,
        lambda: codes.SCHEDULE_BUSY("Another change of this schedule's items is in progress; retry shortly"),
    )
    table.gateway().write(_scope(tenant), op)


def _release(partition_key: str, holder: str) -> WriteOp:
    key = keys.schedule_root(partition_key)
    return WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "SET #owned = :owned REMOVE #holder, #until",
            "ConditionExpression": "#holder = :holder",
            "ExpressionAttributeNames": {"#holder": "lockHolder", "#until": "lockUntil", "#owned": "owned"},
            "ExpressionAttributeValues": {":holder": {"S": holder}, ":owned": {"BOOL": True}},
        },
        key,
        lambda: codes.SCHEDULE_BUSY("The change took too long: another writer took the schedule over"),
    )


def release_in(uow: UnitOfWork, partition_key: str, holder: str) -> None:
    """Release the lock in the commit's transaction (which fails if the lease was taken over), marking the
    schedule written."""
    uow.add(_release(partition_key, holder))


def unlock(tenant: str, partition_key: str, holder: str) -> None:
    """Release the lock after a change that stored nothing."""
    key = keys.schedule_root(partition_key)
    op = WriteOp(
        "Update",
        {
            "Key": codec.serialize(key.as_dict()),
            "UpdateExpression": "REMOVE #holder, #until",
            "ConditionExpression": "#holder = :holder",
            "ExpressionAttributeNames": {"#holder": "lockHolder", "#until": "lockUntil"},
            "ExpressionAttributeValues": {":holder": {"S": holder}},
        },
        key,
        lambda: codes.SCHEDULE_BUSY("Another writer holds the schedule"),
    )
    try:
        table.gateway().write(_scope(tenant), op)
    except DomainError as error:
        if error.code != codes.SCHEDULE_BUSY.code:
            raise  # else the lease ran out and another writer holds the schedule now


# --- deserialization jobs --------------------------------------------------------------------------


def _job_record(tenant: str, job: DeserializationJob) -> dict[str, Any]:
    return {
        **keys.deserialization_job(tenant, job.locator).as_dict(),
        "entity": "deserializationJob",
        "GSI2PK": keys.deserialization_jobs_index(tenant, job.jobType),
        "GSI2SK": job.locator,
        "GSI1PK": keys.deserialization_jobs_by_state(tenant, job.jobType, job.jobState),
        "GSI1SK": job.locator,
        **job.model_dump(exclude_none=True),
    }


def add_job(uow: UnitOfWork, job: DeserializationJob) -> None:
    uow.add(table.put_new(_job_record(uow.ctx.tenant, job)))


def job_ops(tenant: str, job: DeserializationJob, expected_version: int) -> WriteOp:
    """The job rewritten as `job` (its version one past `expected_version`), on condition that nobody
    moved it meanwhile (a terminate, a restart, another step)."""
    record = _job_record(tenant, job.model_copy(update={"version": expected_version + 1}))
    key = Key(record["PK"], record["SK"])
    return WriteOp(
        "Put",
        {
            "Item": codec.serialize(record),
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": {":expected": codec.serialize_value(expected_version)},
        },
        key,
        lambda: codes.CONCURRENT_MODIFICATION("The deserialization job moved meanwhile; reload it"),
    )


def save_job(tenant: str, job: DeserializationJob, expected_version: int) -> None:
    table.gateway().write(_scope(tenant), job_ops(tenant, job, expected_version))


def get_job(tenant: str, locator: str) -> DeserializationJob | None:
    item = table.gateway().get(_scope(tenant), keys.deserialization_job(tenant, locator))
    return DeserializationJob.model_validate(codec.without_keys(item)) if item else None


def jobs(tenant: str, job_type: str, states: list[str], request: PageRequest) -> Page[DeserializationJob]:
    """The jobs of a type (of the given states, when any), oldest first: one Query per state index
    (or of the type's index), merged by locator."""
    wanted = request.offset + request.count + 1
    partitions = (
        [keys.deserialization_jobs_by_state(tenant, job_type, state) for state in dict.fromkeys(states)]
        if states
        else [keys.deserialization_jobs_index(tenant, job_type)]
    )
    index = "GSI1" if states else "GSI2"
    found: list[dict[str, Any]] = []
    for partition_key in partitions:
        start_key = None
        taken: list[dict[str, Any]] = []
        while len(taken) < wanted:
            batch, start_key = table.gateway().query(
                _scope(tenant), partition_key, index=index, limit=wanted - len(taken), start_key=start_key
            )
            taken.extend(batch)
            if start_key is None:
                break
        found.extend(taken)
    found.sort(key=lambda item: str(item["locator"]))
    window = Page.window(found, request)
    return Page(
        [DeserializationJob.model_validate(codec.without_keys(item)) for item in window.items], window.list_completed
    )


# --- the files of deserialization jobs (S3: tenants/{t}/jobs/{job}/schedule-items) ---------------------


def _file_path(job_locator: str) -> str:
    return f"jobs/{job_locator}/schedule-items"


def put_file(tenant: str, job_locator: str, content: bytes) -> None:
    blobs.put(tenant, _file_path(job_locator), content)


def file_range(tenant: str, job_locator: str, start: int, length: int) -> bytes:
    return blobs.get_range(tenant, _file_path(job_locator), start, length)


def whole_file(tenant: str, job_locator: str) -> bytes:
    return blobs.get(tenant, _file_path(job_locator)) or b""
