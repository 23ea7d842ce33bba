"""The accounts API contract (spec part 2, "Account records"; required fields as the OpenAPI definition
marks them). Requests are the domain's input models plus `autoValidate`; unknown fields are a 400.

AccountUpdateRequest: the OpenAPI definition lists every field as required, which would make a
partial update impossible; here every field is optional and a left-out field stays as it is.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, RootModel

from chalicelib.accounts.models import (
    Account,
    AccountChanges,
    AccountFields,
    AccountPlanNames,
    AccountState,
    BillingLevel,
    ContactRole,
    Name,
    Preferences,
)
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core.messages import Input, Response
from chalicelib.core.paging import ListQuery as ListQuery  # the one list query model (core/paging.py)
from chalicelib.core.paging import ListResponse


class AccountCreateRequest(AccountFields):
    autoValidate: bool = False


class AccountUpdateReplaceDataRequest(AccountFields):
    autoValidate: bool = False


class AccountUpdateRequest(AccountChanges):
    autoValidate: bool = False


class ContactAssociationUpdateRequest(Input):
    addRoles: list[Name] = []
    removeRoles: list[Name] = []


class UpdateBillingLevelRequest(Input):
    billingLevel: BillingLevel


class ConstraintValuesRequest(RootModel[dict[str, dict[str, Any]]]):
    """The values to evaluate the constraints with: record locator -> field name -> value."""


class AccountNumberQuery(BaseModel):
    accountNumber: str


class _AccountResponseHead(Response):
    locator: str
    type: str
    accountState: AccountState
    state: AccountState
    accountNumber: str
    billingLevel: BillingLevel
    data: dict[str, Any]
    createdAt: datetime
    anonymizedAt: datetime | None = None
    createdBy: str
    contacts: list[ContactRole]
    region: str | None = None


class AccountResponse(AccountPlanNames, _AccountResponseHead):
    timezone: str | None = None
    invoiceDocument: str | None = None
    preferences: Preferences | None = None
    validationResult: ValidationResult | None = None

    @classmethod
    def of(cls, account: Account) -> AccountResponse:
        """`accountNumber` is "" until the account has a number (the field is required)."""
        fields = account.model_dump(exclude={"accountNumber", "configVersion", "updatedAt", "updatedBy", "version"})
        return cls(**fields, state=account.accountState, accountNumber=account.accountNumber or "")


class AccountListResponse(ListResponse[AccountResponse]):
    pass
