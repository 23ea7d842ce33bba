"""Asynchronous work of anonymization: one job per started anonymization (service.run); the contact index
backfill of a tenant (service.backfill_contact_index), enqueued by an operator once per tenant of a table written
before the index."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.compliance import service
from chalicelib.core.context import CallContext
from chalicelib.runtime.job_types import JobType
from chalicelib.runtime.jobs import job_handler


class AnonymizeStep(BaseModel):
    jobLocator: str


@job_handler(JobType.COMPLIANCE_ANONYMIZE, payload=AnonymizeStep)
def anonymize(ctx: CallContext, payload: AnonymizeStep) -> dict[str, Any]:
    """Enqueued by `POST /compliance/{tenantLocator}/anonymize` with the job it starts."""
    job = service.run(ctx, payload.jobLocator)
    return {"jobStatus": str(job.jobStatus), "anonymized": len(job.anonymizedReferenceLocators)}


class ContactIndexBackfill(BaseModel):
    pass


@job_handler(JobType.COMPLIANCE_CONTACT_INDEX_BACKFILL, payload=ContactIndexBackfill)
def backfill_contact_index(ctx: CallContext, payload: ContactIndexBackfill) -> dict[str, Any]:
    """The tenant's records stored before the contact index get their entries (harmless to run again)."""
    return {"entriesWritten": service.backfill_contact_index(ctx)}
