"""Quotes: created from the deployed configuration, edited as drafts, advanced to a policy.

Creating. A quote names a concrete product whose `eligibleAccountTypes` (when it lists any) include
its account's type. It copies what later configuration changes must not alter: the currency (the
request's, else the tenant's `defaultCurrency`, else USD), the time zone (the request's, the
account's, the tenant's `defaultTimeZone`, UTC), the durationBasis and term (the request's, the
product's, the tenant's defaults; months and no term when none is configured), the end (start plus
the term when not given) and the plan names (the request's, the account's, the product's default,
the tenant's default). An element of a type its parent's `contents` does not allow is a 400
(elements.py), as is a name of something the configuration lacks (product, plan, region, time zone,
contact role) or an unknown account; nothing is stored. A quote may also copy a segment of a policy
(`create_quote_from_policy`, from_policy.py), through the same creation.

The data itself (datamodel.py: types, required fields, quantifiers, options, coverage terms, constraint
tables, static data) is checked at every draft change and the result kept as `validationResult`: a
draft may be incomplete. Validating runs the same check, then the validation plugin (evaluation.py).

Advancing (lifecycle.py): validate, price, underwrite, accept, issue, each running the steps before it
that the quote lacks. When a step fails (the data does not pass, or a plugin fails) the whole request
changes nothing and answers 200 with the quote in its state and the `validationResult` saying why.
Underwriting that does not pass stops the request in `underwrittenBlocked`, `declined` or `rejected`
(stored, with the steps before it). Issuing adds the policy (policies.service.add_issued_policy) to
the same transaction that moves the quote to `issued`. `?stateless=true` runs validate, price and
underwrite without storing anything; validatePreview and pricePreview do the same for a quote that
does not exist.

Numbers (numbers.py): the product's numbering plan numbers a quote (the plan's quote format) when it is created
(`numberingTrigger: creation`) or first validated (the default; a quote validated without a number
gets one then, whatever the trigger). The policy takes the reserved policy number, else the quote's
number when the plan says `copyFromQuote`, else the plan's next.

A draft follows the tenant's current configuration (each change re-checks it and binds the quote to
that version); once validated, a quote is priced, underwritten and issued under the version it was
validated with. Every change bumps `version` (a lost race answers 409) and records its event in the
same transaction: `policy.quote.create|update|validate|price|underwrite|accept|issue|reset|refuse|
discard`, `policy.quote.manualunderwrite` for flag changes, `policy.quote.staticdata.add|update|
replace`, `policy.quote.policyNumberAssigned`; quick quotes record `policy.quickquote.*`, which the
platform's catalogue lacks. Static data changes and their history are in static_data.py, reading
and saving one quote in records.py; this module is the quotes domain's surface for routes and for
other domains.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account, BillingLevel
from chalicelib.configuration import numbers
from chalicelib.configuration import service as configuration
from chalicelib.configuration.products import Product
from chalicelib.core import codes
from chalicelib.core import contacts as contact_list
from chalicelib.core.clock import utc
from chalicelib.core.context import CallContext
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.policies import service as policies
from chalicelib.policies.models import HeldScope, PolicyIssuance
from chalicelib.priceable import checks, elements, evaluation, underwriting
from chalicelib.priceable.evaluation import Evaluation
from chalicelib.priceable.models import ElementInput
from chalicelib.priceable.runner import ACCEPT, ISSUE, PRICE, UNDERWRITE, VALIDATE, Runner, StepFailed
from chalicelib.priceable.subject import (
    AccountLoader,
    Subject,
    account_view,
    new_span,
    quote_subject,
    span_duration,
    span_end,
)
from chalicelib.quotes import from_policy, repository
from chalicelib.quotes.lifecycle import ERRORS, LIFECYCLE
from chalicelib.quotes.models import (
    ENTITY,
    FlagInput,
    Quote,
    QuoteChanges,
    QuoteFields,
    QuoteState,
    ResetOptions,
)
from chalicelib.quotes.numbers import assign_number
from chalicelib.quotes.numbers import generate_number as generate_number
from chalicelib.quotes.numbers import set_number as set_number
from chalicelib.quotes.numbers import set_reserved_policy_number as set_reserved_policy_number
from chalicelib.quotes.records import commit, model_of, save
from chalicelib.quotes.records import get_quote as get_quote
from chalicelib.quotes.static_data import add_static as add_static
from chalicelib.quotes.static_data import replace_static as replace_static
from chalicelib.quotes.static_data import static_history as static_history
from chalicelib.quotes.static_data import update_static as update_static
from chalicelib.runtime import document_jobs, wiring
from chalicelib.runtime.wiring import UnitOfWork

# --- reading -------------------------------------------------------------------------------------


def list_quotes(ctx: CallContext, page: PageRequest) -> Page[Quote]:
    """The tenant's quotes, oldest first."""
    return repository.list_quotes(ctx.tenant, page)


def quotes_by_locator(ctx: CallContext, locators: list[str]) -> dict[str, Quote]:
    """The tenant's quotes among `locators`, by locator (one batch read; those it has not are left out)."""
    return repository.quotes(ctx.tenant, locators)


def quotes_of_account(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[Quote]:
    """The account's quotes, oldest first (404 for an unknown account)."""
    accounts.get_account(ctx, account_locator)
    return repository.list_account_quotes(ctx.tenant, account_locator, page)


def quotes_with_number(ctx: CallContext, quote_number: str) -> list[Quote]:
    """The quote holding `quote_number` (numbers are unique); 404 when none does."""
    owner = numbers.number_owner(ctx, ENTITY, quote_number)
    quote = repository.get(ctx.tenant, owner) if owner else None
    if quote is None:
        raise codes.not_found(ENTITY, quote_number)
    return [quote]


def priced_quote(ctx: CallContext, locator: str) -> Quote:
    """The quote with its stored price; 409 `quote.not_priced` when it has none."""
    quote = get_quote(ctx, locator)
    if quote.charges is None:
        raise codes.NOT_PRICED["quote"](f"Quote {locator} has not been priced")
    return quote


# --- creating and editing drafts -------------------------------------------------------------------


def create_quote(ctx: CallContext, fields: QuoteFields, *, product_in_request: bool = True) -> Quote:
    """`product_in_request` False: the product comes from a stored record (a policy), so one the
    configuration no longer has is a 409, not the caller's 400."""
    version, model = configuration.current_model(ctx, resolved=True)
    quote, account = _new_quote(ctx, version, model, fields, product_in_request=product_in_request)
    quote = _checked(ctx, model, quote, account)
    uow = wiring.unit_of_work(ctx)
    if checks.configured_product(model, quote.productName, ERRORS).numbers_on_creation:
        assign_number(ctx, uow, model, quote)
    checks.check_size(quote, ERRORS)
    repository.add(uow, ctx.tenant, quote)
    commit(uow, quote, ["create"])
    return quote


def create_quote_from_policy(
    ctx: CallContext,
    policy_locator: str,
    moment: datetime | None = None,
    *,
    by_issued_time: bool = False,
    include_static: bool = False,
) -> Quote:
    """A draft quote copying one segment of the policy (from_policy.py says what it copies), created as
    create_quote creates any: checked against the current configuration (validationResult), numbered
    when the product numbers quotes on creation, `policy.quote.create` recorded, one transaction.

    The segment: without `moment`, the one the issuance transaction made; with it, the one the policy's
    snapshot at `moment` shows (by effective time, or with `by_issued_time` the policy as issued by
    then), a gap included: its tree is the coverage the cancellation removed. 404 `policy.not_found`
    for an unknown policy, 404 `snapshot.not_found` when no segment answers (as GET snapshot), 409
    `quote.product_not_configured` when the current configuration no longer has the policy's product."""
    if moment is None:
        stack = policies.issued_stack(ctx, policy_locator)
        policy, segment = stack.policy, from_policy.issuance_segment(stack)
        if segment is None:
            raise codes.not_found("snapshot", f"of the issuance of policy {policy_locator}")
    else:
        shown = policies.snapshot(ctx, policy_locator, moment, by_issued_time=by_issued_time)
        policy, segment = shown.policy, shown.segment
    return create_quote(
        ctx, from_policy.quote_fields(policy, segment, include_static=include_static), product_in_request=False
    )


def update_quote(ctx: CallContext, locator: str, changes: QuoteChanges) -> Quote:
    quote = get_quote(ctx, locator)
    LIFECYCLE.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    given = {name for name in changes.model_fields_set if getattr(changes, name) is not None}
    account = (
        accounts.named_account(ctx, changes.accountLocator, codes.QUOTE_UNKNOWN_ACCOUNT)
        if changes.accountLocator
        else None
    )
    if account is not None:
        checks.check_eligible(
            checks.configured_product(model, quote.productName, ERRORS), quote.productName, account.type, ERRORS
        )
    checks.check_references(model, changes, changes.setContacts, ERRORS)
    start = utc(changes.startTime) if changes.startTime else quote.startTime
    basis, zone = quote.durationBasis, changes.timezone or quote.timezone
    end: datetime | None = quote.endTime
    if changes.endTime:
        end = utc(changes.endTime)
    elif changes.resetEndTime:
        end = span_end(start, None, quote.termDuration, basis, zone)
    root = quote.element.model_copy(
        update={
            "data": elements.merged(quote.element.data, changes.removeData, changes.setData),
            "coverageTerms": elements.merged(
                quote.element.coverageTerms, changes.removeCoverageTerms, changes.setCoverageTerms
            ),
        }
    )
    root = elements.change_elements(root, changes.elements, entity=ERRORS)
    simple = {
        name: getattr(changes, name)
        for name in given
        & {
            "currency",
            "timezone",
            "preferences",
            "delinquencyPlanName",
            "autoRenewalPlanName",
            "billingLevel",
            "invoiceFeeAmount",
            "jurisdiction",
            "producerCode",
            "accountLocator",
        }
    }
    if changes.expirationTime:
        simple["expirationTime"] = utc(changes.expirationTime)
    if changes.preferences is not None:
        simple["installmentPlanName"] = _installment_plan(
            checks.configured_product(model, quote.productName, ERRORS), changes.preferences.model_dump()
        )
    changed = quote.model_copy(
        update={
            **simple,
            "startTime": start,
            "endTime": end,
            "duration": span_duration(start, end, basis, zone),
            "element": root,
            "configVersion": version,
            "contacts": contact_list.merged(quote.contacts, changes.setContacts, changes.removeContacts),
        }
    )
    return _save_draft(ctx, model, changed, account)


def add_elements(ctx: CallContext, locator: str, additions: list[ElementInput]) -> Quote:
    quote = get_quote(ctx, locator)
    LIFECYCLE.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    root = elements.add_elements(evaluation.catalog(model), quote.element, additions, new_locator, entity=ERRORS)
    return _save_draft(ctx, model, quote.model_copy(update={"element": root, "configVersion": version}))


def remove_elements(ctx: CallContext, locator: str, locators: list[str]) -> Quote:
    quote = get_quote(ctx, locator)
    LIFECYCLE.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    root = elements.remove_elements(quote.element, locators, entity=ERRORS)
    return _save_draft(ctx, model, quote.model_copy(update={"element": root, "configVersion": version}))


def _save_draft(ctx: CallContext, model: dict[str, Any], quote: Quote, account: Account | None = None) -> Quote:
    checked = _checked(ctx, model, quote, account)
    return save(ctx, wiring.unit_of_work(ctx), checked, ["update"])


def _new_quote(
    ctx: CallContext, version: str, model: dict[str, Any], fields: QuoteFields, *, product_in_request: bool = True
) -> tuple[Quote, Account]:
    product = checks.configured_product(model, fields.productName, ERRORS, in_request=product_in_request)
    account = accounts.named_account(ctx, fields.accountLocator, codes.QUOTE_UNKNOWN_ACCOUNT)
    checks.check_eligible(product, fields.productName, account.type, ERRORS)
    checks.check_references(model, fields, fields.contacts, ERRORS)
    zone = fields.timezone or account.timezone or checks.default_time_zone(model)
    basis = fields.durationBasis or product.duration_basis
    term = fields.termDuration or product.term_duration
    start = utc(fields.startTime)
    root = elements.build_root(
        evaluation.catalog(model),
        fields.productName,
        fields.data,
        fields.coverageTerms,
        fields.elements,
        new_locator,
        entity=ERRORS,
    )
    preferences = fields.preferences.model_dump() if fields.preferences else {}
    quote = Quote(
        locator=new_locator(),
        productName=fields.productName,
        accountLocator=account.locator,
        **new_span(start, fields, term, basis, zone),
        currency=fields.currency or checks.default_currency(model),
        termDuration=Decimal(term) if term else None,
        element=root,
        preferences=fields.preferences,
        delinquencyPlanName=fields.delinquencyPlanName or account.delinquencyPlanName or product.delinquency_plan,
        autoRenewalPlanName=fields.autoRenewalPlanName or account.autoRenewalPlanName or product.auto_renewal_plan,
        installmentPlanName=_installment_plan(product, preferences),
        billingLevel=fields.billingLevel or _default_billing_level(model),
        region=fields.region or account.region,
        jurisdiction=fields.jurisdiction,
        producerCode=fields.producerCode,
        groupLocator=fields.quoteGroupLocator,
        contacts=fields.contacts,
        invoiceFeeAmount=fields.invoiceFeeAmount,
        static=fields.static,
        configVersion=version,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    return quote, account


def _checked(ctx: CallContext, model: dict[str, Any], quote: Quote, account: Account | None = None) -> Quote:
    """The quote with its data normalised and the draft check's validationResult."""
    tree, result = evaluation.schema_result(ctx, model, _subject(ctx, quote, account))
    return quote.model_copy(update={"element": tree, "validationResult": result})


# --- advancing -----------------------------------------------------------------------------------


def validate_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, VALIDATE, stateless=stateless)


def price_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, PRICE, stateless=stateless)


def underwrite_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, UNDERWRITE, stateless=stateless)


def accept_quote(ctx: CallContext, locator: str) -> Quote:
    return _advance(ctx, locator, ACCEPT)


def issue_quote(ctx: CallContext, locator: str) -> Quote:
    return _advance(ctx, locator, ISSUE)


def _advance(ctx: CallContext, locator: str, target: str, *, stateless: bool = False) -> Quote:
    quote = get_quote(ctx, locator)
    steps = LIFECYCLE.steps_to(quote.quoteState, target)
    LIFECYCLE.check_not_expired(quote.expirationTime, ctx.now)
    _check_not_held(quote, steps)
    runner, model = _runner(ctx, quote)
    try:
        runner.run(steps)
    except StepFailed as stop:
        return quote.model_copy(update={"validationResult": stop.result})
    if stateless:
        return runner.record
    uow = wiring.unit_of_work(ctx)
    if VALIDATE in runner.done:
        assign_number(ctx, uow, model, runner.record)
    document_jobs.enqueue_generation(uow, model, quote.productName, "quote", quote.locator, runner.done)
    if ISSUE in runner.done:
        _add_policy(ctx, uow, model, runner.record)  # after the jobs: it sizes its writes by what is left
    return save(ctx, uow, runner.record, runner.done, runner.event_data)


HELD_STATE_STEPS = {"validated": "validate", "priced": "price", "underwritten": "underwrite", "accepted": "accept"}
"""The step that reaches each state an entity hold's quote scope names: the quote goes no step past it."""


def _check_not_held(quote: Quote, steps: list[str]) -> None:
    """409 `quote.held` when an active entity hold keeps the quote from a step of `steps`."""
    for held in quote.entityHolds:
        last = HELD_STATE_STEPS.get(held.quoteState or "")
        if last is None:
            continue
        beyond = LIFECYCLE.steps[LIFECYCLE.steps.index(last) + 1 :]
        blocked = [step for step in steps if step in beyond]
        if blocked:
            raise codes.QUOTE_HELD(
                f"Hold {held.holdLocator} keeps quote {quote.locator} from going past "
                f"{held.quoteState} (it cannot {blocked[0]})"
            )


def set_entity_hold(ctx: CallContext, uow: UnitOfWork, locator: str, scope: HeldScope, *, active: bool) -> None:
    """Adds to the caller's unit of work (the holds domain's) the quote with the hold's scope in force, or
    no longer (conditional on the quote's version)."""
    quote = get_quote(ctx, locator)
    kept = [held for held in quote.entityHolds if held.holdLocator != scope.holdLocator]
    changed = quote.model_copy(
        update={"entityHolds": [*kept, scope] if active else kept, "updatedAt": ctx.now, "updatedBy": ctx.user_locator}
    )
    repository.save(uow, ctx.tenant, changed)


def _runner(
    ctx: CallContext, quote: Quote, current: tuple[str, dict[str, Any]] | None = None, account: Account | None = None
) -> tuple[Runner[Quote], dict[str, Any]]:
    """A draft is checked against the current configuration (and bound to it), any other quote
    against the version it was validated with."""
    if quote.quoteState == QuoteState.DRAFT:
        version, model = current or configuration.current_model(ctx, resolved=True)
        quote = quote.model_copy(update={"configVersion": version})
    else:
        model = configuration.model(ctx, quote.configVersion, resolved=True)
    loader = _account_loader(ctx, quote.accountLocator, account)

    def issue(working: Quote) -> None:
        if (
            checks.configured_product(model, working.productName, ERRORS).reserved_policy_number_required
            and not working.reservedPolicyNumber
        ):
            raise codes.QUOTE_RESERVED_POLICY_NUMBER_REQUIRED(
                f"{working.productName} policies need a reserved policy number before issue"
            )
        working.issuedTime = ctx.now

    def accept(working: Quote) -> None:
        working.acceptedTime = ctx.now

    return Runner(
        LIFECYCLE,
        quote,
        Evaluation(ctx, model),
        lambda working: _subject(ctx, working, loader=loader),
        {ACCEPT: accept, ISSUE: issue},
    ), model


def _add_policy(ctx: CallContext, uow: UnitOfWork, model: dict[str, Any], quote: Quote) -> None:
    """Adds the policy to `uow` and records it on the quote (validation made sure it has an end)."""
    product = checks.configured_product(model, quote.productName, ERRORS)
    plan = (model.get("numberingPlans") or {}).get(product.numbering_plan)
    number = quote.reservedPolicyNumber or (
        quote.quoteNumber if isinstance(plan, dict) and plan.get("copyFromQuote") is True else None
    )
    fields = quote.model_dump(include=set(PolicyIssuance.model_fields), exclude_none=True)
    issued = policies.add_issued_policy(
        ctx, uow, PolicyIssuance(**{**fields, "quoteLocator": quote.locator, "policyNumber": number})
    )
    quote.policyLocator = issued.policyLocator
    quote.policyNumber = issued.policyNumber


def reset_quote(ctx: CallContext, locator: str, options: ResetOptions) -> Quote:
    """Back to draft without a price; flags stay unless the options clear or delete them."""
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be reset")
    flags = underwriting.after_reset(
        quote.flags,
        options.resetFlags,
        every=options.resetAllUnderwritingFlags,
        delete=options.resetFlagsAction == "delete",
        by=_author(ctx),
        code=ENTITY,
        noun=ENTITY,
    )
    reset = quote.model_copy(
        update={
            "quoteState": QuoteState.DRAFT,
            "charges": None,
            "underwritingStatus": None,
            "acceptedTime": None,
            "validationResult": None,
            "flags": flags,
        }
    )
    return save(ctx, wiring.unit_of_work(ctx), reset, ["reset"])


def refuse_quote(ctx: CallContext, locator: str) -> Quote:
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be refused")
    return save(ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"quoteState": QuoteState.REFUSED}), ["refuse"])


def discard_quote(ctx: CallContext, locator: str) -> Quote:
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "be discarded")
    return save(
        ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"quoteState": QuoteState.DISCARDED}), ["discard"]
    )


# --- previews: a quote that does not exist, checked and priced, nothing stored ---------------------


def validate_preview(ctx: CallContext, fields: QuoteFields) -> Quote:
    return _preview(ctx, fields, VALIDATE)


def price_preview(ctx: CallContext, fields: QuoteFields) -> Quote:
    return _preview(ctx, fields, PRICE)


def _preview(ctx: CallContext, fields: QuoteFields, target: str) -> Quote:
    version, model = configuration.current_model(ctx, resolved=True)
    quote, account = _new_quote(ctx, version, model, fields)
    quote = _checked(ctx, model, quote, account)
    try:
        return _runner(ctx, quote, (version, model), account)[0].run(LIFECYCLE.steps_to(quote.quoteState, target))
    except StepFailed as stop:
        return quote.model_copy(update={"validationResult": stop.result})


# --- underwriting flags ----------------------------------------------------------------------------


def change_flags(ctx: CallContext, locator: str, add: list[FlagInput], clear: list[str]) -> Quote:
    """Manual flags added and flags (manual or plugin) cleared (underwriting.changed); the quote's state
    is decided again when it is next underwritten (also by accept or issue)."""
    quote = get_quote(ctx, locator)
    LIFECYCLE.check(quote.quoteState, "change its underwriting flags")
    if quote.quoteState == QuoteState.ACCEPTED:
        raise codes.INVALID_STATE["quote"]("An accepted quote's underwriting flags cannot change")
    known = {element.locator for element in elements.walk(quote.element)}
    flags = underwriting.changed(quote.flags, add, clear, known, _author(ctx), code=ENTITY, noun=ENTITY)
    return save(ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"flags": flags}), ["manualunderwrite"])


def clear_flag(ctx: CallContext, locator: str, level: str, flag_locator: str) -> Quote:
    """Clears one flag of `level` (404 for a flag of another level or none)."""
    underwriting.check_level(get_quote(ctx, locator).flags, flag_locator, level)
    return change_flags(ctx, locator, [], [flag_locator])


def _author(ctx: CallContext) -> underwriting.Author:
    return underwriting.Author(ctx.user_locator, ctx.now, new_locator)


# --- constraint tables ---------------------------------------------------------------------------


def evaluate_constraints(
    ctx: CallContext, locator: str, values: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> dict[str, dict[str, list[str]]]:
    quote = get_quote(ctx, locator)
    return evaluation.evaluate_constraints(ctx, model_of(ctx, quote), quote.element, values, ERRORS)


def constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    quote = get_quote(ctx, locator)
    return evaluation.constraint_dependencies(ctx, model_of(ctx, quote), quote.element)


# --- helpers ---------------------------------------------------------------------------------------


def _subject(
    ctx: CallContext, quote: Quote, account: Account | None = None, *, loader: AccountLoader | None = None
) -> Subject:
    return quote_subject(quote, quote.static, loader or _account_loader(ctx, quote.accountLocator, account))


def _installment_plan(product: Product, preferences: dict[str, Any]) -> str | None:
    chosen = (preferences.get("installmentPreferences") or {}).get("installmentPlanName")
    return chosen or product.installment_plan


def _default_billing_level(model: dict[str, Any]) -> BillingLevel:
    level = model.get("defaultBillingLevel")
    return BillingLevel(level) if level in {member.value for member in BillingLevel} else BillingLevel.ACCOUNT


def _account_loader(ctx: CallContext, locator: str, known: Account | None) -> AccountLoader:
    return account_view(lambda: known or accounts.get_account(ctx, locator))
