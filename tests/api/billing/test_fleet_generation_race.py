"""Two invoice generation runs of one fleet's account overlapping (issue 28 point 7): 30 monthly policies on one
account, one invoice staged over several writes (billing/invoices/service.py `_stage_invoice`), its document's
rendering data kept in S3 (the limits made small). The other run's whole commit is injected between the loser's
read of the installments and its writes: before its staged writes (the loser's staged delete of a marker the other
took fails), or after them and before its final write (which fails on the account's billing root, bumped by the
other). Either way: exactly one invoice with every item, and nothing the loser wrote is left: no item page, staged
record, reference or rendering data of an invoice that does not exist."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from chalicelib.billing import repository
from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.billing.invoices import service as invoicing
from chalicelib.core.clock import isoformat
from chalicelib.documents import repository as documents_repository
from chalicelib.runtime import due
from chalicelib.settings import settings
from chalicelib.storage import clients, keys, query, table
from tests.api.billing.support import billing, billing_model, invoices_of_account
from tests.api.documents.support import documents, documents_tenant
from tests.api.policies.support import issue
from tests.api.quotes.support import new_account
from tests.builders import system_ctx
from tests.support.api import call, ok

POLICIES = 30
FIRST_GENERATE = datetime(2026, 1, 22, 5, tzinfo=timezone.utc)
TOTAL = Decimal("3150.00")
TEMPLATE = "Invoice {{ invoiceNumber }}: {% for item in invoiceItems %}{{ item.amount }} {% endfor %}"


@pytest.fixture
def fleet(api, admin_token, jobs, monkeypatch):
    """(tenant, account): 30 policies billed monthly on one account, none invoiced yet; item pages of ~2 KB, an
    invoice document whose rendering data over 2 KB is kept in S3."""
    monkeypatch.setattr(invoice_repository, "PAGE_BYTES", 2_000)
    monkeypatch.setattr(invoice_repository, "INLINE_LOCATORS", 5)
    monkeypatch.setattr(documents_repository, "RENDERING_DATA_INLINE_BYTES", 2_000)
    model = billing_model()
    model["documents"] = {
        "InvoiceDoc": {"format": "html", "rendering": "dynamic", "scope": "invoice", "trigger": "generated"}
    }
    model["defaultInvoiceDocument"] = "InvoiceDoc"
    tenant = documents_tenant(api, admin_token, model, {"documents/InvoiceDoc/template.liquid": TEMPLATE})
    account = new_account(api, admin_token, tenant)
    for _ in range(POLICIES):
        issue(tenant, account)
    jobs.drain()
    return tenant, account


def run_generation(tenant):
    return due.run_step(system_ctx().for_tenant(tenant), FIRST_GENERATE).result


def partition(tenant, account):
    """Every item of the account's billing partition, as stored."""
    return query.all_items(
        table.gateway(), repository.scope(tenant), keys.billing_partition(tenant, account), consistent=True
    )


def rendering_data_objects(tenant):
    listed = clients.s3().list_objects_v2(Bucket=settings().bucket_name, Prefix=f"tenants/{tenant}/documents/")
    return sorted(o["Key"] for o in listed.get("Contents", []) if o["Key"].endswith("/rendering-data.json"))


@pytest.mark.parametrize("between", ["read_and_staged_writes", "staged_writes_and_final_write"])
def test_two_overlapping_generation_runs_make_one_invoice_and_the_loser_leaves_nothing(
    api, admin_token, fleet, jobs, monkeypatch, between
):
    tenant, account = fleet
    other: list[dict] = []

    def the_other_run():
        if not other:
            other.append({})
            other[0] = run_generation(tenant)  # the whole of another run of the same entry, committed

    if between == "read_and_staged_writes":
        real_pages = invoice_repository.write_pages

        def racing_pages(tenant_locator, invoice):
            the_other_run()
            real_pages(tenant_locator, invoice)

        monkeypatch.setattr(invoice_repository, "write_pages", racing_pages)
    else:
        real_staged = repository.write_staged

        def racing_staged(tenant_locator, groups):
            real_staged(tenant_locator, groups)
            the_other_run()

        monkeypatch.setattr(repository, "write_staged", racing_staged)

    loser = run_generation(tenant)

    assert other[0]["invoicesGenerated"] == 1, other
    assert loser.get("invoicesGenerated", 0) == 0 and loser["alreadyDone"] == 1, loser
    jobs.drain()
    [listed] = invoices_of_account(api, admin_token, tenant, account)
    assert Decimal(str(listed["totalAmount"])) == TOTAL
    invoice = ok(call(api, "GET", billing(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert Counter((i["chargeType"], Decimal(str(i["amount"]))) for i in invoice["invoiceItems"]) == {
        ("premium", Decimal("100.00")): POLICIES,
        ("tax", Decimal("5.00")): POLICIES,
    }
    assert sum(Decimal(str(i["remainingAmount"])) for i in invoice["invoiceItems"]) == TOTAL
    # the account's partition: the one invoice's pages only, nothing staged, no marker left to invoice
    stored = partition(tenant, account)
    pages = [i for i in stored if i["SK"].startswith(keys.BILLING_ITEM_PAGE_PREFIX)]
    assert pages and {p["invoiceLocator"] for p in pages} == {listed["locator"]}
    whole = invoicing.invoice(system_ctx().for_tenant(tenant), listed["locator"])
    assert whole.itemPages is not None and len(pages) == whole.itemPages.count
    staged = [
        i["SK"] for i in stored if {repository.STAGED, repository.STAGED_TOKEN, repository.STAGED_DELETE} & i.keys()
    ]
    assert staged == []
    uninvoiced = f"{keys.BILLING_UNINVOICED_PREFIX}{isoformat(FIRST_GENERATE)}#"
    assert [i["SK"] for i in stored if i["SK"].startswith(uninvoiced)] == []
    # each policy lists the one invoice (no reference of the loser's)
    assert len(set(whole.policyLocators)) == POLICIES
    for policy in whole.policyLocators:
        refs = query.all_items(
            table.gateway(),
            repository.scope(tenant),
            keys.billing_refs(tenant, "policy", policy, invoice_repository.INVOICE_REFS),
            consistent=True,
        )
        assert [r["locator"] for r in refs] == [listed["locator"]]
    # one rendering data in S3: the one invoice's document's
    document = ok(call(api, "GET", documents(tenant, f"/invoices/{listed['locator']}"), admin_token))
    assert rendering_data_objects(tenant) == [f"tenants/{tenant}/documents/{document['locator']}/rendering-data.json"]
    assert len(document["renderingData"]["invoiceItems"]) == 2 * POLICIES
