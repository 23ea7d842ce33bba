"""The billing API contract (spec part 3, "Invoices"; the OpenAPI definition's Installment,
InstallmentLatticeResponse, PaymentResponse, PaymentCreateRequest, PaymentUpdateRequest,
LedgerAccountResponse). Field names are the platform's."""
from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Json
from pydantic_core import PydanticCustomError

from chalicelib.accounts.models import InstallmentPreferences
from chalicelib.billing.models import (
    ContainerType,
    CreditBalance,
    Installment,
    InstallmentItem,
    InstallmentJob,
    InstallmentLattice,
    Invoice,
    InvoiceCredit,
    InvoiceGenerationJob,
    InvoiceItem,
    InvoiceState,
    InvoicingJob,
    JobStatus,
    LatticeFrame,
    LedgerLine,
    Payment,
    PaymentState,
)
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse, Page
from chalicelib.priceable.models import ChargeCategory, ChargeInvoicing

if TYPE_CHECKING:
    from chalicelib.billing.installments.charges import BilledCharge

TransactionMethod = Literal["ach", "cash", "eft", "standard", "wire"]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _json_number(value: Any) -> Any:
    """A request body's numbers arrive as Decimal or int (http/request.py): money given as a string ("10",
    "1e2"), a boolean or anything else is the wrong type, a 400 (DECISIONS.md "Errors"), never converted."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise PydanticCustomError("decimal_type", "Input should be a JSON number")
    return value


Amount = Annotated[Decimal, BeforeValidator(_json_number)]
"""Money in a request body: a JSON number only (DECISIONS.md "Identifiers, time, money")."""


class Response(BaseModel):
    """An answer: a field with a default is always written, so the description marks it required."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)


# --- lattices and installments ----------------------------------------------------------------------

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

    @classmethod
    def of(cls, record: InstallmentLattice) -> InstallmentLatticeResponse:
        return cls.model_validate(record.model_dump(include=set(cls.model_fields)))


class InstallmentLatticeListResponse(ListResponse[InstallmentLatticeResponse]):
    @classmethod
    def of_page(cls, page: Page[InstallmentLattice]) -> InstallmentLatticeListResponse:
        return cls(listCompleted=page.list_completed, items=[InstallmentLatticeResponse.of(r) for r in page.items])


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

    @classmethod
    def of(cls, item: InstallmentItem) -> InstallmentItemResponse:
        return cls.model_validate(item.model_dump(include=set(cls.model_fields)))


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
        return cls(**fields, installmentItems=[InstallmentItemResponse.of(i) for i in record.installmentItems])


class InstallmentListResponse(ListResponse[InstallmentResponse]):
    @classmethod
    def of_page(cls, page: Page[Installment]) -> InstallmentListResponse:
        return cls(listCompleted=page.list_completed, items=[InstallmentResponse.of(r) for r in page.items])


# --- invoices -----------------------------------------------------------------------------------------

class InvoiceListQuery(ListQuery):
    includeZeroAmountInvoices: bool = False


class IncludeReversedQuery(ListQuery):
    includeReversed: bool = False


class SettleQuery(BaseModel):
    forced: bool = False


class InvoiceNumberQuery(BaseModel):
    invoiceNumber: str


class InvoiceItemResponse(Response):
    locator: str
    invoiceLocator: str
    timezone: str
    chargeCategory: str
    chargeType: str
    amount: Decimal
    remainingAmount: Decimal | None = None
    installmentItemLocators: list[str]
    transactionLocators: list[str]
    policyLocator: str | None = None
    quoteLocator: str | None = None
    elementStaticLocator: str | None = None
    elementType: str | None = None
    settlementTime: datetime | None = None
    unsettledTime: datetime | None = None

    @classmethod
    def of(cls, item: InvoiceItem) -> InvoiceItemResponse:
        return cls.model_validate(item.model_dump(include=set(cls.model_fields)))


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

    @classmethod
    def of(cls, record: Invoice) -> InvoiceSummary:
        return cls.model_validate(record.model_dump(include=set(cls.model_fields)))


class InvoiceResponse(InvoiceSummary):
    invoiceItems: list[InvoiceItemResponse]

    @classmethod
    def of(cls, record: Invoice) -> InvoiceResponse:
        fields = record.model_dump(include=set(InvoiceSummary.model_fields))
        return cls(**fields, invoiceItems=[InvoiceItemResponse.of(i) for i in record.invoiceItems])


class InvoiceListResponse(ListResponse[InvoiceSummary]):
    @classmethod
    def of_page(cls, page: Page[Invoice]) -> InvoiceListResponse:
        return cls(listCompleted=page.list_completed, items=[InvoiceSummary.of(r) for r in page.items])


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
                parts.setdefault(item.invoiceItemLocator or "", []).append(InstallmentItemSummary(
                    installmentItemLocator=item.locator, installmentLocator=installment.locator,
                    elementLocator=item.elementLocator, transactionLocator=installment.transactionLocator,
                    amount=item.amount))
        fields = record.model_dump(include=set(InvoiceSummary.model_fields))
        return cls(**fields, invoiceItemSummaries=[InvoiceItemSummary(
            invoiceItemLocator=item.locator, chargeType=item.chargeType, chargeCategory=item.chargeCategory,
            elementType=item.elementType, elementStaticLocator=item.elementStaticLocator, amount=item.amount,
            remainingAmount=item.remainingAmount, settlementTime=item.settlementTime,
            unsettledTime=item.unsettledTime, installmentItemSummaries=parts.get(item.locator, []))
            for item in record.invoiceItems])


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
        return cls(**fields, invoiceLocator=record.locator,
                   invoiceSummaries=[InvoiceSummaryWithItems.of_installments(record, installments)])


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
        return cls(locator=invoice.locator, currency=invoice.currency, amount=credit,
                   accountLocator=invoice.accountLocator, createdAt=at, createdBy=by, executedAt=at,
                   sources=[PaymentTargetResponse(containerLocator=invoice.locator,
                                                  containerType=ContainerType.INVOICE, amount=credit)],
                   targets=[PaymentTargetResponse(containerLocator=invoice.accountLocator,
                                                  containerType=ContainerType.ACCOUNT, amount=credit)])


class CreditDistributionListResponse(ListResponse[CreditDistributionResponse]):
    @classmethod
    def of_settled(cls, invoice: Invoice, credit: Decimal) -> CreditDistributionListResponse:
        items = [CreditDistributionResponse.of_settled(invoice, credit, invoice.settledTime or invoice.createdAt,
                                                       invoice.createdBy)] if credit else []
        return cls(listCompleted=True, items=items)


class CreditResponse(Response):
    """Money an invoice received (CreditResponse): a payment, the credit balance, or a write-off."""

    locator: str
    creditState: Literal["posted", "distributed", "reversed"]
    creditType: Literal["payment", "creditDistribution", "writeOff", "shortfallWriteOff"]
    currency: str
    amount: Decimal
    createdAt: datetime
    accountLocator: str
    realizedAt: datetime | None = None
    reversedAt: datetime | None = None

    @classmethod
    def of(cls, credit: InvoiceCredit, account: str, currency: str) -> CreditResponse:
        return cls(locator=credit.locator, creditState=credit.creditState,
                   creditType=credit.creditType,
                   currency=currency, amount=credit.amount, createdAt=credit.createdAt,
                   accountLocator=account, realizedAt=credit.createdAt, reversedAt=credit.reversedAt)


    @classmethod
    def of_payment(cls, payment: Payment) -> CreditResponse:
        return cls(locator=payment.locator, creditType="payment",
                   creditState="reversed" if payment.paymentState == PaymentState.REVERSED else "posted",
                   currency=payment.currency, amount=payment.amount, createdAt=payment.createdAt,
                   accountLocator=payment.accountLocator, realizedAt=payment.postedAt, reversedAt=payment.reversedAt)


class CreditListResponse(ListResponse[CreditResponse]):
    pass


class DebitResponse(Response):
    invoiceLocator: str
    targetLocator: str
    amount: Decimal
    targetType: Literal["account", "invoice", "invoiceItem", "subpayment"]
    reversed: bool | None = None
    reversedAt: datetime | None = None


class DebitListResponse(ListResponse[DebitResponse]):
    pass


# --- payments and the credit balance ------------------------------------------------------------------

class CreditItem(Input):
    containerLocator: str = Field(min_length=1, max_length=64)
    containerType: ContainerType
    amount: Amount | None = None


class PaymentCreateRequest(Input):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    type: str = Field(min_length=1, max_length=128)
    amount: Amount
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    data: dict[str, Any] = {}
    targets: list[CreditItem] = Field(default=[], max_length=100)
    transactionMethod: TransactionMethod | None = None
    transactionNumber: str | None = Field(default=None, max_length=128)
    useDefaultFinancialInstrument: bool | None = None
    financialInstrumentLocator: str | None = None
    paymentMode: Literal["normal"] | None = None
    retryPlanName: str | None = None


class PaymentUpdateRequest(Input):
    """The platform's fields of financial instruments, modes and retries are taken and left alone: this
    service executes no payment requests."""

    accountLocator: str | None = Field(default=None, max_length=64)
    useDefaultFinancialInstrument: bool | None = None
    financialInstrumentLocator: str | None = Field(default=None, max_length=64)
    paymentMode: Literal["normal"] | None = None
    retryPlanName: str | None = Field(default=None, max_length=128)
    nextRequestTime: datetime | None = None
    type: str | None = Field(default=None, min_length=1, max_length=128)
    amount: Amount | None = None
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    addTargets: list[CreditItem] = Field(default=[], max_length=100)
    removeTargets: list[str] = Field(default=[], max_length=100)
    transactionMethod: TransactionMethod | None = None
    transactionNumber: str | None = Field(default=None, max_length=128)


class PaymentReverseRequest(Input):
    reversalType: str | None = Field(default=None, max_length=128)
    reversalReason: str | None = Field(default=None, max_length=1000)


class PaymentTargetResponse(Response):
    containerLocator: str
    containerType: ContainerType
    amount: Decimal | None = None


class SubpaymentResponse(Response):
    subpaymentLocator: str
    amount: Decimal


class PaymentRequestExecutionLogItem(Response):
    """One request of the payment to a payment provider (none is logged: the service calls no provider)."""

    paymentRequestLocator: str
    paymentRequestState: Literal["pending", "completed", "failed", "error"]
    requestTime: datetime | None = None
    transactionId: str | None = None
    note: str | None = None
    data: dict[str, Any]


class PaymentResponse(Response):
    locator: str
    accountLocator: str
    paymentState: PaymentState
    type: str
    currency: str
    amount: Decimal
    remainingAmount: Decimal | None = None
    data: dict[str, Any] = {}
    targets: list[PaymentTargetResponse]
    transactionMethod: str | None = None
    transactionNumber: str | None = None
    paymentNumber: str | None = None
    paymentMode: Literal["normal"] = "normal"
    postedAt: datetime | None = None
    reversedAt: datetime | None = None
    reversedBy: str | None = None
    reversalReason: str | None = None
    shortfallCreditLocators: list[str] = []
    subpayments: list[SubpaymentResponse] = []
    executionLog: list[PaymentRequestExecutionLogItem] = []
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, record: Payment) -> PaymentResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"targets", "remainingAmount"})
        return cls(**fields, targets=[PaymentTargetResponse.model_validate(t.model_dump()) for t in record.targets],
                   remainingAmount=record.creditedAmount if record.paymentState == PaymentState.POSTED else None)


class PaymentListResponse(ListResponse[PaymentResponse]):
    @classmethod
    def of_page(cls, page: Page[Payment]) -> PaymentListResponse:
        return cls(listCompleted=page.list_completed, items=[PaymentResponse.of(r) for r in page.items])


class PaymentListQuery(ListQuery):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    """None: the tenant's."""


class LedgerQuery(ListQuery):
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")


class LedgerAccountLineItem(Response):
    faTransactionLocator: str
    faTransactionTime: datetime
    faTransactionNote: str
    accountingType: Literal["credit", "debit"]
    amount: Decimal

    @classmethod
    def of(cls, line: LedgerLine) -> LedgerAccountLineItem:
        return cls(faTransactionLocator=line.locator, faTransactionTime=line.time, faTransactionNote=line.note,
                   accountingType=line.accountingType, amount=line.amount)


class LedgerAccountResponse(Response):
    referenceLocator: str
    referenceType: Literal["accountCreditBalance"] = "accountCreditBalance"
    balance: Decimal
    currency: str
    lineItems: list[LedgerAccountLineItem]

    @classmethod
    def of(cls, balance: CreditBalance, lines: list[LedgerLine]) -> LedgerAccountResponse:
        return cls(referenceLocator=balance.accountLocator, balance=balance.balance, currency=balance.currency,
                   lineItems=[LedgerAccountLineItem.of(line) for line in lines])


# --- previews -----------------------------------------------------------------------------------------

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
        return shown if query.count is None else shown[:query.count]

    @classmethod
    def of(cls, invoice: Invoice) -> InvoicePreviewResponse:
        return cls(startTime=invoice.startTime, endTime=invoice.endTime, dueTime=invoice.dueTime,
                   generateTime=invoice.generateTime or invoice.generatedTime,
                   autopayTime=invoice.autopayTime or invoice.dueTime, totalAmount=invoice.totalAmount,
                   installmentLocators=[],  # a preview's installments are made up: nothing to fetch
                   invoiceItems=[InvoiceItemPreview(
                       elementStaticLocator=item.elementStaticLocator or "", chargeCategory=item.chargeCategory,
                       chargeType=item.chargeType, elementType=item.elementType or "", amount=item.amount,
                       transactionLocators=[t for t in item.transactionLocators if t],
                       policyLocator=item.policyLocator or None, quoteLocator=item.quoteLocator)
                       for item in invoice.invoiceItems])


# --- billing jobs -------------------------------------------------------------------------------------

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
        return cls(locator=job.locator, latticeLocator=job.latticeLocator, referenceLocator=job.referenceLocator,
                   referenceType="transaction", installmentLocators=",".join(job.installmentLocators),
                   processingErrors=job.processingErrors, jobStatus=job.jobStatus, jobType="createOrUpdate",
                   createdAt=job.createdAt, completedAt=job.completedAt or job.createdAt)


class InstallmentJobDataListResponse(ListResponse[InstallmentJobData]):
    @classmethod
    def of_page(cls, page: Page[InstallmentJob]) -> InstallmentJobDataListResponse:
        return cls(listCompleted=page.list_completed, items=[InstallmentJobData.of(j) for j in page.items])


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
        return cls(locator=job.locator, accountLocator=job.accountLocator, jobStatus=job.jobStatus,
                   createdAt=job.createdAt, completedAt=job.completedAt, invoiceLocators=job.invoiceLocators,
                   processingErrors=job.processingErrors, invoicingData=EarlyInvoicingGenerationData(
                       accountLocator=job.accountLocator, invoicingType=job.invoicingType,
                       installmentsToBeInvoiced=job.installmentsToBeInvoiced, timezone=job.timezone,
                       invoiceDueTime=job.invoiceDueTime, invoiceThroughTime=job.invoiceThroughTime))


class InvoicingJobListResponse(ListResponse[InvoicingJobData]):
    @classmethod
    def of_page(cls, page: Page[InvoicingJob]) -> InvoicingJobListResponse:
        return cls(listCompleted=page.list_completed, items=[InvoicingJobData.of(j) for j in page.items])


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
        return cls(locator=job.locator, invoiceGenerationScheduleLocator=job.accountLocator,
                   generateTime=job.generateTime, completedAt=job.completedAt, createdAt=job.createdAt,
                   jobStatus=job.jobStatus, createdBy=job.createdBy, invoiceGenerationInstances=[
                       InvoiceGenerationInstance(locator=invoice, invoiceGenerationJobLocator=job.locator,
                                                 invoiceLocator=invoice, generateTime=job.generateTime,
                                                 completedAt=job.completedAt, jobStatus=job.jobStatus,
                                                 createdAt=job.createdAt, createdBy=job.createdBy)
                       for invoice in job.invoiceLocators])


class InvoiceGenerationJobListResponse(ListResponse[InvoiceGenerationJobResponse]):
    @classmethod
    def of_page(cls, page: Page[InvoiceGenerationJob]) -> InvoiceGenerationJobListResponse:
        return cls(listCompleted=page.list_completed, items=[InvoiceGenerationJobResponse.of(j) for j in page.items])


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
        return cls(workflowJobLocator=invoice.locator, createdAt=invoice.generatedTime,
                   completedAt=invoice.settledTime if invoice.invoiceState == InvoiceState.SETTLED else None,
                   contextData=InvoiceLifecycleJobData(invoiceLocator=invoice.locator,
                                                       triggers=sorted(triggers, key=lambda t: t.triggerTime)))


# --- payment numbers, installments' times -------------------------------------------------------------

class PaymentNumberQuery(BaseModel):
    paymentNumber: str


class PatchInstallmentsRequest(Input):
    installmentLocators: list[str] = Field(min_length=1, max_length=100)
    generateTime: datetime | None = None
    dueTime: datetime | None = None
    autopayTime: datetime | None = None


# --- charges --------------------------------------------------------------------------------------------

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
        return cls(locator=charge.locator, accountLocator=billed.account_locator, currency=billed.currency,
                   amount=charge.amount, chargeCategory=charge.chargeCategory, chargeInvoicing=charge.invoicing,
                   chargeType=charge.chargeType, tag=charge.tag or None, policyLocator=billed.policy_locator,
                   transactionLocator=billed.transaction_locator, elementLocator=charge.elementLocator,
                   elementStaticLocator=charge.elementStaticLocator, reversalOfLocator=charge.reversalOfLocator,
                   bundleTransactionLocator=billed.bundle_transaction_locator)


class ChargeListResponse(ListResponse[ChargeResponse]):
    @classmethod
    def of_page(cls, page: Page[BilledCharge]) -> ChargeListResponse:
        return cls(listCompleted=page.list_completed, items=[ChargeResponse.of(c) for c in page.items])
