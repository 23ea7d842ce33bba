"""External documents: attached (multipart, form key `document`, or the raw body), replaced, deleted;
the policy rule for transactionLocator/segmentLocator; copy on issue."""

from __future__ import annotations

from urllib.parse import urlencode

from tests.api.documents.support import documents, documents_model, documents_tenant, download, listed, multipart
from tests.api.quotes.support import advance, auto, create, new_account
from tests.api.transactions.support import UNKNOWN
from tests.support.api import assert_error, call, event_types, ok

PDF = b"%PDF-1.4 an attached declaration"


def attach(api, token, tenant, content: bytes | None, **query):
    """`content` in the part `document`; None: a multipart body whose only part is named `file`."""
    body, content_type = multipart(content) if content is not None else multipart(b"data", part="file")
    return api.http.post(
        documents(tenant, f"/attach?{urlencode(query)}"),
        body=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": content_type},
    )


def no_documents_model():
    model = documents_model()
    model["products"]["PersonalAuto"]["documents"] = []
    return model


def test_a_file_is_attached_to_a_quote_replaced_and_deleted(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token, no_documents_model())
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))

    response = attach(
        api,
        admin_token,
        tenant,
        PDF,
        referenceType="quote",
        referenceLocator=quote["locator"],
        name="Signed proposal",
        documentFormat="pdf",
        category="proposal",
        metadata='{"signedBy": "Ada"}',
        copyOnIssuance="true",
    )
    attached = ok(response)
    assert (attached["external"], attached["documentInstanceState"], attached["documentFormat"]) == (
        True,
        "ready",
        "pdf",
    )
    assert (attached["name"], attached["category"], attached["metadata"]) == (
        "Signed proposal",
        "proposal",
        {"signedBy": "Ada"},
    )
    assert attached["size"] == len(PDF)
    assert event_types(api, admin_token, tenant, response) == ["document.ready"]
    fetched = download(api, admin_token, tenant, attached["locator"])
    assert (fetched.body, fetched.headers["Content-Type"]) == (PDF, "application/pdf")
    assert [d["locator"] for d in listed(api, admin_token, tenant, "quote", quote["locator"])] == [attached["locator"]]

    replaced = ok(
        api.http.patch(
            documents(tenant, f"/{attached['locator']}?category=final"),
            body=multipart(b"%PDF-1.4 the signed one")[0],
            headers={"Authorization": f"Bearer {admin_token}", "Content-Type": multipart(b"")[1]},
        )
    )
    assert (replaced["category"], replaced["metadata"], replaced["size"]) == ("final", {"signedBy": "Ada"}, 23)
    assert download(api, admin_token, tenant, attached["locator"]).body == b"%PDF-1.4 the signed one"

    assert call(api, "DELETE", documents(tenant, f"/{attached['locator']}"), admin_token).status_code == 200
    assert_error(call(api, "GET", documents(tenant, f"/{attached['locator']}"), admin_token), 404, "document.not_found")
    assert listed(api, admin_token, tenant, "quote", quote["locator"]) == []


def test_bad_attachments_are_refused_and_store_nothing(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token, no_documents_model())
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    base = {"referenceType": "policy", "referenceLocator": policy["locator"], "name": "Letter", "documentFormat": "txt"}

    assert_error(attach(api, admin_token, tenant, b"hello", **base), 400, "document.reference_invalid")
    assert_error(
        attach(api, admin_token, tenant, b"hello", **base, transactionLocator=UNKNOWN),
        400,
        "document.reference_invalid",
    )
    assert_error(
        attach(api, admin_token, tenant, None, **base, transactionLocator=policy["issuedTransactionLocator"]),
        400,
        "request.file_missing",
    )
    empty = api.http.post(
        documents(tenant, f"/attach?{urlencode(base)}"),
        body=b"",
        headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/octet-stream"},
    )
    assert_error(empty, 400, "request.file_missing")
    assert_error(
        attach(
            api,
            admin_token,
            tenant,
            b"x",
            referenceType="quote",
            referenceLocator=UNKNOWN,
            name="x",
            documentFormat="txt",
        ),
        404,
        "quote.not_found",
    )
    assert_error(
        attach(
            api,
            admin_token,
            tenant,
            b"x",
            referenceType="quote",
            referenceLocator=quote["locator"],
            name="x",
            documentFormat="exe",
        ),
        400,
        "request.invalid",
    )
    assert listed(api, admin_token, tenant, "transaction", policy["issuedTransactionLocator"]) == []

    letter = ok(
        attach(api, admin_token, tenant, b"Dear Ada", **base, transactionLocator=policy["issuedTransactionLocator"])
    )
    assert (letter["referenceType"], letter["policyLocator"], letter["transactionLocator"]) == (
        "policy",
        policy["locator"],
        policy["issuedTransactionLocator"],
    )
    assert letter["termLocator"] == policy["latestTermLocator"]
    text = download(api, admin_token, tenant, letter["locator"])
    assert (text.body, text.headers["Content-Type"]) == (b"Dear Ada", "text/plain; charset=utf-8")
    by_term = ok(
        call(
            api,
            "GET",
            documents(tenant, f"/policy/{policy['locator']}/term/{letter['termLocator']}/summary"),
            admin_token,
        )
    )["items"]
    assert [d["locator"] for d in by_term] == [letter["locator"]]
    assert_error(
        call(api, "GET", documents(tenant, f"/policy/{UNKNOWN}/term/{letter['termLocator']}/summary"), admin_token),
        404,
        "term.not_found",
    )


def test_generated_documents_are_neither_replaced_nor_deleted(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token)
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    ok(advance(api, admin_token, tenant, quote["locator"], "price"))
    jobs.drain()
    [generated] = listed(api, admin_token, tenant, "quote", quote["locator"])

    assert_error(
        call(api, "DELETE", documents(tenant, f"/{generated['locator']}"), admin_token), 409, "document.not_external"
    )
    assert_error(
        api.http.patch(
            documents(tenant, f"/{generated['locator']}"),
            body=b"x",
            headers={"Authorization": f"Bearer {admin_token}", "Content-Type": "application/octet-stream"},
        ),
        409,
        "document.not_external",
    )
    assert ok(call(api, "GET", documents(tenant, f"/{generated['locator']}"), admin_token))["external"] is False


def test_an_issued_quotes_documents_are_copied_to_its_policy(api, admin_token, jobs):
    tenant = documents_tenant(api, admin_token, no_documents_model())
    account = new_account(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account))
    kept = ok(
        attach(
            api,
            admin_token,
            tenant,
            PDF,
            referenceType="quote",
            referenceLocator=quote["locator"],
            name="Proposal",
            documentFormat="pdf",
        )
    )
    ok(
        attach(
            api,
            admin_token,
            tenant,
            b"notes",
            referenceType="quote",
            referenceLocator=quote["locator"],
            name="Notes",
            documentFormat="txt",
            copyOnIssuance="false",
        )
    )
    assert_error(
        call(api, "POST", documents(tenant, f"/quote/{quote['locator']}/copyOnIssue"), admin_token),
        409,
        "document.quote_not_issued",
    )

    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))
    response = call(
        api, "POST", documents(tenant, f"/quote/{quote['locator']}/copyOnIssue?deleteAllDocuments=true"), admin_token
    )
    assert response.status_code == 200, response.body
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    [copy] = listed(api, admin_token, tenant, "transaction", policy["issuedTransactionLocator"])
    assert (copy["name"], copy["referenceType"], copy["referenceDocumentLocator"], copy["policyLocator"]) == (
        "Proposal",
        "transaction",
        kept["locator"],
        policy["locator"],
    )
    assert download(api, admin_token, tenant, copy["locator"]).body == PDF
    assert listed(api, admin_token, tenant, "quote", quote["locator"]) == []
    assert event_types(api, admin_token, tenant, response) == ["document.copyOnIssue"]
