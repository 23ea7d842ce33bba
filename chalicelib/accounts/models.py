"""Accounts (spec part 2, "Account records"): the record, its contacts, billing level and preferences."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, StringConstraints

from chalicelib.configuration.billing_plans import Cadence
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input

ENTITY = "account"
"""The entity kind of account numbers and the `code` prefix of account errors."""

PLAN_REFERENCES = {
    "autoRenewalPlanName": "autoRenewalPlans",
    "delinquencyPlanName": "delinquencyPlans",
    "excessCreditPlanName": "excessCreditPlans",
    "invoicingPlanName": "invoicingPlans",
    "paymentExecutionRetryPlanName": "retryPlans",
    "shortfallTolerancePlanName": "shortfallTolerancePlans",
    "invoiceDocument": "documents",
    "region": "regions",
}
"""Account fields that name an entity of the configuration, and the collection it must be in."""


Name = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Ulid = Annotated[str, StringConstraints(pattern=r"^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$")]


class AccountState(StrEnum):
    DRAFT = "draft"
    VALIDATED = "validated"
    DISCARDED = "discarded"


class BillingLevel(StrEnum):
    ACCOUNT = "account"
    INHERIT = "inherit"
    POLICY = "policy"


class ContactRole(Input):
    contactLocator: Ulid
    roles: list[Name]


class InstallmentPreferences(Input):
    installmentWeights: list[Decimal]
    installmentPlanName: str | None = None
    anchorMode: Literal["generateDay", "termStartDay", "dueDay"] | None = None
    anchorTime: datetime | None = None
    anchorType: Literal["none", "dayOfMonth", "anchorTime", "dayOfWeek", "weekOfMonth"] | None = None
    autopayLeadDays: Decimal | None = None
    cadence: Cadence | None = None
    dayOfMonth: int | None = None
    dayOfWeek: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] | None = None
    dueLeadDays: int | None = None
    generateLeadDays: int | None = None
    maxInstallmentsPerTerm: int | None = None
    weekOfMonth: Literal["none", "first", "second", "third", "fourth", "fifth"] | None = None


class Preferences(Input):
    installmentPreferences: InstallmentPreferences | None = None


class AccountPlans(Input):
    """The plans and the invoice document a client names for an account, as create, replace and update take
    them (each checked against the configuration: PLAN_REFERENCES). A request model lists its own fields in
    a base before this one (`class X(AccountPlans, XHead)`): pydantic orders a base's fields first, so these
    stay last in the request, as the API has always described them."""

    autoRenewalPlanName: Name | None = None
    delinquencyPlanName: Name | None = None
    excessCreditPlanName: Name | None = None
    invoicingPlanName: Name | None = None
    paymentExecutionRetryPlanName: Name | None = None
    shortfallTolerancePlanName: Name | None = None
    invoiceDocument: Name | None = None


class _AccountFieldsHead(Input):
    type: Name
    data: dict[str, Any] = {}
    billingLevel: BillingLevel | None = None
    contacts: list[ContactRole] = []
    preferences: Preferences | None = None
    timezone: Name | None = None
    region: Name | None = None


class AccountFields(AccountPlans, _AccountFieldsHead):
    """Everything a client sets on an account: create and replace (PUT) take all of it."""


class _AccountChangesHead(Input):
    type: Name | None = None
    setData: dict[str, Any] = {}
    removeData: dict[str, Any] = {}
    billingLevel: BillingLevel | None = None
    preferences: Preferences | None = None
    timezone: Name | None = None


class AccountChanges(AccountPlans, _AccountChangesHead):
    """An update (PATCH): fields left out (or null) stay; `removeData` drops the named data fields
    (their values are not looked at), then `setData` sets fields (a null value removes one)."""


class AccountPlanNames(BaseModel):
    """The plans an account names, as it is stored and answered (AccountPlans: as a client sends them, checked).
    As there, a model lists the fields before them in a base after this one, to keep its field order."""

    autoRenewalPlanName: str | None = None
    delinquencyPlanName: str | None = None
    excessCreditPlanName: str | None = None
    invoicingPlanName: str | None = None
    paymentExecutionRetryPlanName: str | None = None
    shortfallTolerancePlanName: str | None = None


class _AccountHead(BaseModel):
    locator: str
    type: str
    accountState: AccountState = AccountState.DRAFT
    accountNumber: str | None = None
    billingLevel: BillingLevel
    data: dict[str, Any] = {}
    contacts: list[ContactRole] = []
    preferences: Preferences | None = None
    timezone: str
    region: str | None = None


class Account(AccountPlanNames, _AccountHead):
    """An account as stored. `version` is the optimistic lock; `configVersion` the deployed
    configuration its data was last checked against."""

    invoiceDocument: str | None = None
    validationResult: ValidationResult | None = None
    configVersion: str
    createdAt: datetime
    anonymizedAt: datetime | None = None
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1
