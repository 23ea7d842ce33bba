"""The API contract of payments (the OpenAPI definition's PaymentResponse, PaymentCreateRequest,
PaymentUpdateRequest). Field names are the platform's."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, Field

from chalicelib.billing.payments.models import Payment, PaymentState
from chalicelib.billing.schemas import (
    Amount,
    CreditItem,
    CreditMoveRequest,
    CreditResponse,
    PaymentTargetResponse,
    TransactionMethod,
)
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse


class PaymentCreateRequest(CreditMoveRequest):
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
    anonymizedAt: datetime | None = None

    @classmethod
    def of(cls, record: Payment) -> PaymentResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"targets", "remainingAmount"})
        return cls(
            **fields,
            targets=[PaymentTargetResponse.of_record(t) for t in record.targets],
            remainingAmount=record.creditedAmount if record.paymentState == PaymentState.POSTED else None,
        )


class PaymentListResponse(ListResponse[PaymentResponse]):
    pass


class PaymentListQuery(ListQuery):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    """None: the tenant's."""


class PaymentNumberQuery(BaseModel):
    paymentNumber: str


def credit_of_payment(payment: Payment) -> CreditResponse:
    """A posted payment as one of its account's (or the tenant's) credits."""
    return CreditResponse(
        locator=payment.locator,
        creditType="payment",
        creditState="reversed" if payment.paymentState == PaymentState.REVERSED else "posted",
        currency=payment.currency,
        amount=payment.amount,
        createdAt=payment.createdAt,
        accountLocator=payment.accountLocator,
        realizedAt=payment.postedAt,
        reversedAt=payment.reversedAt,
    )
