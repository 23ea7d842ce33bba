"""An invoice's document, rendered when billing generates the invoice (the configuration's
`defaultInvoiceDocument`), fetched through the invoice document endpoint; its failed job retriggered."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.documents import repository
from chalicelib.runtime import due
from chalicelib.storage import blobs, keys, table
from chalicelib.storage.keys import Key
from tests.api.billing.support import billing_model, invoices_of_account
from tests.api.documents.support import documents, documents_tenant, download, pdf_text, redeploy
from tests.api.policies.support import issue
from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy
from tests.builders import system_ctx
from tests.support.api import assert_error, call, ok

INVOICE = """<html><body><h1>Invoice {{ invoiceNumber }} for {{ account.data.firstName }} {{ account.data.lastName }}
</h1>{% for item in invoiceItems %}<p>{{ item.chargeType }} {{ item.amount }}</p>{% endfor %}
<p>Total {{ totalAmount }} {{ currency }} due {{ dueTime }}</p></body></html>"""


def invoice_model():
    model = billing_model("FullPay")
    model["documents"] = {
        "InvoiceDoc": {
            "format": "pdf",
            "rendering": "dynamic",
            "scope": "invoice",
            "trigger": "generated",
            "selectionTimeBasis": "currentTime",
        }
    }
    model["defaultInvoiceDocument"] = "InvoiceDoc"
    return model


def test_an_invoice_document_is_rendered_when_the_invoice_is_generated(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token, invoice_model(), {"documents/InvoiceDoc/template.liquid": INVOICE})
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()  # the installments, then the invoice (a full-pay term is invoiced at once), then its document

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    document = ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert (document["referenceType"], document["referenceLocator"], document["staticName"]) == (
        "invoice",
        invoice["locator"],
        "InvoiceDoc",
    )
    assert (document["documentInstanceState"], document["documentFormat"]) == ("ready", "pdf")
    assert document["renderingData"]["totalAmount"] == invoice["totalAmount"]
    text = pdf_text(download(api, admin_token, tenant, document["locator"]).body)
    assert f"Invoice {invoice['invoiceNumber']} for Ada Lovelace" in text
    assert "premium 1200.00" in text and "Total 1225.00 USD" in text


def test_a_failed_invoice_document_is_retriggered(api, admin_token, jobs):
    model = invoice_model()
    tenant = documents_tenant(api, admin_token, model, {"documents/InvoiceDoc/template.liquid": "{{ oops"})
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    failed = ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert failed["documentInstanceState"] == "renderError"
    job_locator = next(m.payload["jobLocator"] for m in jobs.sent if m.payload.get("referenceType") == "invoice")

    redeploy(api, admin_token, tenant, model, {"documents/InvoiceDoc/template.liquid": "Invoice {{ invoiceNumber }}"})
    retriggered = ok(
        call(api, "POST", documents(tenant, f"/invoices/{invoice['locator']}/jobs/{job_locator}/trigger"), admin_token)
    )
    assert (retriggered["referenceType"], retriggered["status"]) == ("invoice", "running")
    jobs.drain()

    fixed = ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert (fixed["locator"], fixed["documentInstanceState"]) == (failed["locator"], "ready")
    assert f"Invoice {invoice['invoiceNumber']}" in pdf_text(download(api, admin_token, tenant, fixed["locator"]).body)
    assert_error(
        call(api, "POST", documents(tenant, f"/invoices/{invoice['locator']}/jobs/{job_locator}/trigger"), admin_token),
        409,
        "documentsJob.not_failed",
    )


def test_an_invoice_documents_large_rendering_data_is_kept_in_s3_and_read_back(api, admin_token, jobs, monkeypatch):
    """Rendering data larger than its record holds (a fleet's invoice: megabytes) is stored beside the instance's
    files, its record naming it: rendered, fetched and listed as an instance holding it itself (made small here)."""
    monkeypatch.setattr(repository, "RENDERING_DATA_INLINE_BYTES", 500)
    tenant = documents_tenant(api, admin_token, invoice_model(), {"documents/InvoiceDoc/template.liquid": INVOICE})
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    document = ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert document["documentInstanceState"] == "ready"
    assert document["renderingData"]["totalAmount"] == invoice["totalAmount"]
    assert [i["chargeType"] for i in document["renderingData"]["invoiceItems"]] == ["premium", "tax"]
    text = pdf_text(download(api, admin_token, tenant, document["locator"]).body)
    assert "premium 1200.00" in text and "Total 1225.00 USD" in text
    scope = keys.tenant_scope(tenant)
    stored = table.gateway().get(scope, Key(f"{scope}DOC#{document['locator']}"))
    assert stored["renderingData"] == {} and stored[repository.RENDERING_DATA_PATH].endswith("rendering-data.json")
    assert blobs.get(tenant, stored[repository.RENDERING_DATA_PATH]) is not None
    [listed] = repository.all_documents_of(tenant, "invoice", invoice["locator"])  # a list reads it back too
    assert listed.renderingData["totalAmount"] == Decimal(str(invoice["totalAmount"]))


FLEET = 30


def test_a_fleets_invoice_gets_its_document(api, admin_token, jobs, monkeypatch):
    """30 monthly policies on one account: one invoice, staged (more than one write holds), with its document,
    whose rendering data (the invoice whole, 60 items) is kept in S3 (the limit made small) and rendered whole."""
    monkeypatch.setattr(repository, "RENDERING_DATA_INLINE_BYTES", 2_000)
    monkeypatch.setattr(invoice_repository, "PAGE_BYTES", 2_000)
    model = invoice_model()
    model["defaultInstallmentPlan"] = "Monthly"
    tenant = documents_tenant(api, admin_token, model, {"documents/InvoiceDoc/template.liquid": INVOICE})
    account = new_account(api, admin_token, tenant)
    for _ in range(FLEET):
        issue(tenant, account)
    jobs.drain()

    due.run_step(system_ctx().for_tenant(tenant), datetime(2026, 1, 22, 5, tzinfo=timezone.utc))
    jobs.drain()

    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    document = ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token))
    assert document["documentInstanceState"] == "ready"
    assert len(document["renderingData"]["invoiceItems"]) == 2 * FLEET
    assert len(document["renderingData"]["policyInvoiceSummaries"]) == FLEET
    text = pdf_text(download(api, admin_token, tenant, document["locator"]).body)
    assert text.count("premium 100.00") == FLEET and "Total 3150.00 USD" in text
    scope = keys.tenant_scope(tenant)
    stored = table.gateway().get(scope, Key(f"{scope}DOC#{document['locator']}"))
    assert stored["renderingData"] == {} and repository.RENDERING_DATA_PATH in stored
