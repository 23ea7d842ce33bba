"""Migration: an insurer's existing book brought in, account by account (spec part 3 "Migration"; DECISIONS.md
"Migration"; socotra-semantics.md §8).

Start: the request is kept in S3 as JSON Lines (one account a line), the migration recorded `submitted` with
`migration.start`, and a run job (`migration.run`) queued, which writes each account's state item (`pending`) and
queues one `migration.account` job per account, a chunk of accounts per TransactWriteItems and their messages 10 to
a SendMessageBatch (jobs.enqueue_many); a run job goes through ACCOUNTS_PER_RUN_JOB accounts and enqueues the next
slice's run job once, so a run job delivered again redoes its own slice only (its committed chunks are skipped).

An account's job validates everything the account brings against the tenant's deployed configuration (account
type and data, product, eligibility, static data, element types, their data and coverage terms, charge types,
currency, time zone; installment items adding up to their charge) and collects what fails by original id
(`MigrationFailuresResponse`): one bad entity fails its account only (`failed`, fixable by PATCH). An account
that passes is written with locators derived from (migration, original ids), all or nothing: each policy's
transactions but its last and its segments are written pending first (invisible to every read, policies/
repository.py), then one TransactWriteItems holds the account, each policy's root, terms and last transaction
(which commits its pending records), the policies' billing jobs and due entries, the account's mappings, its
state `completed` and the migration's counters. An account too large for one write is staged
(`_commit_account`): what no read reaches before the commit first, in as many writes as it takes, then a
commit of what makes it visible, then its jobs, due entries and events. A rerun (a redelivered message, a
crashed worker, recover) rewrites the same pending records and commits once; an unexpected (system) error,
or a record it changes (an existing account's) changed meanwhile, leaves the account in `error`, which recover
queues again. Migrated records are ordinary records afterwards:
policies, transactions, segments and terms as the policies domain stores them, billed by billing's installment
jobs.

Control: pause (submitted or processing) stops accounts not yet started (their jobs find the migration paused
and leave them pending), in-flight ones finish; resume queues the pending ones again in a new run; recover puts
the accounts in `error` back to pending and queues them; PATCH replaces a failed account's entities by original
id and queues it again. Once every account is processed the migration is `finished`, `failed` (an account
failed) or `error` (an account had a system error). Events `migration.start|pause|resume|recover|patch|finish|
fail|error` with `{"migrationLocator"}`.

An account's billing records are reconciled first (migration/reconciliation.py): a difference fails the
account, named by the entity's original id with both amounts. A transaction that brings its installments
gets them as its lattice and installments (migration/installments.py; billing builds none for it), each on
the invoice of the request naming it (billing/invoices/service.add_migrated: open, due, numbered, in the
account's final write, mapped by original id); a transaction that brings none is billed by billing from its
charges. Payments are posted on those invoices as in the source (and, joining an existing account, on its
open invoices named by the original id an earlier migration brought them with, or by locator; every account's
commit keeps its invoices by original id for that, repository.invoices_write), an application each, disbursements are
executed records paid out of the credit, and the starting credit balances are ledger lines
(billing/payments/service.add_migrated), in the same write.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import partial
from typing import Annotated, Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import ENTITY as ACCOUNT_ENTITY
from chalicelib.accounts.models import Account, AccountFields, Preferences
from chalicelib.billing.installments.models import Installment, InstallmentLattice
from chalicelib.billing.invoices import service as invoices
from chalicelib.billing.invoices.models import Invoice
from chalicelib.billing.payments import service as billing_payments
from chalicelib.configuration import datamodel, numbers, products
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, durations, money
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, ConcurrentModification, DomainError, FieldError, Unavailable
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.migration import installments, reconciliation, repository
from chalicelib.migration.models import (
    DONE,
    FINAL_STATES,
    MAX_ACCOUNTS,
    AccountFailures,
    AccountMappings,
    AccountMigration,
    AccountMigrationRequest,
    AccountMigrationState,
    ElementMigrationRequest,
    EntityFailure,
    MappingObject,
    Migration,
    MigrationRequest,
    MigrationState,
    PatchAccountMigrationRequest,
    PolicyMigrationRequest,
)
from chalicelib.policies import service as policies
from chalicelib.policies.models import ENTITY as POLICY_ENTITY
from chalicelib.policies.models import (
    Policy,
    Segment,
    SegmentSummary,
    Term,
    Transaction,
    TransactionCategory,
    TransactionState,
)
from chalicelib.priceable import checks
from chalicelib.priceable.models import Charge, Element
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.observability import logger
from chalicelib.transactions.service import history_adjustments
from chalicelib.uploads import service as uploads

START_EVENT = "migration.start"
PAUSE_EVENT = "migration.pause"
RESUME_EVENT = "migration.resume"
RECOVER_EVENT = "migration.recover"
PATCH_EVENT = "migration.patch"
END_EVENTS = {
    MigrationState.FINISHED: "migration.finish",
    MigrationState.FAILED: "migration.fail",
    MigrationState.ERROR: "migration.error",
}
ACCOUNTS_PER_WRITE = 40
"""Accounts a run job queues per TransactWriteItems (each its state item and its job item); their messages go
10 to a SendMessageBatch (runtime/jobs.enqueue_many)."""
ACCOUNTS_PER_RUN_JOB = 200
"""Accounts one run job goes through (a slice of the run); it enqueues the next slice's run job as its last
step (a locator derived from where that starts), so each run job is short beside its lease, and a delivery
again of one (its lease ran out, its worker died) goes through its own slice only, whose chunks find their
job items written and are skipped. 200: 5 TransactWriteItems and 20 SendMessageBatch calls, seconds even on a
loaded moto, short beside benchmarks/migration_workers.py's 20 s lease as beside the deployed 900 s."""
MAX_LOCATOR_LENGTH = 64
PENDING_IN_COMMIT_BYTES = 1_000_000
"""At most this much of an account's pending policy records (as JSON) goes into its one final write (which
DynamoDB takes up to 4 MB); more is written before it."""
FOLLOW_UP_WRITE = 98
"""Actions of one write that follows a staged account's commit (one more for its progress, one for the
idempotency guard: TransactWriteItems holds 100)."""


class RunPayload(BaseModel):
    migration: str
    run: int
    mode: str
    """`start` (write the accounts' items), `resume` (queue the pending ones), `recover` (the ones in error)."""
    at: int = 0
    """Where this slice of the run starts: a byte offset into the request (`start`), else how many account
    state items earlier slices went through."""
    after: dict[str, Any] | None = None
    queued: int = 0
    """Accounts the earlier slices of the run queued."""
    """`resume`, `recover`: the Query position of the account state items after the earlier slices."""


class AccountPayload(BaseModel):
    migration: str
    account: str
    request: str | None = None
    """The account's line of the request (the run job read it), when it is at most LINE_IN_MESSAGE bytes: the job
    need not read it from S3 again. Used only while the account's state still points at that line (`at`)."""
    at: int | None = None
    """Where `request` starts in the request (the account state's `requestStart`)."""
    numbers: list[tuple[str, str, int, int]] = []
    """Counter values its run job reserved for the account's numbers ((plan, entity kind, first, count):
    `numbers.reserve_block`, a block for the run job's slice), taken in order by its account's and policies'
    numbering (`numbers.given`) before their plans' counters: no UpdateItem an account for its numbers."""


LINE_IN_MESSAGE = 16 * 1024
"""An account's request line up to this size travels in its job's message and job item (SQS takes 256 KiB a
message, DynamoDB 400 KB an item; a run job's write of ACCOUNTS_PER_WRITE job items stays well under its 4 MB);
a longer one is read from S3 by the account's job."""


# --- starting --------------------------------------------------------------------------------------


def start(ctx: CallContext, requests: list[AccountMigrationRequest] | None, *, upload: str | None = None) -> Migration:
    """New accounts: each one line of the request kept in S3; a run job queues them. `upload`: the upload
    (purpose `migration`) whose file is the request, in place of `requests`: its size and SHA-256 checked
    before it is read, used up once the migration started (uploads/service.referenced_file)."""
    if upload is not None:
        if requests is not None:
            raise codes.REQUEST_INVALID(
                "Send the accounts as the body, or name their upload with ?uploadLocator= and an empty body, not both"
            )
        with uploads.referenced_file(ctx, "migration", upload) as content:
            return start(ctx, _uploaded_requests(content))
    if not requests:
        raise codes.REQUEST_INVALID("A migration brings at least one account")
    _check_unique([request.accountData.id for request in requests], "accountData.id")
    return _start(ctx, requests, None)


UPLOADED_REQUESTS: TypeAdapter[list[AccountMigrationRequest]] = TypeAdapter(
    Annotated[list[AccountMigrationRequest], Field(max_length=MAX_ACCOUNTS)]
)


def _uploaded_requests(content: bytes) -> list[AccountMigrationRequest]:
    """The accounts of an uploaded request (a JSON array, as the body); 400 naming what does not fit."""
    try:
        return UPLOADED_REQUESTS.validate_json(content)
    except ValidationError as error:
        raise codes.REQUEST_INVALID(
            "The uploaded migration request is invalid",
            field_errors=[
                FieldError(".".join(str(part) for part in problem["loc"]) or "file", problem["msg"])
                for problem in error.errors()[:100]
            ],
        ) from None


def start_for_account(ctx: CallContext, account_locator: str, request: MigrationRequest) -> Migration:
    """Records for an existing account (404 when the tenant has none with that locator)."""
    account = accounts.get_account(ctx, account_locator)
    return _start(ctx, [request], account)


def _start(ctx: CallContext, requests: list[Any], existing: Account | None) -> Migration:
    for request in requests:
        _check_unique([policy.id for policy in request.policies], "policies.id")
    locator = new_locator()
    path = repository.request_path(locator)
    repository.put_request(
        ctx.tenant, path, b"".join(request.model_dump_json().encode() + b"\n" for request in requests)
    )
    migration = Migration(
        locator=locator,
        migrationState=MigrationState.SUBMITTED,
        totalAccounts=len(requests),
        existingAccount=existing.locator if existing else None,
        run=1,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
    )
    uow = wiring.unit_of_work(ctx)
    repository.add(uow, ctx.tenant, migration)
    jobs.enqueue(
        uow, JobType.MIGRATION_RUN, RunPayload(migration=locator, run=1, mode="start"), locator=_run_job(migration, 1)
    )
    uow.record_event(START_EVENT, {"migrationLocator": locator})
    uow.commit()
    return migration


def _check_unique(ids: list[str], field_name: str) -> None:
    seen: set[str] = set()
    for original in ids:
        if original in seen:
            raise codes.MIGRATION_DUPLICATE_ID(f"The id {original!r} is given twice ({field_name})")
        seen.add(original)


def _run_job(migration: Migration, run: int) -> str:
    return derived_locator(migration.createdAt, f"migration:{migration.locator}:run:{run}")


def _account_job(migration: Migration, account: str, run: int) -> str:
    return derived_locator(migration.createdAt, f"migration:{migration.locator}:{account}:run:{run}")


def account_locator(migration: str, original_id: str, created_at: datetime) -> str:
    """A new account's locator: derived from (migration, original id), of the account's original creation time."""
    return derived_locator(created_at, f"migration:{migration}:account:{original_id}")


# --- reading ---------------------------------------------------------------------------------------


def get_migration(ctx: CallContext, locator: str) -> Migration:
    migration = repository.get(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if migration is None:
        raise codes.MIGRATION_NOT_FOUND(f"migration {locator} not found")
    return migration


def account_state(ctx: CallContext, migration: str, account: str) -> AccountMigration:
    get_migration(ctx, migration)
    found = repository.get_account(ctx.tenant, migration, account) if len(account) <= MAX_LOCATOR_LENGTH else None
    if found is None:
        raise codes.MIGRATION_ACCOUNT_NOT_FOUND(f"migration {migration} has no account {account}")
    return found


def account_states(ctx: CallContext, migration: str, page: PageRequest) -> Page[AccountMigration]:
    get_migration(ctx, migration)
    return repository.accounts(ctx.tenant, migration, page)


def mappings_of_account(ctx: CallContext, migration: str, account: str) -> AccountMappings:
    get_migration(ctx, migration)
    found = repository.get_mappings(ctx.tenant, migration, account) if len(account) <= MAX_LOCATOR_LENGTH else None
    if found is None:
        raise codes.MIGRATION_ACCOUNT_NOT_FOUND(f"migration {migration} has no mappings of account {account}")
    return found


def mappings(ctx: CallContext, migration: str, page: PageRequest) -> Page[AccountMappings]:
    get_migration(ctx, migration)
    return repository.mappings(ctx.tenant, migration, page)


def failures(ctx: CallContext, migration: str, page: PageRequest) -> Page[AccountFailures]:
    get_migration(ctx, migration)
    return repository.failures(ctx.tenant, migration, page)


# --- control ---------------------------------------------------------------------------------------


def moved(ctx: CallContext, locator: str) -> None:
    """The answer of a committed pause, resume or recover replayed (void, as the move's, once the migration is
    there)."""
    get_migration(ctx, locator)


def pause(ctx: CallContext, locator: str) -> None:
    migration = get_migration(ctx, locator)
    if migration.migrationState not in (MigrationState.SUBMITTED, MigrationState.PROCESSING):
        raise codes.MIGRATION_INVALID_STATE(f"A {migration.migrationState} migration cannot be paused")
    _move(ctx, migration, MigrationState.PAUSED, PAUSE_EVENT)


def resume(ctx: CallContext, locator: str) -> None:
    migration = get_migration(ctx, locator)
    if migration.migrationState != MigrationState.PAUSED:
        raise codes.MIGRATION_INVALID_STATE(f"A {migration.migrationState} migration cannot be resumed")
    _move(ctx, migration, MigrationState.PROCESSING, RESUME_EVENT, mode="resume")


def recover(ctx: CallContext, locator: str) -> None:
    """Accounts in `error` (system errors) are queued again."""
    migration = get_migration(ctx, locator)
    if migration.errorAccounts == 0 or migration.migrationState == MigrationState.PAUSED:
        raise codes.MIGRATION_INVALID_STATE(
            f"Migration {locator} has no account in error to recover"
            if migration.errorAccounts == 0
            else "A paused migration is resumed, not recovered"
        )
    _move(ctx, migration, MigrationState.PROCESSING, RECOVER_EVENT, mode="recover")


def _move(
    ctx: CallContext, migration: Migration, state: MigrationState, event: str, *, mode: str | None = None
) -> None:
    uow = wiring.unit_of_work(ctx)
    run = migration.run + 1 if mode else migration.run
    uow.add(repository.move(ctx.tenant, migration.model_copy(update={"updatedAt": ctx.now}), state, run=run))
    if mode:
        jobs.enqueue(
            uow,
            JobType.MIGRATION_RUN,
            RunPayload(migration=migration.locator, run=run, mode=mode),
            locator=_run_job(migration, run),
        )
    uow.record_event(event, {"migrationLocator": migration.locator})
    uow.commit()


def patch(ctx: CallContext, locator: str, request: PatchAccountMigrationRequest) -> AccountFailures:
    """Replace a failed account's entities by original id (and its account data, if given), and process it
    again; answers the failures it had that the patch did not replace."""
    migration = get_migration(ctx, locator)
    account = account_state(ctx, locator, request.accountLocator)
    if account.accountMigrationState != AccountMigrationState.FAILED:
        raise codes.MIGRATION_ACCOUNT_NOT_FAILED(
            f"Account {account.accountLocator} is {account.accountMigrationState}, not failed"
        )
    if migration.migrationState == MigrationState.PAUSED:
        raise codes.MIGRATION_INVALID_STATE("A paused migration takes no patch: resume it first")
    given = _request_of(ctx, migration, account)
    by_id = {policy.id: policy for policy in given.policies}
    for original, policy in request.policies.items():
        if policy.id != original:
            raise codes.REQUEST_INVALID(f"policies.{original}: the policy's id is {policy.id!r}, not its key")
        by_id[original] = policy
    changes: dict[str, Any] = {"policies": list(by_id.values()), "defaultCreatedBy": request.defaultCreatedBy}
    for name in ("invoices", "payments", "disbursements"):
        entities = {entity.id: entity for entity in getattr(given, name)}
        entities.update(getattr(request, name))
        changes[name] = list(entities.values())
    if request.accountData is not None:
        if not isinstance(given, AccountMigrationRequest) or request.accountData.id != account.originalId:
            raise codes.REQUEST_INVALID("accountData: the account's id cannot change (nor an existing account's data)")
        changes["accountData"] = request.accountData
    patched = given.model_copy(update=changes)
    content = patched.model_dump_json().encode()
    path = repository.request_path(locator, f"patch-{account.accountLocator}-{account.patches + 1}")
    repository.put_request(ctx.tenant, path, content)
    before = repository.get_failures(ctx.tenant, locator, account.accountLocator)
    again = account.model_copy(
        update={
            "accountMigrationState": AccountMigrationState.PENDING,
            "requestPath": path,
            "requestStart": 0,
            "requestLength": len(content),
            "patches": account.patches + 1,
            "processedItems": 0,
            "errorItems": 0,
            "totalItems": _items(patched),
            "lastUpdated": ctx.now,
        }
    )
    uow = wiring.unit_of_work(ctx)
    uow.add(
        repository.move(
            ctx.tenant,
            migration.model_copy(update={"updatedAt": ctx.now}),
            MigrationState.PROCESSING,
            add={"processedAccounts": -1, "failedAccounts": -1},
            run=migration.run + 1,
        ),
        repository.account_write(ctx.tenant, locator, again),
        repository.failure_delete(ctx.tenant, locator, account.accountLocator),
    )
    jobs.enqueue(
        uow,
        JobType.MIGRATION_ACCOUNT,
        AccountPayload(migration=locator, account=account.accountLocator),
        locator=_account_job(migration, account.accountLocator, migration.run + 1),
    )
    uow.record_event(PATCH_EVENT, {"migrationLocator": locator})
    kept = before or AccountFailures(accountLocator=account.accountLocator, accountOriginalId=account.originalId)
    remaining = kept.model_copy(
        update={
            "accountError": None if request.accountData is not None else kept.accountError,
            **{
                name: {
                    original: failure
                    for original, failure in getattr(kept, name).items()
                    if original not in getattr(request, name)
                }
                for name in ("policies", "invoices", "payments", "disbursements")
            },
        }
    )
    if ctx.idempotency is not None:  # its answer, for a replay of the key whose answer is lost after the commit
        repository.put_patch_answer(
            ctx.tenant,
            repository.patch_answer_path(locator, ctx.idempotency.name_for(ctx.user_locator)),
            remaining.model_dump_json().encode(),
        )
    uow.commit()
    return remaining


def patched(ctx: CallContext, locator: str) -> AccountFailures:
    """The answer of the committed patch whose idempotency key this request replays (kept by `patch`)."""
    get_migration(ctx, locator)
    claim = ctx.idempotency
    content = (
        repository.patch_answer(ctx.tenant, repository.patch_answer_path(locator, claim.name_for(ctx.user_locator)))
        if claim is not None
        else None
    )
    if content is None:
        raise codes.IDEMPOTENCY_IN_PROGRESS("The patch with this idempotency key kept no answer to replay")
    return AccountFailures.model_validate_json(content)


def _items(request: MigrationRequest) -> int:
    return (
        int(isinstance(request, AccountMigrationRequest))
        + len(request.policies)
        + len(request.invoices)
        + len(request.payments)
        + len(request.disbursements)
    )


def _request_of(
    ctx: CallContext, migration: Migration, account: AccountMigration, payload: AccountPayload | None = None
) -> MigrationRequest:
    """The account's request: the line its job's message brought, while the account's state points at that line
    (a PATCH points it elsewhere), else read from S3."""
    given = payload.request if payload is not None else None
    content: str | bytes
    if (
        given is not None
        and payload is not None
        and payload.at == account.requestStart
        and account.requestPath == repository.request_path(migration.locator)
        and len(given.encode()) == account.requestLength
    ):
        content = given
    else:
        content = repository.account_request(ctx.tenant, account)
    model = MigrationRequest if migration.existingAccount else AccountMigrationRequest
    return model.model_validate_json(content)


# --- the run job: queueing accounts ----------------------------------------------------------------------


def run(ctx: CallContext, payload: RunPayload) -> dict[str, Any]:
    """Queue a slice of the run's accounts (ACCOUNTS_PER_RUN_JOB, from `payload.at`), ACCOUNTS_PER_WRITE per
    TransactWriteItems; a chunk an earlier attempt of the job committed fails on its job items (derived
    locators) and is skipped. Then the next slice's run job, once (`jobs.enqueue_once`), or, at the run's end,
    the migration's end if nothing is left to process."""
    migration = get_migration(ctx, payload.migration)
    if payload.mode == "start":
        if migration.migrationState == MigrationState.SUBMITTED:
            try:
                uow = wiring.unit_of_work(ctx)
                uow.add(repository.move(ctx.tenant, migration, MigrationState.PROCESSING))
                uow.commit()
            except ConcurrentModification:
                pass  # paused meanwhile: its accounts are written all the same, and wait for resume
        accounts_of_run, following, lines, wanted_numbers = _slice_of_request(ctx, migration, payload)
        numbered = _reserve_numbers(ctx, wanted_numbers)
    else:
        lines, numbered = {}, {}
        wanted = AccountMigrationState.PENDING if payload.mode == "resume" else AccountMigrationState.ERROR
        page, after = repository.accounts_page(
            ctx.tenant, migration.locator, ACCOUNTS_PER_RUN_JOB, start_key=payload.after
        )
        accounts_of_run = [account for account in page if account.accountMigrationState == wanted]
        following = (
            None if after is None else payload.model_copy(update={"at": payload.at + len(page), "after": dict(after)})
        )
    queued = 0
    for first in range(0, len(accounts_of_run), ACCOUNTS_PER_WRITE):
        queued += _queue(ctx, migration, payload, accounts_of_run[first : first + ACCOUNTS_PER_WRITE], lines, numbered)
    if following is not None:
        jobs.enqueue_once(
            ctx,
            JobType.MIGRATION_RUN,
            following.model_copy(update={"queued": payload.queued + queued}),
            locator=derived_locator(
                migration.createdAt, f"migration:{migration.locator}:run:{payload.run}:at:{following.at}"
            ),
        )
    elif not payload.queued + queued:  # a resume after the last account ended while the pause committed
        _end_if_done(ctx, migration.locator)
    return {"accountsQueued": queued, **({"continuesAt": following.at} if following is not None else {})}


def _slice_of_request(
    ctx: CallContext, migration: Migration, payload: RunPayload
) -> tuple[list[AccountMigration], RunPayload | None, dict[str, str], dict[str, list[tuple[str, str]]]]:
    """ACCOUNTS_PER_RUN_JOB accounts of the request from byte `payload.at` on, the payload of the slice after
    them (None at the request's end), by account locator the lines of at most LINE_IN_MESSAGE bytes, and by
    account locator the numbers its records will take ((plan, entity kind) each, `_numbers_wanted`). The
    request is read from there on a window at a time (ranged GETs)."""
    path = repository.request_path(migration.locator)
    _, model = configuration.current_model(ctx, resolved=True)
    accounts: list[AccountMigration] = []
    lines: dict[str, str] = {}
    wanted: dict[str, list[tuple[str, str]]] = {}
    for start_at, line in repository.request_lines(ctx.tenant, path, payload.at):
        if len(accounts) == ACCOUNTS_PER_RUN_JOB:
            return accounts, payload.model_copy(update={"at": start_at}), lines, wanted
        given = json.loads(line)
        account = _account_of_line(ctx, migration, path, given, len(line), start_at)
        accounts.append(account)
        wanted[account.accountLocator] = _numbers_wanted(model, given, new_account=migration.existingAccount is None)
        if len(line) <= LINE_IN_MESSAGE:
            lines[account.accountLocator] = line.decode()
    return accounts, None, lines, wanted


def _numbers_wanted(model: dict[str, Any], given: Any, *, new_account: bool) -> list[tuple[str, str]]:
    """The numbers an account's line will take when it migrates, as far as its line says before validation: its
    account type's plan (a new account) and each policy's product's plan, (plan, entity kind) in the order its job
    numbers them. A guess that misses costs a gap (a value nobody takes) or an UpdateItem (a number without one)."""
    wanted: list[tuple[str, str]] = []
    if not isinstance(given, dict):
        return wanted
    data = given.get("accountData")
    if new_account and isinstance(data, dict):
        kind = (model.get("accounts") or {}).get(data.get("accountType"))
        plan = kind.get("numberingPlan") if isinstance(kind, dict) else None
        if isinstance(plan, str) and plan:
            wanted.append((plan, ACCOUNT_ENTITY))
    given_policies = given.get("policies")
    for policy in given_policies if isinstance(given_policies, list) else []:
        name = policy.get("productName") if isinstance(policy, dict) else None
        product = products.product(model, name) if isinstance(name, str) else None
        if product is not None and product.numbering_plan:
            wanted.append((product.numbering_plan, POLICY_ENTITY))
    return wanted


def _reserve_numbers(
    ctx: CallContext, wanted: dict[str, list[tuple[str, str]]]
) -> dict[str, list[tuple[str, str, int, int]]]:
    """A block of counter values for each (plan, entity kind) the slice's accounts want (one UpdateItem each:
    `numbers.reserve_block`), shared out in the accounts' order: by account locator, (plan, kind, first, count)."""
    _, model = configuration.current_model(ctx, resolved=True)
    total: dict[tuple[str, str], int] = {}
    for each in wanted.values():
        for key in each:
            total[key] = total.get(key, 0) + 1
    next_value = {
        key: first
        for key, count in total.items()
        if (first := numbers.reserve_block(ctx, model, key[0], key[1], count)) is not None
    }
    shared: dict[str, list[tuple[str, str, int, int]]] = {}
    for locator, each in wanted.items():
        counts: dict[tuple[str, str], int] = {}
        for key in each:
            if key in next_value:
                counts[key] = counts.get(key, 0) + 1
        for key, count in counts.items():
            shared.setdefault(locator, []).append((key[0], key[1], next_value[key], count))
            next_value[key] += count
    return shared


def _account_of_line(
    ctx: CallContext, migration: Migration, path: str, given: Any, length: int, start_at: int
) -> AccountMigration:
    original = (given.get("accountData") or {}).get("id") or migration.existingAccount or ""
    locator = migration.existingAccount or account_locator(
        migration.locator, original, datetime.fromisoformat(given["accountData"]["createdAt"])
    )
    counted = int("accountData" in given) + sum(
        len(given.get(name) or []) for name in ("policies", "invoices", "payments", "disbursements")
    )
    return AccountMigration(
        accountLocator=locator,
        originalId=original,
        requestPath=path,
        requestStart=start_at,
        requestLength=length,
        totalItems=counted,
        lastUpdated=ctx.now,
    )


def _queue(
    ctx: CallContext,
    migration: Migration,
    payload: RunPayload,
    chunk: list[AccountMigration],
    lines: dict[str, str] | None = None,
    numbered: dict[str, list[tuple[str, str, int, int]]] | None = None,
) -> int:
    uow = wiring.unit_of_work(ctx)
    recovered = 0
    for account in chunk:
        if payload.mode == "start":
            uow.add(repository.account_write(ctx.tenant, migration.locator, account, new=True))
        elif payload.mode == "recover":
            recovered += 1
            uow.add(
                repository.account_write(
                    ctx.tenant,
                    migration.locator,
                    account.model_copy(
                        update={
                            "accountMigrationState": AccountMigrationState.PENDING,
                            "error": None,
                            "lastUpdated": ctx.now,
                        }
                    ),
                )
            )
    jobs.enqueue_many(
        uow,
        JobType.MIGRATION_ACCOUNT,
        [
            (
                AccountPayload(
                    migration=migration.locator,
                    account=account.accountLocator,
                    **(
                        {"request": lines[account.accountLocator], "at": account.requestStart}
                        if lines and account.accountLocator in lines
                        else {}
                    ),
                    numbers=(numbered or {}).get(account.accountLocator, []),
                ),
                _account_job(migration, account.accountLocator, payload.run),
            )
            for account in chunk
        ],
    )
    if recovered:
        uow.add(
            repository.count(
                ctx.tenant, migration.locator, {"processedAccounts": -recovered, "errorAccounts": -recovered}
            )
        )
    try:
        uow.commit()
    except AlreadyExists:
        # an earlier attempt of this job queued the chunk; a chunk of state-filtered accounts (resume,
        # recover) may be made up otherwise the second time, so its accounts are queued each on its own
        if payload.mode == "start" or len(chunk) == 1:
            return 0
        return sum(_queue(ctx, migration, payload, [account], lines, numbered) for account in chunk)
    return len(chunk)


# --- the account job ---------------------------------------------------------------------------------


def migrate_account(ctx: CallContext, payload: AccountPayload) -> dict[str, Any]:
    """The job of one account (its job keeps its own job item, `jobs.job_handler(keeps_its_job=True)`: read with the
    migration and the account's state, finished in the account's last write: 3 DynamoDB calls an account less)."""
    migration, account, job_over = _migration_and_account(ctx, payload)
    if account is not None and account.followUpPath is not None:  # committed, staged: what follows it
        _follow_up(ctx, migration, account)
        _end_if_done(ctx, migration.locator)
        return {"state": AccountMigrationState.COMPLETED.value}
    if account is None or account.accountMigrationState in DONE:
        if migration.processedAccounts >= migration.totalAccounts and migration.migrationState not in FINAL_STATES:
            _end_if_done(ctx, migration.locator)  # a rerun of the account whose worker died before the end move
        return {"skipped": True}
    if job_over:
        return {"skipped": True}  # a message of a job that ended (paused, or given up by the reaper) delivered again
    if migration.migrationState == MigrationState.PAUSED:
        return {"paused": True}  # stays pending: resume queues it again
    # `processing` is not written on its own (one TransactWriteItems less): the account goes from its state as read
    # to its end in its one last write; a crash before it leaves it as read, which its message's return reruns
    working = account.model_copy(
        update={"accountMigrationState": AccountMigrationState.PROCESSING, "lastUpdated": ctx.now}
    )
    as_read = account.accountMigrationState
    try:
        request = _request_of(ctx, migration, account, payload)
        with numbers.given(payload.numbers):
            failed, written = _migrate(ctx, migration, working, request)
    except DomainError as error:
        # what it joins (an existing account) changed, or a dependency was busy or did not answer (a commit that
        # timed out may have committed): a system error, rerun it
        if isinstance(error, (ConcurrentModification, Unavailable)):
            return _errored(ctx, payload, migration, working, as_read, error)
        failed, written = _account_failure(working, error.message), None  # what validation did not foresee
    except Exception as error:  # a system error: `error`, for recover
        logger().exception("migration account failed with a system error")
        return _errored(ctx, payload, migration, working, as_read, error)
    if written is None:
        assert failed is not None
        _finish_account(
            ctx,
            migration,
            working.model_copy(
                update={
                    "accountMigrationState": AccountMigrationState.FAILED,
                    "processedItems": working.totalItems,
                    "errorItems": failed.count(),
                    "lastUpdated": ctx.now,
                }
            ),
            {"failedAccounts": 1},
            [repository.failure_write(ctx.tenant, migration.locator, failed)],
            result={"state": AccountMigrationState.FAILED.value},
        )
        return {"state": AccountMigrationState.FAILED.value}
    # committed: what follows it is outside the try, so that a crash here is retried (the message comes back),
    # never taken for the account's error
    if written.followUpPath is not None:
        _follow_up(ctx, migration, written)
    _end_if_done(ctx, migration.locator)
    return {"state": AccountMigrationState.COMPLETED.value}


def _migration_and_account(
    ctx: CallContext, payload: AccountPayload
) -> tuple[Migration, AccountMigration | None, bool]:
    """The job's migration (404 when there is none), its account's state and whether its job is over
    (`jobs.kept_job_over`), read at once, with the tenant's deployment pointer (for the account's validation)."""
    if not 0 < len(payload.migration) <= MAX_LOCATOR_LENGTH or len(payload.account) > MAX_LOCATOR_LENGTH:
        return get_migration(ctx, payload.migration), None, False
    kept, pointer = jobs.kept_job_key(), configuration.current_pointer_key(ctx)
    job = (kept.pk, kept.sk) if kept is not None else None
    migration, account, found = repository.get_with_account(
        ctx.tenant, payload.migration, payload.account, [pointer, *([job] if job is not None else [])]
    )
    if migration is None:
        raise codes.MIGRATION_NOT_FOUND(f"migration {payload.migration} not found")
    configuration.remember_current(ctx, found.get(pointer))  # its validation reads no pointer
    return migration, account, job is not None and jobs.kept_job_over(found.get(job))


def _errored(
    ctx: CallContext,
    payload: AccountPayload,
    migration: Migration,
    account: AccountMigration,
    as_read: AccountMigrationState,
    error: Exception,
) -> dict[str, Any]:
    """The account in `error` (a system error, or records it changes changed meanwhile), which recover reruns;
    written on condition that the account is still in the state its job read (`as_read`: pending, or `processing`
    left by an earlier version's crashed run): when it is not, the error came after its commit (a commit whose
    answer was lost, an action after it), and the job goes on from the account as committed."""
    try:
        _finish_account(
            ctx,
            migration,
            account.model_copy(
                update={
                    "accountMigrationState": AccountMigrationState.ERROR,
                    "error": f"{type(error).__name__}: {error}"[:1000],
                    "lastUpdated": ctx.now,
                }
            ),
            {"errorAccounts": 1},
            [],
            while_in=as_read,
            result={"state": AccountMigrationState.ERROR.value},
        )
    except ConcurrentModification:
        _, committed, _ = _migration_and_account(ctx, payload)
        if committed is None or committed.accountMigrationState not in DONE:
            raise  # not what a commit leaves: the message comes back
        return migrate_account(ctx, payload)
    return {"state": AccountMigrationState.ERROR.value}


def _finish_account(
    ctx: CallContext,
    migration: Migration,
    account: AccountMigration,
    counters: dict[str, int],
    writes: list[Any],
    uow: Any = None,
    *,
    end: bool = True,
    while_in: AccountMigrationState | None = None,
    result: dict[str, Any],
) -> None:
    """The account's state and the migration's counters written with `writes` (in `uow`, if given), and the
    account's job finished in the same write with `result` (`jobs.finish_in`)."""
    uow = uow or wiring.unit_of_work(ctx)
    uow.add(
        repository.account_write(ctx.tenant, migration.locator, account, while_in=while_in),
        repository.count(ctx.tenant, migration.locator, {"processedAccounts": 1, **counters}),
        *writes,
    )
    jobs.finish_in(uow, result)
    uow.commit()
    if end:
        _end_if_done(ctx, migration.locator)


def _end_if_done(ctx: CallContext, locator: str) -> None:
    """Once every account is processed: finished, failed or error, with its event (one writer wins)."""
    migration = get_migration(ctx, locator)
    if migration.processedAccounts < migration.totalAccounts or migration.migrationState in FINAL_STATES:
        return
    state = (
        MigrationState.ERROR
        if migration.errorAccounts
        else (MigrationState.FAILED if migration.failedAccounts else MigrationState.FINISHED)
    )
    uow = wiring.unit_of_work(ctx)
    uow.add(repository.move(ctx.tenant, migration.model_copy(update={"updatedAt": ctx.now}), state))
    uow.record_event(END_EVENTS[state], {"migrationLocator": locator})
    try:
        uow.commit()
    except ConcurrentModification:
        pass  # another account's job ended it, or a pause or resume moved it: the next account's job looks again


def _account_failure(account: AccountMigration, message: str) -> AccountFailures:
    return AccountFailures(
        accountLocator=account.accountLocator,
        accountOriginalId=account.originalId,
        accountError=_failure(account.originalId, account.accountLocator, "account", [message]),
    )


def _failure(original: str, locator: str, what: str, messages: list[str]) -> EntityFailure:
    return EntityFailure(
        originalId=original,
        errors=datamodel.ValidationResult(
            success=False,
            validationItems=[datamodel.ValidationItem(locator=locator, elementType=what, errors=messages)],
        ),
    )


# --- building an account's records -----------------------------------------------------------------------


@dataclass
class _Built:
    policy: Policy
    terms: list[Term]
    transactions: list[Transaction]
    segments: list[Segment]
    elements: dict[str, str] = field(default_factory=dict)
    """Static element locator -> original element id."""
    brought: list[installments.Brought] = field(default_factory=list)
    """Its transactions that bring their installments (billing does not build theirs)."""


def _migrate(
    ctx: CallContext, migration: Migration, account: AccountMigration, request: MigrationRequest
) -> tuple[AccountFailures | None, AccountMigration | None]:
    """(failures, None) when something fails validation; else commits the account and answers (None, its state
    as committed: a staged account's names the writes that follow its commit, which the caller makes)."""
    failures = AccountFailures(accountLocator=account.accountLocator, accountOriginalId=account.originalId)
    config_version, model = configuration.current_model(ctx, resolved=True)
    owner = _owner(ctx, migration, account, request, failures)
    default_currency = str(model.get("defaultCurrency") or "USD")
    existing, brought_before = _existing_invoices(ctx, migration, request)
    differences = reconciliation.reconcile(
        request,
        {policy.id: policy.currency or default_currency for policy in request.policies},
        default_currency,
        existing,
    )
    for original, (locator, earlier) in brought_before.items():
        differences.invoices[original].append(
            f"invoice {original}: the account has it already (invoice {locator}, brought by migration {earlier})"
        )
    built: list[tuple[PolicyMigrationRequest, _Built]] = []
    for policy in request.policies:
        problems: list[str] = []
        result = (
            _policy(ctx, model, config_version, migration, account, owner, request, policy, problems)
            if owner is not None
            else None
        )
        problems.extend(differences.policies.get(policy.id, []))
        if problems:
            failures.policies[policy.id] = _failure(policy.id, "", policy.productName, problems)
        elif result is not None:
            built.append((policy, result))
    plans = configuration.billing_plans(ctx) if request.payments else None
    for payment in request.payments:
        found = plans.payment_type(payment.paymentType) if plans else None
        if found is None or found.abstract:
            differences.payments[payment.id].insert(
                0, f"paymentType: {payment.paymentType!r} is not a configured payment type"
            )
    kinds = model.get("disbursements") or {}
    for disbursement in request.disbursements:
        if not any(
            name.lower() == disbursement.disbursementType.lower() and not (kind or {}).get("abstract")
            for name, kind in kinds.items()
        ):
            differences.disbursements[disbursement.id].insert(
                0, f"disbursementType: {disbursement.disbursementType!r} is not a configured disbursement type"
            )
    for name in ("invoices", "payments", "disbursements"):
        for original, messages in getattr(differences, name).items():
            getattr(failures, name)[original] = _failure(original, "", name[:-1], messages)
    accounting = getattr(request, "accounting", None)
    if differences.account:
        failures.accountError = failures.accountError or _failure(
            account.originalId, account.accountLocator, "account", differences.account
        )
    if failures.count() or owner is None:
        return failures, None
    uow = _Collected(ctx)
    pending: list[list[Any]] = []
    if migration.existingAccount is None:
        accounts.add_migrated_account(ctx, uow, owner)
    mapped: dict[str, MappingObject] = {}
    lattices: list[tuple[InstallmentLattice, list[Installment]]] = []
    invoiced: dict[str, list[Installment]] = {invoice.id: [] for invoice in request.invoices}
    for policy, result in built:
        token = f"migration:{migration.locator}:{result.policy.locator}"
        policies.add_migrated_policy(
            ctx,
            uow,
            result.policy,
            result.terms,
            result.transactions,
            result.segments,
            token=token,
            billed=frozenset(b.transaction.locator for b in result.brought),
            pending=pending,
        )
        for each in result.brought:
            lattice, made = installments.of_transaction(
                result.policy, owner, each, f"{token}:{each.transaction.locator}"
            )
            lattices.append((lattice, list(made.values())))
            for given_installment in each.given.installments:
                invoiced[given_installment.invoiceId].append(made[given_installment.id])
        mapped[result.policy.locator] = MappingObject(
            migratedAt=ctx.now,
            originalId=policy.id,
            childrenMappings={
                "terms": {term.locator: str(term.number) for term in result.terms},
                "transactions": {
                    transaction.locator: f"{term}.{index}" for term, index, transaction in _positions(result)
                },
                "elements": result.elements,
            },
        )
    seed = f"migration:{migration.locator}:{account.accountLocator}"
    position = {given.id: index for index, given in enumerate(request.invoices)}
    disbursed = [
        billing_payments.MigratedDisbursement(
            seed=f"{seed}:disbursement:{given.id}",
            type=given.disbursementType,
            currency=currency,
            time=given.disbursementTime,
            createdBy=request.defaultCreatedBy,
            amount=amount,
            data=given.data,
        )
        for given, (currency, amount) in zip(request.disbursements, reconciliation.disbursed(request, default_currency))
    ]
    written, paid, paid_out = (
        billing_payments.add_migrated(
            ctx,
            uow,
            owner,
            lattices,
            [
                invoices.MigratedInvoice(
                    seed=f"{seed}:invoice:{given.id}",
                    installments=invoiced[given.id],
                    startTime=given.startTime,
                    endTime=given.endTime,
                    dueTime=given.dueTime,
                    generateTime=given.generateTime,
                    timezone=given.timezone,
                    discarded=given.invoiceState == "discarded",
                )
                for given in request.invoices
            ],
            [
                billing_payments.MigratedPayment(
                    seed=f"{seed}:payment:{given.id}",
                    type=given.paymentType,
                    currency=given.currency or default_currency,
                    time=given.paymentTime,
                    createdBy=given.createdBy or request.defaultCreatedBy,
                    data=given.data,
                    items=[(_target(item.invoiceId, position, existing), item.amount) for item in given.paymentItems],
                )
                for given in request.payments
            ],
            dict(accounting.originalAccountBalances) if accounting else {},
            disbursed,
            list({invoice.locator: invoice for invoice in existing.values()}.values()),
            new_account=migration.existingAccount is None,
        )
        if lattices
        or request.payments
        or disbursed
        or (accounting and any(accounting.originalAccountBalances.values()))
        else ([], [], [])
    )
    completed = account.model_copy(
        update={
            "accountMigrationState": AccountMigrationState.COMPLETED,
            "processedItems": account.totalItems,
            "lastUpdated": ctx.now,
        }
    )
    mapping = repository.mapping_write(
        ctx.tenant,
        AccountMappings(
            accountLocator=account.accountLocator,
            migrationLocator=migration.locator,
            originalAccountId=account.originalId,
            policies=mapped,
            invoices={
                invoice.locator: MappingObject(migratedAt=ctx.now, originalId=given.id)
                for invoice, given in zip(written, request.invoices)
            },
            payments={
                record.locator: MappingObject(migratedAt=ctx.now, originalId=given.id)
                for record, given in zip(paid, request.payments)
            },
            disbursements={
                record.locator: MappingObject(migratedAt=ctx.now, originalId=given.id)
                for record, given in zip(paid_out, request.disbursements)
            },
        ),
    )
    brought = (
        [
            repository.invoices_write(
                ctx.tenant,
                account.accountLocator,
                migration.locator,
                {given.id: invoice.locator for invoice, given in zip(written, request.invoices)},
            )
        ]
        if written
        else []
    )
    committed = _commit_account(ctx, migration, completed, [mapping, *brought], uow, pending)
    if isinstance(committed, str):
        failures.accountError = _failure(account.originalId, account.accountLocator, "account", [committed])
        return failures, None
    return None, committed


def _target(name: str, position: dict[str, int], existing: dict[str, Invoice]) -> int | str:
    """What a payment item pays (it reconciled): the position of an invoice the request brings, or the locator of
    one the account has."""
    return position[name] if name in position else existing[name].locator


def _existing_invoices(
    ctx: CallContext, migration: Migration, request: MigrationRequest
) -> tuple[dict[str, Invoice], dict[str, tuple[str, str]]]:
    """The invoices of the existing account a migration joins that its payment items name (by the original id
    an earlier migration brought it with, else by locator), by what they name; and the invoices the request
    brings whose original ids earlier migrations brought to the account already: original id -> (locator,
    migration). One Query (the account's migrated invoices) and one BatchGetItem."""
    if migration.existingAccount is None:
        return {}, {}
    brought = {invoice.id for invoice in request.invoices}
    named = {item.invoiceId for payment in request.payments for item in payment.paymentItems} - brought
    if not named and not brought:
        return {}, {}
    earlier = repository.migrated_invoices(ctx.tenant, migration.existingAccount)
    wanted = {name: earlier[name][0] if name in earlier else name for name in named}
    locators = {locator for locator in wanted.values() if len(locator) <= MAX_LOCATOR_LENGTH}
    found = (
        {invoice.locator: invoice for invoice in invoices.invoices_of_account(ctx, migration.existingAccount, locators)}
        if locators
        else {}
    )
    return (
        {name: found[locator] for name, locator in wanted.items() if locator in found},
        {original: earlier[original] for original in sorted(brought) if original in earlier},
    )


# --- committing an account: in one write, or staged -----------------------------------------------------


class _Collected:
    """The unit of work an account's records are built into (every domain's `add_migrated...` adds to it):
    it holds them, with their events and after-commit actions, for `_commit_account` to write."""

    def __init__(self, ctx: CallContext):
        self.ctx = ctx
        self.capacity = sys.maxsize
        self.ops: list[Any] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.actions: list[Callable[[], object]] = []

    @property
    def remaining(self) -> int:
        return self.capacity - len(self.ops) - len(self.events)

    def add(self, *ops: Any) -> None:
        self.ops.extend(ops)

    def claim(self, op: Any) -> None:
        raise AssertionError("a migration runs no due work: nothing claims a due entry in its write")

    def after_commit(self, action: Callable[[], object]) -> None:
        self.actions.append(action)

    def after_failure(self, action: Callable[[], object]) -> None:
        """Nothing a migration writes is written ahead of its account's write (`_commit_account`)."""

    def record_event(self, event_type: str, data: dict[str, Any]) -> None:
        self.events.append((event_type, data))

    def commit(self) -> list[dict[str, Any]]:
        raise AssertionError("an account's records are written by _commit_account")


def _commit_account(
    ctx: CallContext,
    migration: Migration,
    completed: AccountMigration,
    mapped: list[Any],
    collected: _Collected,
    pending: list[list[Any]],
) -> AccountMigration | str:
    """Write the account's records, all or nothing, with its state `completed` and the migration's counters.
    They fit in one TransactWriteItems: in that one. Else staged (answers why not, writing nothing, when even
    that cannot hold them), by `repository.split`; answers the account's state as committed:

    1. what nothing a client or a job can reach before the account commits (terms, segments, installments,
       lattices, references by policy...) is written first, as many to a
       TransactWriteItems as it holds; a rerun rewrites the same records (its locators are the same);
    2. the commit: one TransactWriteItems of what makes them visible (the account, the policies' roots and
       last transactions, whatever an index lists, the account's invoices and payments, numbers, every update,
       the mappings), its state
       and counters, naming in S3 the writes that follow it;
    3. what acts on the records (jobs and due entries) and the events follow the commit (`_follow_up`, by
       the caller, migrate_account, outside its handling of the account's errors).

    A crash in 1 leaves records no read shows (the account's state `error`; recover reruns it); in 3, the
    account's job is retried and finishes what follows. The commit's after-commit actions (metrics) are
    dropped but for the jobs' messages, which `_follow_up` sends. `mapped`: the writes of its mappings (and of
    its invoices by original id), in the commit. `pending`: the policies' pending records (transactions but
    their last, segments: policies.add_migrated_policy), in the one write with the rest when they fit in it
    (visible at once with their committing transactions: one TransactWriteItems less), else written first
    (`policies.write_pending`), before the staged ones."""
    final = wiring.unit_of_work(ctx)
    held = [op for group in pending for op in group]
    if len(held) + len(collected.ops) + len(collected.events) + len(mapped) + 3 <= final.remaining and (
        not held or repository.size(held) <= PENDING_IN_COMMIT_BYTES
    ):
        final.add(*held, *collected.ops)
        for event_type, data in collected.events:
            final.record_event(event_type, data)
        for action in collected.actions:
            final.after_commit(action)
        _finish_account(
            ctx,
            migration,
            completed,
            {"completedAccounts": 1},
            mapped,
            final,
            end=False,
            result={"state": AccountMigrationState.COMPLETED.value},
        )
        return completed
    split = repository.split(collected.ops, completed.accountLocator)
    gate = [*split[repository.GATE], *mapped]
    if len(gate) + 3 > final.remaining:
        return (
            f"The account brings {len(gate)} records that must become visible at once (policies, payments, "
            f"numbers, indexed records), more than one write holds ({final.capacity})"
        )
    policies.write_pending(ctx, pending)
    path = repository.follow_up_path(migration.locator, completed.accountLocator)
    repository.put_follow_up(
        ctx.tenant, path, repository.follow_up_content(split[repository.DEFERRED], collected.events)
    )
    repository.write_staged(ctx.tenant, split[repository.STAGED])
    committed = completed.model_copy(update={"followUpPath": path, "followUpsDone": 0})
    final.add(
        *gate,
        repository.account_write(ctx.tenant, migration.locator, committed),
        repository.count(ctx.tenant, migration.locator, {"processedAccounts": 1, "completedAccounts": 1}),
    )
    jobs.finish_in(final, {"state": AccountMigrationState.COMPLETED.value})
    final.commit()
    return committed


def _follow_up(ctx: CallContext, migration: Migration, account: AccountMigration) -> None:
    """The writes that follow a staged account's commit, `FOLLOW_UP_WRITE` actions each, from the
    `followUpsDone`-th on, each counting itself on condition of the count it read (a retry writes none twice);
    each job's message is sent once its write committed."""
    assert account.followUpPath is not None
    content = repository.follow_up(ctx.tenant, account.followUpPath)
    if content is None:
        raise RuntimeError(f"the follow-up writes of account {account.accountLocator} are missing")
    actions = repository.follow_up_actions(content)
    writes = [actions[start : start + FOLLOW_UP_WRITE] for start in range(0, len(actions), FOLLOW_UP_WRITE)] or [[]]
    for done in range(account.followUpsDone, len(writes)):
        uow = wiring.unit_of_work(ctx)
        for head, value in writes[done]:
            if isinstance(head, str):
                uow.record_event(head, value)
                continue
            uow.add(head)
            if value.get("entity") == "job":
                message = jobs.JobMessage(
                    job_type=value["jobType"],
                    tenant=ctx.tenant,
                    job_locator=value["locator"],
                    payload=dict(value.get("payload") or {}),
                    correlation_id=value["correlationId"],
                )
                uow.after_commit(partial(wiring.job_queue().send, message.model_dump_json()))
        uow.add(
            repository.follow_up_done(
                ctx.tenant, migration.locator, account.accountLocator, done, last=done == len(writes) - 1
            )
        )
        uow.commit()


def _positions(result: _Built) -> Iterable[tuple[int, int, Transaction]]:
    by_term = {term.locator: term.number for term in result.terms}
    counters: dict[str, int] = {}
    for transaction in result.transactions:
        index = counters.get(transaction.termLocator, 0)
        counters[transaction.termLocator] = index + 1
        yield by_term[transaction.termLocator], index, transaction


def _owner(
    ctx: CallContext,
    migration: Migration,
    account: AccountMigration,
    request: MigrationRequest,
    failures: AccountFailures,
) -> Account | None:
    """The account the records go to: the existing one, or the new one (None, with its failure, when it fails)."""
    if migration.existingAccount is not None:
        return accounts.get_account(ctx, migration.existingAccount)
    assert isinstance(request, AccountMigrationRequest)
    data = request.accountData
    preferences = data.preferences.installmentPreferences if data.preferences else None
    try:
        fields = AccountFields(
            type=data.accountType,
            data=data.data,
            billingLevel=data.billingLevel,
            preferences=Preferences.model_validate(
                {"installmentPreferences": preferences.model_dump(exclude_none=True)}
            )
            if preferences
            else None,
            autoRenewalPlanName=data.autoRenewalPlanName,
            delinquencyPlanName=data.delinquencyPlanName,
            excessCreditPlanName=data.excessCreditPlanName,
            shortfallTolerancePlanName=data.shortfallTolerancePlanName,
        )
        built = accounts.migrated_account(
            ctx,
            fields,
            locator=account.accountLocator,
            created_at=data.createdAt,
            created_by=data.createdBy or request.defaultCreatedBy,
        )
    except DomainError as error:
        messages = [f"{problem.field}: {problem.message}" for problem in error.field_errors] or [error.message]
        failures.accountError = _failure(data.id, account.accountLocator, data.accountType, messages)
        return None
    except ValidationError as error:
        failures.accountError = _failure(
            data.id,
            account.accountLocator,
            data.accountType,
            [f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}" for problem in error.errors()],
        )
        return None
    if built.validationResult is not None and not built.validationResult.success:
        failures.accountError = EntityFailure(originalId=data.id, errors=built.validationResult)
        return None
    return built


def _policy(
    ctx: CallContext,
    model: dict[str, Any],
    config_version: str,
    migration: Migration,
    account: AccountMigration,
    owner: Account,
    request: MigrationRequest,
    given: PolicyMigrationRequest,
    problems: list[str],
) -> _Built | None:
    """The policy's records, or None with what is wrong in `problems`."""
    product = datamodel.product_type(model, given.productName)
    if product is None:
        problems.append(f"productName: {given.productName!r} is not a configured product")
        return None
    eligible = product.definition.get("eligibleAccountTypes") or []
    if eligible and owner.type not in eligible:
        problems.append(f"productName: product {given.productName} is not for {owner.type} accounts")
    currency = given.currency or model.get("defaultCurrency") or "USD"
    if len(currency) != 3 or not currency.isalpha() or not currency.isupper():
        problems.append(f"currency: {currency!r} is not an ISO 4217 currency code")
    zone = given.timezone or owner.timezone
    if not checks.is_time_zone(zone):
        problems.append(f"timezone: {zone!r} is not an IANA time zone")
    static, errors = datamodel.validate_data(
        model, product.definition.get("staticData") or {}, given.staticData, path="staticData"
    )
    problems.extend(datamodel.error_text(error) for error in errors)
    for name, collection in (("autoRenewalPlanName", "autoRenewalPlans"), ("delinquencyPlanName", "delinquencyPlans")):
        value = getattr(given, name)
        if value is not None and value not in (model.get(collection) or {}):
            problems.append(f"{name}: {value!r} is not defined in the configuration's {collection}")
    if problems:
        return None
    seed = f"migration:{migration.locator}:{account.accountLocator}:policy:{given.id}"
    policy_locator = derived_locator(given.createdAt, seed)
    created_by = given.createdBy or request.defaultCreatedBy
    charge_categories = {
        name: str((definition or {}).get("category") or "none")
        for name, definition in (model.get("charges") or {}).items()
    }
    configured_types = {
        name: str(definition.get("category"))
        for name, definition in (model.get("transactionTypes") or {}).items()
        if isinstance(definition, dict)
    }
    terms: list[Term] = []
    transactions: list[Transaction] = []
    segments: list[Segment] = []
    brought: list[installments.Brought] = []
    elements: dict[str, str] = {}
    previous_term: str | None = None
    cancellation: datetime | None = None
    for number, term_request in enumerate(given.terms):
        where = f"terms[{number}]"
        if term_request.endTime <= term_request.startTime:
            problems.append(f"{where}: endTime is not after startTime")
            continue
        if terms and term_request.startTime < terms[-1].endTime:
            problems.append(f"{where}: starts before the previous term ends")
        term_locator = derived_locator(term_request.startTime, f"{seed}:term:{number}")
        terms.append(
            Term(
                locator=term_locator,
                staticLocator=term_locator,
                policyLocator=policy_locator,
                number=number,
                startTime=term_request.startTime,
                endTime=term_request.endTime,
                previousTermLocator=previous_term,
            )
        )
        previous_term = term_locator
        for index, given_transaction in enumerate(term_request.transactions):
            at = f"{where}.transactions[{index}]"
            segment_request = given_transaction.segment
            if segment_request is None:
                problems.append(f"{at}.segment: every migrated transaction brings its segment")
                continue
            if not term_request.startTime <= segment_request.startTime < term_request.endTime:
                problems.append(f"{at}.segment.startTime: not within its term")
                continue
            tree = _tree(segment_request.rootElement)
            if segment_request.rootElement.elementType != given.productName:
                problems.append(
                    f"{at}.segment.rootElement.elementType: the root element is the product "
                    f"{given.productName}, not {segment_request.rootElement.elementType}"
                )
                continue
            normalised, errors = datamodel.validate_element_tree(model, tree, path=f"{at}.segment.rootElement")
            problems.extend(datamodel.error_text(error) for error in errors)
            transaction_locator = derived_locator(given_transaction.createdAt, f"{seed}:tx:{number}:{index}")
            segment_locator = derived_locator(segment_request.startTime, f"{seed}:seg:{number}:{index}")
            duration = durations.duration(segment_request.startTime, term_request.endTime, given.durationBasis, zone)
            charges: list[Charge] = []
            priced: list[tuple[Charge, Any]] = []
            element = _element(
                segment_request.rootElement,
                normalised,
                segment_locator,
                segment_request.startTime,
                f"{seed}:{number}:{index}",
                seed,
                given.createdAt,
                elements,
            )
            for original, element_locator, static_locator, charge_request, position in _charges(
                segment_request.rootElement, element
            ):
                charge_at = f"{at}.charges[{original}][{position}]"
                if charge_request.chargeType not in charge_categories:
                    problems.append(f"{charge_at}.chargeType: {charge_request.chargeType!r} is not a configured charge")
                    continue
                try:
                    amount = money.round_money(charge_request.rate * duration, currency)
                except ValueError as error:
                    problems.append(f"{charge_at}.rate: {error}")
                    continue
                items = sum((item.amount for item in charge_request.installmentItems), Decimal(0))
                if given_transaction.installments and not charge_request.installmentItems and amount:
                    problems.append(
                        f"{charge_at}: the transaction brings its installments, but none bills this charge of {amount}"
                    )
                elif charge_request.installmentItems and items != amount:
                    problems.append(
                        f"{charge_at}: its installment items add up to {items}, the charge "
                        f"({charge_request.rate} x {duration} {given.durationBasis}) to {amount}"
                    )
                charges.append(
                    Charge(
                        locator=derived_locator(
                            given_transaction.createdAt, f"{seed}:{number}:{index}:charge:{original}:{position}"
                        ),
                        elementLocator=element_locator,
                        elementStaticLocator=static_locator,
                        chargeType=charge_request.chargeType,
                        chargeCategory=charge_categories[charge_request.chargeType],
                        rate=charge_request.rate,
                        referenceRate=charge_request.referenceRate,
                        amount=amount,
                        tag=charge_request.tag,
                    )
                )
                priced.append((charges[-1], charge_request))
            category = _category(configured_types, given_transaction.transactionType, number, index)
            if category == TransactionCategory.CANCELLATION:
                cancellation = segment_request.startTime
            segment = Segment(
                locator=segment_locator,
                transactionLocator=transaction_locator,
                policyLocator=policy_locator,
                termLocator=term_locator,
                segmentType=segment_request.segmentType,
                startTime=segment_request.startTime,
                endTime=term_request.endTime,
                duration=duration,
                element=element,
                basedOn=segments[-1].locator if segments else None,
            )
            transactions.append(
                Transaction(
                    locator=transaction_locator,
                    staticLocator=transaction_locator,
                    policyLocator=policy_locator,
                    termLocator=term_locator,
                    effectiveTime=segment_request.startTime,
                    transactionState=TransactionState.ISSUED,
                    transactionCategory=category,
                    transactionType=given_transaction.transactionType,
                    preferences=given_transaction.preferences.model_dump(exclude_none=True)
                    if given_transaction.preferences
                    else {},
                    createdAt=given_transaction.createdAt,
                    createdBy=given_transaction.createdBy or created_by,
                    issuedTime=given_transaction.issuedTime,
                    acceptedTime=given_transaction.issuedTime,
                    baseTransactionLocator=transactions[-1].locator if transactions else None,
                    segments=[SegmentSummary.of(segment)],
                    charges=charges,
                    configVersion=config_version,
                )
            )
            segments.append(segment)
            if given_transaction.installments:
                brought.append(
                    installments.Brought(
                        transactions[-1],
                        given_transaction,
                        term_request.startTime,
                        term_request.endTime,
                        priced,
                        element,
                    )
                )
    if not problems and transactions:
        transactions = _settled(given, zone, currency, terms, transactions, segments, brought, problems, seed)
    if problems or not transactions:
        if not problems:
            problems.append("terms: the policy has no transaction")
        return None
    last = transactions[-1]
    policy = Policy(
        locator=policy_locator,
        accountLocator=owner.locator,
        productName=given.productName,
        currency=currency,
        timezone=zone,
        durationBasis=given.durationBasis,
        billingLevel=given.billingLevel or owner.billingLevel,
        autoRenewalPlanName=given.autoRenewalPlanName,
        delinquencyPlanName=given.delinquencyPlanName,
        static=static,
        preferences=given.preferences.model_dump(exclude_none=True) if given.preferences else {},
        startTime=terms[0].startTime,
        endTime=terms[-1].endTime,
        issuedTransactionLocator=last.locator,
        latestSegmentLocator=segments[-1].locator,
        latestTermLocator=terms[-1].locator,
        branchHeadTransactionLocators=[last.locator],
        cancellationTime=cancellation,
        configVersion=config_version,
        createdAt=given.createdAt,
        createdBy=created_by,
        updatedAt=given.createdAt,
        updatedBy=created_by,
    )
    return _Built(policy, terms, transactions, segments, elements, brought)


def _settled(
    given: PolicyMigrationRequest,
    zone: str,
    currency: str,
    terms: list[Term],
    transactions: list[Transaction],
    segments: list[Segment],
    brought: list[installments.Brought],
    problems: list[str],
    seed: str,
) -> list[Transaction]:
    """The history's charges as issuing it here would have left them. A source brings each segment's own rated
    charges; a change, cancellation or reinstatement issued here also carries the adjustments of the earlier
    coverage it cuts or gives back (transactions.history_adjustments), so that the policy's charges add up to the
    coverage it holds. A transaction whose installments the source brings cannot bill them, and fails its policy."""
    try:
        adjusted = history_adjustments(
            given.durationBasis,
            zone,
            currency,
            terms,
            list(zip(transactions, segments, strict=True)),
            lambda transaction, number: derived_locator(
                transaction.createdAt, f"{seed}:adjustment:{transaction.locator}:{number}"
            ),
        )
    except ValueError as error:
        problems.append(f"terms: {error}")
        return transactions
    billed_by_source = {each.transaction.locator for each in brought}
    for index, (transaction, adjustments) in enumerate(zip(transactions, adjusted, strict=True)):
        if adjustments and transaction.locator in billed_by_source:
            problems.append(
                f"terms: transaction {index} brings its installments, but none bills the "
                f"{sum((charge.amount for charge in adjustments), Decimal(0))} it adjusts the earlier coverage by"
            )
    return [
        transaction.model_copy(update={"charges": [*transaction.charges, *adjustments]}) if adjustments else transaction
        for transaction, adjustments in zip(transactions, adjusted, strict=True)
    ]


def _category(configured: dict[str, str], transaction_type: str, term: int, index: int) -> TransactionCategory:
    """The configured category of the type; else the type if it names one; else by its place in the history."""
    named = configured.get(transaction_type) or transaction_type
    if named in {member.value for member in TransactionCategory}:
        return TransactionCategory(named)
    if index == 0:
        return TransactionCategory.ISSUANCE if term == 0 else TransactionCategory.RENEWAL
    return TransactionCategory.CHANGE


def _tree(element: ElementMigrationRequest) -> dict[str, Any]:
    return {
        "type": element.elementType,
        "locator": element.id,
        "data": element.data,
        "coverageTerms": element.coverageTerms,
        "elements": [_tree(child) for child in element.elements],
    }


def _element(
    given: ElementMigrationRequest,
    normalised: dict[str, Any],
    parent: str,
    effective: datetime,
    seed: str,
    policy_seed: str,
    created: datetime,
    originals: dict[str, str],
) -> Element:
    """The segment's element tree: locators derived per segment, static locators per original element id (the
    same element in every segment), the data as validated (the policies domain sets categories and parents)."""
    static = derived_locator(created, f"{policy_seed}:element:{given.id}")
    locator = derived_locator(effective, f"{seed}:element:{given.id}")
    originals[static] = given.id
    listed = normalised.get("elements")
    children: list[Any] = listed if isinstance(listed, list) else []
    return Element(
        locator=locator,
        staticLocator=static,
        type=given.elementType,
        parentLocator=parent,
        data=normalised.get("data") if isinstance(normalised.get("data"), dict) else given.data,
        coverageTerms=given.coverageTerms,
        elements=[
            _element(
                child,
                children[i] if i < len(children) and isinstance(children[i], dict) else {},
                locator,
                effective,
                seed,
                policy_seed,
                created,
                originals,
            )
            for i, child in enumerate(given.elements)
        ],
    )


def _charges(given: ElementMigrationRequest, element: Element) -> Iterable[tuple[str, str, str, Any, int]]:
    """(original element id, element locator, static locator, charge request, its position) of the whole tree."""
    for position, charge in enumerate(given.charges):
        yield given.id, element.locator, element.staticLocator, charge, position
    for child_request, child in zip(given.elements, element.elements):
        yield from _charges(child_request, child)
