"""Quotes: created from the deployed configuration, edited as drafts, advanced to a policy.

Creating. A quote names a concrete product whose `eligibleAccountTypes` (when it lists any) include
its account's type. It copies what later configuration changes must not alter: the currency (the
request's, else the tenant's `defaultCurrency`, else USD), the time zone (the request's, the
account's, the tenant's `defaultTimeZone`, UTC), the durationBasis and term (the request's, the
product's, the tenant's defaults; months and no term when none is configured), the end (start plus
the term when not given) and the plan names (the request's, the account's, the product's default,
the tenant's default). An element of a type its parent's `contents` does not allow is a 400
(elements.py), as is a name of something the configuration lacks (product, plan, region, time zone,
contact role) or an unknown account; nothing is stored.

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

Numbers: the product's numbering plan numbers a quote (the plan's quote format) when it is created
(`numberingTrigger: creation`) or first validated (the default; a quote validated without a number
gets one then, whatever the trigger). The policy takes the reserved policy number, else the quote's
number when the plan says `copyFromQuote`, else the plan's next.

A draft follows the tenant's current configuration (each change re-checks it and binds the quote to
that version); once validated, a quote is priced, underwritten and issued under the version it was
validated with. Every change bumps `version` (a lost race answers 409) and records its event in the
same transaction: `policy.quote.create|update|validate|price|underwrite|accept|issue|reset|refuse|
discard`, `policy.quote.manualunderwrite` for flag changes, `policy.quote.staticdata.add|update|
replace`, `policy.quote.policyNumberAssigned`; quick quotes record `policy.quickquote.*`, which the
platform's catalogue lacks.
"""
from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import Account, BillingLevel, ContactRole
from chalicelib.configuration import numbers
from chalicelib.configuration import service as configuration
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core import durations
from chalicelib.core.context import CallContext
from chalicelib.core.errors import (
    FieldError,
    InvalidRequest,
    InvalidState,
    NotFound,
    PayloadTooLarge,
)
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.plugins.contract import underwriting_outcome
from chalicelib.plugins.models import PluginFailure, PluginFlag
from chalicelib.policies import service as policies
from chalicelib.policies.models import ENTITY as POLICY_ENTITY
from chalicelib.policies.models import PolicyIssuance
from chalicelib.quotes import elements, evaluation, lifecycle, repository
from chalicelib.quotes.evaluation import Subject
from chalicelib.quotes.lifecycle import Step
from chalicelib.quotes.models import (
    ENTITY,
    QUICK_ENTITY,
    RESERVED_POLICY_NUMBER_KIND,
    Element,
    ElementInput,
    Flag,
    FlagInput,
    QuickQuote,
    QuickQuoteChanges,
    QuickQuoteFields,
    QuickQuoteState,
    Quote,
    QuoteChanges,
    QuoteFields,
    QuoteState,
    ResetOptions,
    StaticHistoryEntry,
)
from chalicelib.runtime import wiring
from chalicelib.tables import service as tables

EVENT = "policy.quote."
QUICK_EVENT = "policy.quickquote."
NUMBER_ASSIGNED_EVENT = "policy.quote.policyNumberAssigned"
DEFAULT_CURRENCY = "USD"
DEFAULT_TIME_ZONE = "UTC"
DEFAULT_DURATION_BASIS = "months"
MAX_LOCATOR_LENGTH = 64
MAX_NUMBER_LENGTH = numbers.MAX_NUMBER_LENGTH
MAX_RECORD_BYTES = 300_000
"""A quote is one table item, which DynamoDB caps at 400 KB."""
PLAN_REFERENCES = {"delinquencyPlanName": "delinquencyPlans", "autoRenewalPlanName": "autoRenewalPlans",
                   "region": "regions"}


# --- reading -------------------------------------------------------------------------------------


def get_quote(ctx: CallContext, locator: str) -> Quote:
    """The quote (404 `quote.not_found` when this tenant has none with that locator)."""
    quote = repository.get(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if quote is None:
        raise NotFound(ENTITY, locator)
    return quote


def list_quotes(ctx: CallContext, page: PageRequest) -> Page[Quote]:
    """The tenant's quotes, oldest first."""
    return repository.list_quotes(ctx.tenant, page)


def quotes_of_account(ctx: CallContext, account_locator: str, page: PageRequest) -> Page[Quote]:
    """The account's quotes, oldest first (404 for an unknown account)."""
    accounts.get_account(ctx, account_locator)
    return repository.list_account_quotes(ctx.tenant, account_locator, page)


def quotes_with_number(ctx: CallContext, quote_number: str) -> list[Quote]:
    """The quote holding `quote_number` (numbers are unique); 404 when none does."""
    owner = numbers.number_owner(ctx, ENTITY, quote_number)
    quote = repository.get(ctx.tenant, owner) if owner else None
    if quote is None:
        raise NotFound(ENTITY, quote_number)
    return [quote]


def priced_quote(ctx: CallContext, locator: str) -> Quote:
    """The quote with its stored price; 409 `quote.not_priced` when it has none."""
    quote = get_quote(ctx, locator)
    if quote.charges is None:
        raise InvalidState(f"Quote {locator} has not been priced", code="quote.not_priced")
    return quote


def static_history(ctx: CallContext, locator: str, page: PageRequest) -> Page[StaticHistoryEntry]:
    get_quote(ctx, locator)
    return repository.static_history(ctx.tenant, locator, page)


# --- creating and editing drafts -------------------------------------------------------------------


def create_quote(ctx: CallContext, fields: QuoteFields) -> Quote:
    version, model = configuration.current_model(ctx, resolved=True)
    quote, account = _new_quote(ctx, version, model, fields)
    quote = _checked(ctx, model, quote, account)
    uow = wiring.unit_of_work(ctx)
    if _product(model, quote.productName).get("numberingTrigger") == "creation":
        _assign_number(ctx, uow, model, quote)
    _check_size(quote)
    repository.add(uow, ctx.tenant, quote)
    _commit(uow, quote, ["create"])
    return quote


def update_quote(ctx: CallContext, locator: str, changes: QuoteChanges) -> Quote:
    quote = get_quote(ctx, locator)
    lifecycle.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    given = {name for name in changes.model_fields_set if getattr(changes, name) is not None}
    account = _account(ctx, changes.accountLocator) if changes.accountLocator else None
    if account is not None:
        _check_eligible(_product(model, quote.productName), quote.productName, account)
    _check_references(model, changes, contacts=changes.setContacts)
    start = _utc(changes.startTime) if changes.startTime else quote.startTime
    basis, zone = quote.durationBasis, changes.timezone or quote.timezone
    if changes.endTime:
        end = _utc(changes.endTime)
    elif changes.resetEndTime:
        end = _end(start, None, quote.termDuration, basis, zone)
    else:
        end = quote.endTime
    root = quote.element.model_copy(update={
        "data": elements.merged(quote.element.data, changes.removeData, changes.setData),
        "coverageTerms": elements.merged(quote.element.coverageTerms, changes.removeCoverageTerms,
                                         changes.setCoverageTerms)})
    root = elements.change_elements(root, changes.elements)
    simple = {name: getattr(changes, name) for name in given & {
        "currency", "timezone", "preferences", "delinquencyPlanName", "autoRenewalPlanName", "billingLevel",
        "invoiceFeeAmount", "jurisdiction", "producerCode", "accountLocator"}}
    if changes.expirationTime:
        simple["expirationTime"] = _utc(changes.expirationTime)
    if changes.preferences is not None:
        simple["installmentPlanName"] = _installment_plan(model, quote.productName, changes.preferences.model_dump())
    changed = quote.model_copy(update={
        **simple, "startTime": start, "endTime": end, "duration": _duration(start, end, basis, zone), "element": root,
        "contacts": _contacts(quote.contacts, changes.setContacts, changes.removeContacts), "configVersion": version})
    return _save_draft(ctx, model, changed, account)


def add_elements(ctx: CallContext, locator: str, additions: list[ElementInput]) -> Quote:
    quote = get_quote(ctx, locator)
    lifecycle.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    root = elements.add_elements(model, quote.element, additions, new_locator)
    return _save_draft(ctx, model, quote.model_copy(update={"element": root, "configVersion": version}))


def remove_elements(ctx: CallContext, locator: str, locators: list[str]) -> Quote:
    quote = get_quote(ctx, locator)
    lifecycle.check_editable(quote.quoteState)
    version, model = configuration.current_model(ctx, resolved=True)
    root = elements.remove_elements(quote.element, locators)
    return _save_draft(ctx, model, quote.model_copy(update={"element": root, "configVersion": version}))


def _save_draft(ctx: CallContext, model: dict[str, Any], quote: Quote, account: Account | None = None) -> Quote:
    checked = _checked(ctx, model, quote, account)
    return _save(ctx, wiring.unit_of_work(ctx), checked, ["update"])


def _new_quote(ctx: CallContext, version: str, model: dict[str, Any], fields: QuoteFields) -> tuple[Quote, Account]:
    product = _product(model, fields.productName, in_request=True)
    account = _account(ctx, fields.accountLocator)
    _check_eligible(product, fields.productName, account)
    _check_references(model, fields, contacts=fields.contacts)
    zone = fields.timezone or account.timezone or _default_time_zone(model)
    basis = fields.durationBasis or product.get("defaultDurationBasis") or model.get("defaultDurationBasis") \
        or DEFAULT_DURATION_BASIS
    term = fields.termDuration or _positive(product.get("defaultTermDuration")) \
        or _positive(model.get("defaultTermDuration"))
    start = _utc(fields.startTime)
    end = _end(start, fields.endTime, term, basis, zone)
    root = elements.build_root(model, fields.productName, fields.data, fields.coverageTerms, fields.elements,
                               new_locator)
    preferences = fields.preferences.model_dump() if fields.preferences else {}
    quote = Quote(
        locator=new_locator(), productName=fields.productName, accountLocator=account.locator,
        startTime=start, endTime=end, expirationTime=_utc(fields.expirationTime) if fields.expirationTime else None,
        timezone=zone, currency=fields.currency or model.get("defaultCurrency") or DEFAULT_CURRENCY,
        durationBasis=basis, termDuration=Decimal(term) if term else None, duration=_duration(start, end, basis, zone),
        element=root, preferences=fields.preferences,
        delinquencyPlanName=fields.delinquencyPlanName or account.delinquencyPlanName
        or product.get("defaultDelinquencyPlan") or model.get("defaultDelinquencyPlan"),
        autoRenewalPlanName=fields.autoRenewalPlanName or account.autoRenewalPlanName
        or product.get("defaultAutoRenewalPlan") or model.get("defaultAutoRenewalPlan"),
        installmentPlanName=_installment_plan(model, fields.productName, preferences),
        billingLevel=fields.billingLevel or _default_billing_level(model), region=fields.region or account.region,
        jurisdiction=fields.jurisdiction, producerCode=fields.producerCode, groupLocator=fields.quoteGroupLocator,
        contacts=fields.contacts, invoiceFeeAmount=fields.invoiceFeeAmount, static=fields.static,
        configVersion=version, createdAt=ctx.now, createdBy=ctx.user_locator, updatedAt=ctx.now,
        updatedBy=ctx.user_locator)
    return quote, account


def _checked(ctx: CallContext, model: dict[str, Any], quote: Quote, account: Account | None = None) -> Quote:
    """The quote with its data normalised and the draft check's validationResult."""
    tree, result = evaluation.schema_result(ctx, model, _subject(ctx, quote, account))
    return quote.model_copy(update={"element": tree, "validationResult": result})


# --- advancing -----------------------------------------------------------------------------------


def validate_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, Step.VALIDATE, stateless=stateless)


def price_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, Step.PRICE, stateless=stateless)


def underwrite_quote(ctx: CallContext, locator: str, *, stateless: bool = False) -> Quote:
    return _advance(ctx, locator, Step.UNDERWRITE, stateless=stateless)


def accept_quote(ctx: CallContext, locator: str) -> Quote:
    return _advance(ctx, locator, Step.ACCEPT)


def issue_quote(ctx: CallContext, locator: str) -> Quote:
    return _advance(ctx, locator, Step.ISSUE)


class _Stop(Exception):
    """A step that did not pass: the request stores nothing and answers this validationResult."""

    def __init__(self, result: ValidationResult):
        super().__init__("step failed")
        self.result = result


def _advance(ctx: CallContext, locator: str, target: Step, *, stateless: bool = False) -> Quote:
    quote = get_quote(ctx, locator)
    steps = lifecycle.steps_to(quote.quoteState, target)
    lifecycle.check_not_expired(quote.expirationTime, ctx.now)
    runner = _Steps(ctx, quote)
    try:
        for step in steps:
            runner.run(step)
            if step == Step.UNDERWRITE and runner.quote.quoteState != QuoteState.UNDERWRITTEN:
                break
    except _Stop as stop:
        return quote.model_copy(update={"validationResult": stop.result})
    if stateless:
        return runner.quote
    uow = wiring.unit_of_work(ctx)
    if Step.VALIDATE in runner.done:
        _assign_number(ctx, uow, runner.model, runner.quote)
    if Step.ISSUE in runner.done:
        _add_policy(ctx, uow, runner.model, runner.quote)
    return _save(ctx, uow, runner.quote, runner.events, runner.event_data)


class _Steps:
    """Runs steps on a working copy of a quote, collecting the events to record."""

    def __init__(self, ctx: CallContext, quote: Quote, current: tuple[str, dict[str, Any]] | None = None,
                 account: Account | None = None):
        self.ctx = ctx
        self.original = quote
        self.quote = quote.model_copy(deep=True)
        self.done: list[Step] = []
        self.events: list[str] = []
        self.event_data: dict[str, dict[str, Any]] = {}
        self.account = _account_loader(ctx, quote.accountLocator, account)
        if quote.quoteState == QuoteState.DRAFT:
            version, self.model = current or configuration.current_model(ctx, resolved=True)
            self.quote.configVersion = version
        else:
            self.model = configuration.model(ctx, quote.configVersion, resolved=True)

    @property
    def subject(self) -> Subject:
        """The quote as it is now (the account read once, when a plugin first needs it)."""
        return _subject(self.ctx, self.quote, loader=self.account)

    def run(self, step: Step) -> None:
        getattr(self, f"_{step.value}")()
        self.done.append(step)
        self.events.append(step.value)

    def _validate(self) -> None:
        tree, result = evaluation.validate(self.ctx, self.model, self.subject, plugin=True)
        if not result.success:
            raise _Stop(result)
        self.quote.element = tree
        self.quote.validationResult = result
        self.quote.quoteState = QuoteState.VALIDATED

    def _price(self) -> None:
        subject = self.subject
        try:
            self.quote.charges = evaluation.price(self.ctx, self.model, subject)
        except PluginFailure as failure:
            raise _Stop(evaluation.failed(subject, failure)) from None
        self.quote.duration = subject.duration
        self.quote.quoteState = QuoteState.PRICED

    def _underwrite(self) -> None:
        subject = self.subject
        try:
            raised = evaluation.underwrite(self.ctx, subject)
        except PluginFailure as failure:
            raise _Stop(evaluation.failed(subject, failure)) from None
        flags = _plugin_flags(self.ctx, self.quote.flags, raised)
        outcome = underwriting_outcome([flag.level for flag in flags if not flag.cleared],
                                       already_rejected=self.original.quoteState == QuoteState.REJECTED)
        self.quote.flags = flags
        self.quote.underwritingStatus = outcome.status
        self.quote.quoteState = QuoteState(lifecycle.UNDERWRITING_RESULTS[outcome.result])
        self.event_data["underwrite"] = {"underwritingStatus": outcome.status}

    def _accept(self) -> None:
        self.quote.quoteState = QuoteState.ACCEPTED
        self.quote.acceptedTime = self.ctx.now

    def _issue(self) -> None:
        product = _product(self.model, self.quote.productName)
        if product.get("reservedPolicyNumberRequired") is True and not self.quote.reservedPolicyNumber:
            raise InvalidState(f"{self.quote.productName} policies need a reserved policy number before issue",
                               code="quote.reserved_policy_number_required")
        self.quote.quoteState = QuoteState.ISSUED
        self.quote.issuedTime = self.ctx.now


def _plugin_flags(ctx: CallContext, flags: list[Flag], raised: list[PluginFlag]) -> list[Flag]:
    """The flags after an underwriting run: the manual ones as they were; of the plugin's, those it
    raised now. A raised flag equal (level, element, note, tag) to one it raised before keeps that
    one, so a flag an underwriter cleared stays cleared; cleared plugin flags stay as history, and an
    uncleared one the plugin no longer raises goes."""
    previous = [flag for flag in flags if flag.source == "plugin"]
    kept: list[Flag] = []
    for flag in raised:
        same = next((old for old in previous if old not in kept and (old.level, old.elementLocator, old.note, old.tag)
                     == (flag.level, flag.element_locator, flag.note, flag.tag)), None)
        kept.append(same or Flag(locator=new_locator(), level=flag.level, note=flag.note, tag=flag.tag,
                                 elementLocator=flag.element_locator, source="plugin", createdBy=ctx.user_locator,
                                 createdTime=ctx.now))
    history = [flag for flag in previous if flag.cleared and flag not in kept]
    return [flag for flag in flags if flag.source == "manual"] + history + kept


def _add_policy(ctx: CallContext, uow: Any, model: dict[str, Any], quote: Quote) -> None:
    """Adds the policy to `uow` and records it on the quote (validation made sure it has an end)."""
    plan = (model.get("numberingPlans") or {}).get(_product(model, quote.productName).get("numberingPlan"))
    number = quote.reservedPolicyNumber or (
        quote.quoteNumber if isinstance(plan, dict) and plan.get("copyFromQuote") is True else None)
    fields = quote.model_dump(include=set(PolicyIssuance.model_fields), exclude_none=True)
    issued = policies.add_issued_policy(ctx, uow, PolicyIssuance(**{**fields, "quoteLocator": quote.locator,
                                                                     "policyNumber": number}))
    quote.policyLocator = issued.policyLocator
    quote.policyNumber = issued.policyNumber


def reset_quote(ctx: CallContext, locator: str, options: ResetOptions) -> Quote:
    """Back to draft without a price; flags stay unless the options clear or delete them."""
    quote = get_quote(ctx, locator)
    lifecycle.check_reset(quote.quoteState)
    wanted = {flag.locator for flag in quote.flags} if options.resetAllUnderwritingFlags else set(options.resetFlags)
    _check_flags_exist(quote, options.resetFlags, "resetFlags")
    if options.resetFlagsAction == "delete":
        flags = [flag for flag in quote.flags if flag.locator not in wanted]
    else:
        flags = [_cleared(ctx, flag) if flag.locator in wanted and not flag.cleared else flag for flag in quote.flags]
    reset = quote.model_copy(update={
        "quoteState": QuoteState.DRAFT, "charges": None, "underwritingStatus": None, "acceptedTime": None,
        "validationResult": None, "flags": flags})
    return _save(ctx, wiring.unit_of_work(ctx), reset, ["reset"])


def refuse_quote(ctx: CallContext, locator: str) -> Quote:
    quote = get_quote(ctx, locator)
    lifecycle.check_refuse(quote.quoteState)
    return _save(ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"quoteState": QuoteState.REFUSED}),
                 ["refuse"])


def discard_quote(ctx: CallContext, locator: str) -> Quote:
    quote = get_quote(ctx, locator)
    lifecycle.check_discard(quote.quoteState)
    return _save(ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"quoteState": QuoteState.DISCARDED}),
                 ["discard"])


# --- previews: a quote that does not exist, checked and priced, nothing stored ---------------------


def validate_preview(ctx: CallContext, fields: QuoteFields) -> Quote:
    return _preview(ctx, fields, Step.VALIDATE)


def price_preview(ctx: CallContext, fields: QuoteFields) -> Quote:
    return _preview(ctx, fields, Step.PRICE)


def _preview(ctx: CallContext, fields: QuoteFields, target: Step) -> Quote:
    version, model = configuration.current_model(ctx, resolved=True)
    quote, account = _new_quote(ctx, version, model, fields)
    quote = _checked(ctx, model, quote, account)
    runner = _Steps(ctx, quote, (version, model), account)
    try:
        for step in lifecycle.steps_to(quote.quoteState, target):
            runner.run(step)
    except _Stop as stop:
        return quote.model_copy(update={"validationResult": stop.result})
    return runner.quote


# --- underwriting flags ----------------------------------------------------------------------------


def change_flags(ctx: CallContext, locator: str, add: list[FlagInput], clear: list[str]) -> Quote:
    """Manual flags added and flags (manual or plugin) cleared; the quote's state is decided again when
    it is next underwritten (also by accept or issue). 404 `underwritingFlag.not_found` for a flag the
    quote does not have, 409 when it is cleared already."""
    quote = get_quote(ctx, locator)
    lifecycle.check_open(quote.quoteState, "change its underwriting flags")
    if quote.quoteState == QuoteState.ACCEPTED:
        raise InvalidState("An accepted quote's underwriting flags cannot change", code="quote.invalid_state")
    known = {element.locator for element in elements.walk(quote.element)}
    problems = [FieldError(f"addFlags[{i}].elementLocator", f"{flag.elementLocator} is not an element of the quote")
                for i, flag in enumerate(add) if flag.elementLocator and flag.elementLocator not in known]
    problems += [FieldError(f"addFlags[{i}].level", "is required") for i, flag in enumerate(add) if not flag.level]
    if problems:
        raise InvalidRequest("Invalid underwriting flags", code="quote.invalid_flag", field_errors=problems)
    _check_flags_exist(quote, clear, "clearFlags", not_found=True)
    doomed = set(clear)
    already = [flag.locator for flag in quote.flags if flag.locator in doomed and flag.cleared]
    if already:
        raise InvalidState(f"Underwriting flag {already[0]} is cleared already", code="underwritingFlag.cleared")
    flags = [_cleared(ctx, flag) if flag.locator in doomed else flag for flag in quote.flags]
    flags += [Flag(locator=new_locator(), level=flag.level, note=flag.note, tag=flag.tag,
                   elementLocator=flag.elementLocator, source="manual", createdBy=ctx.user_locator,
                   createdTime=ctx.now) for flag in add if flag.level]
    return _save(ctx, wiring.unit_of_work(ctx), quote.model_copy(update={"flags": flags}), ["manualunderwrite"])


def clear_flag(ctx: CallContext, locator: str, level: str, flag_locator: str) -> Quote:
    """Clears one flag of `level` (404 for a flag of another level or none)."""
    quote = get_quote(ctx, locator)
    if not any(flag.locator == flag_locator and flag.level == level for flag in quote.flags):
        raise NotFound("underwritingFlag", flag_locator)
    return change_flags(ctx, locator, [], [flag_locator])


def _check_flags_exist(quote: Quote, locators: Iterable[str], field: str, *, not_found: bool = False) -> None:
    known = {flag.locator for flag in quote.flags}
    unknown = [locator for locator in locators if locator not in known]
    if unknown and not_found:
        raise NotFound("underwritingFlag", unknown[0])
    if unknown:
        raise InvalidRequest("Unknown underwriting flag", code="quote.invalid_flag",
                             field_errors=[FieldError(field, f"{unknown[0]} is not a flag of the quote")])


def _cleared(ctx: CallContext, flag: Flag) -> Flag:
    return flag.model_copy(update={"clearedBy": ctx.user_locator, "clearedTime": ctx.now})


# --- numbers -------------------------------------------------------------------------------------


def set_number(ctx: CallContext, locator: str, quote_number: str) -> Quote:
    """A number chosen by the caller; 409 `quote.number_taken` when another quote has it."""
    _check_number(quote_number, "quoteNumber")
    quote = get_quote(ctx, locator)
    lifecycle.check_open(quote.quoteState, "be renumbered")
    if quote.quoteNumber == quote_number:
        return quote
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, ENTITY, quote_number, quote.locator)
    return _renumbered(ctx, uow, quote, quote_number)


def generate_number(ctx: CallContext, locator: str) -> Quote:
    """The next number of the product's plan, replacing the quote's (409 `quote.no_numbering_plan`)."""
    quote = get_quote(ctx, locator)
    lifecycle.check_open(quote.quoteState, "be renumbered")
    model = _model_of(ctx, quote)
    plan = _product(model, quote.productName).get("numberingPlan")
    if not plan:
        raise InvalidState(f"Product {quote.productName} has no numbering plan", code="quote.no_numbering_plan")
    uow = wiring.unit_of_work(ctx)
    number = numbers.reserve_number(ctx, uow, model, plan, ENTITY, quote.locator, product=quote.productName,
                                    region=quote.region)
    return _renumbered(ctx, uow, quote, number)


def set_reserved_policy_number(ctx: CallContext, locator: str, policy_number: str) -> Quote:
    """The number the policy will take on issue. It must not be a policy's number already, nor reserved
    by another quote (409 `quote.policy_number_taken`)."""
    _check_number(policy_number, "reservedPolicyNumber")
    quote = get_quote(ctx, locator)
    lifecycle.check_open(quote.quoteState, "reserve a policy number")
    if quote.reservedPolicyNumber == policy_number:
        return quote
    if numbers.number_owner(ctx, POLICY_ENTITY, policy_number) is not None \
            or numbers.number_owner(ctx, RESERVED_POLICY_NUMBER_KIND, policy_number) is not None:
        raise InvalidState(f"Policy number {policy_number} is in use or reserved", code="quote.policy_number_taken")
    uow = wiring.unit_of_work(ctx)
    numbers.claim_number(ctx, uow, RESERVED_POLICY_NUMBER_KIND, policy_number, quote.locator)
    if quote.reservedPolicyNumber is not None:
        numbers.release_number(ctx, uow, RESERVED_POLICY_NUMBER_KIND, quote.reservedPolicyNumber)
    return _save(ctx, uow, quote.model_copy(update={"reservedPolicyNumber": policy_number}), ["update"],
                 extra_events=[(NUMBER_ASSIGNED_EVENT, {"entityLocator": quote.locator})])


def _renumbered(ctx: CallContext, uow: Any, quote: Quote, number: str) -> Quote:
    if quote.quoteNumber is not None:
        numbers.release_number(ctx, uow, ENTITY, quote.quoteNumber)
    return _save(ctx, uow, quote.model_copy(update={"quoteNumber": number}), ["update"])


def _assign_number(ctx: CallContext, uow: Any, model: dict[str, Any], quote: Quote) -> None:
    """A number from the product's plan for a quote that has none yet (at creation or validation)."""
    plan = _product(model, quote.productName).get("numberingPlan")
    if plan and quote.quoteNumber is None:
        quote.quoteNumber = numbers.reserve_number(ctx, uow, model, plan, ENTITY, quote.locator,
                                                   product=quote.productName, region=quote.region)


def _check_number(number: str, field: str) -> None:
    if not 0 < len(number) <= MAX_NUMBER_LENGTH or not number.isprintable() or number != number.strip():
        raise InvalidRequest("Invalid number", field_errors=[FieldError(
            field, f"must be 1 to {MAX_NUMBER_LENGTH} printable characters without surrounding spaces")])


# --- static data ---------------------------------------------------------------------------------


def add_static(ctx: CallContext, locator: str, values: dict[str, Any]) -> Quote:
    quote = get_quote(ctx, locator)
    return _change_static(ctx, quote, {**quote.static, **values}, "add")


def replace_static(ctx: CallContext, locator: str, values: dict[str, Any]) -> Quote:
    return _change_static(ctx, get_quote(ctx, locator), values, "replace")


def update_static(ctx: CallContext, locator: str, set_data: dict[str, Any], remove_data: dict[str, Any]) -> Quote:
    quote = get_quote(ctx, locator)
    return _change_static(ctx, quote, elements.merged(quote.static, remove_data, set_data), "update")


def _change_static(ctx: CallContext, quote: Quote, static: dict[str, Any], action: str) -> Quote:
    """Static data changes in any state but discarded; each change is kept in the history."""
    if quote.quoteState == QuoteState.DISCARDED:
        raise InvalidState("A discarded quote's static data cannot change", code="quote.invalid_state")
    uow = wiring.unit_of_work(ctx)
    repository.add_static_history(uow, ctx.tenant, quote.locator, StaticHistoryEntry(
        historyLocator=new_locator(), staticData=static, updatedBy=ctx.user_locator, updatedAt=ctx.now))
    return _save(ctx, uow, quote.model_copy(update={"static": static}), [f"staticdata.{action}"])


# --- constraint tables ---------------------------------------------------------------------------


def evaluate_constraints(ctx: CallContext, locator: str,
                         values: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, list[str]]]:
    quote = get_quote(ctx, locator)
    return _evaluate(ctx, _model_of(ctx, quote), quote.element, values)


def constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    quote = get_quote(ctx, locator)
    return _dependencies(ctx, _model_of(ctx, quote), quote.element)


def _evaluate(ctx: CallContext, model: dict[str, Any], tree: Element,
              values: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, list[str]]]:
    """For each element with constrained fields (or those `values` names: element locator -> groups
    of field values, e.g. {"data": {...}}, merged), the options of its constrained fields given its
    stored values with the given ones over them."""
    found = {element.locator: (element, properties) for element, properties in evaluation.constrained(model, tree)}
    unknown = [key for key in values if key not in found]
    if unknown:
        raise InvalidRequest("Unknown element", code="quote.invalid_element", field_errors=[
            FieldError(key, "is not an element of the quote with constrained fields") for key in unknown])
    answer = {}
    for locator in list(values) or list(found):
        element, properties = found[locator]
        given = {name: value for group in (values.get(locator) or {}).values() for name, value in group.items()}
        data = {**evaluation.context_data(tree, element), **given}
        answer[locator] = tables.evaluate_constraints(ctx, properties, data)
    return answer


def _dependencies(ctx: CallContext, model: dict[str, Any], tree: Element) -> dict[str, dict[str, dict[str, Any]]]:
    """Per element with constrained fields: what each of them depends on; a condition's key names a
    field of the element's type, an ancestor's or the product's, and its staticLocator says which
    (the nearest element whose type has the field)."""
    answer = {}
    for element, properties in evaluation.constrained(model, tree):
        holders = [*elements.ancestors(tree, element.locator), element]
        static_locators = {}
        for prop in properties.values():
            where = ((prop.get("constraint") or {}).get("where") or {}) if isinstance(prop, dict) else {}
            for condition in where.values():
                key = condition.get("key") if isinstance(condition, dict) else None
                if isinstance(key, str):
                    holder = next((e for e in reversed(holders)
                                   if key.split(".")[0] in evaluation.type_properties(model, tree, e)), element)
                    static_locators[key] = holder.staticLocator
        answer[element.locator] = tables.constraint_dependencies(ctx, properties, static_locators=static_locators)
    return answer


# --- quick quotes --------------------------------------------------------------------------------


def get_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = repository.get_quick(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if quick is None:
        raise NotFound(QUICK_ENTITY, locator)
    return quick


def priced_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = get_quick_quote(ctx, locator)
    if quick.charges is None:
        raise InvalidState(f"Quick quote {locator} has not been priced", code="quickQuote.not_priced")
    return quick


def create_quick_quote(ctx: CallContext, fields: QuickQuoteFields) -> QuickQuote:
    version, model = configuration.current_model(ctx, resolved=True)
    product = _product(model, fields.productName, in_request=True)
    account = _account(ctx, fields.accountLocator) if fields.accountLocator else None
    if account is not None:
        _check_eligible(product, fields.productName, account)
    _check_references(model, fields, contacts=fields.contacts)
    zone = fields.timezone or (account.timezone if account else None) or _default_time_zone(model)
    basis = fields.durationBasis or product.get("defaultDurationBasis") or model.get("defaultDurationBasis") \
        or DEFAULT_DURATION_BASIS
    term = _positive(product.get("defaultTermDuration")) or _positive(model.get("defaultTermDuration"))
    start = _utc(fields.startTime) if fields.startTime else ctx.now
    end = _end(start, fields.endTime, term, basis, zone)
    quick = QuickQuote(
        locator=new_locator(), productName=fields.productName, accountLocator=fields.accountLocator,
        startTime=start, endTime=end, expirationTime=_utc(fields.expirationTime) if fields.expirationTime else None,
        timezone=zone, currency=fields.currency or model.get("defaultCurrency") or DEFAULT_CURRENCY,
        durationBasis=basis, duration=_duration(start, end, basis, zone), jurisdiction=fields.jurisdiction,
        element=elements.build_root(model, fields.productName, fields.data, fields.coverageTerms, fields.elements,
                                    new_locator),
        contacts=fields.contacts, configVersion=version, createdAt=ctx.now, createdBy=ctx.user_locator,
        updatedAt=ctx.now, updatedBy=ctx.user_locator)
    quick = _checked_quick(ctx, model, quick)
    uow = wiring.unit_of_work(ctx)
    _check_size(quick)
    repository.add_quick(uow, ctx.tenant, quick)
    uow.record_event(QUICK_EVENT + "create", {"quickQuoteLocator": quick.locator})
    uow.commit()
    return quick


def update_quick_quote(ctx: CallContext, locator: str, changes: QuickQuoteChanges) -> QuickQuote:
    """Any change sends a quick quote back to draft without a price."""
    quick = get_quick_quote(ctx, locator)
    if quick.quickQuoteState in lifecycle.QUICK_FINAL:
        raise InvalidState(f"A quick quote that is {quick.quickQuoteState} cannot change",
                           code="quickQuote.invalid_state")
    version, model = configuration.current_model(ctx, resolved=True)
    _check_references(model, changes, contacts=changes.setContacts)
    start = _utc(changes.startTime) if changes.startTime else quick.startTime
    end = _utc(changes.endTime) if changes.endTime else quick.endTime
    root = quick.element.model_copy(update={
        "data": elements.merged(quick.element.data, changes.removeData, changes.setData),
        "coverageTerms": elements.merged(quick.element.coverageTerms, changes.removeCoverageTerms,
                                         changes.setCoverageTerms)})
    changed = quick.model_copy(update={
        "quickQuoteState": QuickQuoteState.DRAFT, "charges": None, "startTime": start, "endTime": end,
        "duration": _duration(start, end, quick.durationBasis, quick.timezone),
        "element": elements.change_elements(root, changes.elements), "configVersion": version,
        "currency": changes.currency or quick.currency, "jurisdiction": changes.jurisdiction or quick.jurisdiction,
        "expirationTime": _utc(changes.expirationTime) if changes.expirationTime else quick.expirationTime,
        "contacts": _contacts(quick.contacts, changes.setContacts, changes.removeContacts)})
    return _save_quick(ctx, _checked_quick(ctx, model, changed), "update")


def validate_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    return _advance_quick(ctx, locator, Step.VALIDATE)


def price_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    return _advance_quick(ctx, locator, Step.PRICE)


def discard_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = get_quick_quote(ctx, locator)
    if quick.quickQuoteState in lifecycle.QUICK_FINAL:
        raise InvalidState(f"A quick quote that is {quick.quickQuoteState} cannot be discarded",
                           code="quickQuote.invalid_state")
    return _save_quick(ctx, quick.model_copy(update={"quickQuoteState": QuickQuoteState.DISCARDED}), "discard")


def evaluate_quick_constraints(ctx: CallContext, locator: str, values: Mapping[str, Mapping[str, Mapping[str, Any]]]
                               ) -> dict[str, dict[str, list[str]]]:
    quick = get_quick_quote(ctx, locator)
    return _evaluate(ctx, configuration.model(ctx, quick.configVersion, resolved=True), quick.element, values)


def quick_constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    quick = get_quick_quote(ctx, locator)
    return _dependencies(ctx, configuration.model(ctx, quick.configVersion, resolved=True), quick.element)


def _advance_quick(ctx: CallContext, locator: str, target: Step) -> QuickQuote:
    """Quick quotes are checked against the data model only (no validation plugin) and rated by the
    rating plugin; a failure answers the quick quote unchanged with the validationResult."""
    quick = get_quick_quote(ctx, locator)
    steps = lifecycle.quick_steps_to(quick.quickQuoteState, target)
    lifecycle.check_not_expired(quick.expirationTime, ctx.now)
    model = configuration.model(ctx, quick.configVersion, resolved=True)
    subject = _quick_subject(ctx, quick)
    working = quick.model_copy(deep=True)
    for step in steps:
        if step == Step.VALIDATE:
            tree, result = evaluation.validate(ctx, model, subject, plugin=False)
            if not result.success:
                return quick.model_copy(update={"validationResult": result})
            working.element, working.validationResult = tree, result
            working.quickQuoteState = QuickQuoteState.VALIDATED
        else:
            try:
                working.charges = evaluation.price(ctx, model, subject)
            except PluginFailure as failure:
                return quick.model_copy(update={"validationResult": evaluation.failed(subject, failure)})
            working.duration = subject.duration
            working.quickQuoteState = QuickQuoteState.PRICED
    return _save_quick(ctx, working, steps[-1].value, [step.value for step in steps[:-1]])


def _checked_quick(ctx: CallContext, model: dict[str, Any], quick: QuickQuote) -> QuickQuote:
    tree, result = evaluation.schema_result(ctx, model, _quick_subject(ctx, quick))
    return quick.model_copy(update={"element": tree, "validationResult": result})


def _quick_subject(ctx: CallContext, quick: QuickQuote) -> Subject:
    loader = _account_loader(ctx, quick.accountLocator, None) if quick.accountLocator \
        else (lambda: evaluation.NO_ACCOUNT)
    return Subject(locator=quick.locator, product=quick.productName, start=quick.startTime, end=quick.endTime,
                   currency=quick.currency, timezone=quick.timezone, basis=quick.durationBasis, element=quick.element,
                   static={}, jurisdiction=quick.jurisdiction, config_version=quick.configVersion, account=loader)


def _save_quick(ctx: CallContext, quick: QuickQuote, action: str, earlier: Iterable[str] = ()) -> QuickQuote:
    _check_size(quick)
    changed = quick.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})
    uow = wiring.unit_of_work(ctx)
    repository.save_quick(uow, ctx.tenant, changed)
    for name in [*earlier, action]:
        uow.record_event(QUICK_EVENT + name, {"quickQuoteLocator": quick.locator})
    uow.commit()
    return changed.model_copy(update={"version": quick.version + 1})


# --- helpers ---------------------------------------------------------------------------------------


def _subject(ctx: CallContext, quote: Quote, account: Account | None = None, *,
             loader: Callable[[], Mapping[str, Any]] | None = None) -> Subject:
    return Subject(locator=quote.locator, product=quote.productName, start=quote.startTime, end=quote.endTime,
                   currency=quote.currency, timezone=quote.timezone, basis=quote.durationBasis, element=quote.element,
                   static=quote.static, jurisdiction=quote.jurisdiction, config_version=quote.configVersion,
                   account=loader or _account_loader(ctx, quote.accountLocator, account))


def _account_loader(ctx: CallContext, locator: str, known: Account | None) -> Callable[[], Mapping[str, Any]]:
    """The plugin request's account, read when first asked for."""
    loaded: list[Account] = [known] if known is not None else []

    def load() -> Mapping[str, Any]:
        if not loaded:
            loaded.append(accounts.get_account(ctx, locator))
        return {"locator": loaded[0].locator, "type": loaded[0].type, "data": loaded[0].data}

    return load


def _model_of(ctx: CallContext, quote: Quote) -> dict[str, Any]:
    """The model a quote is checked against: the current one for a draft, else the bound version."""
    if quote.quoteState == QuoteState.DRAFT:
        return configuration.current_model(ctx, resolved=True)[1]
    return configuration.model(ctx, quote.configVersion, resolved=True)


def _product(model: dict[str, Any], name: str, *, in_request: bool = False) -> dict[str, Any]:
    """The resolved product. A request naming an unknown or abstract product is a 400; an existing
    quote whose product the configuration no longer has is a 409."""
    definition = (model.get("products") or {}).get(name)
    if isinstance(definition, dict) and definition.get("abstract") is not True:
        return definition
    what = "is not a configured product" if not isinstance(definition, dict) else "is abstract"
    if not in_request:
        raise InvalidState(f"Product {name} {what} in this configuration", code="quote.product_not_configured")
    code = "quote.unknown_product" if not isinstance(definition, dict) else "quote.abstract_product"
    raise InvalidRequest(f"Product {name} {what}", code=code, field_errors=[FieldError("productName", what)])


def _account(ctx: CallContext, locator: str) -> Account:
    """The account a request names (400 when this tenant has none with that locator)."""
    try:
        return accounts.get_account(ctx, locator)
    except NotFound:
        raise InvalidRequest(f"Account {locator} does not exist", code="quote.unknown_account",
                             field_errors=[FieldError("accountLocator", "is not an account of this tenant")]) from None


def _check_eligible(product: dict[str, Any], name: str, account: Account) -> None:
    eligible = product.get("eligibleAccountTypes") or []
    if eligible and account.type not in eligible:
        raise InvalidRequest(f"Product {name} is not available to {account.type} accounts",
                             code="quote.account_not_eligible", field_errors=[FieldError(
                                 "accountLocator", f"its type {account.type} is not among {', '.join(eligible)}")])


def _check_references(model: dict[str, Any], fields: Any, *, contacts: list[ContactRole]) -> None:
    """What the request names must exist: plans, the region, the time zone, contact roles."""
    problems = []
    for name, collection in PLAN_REFERENCES.items():
        value = getattr(fields, name, None)
        if value is not None and value not in (model.get(collection) or {}):
            problems.append(FieldError(name, f"'{value}' is not defined in the configuration's {collection}"))
    preferences = getattr(fields, "preferences", None)
    plan = preferences.installmentPreferences.installmentPlanName \
        if preferences is not None and preferences.installmentPreferences is not None else None
    if plan is not None and plan not in (model.get("installmentPlans") or {}):
        problems.append(FieldError("preferences.installmentPreferences.installmentPlanName",
                                   f"'{plan}' is not defined in the configuration's installmentPlans"))
    zone = getattr(fields, "timezone", None)
    if zone is not None and not _is_time_zone(zone):
        problems.append(FieldError("timezone", f"'{zone}' is not an IANA time zone"))
    configured = model.get("contactRoles") or []
    seen: set[str] = set()
    for index, contact in enumerate(contacts):
        if contact.contactLocator in seen:
            problems.append(FieldError(f"contacts.{index}.contactLocator", "is listed more than once"))
        seen.add(contact.contactLocator)
        unknown = [role for role in contact.roles if configured and role not in configured]
        if unknown:
            problems.append(FieldError(f"contacts.{index}.roles", f"{', '.join(unknown)} not in the configured "
                                                                  f"contactRoles: {', '.join(configured)}"))
    if problems:
        raise InvalidRequest("The quote names something the configuration does not have",
                             code="quote.invalid_reference", field_errors=problems)


def _contacts(current: list[ContactRole], setting: list[ContactRole], removing: list[str]) -> list[ContactRole]:
    """`setting` replaces the roles of contacts it names and adds the others; `removing` drops."""
    given = {contact.contactLocator: contact for contact in setting}
    known = {contact.contactLocator for contact in current}
    merged = [given.get(contact.contactLocator, contact) for contact in current]
    merged += [contact for contact in setting if contact.contactLocator not in known]
    return [contact for contact in merged if contact.contactLocator not in removing]


def _installment_plan(model: dict[str, Any], product: str, preferences: dict[str, Any]) -> str | None:
    chosen = (preferences.get("installmentPreferences") or {}).get("installmentPlanName")
    return chosen or _product(model, product).get("defaultInstallmentPlan") or model.get("defaultInstallmentPlan")


def _default_time_zone(model: dict[str, Any]) -> str:
    zone = model.get("defaultTimeZone")
    return zone if isinstance(zone, str) and _is_time_zone(zone) else DEFAULT_TIME_ZONE


def _default_billing_level(model: dict[str, Any]) -> BillingLevel:
    level = model.get("defaultBillingLevel")
    return BillingLevel(level) if level in {member.value for member in BillingLevel} else BillingLevel.ACCOUNT


def _is_time_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _positive(value: Any) -> Decimal | None:
    """A configured term duration: a positive number, else none (real packages say 0 for none)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        return None
    return Decimal(value) if value > 0 else None


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def _end(start: datetime, end: datetime | None, term: Decimal | int | None, basis: str, zone: str) -> datetime | None:
    if end is not None:
        return _utc(end)
    return durations.add(start, term, basis, zone) if term else None


def _duration(start: datetime, end: datetime | None, basis: str, zone: str) -> Decimal | None:
    return durations.duration(start, end, basis, zone) if end is not None and end >= start else None


def _touched(ctx: CallContext, quote: Quote) -> Quote:
    return quote.model_copy(update={"updatedAt": ctx.now, "updatedBy": ctx.user_locator})


def _save(ctx: CallContext, uow: Any, quote: Quote, actions: list[str],
          event_data: dict[str, dict[str, Any]] | None = None,
          extra_events: list[tuple[str, dict[str, Any]]] = ()) -> Quote:
    """Writes the changed quote (conditional on the version it was read at) with its events."""
    _check_size(quote)
    quote = _touched(ctx, quote)
    repository.save(uow, ctx.tenant, quote)
    for action in actions:
        uow.record_event(EVENT + action, {"quoteLocator": quote.locator, **(event_data or {}).get(action, {})})
    for event_type, data in extra_events:
        uow.record_event(event_type, data)
    uow.commit()
    return quote.model_copy(update={"version": quote.version + 1})


def _commit(uow: Any, quote: Quote, actions: list[str]) -> None:
    for action in actions:
        uow.record_event(EVENT + action, {"quoteLocator": quote.locator})
    uow.commit()


def _check_size(record: Quote | QuickQuote) -> None:
    size = len(record.model_dump_json())
    if size > MAX_RECORD_BYTES:
        raise PayloadTooLarge(f"The quote would take {size} bytes; at most {MAX_RECORD_BYTES} are allowed",
                              code="quote.too_large")
