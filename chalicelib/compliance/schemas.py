"""The compliance API's contract (the reference OpenAPI definition: AnonymizationRequest,
AnonymizationJobData, AnonymizationPreviewResponse, AnonymizationReferenceResponse, AnonymizationJobResponse).

A GET takes its request object in the query: `references` as a JSON object (reference type -> locators),
`policyStatuses` repeated, `includeAcceptedQuotes` a boolean; the jobs fetch takes `jobLocators` repeated.
The preview's `restrictions` (beyond the definition) give, for a restricted record, each reason with its
code from the error catalogue."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Json, RootModel

from chalicelib.compliance.models import (
    DEFAULT_POLICY_STATUSES,
    AnonymizationJob,
    AnonymizationReference,
    Assessment,
    JobStatus,
    ProblematicReferences,
    ReferenceState,
    Request,
    Target,
)
from chalicelib.priceable.models import Ulid

ReferenceType = Literal[
    "none", "account", "quickQuote", "quote", "policy", "contact", "fnol", "payment", "disbursement"
]
PolicyStatus = Literal["pending", "expired", "cancelled", "cancelPending", "onRisk", "delinquent", "doNotRenew"]


References = dict[ReferenceType, list[Ulid]]


class ReferencesObject(RootModel[References]):
    """The query's `references`: a JSON object (one query value, not repeated)."""


def _named(references: References | ReferencesObject) -> dict[str, list[str]]:
    given = references.root if isinstance(references, ReferencesObject) else references
    return {str(kind): locators for kind, locators in given.items()}


class AnonymizationRequest(BaseModel):
    references: References
    includeAcceptedQuotes: bool = False
    policyStatuses: list[PolicyStatus] = []

    def request(self) -> Request:
        """Without policyStatuses: expired and cancelled policies qualify."""
        return Request(
            _named(self.references), list(self.policyStatuses or DEFAULT_POLICY_STATUSES), self.includeAcceptedQuotes
        )


class AnonymizationQuery(AnonymizationRequest):
    references: Json[ReferencesObject]  # type: ignore[assignment]


class ReferencesQuery(BaseModel):
    references: Json[ReferencesObject]

    def named(self) -> dict[str, list[str]]:
        return _named(self.references)


class JobsQuery(BaseModel):
    jobLocators: list[Ulid]


class AnonymizationJobData(BaseModel):
    referenceType: ReferenceType
    jobLocator: str
    jobStatus: JobStatus
    assignedReferenceLocators: list[str]
    fromCurrentRequest: bool

    @classmethod
    def of(cls, job: AnonymizationJob, current: bool) -> AnonymizationJobData:
        return cls(
            referenceType=job.referenceType,
            jobLocator=job.locator,
            jobStatus=job.jobStatus,
            assignedReferenceLocators=job.assignedReferenceLocators,
            fromCurrentRequest=current,
        )


class TargetReferences(BaseModel):
    referenceType: ReferenceType
    willAnonymize: bool
    anonymizableReferenceLocators: list[str]
    restrictedReferenceLocators: list[str]


class Restriction(BaseModel):
    code: str
    message: str
    referenceType: str
    referenceLocator: str


class AnonymizationReferencePreviewResponse(BaseModel):
    referenceLocator: str
    state: Literal["allowed", "restricted", "anonymized"]
    targets: list[TargetReferences]
    restrictions: list[Restriction]

    @classmethod
    def of(cls, found: Assessment) -> AnonymizationReferencePreviewResponse:
        blocked = bool(found.restrictions)
        return cls(
            referenceLocator=found.locator,
            state=found.state,
            targets=[_target(t, not blocked and not found.anonymized) for t in found.targets],
            restrictions=[
                Restriction(
                    code=r.code.code,
                    message=r.message,
                    referenceType=r.referenceType,
                    referenceLocator=r.referenceLocator,
                )
                for r in found.restrictions
            ],
        )


def _target(target: Target, will: bool) -> TargetReferences:
    return TargetReferences(
        referenceType=target.referenceType,
        willAnonymize=will,
        anonymizableReferenceLocators=target.anonymizable,
        restrictedReferenceLocators=target.restricted,
    )


class AnonymizationPreviewResponse(BaseModel):
    referenceType: ReferenceType
    references: list[AnonymizationReferencePreviewResponse]


class AnonymizationReferencesBatch(BaseModel):
    referenceType: ReferenceType
    referenceLocators: list[str]


class AnonymizationReferenceResponse(BaseModel):
    referenceType: ReferenceType
    referenceLocator: str
    updatedAt: datetime
    anonymizationState: ReferenceState
    parentReferenceType: ReferenceType = "none"
    anonymizationJobLocator: str | None = None
    scheduledAt: datetime | None = None
    anonymizedAt: datetime | None = None
    preAnonymizationChildren: list[AnonymizationReferencesBatch]

    @classmethod
    def of(cls, reference: AnonymizationReference, children: list[Target]) -> AnonymizationReferenceResponse:
        return cls(
            referenceType=reference.referenceType,
            referenceLocator=reference.referenceLocator,
            updatedAt=reference.updatedAt,
            anonymizationState=reference.anonymizationState,
            anonymizationJobLocator=reference.anonymizationJobLocator,
            scheduledAt=reference.scheduledAt,
            anonymizedAt=reference.anonymizedAt,
            preAnonymizationChildren=[
                AnonymizationReferencesBatch(referenceType=c.referenceType, referenceLocators=c.anonymizable)
                for c in children
            ],
        )


class AnonymizationJobDetails(BaseModel):
    assignedReferenceLocators: list[str]
    problematicReferenceLocators: ProblematicReferences
    includeAcceptedQuotes: bool
    policyStatuses: list[PolicyStatus]


class AnonymizationJobResponse(BaseModel):
    referenceType: ReferenceType
    jobLocator: str
    jobStatus: JobStatus
    assignedReferenceLocators: list[str]
    updatedAt: datetime
    createdBy: str
    processingErrors: str | None = None
    jobDetails: AnonymizationJobDetails
    anonymizedReferenceLocators: list[str]

    @classmethod
    def of(cls, job: AnonymizationJob) -> AnonymizationJobResponse:
        fields = job.model_dump(include=set(cls.model_fields) - {"jobDetails"})
        details = AnonymizationJobDetails.model_validate(
            job.model_dump(include=set(AnonymizationJobDetails.model_fields))
        )
        return cls(**fields, jobLocator=job.locator, jobDetails=details)
