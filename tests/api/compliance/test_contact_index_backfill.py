"""The contact index backfill (compliance.contactIndexBackfill): records stored before the contact index (stop
41) have no entries in it, so anonymizing a contact would not find them; the job gives every record of the
tenant that lists contacts its entries, and running it again changes nothing."""

from __future__ import annotations

from datetime import datetime, timezone

from chalicelib.core.context import SYSTEM, CallContext
from chalicelib.runtime import jobs as job_queue
from chalicelib.runtime import wiring
from chalicelib.runtime.job_types import JobType
from chalicelib.storage import contact_index, keys, table
from tests.api.compliance.support import preview
from tests.api.quotes.support import auto, create, new_account
from tests.support.api import assert_error, call, ok
from tests.support.configs import quotes_tenant

CONTACT = "01JVM6MGG0BCY4HV1F8F6P2RWF"


def _backfilled(tenant, jobs):
    ctx = CallContext(principal=SYSTEM, request_id="backfill", now=datetime.now(timezone.utc), tenant_locator=tenant)
    uow = wiring.unit_of_work(ctx)
    job_queue.enqueue(uow, JobType.COMPLIANCE_CONTACT_INDEX_BACKFILL, {})
    uow.commit()
    jobs.drain()
    sent = [m for m in jobs.sent if m.job_type == JobType.COMPLIANCE_CONTACT_INDEX_BACKFILL][-1]
    job = job_queue.get_job(tenant, sent.job_locator)
    assert job is not None and job["status"] == "finished", job
    return job["result"]["entriesWritten"]


def test_records_stored_before_the_index_are_found_by_their_contact_once_backfilled(api, admin_token, jobs):
    tenant, token = quotes_tenant(api, admin_token), admin_token
    account = new_account(api, token, tenant)
    listed = {"contactLocator": CONTACT, "roles": ["billing"]}
    ok(call(api, "POST", f"/policy/{tenant}/accounts/{account}/contacts", token, listed))
    quote = create(api, token, tenant, auto(account, contacts=[{"contactLocator": CONTACT, "roles": ["broker"]}]))
    create(api, token, tenant, auto(new_account(api, token, tenant)))  # one that lists no contact
    holders = sorted(contact_index.holders(tenant, CONTACT))
    assert holders == sorted([("account", account), ("quote", quote["locator"])])
    # as stored before the index: no entry
    table.gateway().batch_delete(
        keys.tenant_scope(tenant), [keys.contact_holder(tenant, CONTACT, kind, locator) for kind, locator in holders]
    )
    # no record is found to list the contact: it cannot be anonymized
    assert_error(preview(api, token, tenant, {"contact": [CONTACT]}), 404, "contact.not_found")

    assert _backfilled(tenant, jobs) == {"account": 1, "quote": 1, "quickQuote": 0, "policy": 0}
    assert sorted(contact_index.holders(tenant, CONTACT)) == holders
    [seen] = ok(preview(api, token, tenant, {"contact": [CONTACT]}))[0]["references"]
    targets = {t["referenceType"]: t for t in seen["targets"]}
    assert targets["account"]["anonymizableReferenceLocators"] == [account]

    assert _backfilled(tenant, jobs) == {"account": 1, "quote": 1, "quickQuote": 0, "policy": 0}  # the same again
    assert sorted(contact_index.holders(tenant, CONTACT)) == holders
