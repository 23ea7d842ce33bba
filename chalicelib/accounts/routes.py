"""Accounts (spec part 2, "Accounts (group accounts)").

API Gateway refuses sibling path variables of different names, so every path below
`/policy/{tenantLocator}/accounts/` names the account `{locator}`, also where the spec writes
`{accountLocator}` (the contacts paths); clients never see variable names.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core.paging import PageRequest
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import body_as, query_as, request_context

if TYPE_CHECKING:
    from chalicelib.accounts import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.accounts", "models", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/policy/{tenantLocator}/accounts", methods=["POST"])
@endpoint("accounts.write", idempotent=True)
def create_account(tenantLocator: str) -> schemas.AccountResponse:
    body = body_as(schemas.AccountCreateRequest)
    return schemas.AccountResponse.of(service.create_account(request_context(), body, auto_validate=body.autoValidate))


@bp.route("/policy/{tenantLocator}/accounts/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list")
def list_accounts(tenantLocator: str) -> schemas.AccountListResponse:
    query = query_as(schemas.ListQuery)
    page = service.list_accounts(request_context(), PageRequest.of(query.offset, query.count))
    return schemas.AccountListResponse.of(page)


@bp.route("/policy/{tenantLocator}/accounts/numbers/{accountNumber}", methods=["GET"])
@endpoint("accounts.read", "accounts.list")
def fetch_accounts_by_number(tenantLocator: str, accountNumber: str) -> list[schemas.AccountResponse]:
    return [schemas.AccountResponse.of(a) for a in service.accounts_with_number(request_context(), accountNumber)]


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["GET"])
@endpoint("accounts.read")
def fetch_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.get_account(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["PATCH"])
@endpoint("accounts.write")
def update_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    body = body_as(schemas.AccountUpdateRequest)
    return schemas.AccountResponse.of(service.update_account(request_context(), locator, body,
                                                             auto_validate=body.autoValidate))


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["PUT"])
@endpoint("accounts.write")
def replace_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    body = body_as(schemas.AccountUpdateReplaceDataRequest)
    return schemas.AccountResponse.of(service.replace_account(request_context(), locator, body,
                                                              auto_validate=body.autoValidate))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/validate", methods=["PATCH"])
@endpoint("accounts.write")
def validate_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.validate_account(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/billingLevel", methods=["PATCH"])
@endpoint("accounts.write")
def update_account_billing_level(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    body = body_as(schemas.UpdateBillingLevelRequest)
    return schemas.AccountResponse.of(service.set_billing_level(request_context(), locator, body.billingLevel))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts", methods=["POST"])
@endpoint("accounts.write")
def add_account_contact(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.add_contact(request_context(), locator, body_as(models.ContactRole)))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts", methods=["GET"])
@endpoint("accounts.write")
def list_account_contacts(tenantLocator: str, locator: str) -> list[models.ContactRole]:
    return service.contacts(request_context(), locator)


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts/{contactLocator}", methods=["PATCH"])
@endpoint("accounts.write")
def update_account_contact(tenantLocator: str, locator: str, contactLocator: str) -> schemas.AccountResponse:
    body = body_as(schemas.ContactAssociationUpdateRequest)
    return schemas.AccountResponse.of(service.update_contact(request_context(), locator, contactLocator,
                                                             add_roles=body.addRoles,
                                                             remove_roles=body.removeRoles))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts/{contactLocator}", methods=["DELETE"])
@endpoint("accounts.write")
def delete_account_contact(tenantLocator: str, locator: str, contactLocator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.delete_contact(request_context(), locator, contactLocator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/number/set", methods=["POST"])
@endpoint("accounts.write")
def set_account_number(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    number = query_as(schemas.AccountNumberQuery).accountNumber
    return schemas.AccountResponse.of(service.set_number(request_context(), locator, number))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/number/generate", methods=["POST"])
@endpoint("accounts.write")
def generate_account_number(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.generate_number(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/constraints/evaluate", methods=["POST"])
@endpoint("accounts.read")
def evaluate_account_constraints(tenantLocator: str, locator: str) -> dict[str, dict[str, list[str]]]:
    values = body_as(schemas.ConstraintValuesRequest).root
    return service.evaluate_constraints(request_context(), locator, values)


@bp.route("/policy/{tenantLocator}/accounts/{locator}/constraints/dependency", methods=["GET"])
@endpoint("accounts.read")
def fetch_account_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)
