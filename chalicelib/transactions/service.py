"""Policy transactions: created on an issued policy, edited as drafts, advanced to issue.

Creating (`create_transaction`). A transaction of a category (`/change`, `/renew`, `/cancel`,
`/reinstate`: the tenant's first configured transaction type of it, else the category's name) or of a
named configured type, based on the policy's latest issued transaction or on `baseLocator` (an
unissued transaction of the policy: a chain; an issued one that is no longer the latest is a stale
base, 409 `transaction.stale_base`). Its change instructions are checked by working out what they do
(timeline.py: the effective time within the terms, a reinstatement of a cancelled policy only, a
renewal of one that is not, static locators the policy has): a 4xx stores nothing. A draft keeps its
instructions and the span of the segment it will make; it is editable (instructions, elements) until
it is initialized.

Advancing (lifecycle.py): initialize (the instructions applied: the new segment's tree), validate,
price, underwrite, accept, issue, each running the steps before it that the transaction lacks. A step
that fails answers 200 with the transaction as it was and the `validationResult` saying why, storing
nothing; underwriting that does not pass stops in `underwrittenBlocked`, `declined` or `rejected`.
Pricing rates the new segment through the plugin (a cancellation is not rated) and adds the
adjustments (deltas.settle) that bring every charge of the policy to what the coverage held after
this transaction earns: the reversal charges of the coverage it replaces, or for a reinstatement at
the cancellation time the negation of the cancellation's. `?stateless=true` stores nothing; the
previews do the same for a transaction that does not exist. Issuing (execution.py, issuing.py) writes
the transaction, its segment, terms, the policy root and the other branches invalidated in one
TransactWriteItems; out of sequence, inside an aggregate with the later transactions reversed and
reapplied (an aggregate too large for one write goes in two stages, policies.service.issue_transaction:
its new records first, invisible until the final write commits them; past 30 or so later
transactions, 409 `transaction.aggregate_too_large`). A reversal transaction (`create_reversal`)
undoes issued transactions the same way. Events are `policy.{category}.{action}` (`update` for
draft edits, initialize and precommit) and `policy.status.update` when an issue changes the policy's
statuses.

Every change bumps the transaction's `version` (a lost race answers 409) and records its event in the
same DynamoDB transaction (records.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import partial
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account
from chalicelib.configuration import service as configuration
from chalicelib.core import codes, durations
from chalicelib.core.clock import utc
from chalicelib.core.context import CallContext
from chalicelib.core.errors import FieldError, NotFound
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.plugins.models import PluginFailure
from chalicelib.policies import service as policies
from chalicelib.policies.models import (
    LIVE_UNISSUED,
    IssuedStack,
    Policy,
    Segment,
    Term,
    Transaction,
    TransactionCategory,
    TransactionState,
)
from chalicelib.priceable import elements, evaluation, underwriting
from chalicelib.priceable.evaluation import Evaluation
from chalicelib.priceable.models import Charge, Element, ElementChanges, ElementInput, FlagInput, ResetOptions
from chalicelib.priceable.runner import ACCEPT, ISSUE, PRICE, UNDERWRITE, VALIDATE, Runner, StepFailed
from chalicelib.priceable.subject import Subject, account_view
from chalicelib.runtime import document_jobs, wiring
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.transactions import changes, execution, issuing, records, sequence, timeline
from chalicelib.transactions.execution import TransactionEvaluation
from chalicelib.transactions.lifecycle import INITIALIZE, LIFECYCLE
from chalicelib.transactions.models import (
    ENTITY,
    ERRORS,
    AddInstruction,
    AffectedTransaction,
    DeleteInstruction,
    Instruction,
    MigrateInstruction,
    ModifyInstruction,
    ReversalRequest,
    instruction_of,
    stored,
)
from chalicelib.transactions.records import Found
from chalicelib.transactions.timeline import CREATED, Plan, Planner

CATEGORY_OF_ROUTE = {"change": "change", "renew": "renewal", "cancel": "cancellation", "reinstate": "reinstatement"}
AccountReader = Callable[[str], Account]
"""An account by its locator (404 `account.not_found` when there is none)."""
PRICED = frozenset(
    {"priced", "underwritten", "accepted", "issued", "underwrittenBlocked", "declined", "rejected", "reversed"}
)

# --- reading ---------------------------------------------------------------------------------------


def get_transaction(ctx: CallContext, locator: str) -> Transaction:
    """The transaction, read by key (its policy's history is not read)."""
    return policies.get_transaction(ctx, locator)


def transaction_with_parts(ctx: CallContext, locator: str) -> tuple[Transaction, list[Transaction]]:
    """The transaction and, for an aggregate, its parts in the order they apply (read by key)."""
    transaction = policies.get_transaction(ctx, locator)
    wanted = transaction.aggregatedTransactionLocators
    by_locator = policies.transactions_of_policy(ctx, transaction.policyLocator, wanted) if wanted else {}
    return transaction, [by_locator[part] for part in wanted if part in by_locator]


def affected(ctx: CallContext, locator: str) -> list[AffectedTransaction]:
    """What issuing the transaction now would reverse (latest first) and invalidate."""
    found = records.find(ctx, locator)
    transaction = found.transaction
    LIFECYCLE.check(transaction.transactionState, "be issued")
    entries = [timeline.entry_of(t) for t in timeline.local_stack(found.stack)]
    planned = (
        sequence.reversal_plan(entries, transaction.reversedTransactionLocators)
        if transaction.transactionCategory == TransactionCategory.REVERSAL
        else sequence.plan(entries, timeline.entry_of(transaction))
    )
    doomed = [t.locator for t in issuing.invalidated(found.stack, transaction, ctx.now)]
    return [
        AffectedTransaction(locator=each.locator, action=each.action) for each in sequence.affected(planned, doomed)
    ]


def priced_transaction(ctx: CallContext, locator: str) -> tuple[Transaction, list[Transaction]]:
    """The transaction with its stored price and, for an aggregate (or a reversal that reapplied later
    transactions), its parts with theirs; 409 `transaction.not_priced` before it was priced."""
    transaction, parts = transaction_with_parts(ctx, locator)
    if transaction.transactionState not in PRICED:
        raise codes.NOT_PRICED["transaction"](f"Transaction {locator} has not been priced")
    return transaction, parts


def segments(ctx: CallContext, locator: str) -> list[Segment]:
    """The segments the transaction made, or for one not issued yet the segment it would make. An issued
    reversal or aggregate makes none: it answers the segment it left in force (inForceSegmentLocator); an
    unissued reversal none. An issued transaction's are read by key; the one an unissued transaction would
    make is worked out on its policy's head where that suffices."""
    transaction = policies.get_transaction(ctx, locator)
    if transaction.transactionState in (TransactionState.ISSUED, TransactionState.REVERSED):
        shown = _shown_segments(transaction)
        found = policies.segments_of_policy(ctx, transaction.policyLocator, shown) if shown else {}
        return [found[each] for each in shown if each in found]
    return _segments(ctx, records.find(ctx, locator, head=True))


def segment(ctx: CallContext, locator: str, segment_locator: str | None = None) -> Segment:
    """One segment of the transaction (the last one it makes, by default); 404 `segment.not_found`."""
    made = segments(ctx, locator)
    chosen = (
        made[-1] if segment_locator is None and made else next((s for s in made if s.locator == segment_locator), None)
    )
    if chosen is None:
        raise codes.not_found("segment", segment_locator or f"of transaction {locator}")
    return chosen


def issued_segment(ctx: CallContext, segment_locator: str) -> Segment:
    """An issued segment by its locator."""
    return policies.get_segment(ctx, segment_locator)


def issued_transactions(ctx: CallContext, policy_locator: str, page: PageRequest) -> Page[Transaction]:
    """The policy's local stack of issued transactions (none reversed or reapplied), in issuing order."""
    return policies.issued_transactions(ctx, policy_locator, page)


def branches(ctx: CallContext, policy_locator: str) -> dict[str, list[Transaction]]:
    """Each branch of the policy's unissued transactions, by its head: the head first, down to the one
    based on an issued transaction."""
    stack = policies.issued_stack(ctx, policy_locator)
    live = {t.locator: t for t in stack.transactions if t.transactionState in LIVE_UNISSUED}
    bases = {t.baseTransactionLocator for t in live.values()}
    found: dict[str, list[Transaction]] = {}
    for head in (t for t in live.values() if t.locator not in bases):
        branch: list[Transaction] = []
        current: Transaction | None = head
        while current is not None:
            branch.append(current)
            current = live.get(current.baseTransactionLocator or "")
        found[head.locator] = branch
    return found


# --- creating and editing drafts -------------------------------------------------------------------


def create_transaction(
    ctx: CallContext,
    policy_locator: str,
    instructions: list[Instruction],
    *,
    route: str | None = None,
    transaction_type: str | None = None,
    base_locator: str | None = None,
    term_duration: Decimal | None = None,
    stack: IssuedStack | None = None,
) -> Transaction:
    """A draft transaction of the category a `route` names (change, renew, cancel, reinstate) or of a
    configured `transaction_type`; a renewal's new term lasts `term_duration` (the policy's durationBasis
    units; an auto-renewal plan's newTermDuration), else the policy's term. A caller that has just read
    the policy consistently (policies.service.issued_stack) passes it as `stack`, not read again."""
    stack, draft = _new_draft(
        ctx, policy_locator, instructions, route, transaction_type, base_locator, term_duration, stack
    )
    return records.add(ctx, stack, draft)


def new_draft(
    ctx: CallContext,
    policy_locator: str,
    instructions: list[Instruction],
    *,
    route: str | None = None,
    transaction_type: str | None = None,
    term_duration: Decimal | None = None,
    stack: IssuedStack | None = None,
) -> Found:
    """The draft `create_transaction` would store, not stored (records.unstored): the first call that advances
    it (`price`, `accept` or `issue` with `unstored=True`) writes it new in the write of its own step."""
    stack, draft = _new_draft(ctx, policy_locator, instructions, route, transaction_type, None, term_duration, stack)
    return records.unstored(stack, draft)


ADVANCE_STEPS = {
    TransactionState.VALIDATED: VALIDATE,
    TransactionState.PRICED: PRICE,
    TransactionState.UNDERWRITTEN: UNDERWRITE,
    TransactionState.ACCEPTED: ACCEPT,
}
"""The step `create_and_advance` runs a new draft to for each state it may name (issued: `issue`)."""


def create_and_advance(
    ctx: CallContext,
    policy_locator: str,
    instructions: list[Instruction],
    target: TransactionState,
    *,
    route: str | None = None,
    transaction_type: str | None = None,
) -> tuple[Transaction, Transaction]:
    """`create_transaction`, then the draft advanced to `target` (validated to issued; any other state leaves
    it a draft) on the policy as the create's write left it (records.found_in), not read again: the draft
    and the transaction as advanced (a step that fails answers it with its validationResult)."""
    stack, draft = _new_draft(ctx, policy_locator, instructions, route, transaction_type, None)
    draft = records.add(ctx, stack, draft)
    found = records.found_in(stack, draft)
    if target == TransactionState.ISSUED:
        return draft, issue(ctx, draft.locator, found=found)
    step = ADVANCE_STEPS.get(target)
    return draft, (draft if step is None else _advance(ctx, draft.locator, step, found=found))


def preview(
    ctx: CallContext,
    policy_locator: str,
    transaction_type: str,
    instructions: list[Instruction],
    target: str,
    *,
    base_locator: str | None = None,
) -> Transaction:
    """The transaction `instructions` would make, advanced to `target` (validate, price or underwrite);
    nothing is stored. A step that fails answers the draft with its validationResult."""
    stack, draft = _new_draft(ctx, policy_locator, instructions, None, transaction_type, base_locator)
    found = Found(stack.model_copy(update={"transactions": [*stack.transactions, draft]}), draft)
    runner, _ = _runner(ctx, found)
    try:
        return runner.run(LIFECYCLE.steps_to(draft.transactionState, target))
    except StepFailed as stop:
        return draft.model_copy(update={"validationResult": stop.result})


def _new_draft(
    ctx: CallContext,
    policy_locator: str,
    instructions: list[Instruction],
    route: str | None,
    transaction_type: str | None,
    base_locator: str | None,
    term_duration: Decimal | None = None,
    stack: IssuedStack | None = None,
) -> tuple[IssuedStack, Transaction]:
    if stack is not None and stack.policy.locator != policy_locator:
        raise ValueError(f"the stack given is of policy {stack.policy.locator}, not {policy_locator}")
    if stack is None and base_locator is None:  # the head, where it holds all the draft is worked out from
        head = policies.head(ctx, policy_locator)
        if head is not None:
            draft = _unplanned(ctx, head, instructions, route, transaction_type, base_locator, term_duration)
            if timeline.head_suffices(head, draft, records.has_schedules(ctx, draft)):
                return head, _planned(ctx, head, draft)
    if stack is None:
        stack = policies.issued_stack(ctx, policy_locator)
    return stack, _planned(
        ctx, stack, _unplanned(ctx, stack, instructions, route, transaction_type, base_locator, term_duration)
    )


def _unplanned(
    ctx: CallContext,
    stack: IssuedStack,
    instructions: list[Instruction],
    route: str | None,
    transaction_type: str | None,
    base_locator: str | None,
    term_duration: Decimal | None,
) -> Transaction:
    """The draft before `_planned` works out its span (its effective time still its base's)."""
    model = configuration.model(ctx, stack.policy.configVersion, resolved=True)
    category, type_name = _kind(model, route, transaction_type)
    _check_not_held(stack.policy, category, type_name)
    base = _base(stack, base_locator)
    locator = new_locator()
    draft = Transaction(
        locator=locator,
        staticLocator=locator,
        policyLocator=stack.policy.locator,
        termLocator=base.termLocator,
        effectiveTime=base.effectiveTime,
        transactionState=TransactionState.DRAFT,
        transactionCategory=TransactionCategory(category),
        transactionType=type_name,
        preferences=stack.policy.preferences,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
        baseTransactionLocator=base.locator,
        changeInstructions=[stored(changes.with_static_locators(i, new_locator), new_locator()) for i in instructions],
        configVersion=stack.policy.configVersion,
        termDuration=term_duration if category == TransactionCategory.RENEWAL else None,
    )
    return draft


def _check_not_held(policy: Policy, category: str, transaction_type: str) -> None:
    """409 `transaction.held` when an active entity hold on the policy blocks the category or type."""
    for held in policy.entityHolds:
        if held.blocks_transaction(str(category), transaction_type):
            raise codes.TRANSACTION_HELD(
                f"Hold {held.holdLocator} on policy {policy.locator} blocks "
                f"{category} transactions ({transaction_type})"
            )


def create_reversal(ctx: CallContext, policy_locator: str, request: ReversalRequest) -> Transaction:
    """A draft `reversal` of `reverseTransactions` (issued transactions of the policy; the later ones it
    does not name are reapplied when it is issued), based on `baseLocator`, which must be the policy's
    latest issued transaction; `toTransaction` must be issued before every one it reverses."""
    stack = policies.issued_stack(ctx, policy_locator)
    _check_not_held(stack.policy, TransactionCategory.REVERSAL, TransactionCategory.REVERSAL.value)
    head = stack.policy.issuedTransactionLocator
    sequence.rebase(request.baseLocator, head, auto_rebase=False)
    entries = {entry.locator: entry for entry in map(timeline.entry_of, timeline.local_stack(stack))}
    planned = sequence.reversal_plan(list(entries.values()), request.reverseTransactions)
    earliest = planned.reversed[-1]
    target = entries.get(request.toTransaction)
    if target is None or target.order >= earliest.order:
        raise codes.TRANSACTION_INVALID_REVERSAL(
            f"{request.toTransaction} is not an issued transaction of the policy before the ones reversed",
            field_errors=[FieldError("toTransaction", "must be issued before every transaction reversed")],
        )
    first = next(t for t in stack.transactions if t.locator == earliest.locator)
    locator = new_locator()
    draft = Transaction(
        locator=locator,
        staticLocator=locator,
        policyLocator=stack.policy.locator,
        termLocator=first.termLocator,
        effectiveTime=first.effectiveTime,
        transactionState=TransactionState.DRAFT,
        transactionCategory=TransactionCategory.REVERSAL,
        transactionType=TransactionCategory.REVERSAL.value,
        preferences=stack.policy.preferences,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
        baseTransactionLocator=head,
        reversedTransactionLocators=list(dict.fromkeys(request.reverseTransactions)),
        configVersion=stack.policy.configVersion,
    )
    return records.add(ctx, stack, draft)


def add_instruction(ctx: CallContext, locator: str, instruction: Instruction) -> Transaction:
    found = _draft(ctx, locator)
    added = stored(changes.with_static_locators(instruction, new_locator), new_locator())
    return _save_draft(ctx, found, [*found.transaction.changeInstructions, added])


def update_instruction(
    ctx: CallContext, locator: str, instruction_locator: str, instruction: Instruction
) -> Transaction:
    found = _draft(ctx, locator)
    _instruction_position(found.transaction, instruction_locator)
    replaced = stored(changes.with_static_locators(instruction, new_locator), instruction_locator)
    return _save_draft(
        ctx,
        found,
        [replaced if i["locator"] == instruction_locator else i for i in found.transaction.changeInstructions],
    )


def delete_instruction(ctx: CallContext, locator: str, instruction_locator: str) -> Transaction:
    found = _draft(ctx, locator)
    _instruction_position(found.transaction, instruction_locator)
    return _save_draft(
        ctx, found, [i for i in found.transaction.changeInstructions if i["locator"] != instruction_locator]
    )


def add_elements(ctx: CallContext, locator: str, additions: list[ElementInput]) -> list[Segment]:
    """Adds an `add` instruction; answers the segment the draft would make."""
    found = _draft(ctx, locator)
    instruction = changes.with_static_locators(AddInstruction(action="add", elements=additions), new_locator)
    saved = _save_draft(ctx, found, [*found.transaction.changeInstructions, stored(instruction, new_locator())])
    return _segments(ctx, records.replaced(found, saved))


def update_elements(ctx: CallContext, locator: str, change: ElementChanges) -> list[Segment]:
    """Adds a `modify` instruction for the element named by its locator or static locator."""
    found = _draft(ctx, locator)
    static = changes.static_locator_of(_plan(ctx, found).tree, change.locator)
    if static is None:
        raise codes.INVALID_ELEMENT["transaction"](
            f"{change.locator} is not an element of the transaction",
            field_errors=[FieldError("locator", "is not an element of the transaction")],
        )
    instruction = ModifyInstruction(
        action="modify",
        staticLocator=static,
        setData=change.setData,
        removeData=change.removeData,
        setCoverageTerms=change.setCoverageTerms,
        removeCoverageTerms=change.removeCoverageTerms,
    )
    saved = _save_draft(ctx, found, [*found.transaction.changeInstructions, stored(instruction, new_locator())])
    return _segments(ctx, records.replaced(found, saved))


def remove_elements(ctx: CallContext, locator: str, locators: list[str]) -> list[Segment]:
    """Adds a `delete` instruction for the elements named by their locators or static locators."""
    found = _draft(ctx, locator)
    tree = _plan(ctx, found).tree
    statics = [changes.static_locator_of(tree, each) for each in locators]
    problems = [
        FieldError(f"body[{i}]", f"{each} is not an element of the transaction")
        for i, (each, static) in enumerate(zip(locators, statics))
        if static is None
    ]
    if problems or not locators:
        raise codes.INVALID_ELEMENT["transaction"](
            "Cannot remove these elements", field_errors=problems or [FieldError("body", "names no element")]
        )
    instruction = DeleteInstruction(action="delete", staticElementLocators=[s for s in statics if s])
    saved = _save_draft(ctx, found, [*found.transaction.changeInstructions, stored(instruction, new_locator())])
    return _segments(ctx, records.replaced(found, saved))


def _draft(ctx: CallContext, locator: str) -> Found:
    found = records.find(ctx, locator, head=True)
    LIFECYCLE.check_editable(found.transaction.transactionState)
    return found


def _save_draft(ctx: CallContext, found: Found, instructions: list[dict[str, Any]]) -> Transaction:
    if found.transaction.transactionCategory == TransactionCategory.REVERSAL:
        raise codes.TRANSACTION_INVALID_INSTRUCTION("A reversal takes no change instructions")
    changed = found.transaction.model_copy(update={"changeInstructions": instructions})
    return records.save(ctx, found.stack, _planned(ctx, found.stack, changed), ["update"])


def _instruction_position(transaction: Transaction, instruction_locator: str) -> int:
    position = next(
        (i for i, item in enumerate(transaction.changeInstructions) if item["locator"] == instruction_locator), None
    )
    if position is None:
        raise codes.not_found("changeInstruction", instruction_locator)
    return position


def _kind(model: dict[str, Any], route: str | None, transaction_type: str | None) -> tuple[str, str]:
    """(category, transaction type) of a create request."""
    configured = {
        name: str(definition.get("category"))
        for name, definition in (model.get("transactionTypes") or {}).items()
        if isinstance(definition, dict)
    }
    if route is not None:
        of_route = CATEGORY_OF_ROUTE[route]
        return of_route, next((name for name, of in configured.items() if of == of_route), of_route)
    name = transaction_type or ""
    category = configured.get(name) or (name if name in CREATED and name not in configured else None)
    if category is None or category not in CREATED:
        raise codes.TRANSACTION_UNKNOWN_TYPE(
            f"{name[:200]} is not a transaction type of the configuration",
            field_errors=[
                FieldError(
                    "transactionType",
                    "is not a configured transaction type of category change, renewal, cancellation or reinstatement",
                )
            ],
        )
    return str(category), name


def _base(stack: IssuedStack, base_locator: str | None) -> Transaction:
    """What a new transaction is based on: the latest issued transaction, or the unissued one named."""
    head = stack.policy.issuedTransactionLocator
    chosen = base_locator or head
    base = next((t for t in stack.transactions if t.locator == chosen), None)
    if base is None:
        raise codes.TRANSACTION_INVALID_BASE(
            f"{chosen[:200]} is not a transaction of the policy",
            field_errors=[FieldError("baseLocator", "is not a transaction of the policy")],
        )
    if base.transactionState == TransactionState.ISSUED and base.locator != head:
        raise codes.TRANSACTION_STALE_BASE(
            f"Transaction {base.locator} is no longer the policy's latest ({head} is): base the "
            f"transaction on the latest"
        )
    if base.transactionState != TransactionState.ISSUED and base.transactionState not in LIVE_UNISSUED:
        raise codes.TRANSACTION_STALE_BASE(
            f"Transaction {base.locator} is {base.transactionState}: nothing can be based on it"
        )
    return base


def _planner(ctx: CallContext, stack: IssuedStack, transaction: Transaction) -> Planner:
    return Planner(stack, evaluation.catalog(records.model_of(ctx, transaction)), new_locator)


def _plan(ctx: CallContext, found: Found) -> Plan:
    return _planner(ctx, found.stack, found.transaction).plan(found.transaction)


def _planned(ctx: CallContext, stack: IssuedStack, transaction: Transaction) -> Transaction:
    """The transaction with what its instructions say worked out: effective time, term, the span of
    its segment (keeping the segment locator it reserved), expiration, preferences, configuration."""
    instructions = [instruction_of(each) for each in transaction.changeInstructions]
    version = _config_version(ctx, stack, instructions)
    transaction = transaction.model_copy(update={"configVersion": version})
    plan = _planner(ctx, stack, transaction).plan(transaction)
    params = changes.params_of(instructions)
    reserved = transaction.segments[-1].locator if transaction.segments else new_locator()
    term = _term_locator(stack, transaction, plan)
    update: dict[str, Any] = {
        "effectiveTime": plan.effect.start,
        "termLocator": term,
        "segments": [plan.summary(reserved)],
        "newPolicyEndTime": utc(params.newPolicyEndTime) if params and params.newPolicyEndTime else None,
        "expirationTime": utc(params.expirationTime) if params and params.expirationTime else None,
        "preferences": params.preferences.model_dump(exclude_none=True)
        if params and params.preferences
        else stack.policy.preferences,
    }
    return transaction.model_copy(update=update)


def _term_locator(stack: IssuedStack, transaction: Transaction, plan: Plan) -> str:
    """The term the transaction's segment lies in; a renewal reserves the locator of the term it adds."""
    existing = next((t.locator for t in stack.terms if t.number == plan.term_number), None)
    if existing is not None:
        return existing
    if transaction.transactionCategory == TransactionCategory.RENEWAL and transaction.termLocator not in {
        t.locator for t in stack.terms
    }:
        return transaction.termLocator
    return new_locator()


def _config_version(ctx: CallContext, stack: IssuedStack, instructions: list[Instruction]) -> str:
    """The policy's configuration version, or the one a `migrate` instruction names (its default: the
    current one); 400 for a version the tenant has not deployed."""
    migrate = next((i for i in instructions if isinstance(i, MigrateInstruction)), None)
    if migrate is None:
        return stack.policy.configVersion
    if migrate.configVersionLocator is None:
        return configuration.current_model(ctx)[0]
    try:
        configuration.model(ctx, migrate.configVersionLocator)
    except NotFound:
        raise codes.TRANSACTION_INVALID_INSTRUCTION(
            f"{migrate.configVersionLocator} is not a deployed configuration version",
            field_errors=[FieldError("configVersionLocator", "is not a deployed configuration version")],
        ) from None
    return migrate.configVersionLocator


def _shown_segments(transaction: Transaction) -> list[str]:
    """The segments an issued (or reversed) transaction shows: those it made, else the one it left in force."""
    shown = [s.locator for s in transaction.segments]
    if not shown and transaction.inForceSegmentLocator is not None:
        shown = [transaction.inForceSegmentLocator]
    return shown


def _segments(ctx: CallContext, found: Found) -> list[Segment]:
    transaction = found.transaction
    if transaction.transactionState in (TransactionState.ISSUED, TransactionState.REVERSED):
        shown = _shown_segments(transaction)
        return [found.stack.segments[each] for each in shown if each in found.stack.segments]
    if transaction.transactionCategory == TransactionCategory.REVERSAL:
        return []
    tree = transaction.element or _plan(ctx, found).tree
    policy = found.policy
    return [
        Segment(
            locator=s.locator,
            transactionLocator=transaction.locator,
            policyLocator=policy.locator,
            termLocator=transaction.termLocator,
            segmentType=s.segmentType,
            startTime=s.startTime,
            endTime=s.endTime,
            duration=durations.duration(s.startTime, s.endTime, policy.durationBasis, policy.timezone),
            element=tree.model_copy(update={"parentLocator": s.locator}),
            basedOn=transaction.baseTransactionLocator,
        )
        for s in transaction.segments
    ]


# --- constraint tables ---------------------------------------------------------------------------


def evaluate_constraints(
    ctx: CallContext, locator: str, values: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, dict[str, list[str]]]:
    """The options of the constrained fields of the tree the transaction makes (`_tree`)."""
    found = records.find(ctx, locator)
    return evaluation.evaluate_constraints(
        ctx, records.model_of(ctx, found.transaction), _tree(ctx, found), values, ERRORS
    )


def constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    found = records.find(ctx, locator)
    return evaluation.constraint_dependencies(ctx, records.model_of(ctx, found.transaction), _tree(ctx, found))


def _tree(ctx: CallContext, found: Found) -> Element:
    """The element tree the transaction makes: once initialized its own, as a draft the one its
    instructions would make; a reversal's (and a cancellation's) is the policy's latest."""
    transaction = found.transaction
    if transaction.element is not None:
        return transaction.element
    if transaction.transactionCategory == TransactionCategory.REVERSAL:
        return _latest_tree(found.stack)
    return _plan(ctx, found).tree


# --- advancing -------------------------------------------------------------------------------------


def initialize(ctx: CallContext, locator: str) -> Transaction:
    return _advance(ctx, locator, INITIALIZE)


def validate(ctx: CallContext, locator: str, *, stateless: bool = False) -> Transaction:
    return _advance(ctx, locator, VALIDATE, stateless=stateless)


def price(
    ctx: CallContext,
    locator: str,
    *,
    stateless: bool = False,
    found: Found | None = None,
    read_account: AccountReader | None = None,
    uow: UnitOfWork | None = None,
    unstored: bool = False,
) -> Transaction:
    return _advance(
        ctx, locator, PRICE, stateless=stateless, found=found, read_account=read_account, uow=uow, unstored=unstored
    )


def underwrite(ctx: CallContext, locator: str, *, stateless: bool = False) -> Transaction:
    return _advance(ctx, locator, UNDERWRITE, stateless=stateless)


def accept(
    ctx: CallContext,
    locator: str,
    *,
    found: Found | None = None,
    read_account: AccountReader | None = None,
    uow: UnitOfWork | None = None,
    unstored: bool = False,
) -> Transaction:
    return _advance(ctx, locator, ACCEPT, found=found, read_account=read_account, uow=uow, unstored=unstored)


def _advance(
    ctx: CallContext,
    locator: str,
    target: str,
    *,
    stateless: bool = False,
    found: Found | None = None,
    read_account: AccountReader | None = None,
    uow: UnitOfWork | None = None,
    unstored: bool = False,
) -> Transaction:
    """`found`: the transaction as the caller just read it consistently (records.found_in), not read again;
    the save is conditional on its version all the same. `read_account`: how the plugins' account is read
    (by default accounts.get_account, when a plugin asks for it), say from the accounts a job read together.
    `uow`: the save goes in it (its owner commits it with more). `unstored`: `found` is a draft never stored
    (`new_draft`), written new with what its steps did (or as the draft alone when one fails)."""
    found = records.found(ctx, locator, found)
    transaction = found.transaction
    steps = LIFECYCLE.steps_to(transaction.transactionState, target)
    LIFECYCLE.check_not_expired(transaction.expirationTime, ctx.now)
    runner, evaluator = _runner(ctx, found, read_account)
    try:
        runner.run(steps)
    except StepFailed as stop:
        if unstored and not stateless:
            records.add(ctx, records.before_unstored(found), transaction, uow)
        return transaction.model_copy(update={"validationResult": stop.result})
    if stateless:
        return runner.record
    return _save_with_documents(ctx, found, runner, evaluator, uow, unstored=unstored)


def issue(
    ctx: CallContext,
    locator: str,
    *,
    auto_rebase: bool = False,
    found: Found | None = None,
    read_account: AccountReader | None = None,
    uow: UnitOfWork | None = None,
    unstored: bool = False,
    billed_in: policies.BilledIn | None = None,
) -> Transaction:
    """Issues the transaction (running the steps before it that it lacks) into its policy: one
    TransactWriteItems with the policy root, conditional on the version the stack was read at (and,
    should more branches be invalidated than it holds, the rest of them in locator order after it). A
    transaction whose base is no longer the policy's latest issued transaction is a 409
    `transaction.stale_base`, or with `auto_rebase` is based on the latest again, its instructions
    applied anew and the whole path run from initialize. Out of sequence, it is issued inside an
    aggregate (execution.py): the later transactions reversed, it, their reapplications. `found`,
    `read_account`, `uow` and `unstored` as for `_advance` (given `uow`, the invalidations left for after
    the commit are written once it committed; `billed_in`, with `uow`: the caller's billing of the issue in
    that write, else its billing job, as policies.issue_transaction says)."""
    found = records.found(ctx, locator, found)
    LIFECYCLE.steps_to(found.transaction.transactionState, ISSUE)
    LIFECYCLE.check_not_expired(found.transaction.expirationTime, ctx.now)
    _check_not_held(found.policy, found.transaction.transactionCategory, found.transaction.transactionType)
    head = found.policy.issuedTransactionLocator
    if (
        sequence.rebase(found.transaction.baseTransactionLocator, head, auto_rebase=auto_rebase)
        != found.transaction.baseTransactionLocator
    ):
        found = _rebased(ctx, found, head)
    runner, evaluator = _runner(ctx, found, read_account)
    try:
        runner.run(LIFECYCLE.steps_to(found.transaction.transactionState, ISSUE))
        if ISSUE not in runner.done:
            return _save_with_documents(ctx, found, runner, evaluator, uow, unstored=unstored)
        issued = runner.record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
        done = evaluator.last or _execution(found, evaluator, issued)
    except StepFailed as stop:
        if unstored:
            records.add(ctx, records.before_unstored(found), found.transaction, uow)
        return found.transaction.model_copy(update={"validationResult": stop.result})
    if uow is None:
        uow = wiring.unit_of_work(ctx)
        written, left = _issue_writes(ctx, uow, found, runner, evaluator, issued, done)
        uow.commit()
        policies.save_transactions(ctx, found.stack, left)
        return written.model_copy(update={"version": written.version + 1})
    if unstored:
        for event_type, data in records.events(found.transaction, ["create"]):
            uow.record_event(event_type, data)
    written, left = _issue_writes(
        ctx, uow, found, runner, evaluator, issued, done, new_transaction=unstored, billed_in=billed_in
    )
    stack = found.stack
    uow.after_commit(lambda: policies.save_transactions(ctx, stack, left))
    uow.commit()
    return written.model_copy(update={"version": written.version + 1})


def create_and_issue_in(
    ctx: CallContext,
    uow: UnitOfWork,
    policy_locator: str,
    instructions: list[Instruction],
    *,
    route: str | None = None,
    transaction_type: str | None = None,
    policy_change: Callable[[UnitOfWork, Policy], Policy] | None = None,
    billed_by_caller: bool = False,
    billed_in: policies.BilledIn | None = None,
) -> Transaction | None:
    """`create_and_advance` to issued as part of the caller's `uow` (its records and the issue commit
    together, or neither): the draft is never stored apart, and the policy root is written once, with
    `policy_change` (the caller's change of the root as read, recording its events in the unit of work it is
    given) made to it. None when the draft would not be issued at once (a step fails or stops short of
    issue): nothing is added to `uow` then; `create_and_advance` stores the draft as far as it gets.
    `billed_by_caller`: the caller bills the issue once `uow` committed, or in it (`billed_in`; both as
    policies.issue_transaction says)."""
    stack, draft = _new_draft(ctx, policy_locator, instructions, route, transaction_type, None)
    work = wiring.nested_unit_of_work(uow)
    if policy_change is not None:
        stack = stack.model_copy(update={"policy": policy_change(work, stack.policy)})
    found = Found(stack.model_copy(update={"transactions": [*stack.transactions, draft]}), draft)
    runner, evaluator = _runner(ctx, found)
    try:
        runner.run(LIFECYCLE.steps_to(draft.transactionState, ISSUE))
        if ISSUE not in runner.done:
            return None
        issued = runner.record.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
        done = evaluator.last or _execution(found, evaluator, issued)
    except StepFailed:
        return None
    for event_type, data in records.events(draft, ["create"]):
        work.record_event(event_type, data)
    written, left = _issue_writes(
        ctx,
        work,
        found,
        runner,
        evaluator,
        issued,
        done,
        new_transaction=True,
        billed_by_caller=billed_by_caller,
        billed_in=billed_in,
    )
    work.after_commit(lambda: policies.save_transactions(ctx, found.stack, left))
    work.commit()
    return written.model_copy(update={"version": written.version + 1})


def _issue_writes(
    ctx: CallContext,
    uow: UnitOfWork,
    found: Found,
    runner: Runner[Transaction],
    evaluator: TransactionEvaluation,
    issued: Transaction,
    done: execution.Execution,
    *,
    new_transaction: bool = False,
    billed_by_caller: bool = False,
    billed_in: policies.BilledIn | None = None,
) -> tuple[Transaction, list[Transaction]]:
    """Adds an issue's records and events to `uow`: answers the issued transaction as written (before the
    write's version bump) and the invalidations left for after the commit (policies.issue_transaction)."""
    if evaluator.plan is None:
        bundle = issuing.reversal(found.stack, issued, done.outcome, done.trees, ctx.now, new_locator)
    elif done.in_sequence:
        bundle = issuing.in_sequence(found.stack, issued, evaluator.plan, ctx.now)
    else:
        bundle = issuing.aggregate(found.stack, issued, done.outcome, done.trees, ctx.now, new_locator)
    events = [
        *records.events(issued, _actions(runner.done), runner.event_data),
        *_status_change(ctx, found.policy, bundle.policy),
        *(
            event
            for part in bundle.added
            if part.transactionCategory != TransactionCategory.AGGREGATE
            for event in records.events(part, ["issue"])
        ),
    ]
    for event_type, data in events:
        uow.record_event(event_type, data)
    document_jobs.enqueue_generation(
        uow, evaluator.model, found.policy.productName, "transaction", bundle.transaction.locator, runner.done
    )
    left = policies.issue_transaction(
        ctx,
        uow,
        found.stack,
        bundle,
        new_transaction=new_transaction,
        billed_by_caller=billed_by_caller,
        billed_in=billed_in,
    )
    return bundle.transaction, left


def _save_with_documents(
    ctx: CallContext,
    found: Found,
    runner: Runner[Transaction],
    evaluator: TransactionEvaluation,
    uow: UnitOfWork | None = None,
    *,
    unstored: bool = False,
) -> Transaction:
    """Saves what the steps did, with a documents job for each document trigger they reached (in `uow`,
    else a unit of work of its own; `unstored`: the draft written new, records.add_advanced)."""
    uow = uow or wiring.unit_of_work(ctx)
    document_jobs.enqueue_generation(
        uow, evaluator.model, found.policy.productName, "transaction", runner.record.locator, runner.done
    )
    if unstored:
        return records.add_advanced(ctx, found, runner.record, _actions(runner.done), runner.event_data, uow)
    return records.save(ctx, found.stack, runner.record, _actions(runner.done), runner.event_data, uow=uow)


def _status_change(ctx: CallContext, before: Policy, after: Policy) -> list[tuple[str, dict[str, Any]]]:
    """`policy.status.update` with the statuses an issue adds and removes, when it changes them."""
    event = policies.status_update(after.locator, policies.statuses(ctx, before), policies.statuses(ctx, after))
    return [] if event is None else [event]


def _execution(found: Found, evaluator: TransactionEvaluation, issued: Transaction) -> execution.Execution:
    """What issuing a transaction priced in an earlier request does (its rated charges as priced)."""
    if evaluator.plan is None:
        return execution.execute_reversal(evaluator.evaluation, found, issued, evaluator.model, evaluator.account)
    rated = [charge for charge in issued.charges if charge.reversalOfLocator is None]
    return execution.execute(
        evaluator.evaluation, found, evaluator.plan, issued, rated, evaluator.model, evaluator.account
    )


def _latest_tree(stack: IssuedStack) -> Element:
    return stack.segments[stack.policy.latestSegmentLocator].element


def _rebased(ctx: CallContext, found: Found, head: str) -> Found:
    """The transaction based on `head` as a draft again: its span and tree worked out anew."""
    draft = found.transaction.model_copy(
        update={
            "baseTransactionLocator": head,
            "transactionState": TransactionState.DRAFT,
            "element": None,
            "charges": [],
            "duration": None,
            "underwritingStatus": None,
            "validationResult": None,
            "acceptedTime": None,
        }
    )
    return records.replaced(found, _planned(ctx, found.stack, draft))


def _actions(done: list[str]) -> list[str]:
    return ["update" if step == INITIALIZE else step for step in done]


def _runner(
    ctx: CallContext, found: Found, read_account: AccountReader | None = None
) -> tuple[Runner[Transaction], TransactionEvaluation]:
    """A reversal makes no segment: it is worked out on the policy's latest tree and has no plan."""
    model = records.model_of(ctx, found.transaction)
    reversal = found.transaction.transactionCategory == TransactionCategory.REVERSAL
    plan = None if reversal else Planner(found.stack, evaluation.catalog(model), new_locator).plan(found.transaction)
    loader = account_view(lambda: (read_account or partial(accounts.get_account, ctx))(found.policy.accountLocator))

    def subject_of(working: Transaction) -> Subject:
        return execution.subject(found.stack, working, loader)

    def initialize_step(working: Transaction) -> None:
        working.element = (
            _latest_tree(found.stack)
            if plan is None
            else plan.tree.model_copy(update={"parentLocator": working.segments[-1].locator})
        )
        working.validationResult = None

    def accept_step(working: Transaction) -> None:
        working.acceptedTime = ctx.now

    def issue_step(working: Transaction) -> None:
        working.issuedTime = ctx.now

    evaluator = TransactionEvaluation(Evaluation(ctx, model), found, plan, model, loader)
    return Runner(
        LIFECYCLE,
        found.transaction,
        evaluator,
        subject_of,
        {INITIALIZE: initialize_step, ACCEPT: accept_step, ISSUE: issue_step},
    ), evaluator


# --- precommit, reset, refuse, discard -------------------------------------------------------------


def precommit(ctx: CallContext, locator: str) -> Transaction:
    """Runs the product's precommit plugin (`precommit_P` or `precommit`) on a draft (initializing it
    first) or initialized transaction: its element changes are made to the segment's tree, and the
    transaction is left initialized. A plugin that fails answers 200 with the transaction as it was and
    the failure in its validationResult, storing nothing; without a plugin, initializing is all it does."""
    found = records.find(ctx, locator, head=True)
    transaction = found.transaction
    LIFECYCLE.check(transaction.transactionState, "be precommitted")
    LIFECYCLE.check_not_expired(transaction.expirationTime, ctx.now)
    runner, evaluator = _runner(ctx, found)
    steps = (
        LIFECYCLE.steps_to(transaction.transactionState, INITIALIZE)
        if transaction.transactionState == TransactionState.DRAFT
        else []
    )
    working = runner.run(steps)
    seen = execution.subject(found.stack, working, evaluator.account)
    try:
        tree = evaluation.precommit(ctx, seen)
    except PluginFailure as failure:
        return transaction.model_copy(update={"validationResult": evaluation.failed(seen, failure)})
    return records.save(ctx, found.stack, working.model_copy(update={"element": tree}), ["update"])


def reset(ctx: CallContext, locator: str, options: ResetOptions, *, to_draft: bool = False) -> Transaction:
    """Back to draft (`to_draft`) or to initialized, without a price; flags stay unless the options
    clear or delete them."""
    found = records.find(ctx, locator, head=True, plans=False)
    transaction = found.transaction
    LIFECYCLE.check(transaction.transactionState, "be reset")
    flags = underwriting.after_reset(
        transaction.flags,
        options.resetFlags,
        every=options.resetAllUnderwritingFlags,
        delete=options.resetFlagsAction == "delete",
        by=_author(ctx),
        code=ENTITY,
        noun=ENTITY,
    )
    back_to_draft = to_draft or transaction.element is None
    state = TransactionState.DRAFT if back_to_draft else TransactionState.INITIALIZED
    reset_one = transaction.model_copy(
        update={
            "transactionState": state,
            "charges": [],
            "duration": None,
            "underwritingStatus": None,
            "acceptedTime": None,
            "validationResult": None,
            "flags": flags,
            **({"element": None} if back_to_draft else {}),
        }
    )
    return records.save(ctx, found.stack, reset_one, ["reset"])


def refuse(ctx: CallContext, locator: str) -> Transaction:
    found = records.find(ctx, locator, head=True, plans=False)
    LIFECYCLE.check(found.transaction.transactionState, "be refused")
    refused = found.transaction.model_copy(update={"transactionState": TransactionState.REFUSED})
    return records.save(ctx, found.stack, refused, ["refuse"])


def discard(ctx: CallContext, locator: str) -> Transaction:
    found = records.find(ctx, locator, head=True, plans=False)
    LIFECYCLE.check(found.transaction.transactionState, "be discarded")
    discarded = found.transaction.model_copy(update={"transactionState": TransactionState.DISCARDED})
    return records.save(ctx, found.stack, discarded, ["discard"])


# --- underwriting flags ----------------------------------------------------------------------------


def change_flags(ctx: CallContext, locator: str, add: list[FlagInput], clear: list[str]) -> Transaction:
    """Manual flags added and flags cleared; the state is decided again at the next underwriting."""
    found = records.find(ctx, locator, head=True)
    transaction = found.transaction
    LIFECYCLE.check(transaction.transactionState, "change its underwriting flags")
    tree = transaction.element or (
        _latest_tree(found.stack)
        if transaction.transactionCategory == TransactionCategory.REVERSAL
        else _plan(ctx, found).tree
    )
    known = {element.locator for element in elements.walk(tree)}
    flags = underwriting.changed(transaction.flags, add, clear, known, _author(ctx), code=ENTITY, noun=ENTITY)
    return records.save(ctx, found.stack, transaction.model_copy(update={"flags": flags}), ["manualUnderwrite"])


def clear_flag(ctx: CallContext, locator: str, level: str, flag_locator: str) -> Transaction:
    underwriting.check_level(get_transaction(ctx, locator).flags, flag_locator, level)
    return change_flags(ctx, locator, [], [flag_locator])


def _author(ctx: CallContext) -> underwriting.Author:
    return underwriting.Author(ctx.user_locator, ctx.now, new_locator)


def history_adjustments(
    basis: str,
    time_zone: str,
    currency: str,
    terms: Sequence[Term],
    history: Sequence[tuple[Transaction, Segment]],
    adjustment_locator: Callable[[Transaction, int], str],
) -> list[list[Charge]]:
    """What each transaction of a history issued elsewhere (a migration's) would carry besides its own charges,
    had it been issued here (timeline.history_adjustments)."""
    return timeline.history_adjustments(basis, time_zone, currency, terms, history, adjustment_locator)
