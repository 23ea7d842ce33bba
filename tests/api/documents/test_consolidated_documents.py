"""A consolidated document (`consolidatedDocuments`) joins its parts once the job made them all ready: PDF
pages concatenated, HTML bodies joined; parts of different formats land it in conversionError."""

from __future__ import annotations

import io

from pypdf import PdfReader

from tests.api.documents.support import (
    documents,
    documents_model,
    documents_tenant,
    download,
    events_of_type,
    listed,
    pdf_text,
)
from tests.api.quotes.support import advance, auto, create, new_account
from tests.support.api import call, ok

PRICED_PDF = {
    "format": "pdf",
    "rendering": "dynamic",
    "scope": "policy",
    "trigger": "priced",
    "selectionTimeBasis": "currentTime",
}
PRICED_HTML = {**PRICED_PDF, "format": "html"}
TEMPLATES = {
    "documents/Cover/template.liquid": "<html><body><p>Cover for {{ account.data.firstName }}</p></body></html>",
    "documents/Terms/template.liquid": "<html><body><p>Terms page</p></body></html>",
    "documents/Letter/template.liquid": "<html><head></head><body><p>Dear {{ account.data.lastName }}"
    "</p></body></html>",
}


def priced_documents(api, token, model) -> tuple[str, str, dict[str, dict]]:
    tenant = documents_tenant(api, token, model, TEMPLATES)
    account = new_account(api, token, tenant)
    quote = create(api, token, tenant, auto(account))
    assert ok(advance(api, token, tenant, quote["locator"], "price"))["quoteState"] == "priced"
    return tenant, quote["locator"], {d["staticName"]: d for d in listed(api, token, tenant, "quote", quote["locator"])}


def test_pdf_parts_are_joined_page_by_page_and_name_their_consolidation(api, admin_token, jobs):
    model = documents_model(Cover=PRICED_PDF, Terms=PRICED_PDF)
    model["consolidatedDocuments"] = {"Pack": {"consolidatedDocuments": ["Cover", "Terms"], "displayName": "Pack"}}
    tenant, quote, _ = priced_documents(api, admin_token, model)
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote)}
    assert sorted(by_name) == ["Cover", "Pack", "Quotation", "Terms"]
    pack, cover, terms = by_name["Pack"], by_name["Cover"], by_name["Terms"]
    assert (pack["documentInstanceState"], pack["documentFormat"], pack["name"]) == ("ready", "pdf", "Pack")
    assert pack["consolidatedFrom"] == [cover["locator"], terms["locator"]]
    assert cover["consolidatedTo"] == terms["consolidatedTo"] == [pack["locator"]]
    assert by_name["Quotation"]["consolidatedTo"] == []
    joined = download(api, admin_token, tenant, pack["locator"])
    assert joined.headers["Content-Type"] == "application/pdf"
    pages = PdfReader(io.BytesIO(joined.body)).pages
    parts = [PdfReader(io.BytesIO(download(api, admin_token, tenant, d["locator"]).body)).pages for d in (cover, terms)]
    assert len(pages) == len(parts[0]) + len(parts[1]) == 2
    text = pdf_text(joined.body)
    assert text.index("Cover for Ada") < text.index("Terms page")
    assert pack["locator"] in [
        e["data"]["documentLocator"] for e in events_of_type(api, admin_token, tenant, "document.ready")
    ]

    jobs.drain()  # nothing left to do: no second consolidation
    assert len(listed(api, admin_token, tenant, "quote", quote)) == 4


def test_html_parts_join_their_bodies_and_mixed_formats_fail_conversion(api, admin_token, jobs):
    model = documents_model(Letter=PRICED_HTML, Cover=PRICED_PDF)
    model["consolidatedDocuments"] = {
        "Welcome": {"consolidatedDocuments": ["Quotation", "Letter"]},
        "Mixed": {"consolidatedDocuments": ["Letter", "Cover"]},
    }
    tenant, quote, _ = priced_documents(api, admin_token, model)
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote)}
    welcome, mixed = by_name["Welcome"], by_name["Mixed"]
    assert (welcome["documentInstanceState"], welcome["documentFormat"]) == ("ready", "html")
    body = download(api, admin_token, tenant, welcome["locator"]).body.decode()
    assert body.startswith("<html><body><h1>Quotation for Ada Lovelace</h1>")
    assert body.endswith("<p>Dear Lovelace</p></body></html>")
    assert body.count("<body>") == 1
    assert mixed["documentInstanceState"] == "conversionError"
    assert mixed["processingErrors"] == "parts of different formats cannot be joined: html, pdf"
    assert by_name["Letter"]["consolidatedTo"] == [welcome["locator"]]
    assert [e["data"]["documentLocator"] for e in events_of_type(api, admin_token, tenant, "document.failed")] == [
        mixed["locator"]
    ]
    [job] = ok(call(api, "GET", documents(tenant, f"/quote/{quote}/jobs/list"), admin_token))["items"]
    assert job["status"] == "failed"
