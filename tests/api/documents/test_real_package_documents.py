"""The real iag-motor-demo package: its documents (Disclosure at `accepted`, Forms at `issued`) are
`prerendered` with static PDFs and no template, so issuing a quote generates the default summary of each."""
from __future__ import annotations

from tests.api.documents.support import download, listed, pdf_text
from tests.api.quotes.samples import data_for, element_for
from tests.api.quotes.support import START, advance, create
from tests.support.api import call, ok
from tests.support.configs import deployed_tenant
from tests.unit.configuration.zips import fixture_zip


def test_the_iag_motor_demo_documents_are_generated_on_issue(api, admin_token, jobs):
    tenant = deployed_tenant(api, admin_token, fixture_zip("iag-motor-demo"))
    model = ok(call(api, "GET", f"/config/{tenant}/deployments/datamodel?resolve=true", admin_token))
    definition = model["products"]["PersonalAuto"]
    account = ok(call(api, "POST", f"/policy/{tenant}/accounts", admin_token, {
        "type": "MemberAccount", "data": data_for(model, model["accounts"]["MemberAccount"].get("data") or {})}))
    tree = element_for(model, "PersonalAuto", definition)
    quote = create(api, admin_token, tenant, {"productName": "PersonalAuto", "accountLocator": account["locator"],
                                               "startTime": START, "data": tree["data"],
                                               "coverageTerms": tree["coverageTerms"], "elements": tree["elements"],
                                               "static": data_for(model, definition.get("staticData") or {})})
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))
    assert issued["quoteState"] == "issued", issued.get("validationResult")
    assert sorted(m.payload["trigger"] for m in jobs.sent if m.job_type == "documents.generate") == [
        "accepted", "issued"]
    jobs.drain()

    # both jobs were enqueued in one millisecond: their drafts' derived locators need not sort in job order
    generated = sorted(listed(api, admin_token, tenant, "quote", quote["locator"]), key=lambda d: d["staticName"])
    assert [(d["staticName"], d["name"], d["documentFormat"], d["documentInstanceState"]) for d in generated] == [
        ("Disclosure", "Regulatory Disclosure", "pdf", "ready"), ("Forms", "Policy Forms Packet", "pdf", "ready")]
    text = pdf_text(download(api, admin_token, tenant, generated[1]["locator"]).body)
    assert "Policy Forms Packet" in text and quote["locator"] in text and "PersonalAuto" in text
    assert all(d["policyLocator"] == issued["policyLocator"] for d in generated)
