"""The API contract of installment lattices, installments, installment jobs and charges (the OpenAPI
definition's InstallmentLatticeResponse, Installment, ChargeResponse). Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from chalicelib.billing.installments.models import (
    Installment,
    InstallmentJob,
    LatticeFrame,
)
from chalicelib.billing.models import JobStatus
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse
from chalicelib.priceable.models import ChargeCategory, ChargeInvoicing

if TYPE_CHECKING:
    from chalicelib.billing.installments.charges import BilledCharge


class InstallmentLatticeResponse(Response):
    locator: str
    accountLocator: str
    policyLocator: str | None = None
    termLocator: str | None = None
    quoteLocator: str | None = None
    basedOnLocator: str | None = None
    currency: str
    timezone: str
    termStartTime: datetime
    termEndTime: datetime
    effectiveTime: datetime
    reversalLattice: bool
    frames: list[LatticeFrame]
    createdAt: datetime
    createdBy: str


class InstallmentLatticeListResponse(ListResponse[InstallmentLatticeResponse]):
    pass


class InstallmentItemResponse(Response):
    locator: str
    installmentLocator: str
    chargeLocator: str
    elementLocator: str
    elementStaticLocator: str
    chargeType: str
    chargeCategory: str
    amount: Decimal
    invoiceItemLocator: str | None = None
    createdAt: datetime
    createdBy: str


class InstallmentResponse(Response):
    locator: str
    installmentLatticeLocator: str
    accountLocator: str
    currency: str
    timezone: str
    installmentFrameIndex: int
    quoteLocator: str | None = None
    policyLocator: str | None = None
    transactionLocator: str | None = None
    termLocator: str | None = None
    installmentStartTime: datetime
    installmentEndTime: datetime
    coverageStartTime: datetime
    coverageEndTime: datetime
    installmentDuration: Decimal
    coverageDuration: Decimal
    generateTime: datetime
    dueTime: datetime
    autopayTime: datetime | None = None
    invoiceLocator: str | None = None
    installmentItems: list[InstallmentItemResponse]
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    updatedBy: str

    @classmethod
    def of(cls, record: Installment) -> InstallmentResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"installmentItems"})
        return cls(**fields, installmentItems=[InstallmentItemResponse.of_record(i) for i in record.installmentItems])


class InstallmentListResponse(ListResponse[InstallmentResponse]):
    pass


class InstallmentJobData(Response):
    locator: str
    latticeLocator: str
    referenceLocator: str
    referenceType: Literal["quote", "transaction"]
    installmentLocators: str
    """Comma-separated, as the platform's definition types it (a string)."""
    processingErrors: str
    jobStatus: JobStatus
    jobType: Literal["createOrUpdate", "invalidate", "unbill"]
    createdAt: datetime
    completedAt: datetime
    """A job not finished yet shows its creation time (the platform's definition requires the field)."""

    @classmethod
    def of(cls, job: InstallmentJob) -> InstallmentJobData:
        return cls(
            locator=job.locator,
            latticeLocator=job.latticeLocator,
            referenceLocator=job.referenceLocator,
            referenceType="transaction",
            installmentLocators=",".join(job.installmentLocators),
            processingErrors=job.processingErrors,
            jobStatus=job.jobStatus,
            jobType="createOrUpdate",
            createdAt=job.createdAt,
            completedAt=job.completedAt or job.createdAt,
        )


class InstallmentJobDataListResponse(ListResponse[InstallmentJobData]):
    pass


class PatchInstallmentsRequest(Input):
    installmentLocators: list[str] = Field(min_length=1, max_length=100)
    generateTime: datetime | None = None
    dueTime: datetime | None = None
    autopayTime: datetime | None = None


class TransactionChargesQuery(ListQuery):
    includeAll: bool = False
    """An aggregate's charges with those of the transactions it bundles (all it billed)."""


class ChargeResponse(Response):
    """A charge as billing billed it (ChargeResponse): `bundleTransactionLocator` names the aggregate that
    billed its transaction, when one did."""

    locator: str
    accountLocator: str
    currency: str
    amount: Decimal
    chargeCategory: ChargeCategory
    chargeInvoicing: ChargeInvoicing
    chargeType: str
    tag: str | None = None
    policyLocator: str
    transactionLocator: str
    elementLocator: str
    elementStaticLocator: str
    reversalOfLocator: str | None = None
    bundleTransactionLocator: str | None = None

    @classmethod
    def of(cls, billed: BilledCharge) -> ChargeResponse:
        charge = billed.charge
        return cls(
            locator=charge.locator,
            accountLocator=billed.account_locator,
            currency=billed.currency,
            amount=charge.amount,
            chargeCategory=charge.chargeCategory,
            chargeInvoicing=charge.invoicing,
            chargeType=charge.chargeType,
            tag=charge.tag or None,
            policyLocator=billed.policy_locator,
            transactionLocator=billed.transaction_locator,
            elementLocator=charge.elementLocator,
            elementStaticLocator=charge.elementStaticLocator,
            reversalOfLocator=charge.reversalOfLocator,
            bundleTransactionLocator=billed.bundle_transaction_locator,
        )


class ChargeListResponse(ListResponse[ChargeResponse]):
    pass
