"""One billing root per container (billing/repository.py): two policies of one account billed at policy level
never fail each other's billing writes, while a payment that settles a policy's invoices and that policy's
invoice generation never interleave (one of them answers 409, the due entry retries, no money moves twice).

The tenant has the billing test configuration (tests/api/billing/support.py: a Monthly plan generating each
installment 10 days before its month, due at its start), on a test clock standing at 2026-01-15T09:30Z. One
account has two policies billed at policy level: A from 2026-02-01 and B from 2026-03-15 (New York midnight),
each 100.00 of premium a month and 25.00 of tax spread over its year, a twelfth a month (months basis):
102.08 a month (100.00 and 2.08 of tax). The clock is advanced to 2026-03-10: A's February and March and
B's March (from 03-15) are invoiced, open (B's falls due on 03-15); A's April installment is generated on
2026-03-22, where the account's invoice generation entry waits. An interleaving runs the other write right
after a unit of work read its billing roots (`repository.root_versions`, or an installment job's
`root_versions_in`), before it commits: with one root
per account (before), each of them failed the first write with 409.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.billing import repository
from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.core.errors import ConcurrentModification
from chalicelib.runtime import due, wiring
from chalicelib.runtime.due_kinds import DueKind
from tests.api.billing.support import billing, billing_tenant, executed_distribution
from tests.api.quotes.support import new_account
from tests.api.transactions.support import (
    issued_change,
    issued_policy,
    modify,
    policy_path,
    segment_of_policy,
    vehicle_of,
)
from tests.builders import system_ctx
from tests.support.api import assert_error, call, event_types, ok

A_APRIL_GENERATED = datetime(2026, 3, 22, 4, tzinfo=timezone.utc)
B_APRIL_GENERATED = datetime(2026, 4, 5, 4, tzinfo=timezone.utc)


@dataclass
class Book:
    tenant: str
    account: str
    a: str
    b: str

    def ctx(self) -> Any:
        return replace(system_ctx().for_tenant(self.tenant), now=wiring.clock_for(self.tenant).now())

    def invoices(self, api: Any, token: str, policy: str) -> list[dict[str, Any]]:
        return ok(call(api, "GET", billing(self.tenant, f"/invoices/policies/{policy}/list?count=100"), token))["items"]

    def states(self, api: Any, token: str, policy: str) -> list[tuple[Decimal, Decimal, str]]:
        return [
            (Decimal(str(i["totalAmount"])), Decimal(str(i["totalRemainingAmount"])), i["invoiceState"])
            for i in self.invoices(api, token, policy)
        ]

    def roots(self) -> dict[str, int]:
        return repository.root_versions(self.tenant, self.account, [self.account, self.a, self.b])

    def credit(self, api: Any, token: str) -> Decimal:
        found = ok(
            call(
                api,
                "GET",
                billing(self.tenant, f"/accounting/ledgerAccounts/accountCreditBalance/{self.account}"),
                token,
            )
        )
        return Decimal(str(found["balance"]))

    def generation_entry(self) -> Any:
        return due.entry(self.ctx(), DueKind.INVOICE_GENERATE, self.account)


@pytest.fixture
def book(api, admin_token, jobs) -> Book:
    tenant = billing_tenant(api, admin_token, test_clock=True)
    account = new_account(api, admin_token, tenant)
    a = issued_policy(api, admin_token, tenant, account, billingLevel="policy")["locator"]
    b = issued_policy(api, admin_token, tenant, account, billingLevel="policy", startTime="2026-03-15T04:00:00Z")[
        "locator"
    ]
    jobs.drain()
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-03-10T00:00:00Z"}))
    jobs.drain()
    found = Book(tenant, account, a, b)
    assert found.states(api, admin_token, a) == [
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]
    assert found.states(api, admin_token, b) == [(Decimal("102.08"), Decimal("102.08"), "open")]
    assert found.generation_entry().due_at == A_APRIL_GENERATED
    return found


def after_reading_roots(monkeypatch, containers: Iterable[str], write: Callable[[], Any]) -> list[Any]:
    """Run `write` once, right after a unit of work read the billing roots of exactly `containers`; the list
    it answers holds what `write` answered once it ran."""
    real, wanted = repository.root_versions, set(containers)
    done: list[Any] = []
    started: list[Any] = []

    def reading(tenant: str, account: str, named: Iterable[str]) -> dict[str, int]:
        named = list(named)
        versions = real(tenant, account, named)
        if not started and set(named) == wanted:
            started.append(True)
            done.append(write())
        return versions

    def reading_in(tenant: str, account: str, named: Iterable[str], found: Any) -> dict[str, int]:
        """An installment job reads its account's and its policy's roots with the account."""
        named = list(named)
        versions = real_in(tenant, account, named, found)
        if not started and wanted <= set(named):
            started.append(True)
            done.append(write())
        return versions

    real_in = repository.root_versions_in
    monkeypatch.setattr(repository, "root_versions", reading)
    monkeypatch.setattr(repository, "root_versions_in", reading_in)
    return done


def write_off(api: Any, token: str, book: Book, invoice: dict[str, Any]) -> Any:
    return ok(call(api, "PATCH", billing(book.tenant, f"/invoices/{invoice['locator']}/writeOff"), token))


def payment_of(api: Any, token: str, book: Book, invoice: dict[str, Any]) -> dict[str, Any]:
    """A draft payment of what the invoice owes, targeting it."""
    return ok(
        call(
            api,
            "POST",
            billing(book.tenant, "/payments"),
            token,
            {
                "accountLocator": book.account,
                "type": "Check",
                "amount": invoice["totalRemainingAmount"],
                "data": {},
                "targets": [{"containerType": "invoice", "containerLocator": invoice["locator"]}],
            },
        )
    )


def post(api: Any, token: str, book: Book, payment: dict[str, Any]) -> Any:
    return call(api, "PATCH", billing(book.tenant, f"/payments/{payment['locator']}/post"), token)


# --- two policies billed at policy level do not meet ---------------------------------------------------


def test_one_policys_invoice_run_commits_after_the_other_policys_write_off(api, admin_token, book, monkeypatch):
    [b_march] = book.invoices(api, admin_token, book.b)
    before = book.roots()
    # the run reads the account's root with the account, A's once it has read A's installments
    written = after_reading_roots(monkeypatch, [book.a], lambda: write_off(api, admin_token, book, b_march))

    step_ = due.run_step(book.ctx(), A_APRIL_GENERATED)

    assert [w["amount"] for w in written] == [Decimal("102.08")]  # B's write-off, between the run's read and commit
    # B's March invoice fell due on 2026-03-15 (no delinquency plan), as B started, then A's April was generated
    assert (
        step_.result["entries"],
        step_.result["alreadyDone"],
        step_.result["invoicesGenerated"],
        step_.result["statusUpdates"],
    ) == (3, 0, 1, 1)
    assert book.states(api, admin_token, book.a) == [
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]
    assert book.states(api, admin_token, book.b) == [(Decimal("102.08"), Decimal("0.00"), "settled")]
    # each wrote its own container's root (B's twice: its invoice fell due, then its write-off); the account's
    # (a payment's) was not touched
    assert book.roots() == {book.account: before[book.account], book.a: before[book.a] + 1, book.b: before[book.b] + 2}
    assert book.generation_entry().due_at == B_APRIL_GENERATED


def test_one_policys_installment_job_commits_after_the_other_policys_write_off(
    api, admin_token, jobs, book, monkeypatch
):
    policy = ok(call(api, "GET", policy_path(book.tenant, book.a), admin_token))
    vehicle = vehicle_of(segment_of_policy(api, admin_token, book.tenant, policy))["staticLocator"]
    change = issued_change(
        api, admin_token, book.tenant, book.a, "2026-06-01T04:00:00.000Z", modify(vehicle, value="25000")
    )
    [b_march] = book.invoices(api, admin_token, book.b)
    before = book.roots()
    written = after_reading_roots(monkeypatch, [book.a], lambda: write_off(api, admin_token, book, b_march))

    jobs.drain()

    assert [w["amount"] for w in written] == [Decimal("102.08")]
    [job] = ok(
        call(api, "GET", billing(book.tenant, f"/jobs/installments/transactions/{change['locator']}/list"), admin_token)
    )["items"]
    assert job["jobStatus"] == "finished"
    installments = ok(
        call(
            api,
            "GET",
            billing(book.tenant, f"/installments/transactions/{change['locator']}/list?count=100"),
            admin_token,
        )
    )["items"]
    assert [i["installmentStartTime"] for i in installments] == [
        "2026-06-01T04:00:00.000Z",
        "2026-07-01T04:00:00.000Z",
        "2026-08-01T04:00:00.000Z",
        "2026-09-01T04:00:00.000Z",
        "2026-10-01T04:00:00.000Z",
        "2026-11-01T04:00:00.000Z",
        "2026-12-01T05:00:00.000Z",
        "2027-01-01T05:00:00.000Z",
    ]
    assert book.states(api, admin_token, book.b) == [(Decimal("102.08"), Decimal("0.00"), "settled")]
    assert book.roots() == {book.account: before[book.account], book.a: before[book.a] + 1, book.b: before[book.b] + 1}


def test_two_policies_bringing_the_generation_entry_forward_at_once_keep_the_earlier_time(
    api, admin_token, jobs, book, monkeypatch
):
    """The account's invoice generation entry is shared by its containers: A's installment job read it, B's
    installments moved it earlier meanwhile; A's commit fails (409, its job runs again) instead of putting back
    the later time it read, which would leave B's installments uninvoiced past their generate time."""
    policy = ok(call(api, "GET", policy_path(book.tenant, book.a), admin_token))
    vehicle = vehicle_of(segment_of_policy(api, admin_token, book.tenant, policy))["staticLocator"]
    change = issued_change(
        api, admin_token, book.tenant, book.a, "2026-06-01T04:00:00.000Z", modify(vehicle, value="25000")
    )
    b_april = ok(
        call(api, "GET", billing(book.tenant, f"/installments/policies/{book.b}/list?count=100"), admin_token)
    )["items"][1]
    assert (b_april["generateTime"], b_april.get("invoiceLocator")) == ("2026-04-05T04:00:00.000Z", None)
    earlier = datetime(2026, 3, 12, 4, tzinfo=timezone.utc)
    real, moved = due.entry, []

    def reading(ctx: Any, kind: DueKind, ref: str) -> Any:
        found = real(ctx, kind, ref)
        if not moved:
            moved.append(True)  # B's installment, moved between A's read of the entry and A's commit
            ok(
                call(
                    api,
                    "PATCH",
                    billing(book.tenant, "/installments"),
                    admin_token,
                    {"installmentLocators": [b_april["locator"]], "generateTime": "2026-03-12T04:00:00Z"},
                )
            )
        return found

    monkeypatch.setattr(due, "entry", reading)
    jobs.drain()
    monkeypatch.setattr(due, "entry", real)

    assert moved and book.generation_entry().due_at == earlier
    # the job lost the race (409) and ran again at once: it found the entry earlier than its own, and kept it
    [job] = ok(
        call(api, "GET", billing(book.tenant, f"/jobs/installments/transactions/{change['locator']}/list"), admin_token)
    )["items"]
    assert job["jobStatus"] == "finished"
    assert book.generation_entry().due_at == earlier

    step_ = due.run_step(book.ctx(), earlier)
    assert step_.result["invoicesGenerated"] == 1
    assert book.states(api, admin_token, book.b)[1][2] == "open"  # B's April, invoiced at its new time


def test_two_invoice_runs_that_read_the_same_installments_invoice_them_once(api, admin_token, book, monkeypatch):
    """An invoice run reads the installments due before their containers' roots: one that read them while
    another run invoiced them finds them invoiced when it commits (409), whatever the roots say."""
    ctx = replace(book.ctx(), now=A_APRIL_GENERATED)
    real, other, started = installment_repository.uninvoiced, [], []

    def reading(*args: Any) -> Any:
        found = real(*args)
        if not started:
            started.append(True)
            other.append(invoicing.generate_invoices(ctx, book.account))  # the other run, before the roots' read
        return found

    monkeypatch.setattr(installment_repository, "uninvoiced", reading)
    with pytest.raises(ConcurrentModification):
        invoicing.generate_invoices(ctx, book.account)

    assert [[invoice.totalAmount for invoice in run] for run in other] == [[Decimal("102.08")]]
    assert book.states(api, admin_token, book.a) == [
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]


# --- a payment and its policy's invoice run never interleave -------------------------------------------


def test_a_payment_posted_during_its_policys_invoice_run_fails_the_run_which_retries(
    api, admin_token, book, monkeypatch
):
    a_february = book.invoices(api, admin_token, book.a)[0]
    payment = payment_of(api, admin_token, book, a_february)
    # the run reads the account's root with the account, A's once it has read A's installments
    posted = after_reading_roots(monkeypatch, [book.a], lambda: post(api, admin_token, book, payment))

    step_ = due.run_step(book.ctx(), A_APRIL_GENERATED)

    assert [ok(p)["paymentState"] for p in posted] == ["posted"]
    # B's March fell due as B started, A's run lost
    assert (step_.result["entries"], step_.result["alreadyDone"], step_.result["statusUpdates"]) == (3, 1, 1)
    assert "invoicesGenerated" not in step_.result  # the run's invoice did not commit
    assert book.states(api, admin_token, book.a) == [
        (Decimal("102.08"), Decimal("0.00"), "settled"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]
    retry = book.generation_entry()
    assert (retry.due_at, retry.attempts) == (A_APRIL_GENERATED + timedelta(days=1), 1)

    step_ = due.run_step(book.ctx(), retry.due_at)

    assert (step_.result["alreadyDone"], step_.result["invoicesGenerated"]) == (0, 1)
    assert book.states(api, admin_token, book.a) == [
        (Decimal("102.08"), Decimal("0.00"), "settled"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]
    paid = ok(call(api, "GET", billing(book.tenant, f"/payments/{payment['locator']}/invoices/list"), admin_token))
    assert [i["locator"] for i in paid["items"]] == [a_february["locator"]]
    assert book.credit(api, admin_token) == Decimal("0")


def test_a_payment_whose_policys_invoice_run_commits_first_answers_409_and_moves_nothing(
    api, admin_token, book, monkeypatch
):
    a_february = book.invoices(api, admin_token, book.a)[0]
    payment = payment_of(api, admin_token, book, a_february)
    before = book.roots()
    ran = after_reading_roots(monkeypatch, [book.a], lambda: due.run_step(book.ctx(), A_APRIL_GENERATED))

    refused = post(api, admin_token, book, payment)

    assert [step_.result["invoicesGenerated"] for step_ in ran] == [1]  # A's run, between the post's read and commit
    assert_error(refused, 409, "conflict.concurrent_modification")
    assert (
        ok(call(api, "GET", billing(book.tenant, f"/payments/{payment['locator']}"), admin_token))["paymentState"]
        == "draft"
    )
    assert book.states(api, admin_token, book.a) == [
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
        (Decimal("102.08"), Decimal("102.08"), "open"),
    ]
    assert book.credit(api, admin_token) == Decimal("0")
    assert book.roots() == {
        book.account: before[book.account],
        book.a: before[book.a] + 1,
        book.b: before[book.b] + 1,
    }  # A's run and B's invoice falling due in its step

    again = post(api, admin_token, book, payment)

    assert event_types(api, admin_token, book.tenant, again) == ["billing.invoice.settle", "billing.payment.post"]
    assert book.states(api, admin_token, book.a)[0] == (Decimal("102.08"), Decimal("0.00"), "settled")
    assert book.credit(api, admin_token) == Decimal("0")
    assert book.roots() == {
        book.account: before[book.account] + 1,
        book.a: before[book.a] + 2,
        book.b: before[book.b] + 1,
    }


def test_money_moves_bump_the_account_root_and_only_the_containers_whose_invoices_they_change(api, admin_token, book):
    """160.00 posted to A's February (102.08) leaves 57.92 of credit; a credit distribution of 50.00 to B's
    March and its reversal: each bumps the account's root and the one container it changes."""
    a_february = book.invoices(api, admin_token, book.a)[0]
    [b_march] = book.invoices(api, admin_token, book.b)
    before = book.roots()
    payment = payment_of(api, admin_token, book, {**a_february, "totalRemainingAmount": Decimal("160.00")})
    ok(post(api, admin_token, book, payment))
    assert book.credit(api, admin_token) == Decimal("57.92")
    assert book.roots() == {
        book.account: before[book.account] + 2,
        book.a: before[book.a] + 1,
        book.b: before[book.b],
    }  # created, posted (A's February settled)

    path = billing(book.tenant, "/creditDistributions")
    made = executed_distribution(api, admin_token, book.tenant, book.account, 50, invoice=b_march["locator"])
    assert book.states(api, admin_token, book.b) == [(Decimal("102.08"), Decimal("52.08"), "open")]
    assert book.roots() == {
        book.account: before[book.account] + 4,
        book.a: before[book.a] + 1,
        book.b: before[book.b] + 1,
    }
    ok(call(api, "PATCH", f"{path}/{made['locator']}/reverse", admin_token, {}))
    assert book.states(api, admin_token, book.b) == [(Decimal("102.08"), Decimal("102.08"), "open")]
    assert book.credit(api, admin_token) == Decimal("57.92")
    assert book.roots() == {
        book.account: before[book.account] + 5,
        book.a: before[book.a] + 1,
        book.b: before[book.b] + 2,
    }


# --- account-level billing, the common case, is as it was ----------------------------------------------


def test_account_level_billing_keeps_one_root_and_its_round_trips(api, admin_token, jobs, ddb_calls):
    """A policy billed at account level: every billing write bumps the account's one root, and an invoice
    run, a payment's posting, a write-off and an invoice's update make the DynamoDB calls they made with one
    root per account (counted on the code before per-container roots; since issue 28 the run makes 5 calls fewer:
    the account, its root and the configuration's pointer are one BatchGetItem, and the invoice, its generation
    and its due entry one TransactWriteItems)."""
    from chalicelib.storage import keys, table

    tenant = billing_tenant(api, admin_token, test_clock=True)
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-03-10T00:00:00Z"}))
    jobs.drain()
    february, march = ok(call(api, "GET", billing(tenant, f"/invoices/accounts/{account}/list"), admin_token))["items"]
    payment = ok(
        call(
            api,
            "POST",
            billing(tenant, "/payments"),
            admin_token,
            {
                "accountLocator": account,
                "type": "Check",
                "amount": february["totalAmount"],
                "data": {},
                "targets": [{"containerType": "invoice", "containerLocator": february["locator"]}],
            },
        )
    )
    calls = {}

    ddb_calls.clear()
    step_ = due.run_step(
        replace(system_ctx().for_tenant(tenant), now=wiring.clock_for(tenant).now()), A_APRIL_GENERATED
    )
    calls["run"] = dict(Counter(ddb_calls))
    ddb_calls.clear()
    ok(call(api, "PATCH", billing(tenant, f"/payments/{payment['locator']}/post"), admin_token))
    calls["post"] = dict(Counter(ddb_calls))
    ddb_calls.clear()
    ok(call(api, "PATCH", billing(tenant, f"/invoices/{march['locator']}/writeOff"), admin_token))
    calls["writeOff"] = dict(Counter(ddb_calls))
    ddb_calls.clear()
    ok(
        call(
            api,
            "PATCH",
            billing(tenant, f"/invoices/{march['locator']}"),
            admin_token,
            {"autopayTime": "2026-03-20T00:00:00Z", "suppressAutopay": True},
        )
    )
    calls["update"] = dict(Counter(ddb_calls))

    assert step_.result["invoicesGenerated"] == 1
    assert calls == {
        "run": {"GetItem": 1, "Query": 6, "BatchGetItem": 3, "UpdateItem": 1, "TransactWriteItems": 1},
        "post": {"GetItem": 5, "Query": 2, "BatchGetItem": 4, "TransactWriteItems": 1},
        "writeOff": {"GetItem": 5, "Query": 2, "BatchGetItem": 2, "TransactWriteItems": 1},
        "update": {"GetItem": 4, "BatchGetItem": 1, "TransactWriteItems": 1},
    }
    roots, _ = table.gateway().query(
        keys.tenant_scope(tenant), keys.billing_partition(tenant, account), sk_prefix=keys.ROOT
    )
    # the lattice, three invoices, the payment's creation and posting, two invoices falling due, the
    # write-off and the update: ten bumps of the one root there is
    assert [(root["SK"], root["version"]) for root in roots] == [(keys.ROOT, 10)]


# --- delinquencies live in their invoices' container; a hold changes them all -------------------------


def test_delinquencies_of_two_policies_change_apart_and_a_hold_bumps_the_account_and_both(
    api, admin_token, jobs, monkeypatch
):
    """Two policies billed at policy level, both from 2026-02-01, with the Standard delinquency plan (10 days
    of grace, a reminder 3 days before its end): their February invoices fall due unsettled on 2026-02-01 and
    each opens a delinquency of its own container. Moving A's grace end commits after B's was moved in
    between; activating a delinquency hold cancels both reminders and bumps the account's root and both."""
    from chalicelib.billing.delinquency import repository as delinquencies
    from tests.api.billing.delinquency_support import delinquencies_of_account, delinquency_tenant, events_of

    tenant = delinquency_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    a = issued_policy(api, admin_token, tenant, account, billingLevel="policy")["locator"]
    b = issued_policy(api, admin_token, tenant, account, billingLevel="policy")["locator"]
    jobs.drain()
    ok(call(api, "POST", f"/clock/{tenant}/advance", admin_token, {"to": "2026-02-03T00:00:00Z"}))
    jobs.drain()
    book = Book(tenant, account, a, b)
    found = {
        d["locator"]: delinquencies.delinquency(tenant, d["locator"])
        for d in delinquencies_of_account(api, admin_token, tenant, account)
    }
    of = {record.billingContainer: locator for locator, record in found.items()}
    assert sorted(of) == sorted([a, b]) and {r.delinquencyState for r in found.values()} == {"inGrace"}
    before = book.roots()

    def move_grace_end(policy: str, to: str) -> Any:
        return ok(call(api, "PATCH", billing(tenant, f"/delinquencies/{of[policy]}"), admin_token, {"graceEndAt": to}))

    moved_b = after_reading_roots(monkeypatch, [a], lambda: move_grace_end(b, "2026-02-20T05:00:00Z"))
    moved_a = move_grace_end(a, "2026-02-18T05:00:00Z")
    monkeypatch.undo()

    assert [m["graceEndAt"] for m in (*moved_b, moved_a)] == ["2026-02-20T05:00:00.000Z", "2026-02-18T05:00:00.000Z"]
    assert book.roots() == {account: before[account], a: before[a] + 1, b: before[b] + 1}

    hold = ok(
        call(
            api,
            "POST",
            billing(tenant, "/holds"),
            admin_token,
            {"accountLocator": account, "targetType": "delinquency"},
        )
    )
    ok(call(api, "PATCH", billing(tenant, f"/holds/{hold['locator']}/activate"), admin_token))

    assert book.roots() == {account: before[account] + 2, a: before[a] + 2, b: before[b] + 2}
    for locator in of.values():
        assert [e["delinquencyEventState"] for e in events_of(api, admin_token, tenant, locator)] == ["cancelled"]
