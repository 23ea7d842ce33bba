"""Asynchronous work of anonymization: one job per started anonymization (service.run)."""

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
