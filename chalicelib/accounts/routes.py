"""Accounts (spec part 2, "Accounts (group accounts)").

API Gateway refuses sibling path variables of different names, so every path below
`/policy/{tenantLocator}/accounts/` names the account `{locator}`, also where the spec writes
`{accountLocator}` (the contacts paths); clients never see variable names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.accounts import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.accounts", "models", "schemas", "service")

bp = Blueprint(__name__)


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["GET"])
@endpoint("accounts.read", errors=[codes.NOT_FOUND["account"]])
def fetch_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.get_account(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts", methods=["POST"])
@endpoint(
    "accounts.write",
    idempotent=True,
    creates="account",
    replay=fetch_account,
    errors=[
        codes.ACCOUNT_ABSTRACT_TYPE,
        codes.ACCOUNT_UNKNOWN_TYPE,
        codes.INVALID_REFERENCE["account"],
        codes.NOT_FOUND["configuration"],
        codes.NUMBERING_EXHAUSTED,
        codes.NUMBERING_INVALID_PLAN,
        codes.TOO_LARGE["account"],
    ],
)
def create_account(tenantLocator: str, body: schemas.AccountCreateRequest) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.create_account(request_context(), body, auto_validate=body.autoValidate))


@bp.route("/policy/{tenantLocator}/accounts/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list")
def list_accounts(tenantLocator: str, query: schemas.ListQuery) -> schemas.AccountListResponse:
    return schemas.AccountListResponse.of(
        service.list_accounts(request_context(), query.page()), schemas.AccountResponse.of
    )


@bp.route("/policy/{tenantLocator}/accounts/numbers/{accountNumber}", methods=["GET"])
@endpoint("accounts.read", "accounts.list", errors=[codes.NOT_FOUND["account"]])
def fetch_accounts_by_number(tenantLocator: str, accountNumber: str) -> list[schemas.AccountResponse]:
    return [schemas.AccountResponse.of(a) for a in service.accounts_with_number(request_context(), accountNumber)]


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["PATCH"])
@endpoint(
    "accounts.write",
    errors=[
        codes.ACCOUNT_ABSTRACT_TYPE,
        codes.ACCOUNT_UNKNOWN_TYPE,
        codes.INVALID_REFERENCE["account"],
        codes.NOT_FOUND["account"],
        codes.TOO_LARGE["account"],
    ],
)
def update_account(tenantLocator: str, locator: str, body: schemas.AccountUpdateRequest) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(
        service.update_account(request_context(), locator, body, auto_validate=body.autoValidate)
    )


@bp.route("/policy/{tenantLocator}/accounts/{locator}", methods=["PUT"])
@endpoint(
    "accounts.write",
    errors=[
        codes.ACCOUNT_ABSTRACT_TYPE,
        codes.ACCOUNT_UNKNOWN_TYPE,
        codes.INVALID_REFERENCE["account"],
        codes.NOT_FOUND["account"],
        codes.TOO_LARGE["account"],
    ],
)
def replace_account(
    tenantLocator: str, locator: str, body: schemas.AccountUpdateReplaceDataRequest
) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(
        service.replace_account(request_context(), locator, body, auto_validate=body.autoValidate)
    )


@bp.route("/policy/{tenantLocator}/accounts/{locator}/validate", methods=["PATCH"])
@endpoint(
    "accounts.write",
    errors=[codes.ACCOUNT_TYPE_NOT_CONFIGURED, codes.NOT_FOUND["account"], codes.NUMBER_TAKEN["account"]],
)
def validate_account(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.validate_account(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/billingLevel", methods=["PATCH"])
@endpoint("accounts.write", errors=[codes.NOT_FOUND["account"]])
def update_account_billing_level(
    tenantLocator: str, locator: str, body: schemas.UpdateBillingLevelRequest
) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.set_billing_level(request_context(), locator, body.billingLevel))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts", methods=["POST"])
@endpoint(
    "accounts.write",
    errors=[codes.CONTACT_EXISTS["account"], codes.INVALID_REFERENCE["account"], codes.NOT_FOUND["account"]],
)
def add_account_contact(tenantLocator: str, locator: str, body: models.ContactRole) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.add_contact(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts", methods=["GET"])
@endpoint("accounts.write", errors=[codes.NOT_FOUND["account"]])
def list_account_contacts(tenantLocator: str, locator: str) -> list[models.ContactRole]:
    return service.contacts(request_context(), locator)


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts/{contactLocator}", methods=["PATCH"])
@endpoint(
    "accounts.write",
    errors=[codes.INVALID_REFERENCE["account"], codes.NOT_FOUND["account"], codes.NOT_FOUND["contact"]],
)
def update_account_contact(
    tenantLocator: str, locator: str, contactLocator: str, body: schemas.ContactAssociationUpdateRequest
) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(
        service.update_contact(
            request_context(), locator, contactLocator, add_roles=body.addRoles, remove_roles=body.removeRoles
        )
    )


@bp.route("/policy/{tenantLocator}/accounts/{locator}/contacts/{contactLocator}", methods=["DELETE"])
@endpoint("accounts.write", errors=[codes.NOT_FOUND["account"], codes.NOT_FOUND["contact"]])
def delete_account_contact(tenantLocator: str, locator: str, contactLocator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.delete_contact(request_context(), locator, contactLocator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/number/set", methods=["POST"])
@endpoint("accounts.write", errors=[codes.NOT_FOUND["account"], codes.NUMBER_TAKEN["account"]])
def set_account_number(tenantLocator: str, locator: str, query: schemas.AccountNumberQuery) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.set_number(request_context(), locator, query.accountNumber))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/number/generate", methods=["POST"])
@endpoint("accounts.write", errors=[codes.NOT_FOUND["account"], codes.NO_NUMBERING_PLAN["account"]])
def generate_account_number(tenantLocator: str, locator: str) -> schemas.AccountResponse:
    return schemas.AccountResponse.of(service.generate_number(request_context(), locator))


@bp.route("/policy/{tenantLocator}/accounts/{locator}/constraints/evaluate", methods=["POST"])
@endpoint("accounts.read", errors=[codes.INVALID_REFERENCE["account"], codes.NOT_FOUND["account"]])
def evaluate_account_constraints(
    tenantLocator: str, locator: str, body: schemas.ConstraintValuesRequest
) -> dict[str, dict[str, list[str]]]:
    return service.evaluate_constraints(request_context(), locator, body.root)


@bp.route("/policy/{tenantLocator}/accounts/{locator}/constraints/dependency", methods=["GET"])
@endpoint("accounts.read", errors=[codes.NOT_FOUND["account"]])
def fetch_account_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)
