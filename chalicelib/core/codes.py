"""The error catalogue: every stable error code the service answers, its class (so its HTTP status) and
what it means, in this one module.

Raises name an entry: `raise codes.QUOTE_NOT_PRICED(f"Quote {locator} has not been priced")`. A code that
several kinds of record share is a family indexed by the record's entity: `codes.INVALID_ELEMENT[entity]`,
and `codes.not_found(entity, locator)` for the most common one. Every operation's 4xx answers in the
generated OpenAPI document come from here, and each route declares which of them it answers.
"""

from __future__ import annotations

from chalicelib.core.errors import (
    AlreadyExists,
    ConcurrentModification,
    Conflict,
    DomainError,
    ErrorCode,
    Forbidden,
    InvalidRequest,
    InvalidState,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
)

CATALOGUE: dict[str, ErrorCode] = {}


def _code(kind: type[DomainError], code: str, meaning: str) -> ErrorCode:
    if code in CATALOGUE:
        raise ValueError(f"error code {code} is in the catalogue twice")
    entry = CATALOGUE[code] = ErrorCode(code, kind, meaning)
    return entry


def _family(kind: type[DomainError], problem: str, meaning: str, *entities: str) -> dict[str, ErrorCode]:
    """`{entity}.{problem}` for each entity; `meaning` may name the entity as `{entity}`."""
    return {entity: _code(kind, f"{entity}.{problem}", meaning.format(entity=entity)) for entity in entities}


# The service itself and the gateway in front of it.
INTERNAL_ERROR = _code(DomainError, "internal_error", "A defect of the service (answered with status 500)")
SERVICE_UNAVAILABLE = _code(Unavailable, "service.unavailable", "A dependency is busy or down; retry shortly")
ROUTE_NOT_FOUND = _code(NotFound, "route.not_found", "No route has this method and path")
REQUEST_METHOD_NOT_ALLOWED = _code(
    MethodNotAllowed, "request.method_not_allowed", "The path has no route for this method (`Allow` lists those it has)"
)
REQUEST_UNSUPPORTED_MEDIA_TYPE = _code(
    UnsupportedMediaType, "request.unsupported_media_type", "The route does not take a body of this Content-Type"
)
REQUEST_TOO_LARGE = _code(PayloadTooLarge, "request.too_large", "The request body is larger than the route takes")

# Authentication, tenant access and permissions (any route but the public ones).
AUTH_TOKEN_MISSING = _code(Unauthenticated, "auth.token_missing", "No bearer token was sent")
AUTH_TOKEN_INVALID = _code(Unauthenticated, "auth.token_invalid", "The token is not one the service issued")
AUTH_TOKEN_EXPIRED = _code(Unauthenticated, "auth.token_expired", "The token has expired")
AUTH_TOKEN_REVOKED = _code(Unauthenticated, "auth.token_revoked", "The token was revoked, or its user's sessions were")
AUTH_PASSWORD_CHANGE_REQUIRED = _code(
    Forbidden, "auth.password_change_required", "The user signed in with a temporary password and must reset it first"
)
AUTH_TENANT_FORBIDDEN = _code(Forbidden, "auth.tenant_forbidden", "The caller has no access to this tenant")
AUTH_PERMISSION_DENIED = _code(Forbidden, "auth.permission_denied", "The caller lacks the route's permission")
TENANT_NOT_FOUND = _code(NotFound, "tenant.not_found", "No tenant with this locator")

# Reading a body or a query.
REQUEST_INVALID = _code(
    InvalidRequest,
    "request.invalid",
    "The body or query does not fit the route's model (`fieldErrors` names the fields)",
)
REQUEST_BODY_MISSING = _code(InvalidRequest, "request.body_missing", "The route needs a body and none was sent")
REQUEST_MALFORMED_JSON = _code(InvalidRequest, "request.malformed_json", "The body is not JSON")
REQUEST_MALFORMED_TEXT = _code(
    InvalidRequest, "request.malformed_text", "A string of the body is not Unicode text (a lone surrogate)"
)
REQUEST_TOO_DEEP = _code(InvalidRequest, "request.too_deep", "The body nests objects and arrays more than 32 deep")
REQUEST_NUMBER_OUT_OF_RANGE = _code(
    InvalidRequest,
    "request.number_out_of_range",
    "A number of the body cannot be stored (beyond 38 digits or DynamoDB's range)",
)
REQUEST_DATE_OUT_OF_RANGE = _code(
    InvalidRequest, "request.date_out_of_range", "A date lies within a day of the calendar's ends (years 1 and 9999)"
)
REQUEST_VALUE_TOO_LONG = _code(
    InvalidRequest, "request.value_too_long", "A value is longer than a key or record can hold"
)
REQUEST_MALFORMED_FORM = _code(InvalidRequest, "request.malformed_form", "The form-encoded body is not UTF-8 text")
REQUEST_MALFORMED_MULTIPART = _code(
    InvalidRequest, "request.malformed_multipart", "The multipart body does not follow RFC 7578"
)
REQUEST_FILE_MISSING = _code(InvalidRequest, "request.file_missing", "The multipart body has no `file` part")

# X-Idempotency-Key (the routes that create a record or move money).
IDEMPOTENCY_INVALID_KEY = _code(InvalidRequest, "idempotency.invalid_key", "The idempotency key is empty or too long")
IDEMPOTENCY_KEY_REUSED = _code(
    Conflict, "idempotency.key_reused", "The idempotency key was used before with another request"
)
IDEMPOTENCY_IN_PROGRESS = _code(
    Conflict, "idempotency.in_progress", "The first request with this idempotency key is still running"
)
IDEMPOTENCY_OTHER_CREDENTIAL = _code(
    Conflict, "idempotency.other_credential", "The idempotency key was used with another credential of the same user"
)
IDEMPOTENCY_SECRET_NOT_REPLAYABLE = _code(
    Conflict,
    "idempotency.secret_not_replayable",
    "The first request with this key created a secret, which is answered once",
)

# Writes that lose a race or collide, records that outgrow an item.
CONFLICT_ALREADY_EXISTS = _code(AlreadyExists, "conflict.already_exists", "A record with this locator exists already")
CONFLICT_LIMIT_REACHED = _code(Conflict, "conflict.limit_reached", "A counted limit was reached")
AUTH_FORBIDDEN = _code(Forbidden, "auth.forbidden", "The operation is not allowed here (it needs a tenant)")
CONCURRENT_MODIFICATION = _code(
    ConcurrentModification,
    "conflict.concurrent_modification",
    "The record was changed by another request; reload it and retry",
)
RECORD_TOO_LARGE = _code(
    PayloadTooLarge,
    "record.too_large",
    "The record would be larger than one stored item holds (DynamoDB's 400 KB): its `data` "
    "or the text it is given is too large",
)
TOO_LARGE = _family(
    PayloadTooLarge,
    "too_large",
    "The {entity} would be larger than one record can hold",
    "account",
    "policy",
    "quote",
    "quickQuote",
    "transaction",
)

# Records that are not there (in the path's tenant).
NOT_FOUND = _family(
    NotFound,
    "not_found",
    "No {entity} with this locator or name",
    "account",
    "changeInstruction",
    "configuration",
    "constraintTable",
    "contact",
    "event",
    "installment",
    "installmentLattice",
    "invoice",
    "invoicingJob",
    "payment",
    "plugin_function",
    "policy",
    "quickQuote",
    "quote",
    "rangeTable",
    "rangeTableRecord",
    "role",
    "segment",
    "snapshot",
    "table",
    "tableRecord",
    "term",
    "token",
    "transaction",
    "underwritingFlag",
    "user",
)

# Sign-in, users, roles, tokens.
AUTH_SIGN_IN_FAILED = _code(Unauthenticated, "auth.sign_in_failed", "The user name or the password is wrong")
AUTH_SIGN_IN_THROTTLED = _code(
    TooManyRequests,
    "auth.sign_in_throttled",
    "Too many failed sign-ins for this user name or address; retry after `Retry-After`",
)
AUTH_UNSUPPORTED_GRANT_TYPE = _code(
    InvalidRequest, "auth.unsupported_grant_type", "Only the OAuth2 password grant is supported"
)
AUTH_USER_OUTRANKS_CALLER = _code(
    Forbidden, "auth.user_outranks_caller", "The user holds a tenant or permission the caller does not"
)
AUTH_ROLE_OUTRANKS_CALLER = _code(
    Forbidden,
    "auth.role_outranks_caller",
    "The role holds a permission the caller does not, or a holder of it has a tenant the caller does not",
)
AUTH_ROLE_NOT_GRANTABLE = _code(
    Forbidden, "auth.role_not_grantable", "A role to grant holds permissions the caller does not"
)
AUTH_TENANT_NOT_HELD = _code(Forbidden, "auth.tenant_not_held", "A tenant to grant is one the caller does not hold")
IDENTITY_ALREADY_BOOTSTRAPPED = _code(Conflict, "identity.already_bootstrapped", "The administrator exists already")
USER_NAME_TAKEN = _code(AlreadyExists, "user.name_taken", "Another user has this user name")
USER_WEAK_PASSWORD = _code(
    InvalidRequest, "user.weak_password", "The password is too short, trivial, common or the user name"
)
USER_DIRECT_PERMISSIONS = _code(
    InvalidRequest, "user.direct_permissions", "Permissions are granted through roles, not to a user"
)
USER_DELETE_SELF = _code(Conflict, "user.delete_self", "A user cannot delete itself")
ROLE_NAME_TAKEN = _code(AlreadyExists, "role.name_taken", "Another role has this name")
ROLE_UNKNOWN = _code(InvalidRequest, "role.unknown", "A role named in the request does not exist")
ROLE_INVALID_PERMISSION = _code(InvalidRequest, "role.invalid_permission", "A permission name is not `group.action`")
ROLE_BUILT_IN = _code(Conflict, "role.built_in", "The built-in admin role cannot be changed or deleted")
TOKEN_NAME_TAKEN = _code(AlreadyExists, "token.name_taken", "The user has a named token of this name already")
TOKEN_LIMIT_REACHED = _code(Conflict, "token.limit_reached", "The user holds the most named tokens allowed (10)")
TOKEN_NOT_SERVICE_ACCOUNT = _code(
    Forbidden, "token.not_service_account", "Tokens are created for oneself or for service accounts only"
)
TOKEN_PERMISSION_NOT_HELD = _code(
    Forbidden, "token.permission_not_held", "The token would carry a permission its owner does not hold"
)
TOKEN_TENANT_NOT_HELD = _code(
    Forbidden, "token.tenant_not_held", "The token would cover a tenant its owner does not hold"
)

# Configuration packages and numbering.
CONFIG_PACKAGE_NOT_ZIP = _code(InvalidRequest, "config.package_not_zip", "The package is not a ZIP archive")
CONFIG_PACKAGE_CORRUPT = _code(InvalidRequest, "config.package_corrupt", "The ZIP archive or an entry is corrupt")
CONFIG_PACKAGE_UNSAFE_PATH = _code(
    InvalidRequest, "config.package_unsafe_path", "An entry's path leaves the package (absolute, `..`, a link)"
)
CONFIG_PACKAGE_LAYOUT_INVALID = _code(
    InvalidRequest,
    "config.package_layout_invalid",
    "The package has no config.json at its root or in one wrapping folder",
)
CONFIG_PACKAGE_INVALID_JSON = _code(InvalidRequest, "config.package_invalid_json", "A config.json is not valid JSON")
CONFIG_PACKAGE_INVALID = _code(
    InvalidRequest, "config.package_invalid", "The package holds an entry it cannot (encrypted, twice)"
)
CONFIG_PACKAGE_TOO_LARGE = _code(
    PayloadTooLarge, "config.package_too_large", "The package inflates beyond its limits (size, entries, plugin source)"
)
CONFIG_PLUGIN_INVALID = _code(InvalidRequest, "config.plugin_invalid", "A plugin module of the package does not parse")
CONFIG_PLUGIN_TOO_LARGE = _code(
    PayloadTooLarge,
    "config.plugin_too_large",
    "A plugin module, or the package's plugins together, are larger than allowed",
)
TENANT_CODE_NOT_READY = _code(
    Unavailable,
    "tenantCode.not_ready",
    "The tenant function has no code for this configuration version: its deployment is publishing it, or it is "
    "being published again after newer versions pushed it out (retry after `Retry-After`), or its deployment "
    "failed to (redeploy)",
)
TENANT_CODE_UNPUBLISHABLE = _code(
    InvalidRequest,
    "tenantCode.unpublishable",
    "The configuration's code cannot be published to its tenant function (too large, or refused by Lambda)",
)
CONFIG_BOOTSTRAP_TOO_LARGE = _code(
    InvalidRequest, "config.bootstrap_too_large", "The package's bootstrap resources are too many to record"
)
NUMBERING_INVALID_PLAN = _code(InvalidState, "numbering.invalid_plan", "The numbering plan is not configured")
NUMBERING_EXHAUSTED = _code(InvalidState, "numbering.exhausted", "The numbering plan has no numbers left")
NUMBER_TAKEN = _family(
    AlreadyExists, "number_taken", "The {entity} number is used already", "account", "quote", "policy", "invoice"
)
NO_NUMBERING_PLAN = _family(
    InvalidState,
    "no_numbering_plan",
    "The {entity}'s type or product has no numbering plan",
    "account",
    "quote",
    "policy",
    "invoice",
)

# Tables.
TABLE_FILE_NOT_ZIP = _code(InvalidRequest, "table.file_not_zip", "The uploaded file is not a ZIP archive")
TABLE_FILE_INVALID = _code(
    InvalidRequest, "table.file_invalid", "The ZIP does not hold exactly one CSV, or the CSV is corrupt or not UTF-8"
)
TABLE_FILE_TOO_LARGE = _code(PayloadTooLarge, "table.file_too_large", "The CSV inflates beyond the upload limit")
TABLE_COLUMNS_MISMATCH = _code(
    InvalidRequest, "table.columns_mismatch", "The CSV's columns are not those its definition names"
)
TABLE_KEY_INVALID = _code(InvalidRequest, "table.key_invalid", "The lookup key does not fit the table's key columns")
TABLE_INVALID_VALUE = _code(InvalidRequest, "table.invalid_value", "CSV values do not fit their columns' types")
TABLE_DUPLICATE_KEY = _code(InvalidRequest, "table.duplicate_key", "Rows of the CSV share a key")
TABLE_INVALID_RANGE = _code(InvalidRequest, "table.invalid_range", "A range row's end is not after its start")
TABLE_OVERLAPPING_RANGES = _code(InvalidRequest, "table.overlapping_ranges", "Range rows of one key overlap")
TABLE_ROW_TOO_LARGE = _code(InvalidRequest, "table.row_too_large", "A row is larger than one record can hold")
TABLE_BOOTSTRAP_FILE_MISSING = _code(
    InvalidState, "table.bootstrap_file_missing", "A bootstrap table's file is missing from the package"
)
CONSTRAINT_TABLE_COLUMN_UNKNOWN = _code(
    InvalidState, "constraintTable.column_unknown", "A constraint names a column the constraint table does not have"
)
TABLE_NAME_INVALID = _family(
    InvalidRequest,
    "name_invalid",
    "The {entity}'s name is not 1 to 128 letters, digits or _",
    "table",
    "rangeTable",
    "constraintTable",
)
TABLE_ALREADY_EXISTS = _family(
    AlreadyExists, "already_exists", "A {entity} of this name exists already", "table", "rangeTable", "constraintTable"
)
TABLE_DEFINITION_INVALID = _family(
    InvalidState,
    "definition_invalid",
    "The configuration does not define the {entity}, or defines it wrongly",
    "table",
    "rangeTable",
    "constraintTable",
)

# Events.
EVENT_INVALID_PAGING_TOKEN = _code(
    InvalidRequest, "event.invalid_paging_token", "The pagingToken is not one this tenant's stream gave"
)
EVENT_PAGING_TOKEN_WITH_FILTERS = _code(
    InvalidRequest, "event.paging_token_with_filters", "A pagingToken carries its first call's filters; send it alone"
)

# Accounts, contacts and the references records make to the configuration.
PRICEABLE = ("quote", "quickQuote", "transaction")
"""Quotes, quick quotes and transactions: the entities the priceable lifecycle's codes name
(`quote.expired`, `quickQuote.expired`, ...)."""
ACCOUNT_TYPE_NOT_CONFIGURED = _code(
    InvalidState, "account.type_not_configured", "The stored account's type is not in the current configuration"
)
ACCOUNT_UNKNOWN_TYPE = _code(InvalidRequest, "account.unknown_type", "The account type is not configured")
ACCOUNT_ABSTRACT_TYPE = _code(InvalidRequest, "account.abstract_type", "The account type is abstract")
INVALID_REFERENCE = _family(
    InvalidRequest,
    "invalid_reference",
    "The {entity} names something the configuration does not have (a type, plan, role)",
    "account",
    "policy",
    *PRICEABLE,
)
CONTACT_EXISTS = _family(AlreadyExists, "contact_exists", "The contact is on the {entity} already", "account", "policy")

# Quotes, quick quotes and transactions: the priceable lifecycle.
INVALID_ELEMENT = _family(
    InvalidRequest,
    "invalid_element",
    "An element of the request is unknown, misplaced or not allowed by the product",
    *PRICEABLE,
    "plugin",
)
INVALID_STATE = _family(InvalidState, "invalid_state", "The {entity}'s state does not allow this", *PRICEABLE)
NOT_DRAFT = _family(InvalidState, "not_draft", "Only a draft {entity} takes this change", *PRICEABLE)
EXPIRED = _family(InvalidState, "expired", "The {entity} has expired and cannot advance", *PRICEABLE)
NOT_PRICED = _family(InvalidState, "not_priced", "The {entity} has not been priced", *PRICEABLE)
PRODUCT_NOT_CONFIGURED = _family(
    InvalidState,
    "product_not_configured",
    "The {entity}'s product is not in the current configuration",
    *PRICEABLE,
)
UNKNOWN_PRODUCT = _family(InvalidRequest, "unknown_product", "The product is not configured", *PRICEABLE)
ABSTRACT_PRODUCT = _family(InvalidRequest, "abstract_product", "The product is abstract", *PRICEABLE)
ACCOUNT_NOT_ELIGIBLE = _family(
    InvalidRequest,
    "account_not_eligible",
    "The account's type may not hold this product",
    *PRICEABLE,
)
INVALID_FLAG = _family(
    InvalidRequest,
    "invalid_flag",
    "An underwriting flag of the request is invalid or unknown",
    *PRICEABLE,
)
UNDERWRITING_FLAG_CLEARED = _code(InvalidState, "underwritingFlag.cleared", "The underwriting flag is cleared already")
QUOTE_UNKNOWN_ACCOUNT = _code(InvalidRequest, "quote.unknown_account", "The account the request names does not exist")
QUOTE_POLICY_NUMBER_TAKEN = _code(
    InvalidState, "quote.policy_number_taken", "The reserved policy number is in use or reserved by another quote"
)
QUOTE_RESERVED_POLICY_NUMBER_REQUIRED = _code(
    InvalidState,
    "quote.reserved_policy_number_required",
    "The product's policies need a reserved policy number before issue",
)

# Policy transactions.
TRANSACTION_UNKNOWN_TYPE = _code(
    InvalidRequest, "transaction.unknown_type", "The transaction type is not configured, or not of this category"
)
TRANSACTION_INVALID_INSTRUCTION = _code(
    InvalidRequest, "transaction.invalid_instruction", "A change instruction is not allowed for this transaction"
)
TRANSACTION_INVALID_BASE = _code(
    InvalidRequest, "transaction.invalid_base", "The base transaction is not one of the policy's"
)
TRANSACTION_STALE_BASE = _code(
    InvalidState,
    "transaction.stale_base",
    "The transaction's base is no longer the policy's head (issue with autoRebase)",
)
TRANSACTION_INVALID_REVERSAL = _code(
    InvalidRequest, "transaction.invalid_reversal", "The transactions named cannot be reversed together"
)
TRANSACTION_NOTHING_TO_REVERSE = _code(
    InvalidRequest, "transaction.nothing_to_reverse", "A reversal names no transaction"
)
TRANSACTION_NOT_REVERSIBLE = _code(
    InvalidState, "transaction.not_reversible", "Only issued transactions of the policy's stack can be reversed"
)
TRANSACTION_ISSUANCE_NOT_REVERSIBLE = _code(
    InvalidState, "transaction.issuance_not_reversible", "The policy's issuance cannot be reversed"
)
TRANSACTION_EFFECTIVE_TIME_REQUIRED = _code(
    InvalidRequest, "transaction.effective_time_required", "The transaction needs an effective time"
)
TRANSACTION_EFFECTIVE_TIME_OUTSIDE_TERMS = _code(
    InvalidRequest, "transaction.effective_time_outside_terms", "The effective time is outside the policy's terms"
)
TRANSACTION_NO_COVERAGE = _code(
    InvalidState, "transaction.no_coverage", "The policy holds no coverage at the effective time"
)
TRANSACTION_POLICY_CANCELLED = _code(
    InvalidState, "transaction.policy_cancelled", "The policy is cancelled at the effective time"
)
TRANSACTION_POLICY_NOT_CANCELLED = _code(
    InvalidState, "transaction.policy_not_cancelled", "A reinstatement needs a cancelled policy"
)
TRANSACTION_REINSTATEMENT_BEFORE_CANCELLATION = _code(
    InvalidRequest,
    "transaction.reinstatement_before_cancellation",
    "A reinstatement cannot take effect before the cancellation",
)
TRANSACTION_RENEWAL_EFFECTIVE_TIME = _code(
    InvalidRequest, "transaction.renewal_effective_time", "A renewal takes effect at the end of the last term"
)
TRANSACTION_POLICY_END_NOT_CHANGEABLE = _code(
    InvalidRequest, "transaction.policy_end_not_changeable", "This category of transaction cannot set a new policy end"
)
TRANSACTION_POLICY_END_BEFORE_EFFECTIVE_TIME = _code(
    InvalidRequest,
    "transaction.policy_end_before_effective_time",
    "The new policy end must be after the effective time",
)
TRANSACTION_AGGREGATE_TOO_LARGE = _code(
    InvalidState,
    "transaction.aggregate_too_large",
    "Issuing out of sequence would reverse more than 30 later transactions",
)

# What an auto-renewal reports for a policy it could not renew: the renewal job's result (`failed[].code`), not an
# answer of a route.
RENEWAL_INVALID = _code(InvalidState, "transaction.invalid", "The renewal failed validation (an auto-renewal's result)")
RENEWAL_STOPPED = {
    state: _code(
        InvalidState,
        f"transaction.{problem}",
        f"Underwriting stopped the renewal in state {state} (an auto-renewal's result)",
    )
    for state, problem in (
        ("underwrittenBlocked", "underwritten_blocked"),
        ("declined", "declined"),
        ("rejected", "rejected"),
    )
}
"""By the transaction state underwriting left the renewal in (transactions.renewals.UNDERWRITING_STOPS)."""

# Billing: installments, invoices, payments, the credit balance.
PAYMENT_INVALID_AMOUNT = _code(
    InvalidRequest, "payment.invalid_amount", "A payment's amount is positive, in the currency's minor unit at most"
)
PAYMENT_UNKNOWN_TYPE = _code(
    InvalidRequest, "payment.unknown_type", "The configuration has no payment type of this name"
)
PAYMENT_INVALID_TARGET = _code(
    InvalidRequest,
    "payment.invalid_target",
    "A target is not an invoice or the account of the payment, or not in its currency",
)
PAYMENT_INVALID_CURRENCY = _code(
    InvalidRequest,
    "payment.invalid_currency",
    "The currency is not one the account is billed in (the tenant's default, or that of one of its policies or quotes)",
)
PAYMENT_ACCOUNT_REQUIRED = _code(
    InvalidRequest, "payment.account_required", "The payment names no account and no target that belongs to one"
)
PAYMENT_INVALID_STATE = _code(InvalidState, "payment.invalid_state", "The payment's state does not allow this")
INSTALLMENT_NOT_INVOICEABLE = _code(
    InvalidRequest, "installment.not_invoiceable", "The installment is invoiced already, or not of the account"
)
INVOICE_AMOUNT_REMAINING = _code(
    InvalidState,
    "invoice.amount_remaining",
    "The invoice has money remaining: only a payment or a write-off settles it",
)
INVOICE_SETTLED = _code(InvalidState, "invoice.settled", "The invoice is settled")
INVOICE_DISCARDED = _code(InvalidState, "invoice.discarded", "The invoice is discarded (migrated so): it owes nothing")

# Tenant plugins, and jobs.
PLUGIN_FAILED = _code(DomainError, "plugin.failed", "A plugin of the tenant did not answer usefully")
JOB_UNKNOWN_TYPE = _code(DomainError, "job.unknown_type", "No handler is registered for the job's type")
JOB_INVALID_PAYLOAD = _code(DomainError, "job.invalid_payload", "The job's payload does not fit its handler's model")
DUE_UNKNOWN_KIND = _code(DomainError, "due.unknown_kind", "No handler is registered for the due entry's kind")

# Test clocks (DECISIONS.md "Test clocks").
CLOCK_TEST_CLOCKS_DISABLED = _code(
    Forbidden, "clock.test_clocks_disabled", "This stage does not allow test clocks (PAS_TEST_CLOCKS)"
)
CLOCK_NOT_A_TEST_CLOCK = _code(
    Conflict, "clock.not_a_test_clock", "The tenant has no test clock: its time is the real time and cannot be moved"
)
CLOCK_ADVANCING = _code(Conflict, "clock.advancing", "The test clock is advancing already")
CLOCK_NOT_FORWARD = _code(
    InvalidRequest, "clock.not_forward", "A test clock moves only forward: `to` must be after the clock's now"
)

# Billing: payment numbers, installments' times.
NUMBER_TAKEN["payment"] = _code(AlreadyExists, "payment.number_taken", "The payment number is used already")
NO_NUMBERING_PLAN["payment"] = _code(
    InvalidState, "payment.no_numbering_plan", "The payment's type names no numbering plan, nor does the configuration"
)
INSTALLMENT_INVOICED = _code(
    InvalidState, "installment.invoiced", "The installment is invoiced: its times are its invoice's now"
)


def not_found(entity: str, what: str | None = None) -> DomainError:
    """404 `{entity}.not_found`, saying what was looked for (a locator, a name)."""
    return CATALOGUE[f"{entity}.not_found"](f"{entity} {what} not found" if what else f"{entity} not found")


# Schedules and their deserialization jobs (DECISIONS.md "Schedules").
SCHEDULE_NOT_FOUND = _code(
    NotFound, "schedule.not_found", "The quote's or transaction's element has no schedule (or no such element)"
)
SCHEDULE_ITEM_NOT_FOUND = _code(NotFound, "scheduleItem.not_found", "No item of the schedule has this locator")
SCHEDULE_TOO_MANY_ITEMS = _code(
    InvalidRequest, "schedule.too_many_items", "A request adds, changes or deletes at most 500 schedule items"
)
SCHEDULE_FILE_INVALID = _code(
    InvalidRequest,
    "schedule.file_invalid",
    "The uploaded file is not UTF-8 CSV with a header row (or a JSON array of objects)",
)
SCHEDULE_NESTED_COLUMN = _code(
    InvalidRequest,
    "schedule.nested_column",
    "A CSV column names a nested or list field: CSV uploads take flat items only",
)
SCHEDULE_BUSY = _code(Conflict, "schedule.busy", "Another change of the schedule's items is in progress")
DESERIALIZATION_JOB_NOT_FOUND = _code(NotFound, "deserializeJob.not_found", "No deserialization job with this locator")
DESERIALIZATION_JOB_INVALID_STATE = _code(
    InvalidState, "deserializeJob.invalid_state", "The deserialization job's state does not allow this"
)
# Anonymization (DECISIONS.md "Anonymization (compliance)"): errors, and the reasons retention keeps a record.
ANONYMIZATION_JOB_NOT_FOUND = _code(NotFound, "anonymizationJob.not_found", "No anonymization job with this locator")
ANONYMIZATION_UNSUPPORTED_REFERENCE = _code(
    InvalidRequest,
    "anonymization.unsupported_reference",
    "Anonymization takes references of this type not (yet): name accounts, quotes, policies, payments or contacts",
)
RETENTION_POLICY_ON_RISK = _code(
    InvalidState,
    "retention.policy_on_risk",
    "A policy of the account is on risk: its records are kept until its end time",
)
RETENTION_POLICY_STATUS = _code(
    InvalidState,
    "retention.policy_status",
    "A policy of the account has none of the statuses the request lets be anonymized",
)
RETENTION_QUOTE_ACCEPTED = _code(
    InvalidState,
    "retention.quote_accepted",
    "A quote of the account is accepted and the request does not include accepted quotes",
)
RETENTION_OPEN_INVOICE = _code(InvalidState, "retention.open_invoice", "An invoice of the account is still open")
RETENTION_ACTIVE_DELINQUENCY = _code(
    InvalidState, "retention.active_delinquency", "A delinquency of the account is still active"
)
RETENTION_CREDIT_BALANCE = _code(
    InvalidState, "retention.credit_balance", "The account holds a non-zero credit balance"
)
# Documents (DECISIONS.md "Documents").
DOCUMENT_NOT_FOUND = _code(NotFound, "document.not_found", "No document with this locator")
# Migration (spec part 3 "Migration", DECISIONS.md "Migration").
MIGRATION_NOT_FOUND = _code(NotFound, "migration.not_found", "No migration with this locator")
MIGRATION_ACCOUNT_NOT_FOUND = _code(
    NotFound, "migrationAccount.not_found", "The migration has no account with this locator (or it has no mappings yet)"
)
MIGRATION_INVALID_STATE = _code(
    InvalidState,
    "migration.invalid_state",
    "The migration's state does not allow this (pause a running one, resume a paused "
    "one, recover one with accounts in error)",
)
MIGRATION_ACCOUNT_NOT_FAILED = _code(
    InvalidState, "migrationAccount.not_failed", "Only an account whose migration failed takes a patch"
)
MIGRATION_DUPLICATE_ID = _code(
    InvalidRequest,
    "migration.duplicate_id",
    "Two accounts (or two entities of one account) of the request have the same id",
)
DOCUMENTS_JOB_NOT_FOUND = _code(
    NotFound, "documentsJob.not_found", "No documents job with this locator for this record"
)
DOCUMENT_NOT_EXTERNAL = _code(
    InvalidState, "document.not_external", "Only an attached (external) document can be replaced or deleted"
)
DOCUMENT_NOT_READY = _code(InvalidState, "document.not_ready", "The document has no artifact (it is not ready)")
DOCUMENT_ANONYMIZED = _code(
    InvalidState,
    "document.anonymized",
    "The attached document's file was removed by anonymization (an uploaded file is not rendered again)",
)
DOCUMENT_REFERENCE_INVALID = _code(
    InvalidRequest,
    "document.reference_invalid",
    "The reference does not fit: a policy needs a transactionLocator or a segmentLocator of that policy",
)
DOCUMENT_TEMPLATE_MISSING = _code(
    InvalidRequest,
    "document.template_missing",
    "No template to render: send one, or name a configured document that has one",
)
DOCUMENT_RENDER_FAILED = _code(
    InvalidRequest, "document.render_failed", "The template does not parse or does not render (the message says why)"
)
DOCUMENT_QUOTE_NOT_ISSUED = _code(
    InvalidState, "document.quote_not_issued", "Documents are copied on issue only from an issued quote"
)
DOCUMENTS_JOB_NOT_FAILED = _code(InvalidState, "documentsJob.not_failed", "Only a failed documents job is retriggered")
# Delinquencies and billing holds (issue 20).
NOT_FOUND_DELINQUENCY_AND_HOLDS = _family(
    NotFound, "not_found", "No {entity} with this locator", "delinquency", "delinquencyEvent", "hold"
)
DELINQUENCY_INVALID_STATE = _code(
    InvalidState, "delinquency.invalid_state", "The delinquency's (or its event's) state does not allow this"
)
DELINQUENCY_INVALID_TIME = _code(
    InvalidRequest, "delinquency.invalid_time", "A delinquency's grace end or an event's trigger time must lie ahead"
)
HOLD_INVALID_STATE = _code(InvalidState, "hold.invalid_state", "The hold's state does not allow this")
QUOTE_HELD = _code(InvalidState, "quote.held", "An active entity hold keeps the quote from this step")
TRANSACTION_HELD = _code(
    InvalidState, "transaction.held", "An active entity hold on the policy blocks transactions of this category or type"
)
ENTITY_HOLD_INVALID_STATE = _code(
    InvalidState, "entityHold.invalid_state", "The entity hold's state does not allow this"
)
ENTITY_HOLD_INVALID_SCOPE = _code(
    InvalidRequest, "entityHold.invalid_scope", "A quote's hold takes a quoteHoldScope, a policy's a policyHoldScope"
)
NOT_FOUND_ENTITY_HOLD = _family(NotFound, "not_found", "No {entity} with this locator", "entityHold")
# Billing II: write-offs, credit distributions, disbursements (DECISIONS.md "Billing").
NOT_FOUND.update(
    _family(
        NotFound, "not_found", "No {entity} with this locator or name", "writeOff", "creditDistribution", "disbursement"
    )
)
WRITEOFF_INVALID_TARGET = _code(
    InvalidRequest,
    "writeOff.invalid_target",
    "A target is not an open invoice, invoice item or the account of the write-off, "
    "in its currency, or its amount is not a positive amount of the currency",
)
WRITEOFF_EXCEEDS_REMAINING = _code(
    InvalidRequest,
    "writeOff.exceeds_remaining",
    "A target's amount is more than remains to be paid on it (or nothing remains)",
)
WRITEOFF_INVALID_STATE = _code(InvalidState, "writeOff.invalid_state", "The write-off is reversed already")
WRITEOFF_INVALID_REVERSAL = _code(
    InvalidRequest,
    "writeOff.invalid_reversal",
    "A reversal's amount is positive and at most what is written off and not reversed",
)
CREDIT_INVALID_AMOUNT = _code(
    InvalidRequest, "credit.invalid_amount", "The amount is not a positive amount of the currency"
)
CREDIT_INVALID_SOURCE = _code(
    InvalidRequest, "credit.invalid_source", "A source is not the account's credit balance (the account itself)"
)
CREDIT_INVALID_TARGET = _code(
    InvalidRequest,
    "credit.invalid_target",
    "A target is not an invoice or the account of the distribution, or not in its currency",
)
CREDIT_INVALID_CURRENCY = _code(
    InvalidRequest,
    "credit.invalid_currency",
    "The currency is not one the account is billed in (the tenant's default, or that of one of its policies or quotes)",
)
CREDIT_ACCOUNT_REQUIRED = _code(
    InvalidRequest,
    "credit.account_required",
    "The request names no account and no source or target that belongs to one",
)
CREDIT_INSUFFICIENT_BALANCE = _code(
    InvalidState, "credit.insufficient_balance", "The account's credit balance is less than the amount to draw"
)
CREDIT_DISTRIBUTION_INVALID_STATE = _code(
    InvalidState, "creditDistribution.invalid_state", "The credit distribution's state does not allow this"
)
DISBURSEMENT_INVALID_STATE = _code(
    InvalidState, "disbursement.invalid_state", "The disbursement's state does not allow this"
)
DISBURSEMENT_UNKNOWN_TYPE = _code(
    InvalidRequest, "disbursement.unknown_type", "The configuration has no disbursement type of this name"
)
# Billing II: entity holds on static data, and their update.
POLICY_HELD = _code(InvalidState, "policy.held", "An active entity hold keeps the policy's static data as it is")
ENTITY_HOLD_INVALID_REFERENCE = _code(
    InvalidRequest, "entityHold.invalid_reference", "A hold's reference changes only with referenceUpdate"
)

# Uploads: files over the direct limit, by reference (DECISIONS.md "Uploads").
NOT_FOUND.update(
    _family(NotFound, "not_found", "No {entity} with this locator (for this tenant, or this caller)", "upload")
)
UPLOAD_TOO_LARGE = _code(PayloadTooLarge, "upload.too_large", "The upload announces a file larger than uploads take")
UPLOAD_WRONG_PURPOSE = _code(
    InvalidRequest, "upload.wrong_purpose", "The upload was made for another purpose than this operation's"
)
UPLOAD_EXPIRED = _code(InvalidState, "upload.expired", "The upload's URL and intent have expired; make a new upload")
UPLOAD_NOT_RECEIVED = _code(InvalidState, "upload.not_received", "No file was put to the upload's URL")
UPLOAD_SIZE_MISMATCH = _code(
    InvalidState, "upload.size_mismatch", "The uploaded file's length is not the size the upload announced"
)
UPLOAD_CHECKSUM_MISMATCH = _code(
    InvalidState, "upload.checksum_mismatch", "The uploaded file's SHA-256 is not the one the upload announced"
)
UPLOAD_ALREADY_USED = _code(InvalidState, "upload.already_used", "The upload was used by an operation already")
