"""Anonymization through the API: an expired account's personal data replaced wherever the API can show it
(the account and the lists, its quote, its policy and segment, its documents, the event stream) with its
money unchanged; retention first (a policy on risk restricts the account: the preview says why, the job
is suspended having changed nothing); policy, quote and payment references reach those records only (the
account's own data stays); a contact reference reaches the records that list it, kept by retention as they
are; `anonymizedAt` shown and kept by later rewrites; the documents rendered again without her; a replayed
request starts nothing twice; bad input answers 4xx."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal

import pytest

from chalicelib.storage import codec, keys
from tests.api.compliance.support import (
    EXPIRED,
    ON_RISK,
    PERSONAL,
    anonymize,
    compliance,
    compliance_tenant,
    fetch_jobs,
    insured,
    pay_open_invoices,
    preview,
    references_query,
)
from tests.api.documents.support import download, events_of_type, listed, pdf_text
from tests.api.quotes.support import UNKNOWN, advance, auto, create, new_account
from tests.api.transactions.support import segment_of_policy
from tests.builders import new_user
from tests.support.api import assert_error, call, ok
from tests.support.configs import quotes_tenant
from tests.support.stored import items_under


@pytest.fixture
def book(api, admin_token, jobs):
    """Ada's account with a PersonalAuto policy issued from a quote, its documents rendered and its
    installments billed."""
    tenant = compliance_tenant(api, admin_token)
    account = insured(api, admin_token, tenant)
    quote = create(api, admin_token, tenant, auto(account, startTime=EXPIRED))
    issued = ok(advance(api, admin_token, tenant, quote["locator"], "issue"))
    jobs.drain()
    policy = ok(call(api, "GET", f"/policy/{tenant}/policies/{issued['policyLocator']}", admin_token))
    return {"tenant": tenant, "account": account, "quote": quote["locator"], "policy": policy}


def open_invoice_restricts(api, token, tenant, account):
    [shown] = ok(preview(api, token, tenant, {"account": [account]}))[0]["references"]
    return [r["code"] for r in shown["restrictions"]]


def everything_shown(api, token, tenant, book):
    """Every answer of the API that shows the account's records, as one text."""
    account, policy = book["account"], book["policy"]
    shown = [
        ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token)),
        ok(call(api, "GET", f"/policy/{tenant}/accounts/list", token)),
        ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/quotes/list", token)),
        ok(call(api, "GET", f"/policy/{tenant}/quotes/{book['quote']}", token)),
        ok(call(api, "GET", f"/policy/{tenant}/quotes/list", token)),
        ok(call(api, "GET", f"/policy/{tenant}/policies/{policy['locator']}", token)),
        ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}/policies/list", token)),
        ok(call(api, "GET", f"/billing/{tenant}/payments/list?accountLocator={account}", token)),
        segment_of_policy(api, token, tenant, policy),
        listed(api, token, tenant, "quote", book["quote"]),
        listed(api, token, tenant, "transaction", policy["issuedTransactionLocator"]),
    ]
    events = []
    query = "pageSize=100"
    while True:
        page = ok(call(api, "GET", f"/event/{tenant}/events/list?{query}", token))
        if not page["events"]:
            break
        events += page["events"]
        query = f"pageSize=100&pagingToken={page['pagingToken']}"
    return json.dumps(shown + events, default=str)


def stored_documents(tenant, policy):
    """The policy's stored transactions' and segments' attributes stored as documents (storage/codec.py
    STORED_AS_DOCUMENTS: element trees, charges), each as (its wire form's type, its JSON)."""
    found = []
    for item in items_under(keys.policy_partition(tenant, policy)):
        for name in codec.STORED_AS_DOCUMENTS.get(item.get("entity", {}).get("S"), ()):
            if name in item:
                (kind,) = item[name]
                found.append((kind, json.dumps(codec.deserialize({name: item[name]})[name], default=str)))
    return found


def charge_amounts(api, token, tenant, account):
    items = ok(call(api, "GET", f"/billing/{tenant}/accounts/{account}/charges/list?count=100", token))["items"]
    return sorted((item["locator"], Decimal(str(item["amount"]))) for item in items)


def test_an_expired_accounts_personal_data_is_replaced_everywhere_the_api_shows_it(api, admin_token, jobs, book):
    tenant, account, token = book["tenant"], book["account"], admin_token
    before = everything_shown(api, token, tenant, book)
    assert all(text in before for text in PERSONAL)
    charges = charge_amounts(api, token, tenant, account)
    assert charges and sum(amount for _, amount in charges) == Decimal("1225.00")
    assert set(open_invoice_restricts(api, token, tenant, account)) == {"retention.open_invoice"}
    payments = pay_open_invoices(api, token, tenant, account)
    assert payments
    before = everything_shown(api, token, tenant, book)
    assert all(text in before for text in PERSONAL)
    documents = stored_documents(tenant, book["policy"]["locator"])
    assert {kind for kind, _ in documents} == {"B"} and any(t in content for _, content in documents for t in PERSONAL)

    [group] = ok(preview(api, token, tenant, {"account": [account]}))
    [shown] = group["references"]
    assert (group["referenceType"], shown["state"], shown["restrictions"]) == ("account", "allowed", []), shown
    targets = {t["referenceType"]: t for t in shown["targets"]}
    assert targets["policy"]["anonymizableReferenceLocators"] == [book["policy"]["locator"]]
    assert targets["quote"]["anonymizableReferenceLocators"] == [book["quote"]]
    assert all(t["willAnonymize"] for t in shown["targets"])

    [started] = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
    assert (started["jobStatus"], started["fromCurrentRequest"], started["assignedReferenceLocators"]) == (
        "initialized",
        True,
        [account],
    )
    [waiting] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert waiting["jobStatus"] == "initialized"
    [reference] = ok(
        call(api, "GET", compliance(tenant, f"/references?{references_query({'account': [account]})}"), token)
    )
    assert (reference["anonymizationState"], reference["anonymizationJobLocator"]) == ("pending", started["jobLocator"])
    jobs.drain()

    [job] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert (job["jobStatus"], job["anonymizedReferenceLocators"], job["jobDetails"]["policyStatuses"]) == (
        "completed",
        [account],
        ["expired", "cancelled"],
    )
    assert job["jobDetails"]["problematicReferenceLocators"] == {"assigned": [], "children": [], "failed": []}
    after = everything_shown(api, token, tenant, book)
    assert [text for text in PERSONAL if text in after] == []
    anonymized = stored_documents(tenant, book["policy"]["locator"])  # its element trees stay documents
    assert len(anonymized) == len(documents) and {kind for kind, _ in anonymized} == {"B"}
    assert [t for _, content in anonymized for t in PERSONAL if t in content] == [] and anonymized != documents
    shown_account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token))
    assert shown_account["data"]["firstName"] == "ANONYMIZED" and "birthDate" not in shown_account["data"]
    assert shown_account["data"]["address"]["city"] == "ANONYMIZED"
    # a replacement keeps to the field's configured pattern (Address.postcode `[0-9]{5}`, the e-mail's)
    assert (shown_account["data"]["address"]["postcode"], shown_account["data"]["email"]) == (
        "00000",
        "anonymized@anonymized.invalid",
    )
    assert (
        ok(call(api, "PATCH", f"/policy/{tenant}/accounts/{account}", token, {"setData": {}}))["data"]
        == shown_account["data"]
    )  # and validates again
    assert shown_account["anonymizedAt"] is not None
    assert ok(call(api, "GET", f"/policy/{tenant}/policies/{book['policy']['locator']}", token))["anonymizedAt"]
    assert charge_amounts(api, token, tenant, account) == charges  # amounts, states, dates and locators stay
    rendered = listed(api, token, tenant, "quote", book["quote"]) + listed(
        api, token, tenant, "transaction", book["policy"]["issuedTransactionLocator"]
    )
    assert rendered, "the quote's issue rendered documents"
    for document in rendered:  # rendered again without her (tests/api/compliance/test_anonymized_documents.py)
        assert document["documentInstanceState"] == "ready"
        content = download(api, token, tenant, document["locator"]).body
        text = pdf_text(content) if document["documentFormat"] == "pdf" else content.decode()
        assert "ANONYMIZED" in text and [t for t in PERSONAL if t in text] == [], text
    assert [e["data"] for e in events_of_type(api, token, tenant, "policy.account.anonymize")] == [
        {"accountLocator": account}
    ]
    assert [e["data"] for e in events_of_type(api, token, tenant, "policy.anonymize")] == [
        {"policyLocator": book["policy"]["locator"]}
    ]
    [done] = ok(call(api, "GET", compliance(tenant, f"/references?{references_query({'account': [account]})}"), token))
    assert (done["anonymizationState"], done["anonymizedAt"] is not None) == ("anonymized", True)

    # idempotent: the same request answers the job that did it and starts nothing; a rerun changes nothing
    sent = len(jobs.sent)
    [again] = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
    assert (again["jobLocator"], again["jobStatus"], again["fromCurrentRequest"]) == (
        started["jobLocator"],
        "completed",
        False,
    )
    assert len(jobs.sent) == sent
    [previewed] = ok(preview(api, token, tenant, {"account": [account]}))[0]["references"]
    assert previewed["state"] == "anonymized"
    assert everything_shown(api, token, tenant, book).count("policy.account.anonymize") == 1


def test_a_policy_on_risk_restricts_the_account_and_its_job_is_suspended_changing_nothing(
    api, admin_token, jobs, ddb_calls
):
    tenant, token = quotes_tenant(api, admin_token), admin_token
    account = new_account(api, token, tenant)
    quote = create(api, token, tenant, auto(account, startTime=ON_RISK))
    policy = ok(advance(api, token, tenant, quote["locator"], "issue"))["policyLocator"]
    jobs.drain()

    ddb_calls.clear()
    [group] = ok(preview(api, token, tenant, {"account": [account]}))
    # one Query per list (policies, quotes, payments, open invoices, delinquencies, credit balances), batch reads
    # for the rest (the caller, the tenant, the account, the references): no Scan, no read per record
    assert "Scan" not in ddb_calls and ddb_calls.count("GetItem") == 0 and len(ddb_calls) <= 10, ddb_calls
    [shown] = group["references"]
    assert shown["state"] == "restricted"
    reasons = {r["code"]: r for r in shown["restrictions"]}
    assert set(reasons) == {"retention.policy_on_risk", "retention.open_invoice"}  # its first invoice is due
    on_risk = reasons["retention.policy_on_risk"]
    assert (on_risk["referenceType"], on_risk["referenceLocator"]) == ("policy", policy)
    assert "until 2026-06-01" in on_risk["message"]
    targets = {t["referenceType"]: t for t in shown["targets"]}
    assert targets["policy"]["restrictedReferenceLocators"] == [policy]
    assert not any(t["willAnonymize"] for t in shown["targets"])
    # the request's policyStatuses name what qualifies: a pending policy is kept unless it names pending
    later = create(api, token, tenant, auto(new_account(api, token, tenant)))
    ok(advance(api, token, tenant, later["locator"], "issue"))
    jobs.drain()
    [pending] = ok(preview(api, token, tenant, {"account": [later["accountLocator"]]}))[0]["references"]
    assert [r["code"] for r in pending["restrictions"]] == ["retention.policy_status"]
    [allowed] = ok(preview(api, token, tenant, {"account": [later["accountLocator"]]}, policyStatuses=["pending"]))[0][
        "references"
    ]
    assert allowed["state"] == "allowed"

    [started] = ok(anonymize(api, token, tenant, {"references": {"account": [account]}}))
    jobs.drain()
    [job] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert (job["jobStatus"], job["anonymizedReferenceLocators"]) == ("suspended", [])
    assert job["jobDetails"]["problematicReferenceLocators"]["assigned"] == [account]
    assert "retention.policy_on_risk" in job["processingErrors"]
    shown_account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token))
    assert (shown_account["data"]["firstName"], shown_account.get("anonymizedAt")) == ("Ada", None)
    assert events_of_type(api, token, tenant, "policy.account.anonymize") == []
    [reference] = ok(
        call(api, "GET", compliance(tenant, f"/references?{references_query({'account': [account]})}"), token)
    )
    assert reference["anonymizationState"] == "identifiable"


def test_a_policy_reference_anonymizes_that_policy_and_its_quote_only_and_retention_keeps_one_on_risk(
    api, admin_token, jobs, book
):
    tenant, account, token = book["tenant"], book["account"], admin_token
    expired = book["policy"]["locator"]
    running = create(api, token, tenant, auto(account, startTime=ON_RISK))
    on_risk = ok(advance(api, token, tenant, running["locator"], "issue"))["policyLocator"]
    jobs.drain()
    charges = charge_amounts(api, token, tenant, account)
    vin = PERSONAL[-1]

    def shown(policy, quote):
        found = ok(call(api, "GET", f"/policy/{tenant}/policies/{policy}", token))
        return json.dumps(
            [
                found,
                ok(call(api, "GET", f"/policy/{tenant}/quotes/{quote}", token)),
                segment_of_policy(api, token, tenant, found),
            ],
            default=str,
        )

    # the expired policy's open invoices keep it (its account's billing holds that bill it), until paid
    [[held]] = [g["references"] for g in ok(preview(api, token, tenant, {"policy": [expired]}))]
    assert held["state"] == "restricted" and {r["code"] for r in held["restrictions"]} == {"retention.open_invoice"}
    assert {r["referenceType"] for r in held["restrictions"]} == {"invoice"}
    pay_open_invoices(api, token, tenant, account)

    [group] = ok(preview(api, token, tenant, {"policy": [expired, on_risk]}))
    states = {r["referenceLocator"]: r for r in group["references"]}
    assert (states[expired]["state"], states[on_risk]["state"]) == ("allowed", "restricted"), states
    assert [r["code"] for r in states[on_risk]["restrictions"]] == ["retention.policy_on_risk"]
    assert {t["referenceType"]: t["anonymizableReferenceLocators"] for t in states[expired]["targets"]} == {
        "policy": [expired],
        "quote": [book["quote"]],
    }

    # a quote holds its policy's data: the policy's retention keeps it
    [[kept_quote]] = [g["references"] for g in ok(preview(api, token, tenant, {"quote": [running["locator"]]}))]
    assert (kept_quote["state"], [r["code"] for r in kept_quote["restrictions"]]) == (
        "restricted",
        ["retention.policy_on_risk"],
    )

    [started] = ok(anonymize(api, token, tenant, {"references": {"policy": [expired, on_risk]}}))
    assert (started["referenceType"], started["assignedReferenceLocators"]) == ("policy", [expired, on_risk])
    jobs.drain()
    [job] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert (job["jobStatus"], job["anonymizedReferenceLocators"]) == ("suspended", [expired])
    assert job["jobDetails"]["problematicReferenceLocators"]["assigned"] == [on_risk]

    assert vin not in shown(expired, book["quote"])
    anonymized = ok(call(api, "GET", f"/policy/{tenant}/policies/{expired}", token))
    transaction = ok(call(api, "GET", f"/policy/{tenant}/transactions/{anonymized['issuedTransactionLocator']}", token))
    assert all(
        shown_record["anonymizedAt"]
        for shown_record in (
            anonymized,
            ok(call(api, "GET", f"/policy/{tenant}/quotes/{book['quote']}", token)),
            transaction,
            segment_of_policy(api, token, tenant, anonymized),
        )
    )
    assert vin in shown(on_risk, running["locator"])  # retention kept it
    assert ok(call(api, "GET", f"/policy/{tenant}/policies/{on_risk}", token)).get("anonymizedAt") is None
    assert ok(call(api, "GET", f"/policy/{tenant}/quotes/{running['locator']}", token)).get("anonymizedAt") is None
    kept = ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token))  # not referenced: kept
    assert (kept["data"]["firstName"], kept.get("anonymizedAt")) == ("Ada", None)
    assert charge_amounts(api, token, tenant, account) == charges
    assert [e["data"] for e in events_of_type(api, token, tenant, "policy.anonymize")] == [{"policyLocator": expired}]
    assert [e["data"] for e in events_of_type(api, token, tenant, "policy.quote.anonymize")] == [
        {"quoteLocator": book["quote"]}
    ]
    assert events_of_type(api, token, tenant, "policy.account.anonymize") == []
    states = {
        r["referenceLocator"]: r
        for r in ok(
            call(
                api, "GET", compliance(tenant, f"/references?{references_query({'policy': [expired, on_risk]})}"), token
            )
        )
    }
    assert (states[expired]["anonymizationState"], states[on_risk]["anonymizationState"]) == (
        "anonymized",
        "identifiable",
    )


def test_quote_and_payment_references_anonymize_those_records_alone(api, admin_token, jobs, book):
    tenant, account, token = book["tenant"], book["account"], admin_token
    [payment, *_] = pay_open_invoices(api, token, tenant, account)
    draft = create(api, token, tenant, auto(account, startTime=EXPIRED))
    paid = ok(call(api, "GET", f"/billing/{tenant}/payments/{payment}", token))
    assert paid["data"]["cardHolder"] == "Ada Lovelace"

    started = ok(anonymize(api, token, tenant, {"references": {"quote": [draft["locator"]], "payment": [payment]}}))
    assert sorted(job["referenceType"] for job in started) == ["payment", "quote"]
    jobs.drain()
    finished = ok(fetch_jobs(api, token, tenant, *(job["jobLocator"] for job in started)))
    assert [job["jobStatus"] for job in finished] == ["completed", "completed"]

    after = ok(call(api, "GET", f"/billing/{tenant}/payments/{payment}", token))
    assert after["data"]["cardHolder"] == "ANONYMIZED" and after["anonymizedAt"] and not paid.get("anonymizedAt")
    assert (after["amount"], after["paymentState"] if "paymentState" in after else None) == (
        paid["amount"],
        paid.get("paymentState"),
    )

    def quote_text(locator):
        return json.dumps(ok(call(api, "GET", f"/policy/{tenant}/quotes/{locator}", token)), default=str)

    assert PERSONAL[-1] not in quote_text(draft["locator"])
    marked = ok(call(api, "GET", f"/policy/{tenant}/quotes/{draft['locator']}", token))["anonymizedAt"]
    # a later change rewrites the whole quote: it stays marked
    changed = ok(
        call(api, "PATCH", f"/policy/{tenant}/quotes/{draft['locator']}", token, {"setData": {"channel": "phone"}})
    )
    assert (changed["element"]["data"]["channel"], changed["anonymizedAt"]) == ("phone", marked)
    assert PERSONAL[-1] in quote_text(book["quote"])
    assert ok(call(api, "GET", f"/policy/{tenant}/accounts/{account}", token))["data"]["firstName"] == "Ada"
    assert [e["data"] for e in events_of_type(api, token, tenant, "billing.payment.anonymize")] == [
        {"paymentLocator": payment}
    ]
    [again] = ok(anonymize(api, token, tenant, {"references": {"payment": [payment]}}))
    assert (again["jobStatus"], again["fromCurrentRequest"]) == ("completed", False)


def test_bad_input_answers_a_clear_4xx_and_starts_nothing(api, admin_token, jobs):
    tenant, token = quotes_tenant(api, admin_token, plugins=None), admin_token
    account = new_account(api, token, tenant)
    assert_error(anonymize(api, token, tenant, {"references": {"vehicle": [account]}}), 400, "request.invalid")
    assert_error(anonymize(api, token, tenant, {"references": {"account": ["not-a-locator"]}}), 400, "request.invalid")
    assert_error(anonymize(api, token, tenant, {"references": {"account": []}}), 400, "request.invalid")
    assert_error(
        anonymize(api, token, tenant, {"references": {"fnol": [account]}}), 400, "anonymization.unsupported_reference"
    )
    assert_error(anonymize(api, token, tenant, {"references": {"contact": [account]}}), 404, "contact.not_found")
    assert_error(anonymize(api, token, tenant, {"references": {"quote": [account]}}), 404, "quote.not_found")
    assert_error(anonymize(api, token, tenant, {"references": {"policy": [UNKNOWN]}}), 404, "policy.not_found")
    assert_error(anonymize(api, token, tenant, {"references": {"payment": [UNKNOWN]}}), 404, "payment.not_found")
    assert_error(anonymize(api, token, tenant, {"references": {"account": [UNKNOWN]}}), 404, "account.not_found")
    assert_error(
        anonymize(api, token, tenant, {"references": {"account": [account]}, "policyStatuses": ["gone"]}),
        400,
        "request.invalid",
    )
    assert_error(call(api, "GET", compliance(tenant, "/preview?references=%7Bnot-json"), token), 400, "request.invalid")
    assert_error(call(api, "GET", compliance(tenant, "/preview"), token), 400, "request.invalid")
    assert_error(fetch_jobs(api, token, tenant, UNKNOWN), 404, "anonymizationJob.not_found")
    assert_error(call(api, "GET", compliance(tenant, "/jobs"), token), 400, "request.invalid")
    assert [m for m in jobs.sent if m.job_type == "compliance.anonymize"] == []


def test_every_route_checks_the_tenant_and_the_permission(api, admin_token):
    tenant = quotes_tenant(api, admin_token, plugins=None)
    account = new_account(api, admin_token, tenant)
    _, reader = new_user(["compliance.read"], [tenant])
    _, stranger = new_user(["compliance.read", "compliance.write"], [quotes_tenant(api, admin_token, plugins=None)])
    body = {"references": {"account": [account]}}
    assert_error(anonymize(api, reader, tenant, body), 403, "auth.permission_denied")
    assert_error(anonymize(api, stranger, tenant, body), 403, "auth.tenant_forbidden")
    assert_error(preview(api, stranger, tenant, {"account": [account]}), 403, "auth.tenant_forbidden")
    assert ok(preview(api, reader, tenant, {"account": [account]}))[0]["references"][0]["state"] == "allowed"
    _, nobody = new_user(["accounts.read"], [tenant])
    assert_error(preview(api, nobody, tenant, {"account": [account]}), 403, "auth.permission_denied")
    assert_error(
        call(api, "GET", compliance(tenant, f"/references?{references_query({'account': [account]})}"), nobody),
        403,
        "auth.permission_denied",
    )
    assert_error(fetch_jobs(api, nobody, tenant, UNKNOWN), 403, "auth.permission_denied")


def test_a_contact_is_anonymized_in_the_records_that_list_it_once_retention_lets_it(
    api, admin_token, jobs, ddb_calls, ddb_reads
):
    tenant, token = quotes_tenant(api, admin_token), admin_token
    contact, other = "01JVM6MGG0BCY4HV1F8F6P2RWF", "01JVM6MGG0BCY4HV1F8F6P2RWG"
    first, second = new_account(api, token, tenant), new_account(api, token, tenant)
    ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts/{first}/contacts",
            token,
            {"contactLocator": contact, "roles": ["billing"]},
        )
    )
    ok(
        call(
            api,
            "POST",
            f"/policy/{tenant}/accounts/{first}/contacts",
            token,
            {"contactLocator": other, "roles": ["primary"]},
        )
    )
    quote = create(api, token, tenant, auto(second, contacts=[{"contactLocator": contact, "roles": ["broker"]}]))
    assert ok(advance(api, token, tenant, quote["locator"], "accept"))["quoteState"] == "accepted"

    for _ in range(3):  # records that do not list it are not read to find those that do
        create(api, token, tenant, auto(new_account(api, token, tenant)))
    # the second account listed the contact once: its index entry outlives it and the lookup skips it
    listed_once = {"contactLocator": contact, "roles": ["primary"]}
    ok(call(api, "POST", f"/policy/{tenant}/accounts/{second}/contacts", token, listed_once))
    ok(call(api, "DELETE", f"/policy/{tenant}/accounts/{second}/contacts/{contact}", token))

    ddb_calls.clear()
    ddb_reads.clear()
    [shown] = ok(preview(api, token, tenant, {"contact": [contact]}))[0]["references"]
    # the caller (1 BatchGet); the contact's index (1 Query) and the records it names (1 BatchGet); the
    # reference (1 BatchGet); the quote's retention (1 BatchGet) and the account's billing holds (3 Queries): no
    # Scan, no list of the tenant's records, however many there are
    assert Counter(ddb_calls) == {"BatchGetItem": 4, "Query": 4}, ddb_calls
    queried = [read.partition or "" for read in ddb_reads if read.operation == "Query"]
    assert [p for p in queried if "#CONTACT#" in p] == [f"T#{tenant}#CONTACT#{contact}"]
    assert all("#BILL#" in p or "#CONTACT#" in p for p in queried), queried
    [named] = [read.keys for read in ddb_reads if (f"T#{tenant}#ACC#{first}", "#ROOT") in read.keys]
    assert sorted(named) == sorted(
        [
            (f"T#{tenant}#ACC#{first}", "#ROOT"),
            (f"T#{tenant}#ACC#{second}", "#ROOT"),
            (f"T#{tenant}#QTE#{quote['locator']}", "#ROOT"),
        ]
    )
    assert (shown["state"], [r["code"] for r in shown["restrictions"]]) == ("restricted", ["retention.quote_accepted"])
    targets = {t["referenceType"]: t for t in shown["targets"]}
    assert (targets["account"]["anonymizableReferenceLocators"], targets["quote"]["restrictedReferenceLocators"]) == (
        [first],
        [quote["locator"]],
    )
    [kept] = ok(anonymize(api, token, tenant, {"references": {"contact": [contact]}}))
    jobs.drain()
    [suspended] = ok(fetch_jobs(api, token, tenant, kept["jobLocator"]))
    assert suspended["jobStatus"] == "suspended"
    assert contact in json.dumps(ok(call(api, "GET", f"/policy/{tenant}/accounts/{first}", token))["contacts"])

    [started] = ok(anonymize(api, token, tenant, {"references": {"contact": [contact]}, "includeAcceptedQuotes": True}))
    jobs.drain()
    [job] = ok(fetch_jobs(api, token, tenant, started["jobLocator"]))
    assert (job["jobStatus"], job["anonymizedReferenceLocators"]) == ("completed", [contact])
    account = ok(call(api, "GET", f"/policy/{tenant}/accounts/{first}", token))
    accepted = ok(call(api, "GET", f"/policy/{tenant}/quotes/{quote['locator']}", token))
    [(replacement, roles), kept_contact] = [(c["contactLocator"], c["roles"]) for c in account["contacts"]]
    assert (roles, kept_contact) == (["billing"], (other, ["primary"]))  # another contact stays
    assert [(c["contactLocator"], c["roles"]) for c in accepted["contacts"]] == [(replacement, ["broker"])]
    assert replacement != contact and account.get("anonymizedAt") is None  # the account itself is not anonymized
    assert [e["data"] for e in events_of_type(api, token, tenant, "contact.anonymized")] == [
        {"locator": contact, "staticLocator": contact}
    ]
    [again] = ok(anonymize(api, token, tenant, {"references": {"contact": [contact]}}))
    assert (again["jobLocator"], again["fromCurrentRequest"]) == (started["jobLocator"], False)
    [done] = ok(preview(api, token, tenant, {"contact": [contact]}))[0]["references"]
    assert done["state"] == "anonymized"
