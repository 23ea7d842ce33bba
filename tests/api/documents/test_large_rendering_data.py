"""An invoice document's answer stays bounded however large the invoice (issue 28 point 7): rendering data over
documents/schemas.py's RENDERING_DATA_RESPONSE_BYTES as stored (a 5,000-item invoice's: ~3 MB, near Lambda's 6 MB
answer) is answered `{}` (as `suppressRenderingData` answers it) with `renderingDataOmitted`, its size; the render
still has it whole. Smaller rendering data is answered as before, byte for byte."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

from chalicelib.billing.invoices import repository as invoice_repository
from chalicelib.documents import repository, schemas
from chalicelib.http.responses import to_json
from chalicelib.runtime import due, wiring
from tests.api.billing.support import billing_model, invoices_of_account
from tests.api.documents.support import documents, documents_tenant, download
from tests.api.policies.support import issue
from tests.api.quotes.support import new_account
from tests.api.transactions.support import issued_policy
from tests.builders import system_ctx
from tests.support.api import call, ok

TEMPLATE = (
    "Invoice {{ invoiceNumber }}: {% for item in invoiceItems %}{{ item.chargeType }} {{ item.amount }} {% endfor %}"
)
FLEET = 30


def invoice_model(plan: str) -> dict:
    model = billing_model(plan)
    model["documents"] = {
        "InvoiceDoc": {"format": "html", "rendering": "dynamic", "scope": "invoice", "trigger": "generated"}
    }
    model["defaultInvoiceDocument"] = "InvoiceDoc"
    return model


def as_answered_before(document: dict, tenant: str) -> str:
    """The instance's answer as the code before the bound made it: every field of the instance, its rendering
    data whole."""
    [stored] = repository.get_documents(tenant, [document["locator"]])
    fields = stored.model_dump(include=set(schemas.DocumentInstanceResponse.model_fields))
    if stored.artifact is not None:
        fields.update(size=stored.artifact.size, checksum=stored.artifact.checksum)
    return to_json(schemas.DocumentInstanceResponse(**fields))


def test_a_fleets_invoice_document_answers_without_its_large_rendering_data(api, admin_token, jobs, monkeypatch):
    monkeypatch.setattr(repository, "RENDERING_DATA_INLINE_BYTES", 2_000)
    monkeypatch.setattr(schemas, "RENDERING_DATA_RESPONSE_BYTES", 20_000)
    monkeypatch.setattr(invoice_repository, "PAGE_BYTES", 2_000)
    tenant = documents_tenant(
        api, admin_token, invoice_model("Monthly"), {"documents/InvoiceDoc/template.liquid": TEMPLATE}
    )
    account = new_account(api, admin_token, tenant)
    for _ in range(FLEET):
        issue(tenant, account)
    jobs.drain()
    due.run_step(system_ctx().for_tenant(tenant), datetime(2026, 1, 22, 5, tzinfo=timezone.utc))
    jobs.drain()
    [invoice] = invoices_of_account(api, admin_token, tenant, account)

    answer = call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), admin_token)

    document = ok(answer)
    assert document["documentInstanceState"] == "ready"
    assert document["renderingData"] == {} and document["renderingDataOmitted"] > 20_000
    before = as_answered_before(document, tenant)
    assert len(answer.body) < 2_000 < len(before)  # the whole data (60 items, 30 summaries) left out
    # the same by its locator; the render had it whole
    assert ok(call(api, "GET", documents(tenant, f"/{document['locator']}"), admin_token))["renderingData"] == {}
    text = download(api, admin_token, tenant, document["locator"]).body.decode()
    assert text.count("premium 100.00") == FLEET
    [whole] = repository.get_documents(tenant, [document["locator"]])
    assert len(whole.renderingData["invoiceItems"]) == 2 * FLEET
    assert sum(Decimal(str(i["amount"])) for i in whole.renderingData["invoiceItems"]) == Decimal("3150.00")


def test_a_small_invoice_documents_answer_is_as_before_byte_for_byte(api, admin_token, jobs, monkeypatch):
    """On its record (a one-policy invoice), or in S3 but under the bound: answered whole, as before."""
    tenant = documents_tenant(
        api, admin_token, invoice_model("FullPay"), {"documents/InvoiceDoc/template.liquid": TEMPLATE}
    )
    account = new_account(api, admin_token, tenant)
    issued_policy(api, admin_token, tenant, account)
    jobs.drain()
    [invoice] = invoices_of_account(api, admin_token, tenant, account)
    path = documents(tenant, f"/invoices/{invoice['locator']}")

    on_record = call(api, "GET", path, admin_token)

    document = ok(on_record)
    assert "renderingDataOmitted" not in document and document["renderingData"]["invoiceItems"]
    assert on_record.body.decode() == as_answered_before(document, tenant)
    monkeypatch.setattr(repository, "RENDERING_DATA_INLINE_BYTES", 200)  # now read back from S3 once saved
    [stored] = repository.get_documents(tenant, [document["locator"]])
    uow = wiring.unit_of_work(system_ctx().for_tenant(tenant))
    repository.save_document(uow, tenant, stored)
    uow.commit()
    in_s3 = call(api, "GET", path, admin_token)
    [kept] = repository.get_documents(tenant, [document["locator"]])
    assert 0 < kept.stored_rendering_data_bytes < schemas.RENDERING_DATA_RESPONSE_BYTES
    assert in_s3.body == on_record.body
