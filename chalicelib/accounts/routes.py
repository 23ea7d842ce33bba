"""Accounts (spec part 2, "Accounts (group accounts)").

API Gateway refuses sibling path variables of different names, so every path below
`/policy/{tenantLocator}/accounts/` names the account `{locator}`, also where the spec writes
`{accountLocator}` (the contacts paths); clients never see variable names.
"""
from __future__ import annotations

from typing import Any

from chalice import Blueprint

from chalicelib.accounts import service
from chalicelib.accounts.models import ContactRole
from chalicelib.accounts.schemas import (
    AccountCreateRequest,
    AccountListResponse,
    AccountNumberQuery,
    AccountResponse,
    AccountUpdateReplaceDataRequest,
    AccountUpdateRequest,
    ConstraintValuesRequest,
    ContactAssociationUpdateRequest,
    ListQuery,
    UpdateBillingLevelRequest,
)
from chalicelib.core.paging import PageRequest
from chalicelib.http.endpoint import endpoint
from chalicelib.http.request import body_as, query_as, request_context

bp = Blueprint(__name__)

ACCOUNTS = "/policy/{tenantLocator}/accounts"
ACCOUNT = ACCOUNTS + "/{locator}"


@bp.route(ACCOUNTS, methods=["POST"])
@endpoint("accounts.write", idempotent=True)
def create_account(tenantLocator: str) -> AccountResponse:
    body = body_as(AccountCreateRequest)
    return AccountResponse.of(service.create_account(request_context(), body, auto_validate=body.autoValidate))


@bp.route(ACCOUNTS + "/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list")
def list_accounts(tenantLocator: str) -> AccountListResponse:
    query = query_as(ListQuery)
    return AccountListResponse.of(service.list_accounts(request_context(), PageRequest.of(query.offset, query.count)))


@bp.route(ACCOUNTS + "/numbers/{accountNumber}", methods=["GET"])
@endpoint("accounts.read", "accounts.list")
def fetch_accounts_by_number(tenantLocator: str, accountNumber: str) -> list[AccountResponse]:
    return [AccountResponse.of(a) for a in service.accounts_with_number(request_context(), accountNumber)]


@bp.route(ACCOUNT, methods=["GET"])
@endpoint("accounts.read")
def fetch_account(tenantLocator: str, locator: str) -> AccountResponse:
    return AccountResponse.of(service.get_account(request_context(), locator))


@bp.route(ACCOUNT, methods=["PATCH"])
@endpoint("accounts.write")
def update_account(tenantLocator: str, locator: str) -> AccountResponse:
    body = body_as(AccountUpdateRequest)
    return AccountResponse.of(service.update_account(request_context(), locator, body,
                                                     auto_validate=body.autoValidate))


@bp.route(ACCOUNT, methods=["PUT"])
@endpoint("accounts.write")
def replace_account(tenantLocator: str, locator: str) -> AccountResponse:
    body = body_as(AccountUpdateReplaceDataRequest)
    return AccountResponse.of(service.replace_account(request_context(), locator, body,
                                                      auto_validate=body.autoValidate))


@bp.route(ACCOUNT + "/validate", methods=["PATCH"])
@endpoint("accounts.write")
def validate_account(tenantLocator: str, locator: str) -> AccountResponse:
    return AccountResponse.of(service.validate_account(request_context(), locator))


@bp.route(ACCOUNT + "/billingLevel", methods=["PATCH"])
@endpoint("accounts.write")
def update_account_billing_level(tenantLocator: str, locator: str) -> AccountResponse:
    body = body_as(UpdateBillingLevelRequest)
    return AccountResponse.of(service.set_billing_level(request_context(), locator, body.billingLevel))


@bp.route(ACCOUNT + "/contacts", methods=["POST"])
@endpoint("accounts.write")
def add_account_contact(tenantLocator: str, locator: str) -> AccountResponse:
    return AccountResponse.of(service.add_contact(request_context(), locator, body_as(ContactRole)))


@bp.route(ACCOUNT + "/contacts", methods=["GET"])
@endpoint("accounts.write")
def list_account_contacts(tenantLocator: str, locator: str) -> list[ContactRole]:
    return service.contacts(request_context(), locator)


@bp.route(ACCOUNT + "/contacts/{contactLocator}", methods=["PATCH"])
@endpoint("accounts.write")
def update_account_contact(tenantLocator: str, locator: str, contactLocator: str) -> AccountResponse:
    body = body_as(ContactAssociationUpdateRequest)
    return AccountResponse.of(service.update_contact(request_context(), locator, contactLocator,
                                                     add_roles=body.addRoles, remove_roles=body.removeRoles))


@bp.route(ACCOUNT + "/contacts/{contactLocator}", methods=["DELETE"])
@endpoint("accounts.write")
def delete_account_contact(tenantLocator: str, locator: str, contactLocator: str) -> AccountResponse:
    return AccountResponse.of(service.delete_contact(request_context(), locator, contactLocator))


@bp.route(ACCOUNT + "/number/set", methods=["POST"])
@endpoint("accounts.write")
def set_account_number(tenantLocator: str, locator: str) -> AccountResponse:
    number = query_as(AccountNumberQuery).accountNumber
    return AccountResponse.of(service.set_number(request_context(), locator, number))


@bp.route(ACCOUNT + "/number/generate", methods=["POST"])
@endpoint("accounts.write")
def generate_account_number(tenantLocator: str, locator: str) -> AccountResponse:
    return AccountResponse.of(service.generate_number(request_context(), locator))


@bp.route(ACCOUNT + "/constraints/evaluate", methods=["POST"])
@endpoint("accounts.read")
def evaluate_account_constraints(tenantLocator: str, locator: str) -> dict[str, dict[str, list[str]]]:
    values = body_as(ConstraintValuesRequest).root
    return service.evaluate_constraints(request_context(), locator, values)


@bp.route(ACCOUNT + "/constraints/dependency", methods=["GET"])
@endpoint("accounts.read")
def fetch_account_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)
