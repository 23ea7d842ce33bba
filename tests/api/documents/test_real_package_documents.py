"""The real iag-motor-demo package's documents: Disclosure (at `accepted`), Forms (at `issued`) and SR22
are `prerendered`, each the static PDF its bootstrap resource binds by staticName, delivered byte for byte;
InvoiceDoc is its Velocity invoice template (a bootstrap `documentTemplates` resource), rendered with the
invoice's data as the platform names it (`$data.invoiceNumber`, `data.policyInvoiceSummaries`)."""

from __future__ import annotations

import hashlib
import re
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from tests.api.billing.support import billing, invoices_of_account
from tests.api.documents.support import documents, download, listed, pdf_text
from tests.api.quotes.samples import data_for, element_for
from tests.api.quotes.support import START, advance, create
from tests.api.transactions.real_packages import CASES, issued_policy, with_plugin
from tests.support.api import call, ok
from tests.support.configs import deployed_tenant
from tests.unit.configuration.zips import FIXTURES, directory_files, fixture_zip, zip_files

IAG = FIXTURES / "iag-motor-demo"
STATIC_DOCUMENTS = IAG / "bootstrap" / "resources" / "resourceFiles" / "staticDocuments"
INVOICE_TEMPLATE = "bootstrap/resources/resourceFiles/documentTemplates/invoiceDoc_v1.velocity"


def render(api: Any, token: str, tenant: str, body: dict[str, str] | None, **query: str) -> Any:
    return call(api, "POST", documents(tenant, f"/render?{urlencode(query)}"), token, body)


def issued_quote(api: Any, token: str, tenant: str) -> dict[str, Any]:
    model = ok(call(api, "GET", f"/config/{tenant}/deployments/datamodel?resolve=true", token))
    definition = model["products"]["PersonalAuto"]
    account = ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts",
            token,
            {"type": "MemberAccount", "data": data_for(model, model["accounts"]["MemberAccount"].get("data") or {})},
        )
    )
    tree = element_for(model, "PersonalAuto", definition)
    quote = create(
        api,
        token,
        tenant,
        {
            "productName": "PersonalAuto",
            "accountLocator": account["locator"],
            "startTime": START,
            "data": tree["data"],
            "coverageTerms": tree["coverageTerms"],
            "elements": tree["elements"],
            "static": data_for(model, definition.get("staticData") or {}),
        },
    )
    issued = ok(advance(api, token, tenant, quote["locator"], "issue"))
    assert issued["quoteState"] == "issued", issued.get("validationResult")
    return issued


def test_the_prerendered_documents_are_the_packages_pdfs_byte_for_byte(api, admin_token, jobs):
    tenant = deployed_tenant(api, admin_token, fixture_zip("iag-motor-demo"))
    quote = issued_quote(api, admin_token, tenant)
    jobs.drain()

    generated = sorted(listed(api, admin_token, tenant, "quote", quote["locator"]), key=lambda d: d["staticName"])
    assert [(d["staticName"], d["name"], d["documentFormat"], d["documentInstanceState"]) for d in generated] == [
        ("Disclosure", "Regulatory Disclosure", "pdf", "ready"),
        ("Forms", "Policy Forms Packet", "pdf", "ready"),
    ]
    for document, file in zip(generated, ("Disclosure01.pdf", "Forms01.pdf"), strict=True):
        package_file = (STATIC_DOCUMENTS / file).read_bytes()
        delivered = download(api, admin_token, tenant, document["locator"])
        assert delivered.body == package_file
        assert delivered.headers["Content-Type"] == "application/pdf"
        assert (document["size"], document["checksum"]) == (
            len(package_file),
            "sha256:" + hashlib.sha256(package_file).hexdigest(),
        )
        source = api.http.get(
            documents(tenant, f"/{document['locator']}/source"), headers={"Authorization": f"Bearer {admin_token}"}
        )
        assert (source.status_code, source.body) == (200, package_file)
    assert all(d["policyLocator"] == quote["policyLocator"] for d in generated)

    sr22 = render(
        api, admin_token, tenant, None, referenceType="quote", referenceLocator=quote["locator"], documentConfig="SR22"
    )
    assert (sr22.status_code, sr22.body) == (200, (STATIC_DOCUMENTS / "SR2201.pdf").read_bytes())


def invoice_tenant(api: Any, token: str, template: str | None = None) -> str:
    """The iag package with a rating plugin (its own plugins are Java) and its invoice template as given, on
    a test clock tenant."""
    files = directory_files(IAG)
    if template is not None:
        files[INVOICE_TEMPLATE] = template.encode()
    return deployed_tenant(api, token, with_plugin(zip_files(files)), test_clock=True)


def invoice_and_document(api: Any, token: str, tenant: str, jobs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    policy = issued_policy(api, token, tenant, CASES["iag-motor-demo"])
    ok(call(api, "POST", f"/clock/{tenant}/advance", token, {"to": "2026-02-02T00:00:00Z"}))  # past its generation
    jobs.drain()
    [listed_invoice] = invoices_of_account(api, token, tenant, policy["accountLocator"])
    invoice = ok(call(api, "GET", billing(tenant, f"/invoices/{listed_invoice['locator']}"), token))
    return invoice, ok(call(api, "GET", documents(tenant, f"/invoices/{invoice['locator']}"), token))


def test_the_invoice_template_renders_the_invoice_number_dates_and_totals(api, admin_token, jobs):
    tenant = invoice_tenant(api, admin_token)
    invoice, document = invoice_and_document(api, admin_token, tenant, jobs)

    assert (document["staticName"], document["documentInstanceState"]) == ("InvoiceDoc", "ready")
    text = pdf_text(download(api, admin_token, tenant, document["locator"]).body)
    total, remaining = Decimal(str(invoice["totalAmount"])), Decimal(str(invoice["totalRemainingAmount"]))
    assert invoice["invoiceNumber"] and invoice["invoiceNumber"] in text
    assert f"{invoice['startTime'][:10]} through {invoice['endTime'][:10]}" in text
    assert f"${total:.2f}" in text and f"${remaining:.2f}" in text and total > 0
    assert "${" not in text and "$data" not in text
    [summary] = document["renderingData"]["policyInvoiceSummaries"]
    assert summary["policyLocator"] == invoice["invoiceItems"][0]["policyLocator"]
    assert sorted((i["chargeType"], i["amount"]) for i in summary["invoiceItemSummaries"]) == sorted(
        (i["chargeType"], i["amount"]) for i in invoice["invoiceItems"]
    )


def test_the_invoice_templates_item_loop_uncommented_shows_one_line_per_item(api, admin_token, jobs):
    template = (IAG / INVOICE_TEMPLATE).read_text()
    uncommented = template.replace("#*            #foreach", "#foreach").replace("#end*#", "#end")
    assert uncommented.count("#foreach") == 1 and "#*" not in uncommented
    tenant = invoice_tenant(
        api,
        admin_token,
        uncommented.replace("${invoiceItemSummary.chargeType}", "Item: ${invoiceItemSummary.chargeType}"),
    )
    invoice, document = invoice_and_document(api, admin_token, tenant, jobs)

    text = pdf_text(download(api, admin_token, tenant, document["locator"]).body)
    lines = re.findall(r"Item: (\S+)", text)
    assert sorted(lines) == sorted(item["chargeType"] for item in invoice["invoiceItems"]) and len(lines) >= 2
    for item in invoice["invoiceItems"]:
        # billing leaves invoice items without an elementType today: the template shows the reference then
        assert f"{item.get('elementType', '${invoiceItemSummary.elementType}')} - {item['chargeCategory']}" in text
        assert f"${Decimal(str(item['amount'])):.2f}" in text


def test_the_invoice_renders_ad_hoc(api, admin_token, jobs):
    tenant = invoice_tenant(api, admin_token)
    invoice, _ = invoice_and_document(api, admin_token, tenant, jobs)
    template = (
        "Invoice $data.invoiceNumber of {{ x }} #foreach($s in $data.policyInvoiceSummaries)"
        "#foreach($i in $s.invoiceItemSummaries)[$i.chargeType $i.amount]#end#end"
    )

    reference = {"referenceType": "invoice", "referenceLocator": invoice["locator"]}
    answer = render(api, admin_token, tenant, {"template": template}, **reference, templateFormat="velocity")
    assert answer.status_code == 200, answer.body
    rendered = answer.body.decode()
    items = "".join(sorted(f"[{i['chargeType']} {Decimal(str(i['amount'])):.2f}]" for i in invoice["invoiceItems"]))
    assert rendered.startswith(f"Invoice {invoice['invoiceNumber']} of {{{{ x }}}} ")
    assert "".join(sorted(re.findall(r"\[[^\]]+\]", rendered))) == items

    pdf = render(api, admin_token, tenant, None, **reference, documentConfig="InvoiceDoc")
    assert pdf.headers["Content-Type"] == "application/pdf"
    assert invoice["invoiceNumber"] in pdf_text(pdf.body)
