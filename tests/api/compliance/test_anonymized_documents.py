"""The documents of an anonymized account through every documents route: each generated one rendered again
from its replaced rendering data (HTML and PDF, a consolidation joined again from its new parts, the copies made
on issue), an attached one's file removed (409 `document.anonymized`) and its name and metadata replaced, a
prerendered one still the package's file (its object is every tenant's policy's, not the account's: another
account's copy stays readable); none of them shows the insured's names, and a second request changes nothing."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from tests.api.compliance.support import (
    EXPIRED,
    PERSONAL,
    anonymize,
    compliance_tenant,
    fetch_jobs,
    insured,
    pay_open_invoices,
)
from tests.api.documents.support import (
    documents,
    documents_model,
    download,
    events_of_type,
    listed,
    multipart,
    pdf_text,
)
from tests.api.quotes.support import advance, auto, create, new_account
from tests.support.api import assert_error, call, ok

PRICED = {"rendering": "dynamic", "scope": "policy", "trigger": "priced", "selectionTimeBasis": "currentTime"}
LEAFLET = b"%PDF-1.4 the insurer's leaflet, the same for everyone"
FILES = {
    "documents/Letter/template.liquid": "<html><body><p>Dear {{ account.data.firstName }} {{ account.data.lastName }}"
    "</p></body></html>",
    "bootstrap/resources/resourceFiles/staticDocuments/Leaflet01.pdf": LEAFLET,
}
ATTACHED_NAME = "Driving licence of Ada Lovelace"


def documents_tenant(api, token):
    model = documents_model(
        Letter={**PRICED, "format": "html"}, Leaflet={**PRICED, "format": "pdf", "rendering": "prerendered"}
    )
    model["consolidatedDocuments"] = {"Welcome": {"consolidatedDocuments": ["Quotation", "Letter"]}}
    model["bootstrap"] = {
        "resources": {"resourceGroups": {}, "resourceInstances": {"Leaflet01": {"staticName": "Leaflet"}}}
    }
    return compliance_tenant(api, token, model, FILES)


def attach(api, token, tenant, quote):
    body, content_type = multipart(b"%PDF-1.4 a scan of Ada Lovelace's licence")
    query = {
        "referenceType": "quote",
        "referenceLocator": quote,
        "name": ATTACHED_NAME,
        "documentFormat": "pdf",
        "metadata": json.dumps({"holder": "Ada Lovelace", "issuedIn": "London", "pages": 2}),
    }
    response = api.http.post(
        documents(tenant, f"/attach?{urlencode(query)}"),
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )
    assert response.status_code == 200, response.body
    return json.loads(response.body)


def every_document(api, token, tenant, quote, transaction):
    return {
        d["locator"]: d
        for d in listed(api, token, tenant, "quote", quote) + listed(api, token, tenant, "transaction", transaction)
    }


def contents(api, token, tenant, document):
    body = download(api, token, tenant, document["locator"]).body
    return pdf_text(body) if document["documentFormat"] == "pdf" else body.decode()


def test_an_anonymized_accounts_documents_are_rendered_again_without_its_names(api, admin_token, jobs):
    token = admin_token
    tenant = documents_tenant(api, token)
    account = insured(api, token, tenant)
    quote = create(api, token, tenant, auto(account, startTime=EXPIRED))["locator"]
    assert ok(advance(api, token, tenant, quote, "price"))["quoteState"] == "priced"
    jobs.drain()
    attached = attach(api, token, tenant, quote)
    policy = ok(advance(api, token, tenant, quote, "issue"))["policyLocator"]
    jobs.drain()
    assert call(api, "POST", documents(tenant, f"/quote/{quote}/copyOnIssue"), token).status_code in (200, 204)
    transaction = ok(call(api, "GET", f"/policy/{tenant}/policies/{policy}", token))["issuedTransactionLocator"]
    pay_open_invoices(api, token, tenant, account)
    # another account's quote delivers the same prerendered file
    other = create(api, token, tenant, auto(new_account(api, token, tenant)))["locator"]
    ok(advance(api, token, tenant, other, "price"))
    jobs.drain()

    before = every_document(api, token, tenant, quote, transaction)
    by_name = {
        (d["referenceType"], d.get("staticName") or d["name"], "copy" if d.get("referenceDocumentLocator") else ""): d
        for d in before.values()
    }
    quote_documents = [(ATTACHED_NAME, ""), ("Leaflet", ""), ("Letter", ""), ("Quotation", "")]
    quote_documents += [("Schedule", ""), ("Welcome", "")]  # the quote's issue triggers the Schedule too
    assert sorted(by_name) == sorted(
        [("quote", *d) for d in quote_documents] + [("transaction", name, "copy") for name, _ in quote_documents]
    )
    assert len(before) == len(by_name) == 12
    assert all(d["documentInstanceState"] == "ready" for d in before.values())
    rendered = {
        locator: contents(api, token, tenant, d)
        for locator, d in before.items()
        if not d["external"] and d.get("staticName") != "Leaflet"
    }
    assert "Ada Lovelace" in rendered[by_name[("quote", "Quotation", "")]["locator"]]
    assert "Dear Ada Lovelace" in rendered[by_name[("quote", "Welcome", "")]["locator"]]
    assert "Vehicle 1HGCM82633A004352" in rendered[by_name[("quote", "Schedule", "")]["locator"]]
    ready_before = len(events_of_type(api, token, tenant, "document.ready"))

    [started] = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
    jobs.drain()
    [job] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert (job["jobStatus"], job["anonymizedReferenceLocators"]) == ("completed", [account])

    after = every_document(api, token, tenant, quote, transaction)
    assert sorted(after) == sorted(before)  # the same documents, none removed
    fetched = {locator: ok(call(api, "GET", documents(tenant, f"/{locator}"), token)) for locator in after}
    shown = json.dumps([after, fetched], default=str)
    assert [text for text in PERSONAL if text in shown] == []
    regenerated = list(rendered)
    assert len(regenerated) == 8  # the quote's 4 and their copies on the policy's issuance
    for locator in regenerated:
        document = after[locator]
        assert (document["documentInstanceState"], document.get("processingErrors")) == ("ready", None), document
        text = contents(api, token, tenant, document)
        assert [name for name in PERSONAL if name in text] == [] and "ANONYMIZED" in text, text
        assert text != rendered[locator]
    quotation, welcome = (after[by_name[("quote", name, "")]["locator"]] for name in ("Quotation", "Welcome"))
    assert "Quotation for ANONYMIZED ANONYMIZED" in contents(api, token, tenant, quotation)
    joined = contents(api, token, tenant, welcome)
    assert joined.index("Quotation for ANONYMIZED") < joined.index("Dear ANONYMIZED ANONYMIZED")
    assert "Schedule: ANONYMIZED ANONYMIZED" in contents(
        api, token, tenant, after[by_name[("quote", "Schedule", "")]["locator"]]
    )
    assert len(events_of_type(api, token, tenant, "document.ready")) == ready_before + len(regenerated)

    # the attached file and its copy: removed, their name and metadata replaced
    for key in (("quote", ATTACHED_NAME, ""), ("transaction", ATTACHED_NAME, "copy")):
        document = after[by_name[key]["locator"]]
        # "Ada Lovelace" is a personal value itself (the payment's cardHolder): replaced whole
        assert (document["name"], document["metadata"]) == (
            "Driving licence of ANONYMIZED",
            {"holder": "ANONYMIZED", "issuedIn": "ANONYMIZED", "pages": 2},
        )
        for route in ("document", "source"):
            assert_error(
                api.http.get(
                    documents(tenant, f"/{document['locator']}/{route}"), headers={"Authorization": f"Bearer {token}"}
                ),
                409,
                "document.anonymized",
            )
    assert attached["locator"] == by_name[("quote", ATTACHED_NAME, "")]["locator"]
    # the prerendered file is the package's, nobody's data: kept, and the other account's still reads it
    for key in (("quote", "Leaflet", ""), ("transaction", "Leaflet", "copy")):
        assert download(api, token, tenant, after[by_name[key]["locator"]]["locator"]).body == LEAFLET
    [leaflet] = [d for d in listed(api, token, tenant, "quote", other) if d.get("staticName") == "Leaflet"]
    assert download(api, token, tenant, leaflet["locator"]).body == LEAFLET

    # a second request answers the job that did it and renders nothing again
    [again] = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
    jobs.drain()
    assert (again["jobLocator"], again["fromCurrentRequest"]) == (started["jobLocator"], False)
    assert every_document(api, token, tenant, quote, transaction) == after
    assert len(events_of_type(api, token, tenant, "document.ready")) == ready_before + len(regenerated)
