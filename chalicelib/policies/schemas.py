"""The policies API contract (spec part 2; every response carries the fields the OpenAPI definition
marks required). Requests: unknown fields are a 400.

StaticDataUpdateRequest: the OpenAPI definition requires both maps; a left-out one counts as empty.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, RootModel, StringConstraints

from chalicelib.accounts.models import BillingLevel
from chalicelib.accounts.models import ContactRole as ContactRole  # the body of the policy contact routes
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.clock import utc
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery  # the one list query model (core/paging.py)
from chalicelib.core.paging import ListResponse
from chalicelib.policies.models import (
    Policy,
    PolicySnapshot,
    PolicyStatus,
    Term,
    TransactionCategory,
)
from chalicelib.policies.statuses import policy_statuses
from chalicelib.priceable.models import DurationBasis
from chalicelib.priceable.schemas import SegmentResponse
from chalicelib.priceable.schemas import StaticDataHistoryListResponse as StaticDataHistoryListResponse
from chalicelib.priceable.schemas import StaticDataHistoryResponse as StaticDataHistoryResponse

Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]


Moment = Annotated[datetime, AfterValidator(utc)]


# --- requests ------------------------------------------------------------------------------------


class StaticData(RootModel[dict[str, Any]]):
    """A map of static data fields (POST sets them, PUT replaces all)."""


class StaticDataUpdateRequest(Input):
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}


class UpdateBillingLevelRequest(Input):
    billingLevel: BillingLevel


class DelinquencyPlanUpdateRequest(Input):
    delinquencyPlanName: Name


class UpdateJurisdictionRequest(Input):
    jurisdiction: Name | None = None


class ContactAssociationUpdateRequest(Input):
    addRoles: list[Name] = []
    removeRoles: list[Name] = []


class AccountPoliciesQuery(ListQuery):
    includeStaticData: bool = False


class SnapshotQuery(BaseModel):
    date: Moment
    byIssuedTime: bool = False


class PolicyNumberQuery(BaseModel):
    policyNumber: str


# --- responses -----------------------------------------------------------------------------------


class PolicyResponse(Response):
    locator: str
    accountLocator: str
    issuedTransactionLocator: str
    latestSegmentLocator: str
    latestTermLocator: str
    productName: str
    startTime: datetime
    endTime: datetime
    currency: str
    durationBasis: DurationBasis
    timezone: str
    billingLevel: BillingLevel
    static: dict[str, Any]
    createdAt: datetime
    anonymizedAt: datetime | None = None
    createdBy: str
    contacts: list[ContactRole]
    moratoriumElections: dict[str, str]
    statuses: list[PolicyStatus]
    region: str | None = None
    autoRenewalPlanName: str | None = None
    delinquencyPlanName: str | None = None
    jurisdiction: str | None = None
    policyNumber: str | None = None
    producerCode: str | None = None
    producerCodeOfRecord: str | None = None
    invoiceFeeAmount: Decimal | None = None
    validationResult: ValidationResult | None = None
    branchHeadTransactionLocators: list[str] | None = None

    @classmethod
    def of(cls, policy: Policy, now: datetime, *, include_static: bool = True) -> PolicyResponse:
        fields = policy.model_dump(include=set(cls.model_fields) - {"statuses", "static"})
        return cls(
            **fields,
            static=policy.static if include_static else {},
            statuses=policy_statuses(
                now,
                policy.startTime,
                policy.endTime,
                policy.cancellationTime,
                delinquent=bool(policy.delinquencyLocators),
            ),
        )


class PolicyListResponse(ListResponse[PolicyResponse]):
    pass


class TermResponse(Response):
    locator: str
    staticLocator: str
    policyLocator: str
    number: int
    startTime: datetime
    endTime: datetime
    termNumber: str | None = None
    previousTermLocator: str | None = None
    supersedesTermLocator: str | None = None
    autoRenewalLocator: str | None = None

    @classmethod
    def of(cls, term: Term) -> TermResponse:
        return cls(**term.model_dump())


class TermListResponse(ListResponse[TermResponse]):
    pass


class TransactionSnapshotResponse(Response):
    locator: str
    effectiveTime: datetime
    issuedTime: datetime
    preferences: dict[str, Any]
    segment: SegmentResponse
    transactionCategory: TransactionCategory
    transactionType: str


class PolicySnapshotResponse(Response):
    locator: str
    accountLocator: str
    region: str
    productName: str
    currency: str
    timezone: str
    transaction: TransactionSnapshotResponse
    static: dict[str, Any]
    delinquencyPlanName: str | None = None

    @classmethod
    def of(cls, snapshot: PolicySnapshot) -> PolicySnapshotResponse:
        """`region` is "" for a policy without one (the field is required)."""
        policy, transaction = snapshot.policy, snapshot.transaction
        return cls(
            locator=policy.locator,
            accountLocator=policy.accountLocator,
            region=policy.region or "",
            productName=policy.productName,
            currency=policy.currency,
            timezone=policy.timezone,
            static=policy.static,
            delinquencyPlanName=policy.delinquencyPlanName,
            transaction=TransactionSnapshotResponse(
                locator=transaction.locator,
                effectiveTime=transaction.effectiveTime,
                issuedTime=transaction.issuedTime or transaction.createdAt,
                preferences=transaction.preferences,
                segment=SegmentResponse.of(snapshot.segment),
                transactionCategory=transaction.transactionCategory,
                transactionType=transaction.transactionType,
            ),
        )


class PolicySnapshotListResponse(ListResponse[PolicySnapshotResponse]):
    pass
