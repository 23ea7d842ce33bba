"""The delinquency API contract (OpenAPI definition: DelinquencyResponse, DelinquencyEventResponse,
DelinquencyUpdateRequest, DelinquencyEventUpdateRequest; spec part 3: GraceJobData,
DelinquencyCreateJobData, DelinquencyEventJobData). Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from chalicelib.billing.delinquency.models import (
    CancellationType,
    DelinquencyEventState,
    DelinquencyState,
)
from chalicelib.billing.models import JobStatus
from chalicelib.configuration.billing_plans import DelinquencyLevel, GraceOffsetBasis, LapseTarget
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse


class DelinquencySettingsResponse(Response):
    lapseTransactionType: str
    gracePeriodDays: int
    advanceLapseTo: LapseTarget
    delinquencyLevel: DelinquencyLevel


class ConfiguredDelinquencyEventResponse(Response):
    name: str
    offsetDays: Decimal
    offsetBasis: GraceOffsetBasis


class DelinquencyReferenceResponse(Response):
    locator: str
    delinquencyLocator: str
    referenceLocator: str
    referenceType: Literal["policy", "invoice"]
    transactionLocator: str | None = None


class DelinquencyResponse(Response):
    locator: str
    accountLocator: str
    delinquencyState: DelinquencyState
    settings: DelinquencySettingsResponse
    timezone: str
    references: list[DelinquencyReferenceResponse]
    graceStartedAt: datetime
    graceEndAt: datetime
    lapseTransactionEffectiveDate: datetime | None = None
    configuredDelinquencyEvents: list[ConfiguredDelinquencyEventResponse]
    createdAt: datetime
    updatedAt: datetime


class DelinquencyListResponse(ListResponse[DelinquencyResponse]):
    pass


class DelinquencyUpdateRequest(Input):
    graceEndAt: datetime | None = None


class DelinquencyEventResponse(Response):
    locator: str
    delinquencyLocator: str
    name: str
    delinquencyEventState: DelinquencyEventState
    triggerTime: datetime
    triggeredAt: datetime | None = None
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str


class DelinquencyEventsResponse(ListResponse[DelinquencyEventResponse]):
    accountLocator: str
    delinquencyLocator: str


class DelinquencyEventUpdateRequest(Input):
    triggerTime: datetime | None = None
    delinquencyEventState: DelinquencyEventState | None = None


class GraceJobData(Response):
    locator: str
    delinquencyLocator: str
    jobStatus: JobStatus
    outcome: str | None = None
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime


class GraceJobDataListResponse(ListResponse[GraceJobData]):
    pass


class DelinquencyCreateJobData(Response):
    locator: str
    invoiceLocator: str
    dueTime: datetime
    jobStatus: JobStatus
    delinquencyLocators: list[str]
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime


class DelinquencyCreateJobDataListResponse(ListResponse[DelinquencyCreateJobData]):
    pass


class DelinquencyEventJobData(Response):
    locator: str
    delinquencyEventLocator: str
    delinquencyLocator: str
    jobStatus: JobStatus
    triggerTime: datetime
    updatedDelinquencyEventLocators: list[str]
    cancelled: bool
    cancellationType: CancellationType | None = None
    rescheduledByLocator: str | None = None
    processingErrors: str | None = None
    createdAt: datetime
    updatedAt: datetime


class DelinquencyEventJobDataListResponse(ListResponse[DelinquencyEventJobData]):
    pass
