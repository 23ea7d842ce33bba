"""Anonymization (DECISIONS.md "Anonymization (compliance)"; models.py says what is personal).

`start` answers one job per reference type, `initialized`, and enqueues it (`compliance.anonymize`); a
record a job has already (`pending`) or that is `anonymized` goes to no new job: its job is answered
with `fromCurrentRequest` false, so a replayed request starts nothing twice. The job (`run`) moves to
`running`, then for each assigned record (an account, quote, policy, payment or contact) asks retention first
(`assess`, `_reach`); a restricted one is listed in `problematicReferenceLocators.assigned` and nothing of it
changes, the others are anonymized (`_records`: an account with its quotes, policies with their terms,
segments and transactions, its payments and billing records; a policy with its quote; a quote with the
policy issued from it; a payment alone; and the documents of all of them: rendered again from their replaced
data, an attached one's file removed) with
one `*.anonymize` event per record, and `anonymizedAt` set. A contact is anonymized in the records that list
it (`_anonymize_contact`), which are kept by retention as when they are referenced themselves. The job ends
`completed`, or `suspended` with
the reasons in `processingErrors` when it met a restricted record. Events carry locators only, so the
stream holds no personal data to replace.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from chalicelib.accounts import service as accounts
from chalicelib.billing.credit import service as billing
from chalicelib.billing.delinquency import service as delinquencies
from chalicelib.billing.invoices import service as invoices
from chalicelib.billing.payments import service as payments
from chalicelib.compliance import repository
from chalicelib.compliance.models import (
    FINISHED,
    SUPPORTED_REFERENCE_TYPES,
    AnonymizationJob,
    AnonymizationReference,
    Assessment,
    ContactView,
    JobStatus,
    PolicyView,
    ProblematicReferences,
    QuoteView,
    ReferenceState,
    Request,
    Restriction,
    Target,
    personal_fields,
    personal_texts,
    policy_restrictions,
    quote_restrictions,
    scrubbed,
    unquoted,
    without_contact,
)
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import MAX_COUNT, Page, PageRequest
from chalicelib.documents import service as documents
from chalicelib.policies import service as policies
from chalicelib.quotes import service as quotes
from chalicelib.runtime import jobs, wiring
from chalicelib.runtime.job_types import JobType

T = TypeVar("T")
POLICY_CODES = {"onRisk": codes.RETENTION_POLICY_ON_RISK, "status": codes.RETENTION_POLICY_STATUS}
DOCUMENT_OWNERS = {
    "quote": "quote",
    "policy": "policy",
    "transaction": "transaction",
    "segment": "segment",
    "term": "term",
    "invoice": "invoice",
}
"""Stored record entity -> the reference type its documents name it by."""
EVENTS = {
    "account": "policy.account.anonymize",
    "quote": "policy.quote.anonymize",
    "policy": "policy.anonymize",
    "payment": "billing.payment.anonymize",
}
EVENT_DATA = {
    "account": "accountLocator",
    "quote": "quoteLocator",
    "policy": "policyLocator",
    "payment": "paymentLocator",
}
EVENTS_PER_WRITE = 90
CONTACT_EVENT = "contact.anonymized"
"""ContactEventData {locator, staticLocator}: both the contact's locator, the one the records list."""


# --- reading ------------------------------------------------------------------------------------------


def _checked(request: Request) -> dict[str, list[str]]:
    """The references by type, without repeats (400 for an unsupported type, or for none)."""
    if not any(request.references.values()):
        raise codes.REQUEST_INVALID(
            "Name at least one record to anonymize", field_errors=[FieldError("references", "no reference locators")]
        )
    unsupported = sorted(
        kind for kind, locators in request.references.items() if locators and kind not in SUPPORTED_REFERENCE_TYPES
    )
    if unsupported:
        raise codes.ANONYMIZATION_UNSUPPORTED_REFERENCE(
            f"Anonymization takes {', '.join(SUPPORTED_REFERENCE_TYPES)} references, not {', '.join(unsupported)}",
            field_errors=[FieldError(f"references.{kind}", "not supported") for kind in unsupported],
        )
    return {kind: list(dict.fromkeys(locators)) for kind, locators in request.references.items() if locators}


def _found(ctx: CallContext, kind: str, locators: list[str]) -> dict[str, Any]:
    """The referenced records by locator, in batch reads (a payment: by its alias; a contact: the records that
    list it, `ContactView`; 404 naming those the tenant has not, and contacts no record lists that no job
    anonymized)."""
    if kind == "payment":
        return {locator: payments.payment(ctx, locator) for locator in locators}
    if kind == "contact":
        holders = repository.contact_holders(ctx.tenant, locators)
        listed = [locator for locator in locators if any(holders[locator].values())]
        known = repository.get_references(ctx.tenant, kind, [locator for locator in locators if locator not in listed])
        unknown = [locator for locator in locators if locator not in listed and locator not in known]
        if unknown:
            raise codes.not_found(kind, ", ".join(unknown))
        return {locator: ContactView(locator, holders[locator]) for locator in locators}
    read: dict[str, Callable[[CallContext, list[str]], Mapping[str, Any]]] = {
        "account": accounts.accounts_by_locator,
        "quote": quotes.quotes_by_locator,
        "policy": policies.policies_by_locator,
    }
    found = dict(read[kind](ctx, locators))
    missing = [locator for locator in locators if locator not in found]
    if missing:
        raise codes.not_found(kind, ", ".join(missing))
    return found


def _every(fetch: Callable[[PageRequest], Page[T]]) -> list[T]:
    found: list[T] = []
    while True:
        page = fetch(PageRequest(len(found), MAX_COUNT))
        found += page.items
        if page.list_completed or not page.items:
            return found


def _policy_restrictions(ctx: CallContext, held: Iterable[Any], request: Request) -> list[Restriction]:
    views = [PolicyView(p.locator, [str(s) for s in policies.statuses(ctx, p)], p.endTime) for p in held]
    return policy_restrictions(views, request.policyStatuses, POLICY_CODES)


def _quote_restrictions(held: Iterable[Any], request: Request) -> list[Restriction]:
    return quote_restrictions(
        [QuoteView(q.locator, str(q.quoteState)) for q in held],
        request.includeAcceptedQuotes,
        codes.RETENTION_QUOTE_ACCEPTED,
    )


def _reach(
    ctx: CallContext, kind: str, record: Any, request: Request
) -> tuple[dict[str, list[str]], list[Restriction]]:
    """The records anonymizing the referenced one reaches by type, and what retention keeps. An account:
    its policies (statuses), quotes (accepted ones) and billing (open invoices, active delinquencies,
    credit balance) and payments. A policy: itself (its status, and the billing holds of its account that bill
    it: its open invoices and active delinquencies) and the quote it was issued from. A quote: itself
    (accepted) and the status of the policy issued from it. A payment: itself (amounts stay). A contact: the
    records that list it, each kept as when it is referenced itself (its policies' statuses and billing, its
    quotes accepted, its accounts' billing holds; a quick quote keeps nothing)."""
    if kind == "account":
        held = _every(functools.partial(policies.policies_of_account, ctx, record.locator))
        listed = _every(functools.partial(quotes.quotes_of_account, ctx, record.locator))
        paid = _every(functools.partial(payments.payments_of_account, ctx, record.locator))
        restrictions = _policy_restrictions(ctx, held, request) + _quote_restrictions(listed, request)
        restrictions += _billing_restrictions(ctx, record.locator)
        return {
            "account": [record.locator],
            "policy": [p.locator for p in held],
            "quote": [q.locator for q in listed],
            "payment": [p.locator for p in paid],
        }, restrictions
    if kind == "policy":
        return (
            {"policy": [record.locator], "quote": [record.quoteLocator] if record.quoteLocator else []},
            _policy_restrictions(ctx, [record], request) + _policy_billing_restrictions(ctx, record),
        )
    if kind == "quote":
        issued = [policies.get_policy(ctx, record.policyLocator)] if record.policyLocator else []
        return (
            {"quote": [record.locator], "policy": [p.locator for p in issued]},
            _quote_restrictions([record], request) + _policy_restrictions(ctx, issued, request),
        )
    if kind == "contact":
        return {"contact": [record.locator], **record.holders}, _contact_restrictions(ctx, record, request)
    return {"payment": [record.locator]}, []


def _contact_restrictions(ctx: CallContext, contact: ContactView, request: Request) -> list[Restriction]:
    held = list(policies.policies_by_locator(ctx, contact.holders.get("policy", [])).values())
    listed = list(quotes.quotes_by_locator(ctx, contact.holders.get("quote", [])).values())
    found = _policy_restrictions(ctx, held, request) + _quote_restrictions(listed, request)
    found += [r for policy in held for r in _policy_billing_restrictions(ctx, policy)]
    found += [r for account in contact.holders.get("account", []) for r in _billing_restrictions(ctx, account)]
    unique = {(r.referenceType, r.referenceLocator, r.message): r for r in found}  # an account's holds, once
    return list(unique.values())


def _billing_restrictions(ctx: CallContext, account: str) -> list[Restriction]:
    """The account's billing holds (billing/credit/service.retention_holds): open invoices, active
    delinquencies, a non-zero credit balance."""
    return [
        Restriction(code, message, kind, locator)
        for code, message, kind, locator in billing.retention_holds(ctx, account)
    ]


def _policy_billing_restrictions(ctx: CallContext, policy: Any) -> list[Restriction]:
    """The holds of the policy's account that bill the policy: its open invoices and active delinquencies
    (the account's credit balance, and another policy's invoices, keep the account, not this policy)."""
    held = _billing_restrictions(ctx, policy.accountLocator)
    if not held:
        return []
    billed = {
        invoice.locator
        for invoice in _every(
            functools.partial(invoices.invoices_of, ctx, "policy", policy.locator, include_zero=False)
        )
    }
    billed |= {
        delinquency.locator
        for delinquency in _every(functools.partial(delinquencies.delinquencies_of, ctx, "policy", policy.locator))
    }
    return [restriction for restriction in held if restriction.referenceLocator in billed]


def assess(
    ctx: CallContext, kind: str, record: Any, request: Request, reference: AnonymizationReference | None
) -> Assessment:
    """Retention first: what anonymizing the referenced record reaches (`_reach`), as it stands now."""
    reached, restrictions = _reach(ctx, kind, record, request)
    kept = {(r.referenceType, r.referenceLocator) for r in restrictions}
    targets = [
        Target(
            target,
            [locator for locator in locators if (target, locator) not in kept],
            [locator for locator in locators if (target, locator) in kept],
        )
        for target, locators in reached.items()
    ]
    anonymized = reference is not None and reference.anonymizationState == ReferenceState.ANONYMIZED
    return Assessment(record.locator, targets, [] if anonymized else restrictions, anonymized)


def preview(ctx: CallContext, request: Request) -> dict[str, list[Assessment]]:
    answered = {}
    for kind, locators in _checked(request).items():
        found = _found(ctx, kind, locators)
        known = repository.get_references(ctx.tenant, kind, locators)
        answered[kind] = [assess(ctx, kind, found[locator], request, known.get(locator)) for locator in locators]
    return answered


def reference_states(
    ctx: CallContext, references: dict[str, list[str]]
) -> list[tuple[AnonymizationReference, list[Target]]]:
    """Where each referenced record stands, with the records it holds (an account: its policies and
    quotes; a policy: its quote; a quote: its policy)."""
    answered = []
    for kind, locators in _checked(Request(references)).items():
        found = _found(ctx, kind, locators)
        known = repository.get_references(ctx.tenant, kind, locators)
        for locator in locators:
            record = found[locator]
            reference = known.get(locator) or AnonymizationReference(
                referenceType=kind,
                referenceLocator=locator,
                anonymizationState=ReferenceState.IDENTIFIABLE,
                updatedAt=getattr(record, "updatedAt", None) or getattr(record, "createdAt", None) or ctx.now,
            )
            answered.append((reference, _children(ctx, kind, record)))
    return answered


def _children(ctx: CallContext, kind: str, record: Any) -> list[Target]:
    if kind == "account":
        held = _every(functools.partial(policies.policies_of_account, ctx, record.locator))
        listed = _every(functools.partial(quotes.quotes_of_account, ctx, record.locator))
        return [Target("policy", [p.locator for p in held]), Target("quote", [q.locator for q in listed])]
    if kind == "policy":
        return [Target("quote", [record.quoteLocator] if record.quoteLocator else [])]
    if kind == "quote":
        return [Target("policy", [record.policyLocator] if record.policyLocator else [])]
    if kind == "contact":
        return [Target(holder, locators) for holder, locators in record.holders.items()]
    return []


def jobs_of(ctx: CallContext, locators: list[str]) -> list[AnonymizationJob]:
    """In the order asked (404 naming those the tenant has not)."""
    wanted = list(dict.fromkeys(locators))
    found = {job.locator: job for job in repository.get_jobs(ctx.tenant, wanted)}
    missing = [locator for locator in wanted if locator not in found]
    if missing:
        raise codes.ANONYMIZATION_JOB_NOT_FOUND(f"anonymization job {', '.join(missing)} not found")
    return [found[locator] for locator in wanted]


# --- starting -----------------------------------------------------------------------------------------


def start(ctx: CallContext, request: Request) -> list[tuple[AnonymizationJob, bool]]:
    """The jobs that have the referenced records: (job, whether this request started it). A replay of a keyed
    request whose answer was lost answers the jobs it started as its own, and starts those it did not get to."""
    references = _checked(request)
    mine = ctx.idempotency.name_for(ctx.user_locator) if ctx.idempotency is not None else None
    answered: list[tuple[AnonymizationJob, bool]] = []
    for kind, locators in references.items():
        _found(ctx, kind, locators)
        known = repository.get_references(ctx.tenant, kind, locators)
        earlier = {
            ref.referenceLocator: ref.anonymizationJobLocator
            for ref in known.values()
            if ref.anonymizationState != ReferenceState.IDENTIFIABLE and ref.anonymizationJobLocator
        }
        fresh = [locator for locator in locators if locator not in earlier]
        answered += [
            (job, mine is not None and job.startedBy == mine)
            for job in repository.get_jobs(ctx.tenant, sorted(set(earlier.values())))
        ]
        if fresh:
            answered.append((_start_job(ctx, kind, fresh, known, request, mine), True))
    return answered


def _start_job(
    ctx: CallContext,
    kind: str,
    locators: list[str],
    known: dict[str, AnonymizationReference],
    request: Request,
    started_by: str | None,
) -> AnonymizationJob:
    job = AnonymizationJob(
        locator=new_locator(),
        referenceType=kind,
        jobStatus=JobStatus.INITIALIZED,
        assignedReferenceLocators=locators,
        policyStatuses=list(dict.fromkeys(request.policyStatuses)),
        includeAcceptedQuotes=request.includeAcceptedQuotes,
        startedBy=started_by,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
    )
    uow = wiring.unit_of_work(ctx)
    repository.add_job(uow, ctx.tenant, job)
    for locator in locators:
        before = known.get(locator)
        pending = AnonymizationReference(
            referenceType=kind,
            referenceLocator=locator,
            anonymizationState=ReferenceState.PENDING,
            anonymizationJobLocator=job.locator,
            scheduledAt=ctx.now,
            updatedAt=ctx.now,
            version=before.version if before else 1,
        )
        repository.put_reference(uow, ctx.tenant, pending, new=before is None)
    jobs.enqueue(uow, JobType.COMPLIANCE_ANONYMIZE, {"jobLocator": job.locator})
    uow.commit()
    return job


# --- the job ------------------------------------------------------------------------------------------


def run(ctx: CallContext, job_locator: str) -> AnonymizationJob:
    """Runs the job (see the module); a finished one is left as it is, and a rerun after a crash redoes
    harmlessly what the crashed run did."""
    job = repository.get_job(ctx.tenant, job_locator)
    if job is None:
        raise codes.ANONYMIZATION_JOB_NOT_FOUND(f"anonymization job {job_locator} not found")
    if job.jobStatus in FINISHED:
        return job
    if job.jobStatus == JobStatus.INITIALIZED:
        job = _saved(ctx, job, {"jobStatus": JobStatus.RUNNING})
    request = Request({job.referenceType: job.assignedReferenceLocators}, job.policyStatuses, job.includeAcceptedQuotes)
    known = repository.get_references(ctx.tenant, job.referenceType, job.assignedReferenceLocators)
    found = _found(ctx, job.referenceType, job.assignedReferenceLocators)
    personal = personal_fields(configuration.current_model(ctx)[1])
    problematic, anonymized, reasons = [], [], []
    for locator in job.assignedReferenceLocators:
        assessed = assess(ctx, job.referenceType, found[locator], request, known.get(locator))
        if assessed.restrictions:
            problematic.append(locator)
            reasons += [f"{locator}: {r.code.code}: {r.message}" for r in assessed.restrictions]
            continue
        if not assessed.anonymized and job.referenceType == "contact":
            _anonymize_contact(ctx, found[locator])
        elif not assessed.anonymized:
            _anonymize(ctx, _records(ctx, job.referenceType, found[locator]), personal)
        anonymized.append(locator)
    return _finish(ctx, job, known, anonymized, problematic, reasons)


def _records(ctx: CallContext, kind: str, record: Any) -> list[dict[str, Any]]:
    """The stored records holding the referenced one's personal data: an account's all of them; a policy's
    collection and its quote's; a quote's collection (and the policy issued from it: the same data); a
    payment itself. The account's own record only when the account is referenced."""
    if kind == "account":
        return repository.account_records(ctx.tenant, record.locator)
    if kind == "policy":
        return repository.collection_records(
            ctx.tenant, [record.quoteLocator] if record.quoteLocator else [], [record.locator]
        )
    if kind == "quote":
        return repository.collection_records(
            ctx.tenant, [record.locator], [record.policyLocator] if record.policyLocator else []
        )
    return repository.payment_record(ctx.tenant, record.accountLocator, record.locator)


def _anonymize(ctx: CallContext, records: list[dict[str, Any]], personal: dict[str, dict[str, Any]]) -> None:
    written = repository.replace_records(ctx.tenant, records, lambda item: scrubbed(item, personal), ctx.now)
    owners = [
        (DOCUMENT_OWNERS[item["entity"]], item["locator"])
        for item in records
        if item.get("entity") in DOCUMENT_OWNERS and item.get("locator")
    ]
    quoted = personal_texts(records, personal)
    documents.anonymize_documents(
        ctx,
        owners,
        lambda data: scrubbed({"data": data}, personal)["data"],
        lambda text: unquoted(text, quoted),
    )
    events = [
        (EVENTS[item["entity"]], {EVENT_DATA[item["entity"]]: item["locator"]})
        for item in written
        if item.get("entity") in EVENTS and item.get("locator")
    ]
    for start in range(0, len(events), EVENTS_PER_WRITE):
        uow = wiring.unit_of_work(ctx)
        for event_type, data in events[start : start + EVENTS_PER_WRITE]:
            uow.record_event(event_type, data)
        uow.commit()


def _anonymize_contact(ctx: CallContext, contact: ContactView) -> None:
    """The contact's entries in the records that list it name a new locator (models.without_contact; one for
    all of them, kept nowhere), its index entries are deleted, and `contact.anonymized` recorded; the records
    themselves are not anonymized."""
    replacement = new_locator()
    repository.replace_records(
        ctx.tenant,
        repository.holder_records(ctx.tenant, contact.holders),
        lambda item: without_contact(item, contact.locator, replacement),
        ctx.now,
        mark=False,
    )
    forgotten = repository.forget_contact(ctx.tenant, contact.locator)
    for start in range(0, len(forgotten), EVENTS_PER_WRITE):
        uow = wiring.unit_of_work(ctx)
        uow.add(*forgotten[start : start + EVENTS_PER_WRITE])
        uow.commit()
    uow = wiring.unit_of_work(ctx)
    uow.record_event(CONTACT_EVENT, {"locator": contact.locator, "staticLocator": contact.locator})
    uow.commit()


def _finish(
    ctx: CallContext,
    job: AnonymizationJob,
    known: dict[str, AnonymizationReference],
    anonymized: list[str],
    problematic: list[str],
    reasons: list[str],
) -> AnonymizationJob:
    status = JobStatus.SUSPENDED if problematic else JobStatus.COMPLETED
    uow = wiring.unit_of_work(ctx)
    for locator in anonymized + problematic:
        before = known.get(locator)
        done = locator in anonymized
        reference = AnonymizationReference(
            referenceType=job.referenceType,
            referenceLocator=locator,
            anonymizationState=ReferenceState.ANONYMIZED if done else ReferenceState.IDENTIFIABLE,
            anonymizationJobLocator=job.locator,
            scheduledAt=before.scheduledAt if before else None,
            anonymizedAt=(before.anonymizedAt if before and before.anonymizedAt else ctx.now) if done else None,
            updatedAt=ctx.now,
            version=before.version if before else 1,
        )
        repository.put_reference(uow, ctx.tenant, reference, new=before is None)
    finished = job.model_copy(
        update={
            "jobStatus": status,
            "anonymizedReferenceLocators": anonymized,
            "updatedAt": ctx.now,
            "problematicReferenceLocators": ProblematicReferences(assigned=problematic),
            "processingErrors": "; ".join(reasons) or None,
        }
    )
    repository.save_job(uow, ctx.tenant, finished)
    uow.commit()
    return finished.model_copy(update={"version": finished.version + 1})


def _saved(ctx: CallContext, job: AnonymizationJob, changes: dict[str, Any]) -> AnonymizationJob:
    changed = job.model_copy(update={**changes, "updatedAt": ctx.now})
    uow = wiring.unit_of_work(ctx)
    repository.save_job(uow, ctx.tenant, changed)
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def backfill_contact_index(ctx: CallContext) -> dict[str, int]:
    """The contact index entries of the tenant's records stored before the index (storage/contact_index.py),
    which anonymization finds a contact's records by: a one-off per tenant of an existing table (the job
    `compliance.contactIndexBackfill`), harmless to run again. Answers the entries written by record type."""
    return repository.backfill_contact_index(ctx.tenant)
