"""The seeded fault simulation (issue 31): a workload of months on a test-clock tenant, every DynamoDB call
of the service under one seed's fault plan (local/faults.py), job messages delivered as SQS would (any
order, some twice, again after a failed run), and a client that retries a 503 with the same idempotency
key. After the run, with the faults paused, the invariants hold to the cent; a failure names its seed.

This first workload: accounts with a PersonalAuto policy each (tests/api/billing/support.py: 1,225.00 a
year on the Monthly plan), the clock advancing by days to weeks (invoice generation, due dates), payments
of an open invoice or the account (some more than is open: credit), and payment reversals.
"""
from __future__ import annotations

import os
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.storage import clients
from local.faults import FaultPlan, no_backoff
from tests.api.billing.support import billing, billing_tenant
from tests.api.transactions.support import policy_path
from tests.simulation.support import Client, Delivery, SimulationFailure

SEEDS = int(os.environ.get("PAS_SIMULATION_SEEDS", "3"))
FAULT_RATE = 0.08
START = "2026-01-15T09:30:00Z"


@pytest.fixture
def installed(aws) -> Iterator[list[FaultPlan]]:
    client = clients.dynamodb()
    plans: list[FaultPlan] = []
    with no_backoff():
        yield plans
    for plan in plans:
        plan.uninstall(client)


def _vehicle_quote(account: str) -> dict[str, Any]:
    from tests.api.quotes.support import auto

    return auto(account)


class Run:
    def __init__(self, seed: int, api: Any, token: str, jobs: Any, plan: FaultPlan):
        self.seed, self.rng, self.jobs, self.plan = seed, random.Random(seed), jobs, plan
        self.client = Client(api, token, plan)
        self.delivery = Delivery(random.Random(seed + 1))
        self.tenant = ""
        self.accounts: list[str] = []
        self.payments: list[tuple[str, str]] = []  # (account, payment) posted by this run
        self.day = 0
        self.done: list[str] = []

    def drain(self) -> None:
        self.delivery.run(self.jobs, self.plan)

    def setup(self, api: Any, token: str) -> None:
        with self.plan.paused():
            self.tenant = billing_tenant(api, token, test_clock=True)

    def new_policy(self) -> None:
        account = self.client.ok("POST", f"/policy/{self.tenant}/accounts", {
            "type": "PersonAccount", "data": {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com",
                                              "address": {"line1": "12 St James's Square", "city": "London",
                                                          "postcode": "12345"}}})["locator"]
        quote = self.client.ok("POST", f"/policy/{self.tenant}/quotes", _vehicle_quote(account))
        status, issued = self.client.send("PATCH", f"/policy/{self.tenant}/quotes/{quote['locator']}/issue")
        if status != 200:
            raise SimulationFailure(f"issue of quote {quote['locator']}: {status} {issued}")
        self.client.ok("GET", policy_path(self.tenant, issued["policyLocator"]))
        self.accounts.append(account)
        self.drain()

    def advance(self) -> None:
        from datetime import datetime, timedelta, timezone

        self.day += self.rng.choice([3, 10, 17, 31, 45])
        moment = datetime(2026, 1, 15, 9, 30, tzinfo=timezone.utc) + timedelta(days=self.day)
        self.client.ok("POST", f"/clock/{self.tenant}/advance", {"to": moment.isoformat().replace("+00:00", "Z")})
        self.drain()

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
        payment = self.client.ok("POST", billing(self.tenant, "/payments"), {
            "accountLocator": account, "type": "Check", "amount": amount, "data": {}, "targets": targets})
        status, posted = self.client.send("PATCH", billing(self.tenant, f"/payments/{payment['locator']}/post"))
        if status != 200 or posted["paymentState"] != "posted":
            raise SimulationFailure(f"post of payment {payment['locator']}: {status} {posted}")
        self.payments.append((account, payment["locator"]))
        self.drain()

    def reverse(self) -> None:
        if not self.payments:
            return
        account, payment = self.payments.pop(self.rng.randrange(len(self.payments)))
        status, answer = self.client.send("PATCH", billing(self.tenant, f"/payments/{payment}/reverse"),
                                          {"reversalType": "bounced"})
        if status != 200 or answer["paymentState"] != "reversed":
            raise SimulationFailure(f"reversal of payment {payment}: {status} {answer}")
        self.drain()

    def workload(self, steps: int) -> None:
        self.done.append("new_policy")
        self.new_policy()
        for _ in range(steps):
            step = self.rng.choices(["new_policy", "advance", "pay", "reverse"], [1, 4, 3, 1])[0]
            self.done.append(step)
            getattr(self, step)()

    def check(self) -> None:
        """The invariants, read through the API with the faults paused."""
        with self.plan.paused():
            for account in self.accounts:
                self._check_account(account)

    def _check_account(self, account: str) -> None:
        invoices = self.client.ok("GET", billing(self.tenant, f"/invoices/accounts/{account}/list?count=100"
                                                               "&includeZeroAmountInvoices=true"))["items"]
        invoiced = sum((Decimal(str(i["totalAmount"])) for i in invoices), Decimal(0))
        remaining = sum((Decimal(str(i["totalRemainingAmount"])) for i in invoices), Decimal(0))
        payments = self.client.ok("GET", billing(self.tenant, f"/payments/list?accountLocator={account}&count=100"
                                                               "&includeReversed=true"))["items"]
        posted = [p for p in payments if p["paymentState"] == "posted"]
        paid = sum((Decimal(str(p["amount"])) for p in posted), Decimal(0))
        balance = self.client.ok("GET", billing(
            self.tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{account}"))["balance"]
        balance = Decimal(str(balance))
        if balance < 0:
            raise SimulationFailure(f"account {account}: credit balance {balance} < 0")
        # what was invoiced is paid (what the payments put on invoices), or still open; what the payments did
        # not put on invoices is in the credit balance (no distributions, write-offs or settling credits here)
        if invoiced != paid - balance + remaining:
            raise SimulationFailure(f"account {account}: invoiced {invoiced} != paid {paid} - credit {balance} "
                                    f"+ remaining {remaining}")
        for invoice in invoices:
            items = sum((Decimal(str(item["amount"])) for item in self.client.ok(
                "GET", billing(self.tenant, f"/invoices/{invoice['locator']}"))["invoiceItems"]), Decimal(0))
            if items != Decimal(str(invoice["totalAmount"])):
                raise SimulationFailure(f"invoice {invoice['locator']}: items {items} != {invoice['totalAmount']}")
        due_times = [i["dueTime"] for i in invoices if not i.get("owedFor")]
        if len(due_times) != len(set(due_times)):
            raise SimulationFailure(f"account {account}: two invoices for one due time: {sorted(due_times)}")


@pytest.mark.parametrize("seed", range(SEEDS))
def test_money_survives_the_faults_of_a_seed(seed, api, admin_token, jobs, installed):
    plan = FaultPlan(seed, FAULT_RATE)
    run = Run(seed, api, admin_token, jobs, plan)
    run.setup(api, admin_token)
    plan.install(clients.dynamodb())
    installed.append(plan)
    try:
        run.workload(12)
        run.advance()
        run.check()
    except SimulationFailure as failure:
        raise SimulationFailure(f"seed {seed}, steps {run.done}, faults {dict(plan.injected)}: {failure}") from None
    assert run.client.statuses[500] == 0
    assert sum(plan.injected.values()) > 0, "the seed injected no fault: the run proves nothing"
