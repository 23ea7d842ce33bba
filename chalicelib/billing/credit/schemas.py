"""The API contract of credit distributions and disbursements (the OpenAPI definition's
CreditDistributionCreateRequest, CreditDistributionResponse, CreditDistributionReverseRequest,
DisbursementCreateRequest, DisbursementResponse and their lists). `appliedAmount` of a distribution is
our extension: what executing it took from the credit balance."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import Field

from chalicelib.billing.credit.models import (
    CreditDistribution,
    CreditDistributionState,
    Disbursement,
    DisbursementState,
)
from chalicelib.billing.models import PaymentTarget
from chalicelib.billing.schemas import Amount, CreditItem, CreditMoveRequest, PaymentTargetResponse, TransactionMethod
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery, ListResponse


def targets_of(items: list[CreditItem]) -> list[PaymentTarget]:
    return [PaymentTarget.model_validate(item.model_dump()) for item in items]


def _responses(targets: list[PaymentTarget]) -> list[PaymentTargetResponse]:
    return [PaymentTargetResponse.of_record(t) for t in targets]


class AccountListQuery(ListQuery):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)


class CreditDistributionCreateRequest(Input):
    accountLocator: str | None = Field(default=None, min_length=1, max_length=64)
    amount: Amount
    currency: str | None = Field(default=None, pattern="^[A-Z]{3}$")
    sources: list[CreditItem] = Field(default=[], max_length=100)
    targets: list[CreditItem] = Field(default=[], max_length=100)


class CreditDistributionReverseRequest(Input):
    reversalType: str | None = Field(default=None, max_length=128)
    reversalReason: str | None = Field(default=None, max_length=1000)


class DistributionResponse(Response):
    locator: str
    accountLocator: str
    currency: str
    creditDistributionState: CreditDistributionState
    amount: Decimal
    appliedAmount: Decimal
    sources: list[PaymentTargetResponse]
    targets: list[PaymentTargetResponse]
    shortfallCreditLocators: list[str] = []
    validationResult: ValidationResult | None = None
    executedAt: datetime | None = None
    reversedAt: datetime | None = None
    reversalReason: str | None = None
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, record: CreditDistribution) -> DistributionResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"sources", "targets"})
        return cls(**fields, sources=_responses(record.sources), targets=_responses(record.targets))


class DistributionListResponse(ListResponse[DistributionResponse]):
    pass


class DisbursementCreateRequest(CreditMoveRequest):
    """Financial instruments are taken and left alone: this service executes no payouts itself."""

    sources: list[CreditItem] = Field(default=[], max_length=100)
    useDefaultFinancialInstrument: bool | None = None
    financialInstrumentLocator: str | None = Field(default=None, max_length=64)
    transactionMethod: TransactionMethod | None = None
    transactionNumber: str | None = Field(default=None, max_length=128)


class DisbursementResponse(Response):
    locator: str
    accountLocator: str
    currency: str
    disbursementState: DisbursementState
    type: str
    amount: Decimal
    data: dict[str, Any]
    sources: list[PaymentTargetResponse]
    transactionMethod: str | None = None
    transactionNumber: str | None = None
    validationResult: ValidationResult | None = None
    executedAt: datetime | None = None
    reversedAt: datetime | None = None
    createdAt: datetime
    createdBy: str

    @classmethod
    def of(cls, record: Disbursement) -> DisbursementResponse:
        fields = record.model_dump(include=set(cls.model_fields) - {"sources"})
        return cls(**fields, sources=_responses(record.sources))


class DisbursementListResponse(ListResponse[DisbursementResponse]):
    pass
