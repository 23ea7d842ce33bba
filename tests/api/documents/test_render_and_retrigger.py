"""A template that fails lands its document in an error state (the quote's request succeeds) and its job
is retriggered after a redeploy that fixes it; ad-hoc renders (Liquid and Velocity) store nothing."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from chalicelib.documents import rendering, service
from chalicelib.plugins import tenant_code
from chalicelib.settings import settings
from tests.api.documents.support import (
    QUOTATION,
    documents,
    documents_model,
    documents_tenant,
    download,
    events_of_type,
    listed,
    pdf_text,
    redeploy,
)
from tests.api.quotes.support import advance, auto, create, new_account
from tests.api.transactions.support import UNKNOWN
from tests.support.api import assert_error, call, ok

BROKEN = {
    "Broken": {
        "format": "text",
        "rendering": "dynamic",
        "scope": "policy",
        "trigger": "priced",
        "selectionTimeBasis": "currentTime",
    }
}


@pytest.fixture
def short_renders(monkeypatch):
    """Renders stopped after 4 s: the local sandbox's limits, and on the lambda runner the tenant function's
    timeout (its configuration, which the local invoker enforces)."""
    service.use_limits(rendering.Limits(timeout_seconds=4, cpu_seconds=3, max_output_bytes=1024 * 1024))
    monkeypatch.setattr(tenant_code, "TIMEOUT_SECONDS", 4)
    yield
    service.use_limits(None)


def test_a_failing_template_is_retriggered_after_a_redeploy_fixes_it(api, admin_token, jobs):
    model = documents_model(**BROKEN)
    templates = {"documents/Broken/template.liquid": "Dear {{ account.data.firstName }{% if %}"}
    tenant = documents_tenant(api, admin_token, model, templates)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    priced = ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    assert priced["quoteState"] == "priced"
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote["locator"])}
    assert by_name["Quotation"]["documentInstanceState"] == "ready"
    broken = by_name["Broken"]
    assert broken["documentInstanceState"] == "renderError"
    assert "LiquidSyntaxError" in broken["processingErrors"]
    assert broken["renderingData"]["account"]["data"]["firstName"] == "Ada"  # the data was ready
    assert_error(
        call(api, "GET", documents(tenant, f"/{broken['locator']}/document"), admin_token), 409, "document.not_ready"
    )
    assert [e["data"]["documentLocator"] for e in events_of_type(api, admin_token, tenant, "document.failed")] == [
        broken["locator"]
    ]
    [summary] = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/list"), admin_token))["items"]
    assert summary["status"] == "failed"
    job = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/{summary['locator']}"), admin_token))
    assert job["processingErrors"].startswith("Broken: LiquidSyntaxError")
    assert sorted((d["staticName"], d["documentInstanceState"]) for d in job["documents"]) == [
        ("Broken", "renderError"),
        ("Quotation", "ready"),
    ]

    redeploy(
        api,
        admin_token,
        tenant,
        model,
        {
            "documents/Quotation/template.liquid": QUOTATION,
            "documents/Broken/template.liquid": "Dear {{ account.data.firstName }}",
        },
    )
    retriggered = ok(
        call(
            api, "POST", documents(tenant, f"/quote/{quote['locator']}/jobs/{summary['locator']}/trigger"), admin_token
        )
    )
    assert (retriggered["locator"], retriggered["status"]) == (summary["locator"], "running")
    jobs.drain()

    fixed = ok(call(api, "GET", documents(tenant, f"/{broken['locator']}"), admin_token))
    assert (fixed["documentInstanceState"], fixed.get("processingErrors")) == ("ready", None)
    assert download(api, admin_token, tenant, broken["locator"]).body == b"Dear Ada"
    job = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/{summary['locator']}"), admin_token))
    assert (job["status"], job["processingErrors"]) == ("finished", "")
    assert_error(
        call(
            api, "POST", documents(tenant, f"/quote/{quote['locator']}/jobs/{summary['locator']}/trigger"), admin_token
        ),
        409,
        "documentsJob.not_failed",
    )
    assert_error(
        call(
            api,
            "POST",
            documents(tenant, f"/transaction/{quote['locator']}/jobs/{summary['locator']}/trigger"),
            admin_token,
        ),
        404,
        "documentsJob.not_found",
    )
    # nothing timed out: every job of the quote is done
    assert ok(call(api, "POST", documents(tenant, f"/quote/{quote['locator']}/trigger"), admin_token)) == []


def test_job_lists_of_unknown_records_are_empty(api, admin_token):
    tenant = documents_tenant(api, admin_token)
    for kind in ("quote", "transaction", "segment"):
        listed_jobs = ok(call(api, "GET", documents(tenant, f"/{kind}/{UNKNOWN}/jobs/list"), admin_token))
        assert listed_jobs == {"listCompleted": True, "items": []}
        assert_error(
            call(api, "GET", documents(tenant, f"/{kind}/{UNKNOWN}/list"), admin_token), 404, f"{kind}.not_found"
        )


def render(api, token, tenant, body, **query):
    return call(api, "POST", documents(tenant, f"/render?{urlencode(query)}"), token, body)


def test_ad_hoc_renders_answer_the_rendered_text_and_store_nothing(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    reference = {"referenceType": "quote", "referenceLocator": quote["locator"]}

    liquid = render(
        api,
        admin_token,
        tenant,
        {"template": "<b>{{ account.data.lastName }}</b> {{ nothing }}!"},
        **reference,
        templateFormat="liquid",
    )
    assert liquid.status_code == 200, liquid.body
    assert (liquid.body, liquid.headers["Content-Type"]) == (b"<b>Lovelace</b> !", "text/html; charset=utf-8")
    velocity = render(
        api,
        admin_token,
        tenant,
        {"template": "#set($n = $account.data.firstName)Hello $n"},
        **reference,
        templateFormat="velocity",
    )
    assert velocity.body == b"Hello Ada"
    configured = render(api, admin_token, tenant, None, **reference, documentConfig="Schedule")
    assert configured.headers["Content-Type"] == "application/pdf"
    assert "Schedule: Ada Lovelace" in pdf_text(configured.body)

    assert_error(
        render(api, admin_token, tenant, {"template": "{% for %}"}, **reference), 400, "document.render_failed"
    )
    assert_error(render(api, admin_token, tenant, None, **reference), 400, "document.template_missing")
    assert_error(
        render(api, admin_token, tenant, None, **reference, documentConfig="Nothing"), 404, "configuration.not_found"
    )
    assert_error(
        render(api, admin_token, tenant, {"template": "x"}, referenceType="quote", referenceLocator=UNKNOWN),
        404,
        "quote.not_found",
    )
    assert listed(api, admin_token, tenant, "quote", quote["locator"]) == []
    assert jobs.sent == []


def test_a_template_that_loops_forever_lands_in_render_error(api, admin_token, jobs, short_renders):
    model = documents_model(**BROKEN)
    templates = {"documents/Broken/template.liquid": "{% for i in (1..1000000000) %}{{ i }}{% endfor %}"}
    tenant = documents_tenant(api, admin_token, model, templates)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote["locator"])}
    assert by_name["Broken"]["documentInstanceState"] == "renderError"
    assert by_name["Quotation"]["documentInstanceState"] == "ready"


def test_a_job_whose_worker_went_away_is_retriggered_once_its_lease_ran_out(api, admin_token, jobs, clock):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))

    def dying(*_: object, **__: object) -> rendering.Rendered:
        raise RuntimeError("the worker was killed")

    service.use_renderer(dying)
    try:
        with pytest.raises(RuntimeError):
            jobs.drain()
    finally:
        service.use_renderer(None)
    jobs.messages.clear()  # its message is lost with the worker
    [stuck] = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/list"), admin_token))["items"]
    assert stuck["status"] == "running"
    assert ok(call(api, "POST", documents(tenant, f"/quote/{quote['locator']}/trigger"), admin_token)) == []

    clock.advance(seconds=settings().job_lease_seconds + 1)
    retriggered = ok(call(api, "POST", documents(tenant, f"/quote/{quote['locator']}/trigger"), admin_token))
    assert [(job["locator"], job["status"]) for job in retriggered] == [(stuck["locator"], "running")]
    jobs.drain()

    [document] = listed(api, admin_token, tenant, "quote", quote["locator"])
    assert document["documentInstanceState"] == "ready"
    assert b"Quotation for Ada Lovelace" in download(api, admin_token, tenant, document["locator"]).body
    [done] = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/list"), admin_token))["items"]
    assert done["status"] == "finished"


def test_template_snippets_of_the_configuration_are_available_to_templates(api, admin_token, jobs):
    model = documents_model(
        Letter={
            "format": "text",
            "rendering": "dynamic",
            "scope": "policy",
            "trigger": "priced",
            "selectionTimeBasis": "currentTime",
            "templateSnippets": ["Greeting", "Signature"],
        }
    )
    model["templateSnippets"] = {
        "Greeting": {"selectionTimeBasis": "currentTime"},
        "Signature": {"selectionTimeBasis": "currentTime"},
    }
    tenant = documents_tenant(
        api,
        admin_token,
        model,
        {
            "documents/Letter/template.vm": '#parse("Greeting")We insure your car.#parse("Signature")',
            "templateSnippets/Greeting/template.vm": "Dear $account.data.firstName, ",
            "templateSnippets/Signature/template.vm": " Yours, the insurer",
        },
    )
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    jobs.drain()

    letter = next(d for d in listed(api, admin_token, tenant, "quote", quote["locator"]) if d["staticName"] == "Letter")
    assert letter["documentInstanceState"] == "ready", letter.get("processingErrors")
    assert (
        download(api, admin_token, tenant, letter["locator"]).body
        == b"Dear Ada, We insure your car. Yours, the insurer"
    )
    ad_hoc = render(
        api,
        admin_token,
        tenant,
        None,
        referenceType="quote",
        referenceLocator=quote["locator"],
        documentConfig="Letter",
    )
    assert (ad_hoc.body, ad_hoc.headers["Content-Type"]) == (
        b"Dear Ada, We insure your car. Yours, the insurer",
        "text/plain; charset=utf-8",
    )


def test_a_document_without_its_template_or_file_is_a_render_error_naming_what_is_missing(api, admin_token, jobs):
    model = documents_model(
        Letter={
            "format": "text",
            "rendering": "dynamic",
            "scope": "policy",
            "trigger": "priced",
            "selectionTimeBasis": "currentTime",
        },
        Leaflet={
            "format": "pdf",
            "rendering": "prerendered",
            "scope": "policy",
            "trigger": "priced",
            "selectionTimeBasis": "currentTime",
        },
    )
    tenant = documents_tenant(api, admin_token, model)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    jobs.drain()

    by_name = {d["staticName"]: d for d in listed(api, admin_token, tenant, "quote", quote["locator"])}
    assert {name: d["documentInstanceState"] for name, d in by_name.items()} == {
        "Letter": "renderError",
        "Leaflet": "renderError",
        "Quotation": "ready",
    }
    assert "documents/Letter/template.liquid" in by_name["Letter"]["processingErrors"]
    assert "staticDocuments/ whose staticName is Leaflet" in by_name["Leaflet"]["processingErrors"]
    [job] = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/list"), admin_token))["items"]
    assert job["status"] == "failed"
    reference = {"referenceType": "quote", "referenceLocator": quote["locator"]}
    for name, missing in (("Letter", "documents/Letter/template.liquid"), ("Leaflet", "staticDocuments/")):
        error = assert_error(
            render(api, admin_token, tenant, None, **reference, documentConfig=name), 400, "document.template_missing"
        )
        assert missing in error["message"]


def test_templates_written_for_the_platform_read_the_rendering_data_as_data(api, admin_token, jobs):
    model = documents_model(**BROKEN)
    template = "{{ data.productName }} {{ productName }} {{ data.account.data.firstName }}"
    tenant = documents_tenant(api, admin_token, model, {"documents/Broken/template.liquid": template})
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    jobs.drain()

    letter = next(d for d in listed(api, admin_token, tenant, "quote", quote["locator"]) if d["staticName"] == "Broken")
    assert download(api, admin_token, tenant, letter["locator"]).body == b"PersonalAuto PersonalAuto Ada"
    velocity = render(
        api,
        admin_token,
        tenant,
        {"template": "Summary for Product $data.productName, $productName"},
        referenceType="quote",
        referenceLocator=quote["locator"],
        templateFormat="velocity",
    )
    assert velocity.body == b"Summary for Product PersonalAuto, PersonalAuto"


def test_retriggering_timed_out_jobs_of_a_record_this_tenant_lacks_answers_404(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    other = documents_tenant(api, admin_token)
    quote = create(api, admin_token, other, auto(new_account(api, admin_token, other)))
    ok(advance(api, admin_token, other, quote["locator"], "price"))

    for kind in ("quote", "transaction", "segment"):
        for locator in (UNKNOWN, "not-a-locator", quote["locator"]):
            assert_error(
                call(api, "POST", documents(tenant, f"/{kind}/{locator}/trigger"), admin_token),
                404,
                f"{kind}.not_found",
            )
    assert ok(call(api, "POST", documents(other, f"/quote/{quote['locator']}/trigger"), admin_token)) == []
