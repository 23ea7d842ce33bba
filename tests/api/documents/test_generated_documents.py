"""Configured documents generated at their trigger states through documents jobs, rendered in the
sandbox and downloaded (support.py: Quotation is Liquid HTML at `priced`, Schedule a Velocity PDF at
`issued`)."""

from __future__ import annotations

from tests.api.documents.support import (
    documents,
    documents_tenant,
    download,
    events_of_type,
    listed,
    pdf_text,
)
from tests.api.quotes.support import advance, auto, create, new_account
from tests.api.transactions.support import create as create_transaction
from tests.api.transactions.support import modify, params, segment_of_policy, step
from tests.support.api import call, ok


def test_a_liquid_document_is_generated_when_the_quote_is_priced(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "validate"))
    assert [m.job_type for m in jobs.sent if m.job_type == "documents.generate"] == []

    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    generate = [m for m in jobs.sent if m.job_type == "documents.generate"]
    assert [(m.payload["referenceType"], m.payload["trigger"]) for m in generate] == [("quote", "priced")]
    assert listed(api, admin_token, tenant, "quote", quote["locator"]) == []  # the job records them when it runs
    jobs.drain()

    [document] = listed(api, admin_token, tenant, "quote", quote["locator"])
    assert document["documentInstanceState"] == "ready"
    assert (document["documentFormat"], document["external"], document["name"]) == ("html", False, "Quotation")
    assert document["renderingData"]["account"]["data"]["firstName"] == "Ada"
    response = download(api, admin_token, tenant, document["locator"])
    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
    html = response.body.decode()
    assert "<h1>Quotation for Ada Lovelace</h1>" in html
    assert "premium 1200.00;" in html and "total 1225.00 USD" in html
    assert "[]" in html  # a missing variable renders empty
    assert document["size"] == len(response.body) and document["checksum"].startswith("sha256:")
    suppressed = listed(api, admin_token, tenant, "quote", quote["locator"], "?suppressRenderingData=true")
    assert suppressed[0]["renderingData"] == {}

    [summary] = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/list"), admin_token))["items"]
    assert (summary["referenceType"], summary["status"]) == ("quote", "finished")
    job = ok(call(api, "GET", documents(tenant, f"/quote/{quote['locator']}/jobs/{summary['locator']}"), admin_token))
    assert (job["documentTrigger"], job["processingErrors"]) == ("priced", "")
    assert [(d["staticName"], d["documentInstanceState"]) for d in job["documents"]] == [("Quotation", "ready")]
    source = api.http.get(
        documents(tenant, f"/{document['locator']}/source"), headers={"Authorization": f"Bearer {admin_token}"}
    )
    assert source.status_code == 200 and b"{{ account.data.firstName }}" in source.body
    assert [event["data"] for event in events_of_type(api, admin_token, tenant, "document.ready")] == [
        {"documentLocator": document["locator"], "referenceType": "quote", "referenceLocator": quote["locator"]}
    ]


def test_a_velocity_pdf_is_generated_when_a_transaction_is_issued(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))
    jobs.drain()
    quote_documents = listed(api, admin_token, tenant, "quote", quote["locator"])
    assert sorted((d["staticName"], d["documentInstanceState"]) for d in quote_documents) == [
        ("Quotation", "ready"),
        ("Schedule", "ready"),
    ]
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    vehicle = segment_of_policy(api, admin_token, tenant, policy)["element"]["elements"][0]

    change = ok(
        create_transaction(
            api,
            admin_token,
            tenant,
            policy["locator"],
            "change",
            [params("2026-08-01T04:00:00.000Z"), modify(vehicle["staticLocator"], vin="5YJSA1E26HF000337")],
        )
    )
    ok(step(api, admin_token, tenant, change["locator"], "issue"))
    jobs.drain()

    generated = sorted(
        listed(api, admin_token, tenant, "transaction", change["locator"]), key=lambda d: d["staticName"]
    )  # two jobs of one request: not ordered among themselves
    assert [(d["staticName"], d["documentFormat"], d["documentInstanceState"]) for d in generated] == [
        ("Quotation", "html", "ready"),
        ("Schedule", "pdf", "ready"),
    ]  # priced, then issued, in one request
    document = generated[1]
    assert (document["policyLocator"], document["transactionLocator"]) == (policy["locator"], change["locator"])
    response = download(api, admin_token, tenant, document["locator"])
    assert response.headers["Content-Type"] == "application/pdf" and response.body.startswith(b"%PDF")
    text = pdf_text(response.body)
    assert "Schedule: Ada Lovelace" in text and "Vehicle 5YJSA1E26HF000337" in text and "Category change" in text
    from io import BytesIO

    from pypdf import PdfReader

    box = PdfReader(BytesIO(response.body)).pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (842, 595)  # A4 landscape
    by_segment = listed(api, admin_token, tenant, "segment", document["segmentLocator"])
    assert sorted(d["locator"] for d in by_segment) == sorted(d["locator"] for d in generated)
    summary = ok(
        call(
            api,
            "GET",
            documents(tenant, f"/policy/{policy['locator']}/term/{document['termLocator']}/summary"),
            admin_token,
        )
    )
    assert sorted(d["locator"] for d in summary["items"]) == sorted(d["locator"] for d in generated)
    of_transaction = ok(
        call(api, "GET", documents(tenant, f"/transaction/{change['locator']}/jobs/list"), admin_token)
    )["items"]
    of_segment = ok(
        call(api, "GET", documents(tenant, f"/segment/{document['segmentLocator']}/jobs/list"), admin_token)
    )["items"]
    assert [job["locator"] for job in of_segment] == [job["locator"] for job in of_transaction]
    assert [job["status"] for job in of_segment] == ["finished", "finished"]
    issuing = next(
        m.payload["jobLocator"]
        for m in jobs.sent
        if m.job_type == "documents.generate"
        and m.payload["referenceLocator"] == change["locator"]
        and m.payload["trigger"] == "issued"
    )
    job = ok(call(api, "GET", documents(tenant, f"/segment/{document['segmentLocator']}/jobs/{issuing}"), admin_token))
    assert (job["documentTrigger"], job["transactionLocator"]) == ("issued", change["locator"])
    assert [d["locator"] for d in job["documents"]] == [document["locator"]]
