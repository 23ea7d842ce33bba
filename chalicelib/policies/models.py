"""Policies (spec part 2, "Policy, quote and snapshot records", "Transaction records"): the policy, its
terms, transactions and segments as stored, and the issuance interface the quotes domain calls.

A policy changes only through transactions; issuing a quote adds the policy with term 0 (terms count
from 0: a plan's `termNumberFormat` shows `{termNumberPlusOne}`), an `issuance` transaction in state
`issued` and its `coverage` segment, which holds the element tree as one document. Policy statuses
are not stored: statuses.py derives them from the clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from chalicelib.accounts.models import BillingLevel, ContactRole
from chalicelib.configuration.datamodel import ValidationResult
from chalicelib.core import durations
from chalicelib.priceable.models import Charge, DurationBasis, Element, Flag, SegmentType

ENTITY = "policy"
"""The entity kind of policy numbers and the `code` prefix of policy errors."""
TERM_ENTITY = "term"
TRANSACTION_ENTITY = "transaction"
SEGMENT_ENTITY = "segment"
ISSUANCE_TRANSACTION_TYPE = "issuance"


class PolicyStatus(StrEnum):
    PENDING = "pending"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    CANCEL_PENDING = "cancelPending"
    ON_RISK = "onRisk"
    DELINQUENT = "delinquent"
    DO_NOT_RENEW = "doNotRenew"


class TransactionState(StrEnum):
    DRAFT = "draft"
    INITIALIZED = "initialized"
    VALIDATED = "validated"
    EARLY_UNDERWRITTEN = "earlyUnderwritten"
    PRICED = "priced"
    UNDERWRITTEN = "underwritten"
    ACCEPTED = "accepted"
    ISSUED = "issued"
    UNDERWRITTEN_BLOCKED = "underwrittenBlocked"
    DECLINED = "declined"
    REJECTED = "rejected"
    REFUSED = "refused"
    DISCARDED = "discarded"
    INVALIDATED = "invalidated"
    REVERSED = "reversed"


LIVE_UNISSUED = frozenset(TransactionState) - {
    TransactionState.ISSUED,
    TransactionState.DISCARDED,
    TransactionState.REFUSED,
    TransactionState.INVALIDATED,
    TransactionState.REVERSED,
}
"""The states of a transaction that is not issued and could still be."""


class TransactionCategory(StrEnum):
    ISSUANCE = "issuance"
    CHANGE = "change"
    RENEWAL = "renewal"
    CANCELLATION = "cancellation"
    REINSTATEMENT = "reinstatement"
    REVERSAL = "reversal"
    AGGREGATE = "aggregate"


# --- the issuance interface (quotes -> policies) ----------------------------------------------------


class PolicyIssuance(BaseModel):
    """Everything issuing a quote creates a policy from. `policyNumber` None: the policies service
    numbers the policy from the product's numbering plan (no plan: no number)."""

    quoteLocator: str
    accountLocator: str
    productName: str
    policyNumber: str | None = None
    startTime: datetime
    endTime: datetime
    currency: str
    timezone: str
    durationBasis: DurationBasis
    termDuration: Decimal | None = None
    billingLevel: BillingLevel | None = None
    delinquencyPlanName: str | None = None
    installmentPlanName: str | None = None
    autoRenewalPlanName: str | None = None
    invoiceFeeAmount: Decimal | None = None
    static: dict[str, Any] = {}
    element: Element
    charges: list[Charge] = []
    preferences: dict[str, Any] = {}
    configVersion: str
    contacts: list[ContactRole] = []
    region: str | None = None
    jurisdiction: str | None = None
    producerCode: str | None = None
    transactionType: str = ISSUANCE_TRANSACTION_TYPE
    acceptedTime: datetime | None = None


class PolicyIssued(BaseModel):
    """What issuing created. `policyNumber` is None when the product has no numbering plan and the
    quote brought no number."""

    policyLocator: str
    policyNumber: str | None
    termLocator: str
    transactionLocator: str
    segmentLocator: str


# --- stored records ---------------------------------------------------------------------------------


class ProducerInfo(BaseModel):
    producerCode: str | None = None
    producerCodeOfRecord: str | None = None


class SegmentOutline(BaseModel):
    """What a segment and a transaction's summary of it share: the segment, its type and its span."""

    locator: str
    segmentType: SegmentType
    startTime: datetime
    endTime: datetime

    def spans(self, moment: datetime) -> bool:
        return self.startTime <= moment < self.endTime


class Segment(SegmentOutline):
    """A span of a term as one transaction left it: the whole element tree is in this one record."""

    transactionLocator: str
    policyLocator: str
    termLocator: str
    duration: Decimal
    element: Element
    basedOn: str | None = None
    producerInfo: ProducerInfo | None = None
    anonymizedAt: datetime | None = None


class SegmentSummary(SegmentOutline):
    """What a transaction keeps of each segment it made (or, unissued, will make): enough to pick the
    one spanning a date and to lay it on the policy's timeline."""

    restores: str | None = None
    """A reinstatement at the cancellation's time: the cancellation whose coverage it gives back."""

    @classmethod
    def of(cls, segment: Segment, *, restores: str | None = None) -> SegmentSummary:
        return cls(**segment.model_dump(include=set(SegmentOutline.model_fields)), restores=restores)


class Transaction(BaseModel):
    """A policy transaction, issued or being worked on (the transactions domain advances it through the
    priceable engine); its charges are kept in it, the segments it issued in their own records. Until it
    is issued, `segments` holds the span it will make and `element` (once initialized) that segment's
    tree. `version` is the optimistic lock of every change to it."""

    locator: str
    staticLocator: str
    policyLocator: str
    termLocator: str
    effectiveTime: datetime
    transactionState: TransactionState
    transactionCategory: TransactionCategory
    transactionType: str
    data: dict[str, Any] = {}
    preferences: dict[str, Any] = {}
    createdAt: datetime
    createdBy: str
    issuedTime: datetime | None = None
    acceptedTime: datetime | None = None
    baseTransactionLocator: str | None = None
    aggregateTransactionLocator: str | None = None
    reapplicationOfLocator: str | None = None
    underwritingStatus: str | None = None
    validationResult: ValidationResult | None = None
    changeInstructions: list[dict[str, Any]] = []
    segments: list[SegmentSummary] = []
    charges: list[Charge] = []
    quoteLocator: str | None = None
    configVersion: str
    element: Element | None = None
    duration: Decimal | None = None
    flags: list[Flag] = []
    expirationTime: datetime | None = None
    newPolicyEndTime: datetime | None = None
    termDuration: Decimal | None = None
    """A renewal's new term length in the policy's durationBasis units (None: the policy's)."""
    aggregatedTransactionLocators: list[str] = []
    """An aggregate's parts, in the order they apply (reversals, the transaction, reapplications)."""
    reversedTransactionLocators: list[str] = []
    """What a reversal (or an aggregate) undoes."""
    inForceSegmentLocator: str | None = None
    """An issued reversal or aggregate, which make no segment of their own: the segment the policy showed at
    its last moment once its own step was done (a reversal: what it gave back, before any reapplication;
    an aggregate: after all its parts). Its segment in the API."""
    anonymizedAt: datetime | None = None
    updatedAt: datetime | None = None
    updatedBy: str | None = None
    version: int = 1


class Term(BaseModel):
    locator: str
    staticLocator: str
    policyLocator: str
    number: int
    termNumber: str | None = None
    startTime: datetime
    endTime: datetime
    previousTermLocator: str | None = None
    supersedesTermLocator: str | None = None
    autoRenewalLocator: str | None = None
    anonymizedAt: datetime | None = None
    """Set by anonymization (chalicelib/compliance); kept by every rewrite of the term."""


class HeldScope(BaseModel):
    """What an active entity hold (chalicelib/entity_holds) blocks on its quote or policy: a quote advancing past
    `quoteState`, or the policy's transactions of `transactionCategories` or `transactionTypes`; with
    `staticData`, changes of the quote's or policy's static data."""

    holdLocator: str
    quoteState: str | None = None
    transactionCategories: list[str] = []
    transactionTypes: list[str] = []
    staticData: bool = False

    def blocks_transaction(self, category: str, transaction_type: str) -> bool:
        return category in self.transactionCategories or transaction_type in self.transactionTypes


class Policy(BaseModel):
    """The policy root. `startTime`, `endTime` and the `latest*`/`issued*` locators follow issued
    transactions only; `version` is the optimistic lock of every change to the policy."""

    locator: str
    accountLocator: str
    productName: str
    policyNumber: str | None = None
    quoteLocator: str | None = None
    currency: str
    timezone: str
    durationBasis: DurationBasis
    termDuration: Decimal | None = None
    billingLevel: BillingLevel
    region: str | None = None
    jurisdiction: str | None = None
    producerCode: str | None = None
    producerCodeOfRecord: str | None = None
    autoRenewalPlanName: str | None = None
    delinquencyPlanName: str | None = None
    installmentPlanName: str | None = None
    invoiceFeeAmount: Decimal | None = None
    static: dict[str, Any] = {}
    contacts: list[ContactRole] = []
    moratoriumElections: dict[str, str] = {}
    preferences: dict[str, Any] = {}
    startTime: datetime
    endTime: datetime
    issuedTransactionLocator: str
    latestSegmentLocator: str
    latestTermLocator: str
    branchHeadTransactionLocators: list[str] = []
    cancellationTime: datetime | None = None
    """The effective time of the issued cancellation the policy's coverage ends with (None: it does not)."""
    delinquencyLocators: list[str] = []
    """The billing domain's delinquencies of the policy that are in grace (its status `delinquent`)."""
    entityHolds: list[HeldScope] = []
    """What the policy's active entity holds block."""
    validationResult: ValidationResult | None = None
    configVersion: str
    createdAt: datetime
    anonymizedAt: datetime | None = None
    createdBy: str
    updatedAt: datetime
    updatedBy: str
    version: int = 1


class PolicySnapshot(BaseModel):
    """The policy as one issued transaction's segment shows it."""

    policy: Policy
    transaction: Transaction
    segment: Segment


class TransactionIssue(BaseModel):
    """Everything issuing one transaction writes (policies.service.issue_transaction): the issued
    transaction (rewritten on condition of its version), its new segments, the terms it adds, those
    whose span it changes and those it removes, the other transactions whose state it changes
    (invalidated, reversed: each on condition of its version), the transactions it adds (an aggregate's
    parts) and the policy root as it leaves it (on condition of the version the stack was read at)."""

    transaction: Transaction
    segments: list[Segment] = []
    terms: list[Term] = []
    changed_terms: list[Term] = []
    removed_terms: list[Term] = []
    """Terms no coverage is left in (a reversed renewal's): deleted."""
    changed: list[Transaction] = []
    invalidated: list[Transaction] = []
    """The other branches' transactions, invalidated (the part of an issue that may overflow one write)."""
    added: list[Transaction] = []
    policy: Policy


def branch_heads(transactions: list[Transaction], issued_head: str) -> list[str]:
    """The head of every branch of a policy (`branchHeadTransactionLocators`), in the order of
    `transactions`: each live unissued transaction no other one is based on, and the latest issued
    transaction (`issued_head`) while none is based on it or on a transaction it aggregates."""
    live = {t.locator for t in transactions if t.transactionState in LIVE_UNISSUED}
    bases = {t.baseTransactionLocator for t in transactions if t.locator in live}
    head = next((t for t in transactions if t.locator == issued_head), None)
    extended = head is not None and not bases.isdisjoint({head.locator, *head.aggregatedTransactionLocators})
    return [
        t.locator
        for t in transactions
        if (t.locator in live and t.locator not in bases) or (t.locator == issued_head and not extended)
    ]


class IssuedStack(BaseModel):
    """A policy as one strongly consistent read of its item collection saw it. An issue computed from
    it is written on condition that the root is still at `policy.version`."""

    policy: Policy
    terms: list[Term] = []
    transactions: list[Transaction] = []
    """In creation order, issued or not."""
    segments: dict[str, Segment] = {}
    abandoned_transactions: list[str] = []
    """Transactions (by locator) of issue attempts that never committed: no read shows them."""
    abandoned_segments: list[str] = []
    """Segments (by locator) of issue attempts that never committed."""
    complete: bool = True
    """False for a head (repository.head): the root, every term, the latest segment, the transaction
    that made it, the latest issued transaction and every live unissued one; the rest of the history is
    left out. Enough to work out and issue a transaction in sequence after the last one in processing
    order (transactions.timeline says how), never to list or show the history."""

    def issued(self) -> list[Transaction]:
        """The issued transactions (neither reversed nor reapplied), in issuing order."""
        issued = [
            (t.issuedTime, t.locator, t)
            for t in self.transactions
            if t.transactionState == TransactionState.ISSUED and t.issuedTime is not None
        ]
        return [transaction for _, _, transaction in sorted(issued, key=lambda entry: entry[:2])]


# --- auto-renewal plans (the transactions domain renews; issuing here puts the due entry) ---------------


RENEWAL_GRACE = timedelta(days=7)
"""A renewal a run missed (say, while the scheduler was down) is still made up to a week after the term
ended, effective at the end; a later one needs a person."""


class RenewalPlan(BaseModel):
    """An AutoRenewalPlanRef as the configuration holds it. A plan that omits a lead takes the next step's:
    no issue lead is 0 (issued at the term end), no accept lead is the issue lead, no create lead is the
    accept lead."""

    model_config = ConfigDict(extra="ignore")

    generateAutoRenewals: bool
    newTermDuration: int | None = None
    renewalCreateLeadDays: int | None = None
    renewalAcceptLeadDays: int | None = None
    renewalIssueLeadDays: int | None = None
    renewalTransactionType: str | None = None

    @property
    def issue_lead(self) -> int:
        return max(self.renewalIssueLeadDays or 0, 0)

    @property
    def accept_lead(self) -> int:
        return max(self.renewalAcceptLeadDays, 0) if self.renewalAcceptLeadDays is not None else self.issue_lead

    @property
    def create_lead(self) -> int:
        return max(self.renewalCreateLeadDays, 0) if self.renewalCreateLeadDays is not None else self.accept_lead


def renewal_plans(model: Mapping[str, Any]) -> dict[str, RenewalPlan]:
    """The configuration's auto-renewal plans by name."""
    return {
        name: RenewalPlan.model_validate(definition)
        for name, definition in (model.get("autoRenewalPlans") or {}).items()
        if isinstance(definition, dict)
    }


def renewal_due(plan: RenewalPlan | None, policy: Policy, now: datetime) -> datetime | None:
    """When the renewal of the policy's last term falls due (the due entry `policy.autoRenew`): its plan's
    earliest step (the create lead, unless another lead is longer) before the term end, in calendar days
    on the policy's wall clock. None when the plan renews
    nothing, the policy is cancelled (a cancellation holds to the end of the term) or its term ended more
    than RENEWAL_GRACE before `now`."""
    if plan is None or not plan.generateAutoRenewals or policy.cancellationTime is not None:
        return None
    if now - policy.endTime > RENEWAL_GRACE:
        return None
    earliest = max(plan.create_lead, plan.accept_lead, plan.issue_lead)  # a later step brings the earlier ones
    return durations.shift(policy.endTime, -earliest, "days", policy.timezone)
