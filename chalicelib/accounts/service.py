"""Accounts: created from the tenant's deployed configuration, updated, validated, numbered.

Lifecycle (spec part 2; docs.socotra.com, accounts): an account is created `draft`; `validate` moves it
to `validated` when its data passes, and a validated account never returns to draft. Data is checked
by configuration/datamodel.py against the account type with inheritance resolved; what fails lands in
the account's `validationResult` (DECISIONS.md, Errors), not in a 4xx:

- a draft stores what it is given (normalised where valid) with the result of the check;
- a validated account may be updated, but only into data that passes: an update that fails changes
  nothing and answers 200 with the account as it is plus the failed `validationResult`;
- `validate` (or `autoValidate` on create/update) that fails changes nothing either: 200, `draft`, and
  the `validationResult` saying why.

An unknown or abstract account type, an unknown plan, document or region name, a role outside the
tenant's `contactRoles`, or an unknown time zone in a request body is a 400 (the request names
something that does not exist; nothing is stored). `discarded` exists in the state enum only: no
operation of the API discards an account.

Numbering: the account type's `numberingPlan` numbers an account at creation (`numberingTrigger:
creation`) or when it is first validated (`validation`, the default); a validated account without a
number gets one then whatever the trigger. Without a plan an account has no number until one is set
(`accountNumber` answers ""). Numbers are unique per tenant (configuration/numbers.py).

Every change bumps the account's `version` (optimistic lock: a concurrent change answers 409) and
records `policy.account.create|update|validate` with `{"accountLocator"}` in the same transaction.
"""

from __future__ import annotations

import zoneinfo
from datetime import datetime
from typing import Any

from chalicelib.accounts import repository
from chalicelib.accounts.models import (
    ENTITY,
    PLAN_REFERENCES,
    Account,
    AccountChanges,
    AccountFields,
    AccountState,
    BillingLevel,
    ContactRole,
)
from chalicelib.configuration import datamodel, numbers
from chalicelib.configuration import service as configuration
from chalicelib.core import codes
from chalicelib.core import contacts as contact_list
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, ErrorCode, FieldError, NotFound
from chalicelib.core.ids import new_locator
from chalicelib.core.paging import Page, PageRequest
from chalicelib.core.records import check_size
from chalicelib.runtime import versioned, wiring
from chalicelib.runtime.wiring import UnitOfWork
from chalicelib.tables import service as tables

CREATE_EVENT = "policy.account.create"
UPDATE_EVENT = "policy.account.update"
VALIDATE_EVENT = "policy.account.validate"
DEFAULT_TIME_ZONE = "UTC"
MAX_LOCATOR_LENGTH = 64


# --- reading -------------------------------------------------------------------------------------


def get_account(ctx: CallContext, locator: str) -> Account:
    """The account (404 `account.not_found` when this tenant has none with that locator); read once per
    request (CallContext.reads, until the request commits a write)."""
    account = (
        ctx.reads.read(
            _read_key(ctx, locator),
            lambda: repository.get(ctx.tenant, locator),
            record=repository.record_key(ctx.tenant, locator),
        )
        if 0 < len(locator) <= MAX_LOCATOR_LENGTH
        else None
    )
    if account is None:
        raise codes.not_found(ENTITY, locator)
    return account.model_copy(deep=True)


def named_account(ctx: CallContext, locator: str, unknown: ErrorCode) -> Account:
    """The account a request body names: `unknown` (the caller's 400, on `accountLocator`) instead of the
    404 when this tenant has none with that locator."""
    try:
        return get_account(ctx, locator)
    except NotFound:
        raise unknown(
            f"Account {locator} does not exist",
            field_errors=[FieldError("accountLocator", "is not an account of this tenant")],
        ) from None


def get_account_with(
    ctx: CallContext, locator: str, also: list[tuple[str, str]]
) -> tuple[Account, dict[tuple[str, str], dict[str, Any]]]:
    """`get_account`, and the stored items among `also` (other records of the tenant by (PK, SK), which their
    own domains parse), read with it in one BatchGetItem: a caller that needs the account and a few records
    by key pays one round trip (the account from the request's reads when it has it)."""
    if not 0 < len(locator) <= MAX_LOCATOR_LENGTH:
        raise codes.not_found(ENTITY, locator)
    account: Account | None = ctx.reads.get(_read_key(ctx, locator))
    if account is not None:
        return account.model_copy(deep=True), repository.get_with(ctx.tenant, None, also)[1]
    account, found = repository.get_with(ctx.tenant, locator, also)
    if account is None:
        raise codes.not_found(ENTITY, locator)
    ctx.reads.put(_read_key(ctx, locator), account, record=repository.record_key(ctx.tenant, locator))
    return account.model_copy(deep=True), found


def accounts_by_locator(ctx: CallContext, locators: list[str]) -> dict[str, Account]:
    """The tenant's accounts among `locators`, read together (one BatchGetItem per 100, for those the
    request has not read yet); unknown ones are left out."""
    plausible = [locator for locator in dict.fromkeys(locators) if 0 < len(locator) <= MAX_LOCATOR_LENGTH]
    known = {locator: ctx.reads.get(_read_key(ctx, locator)) for locator in plausible}
    unread = [locator for locator, account in known.items() if account is None]
    for account in repository.get_many(ctx.tenant, unread) if unread else []:
        ctx.reads.put(
            _read_key(ctx, account.locator), account, record=repository.record_key(ctx.tenant, account.locator)
        )
        known[account.locator] = account
    return {locator: account.model_copy(deep=True) for locator, account in known.items() if account is not None}


def _read_key(ctx: CallContext, locator: str) -> tuple[str, str, str]:
    return ENTITY, ctx.tenant, locator


def list_accounts(ctx: CallContext, page: PageRequest) -> Page[Account]:
    """The tenant's accounts, oldest first."""
    return repository.list_accounts(ctx.tenant, page)


def accounts_with_number(ctx: CallContext, account_number: str) -> list[Account]:
    """The account holding `account_number` (a one-item list: numbers are unique); 404 when none does."""
    owner = numbers.number_owner(ctx, ENTITY, account_number)
    account = repository.get(ctx.tenant, owner) if owner else None
    if account is None:
        raise codes.not_found(ENTITY, account_number)
    return [account]


def contacts(ctx: CallContext, locator: str) -> list[ContactRole]:
    return get_account(ctx, locator).contacts


def evaluate_constraints(
    ctx: CallContext, locator: str, values: dict[str, dict[str, Any]]
) -> dict[str, dict[str, list[str]]]:
    """The options of the account's constrained fields: for each entry of `values` (keyed by the
    record it is about, the account's locator), given the account's data with that entry's values over
    it; with no entry, given the account's data as stored."""
    account = get_account(ctx, locator)
    _, model = configuration.current_model(ctx, resolved=True)
    properties = _account_type(model, account.type, in_request=False).get("data") or {}
    given = values or {account.locator: {}}
    return {
        key: tables.evaluate_constraints(ctx, properties, {**account.data, **entry}) for key, entry in given.items()
    }


def constraint_dependencies(ctx: CallContext, locator: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Which fields each constrained field of the account depends on, under the account's locator
    (every field it reads is the account's own)."""
    account = get_account(ctx, locator)
    _, model = configuration.current_model(ctx, resolved=True)
    properties = _account_type(model, account.type, in_request=False).get("data") or {}
    keys = {
        condition.get("key")
        for prop in properties.values()
        if isinstance(prop, dict)
        for condition in ((prop.get("constraint") or {}).get("where") or {}).values()
        if isinstance(condition, dict)
    }
    static_locators = {key: account.locator for key in keys if isinstance(key, str)}
    return {account.locator: tables.constraint_dependencies(ctx, properties, static_locators=static_locators)}


# --- creating and changing -------------------------------------------------------------------------


def create_account(ctx: CallContext, fields: AccountFields, *, auto_validate: bool = False) -> Account:
    config_version, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, fields.type, in_request=True)
    _check_references(model, fields)
    account = Account(
        locator=new_locator(),
        type=fields.type,
        accountState=AccountState.DRAFT,
        billingLevel=fields.billingLevel or _default_billing_level(model),
        data=fields.data,
        contacts=fields.contacts,
        preferences=fields.preferences,
        timezone=fields.timezone or _default_time_zone(model),
        **{name: getattr(fields, name) for name in PLAN_REFERENCES},
        configVersion=config_version,
        createdAt=ctx.now,
        createdBy=ctx.user_locator,
        updatedAt=ctx.now,
        updatedBy=ctx.user_locator,
    )
    account = _checked(ctx, model, account_type, account)
    uow = wiring.unit_of_work(ctx)
    events = [CREATE_EVENT]
    if auto_validate and _passes(account):
        account.accountState = AccountState.VALIDATED
        events.append(VALIDATE_EVENT)
    if account_type.get("numberingTrigger") == "creation" or account.accountState == AccountState.VALIDATED:
        _assign_number(ctx, uow, model, account_type, account)
    check_size(account, code=ENTITY, noun=ENTITY)
    repository.add(uow, ctx.tenant, account)
    for event in events:
        uow.record_event(event, {"accountLocator": account.locator})
    uow.commit()
    return account


def replace_account(ctx: CallContext, locator: str, fields: AccountFields, *, auto_validate: bool = False) -> Account:
    """PUT: every client-set field replaced (left out: back to its default), data included."""
    account = get_account(ctx, locator)
    config_version, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, fields.type, in_request=True)
    _check_references(model, fields)
    changed = account.model_copy(
        update={
            "type": fields.type,
            "data": fields.data,
            "billingLevel": fields.billingLevel or _default_billing_level(model),
            "contacts": fields.contacts,
            "preferences": fields.preferences,
            "timezone": fields.timezone or _default_time_zone(model),
            **{name: getattr(fields, name) for name in PLAN_REFERENCES},
            "configVersion": config_version,
        }
    )
    return _change_data(ctx, model, account_type, account, changed, auto_validate)


def update_account(ctx: CallContext, locator: str, changes: AccountChanges, *, auto_validate: bool = False) -> Account:
    """PATCH: the given fields set, data entries removed (`removeData`) then set (`setData`)."""
    account = get_account(ctx, locator)
    config_version, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, changes.type or account.type, in_request=changes.type is not None)
    _check_references(model, changes)
    data = {name: value for name, value in account.data.items() if name not in changes.removeData}
    data.update(changes.setData)
    given = {
        name: getattr(changes, name)
        for name in AccountChanges.model_fields
        if name not in ("setData", "removeData") and getattr(changes, name) is not None
    }
    changed = account.model_copy(update={**given, "data": data, "configVersion": config_version})
    return _change_data(ctx, model, account_type, account, changed, auto_validate)


def validate_account(ctx: CallContext, locator: str) -> Account:
    """Checks the account against the current configuration: `validated` when it passes (numbered
    now if its plan numbers on validation), else unchanged with the failed `validationResult`."""
    account = get_account(ctx, locator)
    config_version, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, account.type, in_request=False)
    checked = _checked(ctx, model, account_type, account.model_copy(update={"configVersion": config_version}))
    if not _passes(checked):
        return account.model_copy(update={"validationResult": checked.validationResult})
    checked.accountState = AccountState.VALIDATED
    uow = wiring.unit_of_work(ctx)
    _assign_number(ctx, uow, model, account_type, checked)
    return _save(ctx, uow, checked, [VALIDATE_EVENT])


def set_billing_level(ctx: CallContext, locator: str, billing_level: BillingLevel) -> Account:
    account = get_account(ctx, locator)
    return _save(
        ctx, wiring.unit_of_work(ctx), account.model_copy(update={"billingLevel": billing_level}), [UPDATE_EVENT]
    )


def add_contact(ctx: CallContext, locator: str, contact: ContactRole) -> Account:
    """409 `account.contact_exists` when the contact is on the account already (change its roles
    with `update_contact`)."""
    account = get_account(ctx, locator)
    _, model = configuration.current_model(ctx)
    _check_roles(model, contact.roles, "roles")
    changed = contact_list.added(account.contacts, contact, code=ENTITY, noun=ENTITY)
    return _save(ctx, wiring.unit_of_work(ctx), account.model_copy(update={"contacts": changed}), [UPDATE_EVENT])


def update_contact(
    ctx: CallContext, locator: str, contact_locator: str, *, add_roles: list[str], remove_roles: list[str]
) -> Account:
    account = get_account(ctx, locator)
    changed = contact_list.with_roles(account.contacts, contact_locator, add_roles=add_roles, remove_roles=remove_roles)
    _, model = configuration.current_model(ctx)
    _check_roles(model, add_roles, "addRoles")
    return _save(ctx, wiring.unit_of_work(ctx), account.model_copy(update={"contacts": changed}), [UPDATE_EVENT])


def delete_contact(ctx: CallContext, locator: str, contact_locator: str) -> Account:
    account = get_account(ctx, locator)
    changed = contact_list.removed(account.contacts, contact_locator)
    return _save(ctx, wiring.unit_of_work(ctx), account.model_copy(update={"contacts": changed}), [UPDATE_EVENT])


def set_number(ctx: CallContext, locator: str, account_number: str) -> Account:
    """A number chosen by the caller; 409 `account.number_taken` when another account has it."""
    numbers.check_chosen(account_number, field="accountNumber", what="account number")
    account = get_account(ctx, locator)
    if account.accountNumber == account_number:
        return account
    return _renumbered(ctx, account, account_number)


def generate_number(ctx: CallContext, locator: str) -> Account:
    """The next number of the account type's plan, replacing the account's number (if any);
    409 `account.no_numbering_plan` when the type has no plan."""
    account = get_account(ctx, locator)
    _, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, account.type, in_request=False)
    plan = account_type.get("numberingPlan")
    if not plan:
        raise codes.NO_NUMBERING_PLAN["account"](f"Account type {account.type} has no numbering plan")
    return _renumbered(ctx, account, numbers.NextOfPlan(model, plan, region=account.region))


# --- migration (chalicelib/migration: accounts brought from another system) --------------------------


def migrated_account(
    ctx: CallContext, fields: AccountFields, *, locator: str, created_at: datetime, created_by: str
) -> Account:
    """The account a migration brings, as it would be stored (not stored): its locator and creation given,
    its data checked (`validationResult`). A type or reference the configuration does not have raises as
    `create_account` does; `validated` when its data passes."""
    config_version, model = configuration.current_model(ctx, resolved=True)
    account_type = _account_type(model, fields.type, in_request=True)
    _check_references(model, fields)
    account = Account(
        locator=locator,
        type=fields.type,
        accountState=AccountState.VALIDATED,
        billingLevel=fields.billingLevel or _default_billing_level(model),
        data=fields.data,
        contacts=fields.contacts,
        preferences=fields.preferences,
        timezone=fields.timezone or _default_time_zone(model),
        **{name: getattr(fields, name) for name in PLAN_REFERENCES},
        configVersion=config_version,
        createdAt=created_at,
        createdBy=created_by,
        updatedAt=created_at,
        updatedBy=created_by,
    )
    return _checked(ctx, model, account_type, account)


def add_migrated_account(ctx: CallContext, uow: UnitOfWork, account: Account) -> None:
    """Adds a migrated account (`migrated_account`, whose data passed) to `uow`, numbered by its type's plan."""
    _, model = configuration.current_model(ctx, resolved=True)
    _assign_number(ctx, uow, model, _account_type(model, account.type, in_request=False), account)
    check_size(account, code=ENTITY, noun=ENTITY)
    repository.add(uow, ctx.tenant, account)


# --- helpers ---------------------------------------------------------------------------------------


def _account_type(model: dict[str, Any], name: str, *, in_request: bool) -> dict[str, Any]:
    """The resolved account type. A request naming an unknown or abstract type is a 400; an existing
    account whose type the current configuration no longer has is a 409."""
    definition = (model.get("accounts") or {}).get(name)
    if isinstance(definition, dict) and definition.get("abstract") is not True:
        return definition
    what = "is not a configured account type" if not isinstance(definition, dict) else "is abstract"
    if not in_request:
        raise codes.ACCOUNT_TYPE_NOT_CONFIGURED(f"Account type {name} {what} in the current configuration")
    code = codes.ACCOUNT_UNKNOWN_TYPE if not isinstance(definition, dict) else codes.ACCOUNT_ABSTRACT_TYPE
    raise code(f"Account type {name} {what}", field_errors=[FieldError("type", what)])


def _check_references(model: dict[str, Any], fields: AccountFields | AccountChanges) -> None:
    """What the request names must exist: plans, documents, regions, the time zone, contact roles."""
    problems = []
    contact_roles = getattr(fields, "contacts", [])
    for name, collection in PLAN_REFERENCES.items():
        value = getattr(fields, name, None)
        if value is not None and value not in (model.get(collection) or {}):
            problems.append(FieldError(name, f"'{value}' is not defined in the configuration's {collection}"))
    if fields.timezone is not None and not _is_time_zone(fields.timezone):
        problems.append(FieldError("timezone", f"'{fields.timezone}' is not an IANA time zone"))
    problems += contact_list.problems(contact_roles)
    if problems:
        raise codes.INVALID_REFERENCE["account"](
            "The account names something the configuration does not have", field_errors=problems
        )
    for index, contact in enumerate(contact_roles):
        _check_roles(model, contact.roles, f"contacts.{index}.roles")


def _check_roles(model: dict[str, Any], roles: list[str], field: str) -> None:
    """Roles must be among the tenant's `contactRoles` when the configuration lists any."""
    contact_list.check_roles(model.get("contactRoles") or [], roles, field, code=ENTITY)


def _is_time_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _default_time_zone(model: dict[str, Any]) -> str:
    zone = model.get("defaultTimeZone")
    return zone if isinstance(zone, str) and _is_time_zone(zone) else DEFAULT_TIME_ZONE


def _default_billing_level(model: dict[str, Any]) -> BillingLevel:
    level = model.get("defaultBillingLevel")
    return BillingLevel(level) if level in {member.value for member in BillingLevel} else BillingLevel.ACCOUNT


def _checked(ctx: CallContext, model: dict[str, Any], account_type: dict[str, Any], account: Account) -> Account:
    """The account with its data normalised and the `validationResult` of the check: the data model,
    then the constraint tables of constrained fields (a table that cannot answer is an error too)."""
    properties = account_type.get("data") or {}
    data, errors = datamodel.validate_data(model, properties, account.data)
    if any(isinstance(prop, dict) and prop.get("constraint") for prop in properties.values()):
        try:
            errors += datamodel.constraint_errors(properties, data, tables.evaluate_constraints(ctx, properties, data))
        except DomainError as error:
            errors.append(
                {"path": "data", "message": f"cannot be checked against its constraint tables: {error.message}"}
            )
    result = datamodel.validation_result(errors, locator=account.locator, element_type=account.type)
    return account.model_copy(update={"data": data, "validationResult": result})


def _passes(account: Account) -> bool:
    return account.validationResult is not None and account.validationResult.success


def _change_data(
    ctx: CallContext,
    model: dict[str, Any],
    account_type: dict[str, Any],
    account: Account,
    changed: Account,
    auto_validate: bool,
) -> Account:
    checked = _checked(ctx, model, account_type, changed)
    if account.accountState == AccountState.VALIDATED and not _passes(checked):
        return account.model_copy(update={"validationResult": checked.validationResult})
    uow = wiring.unit_of_work(ctx)
    events = [UPDATE_EVENT]
    if auto_validate and checked.accountState == AccountState.DRAFT and _passes(checked):
        checked.accountState = AccountState.VALIDATED
        events.append(VALIDATE_EVENT)
    if checked.accountState == AccountState.VALIDATED:
        _assign_number(ctx, uow, model, account_type, checked)
    return _save(ctx, uow, checked, events)


def _assign_number(
    ctx: CallContext, uow: UnitOfWork, model: dict[str, Any], account_type: dict[str, Any], account: Account
) -> None:
    plan = account_type.get("numberingPlan")
    if plan and account.accountNumber is None:
        account.accountNumber = numbers.reserve_number(
            ctx, uow, model, plan, ENTITY, account.locator, region=account.region
        )


def _renumbered(ctx: CallContext, account: Account, new: str | numbers.NextOfPlan) -> Account:
    uow = wiring.unit_of_work(ctx)
    number = numbers.renumber(ctx, uow, ENTITY, account.locator, account.accountNumber, new)
    return _save(ctx, uow, account.model_copy(update={"accountNumber": number}), [UPDATE_EVENT])


def _save(ctx: CallContext, uow: UnitOfWork, account: Account, events: list[str]) -> Account:
    return versioned.save(
        ctx,
        uow,
        account,
        repository.save,
        [(event, {"accountLocator": account.locator}) for event in events],
        code=ENTITY,
        noun=ENTITY,
    )
