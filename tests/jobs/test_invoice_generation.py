"""An account's invoice generation on the due index (billing/invoices/job_handlers.py `generate_invoices`): billing a
transaction puts the account's `billing.invoiceGenerate` entry at its earliest uninvoiced generate time,
and each run invoices what is due and moves the entry on to the next generate time (none left: removed).

The tenant has the quotes test configuration without installment plans: a policy issued from a quote is
billed on one full-pay frame generated at its term start, 2026-02-01T05:00Z; one issued through the policies
service (tests/api/policies/support.py) prefers a monthly cadence from the same start. The clock stands at
2026-01-15T09:30Z.
"""

from __future__ import annotations

from datetime import datetime, timezone

from chalicelib.billing.installments import repository as installment_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.core.clock import isoformat
from chalicelib.runtime import due
from chalicelib.runtime.due_kinds import DueKind
from chalicelib.runtime.job_types import JobType
from tests.api.policies.support import issue
from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy
from tests.builders import system_ctx
from tests.support.configs import quotes_tenant

TERM_START = datetime(2026, 2, 1, 5, tzinfo=timezone.utc)
BILLING = frozenset({JobType.BILLING_INSTALLMENTS})


def test_a_transaction_billed_while_its_accounts_generation_runs_is_invoiced_later(api, admin_token, jobs, monkeypatch):
    """The account's entry runs (its invoices generated, no later generate time found) while another
    policy of the account is billed (its installments written, the entry found still standing at an
    earlier time): the run must not remove the entry the new installments count on."""
    tenant = quotes_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain(job_types=BILLING)
    ctx = system_ctx().for_tenant(tenant)
    assert due.entry(ctx, DueKind.INVOICE_GENERATE, account).due_at == TERM_START
    issue(tenant, account)  # billed monthly from the term start: its job waits

    real = invoicing.next_generate_time

    def racing(run_ctx, account_locator):
        found = real(run_ctx, account_locator)  # before the second policy's installments exist
        monkeypatch.setattr(invoicing, "next_generate_time", real)
        assert jobs.drain(job_types=BILLING) == 1  # billed now, between the run's read and its settlement
        return found

    monkeypatch.setattr(invoicing, "next_generate_time", racing)
    due.run_step(ctx, TERM_START)

    # the billing put the entry again: the run found it moved and left it, read it again still due, and
    # invoiced the second policy's first month, then moved it on to its second month
    assert installment_repository.uninvoiced(tenant, account, isoformat(TERM_START)) == []
    entry = due.entry(ctx, DueKind.INVOICE_GENERATE, account)
    assert entry is not None and entry.due_at == datetime(2026, 3, 1, 5, tzinfo=timezone.utc)
    until = datetime(2027, 1, 1, 5, tzinfo=timezone.utc)
    assert not due.run_step(ctx, until).more
    assert (
        installment_repository.uninvoiced(tenant, account, isoformat(until)) == []
    )  # every month invoiced in its time
