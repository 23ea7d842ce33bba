"""Schedules of quotes and transactions (spec part 2, "Schedules on transactions and quotes"; part 3,
the deserialization job rows; DECISIONS.md "Schedules").

An element whose type names a configured `schedule` has one. Its items are validated against the
schedule's `data` properties (datamodel.py: types, required fields, options, regex). A request adds,
patches or deletes at most 500 items; one invalid item fails the whole request, which answers the
ValidationResult naming each failed row (up to `maxValidationErrors`) and stores nothing. Only a draft
quote or transaction takes changes.

Copies without copying (`_source`): an issuance shows its issued quote's items (frozen once issued), a
transaction its base's until its first write, which adopts them (same locators) in the same commit;
a renewal starts empty for a schedule that `resetOnRenewal`. Plugins see the items of the subject's own
schedules in the request's `schedules` (priceable.repository).

Large files go through a deserialization job: the file is kept in S3 and read in chunks, each chunk a
job step that validates its rows, writes them (invisible) and records its progress together with the
next step; the last step commits every item at once. A terminated, failed or restarted run leaves its
items invisible. A step the job reaper gives up (its worker died or its message was lost on every lease)
leaves the job `interrupted`, and a restart then continues that run from the step that stopped.
Events: `schedule.items.add|update|delete`, `schedule.deserialize.start|terminate|restart|complete|fail|
interrupt`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.configuration import service as configuration
from chalicelib.configuration.datamodel import ValidationResult, element_types, product_type, validate_data
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import ConcurrentModification, InvalidRequest, InvalidState, NotFound
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies.models import TransactionCategory
from chalicelib.priceable import elements
from chalicelib.priceable.models import Element
from chalicelib.quotes import service as quotes
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.schedules import cleanup, parsing, repository
from chalicelib.schedules.models import (
    ACTIVE_STATES,
    DEFAULT_MAX_VALIDATION_ERRORS,
    ITEMS_PAGE,
    MAX_ITEMS_PER_REQUEST,
    RESTARTABLE_STATES,
    SCHEDULE_ITEMS_JOB,
    TERMINABLE_STATES,
    DeserializationJob,
    DeserializationJobState,
    DeserializationMetadata,
    ItemPatch,
    ItemsPage,
    ItemVersion,
    Owner,
    OwnerKind,
    ScheduleDescription,
    ScheduleItem,
    item_errors,
    result_of,
    sequential_locators,
)
from chalicelib.transactions import service as transactions

CHUNK_ROWS = 2000
"""Rows a deserialization step reads (and the most items one step writes)."""
CHUNK_BYTES = 4 * 1024 * 1024
"""Bytes of a CSV file a step fetches to find its rows (a row longer than this fails the job)."""
DRAFT = "draft"


# --- the schedules of a quote or transaction ---------------------------------------------------------


def descriptions(ctx: CallContext, kind: OwnerKind, locator: str) -> list[ScheduleDescription]:
    """The schedule of every element of the quote or transaction whose type names one."""
    tree = _tree(ctx, kind, locator, editable=False)
    _, model = configuration.current_model(ctx, resolved=True)
    return [described for element in elements.walk(tree) if (described := _description(model, element)) is not None]


def _description(model: dict[str, Any], element: Element) -> ScheduleDescription | None:
    element_type = element_types(model).get(element.type) or product_type(model, element.type)
    name = element_type.definition.get("schedule") if element_type else None
    schedule = (model.get("schedules") or {}).get(name) if isinstance(name, str) else None
    if not isinstance(schedule, dict):
        return None
    limit = model.get("defaultScheduleUploadErrorsLimit")
    return ScheduleDescription(
        staticElementLocator=element.staticLocator,
        elementType=element.type,
        scheduleItemType=name,
        properties=schedule.get("data") or {},
        resetOnRenewal=bool(schedule.get("resetOnRenewal")),
        maxValidationErrors=limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_VALIDATION_ERRORS,
    )


def _tree(ctx: CallContext, kind: OwnerKind, locator: str, *, editable: bool) -> Element:
    """The element tree of the quote, or of the segment the transaction makes; with `editable`, 409
    unless the quote or transaction is a draft."""
    if kind == "quote":
        quote = quotes.get_quote(ctx, locator)
        if editable and quote.quoteState != DRAFT:
            raise codes.NOT_DRAFT["quote"](f"Only a draft quote's schedules change; this one is {quote.quoteState}")
        return quote.element
    transaction = transactions.get_transaction(ctx, locator)
    if editable and transaction.transactionState != DRAFT:
        raise codes.NOT_DRAFT["transaction"](
            f"Only a draft transaction's schedules change; this one is {transaction.transactionState}"
        )
    return transactions.segment(ctx, locator).element


def _schedule(ctx: CallContext, owner: Owner, *, editable: bool) -> ScheduleDescription:
    tree = _tree(ctx, owner.kind, owner.locator, editable=editable)
    element = next((e for e in elements.walk(tree) if e.staticLocator == owner.staticElementLocator), None)
    _, model = configuration.current_model(ctx, resolved=True)
    described = _description(model, element) if element is not None else None
    if described is None:
        raise codes.SCHEDULE_NOT_FOUND(
            f"The {owner.kind} {owner.locator} has no element {owner.staticElementLocator} with a schedule"
        )
    return described


# --- reading items -----------------------------------------------------------------------------------


def items_page(ctx: CallContext, owner: Owner, last_seen: str | None) -> ItemsPage:
    """Up to ITEMS_PAGE items after `last_seen`, by locator (creation order)."""
    source = _source(ctx, owner, _schedule(ctx, owner, editable=False))
    found = (
        []
        if source is None
        else repository.visible_page(ctx.tenant, repository.partition(ctx.tenant, source), last_seen, ITEMS_PAGE)
    )
    return ItemsPage(items=found, lastSeenLocator=found[-1][0].locator if found else (last_seen or ""))


def _source(ctx: CallContext, owner: Owner, schedule: ScheduleDescription) -> Owner | None:
    """Whose items the schedule shows: its own once a write committed to it; before that, an issuance's
    are its quote's (copied on issue: an issued quote's schedule changes no more, so the issuance shares
    it), and another transaction's are its base transaction's, none for a renewal of a schedule that
    `resetOnRenewal`. A quote's are its own."""
    current = owner
    while not repository.is_owned(ctx.tenant, repository.partition(ctx.tenant, current)):
        if current.kind == "quote":
            return current
        transaction = transactions.get_transaction(ctx, current.locator)
        static = owner.staticElementLocator
        if transaction.transactionCategory == TransactionCategory.ISSUANCE and transaction.quoteLocator:
            return Owner(kind="quote", locator=transaction.quoteLocator, staticElementLocator=static)
        if transaction.transactionCategory == TransactionCategory.RENEWAL and schedule.resetOnRenewal:
            return None
        if transaction.baseTransactionLocator is None:
            return None
        current = Owner(kind="transaction", locator=transaction.baseTransactionLocator, staticElementLocator=static)
    return current


def _adopted(ctx: CallContext, owner: Owner, schedule: ScheduleDescription, token: str) -> list[ScheduleItem]:
    """The items a schedule not yet written shows from elsewhere (`_source`), copied under `token` with
    their locators: its first write makes them its own along with what it changes."""
    source = _source(ctx, owner, schedule)
    if source is None or source == owner:
        return []
    return [
        item.model_copy(update={"versions": [ItemVersion(token=token, data=data)]})
        for item, data in repository.every_visible(ctx.tenant, repository.partition(ctx.tenant, source))
    ]


# --- adding, patching, deleting ------------------------------------------------------------------------


def add_items(ctx: CallContext, owner: Owner, additions: list[dict[str, Any]]) -> ValidationResult:
    _check_count(len(additions))
    schedule = _schedule(ctx, owner, editable=True)
    _, model = configuration.current_model(ctx, resolved=True)
    checked, messages = _validated(model, schedule, enumerate(additions, start=1))
    if messages:
        return result_of(messages, schedule)
    _add(ctx, owner, schedule, checked)
    return result_of([], schedule)


def upload_csv(ctx: CallContext, owner: Owner, content: bytes) -> ValidationResult:
    """A CSV file of flat items (a header row of field names), added as PUT adds them."""
    schedule = _schedule(ctx, owner, editable=True)
    header, rows = parsing.csv_rows(content, MAX_ITEMS_PER_REQUEST)
    parsing.check_flat(header, schedule)
    if len(rows) > MAX_ITEMS_PER_REQUEST:
        raise codes.SCHEDULE_TOO_MANY_ITEMS(
            f"A request takes at most {MAX_ITEMS_PER_REQUEST} schedule items and the file has more; "
            "larger files go through the deserialize endpoint"
        )
    _, model = configuration.current_model(ctx, resolved=True)
    parsed = [parsing.row_data(header, row, schedule) for row in rows]
    checked, messages = _validated(model, schedule, enumerate(parsed, start=1))
    if messages:
        return result_of(messages, schedule)
    _add(ctx, owner, schedule, checked)
    return result_of([], schedule)


def _check_count(count: int) -> None:
    if count > MAX_ITEMS_PER_REQUEST:
        raise codes.SCHEDULE_TOO_MANY_ITEMS(
            f"A request takes at most {MAX_ITEMS_PER_REQUEST} schedule items, not {count}; "
            "larger files go through the deserialize endpoint"
        )


def _validated(
    model: dict[str, Any], schedule: ScheduleDescription, entries: Any
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each entry's normalised data, and the errors of the failed ones (up to maxValidationErrors)."""
    checked: list[dict[str, Any]] = []
    messages: list[str] = []
    for row, data in entries:
        if isinstance(data, str):
            messages.append(f"row {row}: {data}")
            continue
        normalised, errors = validate_data(model, schedule.properties, data)
        messages.extend(item_errors(row, errors))
        checked.append(normalised)
    return checked, messages[: schedule.maxValidationErrors]


def _add(ctx: CallContext, owner: Owner, schedule: ScheduleDescription, checked: list[dict[str, Any]]) -> None:
    token = new_locator()
    added = [
        _new_item(schedule, locator, data, token, ctx.now, ctx.user_locator)
        for locator, data in zip(sequential_locators(new_locator(), len(checked)), checked)
    ]
    items = _adopted(ctx, owner, schedule, token) + added
    partition = repository.partition(ctx.tenant, owner)
    uow = wiring.unit_of_work(ctx)
    repository.add_commit(uow, partition, token, "add", len(items))
    repository.mark_owned(uow, partition)
    uow.record_event("schedule.items.add", _event_data(owner, [item.locator for item in added]))
    if len(items) <= uow.remaining:
        uow.add(*repository.item_ops(partition, items))
    else:
        repository.write_items(ctx.tenant, partition, items)
    uow.commit()


def _new_item(
    schedule: ScheduleDescription, locator: str, data: dict[str, Any], token: str, now: Any, user: str
) -> ScheduleItem:
    return ScheduleItem(
        locator=locator,
        staticElementLocator=schedule.staticElementLocator,
        type=schedule.scheduleItemType,
        createdAt=now,
        createdBy=user,
        versions=[ItemVersion(token=token, data=data)],
    )


def _event_data(owner: Owner, locators: list[str]) -> dict[str, Any]:
    return {
        "referenceType": owner.kind,
        "referenceLocator": owner.locator,
        "staticElementLocator": owner.staticElementLocator,
        "itemCount": len(locators),
        "itemLocators": locators,
    }


def patch_items(ctx: CallContext, owner: Owner, patches: list[ItemPatch]) -> ValidationResult:
    """Each item's data with `removeData` removed and `setData` set, validated; all or nothing."""
    _check_count(len(patches))
    schedule = _schedule(ctx, owner, editable=True)
    _, model = configuration.current_model(ctx, resolved=True)

    def changed(current: dict[str, Any], patch: ItemPatch) -> dict[str, Any]:
        return elements.merged(current, patch.removeData, patch.setData)

    return _rewrite(
        ctx,
        owner,
        schedule,
        [(patch.locator, patch) for patch in patches],
        "update",
        lambda current, patch: validate_data(model, schedule.properties, changed(current, patch)),
    )


def delete_items(ctx: CallContext, owner: Owner, locators: list[str]) -> None:
    _check_count(len(locators))
    schedule = _schedule(ctx, owner, editable=True)
    _rewrite(ctx, owner, schedule, [(locator, None) for locator in locators], "delete", None)


def _rewrite(
    ctx: CallContext, owner: Owner, schedule: ScheduleDescription, changes: list[tuple[str, Any]], kind: str, check: Any
) -> ValidationResult:
    """A new version of each named item (its new data by `check`, or a tombstone without one), under the
    schedule's lock: 404 for a locator that is no visible item, the ValidationResult of failed checks."""
    partition = repository.partition(ctx.tenant, owner)
    token = new_locator()
    repository.lock(ctx.tenant, partition, token, wiring.clock().now())
    try:
        adopted = {item.locator: item for item in _adopted(ctx, owner, schedule, token)}
        if adopted:
            found, committed = adopted, {token}
        else:
            found = repository.items_by_locator(ctx.tenant, partition, [locator for locator, _ in changes])
            committed = repository.committed_tokens(ctx.tenant, partition, found.values())
        rewritten: dict[str, ScheduleItem] = {}
        messages: list[str] = []
        for row, (locator, change) in enumerate(changes, start=1):
            item = found.get(locator)
            current = item.visible_data(committed) if item is not None else None
            if item is None or current is None:
                raise codes.SCHEDULE_ITEM_NOT_FOUND(f"The schedule has no item {locator}")
            base = rewritten.get(locator, item)
            if check is None:
                version = ItemVersion(token=token, deleted=True)
            else:
                previous = base.versions[-1].data if locator in rewritten else current
                data, errors = check(previous, change)
                messages.extend(item_errors(row, errors))
                version = ItemVersion(token=token, data=data)
            rewritten[locator] = item.with_version(version, committed)
        if messages:
            repository.unlock(ctx.tenant, partition, token)
            return result_of(messages[: schedule.maxValidationErrors], schedule)
        written = {**adopted, **rewritten}
        uow = wiring.unit_of_work(ctx)
        repository.add_commit(uow, partition, token, kind, len(written))
        repository.release_in(uow, partition, token)
        uow.record_event(f"schedule.items.{kind}", _event_data(owner, list(rewritten)))
        cleanup.enqueue(uow, owner, list(rewritten))
        if len(written) <= uow.remaining:
            uow.add(*repository.item_ops(partition, written.values()))
        else:
            repository.write_items(ctx.tenant, partition, written.values())
        uow.commit()
    except BaseException:
        repository.unlock(ctx.tenant, partition, token)
        raise
    return result_of([], schedule)


# --- deserialization jobs ------------------------------------------------------------------------------


class DeserializeStep(BaseModel):
    """A job step's payload: which run of which job, and which of its steps."""

    job: str
    attempt: int
    step: int


def start_deserialization(
    ctx: CallContext, owner: Owner, content: bytes, file_name: str | None, params: dict[str, str]
) -> str:
    """Keep the file and queue the job's first step; answers the job's locator."""
    schedule = _schedule(ctx, owner, editable=True)
    if not content.strip():
        raise codes.SCHEDULE_FILE_INVALID("The file is empty")
    locator = new_locator()
    name = file_name or "upload"
    file_format = "json" if parsing.is_json(name, content[:64]) else "csv"
    if file_format == "csv":
        header, _ = parsing.header_length(content[:CHUNK_BYTES], at_end=len(content) <= CHUNK_BYTES)
        parsing.check_flat(header, schedule)
    repository.put_file(ctx.tenant, locator, content)
    job = DeserializationJob(
        locator=locator,
        jobState=DeserializationJobState.INITIALIZED,
        fileFormat=file_format,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        firstItemLocator=new_locator(),
        metadata=DeserializationMetadata(
            referenceLocator=owner.locator,
            staticElementLocator=owner.staticElementLocator,
            fileName=name,
            referenceType=owner.kind,
            fileSize=len(content),
            params=params,
        ),
    )
    uow = wiring.unit_of_work(ctx)
    repository.add_job(uow, job)
    _enqueue_step(uow, job)
    uow.record_event("schedule.deserialize.start", _job_event(job))
    uow.commit()
    return locator


def _enqueue_step(uow: UnitOfWork, job: DeserializationJob) -> None:
    """The job's next step; its locator is derived from the run, the step and the restarts (a continued
    interrupted run queues the step that stopped once more)."""
    jobs.enqueue(
        uow,
        JobType.SCHEDULE_ITEMS_DESERIALIZE,
        DeserializeStep(job=job.locator, attempt=job.attempt, step=job.step),
        locator=derived_locator(job.createdAt, f"{job.token}#{job.step}#{job.retryCount}"),
    )


def _job_event(job: DeserializationJob) -> dict[str, Any]:
    return {
        "jobLocator": job.locator,
        "jobState": job.jobState,
        "retryCount": job.retryCount,
        "referenceType": job.metadata.referenceType,
        "referenceLocator": job.metadata.referenceLocator,
        "staticElementLocator": job.metadata.staticElementLocator,
        "itemCount": job.itemsWritten,
    }


def deserialization_job(ctx: CallContext, locator: str) -> DeserializationJob:
    job = repository.get_job(ctx.tenant, locator)
    if job is None:
        raise codes.DESERIALIZATION_JOB_NOT_FOUND(f"deserializeJob {locator} not found")
    return job


def deserialization_jobs(
    ctx: CallContext, job_type: str, states: list[str], page: PageRequest
) -> Page[DeserializationJob]:
    if job_type != SCHEDULE_ITEMS_JOB:
        return Page(items=[], list_completed=True)  # a type the service does not have holds no jobs
    known = {state.value for state in DeserializationJobState}
    unknown = [state for state in states if state not in known]
    if unknown:
        raise codes.REQUEST_INVALID(f"Unknown job states: {', '.join(unknown)}")
    return repository.jobs(ctx.tenant, job_type, states, page)


def terminate(ctx: CallContext, locator: str) -> None:
    """Stop the job after the step in flight; nothing it read shows."""
    job = deserialization_job(ctx, locator)
    if job.jobState not in TERMINABLE_STATES:
        raise codes.DESERIALIZATION_JOB_INVALID_STATE(f"A {job.jobState} deserialization job cannot be terminated")
    stopped = job.model_copy(update={"jobState": DeserializationJobState.TERMINATED, "updatedAt": ctx.now})
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.job_ops(ctx.tenant, stopped, job.version))
    cleanup.enqueue_drop_run(uow, job.owner, job.firstItemLocator, job.itemsWritten)
    uow.record_event("schedule.deserialize.terminate", _job_event(stopped))
    uow.commit()


def restart(ctx: CallContext, locator: str) -> None:
    """Read the file again from its start in a new run (`retryCount` + 1); an interrupted job continues
    its run from the step that stopped (the rows before it are written already)."""
    job = deserialization_job(ctx, locator)
    if job.jobState not in RESTARTABLE_STATES:
        raise codes.DESERIALIZATION_JOB_INVALID_STATE(f"A {job.jobState} deserialization job cannot be restarted")
    if job.jobState == DeserializationJobState.INTERRUPTED:
        again = job.model_copy(
            update={
                "jobState": DeserializationJobState.RUNNING,
                "retryCount": job.retryCount + 1,
                "updatedAt": ctx.now,
                "processingErrors": None,
            }
        )
    else:
        again = job.model_copy(
            update={
                "jobState": DeserializationJobState.INITIALIZED,
                "retryCount": job.retryCount + 1,
                "attempt": job.attempt + 1,
                "updatedAt": ctx.now,
                "processingErrors": None,
                "rowsRead": 0,
                "byteOffset": 0,
                "header": [],
                "errors": [],
                "itemsWritten": 0,
                "step": 0,
                "firstItemLocator": new_locator(),
            }
        )
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.job_ops(ctx.tenant, again, job.version))
    _enqueue_step(uow, again)
    uow.record_event("schedule.deserialize.restart", _job_event(again))
    uow.commit()


def interrupt(ctx: CallContext, step: DeserializeStep) -> None:
    """The step's worker never finished (the reaper gave its job up): the job is `interrupted` where it
    stopped, until a restart continues it or a terminate ends it. Nothing for a step of an earlier run
    or one the job has moved past."""
    job = repository.get_job(ctx.tenant, step.job)
    if job is None or job.attempt != step.attempt or job.step != step.step or job.jobState not in ACTIVE_STATES:
        return
    stopped = job.model_copy(
        update={
            "jobState": DeserializationJobState.INTERRUPTED,
            "updatedAt": ctx.now,
            "processingErrors": f"Reading stopped after row {job.rowsRead}: the step did not finish in "
            f"{jobs.MAX_ATTEMPTS} attempts; restart continues from row {job.rowsRead + 1}",
        }
    )
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.job_ops(ctx.tenant, stopped, job.version))
    uow.record_event("schedule.deserialize.interrupt", _job_event(stopped))
    try:
        uow.commit()
    except ConcurrentModification:
        pass  # the job moved meanwhile (a terminate, or a late step that did finish)


def run_step(ctx: CallContext, step: DeserializeStep) -> dict[str, Any]:
    """One chunk of the job's file: validate its rows, write the valid ones under the run's token, then
    record the progress with the next step, or commit (all items show), or fail. A step of a run that
    was terminated or restarted meanwhile does nothing."""
    job = repository.get_job(ctx.tenant, step.job)
    if job is None or job.attempt != step.attempt or job.step != step.step or job.jobState not in ACTIVE_STATES:
        return {"skipped": True}
    try:
        schedule = _schedule(ctx, job.owner, editable=True)
        _, model = configuration.current_model(ctx, resolved=True)
        entries, consumed, header, at_end = _chunk(ctx, job, schedule)
    except (NotFound, InvalidState, InvalidRequest) as error:
        return _fail(ctx, job, [error.message])  # the file, or the quote or transaction it is for
    checked, messages = _validated(model, schedule, enumerate(entries, start=job.rowsRead + 1))
    errors = (job.errors + messages)[: schedule.maxValidationErrors]
    partition = repository.partition(ctx.tenant, job.owner)
    locators = [] if errors else sequential_locators(job.firstItemLocator, job.rowsRead + len(checked))[job.rowsRead :]
    repository.write_items(
        ctx.tenant,
        partition,
        (
            _new_item(schedule, locator, data, job.token, job.createdAt, job.createdBy)
            for locator, data in zip(locators, checked)
        ),
    )
    moved = job.model_copy(
        update={
            "jobState": DeserializationJobState.RUNNING,
            "rowsRead": job.rowsRead + len(entries),
            "byteOffset": job.byteOffset + consumed,
            "header": header,
            "errors": errors,
            "step": job.step + 1,
            "itemsWritten": job.itemsWritten + (0 if errors else len(checked)),
            "updatedAt": ctx.now,
        }
    )
    if len(errors) >= schedule.maxValidationErrors or (errors and at_end):
        return _fail(ctx, job, errors, moved)
    uow = wiring.unit_of_work(ctx)
    if at_end:
        moved.jobState = DeserializationJobState.COMPLETED
        repository.write_items(ctx.tenant, partition, _adopted(ctx, job.owner, schedule, job.token))
        repository.add_commit(uow, partition, job.token, "deserialize", moved.itemsWritten)
        repository.mark_owned(uow, partition)
        uow.record_event("schedule.deserialize.complete", _job_event(moved))
    else:
        _enqueue_step(uow, moved)
    uow.add(repository.job_ops(ctx.tenant, moved, job.version))
    try:
        uow.commit()
    except ConcurrentModification:  # terminated or restarted while this step ran: its items never show
        repository.delete_items(ctx.tenant, partition, locators)
        return {"superseded": True}
    return {"rowsRead": moved.rowsRead, "jobState": moved.jobState.value}


def _chunk(
    ctx: CallContext, job: DeserializationJob, schedule: ScheduleDescription
) -> tuple[list[dict[str, Any] | str], int, list[str], bool]:
    """The entries of the job's next chunk, the bytes of the file it takes (CSV), the CSV header, and
    whether the chunk ends the file."""
    size = job.metadata.fileSize
    if job.fileFormat == "json":
        every = parsing.json_items(repository.whole_file(ctx.tenant, job.locator))
        entries = every[job.rowsRead : job.rowsRead + CHUNK_ROWS]
        return ([parsing.json_item_data(entry) for entry in entries], 0, [], job.rowsRead + len(entries) >= len(every))
    header, offset, consumed = job.header, job.byteOffset, 0
    if job.step == 0:
        header, consumed = parsing.header_length(
            repository.file_range(ctx.tenant, job.locator, 0, CHUNK_BYTES), at_end=size <= CHUNK_BYTES
        )
        parsing.check_flat(header, schedule)
        offset = consumed
    window = repository.file_range(ctx.tenant, job.locator, offset, CHUNK_BYTES)
    ends = parsing.row_ends(window, CHUNK_ROWS, at_end=offset + len(window) >= size)
    if not ends and window.strip():
        raise codes.SCHEDULE_FILE_INVALID(f"A row after byte {offset} is longer than {CHUNK_BYTES} bytes")
    taken = ends[-1] if ends else len(window)
    rows = parsing.body_rows(parsing.decoded(window[:taken]))
    return ([parsing.row_data(header, row, schedule) for row in rows], consumed + taken, header, offset + taken >= size)


def _fail(
    ctx: CallContext, job: DeserializationJob, errors: list[str], moved: DeserializationJob | None = None
) -> dict[str, Any]:
    failed = (moved or job).model_copy(
        update={
            "jobState": DeserializationJobState.FAILED,
            "errors": errors,
            "processingErrors": "; ".join(errors),
            "updatedAt": ctx.now,
        }
    )
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.job_ops(ctx.tenant, failed, job.version))
    cleanup.enqueue_drop_run(uow, job.owner, job.firstItemLocator, job.itemsWritten)
    uow.record_event("schedule.deserialize.fail", _job_event(failed))
    try:
        uow.commit()
    except ConcurrentModification:
        return {"superseded": True}
    return {"rowsRead": failed.rowsRead, "jobState": failed.jobState.value}
