"""Policies (spec part 2, "Policies"; the reads of "Policy transactions"; terms; the account's policy
lists of "Accounts").

API Gateway refuses sibling path variables of different names, so every path below
`/policy/{tenantLocator}/policies/` names the policy `{locator}`, also where the spec writes
`{policyLocator}` (the contacts paths); clients never see variable names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.policies import models, schemas, service
else:
    models, schemas, service = lazy_modules("chalicelib.policies", "models", "schemas", "service")

bp = Blueprint(__name__)


def _policy(policy: models.Policy) -> schemas.PolicyResponse:
    return schemas.PolicyResponse.of(policy, request_context().now)


# --- policies ------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/policies/{locator}", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def fetch_policy(tenantLocator: str, locator: str) -> schemas.PolicyResponse:
    return _policy(service.get_policy(request_context(), locator))


@bp.route("/policy/{tenantLocator}/policies/numbers/{policyNumber}", methods=["GET"])
@endpoint("policies.read", "policies.list", errors=[codes.NOT_FOUND["policy"]])
def fetch_policies_by_number(tenantLocator: str, policyNumber: str) -> list[schemas.PolicyResponse]:
    return [_policy(p) for p in service.policies_with_number(request_context(), policyNumber)]


@bp.route("/policy/{tenantLocator}/policies/{locator}/number/set", methods=["POST"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"], codes.NUMBER_TAKEN["policy"]])
def set_policy_number(tenantLocator: str, locator: str, query: schemas.PolicyNumberQuery) -> schemas.PolicyResponse:
    number = query.policyNumber
    return _policy(service.set_number(request_context(), locator, number))


@bp.route("/policy/{tenantLocator}/policies/{locator}/number/generate", methods=["POST"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"], codes.NO_NUMBERING_PLAN["policy"]])
def generate_policy_number(tenantLocator: str, locator: str) -> schemas.PolicyResponse:
    return _policy(service.generate_number(request_context(), locator))


@bp.route("/policy/{tenantLocator}/policies/{locator}/billingLevel", methods=["PATCH"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"]])
def update_policy_billing_level(
    tenantLocator: str, locator: str, body: schemas.UpdateBillingLevelRequest
) -> schemas.PolicyResponse:
    return _policy(service.set_billing_level(request_context(), locator, body.billingLevel))


@bp.route("/policy/{tenantLocator}/policies/{locator}/delinquencyPlan", methods=["PATCH"])
@endpoint("policies.write", errors=[codes.INVALID_REFERENCE["policy"], codes.NOT_FOUND["policy"]])
def update_policy_delinquency_plan(
    tenantLocator: str, locator: str, body: schemas.DelinquencyPlanUpdateRequest
) -> schemas.PolicyResponse:
    return _policy(service.set_delinquency_plan(request_context(), locator, body.delinquencyPlanName))


@bp.route("/policy/{tenantLocator}/policies/{locator}/jurisdiction", methods=["PATCH"])
@endpoint("policies.write", errors=[codes.INVALID_REFERENCE["policy"], codes.NOT_FOUND["policy"]])
def update_policy_jurisdiction(
    tenantLocator: str, locator: str, body: schemas.UpdateJurisdictionRequest
) -> schemas.PolicyResponse:
    return _policy(service.set_jurisdiction(request_context(), locator, body.jurisdiction))


# --- static data ---------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/policies/{locator}/static", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def fetch_policy_static_data(tenantLocator: str, locator: str) -> dict[str, Any]:
    return service.static_data(request_context(), locator)


@bp.route("/policy/{tenantLocator}/policies/{locator}/static", methods=["POST"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"], codes.POLICY_HELD])
def add_policy_static_data(tenantLocator: str, locator: str, body: schemas.StaticData) -> schemas.PolicyResponse:
    return _policy(service.add_static_data(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/policies/{locator}/static", methods=["PATCH"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"], codes.POLICY_HELD])
def update_policy_static_data(
    tenantLocator: str, locator: str, body: schemas.StaticDataUpdateRequest
) -> schemas.PolicyResponse:
    return _policy(
        service.update_static_data(request_context(), locator, set_data=body.setData, remove_data=body.removeData)
    )


@bp.route("/policy/{tenantLocator}/policies/{locator}/static", methods=["PUT"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"], codes.POLICY_HELD])
def replace_policy_static_data(tenantLocator: str, locator: str, body: schemas.StaticData) -> schemas.PolicyResponse:
    return _policy(service.replace_static_data(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/policies/{locator}/static/history/list", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def list_policy_static_data_history(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.StaticDataHistoryListResponse:
    page = query.page()
    return schemas.StaticDataHistoryListResponse.of(
        service.static_history(request_context(), locator, page), schemas.StaticDataHistoryResponse.of
    )


# --- snapshots -----------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/policies/{locator}/snapshot", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"], codes.NOT_FOUND["snapshot"]])
def fetch_policy_snapshot(
    tenantLocator: str, locator: str, query: schemas.SnapshotQuery
) -> schemas.PolicySnapshotResponse:
    return schemas.PolicySnapshotResponse.of(
        service.snapshot(request_context(), locator, query.date, by_issued_time=query.byIssuedTime)
    )


@bp.route("/policy/{tenantLocator}/policies/snapshot/list", methods=["GET"])
@endpoint("policies.read", "policies.list")
def list_policy_snapshots(tenantLocator: str, query: schemas.ListQuery) -> schemas.PolicySnapshotListResponse:
    page = query.page()
    return schemas.PolicySnapshotListResponse.of(
        service.policy_snapshots(request_context(), page), schemas.PolicySnapshotResponse.of
    )


# --- contacts ------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/policies/{locator}/contacts", methods=["GET"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["policy"]])
def list_policy_contacts(tenantLocator: str, locator: str) -> list[schemas.ContactRole]:
    return service.contacts(request_context(), locator)


@bp.route("/policy/{tenantLocator}/policies/{locator}/contacts", methods=["POST"])
@endpoint(
    "policies.write",
    errors=[codes.CONTACT_EXISTS["policy"], codes.INVALID_REFERENCE["policy"], codes.NOT_FOUND["policy"]],
)
def add_policy_contact(tenantLocator: str, locator: str, body: schemas.ContactRole) -> schemas.PolicyResponse:
    return _policy(service.add_contact(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/policies/{locator}/contacts/{contactLocator}", methods=["PATCH"])
@endpoint(
    "policies.write", errors=[codes.INVALID_REFERENCE["policy"], codes.NOT_FOUND["contact"], codes.NOT_FOUND["policy"]]
)
def update_policy_contact(
    tenantLocator: str, locator: str, contactLocator: str, body: schemas.ContactAssociationUpdateRequest
) -> schemas.PolicyResponse:
    return _policy(
        service.update_contact(
            request_context(), locator, contactLocator, add_roles=body.addRoles, remove_roles=body.removeRoles
        )
    )


@bp.route("/policy/{tenantLocator}/policies/{locator}/contacts/{contactLocator}", methods=["DELETE"])
@endpoint("policies.write", errors=[codes.NOT_FOUND["contact"], codes.NOT_FOUND["policy"]])
def delete_policy_contact(tenantLocator: str, locator: str, contactLocator: str) -> schemas.PolicyResponse:
    return _policy(service.delete_contact(request_context(), locator, contactLocator))


# --- terms ---------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/terms/{locator}", methods=["GET"])
@endpoint("terms.read", errors=[codes.NOT_FOUND["term"]])
def fetch_term(tenantLocator: str, locator: str) -> schemas.TermResponse:
    return schemas.TermResponse.of(service.get_term(request_context(), locator))


@bp.route("/policy/{tenantLocator}/policies/{locator}/terms/list", methods=["GET"])
@endpoint("policies.read", "policies.list", errors=[codes.NOT_FOUND["policy"]])
def list_policy_terms(tenantLocator: str, locator: str, query: schemas.ListQuery) -> schemas.TermListResponse:
    page = query.page()
    return schemas.TermListResponse.of(service.terms(request_context(), locator, page), schemas.TermResponse.of)


# --- an account's policies -----------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/accounts/{locator}/policies/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list", errors=[codes.NOT_FOUND["account"]])
def list_account_policies(
    tenantLocator: str, locator: str, query: schemas.AccountPoliciesQuery
) -> schemas.PolicyListResponse:
    ctx = request_context()
    page = service.policies_of_account(ctx, locator, query.page())
    return schemas.PolicyListResponse.of(
        page, lambda policy: schemas.PolicyResponse.of(policy, ctx.now, include_static=query.includeStaticData)
    )


@bp.route("/policy/{tenantLocator}/accounts/{locator}/policies/snapshot/list", methods=["GET"])
@endpoint("accounts.read", "accounts.list", errors=[codes.NOT_FOUND["account"]])
def list_account_policy_snapshots(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.PolicySnapshotListResponse:
    page = query.page()
    return schemas.PolicySnapshotListResponse.of(
        service.policy_snapshots_of_account(request_context(), locator, page), schemas.PolicySnapshotResponse.of
    )
