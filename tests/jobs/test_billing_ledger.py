"""The billing ledger over random policy histories (hypothesis; issue "Billing I"): a PersonalAuto policy issued
on a fresh account under a random installment plan (Monthly, Quarterly with weights 3 and 2, or FullPay:
tests/api/billing/support.py), then one to six random operations: changes (premium up or down, at a random
time of either term, or out of sequence: before the latest issued transaction), cancellations, reinstatements,
renewals, reversals (of the latest reversible transaction or an earlier one), payments (a random amount,
exactly what is open or half of it; no target, the account, an invoice, an invoice then the account; capped or
not; validated first or not), payment reversals, write-offs (of an invoice, an invoice item or the account;
all that remains, half of it, a random amount, or more than remains, which is refused), write-off reversals
(whole, half or a random amount of what the write-off still holds), billing holds (invoicing, delinquency) and
their release, credit distributions of the credit balance (all, half, a random amount or more than it holds,
which is refused; to the open invoices, the account or an invoice) and disbursements (taken to executed at
once; more than the balance is refused), their reversals, invoice generation and the clock moving on, which
runs what fell due meanwhile as a test clock's advance does (runtime/due.py: invoice generation, unpaid
invoices falling due open delinquencies under the default plan Ledger, 10 days of grace, whose ends lapse the
policy: a cancellation issued and billed, its refund into credit). The billing jobs run after every issue
(`jobs.drain()`). Active holds are released before the last generation. Four tests of 60 histories each (`make
ledger` runs 500 each): invoices generated after every transaction up to a far future, or only at random
moments up to a random horizon (and up to the far future at the end); the account billed, or the policy on its
own. Driven through the services, one tenant per test, a fresh account per history; a history of vehicle value
9000 starts on a migrated account (its account and policy brought in by a migration: MIGRATED_VALUE). What a
history costs is mostly moto's DynamoDB: some 0.8 s of CPU before its first operation (the policy issued and
billed, a term of monthly invoices, the checks), 0.2 s to 0.6 s an operation.

After every history, to the cent (Decimal):

1. Installments. Every charge of every issued transaction of the policy (reversed ones included: they
   were billed when issued, and what reverses them is billed too; the reversal and reapplication parts
   of an aggregate included) is billed once: the installment items naming it sum to its amount, and no
   item names any other charge. Every transaction billed on its own (the issuance, a change, a
   cancellation, ... or the aggregate of an out-of-sequence issue, whose parts it bills) has exactly one
   lattice, and the items of its installments are charges of it and its parts. So the items of all
   installments of the policy sum to the sum of all those charges. No installment is empty.
2. Invoices. Every installment is invoiced (the last generation reaches every generate time; no
   uninvoiced marker is left), by exactly one invoice, which lists it, and which it names; every invoice
   item sums the installment items that name it (and lists exactly those); every invoice's totalAmount ==
   the sum of its items == the sum of the items of the installments it lists (but an owed invoice's,
   which lists none: see 3).
3. The account's ledger (chalicelib/billing/ledger.py, billing/payments/, billing/writeoffs/). An application is money a
   posted payment put on an invoice (its amount > 0, the sum of its item amounts); reversing the payment
   marks it reversed. A write-off holds, per invoice item, what it settled less what its reversals gave
   back ("written off" below).
   - per invoice: totalAmount == sum(its non-reversed applications) - creditedAmount + written off
     + totalRemainingAmount, where creditedAmount is what settling it (zero or negative, at generation)
     moved into the credit balance, and totalRemainingAmount == sum(its items' remainingAmount). A
     positive invoice credits nothing, is open iff totalRemainingAmount > 0 (else settled at 0), and each
     item's amount == its non-reversed applications + written off + its remainingAmount; a zero or
     negative one is settled with creditedAmount == -totalAmount and nothing written off. The open
     markers name exactly the open invoices.
   - per write-off (each one this test made; a refused one is none): amount == the sum of its targets'
     amounts == what it settled, which is what this test works out on its own (targets in order, the
     account's open invoices oldest due first); reversedAmount == what its reversals gave back, as this
     test sent them; it is `reversed` iff that is all of it. Written off money never reaches the credit
     balance.
   - per payment (each one this test created): posted: the amount this test sent == sum(its applications,
     none reversed) + creditedAmount (what it left for the credit balance); reversed: all its applications
     reversed; the applications it names are exactly those of its source. Posting applies what this test
     works out on its own: targets in order, an account target the open invoices oldest due first, each
     taking at most its remaining amount and the target's cap, the rest credited, over any number of
     invoices (more than one write holds is staged: billing/staging.py; two tests post, reverse and write
     off over 36 and 108 invoices), and nothing staged is left behind.
   - per credit distribution (each one this test created): executed: it applied what this test works out
     (as a posting of its amount to its targets), in applications of its own, none reversed; reversed: all
     of them reversed; refused: none. Per disbursement: executed or reversed as this test left it.
   - the account: sum(invoice totalAmount) == sum(amount of posted, not reversed, payments)
     - sum(their creditedAmount) + what executed distributions applied - sum(invoice creditedAmount)
     + written off + sum(invoice totalRemainingAmount); and
     the credit balance (as stored and as the service answers it) == sum(creditedAmount of posted, not
     reversed, payments) + sum(invoice creditedAmount) - what executed distributions applied - executed
     disbursements + owed == sum(credit ledger lines) - sum(debit ledger lines) >= 0: never negative.
   - per payment reversal: when the balance holds less than the payment credited (its credit was used),
     the credit distributions executed since its posting are reversed too, the latest first, until it
     holds enough, and what is still missing (it was disbursed) is owed: one owed invoice of exactly that
     (`owedFor` the payment, no installments), open. "pay, use the credit, reverse" draws these: a
     payment of the oldest open invoice with more than it needs, the credit distributed, disbursed or
     half each, the payment reversed.
4. Delinquencies: one in grace has an open invoice and its open marker, and the policy is delinquent by
   exactly those of it in grace.
5. The spread (DECISIONS.md "Billing"): a frame's coverage is measured in the policy's durationBasis
   (months), so every whole frame of a lattice (all but its first, which may start mid-frame, and its last,
   which takes the rounding remainder) bills each scheduled charge the same amount per unit of its plan
   weight, to the cent: February as much as March. A frame that had not started when it was billed is
   never due before its generate time.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from chalicelib.accounts import service as accounts
from chalicelib.accounts.models import AccountFields
from chalicelib.billing import ledger, repository
from chalicelib.billing.credit import service as credit
from chalicelib.billing.credit.models import (
    CreditDistribution,
    CreditDistributionState,
    Disbursement,
    DisbursementState,
)
from chalicelib.billing.delinquency import repository as delinquency_repository
from chalicelib.billing.delinquency import service as delinquency_service
from chalicelib.billing.delinquency.models import OPEN_STATES, Delinquency, DelinquencyReference
from chalicelib.billing.holds import service as billing_holds
from chalicelib.billing.holds.models import HoldTarget
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.installments import service as installment_service
from chalicelib.billing.installments.models import ChargeInvoicing, Installment, InstallmentLattice
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.billing.invoices.models import Application, Invoice, InvoiceState
from chalicelib.billing.models import ContainerType, CreditBalance, LedgerLine, PaymentTarget
from chalicelib.billing.payments import service as payments
from chalicelib.billing.payments.models import Payment, PaymentState
from chalicelib.billing.payments.schemas import PaymentCreateRequest
from chalicelib.billing.writeoffs import allocation as writeoff_allocation
from chalicelib.billing.writeoffs import repository as write_off_repository
from chalicelib.billing.writeoffs import service as write_offs
from chalicelib.billing.writeoffs.models import WriteOff, WriteOffState
from chalicelib.core.context import CallContext
from chalicelib.core.errors import DomainError, InvalidRequest, InvalidState
from chalicelib.core.paging import PageRequest
from chalicelib.migration import service as migration
from chalicelib.migration.models import AccountMigrationRequest
from chalicelib.policies import service as policies
from chalicelib.policies.models import Transaction, TransactionCategory
from chalicelib.quotes import service as quotes
from chalicelib.quotes.models import QuoteFields
from chalicelib.runtime import due
from chalicelib.runtime.jobs import get_job
from chalicelib.storage import codec, due_index, keys, query, table
from chalicelib.transactions import service as transactions
from chalicelib.transactions.models import OneInstruction, ReversalRequest
from tests.api.billing.support import billing_model
from tests.api.quotes.support import auto, vehicle
from tests.builders import system_ctx
from tests.support.configs import quotes_tenant
from tests.support.snapshots import Snapshot

UTC = timezone.utc
NOW = datetime(2026, 1, 15, 9, 30, tzinfo=UTC)
"""The clock fixture's time, where every history starts."""
TERM_START = datetime(2026, 2, 1, 5, tzinfo=UTC)
"""Midnight in New York: the policy runs a year from here (a renewal adds a second)."""
FAR = datetime(2100, 1, 1, tzinfo=UTC)
ZERO = Decimal(0)
CENT = Decimal("0.01")
PLANS = ("Monthly", "Quarterly", "FullPay")
VALUES = ("9000", "12000.50", "25000", "60000")
"""Vehicle values: premium rate 100, 100, 150 and 200 a month."""
MIGRATED_VALUE = "9000"
"""A history of this value starts on a migrated account (History.migrate): the account and its policy brought in
by a migration (chalicelib/migration), billed by billing from the policy's charges; all after it is the same."""
REVERSIBLE = {
    TransactionCategory.CHANGE,
    TransactionCategory.CANCELLATION,
    TransactionCategory.REINSTATEMENT,
    TransactionCategory.RENEWAL,
}
OPERATIONS = 6
"""At most this many operations after the issue: a history costs some 0.8 s of CPU before its first
operation, and 0.2 s to 0.6 s an operation."""
HISTORIES_PER_TEST = int(os.environ.get("PAS_LEDGER_HISTORIES", "240")) // 4
"""Four tests (invoicing after every transaction or at random moments; the account billed, or the policy
on its own): 240 histories in `make test` (at 500 they were a quarter of the suite's CPU), PAS_LEDGER_HISTORIES
for more (`make ledger`: 2,000, derandomized as here, so the first 240 are `make test`'s)."""

moments = st.builds(
    lambda days, hours: TERM_START + timedelta(days=days, hours=hours),
    st.one_of(st.integers(0, 364), st.integers(365, 729)),
    st.sampled_from([0, 0, 7, 19]),
)
"""An effective time in the first term, or (once renewed) in the second; at midnight or not."""
amounts = st.one_of(st.sampled_from(["open", "half"]), st.decimals(min_value=CENT, max_value=Decimal(2000), places=2))
caps = st.one_of(st.none(), st.decimals(min_value=CENT, max_value=Decimal(500), places=2))
targets = st.one_of(
    st.tuples(st.just("none")),
    st.tuples(st.just("account"), caps),
    st.tuples(st.just("invoice"), st.integers(0, 30), caps),
    st.tuples(st.just("invoice+account"), st.integers(0, 30), caps),
)
transaction_operations = st.one_of(
    st.tuples(st.just("change"), moments, st.sampled_from(VALUES)),
    st.tuples(st.just("backdated change"), st.integers(0, 99), st.sampled_from(VALUES)),
    st.tuples(st.just("cancel"), moments),
    st.tuples(st.just("reinstate"), st.one_of(st.none(), st.none(), moments)),
    st.tuples(st.just("renew")),
    st.tuples(st.just("reverse"), st.sampled_from([0, 0, 0, 1, 2])),
)
write_off_amounts = st.one_of(
    st.sampled_from([None, None, None, "half", "half", "more"]),
    st.decimals(min_value=CENT, max_value=Decimal(700), places=2),
)
"""All that remains on the target, half of it, a cent more than remains (refused), or a random amount."""
reversal_amounts = st.one_of(
    st.sampled_from([None, None, "half"]), st.decimals(min_value=CENT, max_value=Decimal(300), places=2)
)
"""All the write-off still holds, half of it, or a random amount (refused when more than it holds)."""
money_operations = st.one_of(
    st.tuples(st.just("pay"), amounts, targets, st.booleans()),
    st.tuples(st.just("reverse payment"), st.integers(0, 5)),
    st.tuples(
        st.just("pay, use the credit, reverse"),
        st.decimals(min_value=CENT, max_value=Decimal(300), places=2),
        st.sampled_from(["distribute", "disburse", "both"]),
    ),
    st.tuples(
        st.just("write off"),
        st.sampled_from(["invoice", "item", "account"]),
        st.integers(0, 30),
        write_off_amounts,
        st.one_of(st.just("keep"), st.just("keep"), reversal_amounts),
    ),
    st.tuples(st.just("reverse write-off"), st.integers(0, 5), reversal_amounts),
)
credit_amounts = st.one_of(
    st.sampled_from(["all", "all", "half", "more"]), st.decimals(min_value=CENT, max_value=Decimal(500), places=2)
)
"""All of the credit balance, half of it, a cent more than it holds (refused), or a random amount."""
credit_operations = st.one_of(
    st.tuples(st.just("hold"), st.sampled_from(list(HoldTarget))),
    st.tuples(st.just("release hold"), st.integers(0, 3)),
    st.tuples(
        st.just("distribute"), credit_amounts, st.sampled_from(["none", "account", "invoice"]), st.integers(0, 30)
    ),
    st.tuples(st.just("reverse distribution"), st.integers(0, 5)),
    st.tuples(st.just("disburse"), credit_amounts),
    st.tuples(st.just("reverse disbursement"), st.integers(0, 5)),
)
"""Billing holds (invoicing, delinquency) and their release; credit distributions, disbursements and their
reversals."""
time_operations = st.one_of(
    st.tuples(st.just("advance"), st.integers(1, 120)),
    st.tuples(st.just("invoice"), st.one_of(st.none(), st.integers(0, 400))),
)
"""The clock moving on runs what fell due meanwhile (runtime/due.py, as a test clock's advance does):
invoice generation, invoices falling due unpaid (delinquencies), grace ends (lapses, billed like any
cancellation)."""
histories = st.fixed_dictionaries(
    {
        "plan": st.sampled_from(PLANS),
        "value": st.sampled_from(VALUES),
        "operations": st.lists(
            st.one_of(
                transaction_operations, transaction_operations, money_operations, credit_operations, time_operations
            ),
            min_size=1,
            max_size=OPERATIONS,
        ),
        "fleet_paths": st.booleans(),
    }
)
"""`fleet_paths`: the history's one policy goes through the code paths of a fleet's (an account of more policies
than one write holds, whose draw would cost some 0.8 s a policy): a delinquency's settlement, re-opening and their
policies' marks in steps after the payment's or reversal's write (MARKS_IN_PAYMENT 0: also a new delinquency a
reversal opens), every application's and every write-off's item amounts in pages (APPLICATION_INLINE_AMOUNTS 0,
writeoffs/repository.py INLINE_AMOUNTS 0), every delinquency's references in pages (delinquency/repository.py
INLINE_REFERENCES 0)."""


ADA = {
    "firstName": "Ada",
    "lastName": "Lovelace",
    "email": "ada@example.com",
    "address": {"line1": "1 Main St", "city": "Springfield", "postcode": "12345"},
}


def ledger_model() -> dict[str, Any]:
    """The billing test configuration (installment plans, invoice numbers, payment types, the disbursement
    type Refund) with a default delinquency plan: 10 days of grace, then a lapse issued."""
    model = billing_model()
    model["delinquencyPlans"]["Ledger"] = {
        "gracePeriodDays": 10,
        "advanceLapseTo": "issued",
        "delinquencyLevel": "policy",
    }
    model["defaultDelinquencyPlan"] = "Ledger"
    return model


@pytest.fixture
def tenant(api, admin_token) -> str:
    return quotes_tenant(api, admin_token, ledger_model())


# --- one history --------------------------------------------------------------------------------------


@dataclass
class History:
    tenant: str
    clock: Any
    jobs: Any
    eager: bool
    """Invoices generated up to FAR after every transaction; else only at the `invoice` operations."""
    account: str = ""
    policy: str = ""
    vehicle: str = ""
    migration: str = ""
    """A migrated start's migration (MIGRATED_VALUE)."""
    payments: list[str] = field(default_factory=list)
    posted: dict[str, Decimal] = field(default_factory=dict)
    """Payments posted and not reversed: their amounts, as this test sent them."""
    written_off: dict[str, Decimal] = field(default_factory=dict)
    """Write-offs made: what this test worked out each settled."""
    reversed_off: dict[str, Decimal] = field(default_factory=dict)
    """Write-offs made: what their reversals gave back, as this test sent it."""
    distributed: dict[str, Decimal] = field(default_factory=dict)
    """Credit distributions executed and not reversed: what this test worked out they applied."""
    distributions: list[str] = field(default_factory=list)
    disbursed: dict[str, Decimal] = field(default_factory=dict)
    """Disbursements executed and not reversed: their amounts."""
    disbursements: list[str] = field(default_factory=list)
    holds: list[str] = field(default_factory=list)
    """Billing holds active on the account."""
    owed: dict[str, Decimal] = field(default_factory=dict)
    """Payments reversed after their credit was disbursed: what the account owes for it (an owed invoice)."""
    order: dict[str, int] = field(default_factory=dict)
    """Payments posted and credit distributions executed: in the order they were."""
    log: list[Any] = field(default_factory=list)

    def ctx(self) -> CallContext:
        return system_ctx().for_tenant(self.tenant)

    def start(self, plan: str, billing_level: str, value: str) -> None:
        if value == MIGRATED_VALUE:
            self.migrated(plan, billing_level)
        else:
            self.account = accounts.create_account(
                self.ctx(), AccountFields.model_validate({"type": "PersonAccount", "data": ADA})
            ).locator
            self.policy = self.issue_policy(plan, billing_level, value)
        ctx = self.ctx()
        segment = policies.get_segment(ctx, policies.get_policy(ctx, self.policy).latestSegmentLocator)
        self.vehicle = next(e.staticLocator for e in segment.element.elements if e.type == "Vehicle")
        self.billed()

    def requested(self, plan: str, billing_level: str, value: str) -> None:
        """What a start writes beyond DynamoDB, which a snapshot does not hold (started()): a migrated start's
        migration, its request in S3: Ada's account and a PersonalAuto policy, its vehicle at 100 a month (as
        the quote's of MIGRATED_VALUE)."""
        if value != MIGRATED_VALUE:
            return
        ctx = self.ctx()
        preferences = {"installmentPreferences": {"installmentPlanName": plan, "installmentWeights": []}}
        collision = {
            "elementType": "Collision",
            "id": "collision",
            "data": {},
            "charges": [],
            "coverageTerms": {"Limit": "l50k"},
            "elements": [],
        }
        car = {
            "elementType": "Vehicle",
            "id": "vehicle",
            "data": {"vin": "1HGCM82633A004352", "value": 9000},
            "charges": [{"chargeType": "premium", "tag": "band 1", "rate": 100, "referenceRate": 100}],
            "coverageTerms": {},
            "elements": [collision],
        }
        issuance = {
            "issuedTime": NOW,
            "createdAt": NOW,
            "transactionType": "issuance",
            "preferences": preferences,
            "segment": {
                "startTime": TERM_START,
                "segmentType": "coverage",
                "rootElement": {
                    "elementType": "PersonalAuto",
                    "id": "root",
                    "data": {"channel": "web"},
                    "charges": [],
                    "coverageTerms": {},
                    "elements": [car],
                },
            },
        }
        self.migration = migration.start(
            ctx,
            [
                AccountMigrationRequest.model_validate(
                    {
                        "accountData": {"accountType": "PersonAccount", "id": "ada", "data": ADA, "createdAt": NOW},
                        "defaultCreatedBy": ctx.user_locator,
                        "policies": [
                            {
                                "productName": "PersonalAuto",
                                "id": "auto",
                                "durationBasis": "months",
                                "createdAt": NOW,
                                "currency": "USD",
                                "timezone": "America/New_York",
                                "billingLevel": billing_level,
                                "preferences": preferences,
                                "terms": [
                                    {
                                        "startTime": TERM_START,
                                        "endTime": TERM_START.replace(year=2027),
                                        "transactions": [issuance],
                                    }
                                ],
                            }
                        ],
                    }
                )
            ],
        ).locator

    def migrated(self, plan: str, billing_level: str) -> None:
        """The migration's account and policy (`requested`, unless it was), its jobs run."""
        if not self.migration:
            self.requested(plan, billing_level, MIGRATED_VALUE)
        self.jobs.drain()
        [mapped] = migration.mappings(self.ctx(), self.migration, PageRequest(0, 1)).items
        self.account, [self.policy] = mapped.accountLocator, list(mapped.policies)

    def issue_policy(self, plan: str, billing_level: str, value: str) -> str:
        """A PersonalAuto policy of the account, issued (its billing job not run yet)."""
        ctx = self.ctx()
        quote = quotes.create_quote(
            ctx,
            QuoteFields.model_validate(
                auto(
                    self.account,
                    vehicle(value=value),
                    billingLevel=billing_level,
                    preferences={"installmentPreferences": {"installmentPlanName": plan, "installmentWeights": []}},
                )
            ),
        )
        issued = quotes.issue_quote(ctx, quote.locator)
        assert issued.policyLocator, issued.validationResult
        return issued.policyLocator

    def billed(self) -> None:
        self.jobs.drain()
        if self.eager:
            invoicing.generate_invoices(self.ctx(), self.account, up_to=FAR)

    def apply(self, operation: tuple[Any, ...]) -> None:
        kind = operation[0]
        if kind == "advance":
            self.clock.advance(days=operation[1])
            self.run_due()
        elif kind in CREDIT_OPERATIONS:
            getattr(self, CREDIT_OPERATIONS[kind])(*operation[1:])
        elif kind == "invoice":
            horizon = FAR if operation[1] is None else self.clock.now() + timedelta(days=operation[1])
            invoicing.generate_invoices(self.ctx(), self.account, up_to=horizon)
        elif kind == "pay":
            self.pay(*operation[1:])
        elif kind == "write off":
            self.write_off(*operation[1:])
        elif kind == "reverse write-off":
            self.reverse_write_off(*operation[1:])
        elif kind == "reverse payment":
            posted = list(self.posted)
            if posted:
                self.reverse_payment(posted[-1 - operation[1] % len(posted)])
        elif kind == "pay, use the credit, reverse":
            self.pay_use_and_reverse(*operation[1:])
        else:
            self.transact(operation)

    def run_due(self) -> None:
        """What fell due up to now, each at its time, as a test clock's advance runs it; then the billing
        jobs of the lapses it issued."""
        ctx = self.ctx()
        while due.run_step(ctx, ctx.now).more:
            pass
        self.billed()

    # --- transactions

    def transact(self, operation: tuple[Any, ...]) -> None:
        ctx = self.ctx()
        try:
            draft = self.draft(ctx, operation)
            if draft is None:
                return
            issued = transactions.issue(ctx, draft.locator)
        except DomainError as refused:  # the policy refuses it (cancelled, outside the terms, ...)
            self.log.append((operation, refused.code))
            return
        self.log.append((operation, issued.transactionState.value))
        self.billed()

    def draft(self, ctx: CallContext, operation: tuple[Any, ...]) -> Transaction | None:
        kind = operation[0]
        if kind in ("change", "backdated change"):
            when = operation[1] if kind == "change" else self.before_latest(ctx, operation[1])
            return transactions.create_transaction(
                ctx,
                self.policy,
                [
                    instruction({"action": "params", "effectiveTime": when.isoformat()}),
                    instruction(
                        {"action": "modify", "staticLocator": self.vehicle, "setData": {"value": operation[2]}}
                    ),
                ],
                route="change",
            )
        if kind == "cancel":
            return transactions.create_transaction(
                ctx,
                self.policy,
                [instruction({"action": "params", "effectiveTime": operation[1].isoformat()})],
                route="cancel",
            )
        if kind == "reinstate":
            given = (
                [instruction({"action": "params", "effectiveTime": operation[1].isoformat()})] if operation[1] else []
            )
            return transactions.create_transaction(ctx, self.policy, given, route="reinstate")
        if kind == "renew":
            return transactions.create_transaction(ctx, self.policy, [], route="renew")
        issued = transactions.issued_transactions(ctx, self.policy, PageRequest(0, 100)).items
        reversible = [t.locator for t in issued if t.transactionCategory in REVERSIBLE]
        if not reversible:
            return None
        return transactions.create_reversal(
            ctx,
            self.policy,
            ReversalRequest(
                baseLocator=policies.get_policy(ctx, self.policy).issuedTransactionLocator,
                toTransaction=issued[0].locator,
                reverseTransactions=[reversible[-1 - operation[1] % len(reversible)]],
            ),
        )

    def before_latest(self, ctx: CallContext, percent: int) -> datetime:
        """A time between the term start and the latest issued transaction's effective time: out of sequence."""
        issued = transactions.issued_transactions(ctx, self.policy, PageRequest(0, 100)).items
        latest = max(t.effectiveTime for t in issued)
        return TERM_START + (latest - TERM_START) * percent // 100

    # --- payments

    def pay(self, amount: Decimal | str, target: tuple[Any, ...], validate: bool) -> None:
        ctx = self.ctx()
        invoices = self.invoices(ctx)
        open_invoices = sorted(
            (i.dueTime, i.locator, i.totalRemainingAmount) for i in invoices if i.invoiceState == InvoiceState.OPEN
        )
        owed = sum((remaining for _, _, remaining in open_invoices), ZERO)
        if amount in ("open", "half"):
            chosen = owed if amount == "open" else (owed / 2).quantize(CENT)
            amount = max(chosen, CENT)
        chosen_targets: list[dict[str, Any]] = []
        if target[0] in ("invoice", "invoice+account") and invoices:
            chosen_targets.append(
                {
                    "containerType": "invoice",
                    "containerLocator": invoices[target[1] % len(invoices)].locator,
                    "amount": target[2],
                }
            )
        if target[0] in ("account", "invoice+account"):
            chosen_targets.append(
                {
                    "containerType": "account",
                    "containerLocator": self.account,
                    "amount": target[-1] if target[0] == "account" else None,
                }
            )
        payment = payments.create_payment(
            ctx,
            PaymentCreateRequest.model_validate(
                {
                    "accountLocator": self.account,
                    "type": "Check",
                    "amount": amount,
                    "targets": [{k: v for k, v in t.items() if v is not None} for t in chosen_targets],
                }
            ),
        )
        self.payments.append(payment.locator)
        if validate:
            payments.validate_payment(ctx, payment.locator)
        expected_applied, expected_credit = expected_posting(
            Decimal(amount),
            payment.targets,
            self.account,
            [locator for _, locator, _ in open_invoices],
            {locator: left for _, locator, left in open_invoices},
        )
        posted = payments.post_payment(ctx, payment.locator)
        self.posted[posted.locator] = Decimal(amount)
        self.order[posted.locator] = len(self.order)
        applied: dict[str, Decimal] = defaultdict(Decimal)
        for application in invoice_repository.applications(
            ctx.tenant,
            self.account,
            [(invoice, application) for invoice, application in (ref.split("/", 1) for ref in posted.applications)],
        ):
            applied[application.invoiceLocator] += application.amount
        assert dict(applied) == expected_applied, (amount, target, open_invoices)
        assert posted.creditedAmount == expected_credit

    def reverse_payment(self, locator: str) -> None:
        """Reverse a posted payment: when the credit balance holds less than it credited, the distributions
        executed since it was posted are reversed too, the latest first, until it holds enough, and what is
        still missing (disbursed) is owed, on an invoice of its own; the balance never goes negative."""
        ctx = self.ctx()
        credited = payments.payment(ctx, locator).creditedAmount
        short = credited - repository.credit_balance(ctx.tenant, self.account, "USD").balance
        funded = []
        for distribution in sorted(
            (d for d in self.distributed if self.order[d] > self.order[locator]),
            key=self.order.__getitem__,
            reverse=True,
        ):
            if short <= 0:
                break
            if self.distributed[distribution]:
                funded.append(distribution)
                short -= self.distributed[distribution]
        before = {i.locator for i in self.invoices(ctx)}
        payments.reverse_payment(ctx, locator, "test")
        del self.posted[locator]
        for distribution in funded:
            del self.distributed[distribution]
            assert credit.distribution(ctx, distribution).creditDistributionState == CreditDistributionState.REVERSED
        made = [i for i in self.invoices(ctx) if i.locator not in before]
        if short > 0:
            [owed] = made
            assert (owed.owedFor, owed.totalAmount, owed.invoiceState) == (locator, short, InvoiceState.OPEN)
            self.owed[locator] = short
        else:
            assert not made
        assert repository.credit_balance(ctx.tenant, self.account, "USD").balance >= 0

    def pay_use_and_reverse(self, extra: Decimal, use: str) -> None:
        """Pay the oldest open invoice with `extra` more than it needs (into credit), use the credit (a
        distribution to the open invoices, a disbursement, or half each), then reverse the payment."""
        ctx = self.ctx()
        invoices = self.invoices(ctx)
        open_invoices = sorted(
            (i for i in invoices if i.invoiceState == InvoiceState.OPEN), key=lambda i: (i.dueTime, i.locator)
        )
        if not open_invoices:
            return
        oldest = open_invoices[0]
        self.pay(oldest.totalRemainingAmount + extra, ("invoice", invoices.index(oldest), None), False)
        if use in ("distribute", "both"):
            self.distribute("half" if use == "both" else "all", "none", 0)
        if use in ("disburse", "both"):
            self.disburse("all")
        self.reverse_payment(self.payments[-1])

    # --- write-offs

    def write_off(self, kind: str, index: int, amount: Decimal | str | None, then: Decimal | str | None) -> None:
        """Write off a target; then (unless `then` is "keep") reverse the write-off, whole or partly."""
        ctx = self.ctx()
        open_invoices = sorted(
            (i for i in self.invoices(ctx) if i.invoiceState == InvoiceState.OPEN), key=lambda i: (i.dueTime, i.locator)
        )
        remaining = {i.locator: i.totalRemainingAmount for i in open_invoices}
        if kind == "account":
            target, available = (
                {"containerType": "account", "containerLocator": self.account},
                sum((max(left, ZERO) for left in remaining.values()), ZERO),
            )
        elif not open_invoices:
            return
        else:
            chosen = open_invoices[index % len(open_invoices)]
            if kind == "invoice":
                target, available = (
                    {"containerType": "invoice", "containerLocator": chosen.locator},
                    max(chosen.totalRemainingAmount, ZERO),
                )
            else:
                item = chosen.invoiceItems[index % len(chosen.invoiceItems)]
                target, available = (
                    {"containerType": "invoiceItem", "containerLocator": item.locator},
                    max(min(item.remainingAmount, chosen.totalRemainingAmount), ZERO),
                )
        if amount == "half":
            amount = max((available / 2).quantize(CENT), CENT)
        elif amount == "more":
            amount = available + CENT
        wanted = available if amount is None else Decimal(amount)
        request = [{**target, "amount": amount}] if amount is not None else [target]
        targets = [PaymentTarget.model_validate(t) for t in request]
        if wanted <= 0 or wanted > available:
            with pytest.raises(InvalidRequest) as refused:
                write_offs.create_write_off(ctx, self.account, targets)
            assert refused.value.code == "writeOff.exceeds_remaining"
            self.log.append((("write off", kind, amount), "refused: more than remains"))
            return
        made = write_offs.create_write_off(ctx, self.account, targets)
        expected = expected_write_off(wanted, target, open_invoices)
        assert {a.invoiceLocator: a.amount for a in made.allocations} == expected, (kind, amount, remaining)
        assert made.amount == wanted
        self.written_off[made.locator] = wanted
        self.reversed_off[made.locator] = ZERO
        if then != "keep":
            self.reverse_write_off(0, then)

    def reverse_write_off(self, index: int, amount: Decimal | str | None) -> None:
        live = [w for w in self.written_off if self.reversed_off[w] < self.written_off[w]]
        if not live:
            return
        locator = live[-1 - index % len(live)]
        held = self.written_off[locator] - self.reversed_off[locator]
        if amount == "half":
            amount = max((held / 2).quantize(CENT), CENT)
        given = held if amount is None else Decimal(amount)
        if given > held:
            with pytest.raises(InvalidRequest):
                write_offs.reverse_write_off(self.ctx(), locator, given, "test")
            return
        reversed_ = write_offs.reverse_write_off(self.ctx(), locator, None if amount is None else given, "test")
        self.reversed_off[locator] += given
        assert reversed_.reversedAmount == self.reversed_off[locator]

    # --- holds, credit distributions, disbursements

    def hold(self, target: HoldTarget) -> None:
        ctx = self.ctx()
        made = billing_holds.create_hold(ctx, self.account, target)
        self.holds.append(billing_holds.move_hold(ctx, made.locator, "activate").locator)

    def release_hold(self, index: int) -> None:
        if self.holds:
            billing_holds.move_hold(self.ctx(), self.holds.pop(index % len(self.holds)), "release")

    def credit_amount(self, ctx: CallContext, amount: Decimal | str) -> Decimal:
        balance = repository.credit_balance(ctx.tenant, self.account, "USD").balance
        if amount == "all":
            return balance
        if amount == "half":
            return (balance / 2).quantize(CENT)
        return balance + CENT if amount == "more" else Decimal(amount)

    def distribute(self, amount: Decimal | str, target: str, index: int) -> None:
        """A credit distribution of the balance, executed: what it applies is what a payment of that
        amount to the same targets would; more than the balance is refused and moves nothing."""
        ctx = self.ctx()
        wanted = self.credit_amount(ctx, amount)
        if wanted <= 0:
            return
        open_invoices = sorted(
            (i for i in self.invoices(ctx) if i.invoiceState == InvoiceState.OPEN), key=lambda i: (i.dueTime, i.locator)
        )
        chosen: list[PaymentTarget] = []
        if target == "account":
            chosen = [PaymentTarget(containerType=ContainerType.ACCOUNT, containerLocator=self.account)]
        elif target == "invoice" and open_invoices:
            chosen = [
                PaymentTarget(
                    containerType=ContainerType.INVOICE,
                    containerLocator=open_invoices[index % len(open_invoices)].locator,
                )
            ]
        made = credit.create_distribution(ctx, self.account, wanted, None, [], chosen)
        self.distributions.append(made.locator)
        if wanted > repository.credit_balance(ctx.tenant, self.account, "USD").balance:
            with pytest.raises(InvalidState) as refused:
                credit.execute_distribution(ctx, made.locator)
            assert refused.value.code == "credit.insufficient_balance"
            return
        expected, left = expected_posting(
            wanted,
            chosen,
            self.account,
            [i.locator for i in open_invoices],
            {i.locator: i.totalRemainingAmount for i in open_invoices},
        )
        executed = credit.execute_distribution(ctx, made.locator)
        applied: dict[str, Decimal] = defaultdict(Decimal)
        for application in invoice_repository.applications(
            ctx.tenant,
            self.account,
            [(invoice, application) for invoice, application in (ref.split("/", 1) for ref in executed.applications)],
        ):
            applied[application.invoiceLocator] += application.amount
        assert dict(applied) == expected and executed.appliedAmount == wanted - left, (wanted, target)
        self.distributed[made.locator] = wanted - left
        self.order[made.locator] = len(self.order)

    def reverse_distribution(self, index: int) -> None:
        live = list(self.distributed)
        if live:
            locator = live[-1 - index % len(live)]
            credit.reverse_distribution(self.ctx(), locator, "test")
            del self.distributed[locator]

    def disburse(self, amount: Decimal | str) -> None:
        """A disbursement of the balance taken to executed at once; more than the balance is refused and
        nothing is stored."""
        ctx = self.ctx()
        wanted = self.credit_amount(ctx, amount)
        if wanted <= 0:
            return
        if wanted > repository.credit_balance(ctx.tenant, self.account, "USD").balance:
            with pytest.raises(InvalidState) as refused:
                credit.create_disbursement(
                    ctx, self.account, "Refund", wanted, None, [], {}, advance_to=DisbursementState.EXECUTED
                )
            assert refused.value.code == "credit.insufficient_balance"
            return
        made = credit.create_disbursement(
            ctx, self.account, "Refund", wanted, None, [], {}, advance_to=DisbursementState.EXECUTED
        )
        self.disbursements.append(made.locator)
        self.disbursed[made.locator] = wanted

    def reverse_disbursement(self, index: int) -> None:
        live = list(self.disbursed)
        if live:
            locator = live[-1 - index % len(live)]
            credit.move_disbursement(self.ctx(), locator, "reverse")
            del self.disbursed[locator]

    def invoices(self, ctx: CallContext) -> list[Invoice]:
        return invoicing.invoices_of(ctx, "account", self.account, PageRequest(0, 1000), include_zero=True).items


CREDIT_OPERATIONS = {
    "hold": "hold",
    "release hold": "release_hold",
    "distribute": "distribute",
    "reverse distribution": "reverse_distribution",
    "disburse": "disburse",
    "reverse disbursement": "reverse_disbursement",
}


def instruction(body: dict[str, Any]) -> Any:
    return OneInstruction.model_validate(body).root


def expected_posting(
    amount: Decimal, targets: list[Any], account: str, open_oldest_first: list[str], remaining: dict[str, Decimal]
) -> tuple[dict[str, Decimal], Decimal]:
    """What posting should apply to each invoice, and leave for the credit balance (DECISIONS.md
    "Billing": targets in order, an account target the open invoices oldest due first; settled
    invoices take nothing; no invoice takes more than it has remaining, no target more than its cap)."""
    left = amount
    applied: dict[str, Decimal] = defaultdict(Decimal)
    for target in targets or [_AccountTarget(account)]:
        cap = left if target.amount is None else min(left, target.amount)
        chosen = open_oldest_first if target.containerType == ContainerType.ACCOUNT else [target.containerLocator]
        for invoice in chosen:
            taken = max(min(cap, remaining.get(invoice, ZERO)), ZERO)
            if taken:
                remaining[invoice] -= taken
                applied[invoice] += taken
                cap -= taken
                left -= taken
    return dict(applied), left


def expected_write_off(wanted: Decimal, target: dict[str, str], open_oldest_first: list[Invoice]) -> dict[str, Decimal]:
    """What a write-off of one target should settle on each invoice: an account target the open invoices
    oldest due first, each at most its remaining amount; an invoice or item target its own invoice."""
    if target["containerType"] == "account":
        left, settled = wanted, {}
        for invoice in open_oldest_first:
            taken = max(min(left, invoice.totalRemainingAmount), ZERO)
            if taken:
                settled[invoice.locator] = taken
                left -= taken
        return settled
    owner = next(
        i
        for i in open_oldest_first
        if target["containerLocator"] in (i.locator, *(item.locator for item in i.invoiceItems))
    )
    return {owner.locator: wanted}


@dataclass
class _AccountTarget:
    containerLocator: str
    containerType: ContainerType = ContainerType.ACCOUNT
    amount: Decimal | None = None


# --- reading what billing stored ----------------------------------------------------------------------


def partition(tenant: str, account: str) -> dict[str, list[dict[str, Any]]]:
    """Every record of the account's billing partition, by entity (one strongly consistent Query)."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in query.all_items(
        table.gateway(), keys.tenant_scope(tenant), keys.billing_partition(tenant, account), consistent=True
    ):
        found[item["entity"]].append(codec.without_keys(item))
    return found


def stored_installments(tenant: str, stored: dict[str, list[dict[str, Any]]]) -> list[Installment]:
    """The installments of the partition's lattices (an installment is stored at its own alias key, outside
    the partition: its lattice's references name it); asserts that every uninvoiced marker of the
    partition names one of them (no installment written without its lattice)."""
    found = {
        i.locator: i
        for policy in sorted({lattice["policyLocator"] for lattice in stored["lattice"]})
        for i in installment_repository.all_installments_of(tenant, "policy", policy)
    }
    orphans = {m["locator"] for m in stored["uninvoicedInstallment"]} - found.keys()
    assert not orphans, f"uninvoiced markers of installments no lattice names: {orphans}"
    return list(found.values())


# --- the invariants -----------------------------------------------------------------------------------


def with_paged_write_off_amounts(write_off: dict[str, Any], stored: dict[str, list[dict[str, Any]]]) -> WriteOff:
    """A write-off's stored record with its item amounts, those of its pages when it keeps them there (`amountPages`:
    writeoffs/repository.py INLINE_AMOUNTS), and what its reversals gave back of each (from its `reversedAmount`)."""
    record = WriteOff.model_validate(write_off)
    if not record.amountPages:
        return record
    amounts: dict[str, dict[str, Decimal]] = defaultdict(dict)
    pages = [page for page in stored.get("writeOffPage", []) if page["writeOffLocator"] == record.locator]
    assert len(pages) == record.amountPages, (record.locator, len(pages))
    for page in pages:
        for invoice, item, amount in json.loads(page["itemAmounts"]):
            amounts[invoice][item] = Decimal(amount)
    for each in record.allocations:
        assert each.total == sum(amounts[each.invoiceLocator].values(), ZERO) and not each.itemAmounts
        each.itemAmounts, each.total = amounts[each.invoiceLocator], None
    writeoff_allocation.given_back(record.allocations, record.reversedAmount)
    return record


def with_paged_references(tenant: str, delinquency: dict[str, Any]) -> Delinquency:
    """A delinquency's stored record with its references, those of its pages when it keeps them there
    (`referencePages`: delinquency/repository.py INLINE_REFERENCES); asserts that only the set it names is stored
    (a rewrite of them deleted the old one), each of its pages once."""
    record = Delinquency.model_validate(delinquency)
    pages = query.all_items(
        table.gateway(),
        keys.tenant_scope(tenant),
        keys.billing_partition(tenant, record.accountLocator),
        sk_prefix=f"{keys.BILLING_DELINQUENCY_PAGE_PREFIX}{record.locator}#",
        consistent=True,
    )
    if record.referencePages is None:
        assert not pages, (record.locator, pages)
        return record
    assert not record.references, record.locator
    named = f"#{record.referencePages.pageSet}#"
    assert all(named in page["SK"] for page in pages), (record.locator, [page["SK"] for page in pages])
    assert len(pages) == record.referencePages.count, (record.locator, len(pages))
    record.references = [
        DelinquencyReference(
            locator=locator,
            delinquencyLocator=record.locator,
            referenceLocator=referenced,
            referenceType=kind,
            transactionLocator=transaction,
        )
        for page in pages
        for locator, kind, referenced, transaction in json.loads(page["references"])
    ]
    return record


def with_paged_amounts(application: dict[str, Any], stored: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """An application's stored record with its item amounts, those of its pages when it keeps them there
    (`amountPages`: invoices/repository.py APPLICATION_INLINE_AMOUNTS)."""
    if not application.get("amountPages"):
        return application
    amounts: dict[str, Decimal] = {}
    for page in stored.get("applicationPage", []):
        if page["applicationLocator"] == application["locator"]:
            amounts.update({item: Decimal(amount) for item, amount in json.loads(page["itemAmounts"]).items()})
    return {**application, "itemAmounts": amounts}


def check(history: History, *, other_policies: bool = False) -> None:
    """The invariants above; with `other_policies` (the account has more than the history's policy) all
    but the installments' (1), which are the history's policy's."""
    ctx = history.ctx()
    stored = partition(ctx.tenant, history.account)
    lattices = [InstallmentLattice.model_validate(i) for i in stored["lattice"]]
    installments = stored_installments(ctx.tenant, stored)
    invoices = [Invoice.model_validate(i) for i in stored["invoice"]]
    payments = [Payment.model_validate(i) for i in stored["payment"]]
    applications = [Application.model_validate(with_paged_amounts(i, stored)) for i in stored["application"]]
    lines = [LedgerLine.model_validate(i) for i in stored["ledgerLine"]]
    balances = [CreditBalance.model_validate(i) for i in stored["creditBalance"]]
    written = [with_paged_write_off_amounts(i, stored) for i in stored["writeOff"]]
    drawn = [CreditDistribution.model_validate(i) for i in stored["creditDistribution"]]
    paid_out = [Disbursement.model_validate(i) for i in stored["disbursement"]]
    leftovers = [
        item
        for items in stored.values()
        for item in items
        if repository.STAGED in item or repository.STAGED_TOKEN in item
    ]
    assert not leftovers, f"staged records not rolled forward: {leftovers}"
    if not other_policies:
        check_installments(ctx, history, lattices, installments)
    check_spread(lattices, installments)
    check_invoices(installments, invoices, stored)
    check_ledger(history, invoices, payments, applications, lines, balances, written, drawn, paid_out)
    open_markers = {m["locator"] for m in stored["openInvoice"]}
    assert open_markers == {i.locator for i in invoices if i.invoiceState == InvoiceState.OPEN}
    check_delinquencies(
        ctx, history, [with_paged_references(ctx.tenant, i) for i in stored["delinquency"]], stored, open_markers
    )


def check_delinquencies(
    ctx: CallContext,
    history: History,
    delinquencies: list[Delinquency],
    stored: dict[str, Any],
    open_invoices: set[str],
) -> None:
    """A delinquency in grace has an unsettled invoice (settling them all settles it), its open marker,
    and its policy is delinquent by it; no other one is."""
    in_grace = {d.locator: d for d in delinquencies if d.delinquencyState in OPEN_STATES}
    assert {m["locator"] for m in stored["openDelinquency"]} == in_grace.keys()
    for record in in_grace.values():
        assert open_invoices.intersection(record.invoice_locators), record.locator
    assert sorted(policies.get_policy(ctx, history.policy).delinquencyLocators) == sorted(
        d.locator for d in in_grace.values() if history.policy in d.policy_locators
    )


def check_installments(
    ctx: CallContext, history: History, lattices: list[InstallmentLattice], installments: list[Installment]
) -> None:
    stack = policies.issued_stack(ctx, history.policy)
    issued = [t for t in stack.transactions if t.issuedTime is not None]
    charges = {charge.locator: charge.amount for t in issued for charge in t.charges}
    assert len(charges) == sum(len(t.charges) for t in issued), "a charge locator of two transactions"
    billed: dict[str, Decimal] = defaultdict(Decimal)
    for installment in installments:
        assert installment.installmentItems, installment.locator
        for item in installment.installmentItems:
            billed[item.chargeLocator] += item.amount
    assert billed.keys() <= charges.keys(), "installment items of charges no issued transaction has"
    unbilled = {c: (amount, billed.get(c, ZERO)) for c, amount in charges.items() if billed.get(c, ZERO) != amount}
    assert not unbilled, f"charges not billed to the cent (amount, billed): {unbilled}"
    assert sum(billed.values(), ZERO) == sum(charges.values(), ZERO)

    parts = {part for t in issued for part in t.aggregatedTransactionLocators}
    on_their_own = {t.locator: t for t in issued if t.locator not in parts}
    """The transactions a billing job bills: each with the parts it names."""
    assert sorted(lattice.transactionLocator for lattice in lattices) == sorted(on_their_own), (
        "one lattice per transaction billed on its own"
    )
    by_locator = {t.locator: t for t in stack.transactions}
    for installment in installments:
        transaction = on_their_own[installment.transactionLocator]
        own = {
            c.locator
            for t in (transaction, *(by_locator[p] for p in transaction.aggregatedTransactionLocators))
            for c in t.charges
        }
        assert {item.chargeLocator for item in installment.installmentItems} <= own, installment.locator


PLAN_WEIGHTS = {
    name: [Decimal(w) for w in plan.get("installmentWeights", [])]
    for name, plan in ledger_model()["installmentPlans"].items()
}


def check_spread(lattices: list[InstallmentLattice], installments: list[Installment]) -> None:
    scheduled: dict[str, list[Installment]] = defaultdict(list)
    for installment in installments:
        if installment.invoicing == ChargeInvoicing.SCHEDULED:
            scheduled[installment.installmentLatticeLocator].append(installment)
    for lattice in lattices:
        for frame in lattice.frames:
            if frame.installmentStartTime >= lattice.createdAt:
                assert frame.dueTime >= frame.generateTime, (lattice.locator, frame)
        weights = PLAN_WEIGHTS.get(lattice.installmentPlanName or "", [])
        whole = {frame.installmentStartTime for frame in lattice.frames[1:-1]}
        per_weight: dict[str, list[Decimal]] = defaultdict(list)
        mine = [i for i in scheduled[lattice.locator] if i.installmentStartTime in whole]
        charges = {item.chargeLocator for installment in mine for item in installment.installmentItems}
        for installment in mine:
            index = installment.installmentFrameIndex
            weight = weights[index] if index < len(weights) else Decimal(1)
            amounts = {item.chargeLocator: item.amount for item in installment.installmentItems}
            for charge in charges:
                per_weight[charge].append(amounts.get(charge, ZERO) / weight)
        uneven = {charge: parts for charge, parts in per_weight.items() if max(parts) - min(parts) > CENT}
        assert not uneven, f"whole frames of lattice {lattice.locator} billing a charge unevenly: {uneven}"


def check_invoices(installments: list[Installment], invoices: list[Invoice], stored: dict[str, Any]) -> None:
    by_installment = {i.locator: i for i in installments}
    invoiced: dict[str, str] = {}
    for invoice in invoices:
        items = {item.locator: item for item in invoice.invoiceItems}
        assert invoice.totalAmount == sum((item.amount for item in invoice.invoiceItems), ZERO), invoice.locator
        if invoice.owedFor is not None:  # what a payment's reversal found disbursed of its credit: no installments
            assert not invoice.installmentLocators and not invoice.policyLocators and invoice.totalAmount > 0
            continue
        of_items: dict[str, list[str]] = defaultdict(list)
        sums: dict[str, Decimal] = defaultdict(Decimal)
        total = ZERO
        for locator in invoice.installmentLocators:
            assert locator not in invoiced, f"installment {locator} invoiced twice"
            invoiced[locator] = invoice.locator
            installment = by_installment[locator]
            assert installment.invoiceLocator == invoice.locator
            for item in installment.installmentItems:
                assert item.invoiceItemLocator in items, item.locator
                of_items[item.invoiceItemLocator].append(item.locator)
                sums[item.invoiceItemLocator] += item.amount
                total += item.amount
        assert total == invoice.totalAmount, invoice.locator
        for locator, invoice_item in items.items():
            assert invoice_item.amount == sums[locator] and sorted(invoice_item.installmentItemLocators) == sorted(
                of_items[locator]
            )
    assert invoiced.keys() == by_installment.keys(), "installments never invoiced"
    assert not stored["uninvoicedInstallment"]


def check_write_offs(history: History, written: list[WriteOff]) -> tuple[dict[str, Decimal], dict[str, Decimal]]:
    """Each write-off as this test made and reversed it; answers what they still hold per invoice and item."""
    assert {w.locator for w in written} == set(history.written_off)
    off_invoice: dict[str, Decimal] = defaultdict(Decimal)
    off_item: dict[str, Decimal] = defaultdict(Decimal)
    for write_off in written:
        assert (
            write_off.amount
            == history.written_off[write_off.locator]
            == sum((t.amount or ZERO for t in write_off.targets), ZERO)
            == sum((a.amount for a in write_off.allocations), ZERO)
        ), write_off.locator
        given_back = sum((sum(a.reversedItemAmounts.values(), ZERO) for a in write_off.allocations), ZERO)
        assert write_off.reversedAmount == history.reversed_off[write_off.locator] == given_back
        assert (write_off.writeOffState == WriteOffState.REVERSED) == (write_off.reversedAmount == write_off.amount)
        for allocation in write_off.allocations:
            for item in allocation.itemAmounts:
                assert 0 <= allocation.held(item) <= allocation.itemAmounts[item]
                off_item[item] += allocation.held(item)
            off_invoice[allocation.invoiceLocator] += allocation.held_amount
    return off_invoice, off_item


def check_ledger(
    history: History,
    invoices: list[Invoice],
    payments: list[Payment],
    applications: list[Application],
    lines: list[LedgerLine],
    balances: list[CreditBalance],
    written: list[WriteOff],
    drawn: list[CreditDistribution],
    paid_out: list[Disbursement],
) -> None:
    live = [a for a in applications if not a.reversed]
    on_invoice: dict[str, Decimal] = defaultdict(Decimal)
    on_item: dict[str, Decimal] = defaultdict(Decimal)
    for application in live:
        on_invoice[application.invoiceLocator] += application.amount
        assert application.amount == sum(application.itemAmounts.values(), ZERO) and application.amount > 0
        for item, amount in application.itemAmounts.items():
            on_item[item] += amount
    off_invoice, off_item = check_write_offs(history, written)
    for invoice in invoices:
        assert (
            invoice.totalAmount
            == on_invoice[invoice.locator]
            - invoice.creditedAmount
            + off_invoice[invoice.locator]
            + invoice.totalRemainingAmount
        ), invoice.locator
        assert invoice.totalRemainingAmount == sum((i.remainingAmount for i in invoice.invoiceItems), ZERO)
        if invoice.invoiceState == InvoiceState.OPEN:
            assert invoice.totalRemainingAmount > 0 and not invoice.creditedAmount, invoice.locator
        else:
            assert invoice.totalRemainingAmount == 0, invoice.locator
        if invoice.totalAmount > 0:
            assert not invoice.creditedAmount
            for invoice_item in invoice.invoiceItems:
                assert (
                    invoice_item.amount
                    == on_item[invoice_item.locator] + off_item[invoice_item.locator] + invoice_item.remainingAmount
                ), invoice_item.locator
        else:
            assert invoice.invoiceState == InvoiceState.SETTLED and invoice.creditedAmount == -invoice.totalAmount
            assert not off_invoice[invoice.locator]

    by_source: dict[str, list[Application]] = defaultdict(list)
    for application in applications:
        by_source[application.sourceLocator].append(application)
    assert {p.locator for p in payments} == set(history.payments)
    for payment in payments:
        mine = by_source.pop(payment.locator, [])
        assert sorted(f"{a.invoiceLocator}/{a.locator}" for a in mine) == sorted(payment.applications)
        if payment.paymentState == PaymentState.POSTED:
            assert payment.locator in history.posted and payment.amount == history.posted[payment.locator]
            assert not any(a.reversed for a in mine)
            assert payment.amount == sum((a.amount for a in mine), ZERO) + payment.creditedAmount
        elif payment.paymentState == PaymentState.REVERSED:
            assert payment.locator not in history.posted and all(a.reversed for a in mine)
        else:  # refused (see pay)
            assert payment.paymentState in (PaymentState.DRAFT, PaymentState.VALIDATED) and not mine
    distributed = check_credit(history, by_source, drawn, paid_out)
    assert not by_source, "applications of no payment and no credit distribution"

    posted = [p for p in payments if p.paymentState == PaymentState.POSTED]
    paid = sum((p.amount for p in posted), ZERO)
    overpaid = sum((p.creditedAmount for p in posted), ZERO)
    credited = sum((i.creditedAmount for i in invoices), ZERO)
    disbursed = sum(history.disbursed.values(), ZERO)
    assert sum((i.totalAmount for i in invoices), ZERO) == paid - overpaid + distributed - credited + sum(
        off_invoice.values(), ZERO
    ) + sum((i.totalRemainingAmount for i in invoices), ZERO)
    owed = {i.owedFor: i.totalAmount for i in invoices if i.owedFor is not None}
    assert owed == history.owed
    balance = sum((b.balance for b in balances), ZERO)
    assert all(b.balance >= 0 for b in balances), "a negative credit balance"
    assert balance == overpaid + credited - distributed - disbursed + sum(owed.values(), ZERO) >= 0
    assert balance == sum((line.amount if line.accountingType == "credit" else -line.amount for line in lines), ZERO)
    shown, _ = ledger.credit_balance(history.ctx(), history.account, None, PageRequest(0, 1))
    assert shown.balance == balance


def check_credit(
    history: History,
    by_source: dict[str, list[Application]],
    drawn: list[CreditDistribution],
    paid_out: list[Disbursement],
) -> Decimal:
    """Each credit distribution as this test made it (its applications taken from `by_source`: executed,
    all live and summing to what it applied; reversed, all reversed; refused, none) and each disbursement;
    answers what the live distributions applied."""
    assert {d.locator for d in drawn} == set(history.distributions)
    for record in drawn:
        mine = by_source.pop(record.locator, [])
        assert sorted(f"{a.invoiceLocator}/{a.locator}" for a in mine) == sorted(record.applications)
        if record.creditDistributionState == CreditDistributionState.EXECUTED:
            assert record.appliedAmount == history.distributed[record.locator] == sum((a.amount for a in mine), ZERO)
            assert not any(a.reversed for a in mine)
        elif record.creditDistributionState == CreditDistributionState.REVERSED:
            assert record.locator not in history.distributed and all(a.reversed for a in mine)
        else:  # refused: more than the balance
            assert record.creditDistributionState == CreditDistributionState.DRAFT and not mine
    assert {d.locator for d in paid_out} == set(history.disbursements)
    for disbursement in paid_out:
        live = disbursement.disbursementState == DisbursementState.EXECUTED
        assert live == (disbursement.locator in history.disbursed), disbursement.locator
        assert live or disbursement.disbursementState == DisbursementState.REVERSED
        assert disbursement.amount == history.disbursed.get(disbursement.locator, disbursement.amount)
    return sum(history.distributed.values(), ZERO)


def forget_due(tenant: str) -> None:
    """The due entries the tenant's earlier histories left (their later invoices, grace ends...): every
    history starts at the same time, so they would fall due again in it."""
    while True:
        left = due_index.page(tenant, FAR, limit=100)
        if not left.entries:
            return
        table.gateway().batch_delete(
            keys.tenant_scope(tenant), [keys.due_entry(tenant, e.kind, e.ref) for e in left.entries]
        )


# --- the tests ----------------------------------------------------------------------------------------


def test_an_out_of_sequence_change_is_billed_with_the_reversal_and_reapplication_of_its_aggregate(tenant, clock, jobs):
    """The billing job of a transaction issued out of sequence bills its aggregate: the change, and the
    reversal and reapplication of the later change (which no job bills on their own)."""
    history = History(tenant, clock, jobs, eager=True)
    history.start("Monthly", "account", "12000.50")
    history.apply(("change", datetime(2026, 6, 1, 4, tzinfo=UTC), "25000"))
    history.apply(("change", datetime(2026, 4, 1, 4, tzinfo=UTC), "60000"))

    ctx = history.ctx()
    stack = policies.issued_stack(ctx, history.policy)
    [aggregate] = [t for t in stack.transactions if t.transactionCategory == TransactionCategory.AGGREGATE]
    charged = sum((c.amount for t in stack.transactions if t.issuedTime for c in t.charges), ZERO)
    installments = installment_service.installments_of(ctx, "policy", history.policy, PageRequest(0, 100)).items
    assert sum((i.amount for i in installments), ZERO) == charged
    assert {i.transactionLocator for i in installments} >= {aggregate.locator}
    check(history)


def test_the_reversal_of_a_renewal_is_billed_though_its_term_is_gone(tenant, clock, jobs):
    """Reversing a renewal deletes its term; the reversal's refund is billed over the renewal's frames
    (so each of the renewal's installments has its negation, due at the same time)."""
    history = History(tenant, clock, jobs, eager=False)
    history.start("Quarterly", "account", "12000.50")
    history.apply(("renew",))
    history.apply(("reverse", 0))

    ctx = history.ctx()
    assert failed_jobs(tenant, jobs) == []
    installments = installment_service.installments_of(ctx, "policy", history.policy, PageRequest(0, 100)).items
    by_due: dict[datetime, Decimal] = defaultdict(Decimal)
    for installment in installments:
        by_due[installment.dueTime] += installment.amount
    first_term = [due for due in by_due if due < datetime(2027, 2, 1, 5, tzinfo=UTC)]
    assert sum(by_due.values(), ZERO) == Decimal("1225.00") == sum((by_due[due] for due in first_term), ZERO)
    assert all(not amount for due, amount in by_due.items() if due not in first_term)
    invoicing.generate_invoices(ctx, history.account, up_to=FAR)
    check(history)


def test_a_payment_of_more_invoices_than_one_write_holds_is_posted_and_reversed(tenant, clock, jobs):
    """36 open invoices (a policy renewed twice): posting a payment of all of them is more than one
    TransactWriteItems holds (4 records an invoice), so it is staged (billing/staging.py); so is its reversal."""
    history = History(tenant, clock, jobs, eager=True)
    history.start("Monthly", "account", "12000.50")
    history.apply(("renew",))
    history.apply(("renew",))
    ctx = history.ctx()
    invoices = history.invoices(ctx)
    assert len(invoices) == 36
    owed = sum((i.totalRemainingAmount for i in invoices), ZERO)

    history.apply(("pay", owed + 10, ("none",), False))

    assert all(i.invoiceState == InvoiceState.SETTLED for i in history.invoices(ctx))
    check(history)
    history.apply(("reverse payment", 0))
    assert all(i.invoiceState == InvoiceState.OPEN for i in history.invoices(ctx))
    check(history)


def test_a_payment_and_a_write_off_of_more_than_a_hundred_invoices(tenant, clock, jobs):
    """Nine policies billed on their own: 108 monthly invoices. A payment of all of them with 25.00 more,
    its reversal, a write-off of the account's balance and its reversal each touch every invoice (several
    writes each, staged: a reader sees all of it or none); the ledger balances after each."""
    history = History(tenant, clock, jobs, eager=True)
    history.start("Monthly", "policy", "12000.50")
    for _ in range(8):
        history.issue_policy("Monthly", "policy", "12000.50")
    history.billed()
    ctx = history.ctx()
    invoices = history.invoices(ctx)
    assert len(invoices) == 108
    owed = sum((i.totalRemainingAmount for i in invoices), ZERO)
    assert owed == 9 * Decimal("1225.00")

    history.apply(("pay", owed + 25, ("account", None), True))
    assert all(i.invoiceState == InvoiceState.SETTLED for i in history.invoices(ctx))
    [payment] = [payments.payment(ctx, locator) for locator in history.posted]
    assert len(payment.applications) == 108 and payment.creditedAmount == Decimal("25.00")
    check(history, other_policies=True)

    history.apply(("reverse payment", 0))
    assert all(i.invoiceState == InvoiceState.OPEN for i in history.invoices(ctx))
    check(history, other_policies=True)

    history.apply(("write off", "account", 0, None, "keep"))
    assert all(i.invoiceState == InvoiceState.SETTLED for i in history.invoices(ctx))
    check(history, other_policies=True)
    history.apply(("reverse write-off", 0, None))
    assert all(i.invoiceState == InvoiceState.OPEN for i in history.invoices(ctx))
    check(history, other_policies=True)


@pytest.mark.parametrize("use", ["distribute", "disburse", "both"])
def test_reversing_a_payment_takes_back_every_use_of_its_credit(tenant, clock, jobs, use):
    """February's invoice falls due unpaid (a delinquency in grace); a payment of it with 150.00 more
    settles it, its credit is used; reversing the payment re-opens February (its delinquency in grace
    again) and what the credit paid, and owes what was disbursed: the balance never goes negative."""
    history = History(tenant, clock, jobs, eager=True)
    history.start("Monthly", "account", "12000.50")
    history.apply(("advance", 20))
    ctx = history.ctx()
    [delinquency] = billing_delinquencies(ctx, history)
    assert delinquency.delinquencyState in OPEN_STATES

    history.apply(("pay, use the credit, reverse", Decimal("150.00"), use))

    assert not history.posted and not history.distributed
    assert history.owed == (
        {}
        if use == "distribute"
        else {history.payments[-1]: Decimal("150.00") if use == "disburse" else Decimal("75.00")}
    )
    assert repository.credit_balance(ctx.tenant, history.account, "USD").balance == 0
    assert [d.delinquencyState in OPEN_STATES for d in billing_delinquencies(ctx, history)][:1] == [True]
    check(history)


def billing_delinquencies(ctx: CallContext, history: History) -> list[Delinquency]:
    return [with_paged_references(ctx.tenant, i) for i in partition(ctx.tenant, history.account)["delinquency"]]


def test_an_account_with_many_policies_due_together_is_invoiced(tenant, clock, jobs):
    """Every policy of an invoice adds its references to the invoice's write: the installments of 17
    policies due at the same time are more than one write holds, yet they make one invoice a due time
    (DECISIONS.md "Billing"; the write is staged, billing/invoices/service.py `_stage_invoice`)."""
    history = History(tenant, clock, jobs, eager=False)
    history.start("Monthly", "account", "12000.50")
    for _ in range(16):
        history.issue_policy("Monthly", "account", "12000.50")
    jobs.drain()

    made = invoicing.generate_invoices(history.ctx(), history.account, up_to=FAR)

    assert sum((i.totalAmount for i in made), ZERO) == 17 * Decimal("1225.00")
    assert len(made) == 12 and len({i.dueTime for i in made}) == 12
    stored = partition(tenant, history.account)
    installments = stored_installments(tenant, stored)
    check_invoices(installments, [Invoice.model_validate(i) for i in stored["invoice"]], stored)


def run(tenant: str, clock: Any, jobs: Any, history: dict[str, Any], *, eager: bool, billing_level: str) -> None:
    clock.set(NOW)  # every history starts at the same time, on a fresh account of the test's tenant
    jobs.drain()
    jobs.sent.clear()
    forget_due(tenant)
    done = History(tenant, clock, jobs, eager)
    started(done, history["plan"], billing_level, history["value"])
    with contextlib.ExitStack() as fleet:
        if history.get("fleet_paths"):
            fleet.enter_context(mock.patch.object(delinquency_service, "MARKS_IN_PAYMENT", 0))
            fleet.enter_context(mock.patch.object(invoice_repository, "APPLICATION_INLINE_AMOUNTS", 0))
            fleet.enter_context(mock.patch.object(write_off_repository, "INLINE_AMOUNTS", 0))
            fleet.enter_context(mock.patch.object(delinquency_repository, "INLINE_REFERENCES", 0))
        for operation in history["operations"]:
            done.apply(operation)
        while done.holds:  # what an invoicing hold kept back is invoiced below
            done.release_hold(0)
        invoicing.generate_invoices(done.ctx(), done.account, up_to=FAR)
        note(f"what the policy made of the operations: {done.log}")
        note(f"billing jobs that failed: {failed_jobs(tenant, jobs)}")
        check(done)


STARTS: dict[tuple[str, bool, str, str, str], tuple[Snapshot, str, str, str]] = {}
"""The starts a test's tenant built, by (tenant, eager, plan, billing level, value): 12 of them a test."""


def started(history: History, plan: str, billing_level: str, value: str) -> None:
    """history.start(), or a copy under fresh locators of the same start its tenant built before
    (tests/support/snapshots.py): the start is half of a history's cost."""
    key = (history.tenant, history.eager, plan, billing_level, value)
    if key not in STARTS:
        history.requested(plan, billing_level, value)
        with Snapshot.record() as snapshot:
            history.start(plan, billing_level, value)
        STARTS[key] = (snapshot, history.account, history.policy, history.vehicle)
        return
    snapshot, account, policy, vehicle = STARTS[key]
    fresh = snapshot.restore()
    history.account, history.policy, history.vehicle = fresh[account], fresh[policy], fresh[vehicle]


def test_a_restored_start_is_the_start_it_copies_and_lives_on_its_own(tenant, clock, jobs):
    """The property tests' shortcut (started): a copy's partition is its template's under fresh locators,
    the invariants hold on it, and paying and changing the copy leave the template as it was."""
    clock.set(NOW)
    built = History(tenant, clock, jobs, eager=True)
    started(built, "Monthly", "account", "12000.50")
    template = partition(tenant, built.account)
    copy = History(tenant, clock, jobs, eager=True)
    started(copy, "Monthly", "account", "12000.50")

    snapshot = STARTS[(tenant, True, "Monthly", "account", "12000.50")][0]
    assert copy.account not in (built.account, "") and copy.policy != built.policy
    restored = partition(tenant, copy.account)
    back = {new: old for old, new in snapshot.restore_map.items()}
    as_template = json.loads(
        functools.reduce(
            lambda text, pair: text.replace(*pair), back.items(), json.dumps(restored, default=str, sort_keys=True)
        )
    )
    assert as_template == json.loads(json.dumps(template, default=str, sort_keys=True))
    assert len(template["invoice"]) == 12
    check(copy)

    copy.apply(("pay", "open", ("account", None), False))
    copy.apply(("change", TERM_START + timedelta(days=40), "25000"))
    check(copy)
    assert partition(tenant, built.account) == template
    check(built)


def failed_jobs(tenant: str, jobs: Any) -> list[Any]:
    found = [get_job(tenant, message.job_locator) for message in jobs.sent]
    return [(job["jobType"], job.get("error")) for job in found if job and job["status"] != "finished"]


LEDGER = settings(
    max_examples=HISTORIES_PER_TEST,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


@LEDGER
@given(history=histories)
def test_the_ledger_balances_invoicing_after_every_transaction(tenant, clock, jobs, history):
    run(tenant, clock, jobs, history, eager=True, billing_level="account")


@LEDGER
@given(history=histories)
def test_the_ledger_balances_invoicing_after_every_transaction_of_a_policy_billed_on_its_own(
    tenant, clock, jobs, history
):
    run(tenant, clock, jobs, history, eager=True, billing_level="policy")


@LEDGER
@given(history=histories)
def test_the_ledger_balances_invoicing_at_random_moments(tenant, clock, jobs, history):
    run(tenant, clock, jobs, history, eager=False, billing_level="account")


@LEDGER
@given(history=histories)
def test_the_ledger_balances_invoicing_at_random_moments_of_a_policy_billed_on_its_own(tenant, clock, jobs, history):
    run(tenant, clock, jobs, history, eager=False, billing_level="policy")
