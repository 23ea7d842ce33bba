"""The policy transactions API contract (OpenAPI definition: createPolicyTransaction, fetchTransaction,
TransactionPriceResponse, TransactionUnderwritingResponse, SegmentResponse, ...). Requests are the
domain's input models; unknown fields are a 400. Responses carry every field the definition marks
required; elements, charges and flags are priceable/schemas.py's.

A segment's element tree answers as ElementResponse: the root's parent is the segment.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Self

from pydantic import BaseModel, RootModel

from chalicelib.accounts.models import InstallmentPreferences
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Response
from chalicelib.core.paging import ListQuery as ListQuery
from chalicelib.core.paging import ListResponse
from chalicelib.policies.models import Transaction, TransactionCategory, TransactionState
from chalicelib.priceable.models import ElementChanges, FlagInput, ResetOptions
from chalicelib.priceable.schemas import ConstraintValuesRequest as ConstraintValuesRequest
from chalicelib.priceable.schemas import ElementCreateRequests as ElementCreateRequests
from chalicelib.priceable.schemas import ElementLocators as ElementLocators
from chalicelib.priceable.schemas import PolicyChargeResponse, UnderwritingFlagResponse
from chalicelib.priceable.schemas import SegmentResponse as SegmentResponse
from chalicelib.priceable.schemas import StatelessQuery as StatelessQuery
from chalicelib.priceable.schemas import UnderwritingFlagsUpdateRequest as UnderwritingFlagsUpdateRequest
from chalicelib.transactions.models import AffectedTransaction as AffectedTransaction
from chalicelib.transactions.models import CancelInstruction as CancelInstruction
from chalicelib.transactions.models import Instructions as Instructions
from chalicelib.transactions.models import OneInstruction as OneInstruction
from chalicelib.transactions.models import ReversalRequest as ReversalRequest

# --- requests --------------------------------------------------------------------------------------


class ElementUpdateRequest(ElementChanges):
    """One element of the transaction's segment, named by its locator or static locator."""


class UnderwritingFlagCreateRequest(FlagInput):
    pass


class ResetRequest(ResetOptions):
    pass


class BaseQuery(BaseModel):
    baseLocator: str | None = None


class ResetQuery(BaseModel):
    resetToDraft: bool = False


class IssueQuery(BaseModel):
    autoRebase: bool = False


# --- responses -------------------------------------------------------------------------------------


class PolicyTransactionResponse(Response):
    locator: str
    staticLocator: str
    policyLocator: str
    termLocator: str
    effectiveTime: datetime
    transactionState: TransactionState
    transactionCategory: TransactionCategory
    transactionType: str
    data: dict[str, Any]
    createdAt: datetime
    createdBy: str
    issuedTime: datetime | None = None
    acceptedTime: datetime | None = None
    expirationTime: datetime | None = None
    baseTransactionLocator: str | None = None
    aggregateTransactionLocator: str | None = None
    reapplicationOfLocator: str | None = None
    underwritingStatus: str | None = None
    validationResult: ValidationResult | None = None
    preferences: dict[str, Any] | None = None
    changeInstructions: list[dict[str, Any]] | None = None
    anonymizedAt: datetime | None = None
    aggregatedTransactions: list[PolicyTransactionResponse] | None = None

    @classmethod
    def of(cls, transaction: Transaction, aggregated: list[Transaction] | None = None) -> PolicyTransactionResponse:
        fields = transaction.model_dump(include=set(cls.model_fields) - {"aggregatedTransactions"})
        return cls(**fields, aggregatedTransactions=[cls.of(t) for t in aggregated] if aggregated else None)


class PolicyTransactionListResponse(ListResponse[PolicyTransactionResponse]):
    pass


class TransactionPricing(BaseModel):
    """What a transaction's price and underwriting responses share; an aggregate's also answers each of its
    parts the same way (`aggregatedTransactions`)."""

    locator: str
    policyLocator: str
    effectiveTime: datetime
    transactionState: TransactionState
    transactionCategory: TransactionCategory
    validationResult: ValidationResult | None = None
    aggregatedTransactions: list[Self] | None = None


def transaction_pricing(transaction: Transaction) -> dict[str, Any]:
    """TransactionPricing's fields of a transaction, but its parts."""
    return transaction.model_dump(include=set(TransactionPricing.model_fields) - {"aggregatedTransactions"})


class TransactionPriceResponse(TransactionPricing):
    charges: list[PolicyChargeResponse]

    @classmethod
    def of(cls, transaction: Transaction, aggregated: list[Transaction] | None = None) -> TransactionPriceResponse:
        return cls(
            **transaction_pricing(transaction),
            charges=[PolicyChargeResponse.of(charge) for charge in transaction.charges],
            aggregatedTransactions=[cls.of(t) for t in aggregated] if aggregated else None,
        )


class TransactionUnderwritingResponse(TransactionPricing):
    underwritingStatus: str
    underwritingFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(
        cls, transaction: Transaction, aggregated: list[Transaction] | None = None
    ) -> TransactionUnderwritingResponse:
        """`underwritingStatus` is "" until the transaction was underwritten (the field is required)."""
        return cls(
            **transaction_pricing(transaction),
            underwritingStatus=transaction.underwritingStatus or "",
            underwritingFlags=[
                UnderwritingFlagResponse.of(transaction.locator, flag, "transaction")
                for flag in transaction.flags
                if not flag.cleared
            ],
            aggregatedTransactions=[cls.of(t) for t in aggregated] if aggregated else None,
        )


class TransactionUnderwritingFlagsResponse(Response):
    transactionLocator: str
    flags: list[UnderwritingFlagResponse]
    clearedFlags: list[UnderwritingFlagResponse]

    @classmethod
    def of(cls, transaction: Transaction) -> TransactionUnderwritingFlagsResponse:
        def response(flag: Any) -> UnderwritingFlagResponse:
            return UnderwritingFlagResponse.of(transaction.locator, flag, "transaction")

        return cls(
            transactionLocator=transaction.locator,
            flags=[response(flag) for flag in transaction.flags if not flag.cleared],
            clearedFlags=[response(flag) for flag in transaction.flags if flag.cleared],
        )


class PreferencesResponse(Response):
    installmentPreferences: InstallmentPreferences | None = None

    @classmethod
    def of(cls, transaction: Transaction) -> PreferencesResponse:
        return cls(installmentPreferences=transaction.preferences.get("installmentPreferences"))


class BranchesResponse(RootModel[dict[str, list[PolicyTransactionResponse]]]):
    """Each branch of unissued transactions by its head's locator, the head first."""

    @classmethod
    def of(cls, found: dict[str, list[Transaction]]) -> BranchesResponse:
        return cls({head: [PolicyTransactionResponse.of(t) for t in chain] for head, chain in found.items()})
