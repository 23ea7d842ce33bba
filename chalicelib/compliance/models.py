"""Anonymization (DECISIONS.md "Anonymization (compliance)"): the job, where a referenced record stands,
what retention keeps, and the replacement of personal data. Pure.

Personal data are the values of the data fields the configuration marks `restrictedData`, and of every
free-text field (a `string` without `options`: names, e-mail addresses, the lines of an address), at any
depth of the records' data (`data`, `static`, the element trees, a document's rendering data). A text
becomes `ANONYMIZED` (padded or cut to the field's length limits; for a field whose `regex` that does not
match, the first of FILLERS that does), any other personal value is dropped, and a validation message
quoting a replaced value has it replaced too;
amounts, states, dates and locators are not data fields and stay. A contact (a contact reference) is anonymized in
the records that list it (`without_contact`). Replacing again changes nothing, so
anonymization is idempotent.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from chalicelib.core.errors import ErrorCode

PLACEHOLDER = "ANONYMIZED"
EMAIL_PLACEHOLDER = "anonymized@anonymized.invalid"
FILLERS = "0Xx"
"""A field whose `regex` the placeholder does not match gets the first of these that does: the e-mail
placeholder, then a run of one filler character of a length its limits allow (a postcode `[0-9]{5}`:
`00000`); a pattern none matches keeps the placeholder."""
QUOTING_KEYS = frozenset({"validationResult"})
"""The keys whose texts may quote data values (validation messages): a replaced value is replaced in them too."""
MIN_QUOTED = 3
"""Shorter personal values are not looked for in other texts (they would match anywhere)."""
DATA_KEYS = frozenset({"data", "static", "setData", "staticData"})
"""The keys whose object holds data fields, wherever they occur in a stored record."""
MODEL_COLLECTIONS = (
    "accounts",
    "products",
    "coverages",
    "exposures",
    "exposureGroups",
    "policyLines",
    "dataTypes",
    "payments",
)
REFERENCE_TYPES = ("none", "account", "quickQuote", "quote", "policy", "contact", "fnol", "payment", "disbursement")
SUPPORTED_REFERENCE_TYPES = ("account", "quote", "policy", "payment", "contact")
CONTACT_HOLDERS = ("account", "quote", "quickQuote", "policy")
"""The records whose `contacts` (ContactRoles: a contact's locator and its roles) may name a contact."""
POLICY_STATUSES = ("pending", "expired", "cancelled", "cancelPending", "onRisk", "delinquent", "doNotRenew")
DEFAULT_POLICY_STATUSES = ("expired", "cancelled")


class JobStatus(StrEnum):
    INITIALIZED = "initialized"
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"


FINISHED = (JobStatus.SUSPENDED, JobStatus.COMPLETED)


class ReferenceState(StrEnum):
    IDENTIFIABLE = "identifiable"
    PENDING = "pending"
    ANONYMIZED = "anonymized"


class ProblematicReferences(BaseModel):
    assigned: list[str] = []
    children: list[str] = []
    failed: list[str] = []


class AnonymizationJob(BaseModel):
    locator: str
    referenceType: str
    jobStatus: JobStatus
    assignedReferenceLocators: list[str]
    anonymizedReferenceLocators: list[str] = []
    problematicReferenceLocators: ProblematicReferences = ProblematicReferences()
    policyStatuses: list[str]
    includeAcceptedQuotes: bool = False
    processingErrors: str | None = None
    startedBy: str | None = None
    """The keyed request that started it (IdempotencyClaim.name_for): its replay answers it as its own."""
    createdAt: datetime
    createdBy: str
    updatedAt: datetime
    version: int = 1


class AnonymizationReference(BaseModel):
    """Where one referenced record stands: `pending` while a job has it, `anonymized` once done."""

    referenceType: str
    referenceLocator: str
    anonymizationState: ReferenceState
    anonymizationJobLocator: str | None = None
    scheduledAt: datetime | None = None
    anonymizedAt: datetime | None = None
    updatedAt: datetime
    version: int = 1


@dataclass(frozen=True)
class Restriction:
    """Why retention keeps a record: the catalogue's code, what it says, and the record that keeps it."""

    code: ErrorCode
    message: str
    referenceType: str
    referenceLocator: str


@dataclass(frozen=True)
class Target:
    """The records of one type an account's anonymization reaches, and those retention keeps."""

    referenceType: str
    anonymizable: list[str] = field(default_factory=list)
    restricted: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PolicyView:
    locator: str
    statuses: list[str]
    endTime: datetime | None


@dataclass(frozen=True)
class QuoteView:
    locator: str
    state: str


@dataclass(frozen=True)
class ContactView:
    """A contact reference: a contact as the records that list it in their `contacts` name it (we keep no contact
    record of our own: its data are the platform's contact service's), by holder type, their locators."""

    locator: str
    holders: dict[str, list[str]]


@dataclass(frozen=True)
class Request:
    references: dict[str, list[str]]
    policyStatuses: list[str] = field(default_factory=lambda: list(DEFAULT_POLICY_STATUSES))
    includeAcceptedQuotes: bool = False


@dataclass(frozen=True)
class Assessment:
    """What anonymizing one account would reach, and what retention keeps."""

    locator: str
    targets: list[Target]
    restrictions: list[Restriction]
    anonymized: bool

    @property
    def state(self) -> str:
        return "anonymized" if self.anonymized else "restricted" if self.restrictions else "allowed"


def policy_restrictions(
    policies: Iterable[PolicyView], qualifying: Iterable[str], codes: Mapping[str, ErrorCode]
) -> list[Restriction]:
    """A policy on risk is always kept (until its end time); another qualifies when one of its statuses is
    among `qualifying` (the request's policyStatuses). `codes`: `onRisk` and `status` entries."""
    allowed = set(qualifying)
    found = []
    for policy in policies:
        if "onRisk" in policy.statuses:
            until = f" until {policy.endTime.isoformat()}" if policy.endTime else ""
            found.append(
                Restriction(codes["onRisk"], f"Policy {policy.locator} is on risk{until}", "policy", policy.locator)
            )
        elif not allowed.intersection(policy.statuses):
            found.append(
                Restriction(
                    codes["status"],
                    f"Policy {policy.locator} is {', '.join(policy.statuses)}: not among {', '.join(sorted(allowed))}",
                    "policy",
                    policy.locator,
                )
            )
    return found


def quote_restrictions(quotes: Iterable[QuoteView], include_accepted: bool, code: ErrorCode) -> list[Restriction]:
    if include_accepted:
        return []
    return [
        Restriction(code, f"Quote {quote.locator} is accepted", "quote", quote.locator)
        for quote in quotes
        if quote.state == "accepted"
    ]


# --- personal data -------------------------------------------------------------------------------


def names_contact(item: Mapping[str, Any], contact: str) -> bool:
    """Whether the stored record lists the contact in its `contacts`."""
    listed = item.get("contacts")
    return isinstance(listed, list) and any(
        isinstance(entry, dict) and entry.get("contactLocator") == contact for entry in listed
    )


def without_contact(item: Mapping[str, Any], contact: str, replacement: str) -> dict[str, Any]:
    """The stored record with the contact's entry in its `contacts` naming `replacement` (a locator that names
    nobody) instead: which records the person was on is what those lists hold of them; the entry's roles stay,
    so the record still shows a contact in those roles. Once replaced, the contact is in no list: replacing
    again changes nothing."""
    listed = item.get("contacts")
    if not isinstance(listed, list):
        return dict(item)
    return {
        **item,
        "contacts": [
            {**entry, "contactLocator": replacement}
            if isinstance(entry, dict) and entry.get("contactLocator") == contact
            else entry
            for entry in listed
        ],
    }


def personal_fields(model: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """By field name, the definition of each personal data field of the configuration (`model`, resolved
    or not), in every account, product, element, data and payment type. A name personal in one type is
    treated as personal wherever it occurs: replacing too much is the safe side."""
    found: dict[str, dict[str, Any]] = {}
    for collection in MODEL_COLLECTIONS:
        for definition in (model.get(collection) or {}).values():
            if not isinstance(definition, dict):
                continue
            for name, prop in (definition.get("data") or {}).items():
                if (
                    isinstance(prop, dict)
                    and _personal(prop)
                    and (name not in found or ("regex" in prop and "regex" not in found[name]))
                ):
                    found[name] = prop  # the first, or the first that says its pattern
    return found


def _personal(prop: Mapping[str, Any]) -> bool:
    return prop.get("restrictedData") not in (None, False) or (_text(prop) and not prop.get("options"))


def scrubbed(value: Any, personal: Mapping[str, Mapping[str, Any]]) -> Any:
    """`value` (a stored record or any part of it) with the personal fields of every data object in it
    replaced, and the personal values it held replaced wherever a QUOTING_KEYS text quotes them; what is
    not data is kept as it is."""
    replaced = _scrubbed(value, personal)
    quoted = personal_texts(value, personal)
    return _unquoted(replaced, quoted, False) if quoted else replaced


def personal_texts(value: Any, personal: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The texts of the personal fields in `value`'s data objects long enough to look for in free text (what
    `scrubbed` replaces where a QUOTING_KEYS text quotes them), longest first."""
    return sorted({text for text in _values(value, personal) if len(text) >= MIN_QUOTED}, key=len, reverse=True)


def unquoted(value: Any, quoted: list[str]) -> Any:
    """`value` (a free text, or any JSON holding texts: a document's name or metadata) with each of `quoted`
    replaced by the placeholder in every text."""
    return _unquoted(value, quoted, True)


def _scrubbed(value: Any, personal: Mapping[str, Mapping[str, Any]]) -> Any:
    if isinstance(value, list):
        return [_scrubbed(entry, personal) for entry in value]
    if not isinstance(value, dict):
        return value
    return {
        key: _data(entry, personal) if key in DATA_KEYS and isinstance(entry, dict) else _scrubbed(entry, personal)
        for key, entry in value.items()
    }


def _values(value: Any, personal: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    """The texts of the personal fields in `value`'s data objects (what `_scrubbed` replaces or drops)."""
    if isinstance(value, list):
        for entry in value:
            yield from _values(entry, personal)
    elif isinstance(value, dict):
        for key, entry in value.items():
            yield from (
                _data_values(entry, personal)
                if key in DATA_KEYS and isinstance(entry, dict)
                else _values(entry, personal)
            )


def _data_values(data: Mapping[str, Any], personal: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    for name, entry in data.items():
        if isinstance(entry, dict):
            yield from _data_values(entry, personal)
        elif name not in personal:
            yield from _values(entry, personal)
        elif isinstance(entry, str):
            yield entry
        elif isinstance(entry, list):
            for e in entry:
                yield from [e] if isinstance(e, str) else _data_values(e, personal) if isinstance(e, dict) else []


def _unquoted(value: Any, quoted: list[str], inside: bool) -> Any:
    """`value` with each of `quoted` replaced by the placeholder in the texts under a QUOTING_KEYS key."""
    if isinstance(value, list):
        return [_unquoted(entry, quoted, inside) for entry in value]
    if isinstance(value, dict):
        return {key: _unquoted(entry, quoted, inside or key in QUOTING_KEYS) for key, entry in value.items()}
    if inside and isinstance(value, str):
        return functools.reduce(lambda text, personal: text.replace(personal, PLACEHOLDER), quoted, value)
    return value


def _data(data: Mapping[str, Any], personal: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    replaced: dict[str, Any] = {}
    for name, entry in data.items():
        prop = personal.get(name)
        if prop is None or isinstance(entry, dict):  # a nested object: its own fields say
            replaced[name] = _data(entry, personal) if isinstance(entry, dict) else scrubbed(entry, personal)
        elif not _text(prop):
            continue  # a personal number, date or flag is dropped
        elif isinstance(entry, list):
            replaced[name] = [
                _placeholder(prop) if isinstance(e, str) else _data(e, personal)
                for e in entry
                if isinstance(e, (str, dict))
            ]
        elif isinstance(entry, str):
            replaced[name] = _placeholder(prop)
    return replaced


def _text(prop: Mapping[str, Any]) -> bool:
    return str(prop.get("type") or "string").rstrip("?*+!") == "string"


def _placeholder(prop: Mapping[str, Any]) -> str:
    minimum, maximum = _limit(prop.get("minLength")), _limit(prop.get("maxLength"))
    text = _sized(PLACEHOLDER, minimum, maximum)
    pattern = _pattern(prop.get("regex"))
    if pattern is None or pattern.fullmatch(text):
        return text
    lengths = range(max(minimum or 1, 1), min(maximum or len(EMAIL_PLACEHOLDER), len(EMAIL_PLACEHOLDER)) + 1)
    candidates = [_sized(EMAIL_PLACEHOLDER, minimum, maximum), *(filler * n for filler in FILLERS for n in lengths)]
    return next((candidate for candidate in candidates if pattern.fullmatch(candidate)), text)


def _sized(text: str, minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and len(text) < minimum:
        text = text.ljust(minimum, "X")
    if maximum is not None and len(text) > maximum:
        text = text[: max(maximum, 1)]
    return text


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _pattern(pattern: Any) -> re.Pattern[str] | None:
    return _compiled(pattern) if isinstance(pattern, str) and pattern else None


def _limit(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None
