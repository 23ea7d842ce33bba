"""Policy transactions (spec part 2, "Policy transactions"; OpenAPI definition for the shapes).

Creating a transaction is group `policies` (`policies.write`); reading and advancing one is group
`transactions`, where any one of `transactions.write` and the fine-grained action the definition pairs
it with suffices (`transactions.price`, `transactions.elements-add`, ...). Every path below a
transaction names it `{locator}`, below a policy the policy `{locator}` (API Gateway refuses sibling
path variables of different names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chalice import Blueprint

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.http.endpoint import endpoint
from chalicelib.http.lazy import lazy_modules
from chalicelib.http.request import request_context

if TYPE_CHECKING:
    from chalicelib.policies.models import Segment, Transaction
    from chalicelib.transactions import schemas, service
    from chalicelib.transactions.models import Instruction
else:
    schemas, service = lazy_modules("chalicelib.transactions", "schemas", "service")

bp = Blueprint(__name__)

CREATING = [
    codes.INVALID_ELEMENT["transaction"],
    codes.NOT_FOUND["policy"],
    codes.TRANSACTION_EFFECTIVE_TIME_OUTSIDE_TERMS,
    codes.TRANSACTION_EFFECTIVE_TIME_REQUIRED,
    codes.TRANSACTION_INVALID_BASE,
    codes.TRANSACTION_INVALID_INSTRUCTION,
    codes.TRANSACTION_NO_COVERAGE,
    codes.TRANSACTION_POLICY_CANCELLED,
    codes.TRANSACTION_POLICY_END_BEFORE_EFFECTIVE_TIME,
    codes.TRANSACTION_POLICY_END_NOT_CHANGEABLE,
    codes.TRANSACTION_POLICY_NOT_CANCELLED,
    codes.TRANSACTION_REINSTATEMENT_BEFORE_CANCELLATION,
    codes.TRANSACTION_RENEWAL_EFFECTIVE_TIME,
    codes.TRANSACTION_STALE_BASE,
    codes.TRANSACTION_UNKNOWN_TYPE,
    codes.TRANSACTION_HELD,
]
"""What a request that creates a transaction, or previews one, may be refused with."""


def _created(
    locator: str,
    instructions: list[Instruction],
    base: schemas.BaseQuery,
    *,
    route: str | None = None,
    transaction_type: str | None = None,
) -> schemas.PolicyTransactionResponse:
    created = service.create_transaction(
        request_context(),
        locator,
        instructions,
        route=route,
        transaction_type=transaction_type,
        base_locator=base.baseLocator,
    )
    return schemas.PolicyTransactionResponse.of(created)


def _segments(segments: list[Segment]) -> list[schemas.SegmentResponse]:
    return [schemas.SegmentResponse.of(segment) for segment in segments]


@bp.route("/policy/{tenantLocator}/transactions/{locator}", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"]])
def fetch_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(*service.transaction_with_parts(request_context(), locator))


# --- creating --------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/policies/{locator}/change", methods=["PATCH"])
@endpoint("policies.write", idempotent=True, creates="transaction", replay=fetch_transaction, errors=CREATING)
def change_policy(
    tenantLocator: str, locator: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return _created(locator, body.root, query, route="change")


@bp.route("/policy/{tenantLocator}/policies/{locator}/renew", methods=["PATCH"])
@endpoint("policies.write", idempotent=True, creates="transaction", replay=fetch_transaction, errors=CREATING)
def renew_policy(
    tenantLocator: str, locator: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return _created(locator, body.root, query, route="renew")


@bp.route("/policy/{tenantLocator}/policies/{locator}/cancel", methods=["PATCH"])
@endpoint("policies.write", idempotent=True, creates="transaction", replay=fetch_transaction, errors=CREATING)
def cancel_policy(
    tenantLocator: str, locator: str, body: schemas.CancelInstruction, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return _created(locator, [body.root], query, route="cancel")


@bp.route("/policy/{tenantLocator}/policies/{locator}/reinstate", methods=["PATCH"])
@endpoint("policies.write", idempotent=True, creates="transaction", replay=fetch_transaction, errors=CREATING)
def reinstate_policy(
    tenantLocator: str, locator: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return _created(locator, body.root, query, route="reinstate")


@bp.route("/policy/{tenantLocator}/policies/{locator}/reversal", methods=["PATCH"])
@endpoint(
    "policies.write",
    idempotent=True,
    creates="transaction",
    replay=fetch_transaction,
    errors=[
        codes.NOT_FOUND["policy"],
        codes.TRANSACTION_INVALID_REVERSAL,
        codes.TRANSACTION_ISSUANCE_NOT_REVERSIBLE,
        codes.TRANSACTION_STALE_BASE,
        codes.TRANSACTION_HELD,
    ],
)
def reverse_policy_change(
    tenantLocator: str, locator: str, body: schemas.ReversalRequest
) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.create_reversal(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/policies/{locator}/{transactionType}", methods=["PATCH"])
@endpoint("policies.write", idempotent=True, creates="transaction", replay=fetch_transaction, errors=CREATING)
def create_policy_transaction(
    tenantLocator: str, locator: str, transactionType: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return _created(locator, body.root, query, transaction_type=transactionType)


def _preview(
    locator: str, transaction_type: str, target: str, instructions: schemas.Instructions, base: schemas.BaseQuery
) -> Transaction:
    return service.preview(
        request_context(), locator, transaction_type, instructions.root, target, base_locator=base.baseLocator
    )


@bp.route("/policy/{tenantLocator}/policies/{locator}/{transactionType}/validatePreview", methods=["PATCH"])
@endpoint("policies.read", errors=CREATING)
def preview_transaction_validation(
    tenantLocator: str, locator: str, transactionType: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(_preview(locator, transactionType, "validate", body, query))


@bp.route("/policy/{tenantLocator}/policies/{locator}/{transactionType}/pricePreview", methods=["PATCH"])
@endpoint("policies.read", errors=CREATING)
def preview_transaction_price(
    tenantLocator: str, locator: str, transactionType: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.TransactionPriceResponse:
    return schemas.TransactionPriceResponse.of(_preview(locator, transactionType, "price", body, query))


@bp.route("/policy/{tenantLocator}/policies/{locator}/{transactionType}/underwritePreview", methods=["PATCH"])
@endpoint("policies.read", errors=CREATING)
def preview_transaction_underwriting(
    tenantLocator: str, locator: str, transactionType: str, body: schemas.Instructions, query: schemas.BaseQuery
) -> schemas.TransactionUnderwritingResponse:
    return schemas.TransactionUnderwritingResponse.of(_preview(locator, transactionType, "underwrite", body, query))


@bp.route("/policy/{tenantLocator}/policies/{locator}/branches", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def fetch_policy_branches(tenantLocator: str, locator: str) -> schemas.BranchesResponse:
    return schemas.BranchesResponse.of(service.branches(request_context(), locator))


# --- reading ---------------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/transactions/{locator}/affectedTransactions", methods=["GET"])
@endpoint("transactions.read", errors=[codes.INVALID_STATE["transaction"], codes.NOT_FOUND["transaction"]])
def fetch_affected_transactions(tenantLocator: str, locator: str) -> list[schemas.AffectedTransaction]:
    return service.affected(request_context(), locator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/affectedTransactions/list", methods=["GET"])
@endpoint("transactions.read", errors=[codes.INVALID_STATE["transaction"], codes.NOT_FOUND["transaction"]])
def list_affected_transactions(tenantLocator: str, locator: str) -> list[schemas.AffectedTransaction]:
    """Deprecated: the same answer as affectedTransactions."""
    return service.affected(request_context(), locator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements/constraints/evaluate", methods=["POST"])
@endpoint(
    "transactions.read",
    errors=[
        codes.INVALID_ELEMENT["transaction"],
        codes.INVALID_ELEMENT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.TRANSACTION_EFFECTIVE_TIME_REQUIRED,
    ],
)
def evaluate_transaction_constraints(
    tenantLocator: str, locator: str, body: schemas.ConstraintValuesRequest
) -> dict[str, dict[str, list[str]]]:
    return service.evaluate_constraints(request_context(), locator, body.root)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements/constraints/dependency", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"], codes.TRANSACTION_EFFECTIVE_TIME_REQUIRED])
def fetch_transaction_constraint_dependencies(tenantLocator: str, locator: str) -> dict[str, dict[str, Any]]:
    return service.constraint_dependencies(request_context(), locator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/segment", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["segment"], codes.NOT_FOUND["transaction"]])
def fetch_transaction_segment(tenantLocator: str, locator: str) -> schemas.SegmentResponse:
    return schemas.SegmentResponse.of(service.segment(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/segments/{segmentLocator}", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["segment"]])
def fetch_segment(tenantLocator: str, segmentLocator: str) -> schemas.SegmentResponse:
    return schemas.SegmentResponse.of(service.issued_segment(request_context(), segmentLocator))


@bp.route("/policy/{tenantLocator}/policies/{locator}/issuedTransactions/list", methods=["GET"])
@endpoint("policies.read", errors=[codes.NOT_FOUND["policy"]])
def list_issued_transactions(
    tenantLocator: str, locator: str, query: schemas.ListQuery
) -> schemas.PolicyTransactionListResponse:
    page = query.page()
    return schemas.PolicyTransactionListResponse.of(
        service.issued_transactions(request_context(), locator, page), schemas.PolicyTransactionResponse.of
    )


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements/changes", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"]])
def fetch_transaction_changes(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.get_transaction(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/preferences", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"]])
def fetch_transaction_preferences(tenantLocator: str, locator: str) -> schemas.PreferencesResponse:
    return schemas.PreferencesResponse.of(service.get_transaction(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/segments/list", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"]])
def list_transaction_segments(tenantLocator: str, locator: str) -> list[schemas.SegmentResponse]:
    return _segments(service.segments(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/segments/{segmentLocator}", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["segment"], codes.NOT_FOUND["transaction"]])
def fetch_transaction_segment_by_locator(
    tenantLocator: str, locator: str, segmentLocator: str
) -> schemas.SegmentResponse:
    return schemas.SegmentResponse.of(service.segment(request_context(), locator, segmentLocator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/price", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"], codes.NOT_PRICED["transaction"]])
def fetch_transaction_price(tenantLocator: str, locator: str) -> schemas.TransactionPriceResponse:
    return schemas.TransactionPriceResponse.of(*service.priced_transaction(request_context(), locator))


# --- editing a draft -------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/transactions/{locator}/changeInstructions", methods=["PUT"])
@endpoint(
    "transactions.write",
    "transactions.change-instruction-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_change_instruction(
    tenantLocator: str, locator: str, body: schemas.OneInstruction
) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.add_instruction(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/changeInstructions/{instructionLocator}", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.change-instruction-update",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def update_transaction_change_instruction(
    tenantLocator: str, locator: str, instructionLocator: str, body: schemas.OneInstruction
) -> schemas.PolicyTransactionResponse:
    updated = service.update_instruction(request_context(), locator, instructionLocator, body.root)
    return schemas.PolicyTransactionResponse.of(updated)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/changeInstructions/{instructionLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.change-instruction-delete",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["changeInstruction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def delete_transaction_change_instruction(
    tenantLocator: str, locator: str, instructionLocator: str
) -> schemas.PolicyTransactionResponse:
    deleted = service.delete_instruction(request_context(), locator, instructionLocator)
    return schemas.PolicyTransactionResponse.of(deleted)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements", methods=["PUT"])
@endpoint(
    "transactions.write",
    "transactions.elements-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_elements(
    tenantLocator: str, locator: str, body: schemas.ElementCreateRequests
) -> list[schemas.SegmentResponse]:
    return _segments(service.add_elements(request_context(), locator, body.root))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.elements-update",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def update_transaction_elements(
    tenantLocator: str, locator: str, body: schemas.ElementUpdateRequest
) -> list[schemas.SegmentResponse]:
    return _segments(service.update_elements(request_context(), locator, body))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/elements", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.elements-delete",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_DRAFT["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def remove_transaction_elements(
    tenantLocator: str, locator: str, body: schemas.ElementLocators
) -> list[schemas.SegmentResponse]:
    return _segments(service.remove_elements(request_context(), locator, body.root))


# --- the lifecycle ---------------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/transactions/{locator}/initialize", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.initialize",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def initialize_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.initialize(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/precommit", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.precommit",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def precommit_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.precommit(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/validate", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.validate",
    errors=[
        codes.EXPIRED["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def validate_transaction(
    tenantLocator: str, locator: str, query: schemas.StatelessQuery
) -> schemas.PolicyTransactionResponse:
    validated = service.validate(request_context(), locator, stateless=query.stateless)
    return schemas.PolicyTransactionResponse.of(validated)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/price", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.price",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def price_transaction(
    tenantLocator: str, locator: str, query: schemas.StatelessQuery
) -> schemas.TransactionPriceResponse:
    return schemas.TransactionPriceResponse.of(service.price(request_context(), locator, stateless=query.stateless))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwrite", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.underwrite",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def underwrite_transaction(
    tenantLocator: str, locator: str, query: schemas.StatelessQuery
) -> schemas.TransactionUnderwritingResponse:
    underwritten = service.underwrite(request_context(), locator, stateless=query.stateless)
    return schemas.TransactionUnderwritingResponse.of(underwritten)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/accept", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.accept",
    idempotent=True,
    replay=fetch_transaction,
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def accept_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.accept(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/issue", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.issue",
    idempotent=True,
    replay=fetch_transaction,
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.TRANSACTION_AGGREGATE_TOO_LARGE,
        codes.TRANSACTION_STALE_BASE,
        codes.TRANSACTION_HELD,
    ],
)
def issue_transaction(tenantLocator: str, locator: str, query: schemas.IssueQuery) -> schemas.PolicyTransactionResponse:
    issued = service.issue(request_context(), locator, auto_rebase=query.autoRebase)
    return schemas.PolicyTransactionResponse.of(issued)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/reset", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.reset",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def reset_transaction(
    tenantLocator: str, locator: str, body: schemas.ResetRequest | None, query: schemas.ResetQuery
) -> schemas.PolicyTransactionResponse:
    reset = service.reset(request_context(), locator, body or schemas.ResetRequest(), to_draft=query.resetToDraft)
    return schemas.PolicyTransactionResponse.of(reset)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/refuse", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.refuse",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def refuse_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.refuse(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/discard", methods=["PATCH"])
@endpoint(
    "transactions.write",
    "transactions.discard",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def discard_transaction(tenantLocator: str, locator: str) -> schemas.PolicyTransactionResponse:
    return schemas.PolicyTransactionResponse.of(service.discard(request_context(), locator))


# --- underwriting flags ----------------------------------------------------------------------------


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags", methods=["GET"])
@endpoint("transactions.read", errors=[codes.NOT_FOUND["transaction"]])
def fetch_transaction_underwriting_flags(
    tenantLocator: str, locator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return schemas.TransactionUnderwritingFlagsResponse.of(service.get_transaction(request_context(), locator))


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags", methods=["PATCH"])
@endpoint(
    "transactions.write",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def update_transaction_underwriting_flags(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagsUpdateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    changed = service.change_flags(request_context(), locator, body.addFlags, body.clearFlags)
    return schemas.TransactionUnderwritingFlagsResponse.of(changed)


def _add_flag(
    locator: str, level: str, flag: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    """The level is the path's; a body naming another level is a 400."""
    if flag.level not in (None, level):
        raise codes.REQUEST_INVALID(
            f"This endpoint adds {level} flags", field_errors=[FieldError("level", f"must be {level}")]
        )
    added = flag.model_copy(update={"level": level})
    return schemas.TransactionUnderwritingFlagsResponse.of(
        service.change_flags(request_context(), locator, [added], [])
    )


def _clear_flag(locator: str, level: str, flag_locator: str) -> schemas.TransactionUnderwritingFlagsResponse:
    cleared = service.clear_flag(request_context(), locator, level, flag_locator)
    return schemas.TransactionUnderwritingFlagsResponse.of(cleared)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/approve", methods=["POST"])
@endpoint(
    "transactions.write",
    "transactions.approve-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_approve_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _add_flag(locator, "approve", body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/block", methods=["POST"])
@endpoint(
    "transactions.write",
    "transactions.block-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_block_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _add_flag(locator, "block", body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/decline", methods=["POST"])
@endpoint(
    "transactions.write",
    "transactions.decline-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_decline_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _add_flag(locator, "decline", body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/reject", methods=["POST"])
@endpoint(
    "transactions.write",
    "transactions.reject-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_reject_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _add_flag(locator, "reject", body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/info", methods=["POST"])
@endpoint(
    "transactions.write",
    "transactions.info-add",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
    ],
)
def add_transaction_info_flag(
    tenantLocator: str, locator: str, body: schemas.UnderwritingFlagCreateRequest
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _add_flag(locator, "info", body)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/approve/{flagLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.approve-clear",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def clear_transaction_approve_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _clear_flag(locator, "approve", flagLocator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/block/{flagLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.block-clear",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def clear_transaction_block_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _clear_flag(locator, "block", flagLocator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/decline/{flagLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.decline-clear",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def clear_transaction_decline_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _clear_flag(locator, "decline", flagLocator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/reject/{flagLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.reject-clear",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def clear_transaction_reject_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _clear_flag(locator, "reject", flagLocator)


@bp.route("/policy/{tenantLocator}/transactions/{locator}/underwritingFlags/info/{flagLocator}", methods=["DELETE"])
@endpoint(
    "transactions.write",
    "transactions.info-clear",
    errors=[
        codes.INVALID_STATE["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["transaction"],
        codes.NOT_FOUND["underwritingFlag"],
    ],
)
def clear_transaction_info_flag(
    tenantLocator: str, locator: str, flagLocator: str
) -> schemas.TransactionUnderwritingFlagsResponse:
    return _clear_flag(locator, "info", flagLocator)
