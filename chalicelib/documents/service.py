"""Documents (DECISIONS.md "Documents"; spec part 2 "Documents", part 3 "Document jobs").

Generated documents. Reaching a trigger state records a `documents.generate` job in the unit of work
that moves the record (runtime/document_jobs.py, for quotes and transactions), or billing adds an
invoice's document with its invoice (`add_invoice_document`). The job (`generate`) records a documents
job with a `draft` instance per configured document, gathers the rendering data (`dataReady`: the
record as a plugin sees it, its account and charges), renders the template of the tenant's *current*
deployment in the sandbox (rendering.py) and stores the artifact in S3 with its size and checksum:
the instance becomes `ready` (`document.ready`), or `dataError` / `renderError` / `conversionError`
with `processingErrors` (`document.failed`), and the job `finished` or `failed`. A `prerendered`
document is its `staticDocuments` bootstrap file as stored with the deployment, not rendered; a dynamic
one without a template is a renderError naming what is missing. An invoice's rendering data comes from
billing (with the invoice's job, or for the ad-hoc render through runtime/rendering_sources.py, which
app.py wires: billing is above documents). A template error
never fails the record's own request: it happened in that request's unit of work only as a job.
Retriggering a failed job (after a redeploy that fixes the template) renders its unfinished
instances again; retriggering timed-out jobs does so for running jobs whose worker went away.

External documents are attached (any format, up to the upload limit), replaced and deleted; only they
can be. Copy on issue copies an issued quote's documents to the policy's issuance transaction.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any, NoReturn

from pydantic import BaseModel
from ulid import ULID

from chalicelib.accounts import service as accounts
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.context import CallContext
from chalicelib.core.errors import AlreadyExists, DomainError, NotFound
from chalicelib.core.ids import derived_locator, new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.documents import consolidation, rendering, repository, templates
from chalicelib.documents.models import (
    MEDIA_TYPES,
    Artifact,
    Document,
    DocumentFormat,
    DocumentsJob,
    DocumentState,
    DocumentTrigger,
    JobStatus,
    Reference,
    ReferenceType,
)
from chalicelib.plugins import service as plugins
from chalicelib.policies import service as policies
from chalicelib.priceable import elements
from chalicelib.quotes import service as quotes
from chalicelib.runtime import jobs, observability, rendering_sources, wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.settings import settings
from chalicelib.transactions import service as transactions

READY_EVENT = "document.ready"
FAILED_EVENT = "document.failed"
MAX_LOCATOR_LENGTH = 64
MAX_PROCESSING_ERRORS = 2000

_limits = rendering.Limits()
_render: Callable[..., rendering.Rendered | rendering.RenderFailed] = rendering.render


def use_limits(limits: rendering.Limits | None) -> None:
    """The renderer's limits (tests make the wall clock short); None restores the defaults."""
    global _limits
    _limits = limits or rendering.Limits()


def use_renderer(renderer: Callable[..., rendering.Rendered | rendering.RenderFailed] | None) -> None:
    """Another renderer (a test's, say one whose worker dies mid-job); None restores the sandboxed one."""
    global _render
    _render = renderer or rendering.render


def _rendered(
    ctx: CallContext, engine: rendering.Engine, source: str, data: dict[str, Any], output_format: str, **options: Any
) -> rendering.Rendered | rendering.RenderFailed:
    """`_render(...)`, measured: `Renders` and `RenderDuration` by engine, format and outcome (`ok`, or the
    stage that failed). A render in the tenant function whose version's code is not there (pruned out of it, say)
    answers what a plugin call does (plugins.service.not_ready: the version is published again)."""
    with observability.timed("Render", {"engine": engine, "format": str(output_format)}) as outcome:
        try:
            result = _render(engine, source, data, output_format, **options)
        except DomainError as error:
            if error.entry is not codes.TENANT_CODE_NOT_READY or options.get("version") is None:
                raise
            raise plugins.not_ready(ctx, options["version"], error) from None
        if isinstance(result, rendering.RenderFailed):
            outcome["outcome"] = f"{result.stage}_failed"
    return result


# --- reading -------------------------------------------------------------------------------------------


def get_document(ctx: CallContext, locator: str) -> Document:
    document = repository.get_document(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if document is None:
        raise codes.DOCUMENT_NOT_FOUND(f"document {locator} not found")
    return document


@dataclass(frozen=True)
class File:
    content: bytes
    media_type: str
    filename: str


def artifact(ctx: CallContext, locator: str) -> File:
    """The rendered or uploaded file (409 while the document has none, and once anonymization removed it)."""
    document = get_document(ctx, locator)
    _check_not_removed(document)
    content = repository.read_artifact(ctx.tenant, document.artifact) if document.artifact else None
    if document.artifact is None or content is None:
        raise codes.DOCUMENT_NOT_READY(f"document {locator} is {document.documentInstanceState}: it has no file")
    return File(
        content, document.artifact.mediaType, f"{document.staticName or document.locator}.{document.documentFormat}"
    )


def source(ctx: CallContext, locator: str) -> File:
    """The template a generated document was rendered from; a document made of no template (external,
    prerendered, consolidated) is its own source."""
    document = get_document(ctx, locator)
    if document.external or (document.source is None and document.artifact is not None):
        return artifact(ctx, locator)
    if document.source is None:
        _check_not_removed(document)
        raise codes.DOCUMENT_NOT_READY(f"document {locator} has not been rendered yet")
    return File(document.source.encode("utf-8"), "text/plain; charset=utf-8", f"{document.staticName}.source")


def _check_not_removed(document: Document) -> None:
    """409 `document.anonymized` for a document whose file anonymization removed and did not render again (an
    external one); a generated one being rendered again is only not ready yet."""
    if document.anonymizedAt is not None and document.artifact is None and document.external:
        raise codes.DOCUMENT_ANONYMIZED(
            f"document {document.locator}'s file was removed by anonymization on "
            f"{document.anonymizedAt.isoformat()}; an attached file is not rendered again"
        )


def documents_of(ctx: CallContext, reference_type: ReferenceType, locator: str, page: PageRequest) -> Page[Document]:
    """The documents of a quote, transaction or segment (404 when it does not exist)."""
    _existing(ctx, reference_type, locator)
    if reference_type == ReferenceType.SEGMENT:
        return repository.documents_of_segment(ctx.tenant, locator, page)
    return repository.documents_of(ctx.tenant, reference_type, locator, page)


def documents_of_term(ctx: CallContext, policy_locator: str, term_locator: str, page: PageRequest) -> Page[Document]:
    term = policies.get_term(ctx, term_locator)
    if term.policyLocator != policy_locator:
        raise codes.not_found("term", term_locator)
    return repository.documents_of_term(ctx.tenant, term_locator, page)


def invoice_document(ctx: CallContext, invoice_locator: str) -> Document:
    """The latest document of an invoice (404 when it has none)."""
    found = repository.all_documents_of(ctx.tenant, ReferenceType.INVOICE, invoice_locator)
    if not found:
        raise codes.DOCUMENT_NOT_FOUND(f"invoice {invoice_locator} has no document")
    return found[-1]


def _existing(ctx: CallContext, reference_type: ReferenceType, locator: str) -> Reference:
    """The record a document may belong to, with its policy, term, transaction and segment (404 when
    this tenant has none)."""
    if reference_type == ReferenceType.QUOTE:
        quote = quotes.get_quote(ctx, locator)
        return Reference(
            referenceType=reference_type,
            referenceLocator=locator,
            productName=quote.productName,
            configVersion=quote.configVersion,
            policyLocator=quote.policyLocator,
        )
    if reference_type == ReferenceType.TRANSACTION:
        transaction = transactions.get_transaction(ctx, locator)
        segment = transaction.segments[-1].locator if transaction.segments else transaction.inForceSegmentLocator
        return Reference(
            referenceType=reference_type,
            referenceLocator=locator,
            configVersion=transaction.configVersion,
            policyLocator=transaction.policyLocator,
            termLocator=transaction.termLocator,
            transactionLocator=locator,
            segmentLocator=segment,
        )
    if reference_type == ReferenceType.SEGMENT:
        segment_record = policies.get_segment(ctx, locator)
        return Reference(
            referenceType=reference_type,
            referenceLocator=locator,
            policyLocator=segment_record.policyLocator,
            termLocator=segment_record.termLocator,
            transactionLocator=segment_record.transactionLocator,
            segmentLocator=locator,
        )
    if reference_type == ReferenceType.TERM:
        term = policies.get_term(ctx, locator)
        return Reference(
            referenceType=reference_type,
            referenceLocator=locator,
            policyLocator=term.policyLocator,
            termLocator=locator,
        )
    if reference_type == ReferenceType.POLICY:
        policy = policies.get_policy(ctx, locator)
        return Reference(
            referenceType=reference_type,
            referenceLocator=locator,
            productName=policy.productName,
            policyLocator=locator,
        )
    if not repository.invoice_exists(ctx.tenant, locator):
        raise codes.not_found("invoice", locator)
    return Reference(referenceType=reference_type, referenceLocator=locator)


# --- documents jobs ----------------------------------------------------------------------------------


def job_of(ctx: CallContext, reference_type: ReferenceType, locator: str, job_locator: str) -> DocumentsJob:
    job = repository.get_job(ctx.tenant, job_locator) if 0 < len(job_locator) <= MAX_LOCATOR_LENGTH else None
    of_record = job is not None and (
        (job.referenceType, job.referenceLocator) == (reference_type, locator)
        or (reference_type == ReferenceType.SEGMENT and job.segmentLocator == locator)
    )
    if job is None or not of_record:
        raise codes.DOCUMENTS_JOB_NOT_FOUND(f"{reference_type} {locator} has no documents job {job_locator}")
    return job


def jobs_of(ctx: CallContext, reference_type: ReferenceType, locator: str, page: PageRequest) -> Page[DocumentsJob]:
    """An empty list for a record that does not exist (spec part 3)."""
    if not 0 < len(locator) <= MAX_LOCATOR_LENGTH:
        return Page(items=[], list_completed=True)
    return repository.jobs_of(ctx.tenant, reference_type, locator, page)


def jobs_documents(ctx: CallContext, job: DocumentsJob) -> list[Document]:
    return repository.get_documents(ctx.tenant, job.documents)


def retrigger_failed(ctx: CallContext, reference_type: ReferenceType, locator: str, job_locator: str) -> DocumentsJob:
    """Runs a failed job again: its instances that are not ready are rendered anew, with the templates
    deployed now (409 for a job that did not fail)."""
    job = job_of(ctx, reference_type, locator, job_locator)
    if job.status != JobStatus.FAILED:
        raise codes.DOCUMENTS_JOB_NOT_FAILED(f"documents job {job_locator} is {job.status}")
    return _rerun(ctx, job)


def retrigger_timed_out(ctx: CallContext, reference_type: ReferenceType, locator: str) -> list[DocumentsJob]:
    """Runs again each job of the record still running after a job lease: its worker went away (404 for
    a record this tenant does not have)."""
    _existing(ctx, reference_type, locator)
    horizon = ctx.now - timedelta(seconds=settings().job_lease_seconds)
    stale = [
        job
        for job in repository.all_jobs_of(ctx.tenant, reference_type, locator)
        if job.status == JobStatus.RUNNING and (job.updatedAt or job.createdAt) <= horizon
    ]
    return [_rerun(ctx, job) for job in stale]


def _rerun(ctx: CallContext, job: DocumentsJob) -> DocumentsJob:
    uow = wiring.unit_of_work(ctx)
    rerun = job.model_copy(
        update={"status": JobStatus.RUNNING, "processingErrors": None, "completedAt": None, "updatedAt": ctx.now}
    )
    repository.save_job(uow, ctx.tenant, rerun)
    _enqueue(uow, rerun)
    uow.commit()
    return rerun.model_copy(update={"version": rerun.version + 1})


def _enqueue(uow: UnitOfWork, job: DocumentsJob) -> None:
    jobs.enqueue(
        uow,
        JobType.DOCUMENTS_GENERATE,
        {
            "jobLocator": job.locator,
            "referenceType": str(job.referenceType),
            "referenceLocator": job.referenceLocator,
            "trigger": str(job.documentTrigger),
        },
    )


# --- generation ----------------------------------------------------------------------------------------


def add_invoice_document(
    ctx: CallContext,
    uow: UnitOfWork,
    model: Mapping[str, Any],
    account_type: str | None,
    invoice_locator: str,
    rendering_data: dict[str, Any],
) -> str | None:
    """Billing's part: when the configuration has an invoice document (the account type's
    `invoiceDocument`, else `defaultInvoiceDocument`), its documents job and `draft` instance (carrying
    the invoice as its rendering data) join the unit of work that writes the invoice. Answers the job's
    locator, or None without an invoice document."""
    plan = templates.invoice_document(model, account_type)
    if plan is None:
        return None
    reference = Reference(referenceType=ReferenceType.INVOICE, referenceLocator=invoice_locator)
    job = _new_job(ctx, uow, reference, DocumentTrigger.GENERATED, [plan], _invoice_data(rendering_data))
    _enqueue(uow, job)
    return job.locator


def generate(
    ctx: CallContext, job_locator: str, reference_type: ReferenceType, reference_locator: str, trigger: DocumentTrigger
) -> dict[str, Any]:
    """The documents job: records it and its draft instances on its first run, then renders every
    instance that is not ready. Safe to run again (a redelivered or retriggered message)."""
    job = repository.get_job(ctx.tenant, job_locator)
    if job is None:
        reference = _existing(ctx, reference_type, reference_locator)
        _, model = configuration.current_model(ctx, resolved=True)
        plans = templates.for_product(model, reference.productName or _product_of(ctx, reference), trigger)
        job = _record_job(ctx, reference, trigger, plans, job_locator)
    if job.status == JobStatus.FINISHED:
        return {"documents": len(job.documents), "status": str(job.status)}
    documents = repository.get_documents(ctx.tenant, job.documents)
    sources = _Sources(ctx)
    data_cache: dict[str, Any] = {}
    outcomes = [_generate_one(ctx, document, sources, data_cache) for document in documents]
    if all(document.documentInstanceState == DocumentState.READY for document in outcomes):
        outcomes += [
            _consolidate(ctx, job, consolidated, outcomes)
            for consolidated in consolidation.consolidations(sources.model, {d.staticName or "" for d in outcomes})
        ]
    failed = [document for document in outcomes if document.documentInstanceState != DocumentState.READY]
    errors = "; ".join(f"{document.staticName}: {document.processingErrors}" for document in failed)
    uow = wiring.unit_of_work(ctx)
    repository.save_job(
        uow,
        ctx.tenant,
        job.model_copy(
            update={
                "status": JobStatus.FAILED if failed else JobStatus.FINISHED,
                "completedAt": ctx.now,
                "updatedAt": ctx.now,
                "processingErrors": errors[:MAX_PROCESSING_ERRORS] or None,
                "attempts": job.attempts + 1,
            }
        ),
    )
    uow.commit()
    return {"documents": len(outcomes), "failed": len(failed)}


def _product_of(ctx: CallContext, reference: Reference) -> str | None:
    if reference.policyLocator:
        return policies.get_policy(ctx, reference.policyLocator).productName
    return None


def _record_job(
    ctx: CallContext, reference: Reference, trigger: DocumentTrigger, plans: list[templates.Planned], job_locator: str
) -> DocumentsJob:
    """The job's drafts, as many units of work as they need (a product may have a hundred documents), then
    the job naming them. A draft's locator derives from the job's and its document's name, so an attempt
    that dies half-way leaves drafts the next attempt writes again, and nothing lists them meanwhile."""
    job, documents = _job_and_drafts(
        ctx,
        reference,
        trigger,
        plans,
        None,
        job_locator,
        lambda plan: derived_locator(ULID.from_str(job_locator).datetime, f"{job_locator}#{plan.static_name}"),
    )
    uow = wiring.unit_of_work(ctx)
    for document in documents:
        if uow.remaining < 2:
            uow.commit()
            uow = wiring.unit_of_work(ctx)
        repository.put_document(uow, ctx.tenant, document)
    repository.add_job(uow, ctx.tenant, job)
    try:
        uow.commit()
    except AlreadyExists:  # another delivery of the message recorded it first
        return repository.get_job(ctx.tenant, job_locator) or job
    return job


def _new_job(
    ctx: CallContext,
    uow: UnitOfWork,
    reference: Reference,
    trigger: DocumentTrigger,
    plans: list[templates.Planned],
    rendering_data: dict[str, Any] | None,
) -> DocumentsJob:
    """A documents job and its drafts in the caller's unit of work (billing's, for an invoice)."""
    job, documents = _job_and_drafts(
        ctx, reference, trigger, plans, rendering_data, new_locator(), lambda _: new_locator()
    )
    for document in documents:
        repository.add_document(uow, ctx.tenant, document)
    repository.add_job(uow, ctx.tenant, job)
    return job


def _job_and_drafts(
    ctx: CallContext,
    reference: Reference,
    trigger: DocumentTrigger,
    plans: list[templates.Planned],
    rendering_data: dict[str, Any] | None,
    job_locator: str,
    locator_of: Callable[[templates.Planned], str],
) -> tuple[DocumentsJob, list[Document]]:
    documents = [
        _draft(
            ctx,
            reference,
            locator_of(plan),
            plan.output_format,
            plan.static_name,
            plan.display_name,
            job_locator,
            rendering_data=rendering_data,
        )
        for plan in plans
    ]
    job = DocumentsJob(
        locator=job_locator,
        referenceType=reference.referenceType,
        referenceLocator=reference.referenceLocator,
        documentTrigger=trigger,
        status=JobStatus.RUNNING,
        documents=[document.locator for document in documents],
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        transactionLocator=reference.transactionLocator,
        segmentLocator=reference.segmentLocator,
    )
    return job, documents


def _generate_one(ctx: CallContext, document: Document, sources: _Sources, data_cache: dict[str, Any]) -> Document:
    if document.documentInstanceState == DocumentState.READY:
        return document
    if not document.renderingData:
        try:
            data = data_cache.get("data") or data_cache.setdefault("data", rendering_data(ctx, document))
        except DomainError as error:
            return _finish(ctx, document, DocumentState.DATA_ERROR, f"{error.code}: {error.message}")
        document = _moved(
            ctx,
            document,
            {"documentInstanceState": DocumentState.DATA_READY, "renderingData": data, "processingErrors": None},
        )
    elif document.documentInstanceState != DocumentState.DATA_READY:
        document = _moved(ctx, document, {"documentInstanceState": DocumentState.DATA_READY, "processingErrors": None})
    plan = templates.configured(sources.model, document.staticName or "")
    if plan is None:
        return _finish(
            ctx, document, DocumentState.DATA_ERROR, f"the configuration has no document {document.staticName} any more"
        )
    if plan.prerendered:
        return _deliver_static(ctx, document, sources, plan)
    template = sources.template(plan.static_name)
    if template is None:
        return _finish(ctx, document, DocumentState.RENDER_ERROR, templates.missing_template(plan.static_name))
    fonts = sources.fonts(plan.fonts) if plan.output_format == DocumentFormat.PDF else {}
    missing = [name for name in plan.fonts if name not in fonts] if plan.output_format == DocumentFormat.PDF else []
    if missing:
        return _finish(
            ctx,
            document.model_copy(update={"source": template.source}),
            DocumentState.CONVERSION_ERROR,
            f"the package has no font file for {', '.join(missing)} (fonts/<Name>.ttf)",
        )
    data = {**document.renderingData, "documentName": plan.display_name}
    result = _rendered(
        ctx,
        template.engine,
        template.source,
        data,
        plan.output_format,
        snippets=sources.snippets(plan.snippets),
        page=plan.page,
        fonts=fonts,
        limits=_limits,
        tenant=ctx.tenant,
        version=sources.version,
    )
    if isinstance(result, rendering.RenderFailed):
        state = DocumentState.CONVERSION_ERROR if result.stage == "conversion" else DocumentState.RENDER_ERROR
        return _finish(ctx, document.model_copy(update={"source": template.source}), state, result.message)
    stored = repository.store_artifact(
        ctx.tenant, document.locator, f"document.{plan.output_format}", result.content, MEDIA_TYPES[plan.output_format]
    )
    return _finish(
        ctx,
        document.model_copy(update={"artifact": stored, "source": template.source, "readyAt": ctx.now}),
        DocumentState.READY,
        None,
    )


def _deliver_static(ctx: CallContext, document: Document, sources: _Sources, plan: templates.Planned) -> Document:
    """A prerendered document: the package's file, as is (the bootstrap object itself, not a copy)."""
    found = sources.static_document(plan.static_name)
    if found is None:
        return _finish(ctx, document, DocumentState.RENDER_ERROR, templates.missing_static_document(plan.static_name))
    stored, output_format, _ = found
    return _finish(
        ctx,
        document.model_copy(update={"artifact": stored, "documentFormat": output_format, "readyAt": ctx.now}),
        DocumentState.READY,
        None,
    )


def _consolidate(
    ctx: CallContext, job: DocumentsJob, consolidated: consolidation.Consolidation, generated: list[Document]
) -> Document:
    """The job's consolidated document joining its ready parts (its locator derives from the job's, so a
    rerun finds it); the parts name it in consolidatedTo."""
    locator = derived_locator(ULID.from_str(job.locator).datetime, f"{job.locator}#{consolidated.static_name}")
    existing = repository.get_document(ctx.tenant, locator)
    if existing is not None and existing.documentInstanceState == DocumentState.READY:
        return existing
    by_name = {document.staticName: document for document in generated}
    parts = [by_name[name] for name in consolidated.parts]
    first = parts[0]
    document = existing or _put_draft(
        ctx,
        _draft(
            ctx,
            first,
            locator,
            first.documentFormat,
            consolidated.static_name,
            consolidated.display_name,
            job.locator,
            consolidated_from=[part.locator for part in parts],
        ),
    )
    return _join(ctx, document, parts)


def _join(ctx: CallContext, document: Document, parts: list[Document]) -> Document:
    """The consolidated `document` made of its parts' files (conversionError when one is missing or they do
    not join); the parts name it in consolidatedTo."""
    locator = document.locator
    contents = [repository.read_artifact(ctx.tenant, part.artifact) if part.artifact else None for part in parts]
    try:
        if any(content is None for content in contents):
            raise consolidation.CannotJoin("a part's file is missing")
        output_format, content = consolidation.joined(
            [part.documentFormat for part in parts], [content for content in contents if content is not None]
        )
    except consolidation.CannotJoin as error:
        return _finish(ctx, document, DocumentState.CONVERSION_ERROR, str(error)[:MAX_PROCESSING_ERRORS])
    stored = repository.store_artifact(
        ctx.tenant, locator, f"document.{output_format}", content, MEDIA_TYPES[output_format]
    )
    ready = document.model_copy(
        update={
            "documentInstanceState": DocumentState.READY,
            "processingErrors": None,
            "documentFormat": output_format,
            "artifact": stored,
            "readyAt": ctx.now,
        }
    )
    uow = wiring.unit_of_work(ctx)
    repository.save_document(uow, ctx.tenant, ready)
    for part in parts:
        if locator not in part.consolidatedTo:
            repository.save_document(
                uow, ctx.tenant, part.model_copy(update={"consolidatedTo": [*part.consolidatedTo, locator]})
            )
    uow.record_event(READY_EVENT, _event_data(ready))
    uow.commit()
    return ready.model_copy(update={"version": ready.version + 1})


_PLACE = {"referenceType", "referenceLocator", "policyLocator", "termLocator", "transactionLocator", "segmentLocator"}


def _place(of: Reference | Document) -> dict[str, Any]:
    """The fields that say which record a document belongs to, and the policy, term, transaction and
    segment it names: a reference's, or another document's."""
    return of.model_dump(include=_PLACE)


def _draft(
    ctx: CallContext,
    of: Reference | Document,
    locator: str,
    document_format: DocumentFormat,
    static_name: str,
    name: str,
    job_locator: str,
    *,
    rendering_data: dict[str, Any] | None = None,
    consolidated_from: list[str] | None = None,
) -> Document:
    """A generated document's draft, of the record `of` names (a reference, or for a consolidated document
    its first part), made by the caller now by the job `job_locator`."""
    return Document(
        **_place(of),
        locator=locator,
        documentInstanceState=DocumentState.DRAFT,
        documentFormat=document_format,
        external=False,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        staticName=static_name,
        name=name,
        jobLocator=job_locator,
        renderingData=rendering_data or {},
        consolidatedFrom=consolidated_from or [],
    )


def _put_draft(ctx: CallContext, document: Document) -> Document:
    uow = wiring.unit_of_work(ctx)
    repository.put_document(uow, ctx.tenant, document)
    uow.commit()
    return document


def _moved(ctx: CallContext, document: Document, changes: dict[str, Any]) -> Document:
    changed = document.model_copy(update=changes)
    uow = wiring.unit_of_work(ctx)
    repository.save_document(uow, ctx.tenant, changed)
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def _finish(ctx: CallContext, document: Document, state: DocumentState, errors: str | None) -> Document:
    changed = document.model_copy(update={"documentInstanceState": state, "processingErrors": errors})
    uow = wiring.unit_of_work(ctx)
    repository.save_document(uow, ctx.tenant, changed)
    uow.record_event(READY_EVENT if state == DocumentState.READY else FAILED_EVENT, _event_data(changed))
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def _event_data(document: Document) -> dict[str, Any]:
    return {
        "documentLocator": document.locator,
        "referenceType": str(document.referenceType),
        "referenceLocator": document.referenceLocator,
    }


class _Sources:
    """The tenant's current deployment, read once per job: the model, the package's template files and
    the bootstrap templates by static name."""

    def __init__(self, ctx: CallContext):
        self.ctx = ctx
        self.version, self.model = configuration.current_model(ctx, resolved=True)
        self._files: dict[str, bytes] | None = None
        self._bootstrap: dict[tuple[str, str], str] | None = None

    def files(self) -> dict[str, bytes]:
        if self._files is None:
            _, package = configuration.download(self.ctx, self.version)
            self._files = _template_files(package)
        return self._files

    def bootstrap(self) -> dict[tuple[str, str], str]:
        """(kind, staticName) -> blob path of each bootstrap resource."""
        if self._bootstrap is None:
            record = configuration.bootstrap_record(self.ctx)
            self._bootstrap = {
                (resource.kind, resource.staticName): resource.path for resource in (record.resources if record else [])
            }
        return self._bootstrap

    def template(self, name: str) -> templates.Template | None:
        return templates.template_in_package(self.files(), "documents", name) or self._resource(
            "documentTemplates", name
        )

    def static_document(self, name: str) -> tuple[Artifact, DocumentFormat, bytes] | None:
        """The prerendered file of the document `name` as stored with the deployment: its artifact, its
        format (by its extension, else the configured one) and its bytes."""
        path = self.bootstrap().get((templates.STATIC_DOCUMENTS, name))
        content = repository.read_bootstrap_file(self.ctx.tenant, path) if path else None
        if path is None or content is None:
            return None
        configured = templates.configured(self.model, name)
        output_format = templates.format_of(path) or (configured.output_format if configured else DocumentFormat.PDF)
        return repository.artifact_of(path, content, MEDIA_TYPES[output_format]), output_format, content

    def snippets(self, names: tuple[str, ...]) -> dict[str, str]:
        found = {
            name: templates.template_in_package(self.files(), "templateSnippets", name)
            or self._resource("documentTemplatesSnippets", name)
            for name in names
        }
        return {name: snippet.source for name, snippet in found.items() if snippet is not None}

    def fonts(self, names: tuple[str, ...]) -> dict[str, bytes]:
        """The package's files of the custom fonts `names` that it holds."""
        paths = {name: templates.font_path(name) for name in names}
        return {name: self.files()[path] for name, path in paths.items() if path and path in self.files()}

    def _resource(self, kind: str, name: str) -> templates.Template | None:
        path = self.bootstrap().get((kind, name))
        engine = templates.engine_of(path) if path else None
        content = repository.read_bootstrap_file(self.ctx.tenant, path) if path else None
        return templates.Template(engine, content.decode("utf-8", "replace")) if engine and content else None


def _template_files(package: bytes) -> dict[str, bytes]:
    """The package's files under documents/ and templateSnippets/ that are templates, and its fonts."""
    with zipfile.ZipFile(io.BytesIO(package)) as archive:
        return {
            name: archive.read(name)
            for name in archive.namelist()
            if (name.startswith(("documents/", "templateSnippets/")) and templates.engine_of(name))
            or (name.startswith("fonts/") and name.endswith(".ttf"))
        }


# --- rendering data ------------------------------------------------------------------------------------


def rendering_data(ctx: CallContext, document: Document | Reference) -> dict[str, Any]:
    """The JSON a plugin sees of the document's record, its top-level keys the template's variables."""
    if document.referenceType == ReferenceType.QUOTE:
        quote = quotes.get_quote(ctx, document.referenceLocator)
        account = accounts.get_account(ctx, quote.accountLocator)
        return _plain_dict(
            {
                "tenantLocator": ctx.tenant,
                "kind": "quote",
                "locator": quote.locator,
                "productName": quote.productName,
                "quoteNumber": quote.quoteNumber,
                "quoteState": quote.quoteState,
                "policyLocator": quote.policyLocator,
                "policyNumber": quote.policyNumber,
                "startTime": quote.startTime,
                "endTime": quote.endTime,
                "currency": quote.currency,
                "timezone": quote.timezone,
                "durationBasis": quote.durationBasis,
                "static": quote.static,
                "account": _account(account),
                "segment": {
                    "startTime": quote.startTime,
                    "endTime": quote.endTime,
                    "element": elements.as_tree(quote.element),
                },
                "charges": quote.charges or [],
                "totalAmount": _total(quote.charges or []),
            }
        )
    if document.referenceType == ReferenceType.INVOICE:
        invoice = rendering_sources.rendering_data(ctx, ReferenceType.INVOICE, document.referenceLocator)
        if invoice is None:
            raise codes.DOCUMENT_REFERENCE_INVALID("this process has no rendering data for invoices")
        return _invoice_data(invoice)
    transaction_locator = document.transactionLocator or document.referenceLocator
    if document.referenceType not in (ReferenceType.TRANSACTION, ReferenceType.SEGMENT, ReferenceType.POLICY):
        raise codes.DOCUMENT_REFERENCE_INVALID(f"a {document.referenceType} document has no rendering data here")
    if document.referenceType == ReferenceType.POLICY and not document.transactionLocator:
        transaction_locator = policies.get_policy(ctx, document.referenceLocator).issuedTransactionLocator or ""
    transaction = transactions.get_transaction(ctx, transaction_locator)
    policy = policies.get_policy(ctx, transaction.policyLocator)
    account = accounts.get_account(ctx, policy.accountLocator)
    segment = transaction.segments[-1] if transaction.segments else None
    element = transaction.element  # once issued, the tree lives in the segment alone
    if element is None and segment is not None:
        element = policies.get_segment(ctx, segment.locator).element
    return _plain_dict(
        {
            "tenantLocator": ctx.tenant,
            "kind": "transaction",
            "locator": transaction.locator,
            "productName": policy.productName,
            "policyLocator": policy.locator,
            "policyNumber": policy.policyNumber,
            "transactionCategory": transaction.transactionCategory,
            "transactionType": transaction.transactionType,
            "transactionState": transaction.transactionState,
            "effectiveTime": transaction.effectiveTime,
            "startTime": policy.startTime,
            "endTime": policy.endTime,
            "currency": policy.currency,
            "timezone": policy.timezone,
            "durationBasis": policy.durationBasis,
            "static": policy.static,
            "account": _account(account),
            "segment": {
                "locator": segment.locator if segment else None,
                "startTime": segment.startTime if segment else None,
                "endTime": segment.endTime if segment else None,
                "element": elements.as_tree(element) if element else None,
            },
            "charges": transaction.charges,
            "totalAmount": _total(transaction.charges),
        }
    )


SUMMARIZED_ITEM_FIELDS = (
    "elementType",
    "elementStaticLocator",
    "chargeType",
    "chargeCategory",
    "amount",
    "remainingAmount",
    "settlementTime",
    "unsettledTime",
)


def _invoice_data(invoice: Mapping[str, Any]) -> dict[str, Any]:
    """An invoice's rendering data as billing gives it, plus the platform's summary shape that invoice
    templates iterate: `policyInvoiceSummaries`, one per policy (or quote) with its `invoiceItemSummaries`
    (the OpenAPI InvoiceSummary and InvoiceItemSummary)."""
    summaries: dict[tuple[Any, Any], dict[str, Any]] = {}
    for item in invoice.get("invoiceItems") or []:
        owner = (item.get("policyLocator"), item.get("quoteLocator"))
        summary = summaries.setdefault(
            owner, {"policyLocator": owner[0], "quoteLocator": owner[1], "invoiceItemSummaries": []}
        )
        summary["invoiceItemSummaries"].append(
            {
                "invoiceItemLocator": item.get("locator"),
                **{name: item[name] for name in SUMMARIZED_ITEM_FIELDS if name in item},
            }
        )
    return _plain_dict(
        {**invoice, "invoiceLocator": invoice.get("locator"), "policyInvoiceSummaries": list(summaries.values())}
    )


def _account(account: Any) -> dict[str, Any]:
    return {
        "locator": account.locator,
        "type": account.type,
        "data": account.data,
        "accountNumber": account.accountNumber,
    }


def _total(charges: list[Any]) -> Decimal:
    return sum((Decimal(charge.amount) for charge in charges), Decimal(0))


def _plain(value: Any) -> Any:
    """JSON-shaped: models as dicts, datetimes as ISO text, enums as their values; numbers stay Decimal."""
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(exclude_none=True))
    if isinstance(value, dict):
        return _plain_dict(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float):
        return Decimal(str(value))
    return value


def _plain_dict(value: dict[Any, Any]) -> dict[str, Any]:
    """`_plain` of a dict: its keys as text, its None values left out."""
    return {str(key): _plain(item) for key, item in value.items() if item is not None}


# --- external documents --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attachment:
    referenceType: ReferenceType
    referenceLocator: str
    name: str
    documentFormat: DocumentFormat
    staticName: str | None = None
    metadata: dict[str, Any] | None = None
    transactionLocator: str | None = None
    segmentLocator: str | None = None
    category: str | None = None
    copyOnIssuance: bool | None = None


def attach(ctx: CallContext, attachment: Attachment, content: bytes) -> Document:
    """Stores an uploaded file as a ready external document of an existing record. A policy reference
    names one of the policy's transactions or segments."""
    if not content:
        raise codes.REQUEST_FILE_MISSING("The document to attach is empty")
    reference = _attach_reference(ctx, attachment)
    locator = new_locator()
    media_type = MEDIA_TYPES[attachment.documentFormat]
    stored = repository.store_artifact(
        ctx.tenant, locator, f"document.{attachment.documentFormat}", content, media_type
    )
    document = Document(
        **_place(reference),
        locator=locator,
        documentInstanceState=DocumentState.READY,
        documentFormat=attachment.documentFormat,
        external=True,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        metadata=attachment.metadata or {},
        staticName=attachment.staticName,
        name=attachment.name,
        category=attachment.category,
        copyOnIssuance=attachment.copyOnIssuance,
        readyAt=ctx.now,
        artifact=stored,
    )
    uow = wiring.unit_of_work(ctx)
    repository.add_document(uow, ctx.tenant, document)
    uow.record_event(READY_EVENT, _event_data(document))
    uow.commit()
    return document


def _attach_reference(ctx: CallContext, attachment: Attachment) -> Reference:
    reference = _existing(ctx, attachment.referenceType, attachment.referenceLocator)
    if attachment.referenceType != ReferenceType.POLICY:
        return reference
    if not attachment.transactionLocator and not attachment.segmentLocator:
        raise codes.DOCUMENT_REFERENCE_INVALID(
            "A document attached to a policy names a transactionLocator or a segmentLocator"
        )
    try:
        if attachment.segmentLocator:
            named = _existing(ctx, ReferenceType.SEGMENT, attachment.segmentLocator)
        else:
            named = _existing(ctx, ReferenceType.TRANSACTION, attachment.transactionLocator or "")
    except NotFound:
        named = None
    if (
        named is None
        or named.policyLocator != attachment.referenceLocator
        or (
            attachment.transactionLocator
            and attachment.segmentLocator
            and named.transactionLocator != attachment.transactionLocator
        )
    ):
        raise codes.DOCUMENT_REFERENCE_INVALID(
            "The transactionLocator or segmentLocator does not name a transaction or segment of the policy"
        )
    return reference.model_copy(
        update={
            "termLocator": named.termLocator,
            "transactionLocator": named.transactionLocator,
            "segmentLocator": named.segmentLocator,
        }
    )


def replace(
    ctx: CallContext, locator: str, content: bytes, metadata: dict[str, Any] | None, category: str | None
) -> Document:
    """A new file for an external document (and, when given, new metadata and category)."""
    if not content:
        raise codes.REQUEST_FILE_MISSING("The replacing document is empty")
    document = _external(ctx, locator)
    stored = repository.store_artifact(
        ctx.tenant,
        new_locator_path(document),
        f"document.{document.documentFormat}",
        content,
        MEDIA_TYPES[document.documentFormat],
    )
    changes: dict[str, Any] = {"artifact": stored, "readyAt": ctx.now}
    if metadata is not None:
        changes["metadata"] = metadata
    if category is not None:
        changes["category"] = category
    changed = document.model_copy(update=changes)
    uow = wiring.unit_of_work(ctx)
    repository.save_document(uow, ctx.tenant, changed)
    uow.record_event(READY_EVENT, _event_data(changed))
    uow.commit()
    return changed.model_copy(update={"version": changed.version + 1})


def anonymize_documents(
    ctx: CallContext,
    references: list[tuple[str, str]],
    replaced: Callable[[dict[str, Any]], dict[str, Any]],
    renamed: Callable[[Any], Any],
) -> list[Document]:
    """Replaces the personal data of every document of the records named (reference type, locator): its
    rendering data and metadata by `replaced` (data fields), its name and metadata by `renamed` (the personal
    values wherever a free text quotes them), and its file. A generated document that
    had a file is rendered again from its replaced rendering data (with the templates deployed now), a
    consolidated one joined again from its parts once they are; a prerendered one keeps the package's file
    (the same for everyone: nobody's data); an attached (external) one loses its file (its download answers
    409 `document.anonymized`). A document anonymized before is left alone, but for one whose new rendering
    an interrupted run did not finish. Answers the documents changed, as they end."""
    found = [
        document
        for reference_type, locator in references
        for document in repository.all_documents_of(ctx.tenant, reference_type, locator)
    ]
    fresh = [document for document in found if document.anonymizedAt is None]
    for document in fresh:
        if document.artifact is not None and _own_file(document.artifact):
            repository.remove_artifact(ctx.tenant, document.artifact)
    changed = [_anonymized(ctx, document, replaced, renamed) for document in fresh]
    for start in range(0, len(changed), 90):
        uow = wiring.unit_of_work(ctx)
        for document in changed[start : start + 90]:
            repository.save_document(uow, ctx.tenant, document)
        uow.commit()
    by_locator = {
        document.locator: document.model_copy(update={"version": document.version + 1}) for document in changed
    }
    by_locator.update({document.locator: document for document in found if document.anonymizedAt is not None})
    unrendered = [document for document in by_locator.values() if _rendered_again(document)]
    if unrendered:
        sources = _Sources(ctx)
        for document in unrendered:
            if not document.consolidatedFrom:  # each its own record's data (a job's cache holds one record's)
                by_locator[document.locator] = _generate_one(ctx, document, sources, {})
        for document in unrendered:
            if document.consolidatedFrom:
                parts = [by_locator.get(part) for part in document.consolidatedFrom]
                known = [part for part in parts if part is not None]
                missing = [p for p in document.consolidatedFrom if p not in by_locator]
                known += repository.get_documents(ctx.tenant, missing) if missing else []
                order = {locator: n for n, locator in enumerate(document.consolidatedFrom)}
                by_locator[document.locator] = _join(ctx, document, sorted(known, key=lambda d: order[d.locator]))
    return [by_locator[document.locator] for document in fresh]


def _own_file(artifact: Artifact) -> bool:
    """Whether the file is a document's own (rendered, joined or attached), not the package's bootstrap file a
    prerendered document delivers."""
    return artifact.path.startswith("documents/")


def _anonymized(
    ctx: CallContext,
    document: Document,
    replaced: Callable[[dict[str, Any]], dict[str, Any]],
    renamed: Callable[[Any], Any],
) -> Document:
    """The document with its personal data replaced and `anonymizedAt`; one that had a file of its own and is not
    attached waits to be rendered (`dataReady`) or joined (`draft`) again."""
    changes: dict[str, Any] = {
        "renderingData": replaced(document.renderingData),
        "metadata": renamed(replaced(document.metadata)),
        "name": renamed(document.name) if document.name is not None else None,
        "anonymizedAt": ctx.now,
    }
    if document.artifact is not None and _own_file(document.artifact):
        changes["artifact"] = None
        if not document.external:
            changes["documentInstanceState"] = (
                DocumentState.DRAFT if document.consolidatedFrom else DocumentState.DATA_READY
            )
            changes["processingErrors"] = None
    return document.model_copy(update=changes)


def _rendered_again(document: Document) -> bool:
    """An anonymized generated document whose new file is still to make (see `_anonymized`)."""
    if document.anonymizedAt is None or document.external or document.artifact is not None:
        return False
    wanted = DocumentState.DRAFT if document.consolidatedFrom else DocumentState.DATA_READY
    return document.documentInstanceState == wanted


def new_locator_path(document: Document) -> str:
    """A replaced file goes to a new object, so a reader of the old version never sees half of the new."""
    return f"{document.locator}/{new_locator()}"


def delete(ctx: CallContext, locator: str) -> None:
    document = _external(ctx, locator)
    uow = wiring.unit_of_work(ctx)
    repository.delete_document(uow, ctx.tenant, document)
    uow.record_event("document.delete", _event_data(document))
    uow.commit()


def _external(ctx: CallContext, locator: str) -> Document:
    document = get_document(ctx, locator)
    if not document.external:
        raise codes.DOCUMENT_NOT_EXTERNAL(f"document {locator} was generated; only attached documents change")
    return document


# --- copy on issue ---------------------------------------------------------------------------------------


def copy_on_issue(ctx: CallContext, quote_locator: str, *, delete_all: bool) -> list[Document]:
    """Copies the issued quote's documents (all but those marked `copyOnIssuance: false`) to its policy's
    issuance transaction; `delete_all` deletes the quote's documents as well. Answers the copies. Many
    documents take several units of work: the copies first, the deletes last, so a failure half-way loses
    nothing (calling it again makes more copies rather than fewer documents)."""
    quote = quotes.get_quote(ctx, quote_locator)
    if quote.policyLocator is None:
        raise codes.DOCUMENT_QUOTE_NOT_ISSUED(f"quote {quote_locator} is {quote.quoteState}, not issued")
    policy = policies.get_policy(ctx, quote.policyLocator)
    target = _existing(ctx, ReferenceType.TRANSACTION, policy.issuedTransactionLocator or "")
    originals = repository.all_documents_of(ctx.tenant, ReferenceType.QUOTE, quote_locator)
    uow = wiring.unit_of_work(ctx)
    copies = []
    for original in originals:
        if original.copyOnIssuance is False or original.artifact is None:
            continue
        if uow.remaining < 3:  # room for this copy, its original's delete and the event
            uow.commit()
            uow = wiring.unit_of_work(ctx)
        copy = original.model_copy(
            update={
                "locator": new_locator(),
                "referenceType": ReferenceType.TRANSACTION,
                "referenceLocator": target.referenceLocator,
                "policyLocator": target.policyLocator,
                "termLocator": target.termLocator,
                "transactionLocator": target.transactionLocator,
                "segmentLocator": target.segmentLocator,
                "referenceDocumentLocator": original.locator,
                "createdAt": ctx.now,
                "createdBy": ctx.user_locator,
                "jobLocator": None,
                "version": 1,
            }
        )
        repository.add_document(uow, ctx.tenant, copy)
        copies.append(copy)
    if delete_all:
        for original in originals:
            if uow.remaining < 2:
                uow.commit()
                uow = wiring.unit_of_work(ctx)
            repository.delete_document(uow, ctx.tenant, original)
    uow.record_event(
        "document.copyOnIssue",
        {
            "quoteLocator": quote_locator,
            "policyLocator": policy.locator,
            "copied": len(copies),
            "deleted": len(originals) if delete_all else 0,
        },
    )
    uow.commit()
    return copies


# --- ad-hoc render ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderRequest:
    referenceType: ReferenceType
    referenceLocator: str
    template: str | None = None
    templateFormat: templates.Engine | None = None
    documentConfig: str | None = None
    staticName: str | None = None


def render_ad_hoc(ctx: CallContext, request: RenderRequest) -> File:
    """Renders a template (the body's, else the configured document's) with the record's rendering data,
    storing nothing: as the document's format when a document is named, else as HTML. A named prerendered
    document is its file."""
    reference = _existing(ctx, request.referenceType, request.referenceLocator)
    sources = _Sources(ctx)
    name = request.documentConfig or request.staticName
    plan = templates.configured(sources.model, name) if name else None
    if name and plan is None:
        raise codes.not_found("configuration", f"document {name}")
    if request.template is None and plan is not None and plan.prerendered:
        return _static_file(sources, plan)
    if request.template is not None:
        template = templates.Template(request.templateFormat or "liquid", request.template)
    elif plan is not None:
        template = sources.template(plan.static_name) or _no_template(templates.missing_template(plan.static_name))
    else:
        template = _no_template("Send a template, or name a configured document (documentConfig)")
    data = rendering_data(ctx, reference)
    output_format = plan.output_format if plan else DocumentFormat.HTML
    result = _rendered(
        ctx,
        template.engine,
        template.source,
        {**data, "documentName": name or "Document"},
        output_format,
        snippets=sources.snippets(plan.snippets) if plan else {},
        page=plan.page if plan else None,
        fonts=sources.fonts(plan.fonts) if plan else {},
        limits=_limits,
        tenant=ctx.tenant,
        version=sources.version,
    )
    if isinstance(result, rendering.RenderFailed):
        raise codes.DOCUMENT_RENDER_FAILED(f"The template did not render: {result.message}"[:MAX_PROCESSING_ERRORS])
    return File(result.content, result.media_type, f"{name or 'document'}.{output_format}")


def _static_file(sources: _Sources, plan: templates.Planned) -> File:
    found = sources.static_document(plan.static_name)
    if found is None:
        raise codes.DOCUMENT_TEMPLATE_MISSING(templates.missing_static_document(plan.static_name))
    stored, output_format, content = found
    return File(content, stored.mediaType, f"{plan.static_name}.{output_format}")


def _no_template(message: str) -> NoReturn:
    raise codes.DOCUMENT_TEMPLATE_MISSING(message)
