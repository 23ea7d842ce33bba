"""Quick quotes: a product priced without the quote lifecycle. A quick quote needs no account (when it
names one, the product must be eligible for it); it takes the same defaults a quote does (currency,
time zone, durationBasis, the product's term from its start, else now). Any change sends it back to
draft without a price. Validating checks the data model only (no validation plugin); pricing runs the
rating plugin. A step that fails answers the quick quote unchanged with its validationResult. Each
change records `policy.quickquote.create|update|validate|price|discard`, which the platform's
catalogue lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chalicelib.accounts import service as accounts
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core import contacts as contact_list
from chalicelib.core.clock import utc
from chalicelib.core.context import CallContext
from chalicelib.core.ids import new_locator
from chalicelib.priceable import checks, elements, evaluation
from chalicelib.priceable.evaluation import Evaluation
from chalicelib.priceable.runner import PRICE, VALIDATE, Runner, StepFailed
from chalicelib.priceable.subject import NO_ACCOUNT, Subject, account_view, new_span, quote_subject, span_duration
from chalicelib.quickquotes import repository
from chalicelib.quickquotes.lifecycle import ERRORS, LIFECYCLE
from chalicelib.quickquotes.models import (
    ENTITY,
    QuickQuote,
    QuickQuoteChanges,
    QuickQuoteFields,
    QuickQuoteState,
)
from chalicelib.runtime import versioned, wiring

EVENT = "policy.quickquote."
MAX_LOCATOR_LENGTH = 64


def get_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = repository.get(ctx.tenant, locator) if 0 < len(locator) <= MAX_LOCATOR_LENGTH else None
    if quick is None:
        raise codes.not_found(ENTITY, locator)
    return quick


def priced_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = get_quick_quote(ctx, locator)
    if quick.charges is None:
        raise codes.NOT_PRICED["quickQuote"](f"Quick quote {locator} has not been priced")
    return quick


def create_quick_quote(ctx: CallContext, fields: QuickQuoteFields) -> QuickQuote:
    version, model = configuration.current_model(ctx, resolved=True)
    product = checks.configured_product(model, fields.productName, ERRORS, in_request=True)
    account = (
        accounts.named_account(ctx, fields.accountLocator, codes.QUOTE_UNKNOWN_ACCOUNT)
        if fields.accountLocator
        else None
    )
    if account is not None:
        checks.check_eligible(product, fields.productName, account.type, ERRORS)
    checks.check_references(model, fields, fields.contacts, ERRORS)
    zone = fields.timezone or (account.timezone if account else None) or checks.default_time_zone(model)
    basis = fields.durationBasis or product.duration_basis
    start = utc(fields.startTime) if fields.startTime else ctx.now
    quick = QuickQuote(
        locator=new_locator(),
        productName=fields.productName,
        accountLocator=fields.accountLocator,
        **new_span(start, fields, product.term_duration, basis, zone),
        currency=fields.currency or checks.default_currency(model),
        jurisdiction=fields.jurisdiction,
        element=elements.build_root(
            evaluation.catalog(model),
            fields.productName,
            fields.data,
            fields.coverageTerms,
            fields.elements,
            new_locator,
            entity=ERRORS,
        ),
        contacts=fields.contacts,
        configVersion=version,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    quick = _checked(ctx, model, quick)
    uow = wiring.unit_of_work(ctx)
    checks.check_size(quick, ERRORS)
    repository.add(uow, ctx.tenant, quick)
    uow.record_event(EVENT + "create", {"quickQuoteLocator": quick.locator})
    uow.commit()
    return quick


def update_quick_quote(ctx: CallContext, locator: str, changes: QuickQuoteChanges) -> QuickQuote:
    """Any change sends a quick quote back to draft without a price."""
    quick = get_quick_quote(ctx, locator)
    LIFECYCLE.check(quick.quickQuoteState, "change")
    version, model = configuration.current_model(ctx, resolved=True)
    checks.check_references(model, changes, changes.setContacts, ERRORS)
    start = utc(changes.startTime) if changes.startTime else quick.startTime
    end = utc(changes.endTime) if changes.endTime else quick.endTime
    root = quick.element.model_copy(
        update={
            "data": elements.merged(quick.element.data, changes.removeData, changes.setData),
            "coverageTerms": elements.merged(
                quick.element.coverageTerms, changes.removeCoverageTerms, changes.setCoverageTerms
            ),
        }
    )
    changed = quick.model_copy(
        update={
            "quickQuoteState": QuickQuoteState.DRAFT,
            "charges": None,
            "startTime": start,
            "endTime": end,
            "duration": span_duration(start, end, quick.durationBasis, quick.timezone),
            "element": elements.change_elements(root, changes.elements, entity=ERRORS),
            "configVersion": version,
            "currency": changes.currency or quick.currency,
            "jurisdiction": changes.jurisdiction or quick.jurisdiction,
            "expirationTime": utc(changes.expirationTime) if changes.expirationTime else quick.expirationTime,
            "contacts": contact_list.merged(quick.contacts, changes.setContacts, changes.removeContacts),
        }
    )
    return _save(ctx, _checked(ctx, model, changed), ["update"])


def validate_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    return _advance(ctx, locator, VALIDATE)


def price_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    return _advance(ctx, locator, PRICE)


def discard_quick_quote(ctx: CallContext, locator: str) -> QuickQuote:
    quick = get_quick_quote(ctx, locator)
    LIFECYCLE.check(quick.quickQuoteState, "be discarded")
    return _save(ctx, quick.model_copy(update={"quickQuoteState": QuickQuoteState.DISCARDED}), ["discard"])


def evaluate_constraints(
    ctx: CallContext, locator: str, values: Mapping[str, Mapping[str, Mapping[str, Any]]]
) -> dict[str, dict[str, list[str]]]:
    quick = get_quick_quote(ctx, locator)
    model = configuration.model(ctx, quick.configVersion, resolved=True)
    return evaluation.evaluate_constraints(ctx, model, quick.element, values, ERRORS)


def constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    quick = get_quick_quote(ctx, locator)
    return evaluation.constraint_dependencies(
        ctx, configuration.model(ctx, quick.configVersion, resolved=True), quick.element
    )


def _advance(ctx: CallContext, locator: str, target: str) -> QuickQuote:
    quick = get_quick_quote(ctx, locator)
    steps = LIFECYCLE.steps_to(quick.quickQuoteState, target)
    LIFECYCLE.check_not_expired(quick.expirationTime, ctx.now)
    model = configuration.model(ctx, quick.configVersion, resolved=True)
    subject = _subject(ctx, quick)
    runner = Runner(LIFECYCLE, quick, Evaluation(ctx, model, plugin_validation=False), lambda _: subject)
    try:
        runner.run(steps)
    except StepFailed as stop:
        return quick.model_copy(update={"validationResult": stop.result})
    return _save(ctx, runner.record, runner.done)


def _checked(ctx: CallContext, model: dict[str, Any], quick: QuickQuote) -> QuickQuote:
    tree, result = evaluation.schema_result(ctx, model, _subject(ctx, quick))
    return quick.model_copy(update={"element": tree, "validationResult": result})


def _subject(ctx: CallContext, quick: QuickQuote) -> Subject:
    locator = quick.accountLocator
    return quote_subject(
        quick, {}, account_view(lambda: accounts.get_account(ctx, locator)) if locator else lambda: NO_ACCOUNT
    )


def _save(ctx: CallContext, quick: QuickQuote, actions: Iterable[str]) -> QuickQuote:
    return versioned.save(
        ctx,
        wiring.unit_of_work(ctx),
        quick,
        repository.save,
        [(EVENT + action, {"quickQuoteLocator": quick.locator}) for action in actions],
        code=ERRORS.code,
        noun=ERRORS.noun,
    )
