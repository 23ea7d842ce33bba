"""The API contract of invoices, their previews, early invoicing and the invoicing jobs (spec part 3,
"Invoices"; the OpenAPI definition). Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, Field, Json

from chalicelib.accounts.models import InstallmentPreferences
from chalicelib.billing.installments.models import Installment
from chalicelib.billing.invoices.models import (
    Invoice,
    InvoiceGenerationJob,
    InvoiceItemFields,
    InvoiceState,
    InvoicingJob,
)
from chalicelib.billing.models import ContainerType, JobStatus
from chalicelib.billing.schemas import PaymentTargetResponse
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse


class InvoiceListQuery(ListQuery):
    includeZeroAmountInvoices: bool = False


class SettleQuery(BaseModel):
    forced: bool = False


class InvoiceNumberQuery(BaseModel):
    invoiceNumber: str


class InvoiceItemResponse(Response, InvoiceItemFields):
    pass


class InvoiceSummary(Response):
    """An invoice without its items (InvoiceSummaryView: what lists answer)."""

    locator: str
    accountLocator: str
    invoiceState: InvoiceState
    invoiceType: Literal["normal", "aggregate"] = "normal"
    generatedTime: datetime
    dueTime: datetime
    startTime: datetime
    endTime: datetime
    currency: str
    timezone: str
    autopayTime: datetime | None = None
    settledTime: datetime | None = None
    unsettledTime: datetime | None = None
    invoiceNumber: str | None = None
    totalAmount: Decimal
    totalRemainingAmount: Decimal


class InvoiceResponse(InvoiceSummary):
    invoiceItems: list[InvoiceItemResponse]

    @classmethod
    def of(cls, record: Invoice) -> InvoiceResponse:
        fields = record.model_dump(include=set(InvoiceSummary.model_fields))
        return cls(**fields, invoiceItems=[InvoiceItemResponse.of_record(i) for i in record.invoiceItems])


class InvoiceListResponse(ListResponse[InvoiceSummary]):
    pass


class InstallmentItemSummary(Response):
    installmentItemLocator: str
    installmentLocator: str
    elementLocator: str
    transactionLocator: str
    amount: Decimal


class InvoiceItemSummary(Response):
    """An invoice item as the details show it: with the installment items it sums."""

    invoiceItemLocator: str
    chargeType: str
    chargeCategory: str
    elementType: str | None = None
    elementStaticLocator: str | None = None
    amount: Decimal
    remainingAmount: Decimal
    settlementTime: datetime | None = None
    unsettledTime: datetime | None = None
    installmentItemSummaries: list[InstallmentItemSummary]


class InvoiceSummaryWithItems(InvoiceSummary):
    invoiceItemSummaries: list[InvoiceItemSummary]

    @classmethod
    def of_installments(cls, record: Invoice, installments: list[Installment]) -> InvoiceSummaryWithItems:
        parts: dict[str, list[InstallmentItemSummary]] = {}
        for installment in installments:
            for item in installment.installmentItems:
                parts.setdefault(item.invoiceItemLocator or "", []).append(
                    InstallmentItemSummary(
                        installmentItemLocator=item.locator,
                        installmentLocator=installment.locator,
                        elementLocator=item.elementLocator,
                        transactionLocator=installment.transactionLocator,
                        amount=item.amount,
                    )
                )
        fields = record.model_dump(include=set(InvoiceSummary.model_fields))
        return cls(
            **fields,
            invoiceItemSummaries=[
                InvoiceItemSummary(
                    invoiceItemLocator=item.locator,
                    chargeType=item.chargeType,
                    chargeCategory=item.chargeCategory,
                    elementType=item.elementType,
                    elementStaticLocator=item.elementStaticLocator,
                    amount=item.amount,
                    remainingAmount=item.remainingAmount,
                    settlementTime=item.settlementTime,
                    unsettledTime=item.unsettledTime,
                    installmentItemSummaries=parts.get(item.locator, []),
                )
                for item in record.invoiceItems
            ],
        )


class InvoiceDetailsResponse(Response):
    accountLocator: str
    invoiceLocator: str
    currency: str
    timezone: str
    startTime: datetime
    endTime: datetime
    dueTime: datetime
    generatedTime: datetime
    invoiceState: InvoiceState
    totalAmount: Decimal
    totalRemainingAmount: Decimal
    autopayTime: datetime | None = None
    settledTime: datetime | None = None
    unsettledTime: datetime | None = None
    invoiceNumber: str | None = None
    invoiceType: Literal["normal", "aggregate"] = "normal"
    invoiceSummaries: list[InvoiceSummaryWithItems]

    @classmethod
    def of(cls, record: Invoice, installments: list[Installment]) -> InvoiceDetailsResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"invoiceSummaries"})
        return cls(
            **fields,
            invoiceLocator=record.locator,
            invoiceSummaries=[InvoiceSummaryWithItems.of_installments(record, installments)],
        )


class InvoiceUpdateRequest(Input):
    autopayTime: datetime
    suppressAutopay: bool


class CreditDistributionResponse(Response):
    """Credit moved by settling a zero or negative invoice: from the invoice to the account's credit balance."""

    locator: str
    creditDistributionState: Literal["executed"] = "executed"
    currency: str
    amount: Decimal
    accountLocator: str
    createdAt: datetime
    createdBy: str
    executedAt: datetime
    sources: list[PaymentTargetResponse]
    targets: list[PaymentTargetResponse]
    shortfallCreditLocators: list[str] = []

    @classmethod
    def of_settled(cls, invoice: Invoice, credit: Decimal, at: datetime, by: str) -> CreditDistributionResponse:
        return cls(
            locator=invoice.locator,
            currency=invoice.currency,
            amount=credit,
            accountLocator=invoice.accountLocator,
            createdAt=at,
            createdBy=by,
            executedAt=at,
            sources=[
                PaymentTargetResponse(
                    containerLocator=invoice.locator, containerType=ContainerType.INVOICE, amount=credit
                )
            ],
            targets=[
                PaymentTargetResponse(
                    containerLocator=invoice.accountLocator, containerType=ContainerType.ACCOUNT, amount=credit
                )
            ],
        )


class CreditDistributionListResponse(ListResponse[CreditDistributionResponse]):
    @classmethod
    def of_settled(cls, invoice: Invoice, credit: Decimal) -> CreditDistributionListResponse:
        items = (
            [
                CreditDistributionResponse.of_settled(
                    invoice, credit, invoice.settledTime or invoice.createdAt, invoice.createdBy
                )
            ]
            if credit
            else []
        )
        return cls(listCompleted=True, items=items)


class DebitResponse(Response):
    invoiceLocator: str
    targetLocator: str
    amount: Decimal
    targetType: Literal["account", "invoice", "invoiceItem", "subpayment"]
    reversed: bool | None = None
    reversedAt: datetime | None = None

    @classmethod
    def of_credit(cls, invoice: Invoice) -> DebitResponse:
        """What the invoice credited to its account (paid beyond its total)."""
        return cls(
            invoiceLocator=invoice.locator,
            targetLocator=invoice.accountLocator,
            amount=invoice.creditedAmount,
            targetType="account",
        )


class DebitListResponse(ListResponse[DebitResponse]):
    pass


class PreviewQuery(BaseModel):
    includeZeroAmountInvoices: bool = False
    count: int | None = Field(default=None, ge=0, le=1000)


class PreviewChargeRequest(Input):
    amount: Decimal
    chargeType: str = Field(min_length=1, max_length=128)
    elementLocator: str | None = Field(default=None, max_length=64)
    elementStaticLocator: str | None = Field(default=None, max_length=64)


class QuoteBillingPreviewRequest(Input):
    accountLocator: str = Field(min_length=1, max_length=64)
    productName: str = Field(min_length=1, max_length=128)
    termStartTime: datetime
    termEndTime: datetime
    timezone: str | None = None
    durationBasis: Literal["years", "months", "weeks", "days", "hours"] | None = None
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    invoiceFeeAmount: Decimal | None = None
    installmentPreferences: InstallmentPreferences | None = None
    charges: list[PreviewChargeRequest] = Field(max_length=1000)


class StatelessPreviewQuery(PreviewQuery):
    quotePreviewRequest: Json[QuoteBillingPreviewRequest]


class InvoiceItemPreview(Response):
    elementStaticLocator: str
    chargeCategory: str
    chargeType: str
    elementType: str
    amount: Decimal
    transactionLocators: list[str]
    policyLocator: str | None = None
    quoteLocator: str | None = None


class InvoicePreviewResponse(Response):
    startTime: datetime
    endTime: datetime
    dueTime: datetime
    generateTime: datetime
    autopayTime: datetime
    totalAmount: Decimal
    installmentLocators: list[str]
    invoiceItems: list[InvoiceItemPreview]

    @classmethod
    def listed(cls, invoices: list[Invoice], query: PreviewQuery) -> list[InvoicePreviewResponse]:
        shown = [cls.of(i) for i in invoices if query.includeZeroAmountInvoices or i.totalAmount != 0]
        return shown if query.count is None else shown[: query.count]

    @classmethod
    def of(cls, invoice: Invoice) -> InvoicePreviewResponse:
        return cls(
            startTime=invoice.startTime,
            endTime=invoice.endTime,
            dueTime=invoice.dueTime,
            generateTime=invoice.generateTime or invoice.generatedTime,
            autopayTime=invoice.autopayTime or invoice.dueTime,
            totalAmount=invoice.totalAmount,
            installmentLocators=[],  # a preview's installments are made up: nothing to fetch
            invoiceItems=[
                InvoiceItemPreview(
                    elementStaticLocator=item.elementStaticLocator or "",
                    chargeCategory=item.chargeCategory,
                    chargeType=item.chargeType,
                    elementType=item.elementType or "",
                    amount=item.amount,
                    transactionLocators=[t for t in item.transactionLocators if t],
                    policyLocator=item.policyLocator or None,
                    quoteLocator=item.quoteLocator,
                )
                for item in invoice.invoiceItems
            ],
        )


class EarlyInvoicingRequest(Input):
    ignoreHolds: bool = False
    installmentLocators: list[str] = Field(default=[], max_length=1000)
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    timezone: str | None = Field(default=None, max_length=64)
    invoiceDueTime: datetime | None = None
    invoiceThroughTime: datetime | None = None


class EarlyInvoicingResponse(Response):
    jobLocator: str
    candidateInstallmentsCount: int

    @classmethod
    def of(cls, job: InvoicingJob) -> EarlyInvoicingResponse:
        return cls(jobLocator=job.locator, candidateInstallmentsCount=len(job.installmentsToBeInvoiced))


class EarlyInvoicingGenerationData(Response):
    accountLocator: str
    invoicingType: str
    installmentsToBeInvoiced: list[str]
    timezone: str | None = None
    invoiceDueTime: datetime | None = None
    invoiceThroughTime: datetime | None = None


class InvoicingJobData(Response):
    locator: str
    accountLocator: str
    jobStatus: JobStatus
    createdAt: datetime
    completedAt: datetime | None = None
    invoiceLocators: list[str]
    invoicingData: EarlyInvoicingGenerationData
    processingErrors: str | None = None

    @classmethod
    def of(cls, job: InvoicingJob) -> InvoicingJobData:
        fields = job.model_dump(include=set(cls.model_fields) - {"invoicingData"})
        return cls(**fields, invoicingData=EarlyInvoicingGenerationData.of_record(job))


class InvoicingJobListResponse(ListResponse[InvoicingJobData]):
    pass


class InvoiceGenerationInstance(Response):
    locator: str
    invoiceGenerationJobLocator: str
    invoiceLocator: str
    processingErrors: str = ""
    generateTime: datetime
    completedAt: datetime
    jobStatus: JobStatus
    createdAt: datetime
    createdBy: str


class InvoiceGenerationJobResponse(Response):
    locator: str
    invoiceGenerationScheduleLocator: str
    processingErrors: str = ""
    generateTime: datetime
    completedAt: datetime
    createdAt: datetime
    jobStatus: JobStatus
    createdBy: str
    invoiceGenerationInstances: list[InvoiceGenerationInstance]

    @classmethod
    def of(cls, job: InvoiceGenerationJob) -> InvoiceGenerationJobResponse:
        return cls(
            locator=job.locator,
            invoiceGenerationScheduleLocator=job.accountLocator,
            generateTime=job.generateTime,
            completedAt=job.completedAt,
            createdAt=job.createdAt,
            jobStatus=job.jobStatus,
            createdBy=job.createdBy,
            invoiceGenerationInstances=[
                InvoiceGenerationInstance(
                    locator=invoice,
                    invoiceGenerationJobLocator=job.locator,
                    invoiceLocator=invoice,
                    generateTime=job.generateTime,
                    completedAt=job.completedAt,
                    jobStatus=job.jobStatus,
                    createdAt=job.createdAt,
                    createdBy=job.createdBy,
                )
                for invoice in job.invoiceLocators
            ],
        )


class InvoiceGenerationJobListResponse(ListResponse[InvoiceGenerationJobResponse]):
    pass


class InvoiceLifecycleTrigger(Response):
    triggerTime: datetime
    triggerType: Literal["autopay", "due"]


class InvoiceLifecycleResult(Response):
    resultType: Literal["autopay", "due"]
    resultLocator: str


class InvoiceLifecycleTriggerUpdate(Response):
    triggerType: Literal["autopay", "due"]
    oldTriggerTime: datetime
    newTriggerTime: datetime
    comment: str


class InvoiceLifecycleJobData(Response):
    invoiceLocator: str
    results: list[InvoiceLifecycleResult] = []
    triggers: list[InvoiceLifecycleTrigger]
    triggersHistory: list[InvoiceLifecycleTriggerUpdate] = []
    processingErrors: str | None = None


class InvoiceLifecycleResponse(Response):
    """WorkflowContextInvoiceLifecycleJobData: what happens to an invoice once generated (its due and,
    unless suppressed, autopay moments)."""

    workflowJobLocator: str
    contextData: InvoiceLifecycleJobData
    workflowType: Literal["INVOICE_LIFECYCLE"] = "INVOICE_LIFECYCLE"
    createdAt: datetime
    completedAt: datetime | None = None

    @classmethod
    def of(cls, invoice: Invoice) -> InvoiceLifecycleResponse:
        triggers = [InvoiceLifecycleTrigger(triggerTime=invoice.dueTime, triggerType="due")]
        if invoice.autopayTime and not invoice.suppressAutopay:
            triggers.append(InvoiceLifecycleTrigger(triggerTime=invoice.autopayTime, triggerType="autopay"))
        return cls(
            workflowJobLocator=invoice.locator,
            createdAt=invoice.generatedTime,
            completedAt=invoice.settledTime if invoice.invoiceState == InvoiceState.SETTLED else None,
            contextData=InvoiceLifecycleJobData(
                invoiceLocator=invoice.locator, triggers=sorted(triggers, key=lambda t: t.triggerTime)
            ),
        )
