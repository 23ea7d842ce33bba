"""The seeded fault simulation's workload and its invariants (issue 31), shared by test_simulation.py (the seeds
of `make test` and `make simulate`), test_pinned_seeds.py and test_planted_defects.py.

The seeded fault simulation (issue 31): a workload of months on a test-clock tenant, every DynamoDB call
of the service under one seed's fault plan (local/faults.py), job messages delivered as SQS would (any
order, some twice, again after a failed run), and a client that retries a 503 with the same idempotency
key. After the run, with the faults paused, the invariants hold to the cent; a failure names its seed.

The workload: accounts with a PersonalAuto policy each (tests/api/billing/support.py: 1,225.00 a year), on the
Monthly plan or on one paid by autopay, half of them on a delinquency plan that lapses them (`simulation_model`);
the clock advancing by days to weeks (invoice generation, autopay, due dates, grace ends), or to past the grace end
of an unpaid invoice (a lapse: the policy cancelled by its delinquency); payments of an open invoice or the account
(some more than is open: credit), racing payments (another post commits between a post's reads and its commit),
payment reversals, write-offs of open invoices (some reversed), credit distributions of the credit balance to an
open invoice, disbursements (refunds) of it; policy changes (some out of sequence: issued before a later
transaction, which is reversed and reapplied), cancellations, reinstatements and renewals.

`make test` runs PAS_SIMULATION_SEEDS seeds of PAS_SIMULATION_LENGTH steps (200 of 3: its budget); `make simulate`
runs longer ones (1,000 of 14 by default).
"""

from __future__ import annotations

import os
import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from chalicelib.storage import clients, keys, table
from local.faults import FaultPlan
from tests.api.billing.support import billing, billing_model
from tests.api.transactions.support import policy_path
from tests.simulation.support import Client, Delivery, SimulationFailure, racing, shrink
from tests.support.configs import quotes_tenant

STEPS = int(os.environ.get("PAS_SIMULATION_LENGTH", "3"))
"""Steps of a seed's workload: a new policy first and an advance of the clock last, the others drawn."""
SHRINK_RUNS = int(os.environ.get("PAS_SIMULATION_SHRINK_RUNS", "30"))
"""Runs a failing seed may spend on finding a shorter failing step list."""
FAULT_RATE = 0.08
KINDS = (
    "new_policy",
    "advance",
    "pay",
    "pay_racing",
    "reverse",
    "write_off",
    "reverse_write_off",
    "distribute",
    "disburse",
    "change",
    "change_out_of_sequence",
    "cancel",
    "reinstate",
    "renew",
    "lapse",
    "invoice_early_racing",
    "migrate",
)
WEIGHTS = (1, 4, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
EVENT_RECORD = {
    "policy.quote": "quoteLocator",
    "billing.payment": "paymentLocator",
    "billing.writeoff": "writeOffLocator",
    "billing.creditdistribution": "creditLocator",
    "billing.disbursement": "disbursementLocator",
    "policy.change": "transactionLocator",
    "policy.cancellation": "transactionLocator",
    "policy.reinstatement": "transactionLocator",
    "policy.renewal": "transactionLocator",
}
"""The data field of each kind of event the run counts that names the record it moved."""
CENT = Decimal("0.01")
START, END = datetime(2026, 2, 1, 5, tzinfo=timezone.utc), datetime(2027, 2, 1, 5, tzinfo=timezone.utc)
"""The term of every policy of the run (tests/api/quotes/support.py's START, a year)."""
CLOCK_START = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc)


def steps_of(seed: int, length: int = STEPS) -> list[tuple[str, int]]:
    """A seed's workload: (kind, the step's own seed). Each step draws its choices, its faults and its deliveries
    from its own seed, so a step list with some steps removed runs the others as they ran (but for the state the
    removed ones would have left)."""
    rng = random.Random(seed)
    kinds = ["new_policy", *rng.choices(KINDS, WEIGHTS, k=max(length - 2, 0)), "advance"][: max(length, 1)]
    return [(kind, rng.randrange(2**32)) for kind in kinds]


def simulation_model() -> dict[str, Any]:
    """The billing test configuration with two plans a new policy may draw: installments paid at their autopay time
    (Autopay: the Monthly plan paid 2 days before each due time) and a delinquency that lapses the policy 10 days
    after an invoice falls due unpaid (Lapsing: the lapse issued at once)."""
    model = billing_model()
    model["installmentPlans"]["Autopay"] = {**model["installmentPlans"]["Monthly"], "autopayLeadDays": 2}
    model["delinquencyPlans"]["Lapsing"] = {
        "gracePeriodDays": LAPSING_GRACE_DAYS,
        "advanceLapseTo": "issued",
        "delinquencyLevel": "policy",
    }
    return model


LAPSING_GRACE_DAYS = 10


@dataclass(frozen=True)
class Span:
    """What one issued transaction put on its policy's timeline (issuance, change, cancellation, reinstatement or
    renewal, effective at `effective`), in the order the policy processed them."""

    transaction: str
    category: str
    effective: datetime


@dataclass(frozen=True)
class Piece:
    """A segment held from its start (its transaction's effective time) to `cut` (None: to its end)."""

    transaction: str
    cut: datetime | None


def held(spans: list[Span]) -> tuple[list[Piece], datetime | None]:
    """What a timeline holds, and where its gap starts when the policy is cancelled (the simulation's own reading of
    DECISIONS' "Policy transactions and charges", written apart from the service's): a span effective at T replaces
    all that was held from T on; a cancellation holds nothing from T; a reinstatement at the gap's start gives back
    what the cancellation took, a later one holds its own segment from T."""
    pieces: list[tuple[str, datetime, datetime | None]] = []
    before_gap: list[tuple[str, datetime, datetime | None]] = []
    gap: datetime | None = None
    for span in spans:
        at = span.effective
        if span.category == "reinstatement" and gap == at:
            pieces, gap = before_gap, None
            continue
        kept: list[tuple[str, datetime, datetime | None]] = [
            (tx, start, at if cut is None or cut > at else cut) for tx, start, cut in pieces if start < at
        ]
        if span.category == "cancellation":
            before_gap, gap = pieces, at
        else:
            kept.append((span.transaction, at, None))
            gap = None
        pieces = kept
    return [Piece(tx, cut) for tx, _, cut in pieces], gap


class Run:
    def __init__(self, seed: int, api: Any, token: str, jobs: Any, plan: FaultPlan):
        self.seed, self.rng, self.jobs, self.plan = seed, random.Random(seed), jobs, plan
        self.client = Client(api, token, plan)
        self.delivery = Delivery(random.Random(seed + 1))
        self.tenant = ""
        self.accounts: list[str] = []
        self.payments: list[tuple[str, str]] = []  # (account, payment) posted by this run, not reversed
        self.paid: set[str] = set()  # every payment this run posted (autopay posts the others)
        self.write_offs: list[str] = []  # made by this run, not reversed
        self.spans: dict[str, list[Span]] = {}  # policy -> its timeline as the answers of its issues told it
        self.ends: dict[str, datetime] = {}  # policy -> the end of its last term
        self.lapsing: dict[str, str] = {}  # policy -> its account, of the policies on the Lapsing plan
        self.lapses: set[str] = set()  # the lapses' transactions learned of
        self.migrations = 0
        self.moved: Counter[tuple[str, str]] = Counter()  # (event type, record) of every move acknowledged
        self.day = 0

    def drain(self) -> None:
        self.delivery.run(self.jobs, self.plan)

    def setup(self, api: Any, token: str) -> None:
        with self.plan.paused():
            self.tenant = quotes_tenant(api, token, simulation_model(), test_clock=True)

    def new_policy(self) -> None:
        """An account and a PersonalAuto policy on it, its installment plan Monthly or Autopay, some on the Lapsing
        delinquency plan."""
        from tests.api.quotes.support import auto

        account = self.client.ok(
            "POST",
            f"/policy/{self.tenant}/accounts",
            {
                "type": "PersonAccount",
                "data": {
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@example.com",
                    "address": {"line1": "12 St James's Square", "city": "London", "postcode": "12345"},
                },
            },
        )["locator"]
        plan = self.rng.choice(["Monthly", "Autopay"])
        lapsing = self.rng.random() < 0.5
        preferences = {"installmentWeights": [1], "installmentPlanName": plan}
        fields: dict[str, Any] = {"preferences": {"installmentPreferences": preferences}}
        if lapsing:
            fields["delinquencyPlanName"] = "Lapsing"
        quote = self.client.ok("POST", f"/policy/{self.tenant}/quotes", auto(account, **fields))
        status, issued = self.client.send("PATCH", f"/policy/{self.tenant}/quotes/{quote['locator']}/issue")
        if status != 200:
            raise SimulationFailure(f"issue of quote {quote['locator']}: {status} {issued}")
        made = self.client.ok("GET", policy_path(self.tenant, issued["policyLocator"]))
        policy = issued["policyLocator"]
        self.spans[policy] = [Span(made["issuedTransactionLocator"], "issuance", _moment(made["startTime"]))]
        self.ends[policy] = _moment(made["endTime"])
        if lapsing:
            self.lapsing[policy] = account
        self.moved["policy.quote.issue", quote["locator"]] += 1
        self.accounts.append(account)
        self.drain()

    def advance(self) -> None:
        self._clock_to(CLOCK_START + timedelta(days=self.day + self.rng.choice([3, 10, 17, 31, 45])))

    def lapse(self) -> None:
        """The clock past the grace end of an open invoice of a policy on the Lapsing plan, unpaid: its delinquency
        lapses the policy (a cancellation issued at the grace end), unless the invoice was settled meanwhile."""
        policies = [policy for policy in sorted(self.lapsing) if self._gap(policy) is None]
        if not policies:
            return
        account = self.lapsing[self.rng.choice(policies)]
        invoices = self.client.ok("GET", billing(self.tenant, f"/invoices/accounts/{account}/list?count=100"))["items"]
        due = sorted(_moment(invoice["dueTime"]) for invoice in invoices if invoice["invoiceState"] == "open")
        now = CLOCK_START + timedelta(days=self.day)
        moment = (due[0] if due else now + timedelta(days=31)) + timedelta(days=LAPSING_GRACE_DAYS + 1)
        if moment > now:
            self._clock_to(moment)

    def _clock_to(self, moment: datetime) -> None:
        self.day = (moment - CLOCK_START).days + (1 if (moment - CLOCK_START).seconds else 0)
        moment = CLOCK_START + timedelta(days=self.day)
        self.client.ok("POST", f"/clock/{self.tenant}/advance", {"to": _iso(moment)})
        self.drain()
        self._learn_lapses()

    def _learn_lapses(self) -> None:
        """The cancellations the Lapsing plan's delinquencies issued, on the timelines of their policies."""
        for account in sorted(set(self.lapsing.values())):
            delinquencies = self.client.ok(
                "GET", billing(self.tenant, f"/delinquencies/accounts/{account}/list?count=100")
            )["items"]
            for delinquency in delinquencies:
                for reference in delinquency["references"]:
                    transaction = reference.get("transactionLocator")
                    if reference["referenceType"] != "policy" or not transaction or transaction in self.lapses:
                        continue
                    found = self.client.ok("GET", f"/policy/{self.tenant}/transactions/{transaction}")
                    if found["transactionState"] in ("issued", "reversed"):
                        self.lapses.add(transaction)
                        self._learn(found, "policy.cancellation.issue")

    def pay(self) -> None:
        if not self.accounts:
            return
        account = self.rng.choice(self.accounts)
        invoices = self.client.ok("GET", billing(self.tenant, f"/invoices/accounts/{account}/list?count=100"))["items"]
        open_ = [invoice for invoice in invoices if invoice["invoiceState"] == "open"]
        if open_ and self.rng.random() < 0.6:
            invoice = self.rng.choice(open_)
            amount = Decimal(str(invoice["totalRemainingAmount"])) * self.rng.choice([Decimal(1), Decimal("0.5")])
            targets = [{"containerType": "invoice", "containerLocator": invoice["locator"]}]
        else:
            amount, targets = Decimal(self.rng.choice([50, 120, 400])), []
        amount = amount.quantize(Decimal("0.01"))
        if amount <= 0:
            return
        self._post(account, self._payment(account, amount, targets))
        self.drain()

    def pay_racing(self) -> None:
        """Two payments of one account posted at once: the second's post commits between the first's reads and
        its commit, as another writer's would; the first then finds the account's billing root moved (409,
        which the client sends again with its key) and applies itself to what is there now."""
        if not self.accounts:
            return
        account = self.rng.choice(self.accounts)
        first, second = (self._payment(account, Decimal(self.rng.choice([30, 80, 400])), []) for _ in range(2))
        with racing("TransactWriteItems", lambda: self._post(account, second)):
            self._post(account, first)
        self.drain()

    def invoice_early_racing(self) -> None:
        """An early invoicing (POST /invoices/earlyInvoicing) of an account's installments starting within some
        weeks, raced by another writer of them: while its job runs, just after it read the installments (and
        before it reads the account's billing root and commits), a second early invoicing of the same installments
        is requested and its job delivered (SQS may deliver the first's message again meanwhile). One of the two
        invoices them; the other finds them invoiced (or its commit refused: 409, its job retried)."""
        if not self.accounts:
            return
        account = self.rng.choice(self.accounts)
        through = CLOCK_START + timedelta(days=self.day + self.rng.choice([20, 45, 75]))
        body = {"accountLocator": account, "invoiceThroughTime": _iso(through)}
        path = billing(self.tenant, "/invoices/earlyInvoicing")
        status, first = self.client.send("POST", path, body)
        if status != 200:
            return  # nothing to invoice early yet (409 installment.not_invoiceable and the like are its answers)

        def another_writer() -> None:
            again, _ = self.client.send("POST", path, body)
            if again == 200:
                self.drain()

        with racing("BatchGetItem", another_writer, when="after-call"):
            self.drain()
        self.drain()

    def migrate(self) -> None:
        """A migration of one or two accounts of a source book (tests/api/migration/support.py: a PersonalAuto policy
        from 2025-06-01, issued and changed, two installments of 72.00 on invoices INV1, settled, and INV2, open, a
        Card payment of 82.00 over both), some paused before its jobs run and resumed, recovered while an account
        ended in error (a fault the worker could not get past). It must finish; its accounts and policies are then
        the run's, their ledgers, charges and invoicing checked as the others'."""
        from tests.api.migration.support import (
            account_request,
            billed_policy,
            source_installment,
            source_invoice,
            source_payment,
        )

        self.migrations += 1
        body = []
        for n in range(self.rng.choice([1, 2])):
            original = f"SRC{self.migrations}-{n}"
            policy = billed_policy(
                f"{original}-p1",
                [
                    source_installment(f"{original}-I1", f"{original}-INV1", 6),
                    source_installment(f"{original}-I2", f"{original}-INV2", 7),
                ],
                [(1, "72.00"), (2, "72.00")],
            )
            body.append(
                {
                    **account_request(original, policies=[policy]),
                    "invoices": [
                        source_invoice(f"{original}-INV1", 6, "settled"),
                        source_invoice(f"{original}-INV2", 7, "open"),
                    ],
                    "payments": [
                        source_payment(
                            f"{original}-P1",
                            [(f"{original}-INV1", "72.00"), (f"{original}-INV2", "10.00")],
                            payment_type="Card",
                        )
                    ],
                }
            )
        path = f"/migration/{self.tenant}/migrations"
        migration = self.client.ok("POST", path, body)["locator"]
        if self.rng.random() < 0.5:
            self._control(migration, "pause")
            self.drain()
            self._control(migration, "resume")
        self.drain()
        for _ in range(3):
            state = self.client.ok("GET", f"{path}/{migration}")["migrationState"]
            if state != "error":
                break
            self._control(migration, "recover")
            self.drain()
        if state != "finished":
            failures = self.client.ok("GET", f"{path}/{migration}/failures/list")["items"]
            raise SimulationFailure(f"migration {migration} ended {state}: {failures}")
        for mapped in self.client.ok("GET", f"{path}/{migration}/mappings/list?count=100")["items"]:
            self.accounts.append(mapped["accountLocator"])
            for policy in sorted(mapped["policies"]):
                issued = self._all(policy_path(self.tenant, policy, "/issuedTransactions/list"))
                self.spans[policy] = [
                    Span(t["locator"], t["transactionCategory"], _moment(t["effectiveTime"]))
                    for t in sorted(issued, key=lambda t: t["effectiveTime"])
                ]
                self.ends[policy] = _moment(self.client.ok("GET", policy_path(self.tenant, policy))["endTime"])

    def _control(self, migration: str, action: str) -> None:
        status, answer = self.client.send("PATCH", f"/migration/{self.tenant}/migrations/{migration}/{action}")
        if status not in (200, 204):
            raise SimulationFailure(f"{action} of migration {migration}: {status} {answer}")

    def _payment(self, account: str, amount: Decimal, targets: list[dict[str, Any]]) -> str:
        locator: str = self.client.ok(
            "POST",
            billing(self.tenant, "/payments"),
            {"accountLocator": account, "type": "Check", "amount": amount, "data": {}, "targets": targets},
        )["locator"]
        return locator

    def _post(self, account: str, payment: str) -> None:
        status, posted = self.client.send("PATCH", billing(self.tenant, f"/payments/{payment}/post"))
        if status != 200 or posted["paymentState"] != "posted":
            raise SimulationFailure(f"post of payment {payment}: {status} {posted}")
        self.payments.append((account, payment))
        self.paid.add(payment)
        self.moved["billing.payment.post", payment] += 1

    def reverse(self) -> None:
        if not self.payments:
            return
        account, payment = self.payments.pop(self.rng.randrange(len(self.payments)))
        status, answer = self.client.send(
            "PATCH", billing(self.tenant, f"/payments/{payment}/reverse"), {"reversalType": "bounced"}
        )
        if status != 200 or answer["paymentState"] != "reversed":
            raise SimulationFailure(f"reversal of payment {payment}: {status} {answer}")
        self.moved["billing.payment.reverse", payment] += 1
        self.drain()

    def change(self) -> None:
        """A change of a policy's vehicle value, effective after its last transaction (and the clock), issued."""
        found = self._next_effective(self._active())
        if found is not None:
            self._change_at(*found)

    def change_out_of_sequence(self) -> None:
        """A change issued effective before a later transaction of its policy (a change issued first when the policy
        has none after the clock): issued out of sequence, the later ones reversed and reapplied after it."""
        found = self._next_effective(self._active())
        if found is not None:
            self._change_at(*found)
        candidates = []
        for policy in sorted(self.spans):
            spans = self.spans[policy]
            floor = max([CLOCK_START + timedelta(days=self.day), *(span.effective for span in spans[:-1])])
            room = spans[-1].effective - floor >= timedelta(days=2)
            if len(spans) > 1 and room and held(spans[:-1])[1] is None:  # on risk between the two
                candidates.append((policy, floor, spans[-1].effective))
        if not candidates:
            return
        policy, floor, last = self.rng.choice(candidates)
        self._change_at(policy, floor + timedelta(hours=(last - floor) // timedelta(hours=1) // 2))

    def _change_at(self, policy: str, effective: datetime) -> None:
        segment = self.client.ok(
            "GET", f"/policy/{self.tenant}/transactions/{self._segment_maker(policy, effective)}/segment"
        )
        vehicle = next(e for e in segment["element"]["elements"] if e["type"] == "Vehicle")
        value = str(self.rng.choice([8000, 15000, 25000]))
        draft = self.client.ok(
            "PATCH",
            policy_path(self.tenant, policy, "/change"),
            [
                {"action": "params", "effectiveTime": _iso(effective)},
                {"action": "modify", "staticLocator": vehicle["staticLocator"], "setData": {"value": value}},
            ],
        )
        self._issue(draft["locator"], "policy.change.issue")

    def _segment_maker(self, policy: str, at: datetime) -> str:
        """The transaction whose segment is held at `at` (the vehicle a change modifies is the one held there)."""
        pieces, _ = held(self.spans[policy])
        starts = {span.transaction: span.effective for span in self.spans[policy]}
        return max(
            (piece for piece in pieces if starts[piece.transaction] <= at), key=lambda p: starts[p.transaction]
        ).transaction

    def cancel(self) -> None:
        found = self._next_effective(self._active())
        if found is None:
            return
        policy, effective = found
        draft = self.client.ok(
            "PATCH", policy_path(self.tenant, policy, "/cancel"), {"action": "params", "effectiveTime": _iso(effective)}
        )
        self._issue(draft["locator"], "policy.cancellation.issue")

    def reinstate(self) -> None:
        cancelled = [policy for policy in sorted(self.spans) if self._gap(policy) is not None]
        if not cancelled:
            return
        policy = self.rng.choice(cancelled)
        draft = self.client.ok("PATCH", policy_path(self.tenant, policy, "/reinstate"), [])
        self._issue(draft["locator"], "policy.reinstatement.issue")

    def renew(self) -> None:
        """The next term of a policy on risk in its first term, issued (effective at its term's end)."""
        policies = [policy for policy in self._active() if self.ends[policy] == END]
        if not policies:
            return
        policy = self.rng.choice(policies)
        draft = self.client.ok("PATCH", policy_path(self.tenant, policy, "/renew"), [])
        self._issue(draft["locator"], "policy.renewal.issue")
        self.ends[policy] = _moment(self.client.ok("GET", policy_path(self.tenant, policy))["endTime"])

    def _gap(self, policy: str) -> datetime | None:
        return held(self.spans[policy])[1]

    def _active(self) -> list[str]:
        return [policy for policy in sorted(self.spans) if self._gap(policy) is None]

    def _next_effective(self, policies: list[str]) -> tuple[str, datetime] | None:
        """One of `policies` and a moment some days after its last transaction and the clock, within its term."""
        if not policies:
            return None
        policy = self.rng.choice(policies)
        last = max(span.effective for span in self.spans[policy])
        effective = max(last, CLOCK_START + timedelta(days=self.day)) + timedelta(days=self.rng.choice([1, 15, 40]))
        return (policy, effective) if effective < self.ends[policy] - timedelta(days=1) else None

    def _issue(self, transaction: str, event_type: str) -> None:
        status, issued = self.client.send("PATCH", f"/policy/{self.tenant}/transactions/{transaction}/issue")
        if status != 200 or issued["transactionState"] != "issued":
            raise SimulationFailure(f"issue of transaction {transaction}: {status} {issued}")
        self._learn(issued, event_type)
        self.drain()

    def _learn(self, issued: dict[str, Any], event_type: str) -> None:
        """An issued transaction on its policy's timeline: appended, or, issued out of sequence (in an aggregate),
        with the transactions it reversed taken off and their reapplications appended after it."""
        policy, at = issued["policyLocator"], _moment(issued["effectiveTime"])
        self.moved[event_type, issued["locator"]] += 1
        spans = self.spans[policy]
        if not issued.get("aggregateTransactionLocator"):
            spans.append(Span(issued["locator"], issued["transactionCategory"], at))
            return
        aggregate = self.client.ok("GET", f"/policy/{self.tenant}/transactions/{issued['aggregateTransactionLocator']}")
        reversed_ = {
            span.transaction
            for span in spans
            if span.effective >= at
            and self.client.ok("GET", f"/policy/{self.tenant}/transactions/{span.transaction}")["transactionState"]
            == "reversed"
        }
        for part in aggregate["aggregatedTransactions"]:
            if part.get("reapplicationOfLocator"):  # issued again after the new one: an issue event of its own
                self.moved[f"policy.{part['transactionCategory']}.issue", part["locator"]] += 1
        self.spans[policy] = [span for span in spans if span.transaction not in reversed_] + [
            Span(part["locator"], part["transactionCategory"], _moment(part["effectiveTime"]))
            for part in aggregate["aggregatedTransactions"]
            if part["transactionCategory"] != "reversal"
        ]

    def write_off(self) -> None:
        """Writes off all or half of what an open invoice still owes."""
        found = self._open_invoice()
        if found is None:
            return
        account, invoice = found
        amount = (
            Decimal(str(invoice["totalRemainingAmount"])) * self.rng.choice([Decimal(1), Decimal("0.5")])
        ).quantize(CENT)
        if amount <= 0:
            return
        written = self.client.ok(
            "POST",
            billing(self.tenant, "/writeOffs"),
            {
                "accountLocator": account,
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"], "amount": amount}],
            },
        )
        if written["writeOffState"] != "distributed" or Decimal(str(written["amount"])) != amount:
            raise SimulationFailure(f"write-off of {amount} on invoice {invoice['locator']}: {written}")
        self.write_offs.append(written["locator"])
        self.moved["billing.writeoff.create", written["locator"]] += 1
        self.drain()

    def reverse_write_off(self) -> None:
        if not self.write_offs:
            return
        write_off = self.write_offs.pop(self.rng.randrange(len(self.write_offs)))
        status, answer = self.client.send(
            "PATCH", billing(self.tenant, f"/writeOffs/{write_off}/reverse"), {"reversalReason": "simulated"}
        )
        if status != 200 or answer["writeOffState"] != "reversed":
            raise SimulationFailure(f"reversal of write-off {write_off}: {status} {answer}")
        self.moved["billing.writeoff.reverse", write_off] += 1
        self.drain()

    def distribute(self) -> None:
        """Applies some of an account's credit balance to one of its open invoices."""
        found = self._open_invoice(in_credit=True)
        if found is None:
            return
        account, invoice = found
        amount = min(self._balance(account), Decimal(str(invoice["totalRemainingAmount"])))
        amount = (amount * self.rng.choice([Decimal(1), Decimal("0.5")])).quantize(CENT)
        if amount <= 0:
            return
        made = self.client.ok(
            "POST",
            billing(self.tenant, "/creditDistributions"),
            {
                "accountLocator": account,
                "amount": amount,
                "sources": [],
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
            },
        )
        status, executed = self.client.send(
            "PATCH", billing(self.tenant, f"/creditDistributions/{made['locator']}/execute")
        )
        if status != 200 or executed["creditDistributionState"] != "executed":
            raise SimulationFailure(f"execution of credit distribution {made['locator']}: {status} {executed}")
        self.moved["billing.creditdistribution.distribute", made["locator"]] += 1
        self.drain()

    def disburse(self) -> None:
        """Refunds all or half of an account's credit balance: created, validated, approved and executed."""
        in_credit = [account for account in self.accounts if self._balance(account) > 0]
        if not in_credit:
            return
        account = self.rng.choice(in_credit)
        amount = (self._balance(account) * self.rng.choice([Decimal(1), Decimal("0.5")])).quantize(CENT)
        if amount <= 0:
            return
        refund = self.client.ok(
            "POST",
            billing(self.tenant, "/disbursements"),
            {"accountLocator": account, "type": "Refund", "amount": amount, "data": {}, "sources": []},
        )
        for step, state in (("validate", "validated"), ("approve", "approved"), ("execute", "executed")):
            path = billing(self.tenant, f"/disbursements/{refund['locator']}/{step}")
            status, moved = self.client.send("PATCH", path)
            if status != 200 or moved["disbursementState"] != state:
                raise SimulationFailure(f"{step} of disbursement {refund['locator']}: {status} {moved}")
        self.moved["billing.disbursement.execute", refund["locator"]] += 1
        self.drain()

    def _open_invoice(self, *, in_credit: bool = False) -> tuple[str, dict[str, Any]] | None:
        """One open invoice of one of the run's accounts (of an account in credit), or None."""
        accounts = [account for account in self.accounts if not in_credit or self._balance(account) > 0]
        if not accounts:
            return None
        account = self.rng.choice(accounts)
        invoices = self.client.ok("GET", billing(self.tenant, f"/invoices/accounts/{account}/list?count=100"))["items"]
        open_ = [invoice for invoice in invoices if invoice["invoiceState"] == "open"]
        return (account, self.rng.choice(open_)) if open_ else None

    def _balance(self, account: str) -> Decimal:
        return Decimal(
            str(
                self.client.ok(
                    "GET", billing(self.tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}")
                )["balance"]
            )
        )

    def workload(self, steps: list[tuple[str, int]]) -> None:
        for kind, step_seed in steps:
            self.rng, self.plan.random, self.delivery.rng = (
                random.Random(step_seed),
                random.Random(step_seed + 1),
                random.Random(step_seed + 2),
            )
            getattr(self, kind)()

    def check(self) -> None:
        """The invariants, read through the API with the faults paused (the jobs' and the events' from the table)."""
        with self.plan.paused():
            self._check_jobs()
            self._check_due()
            for account in self.accounts:
                self._check_account(account)
            for policy in sorted(self.spans):
                self._check_charges(policy)
            self._check_events()

    def _check_jobs(self) -> None:
        """Every job finished, or failed visibly, once the reaper has put back those whose lease ran out (as its
        schedule does, later): none is left queued or running."""
        from chalicelib.core.clock import SystemClock
        from chalicelib.runtime import jobs
        from chalicelib.settings import settings

        later = SystemClock().now() + timedelta(seconds=2 * settings().job_lease_seconds)
        for _ in range(jobs.MAX_ATTEMPTS + 1):
            if not jobs.reap_expired(self.tenant, later):
                break
            self.drain()
        scope = keys.tenant_scope(self.tenant)
        left, _ = table.gateway().query(scope, keys.job_leases_index(self.tenant), index="GSI1")
        if left:
            raise SimulationFailure(
                "jobs neither finished nor failed: "
                + ", ".join(f"{job['jobType']} {job['locator']} {job['status']}" for job in left)
            )

    def _check_events(self) -> None:
        """Each acknowledged move has its business event exactly once (a resend of its commit, a replay of its
        request, a redelivery of its job records none again)."""
        scope = keys.tenant_scope(self.tenant)
        recorded: Counter[tuple[str, str]] = Counter()
        for event_type in {event_type for event_type, _ in self.moved}:
            events, _ = table.gateway().query(scope, keys.events_by_type(scope, event_type), index="GSI2")
            field_name = EVENT_RECORD[event_type.rsplit(".", 1)[0]]
            recorded.update((event_type, event["data"].get(field_name)) for event in events)
        if recorded != self.moved:
            raise SimulationFailure(
                f"events recorded {dict(recorded - self.moved)} more and "
                f"{dict(self.moved - recorded)} fewer than the moves acknowledged"
            )

    def _check_due(self) -> None:
        """Every scheduled moment that passed was run: no due entry is left due before the tenant's clock (a run
        the faults cut short was caught up; one its handler refused moves on, RETRY_AFTER later). An entry due at
        the clock's moment itself (a change issued since the last advance, invoiceable now) is due, not passed:
        the next advance, or the quarter-hourly due run of a tenant without a test clock, runs it."""
        from chalicelib.runtime import wiring
        from chalicelib.storage import due_index

        now = wiring.clock_for(self.tenant).now()
        left = [entry for entry in due_index.page(self.tenant, now).entries if entry.due_at < now]
        if left:
            raise SimulationFailure(
                f"due entries left due before the clock {now.isoformat()}: "
                + ", ".join(f"{entry.kind} {entry.ref} at {entry.due_at.isoformat()}" for entry in left)
            )

    def _list(self, suffix: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.client.ok("GET", billing(self.tenant, suffix))["items"]
        locators = [item["locator"] for item in items]
        if len(locators) != len(set(locators)):
            raise SimulationFailure(f"{suffix}: a record listed twice: {sorted(locators)}")
        return items

    def _check_account(self, account: str) -> None:
        """The ledger balances to the cent: what the coverage invoices ask is paid, written off or still open, and
        what the payments brought beyond that is in the credit balance or refunded (an owed invoice asks back what
        a refund paid out of credit a reversal took away). The credit balance is the sum of its moves and never
        negative; no record is listed twice, no invoice item missing or extra, and the invoicing exact
        (`_check_invoicing`)."""
        invoices = self._list(f"/invoices/accounts/{account}/list?count=100&includeZeroAmountInvoices=true")
        invoiced = _sum(invoices, "totalAmount")
        remaining = _sum(invoices, "totalRemainingAmount")
        items = {
            invoice["locator"]: self.client.ok("GET", billing(self.tenant, f"/invoices/{invoice['locator']}"))[
                "invoiceItems"
            ]
            for invoice in invoices
        }
        owed_invoices = [i for i in invoices if any(item["chargeType"] == "owed" for item in items[i["locator"]])]
        owed = _sum(owed_invoices, "totalAmount")
        payments = self._list(f"/payments/list?accountLocator={account}&count=100&includeReversed=true")
        paid = _sum([p for p in payments if p["paymentState"] == "posted"], "amount")
        for payment in payments:  # autopay's: posted at its invoices' autopay times, an event each
            if payment["locator"] not in self.paid and payment["paymentState"] in ("posted", "reversed"):
                self.moved["billing.payment.post", payment["locator"]] += 1
        write_offs = self._list(f"/writeOffs/list?accountLocator={account}&count=100")
        written_off = _sum(write_offs, "amount") - _sum(write_offs, "reversedAmount")
        refunds = self._list(f"/disbursements/list?accountLocator={account}&count=100")
        refunded = _sum([d for d in refunds if d["disbursementState"] == "executed"], "amount")
        self._list(f"/creditDistributions/list?accountLocator={account}&count=100")
        ledger = self.client.ok(
            "GET", billing(self.tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}")
        )
        balance = Decimal(str(ledger["balance"]))
        moves = sum(
            (
                Decimal(str(line["amount"])) * (1 if line["accountingType"] == "credit" else -1)
                for line in ledger["lineItems"]
            ),
            Decimal(0),
        )
        if balance < 0:
            raise SimulationFailure(f"account {account}: credit balance {balance} < 0")
        if moves != balance:
            raise SimulationFailure(f"account {account}: credit balance {balance} != its moves {moves}")
        if invoiced - owed != paid + written_off - refunded - balance + remaining:
            raise SimulationFailure(
                f"account {account}: invoiced {invoiced} - owed {owed} != paid {paid} + written off {written_off} "
                f"- refunded {refunded} - credit {balance} + remaining {remaining}"
            )
        for invoice in invoices:
            total = _sum(items[invoice["locator"]], "amount")
            if total != Decimal(str(invoice["totalAmount"])):
                raise SimulationFailure(f"invoice {invoice['locator']}: items {total} != {invoice['totalAmount']}")
        self._check_invoicing(account, invoices, items)

    def _check_charges(self, policy: str) -> None:
        """Charges equal the coverage actually held, to the cent: what billing billed of the policy (its charges)
        sums to what its segments price to as held now (`held`: each segment held whole, from its start to a cut,
        or not at all). A rated charge of a segment held whole earns its amount, of a part [start, cut) its amount x
        duration(start, cut) / the segment's duration (a rate charge: its rate x duration(start, cut)), rounded
        half-up to the cent, in the policy's duration basis and time zone; a flat charge its amount. The timeline
        the answers told is the one the policy lists: its issued transactions that are not reversed."""
        from chalicelib.core import durations

        shown = self.client.ok("GET", policy_path(self.tenant, policy))
        basis, zone = shown["durationBasis"], shown["timezone"]
        listed = {
            transaction["locator"]
            for transaction in self._all(policy_path(self.tenant, policy, "/issuedTransactions/list"))
            if transaction["transactionCategory"] not in ("aggregate", "reversal")
        }
        told = {span.transaction for span in self.spans[policy]}
        if listed != told:
            raise SimulationFailure(
                f"policy {policy}: issued transactions listed {sorted(listed - told)} more and {sorted(told - listed)} "
                f"fewer than the issues answered (timeline {self.spans[policy]})"
            )
        pieces, gap = held(self.spans[policy])
        coverage = Decimal(0)
        for piece in pieces:
            segment = self.client.ok("GET", f"/policy/{self.tenant}/transactions/{piece.transaction}/segment")
            start, end = _moment(segment["startTime"]), _moment(segment["endTime"])
            cut = end if piece.cut is None else min(end, piece.cut)
            whole = Decimal(str(segment["duration"]))
            price = self.client.ok("GET", f"/policy/{self.tenant}/transactions/{piece.transaction}/price")
            for charge in price["charges"]:
                if charge.get("reversalOfLocator"):
                    continue
                amount, rate = Decimal(str(charge["amount"])), Decimal(str(charge["rate"]))
                if charge["handling"] == "flat" or cut >= end:
                    coverage += amount
                elif cut > start and whole:
                    part = durations.duration(start, cut, basis, zone)
                    exact = amount * part / whole if rate == amount / whole else rate * part
                    coverage += _cents(exact)
        charges = self._all(billing(self.tenant, f"/policies/{policy}/charges/list"))
        billed = _sum(charges, "amount")
        if billed != coverage:
            raise SimulationFailure(
                f"policy {policy}: charges {billed} != the coverage held {coverage} "
                f"(timeline {self.spans[policy]}, held {pieces}, cancelled from {gap})"
            )

    def _all(self, path: str) -> list[dict[str, Any]]:
        """Every item of a paged list (offset/count, 100 a page)."""
        found: list[dict[str, Any]] = []
        while True:
            sep = "&" if "?" in path else "?"
            page = self.client.ok("GET", f"{path}{sep}offset={len(found)}&count=100")
            found.extend(page["items"])
            if page["listCompleted"] or not page["items"]:
                return found

    def _check_invoicing(
        self, account: str, invoices: list[dict[str, Any]], items: dict[str, list[dict[str, Any]]]
    ) -> None:
        """Each installment of the account's policies is invoiced at most once, on the invoice it names, all its
        items on that invoice; every installment to generate before the clock is invoiced; every invoice item of an
        installment names installment items of the account's (a cancellation and its reinstatement issued at one
        moment invoice their own frames at one moment, so the invoices' due and generated times prove nothing)."""
        from chalicelib.runtime import wiring

        now = wiring.clock_for(self.tenant).now()
        installments = [
            installment
            for policy in sorted(self.spans)
            for installment in self._all(billing(self.tenant, f"/installments/policies/{policy}/list"))
            if installment["accountLocator"] == account
        ]
        owner = {item["locator"]: i["locator"] for i in installments for item in i["installmentItems"]}
        invoiced_on: dict[str, set[str]] = {}  # installment -> the invoices listing any of its items
        listed: Counter[str] = Counter()  # installment item -> invoice items listing it
        for invoice, invoice_items in items.items():
            for item in invoice_items:
                for locator in item["installmentItemLocators"]:
                    if locator not in owner:
                        raise SimulationFailure(
                            f"invoice {invoice}: installment item {locator} of no installment of account {account}"
                        )
                    listed[locator] += 1
                    invoiced_on.setdefault(owner[locator], set()).add(invoice)
        twice = sorted(locator for locator, count in listed.items() if count > 1)
        if twice:
            raise SimulationFailure(f"account {account}: installment items invoiced twice: {twice}")
        known = {invoice["locator"] for invoice in invoices}
        for installment in installments:
            on = invoiced_on.get(installment["locator"], set())
            named = installment.get("invoiceLocator")
            if len(on) > 1:
                raise SimulationFailure(f"installment {installment['locator']} invoiced on {sorted(on)}")
            if named is None:
                if on:
                    raise SimulationFailure(
                        f"installment {installment['locator']} uninvoiced, yet on invoice {sorted(on)}"
                    )
                if _moment(installment["generateTime"]) < now:
                    raise SimulationFailure(
                        f"installment {installment['locator']} to generate at {installment['generateTime']} "
                        f"is uninvoiced at the clock's {now.isoformat()}"
                    )
                continue
            if named not in known:
                raise SimulationFailure(f"installment {installment['locator']} names invoice {named}, not listed")
            mine = {item["locator"] for item in installment["installmentItems"]}
            if on != {named} or not mine <= set(listed):
                raise SimulationFailure(
                    f"installment {installment['locator']} names invoice {named}, its items are on {sorted(on)}"
                )


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _cents(amount: Decimal) -> Decimal:
    """Half-up to the cent (the rounding of DECISIONS' proration, done here on its own)."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def _sum(records: list[dict[str, Any]], field_name: str) -> Decimal:
    return sum((Decimal(str(record[field_name])) for record in records), Decimal(0))


class Simulation:
    """Runs of one seed's steps, each on a tenant of its own: `failure(indices)` answers what failed, or None."""

    def __init__(
        self,
        seed: int,
        api: Any,
        token: str,
        jobs: Any,
        installed: list[FaultPlan],
        length: int = STEPS,
        steps: list[tuple[str, int]] | None = None,
    ) -> None:
        """`steps`: the seed's step list as given (a pinned seed's, as it was drawn when it failed), not drawn."""
        self.seed, self.api, self.token, self.jobs, self.installed = seed, api, token, jobs, installed
        self.length = length
        self.steps = steps if steps is not None else steps_of(seed, length)
        self.last: Run | None = None

    def failure(self, indices: list[int]) -> str | None:
        plan = FaultPlan(self.seed, FAULT_RATE)
        run = self.last = Run(self.seed, self.api, self.token, self.jobs, plan)
        self.jobs.messages.clear()  # what an earlier run left undelivered
        run.setup(self.api, self.token)
        plan.install(clients.dynamodb())
        self.installed.append(plan)
        try:
            run.workload([self.steps[index] for index in indices])
            run.check()
        except Exception as failure:  # noqa: BLE001 - whatever a run raised, it failed: the report says what
            return f"{type(failure).__name__}: {failure}"
        finally:
            plan.uninstall(clients.dynamodb())
            self.installed.remove(plan)
        if run.client.statuses[500]:
            return f"{run.client.statuses[500]} answers were 500"
        return None

    def describe(self, indices: list[int]) -> str:
        return ", ".join(f"{index} {self.steps[index][0]}" for index in indices)

    def report(self, indices: list[int], failure: str) -> str:
        """The failure, and the shortest step list found that still fails, as a command that replays it."""
        shortest = shrink(indices, lambda candidate: self.failure(candidate) is not None, SHRINK_RUNS)
        again = self.failure(shortest) if shortest != indices else failure
        return (
            f"seed {self.seed} fails: {failure}\n"
            f"  its steps: {self.describe(indices)}\n"
            f"  shortest failing steps found: {self.describe(shortest)}: {again}\n"
            f"  replay: make simulate SEED={self.seed} LENGTH={self.length} STEPS={','.join(map(str, shortest))}"
        )
