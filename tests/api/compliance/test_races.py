"""Two anonymize calls on one account in parallel (threads against the app, each having read the account's
references before either writes): one job is started, the other call answers 409 and starts nothing; a retry
answers that job. A keyed call whose answer was lost after it committed: its retry answers the job it started as
its own."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.api.compliance.support import anonymize, compliance
from tests.api.quotes.support import new_account
from tests.simulation.support import answers_lost
from tests.support.api import assert_error, call, ok
from tests.support.configs import quotes_tenant
from tests.support.in_turns import in_turns


def test_two_parallel_anonymize_calls_on_one_account_start_one_job(api, admin_token, jobs, monkeypatch):
    tenant = quotes_tenant(api, admin_token, plugins=None)
    account = new_account(api, admin_token, tenant)
    body = {"references": {"account": [account]}}
    in_turns(monkeypatch).writes_meet(2)
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: anonymize(api, admin_token, tenant, body), range(2)))

    assert sorted(answer.status_code for answer in answers) == [200, 409]
    lost = next(answer for answer in answers if answer.status_code == 409)
    assert_error(lost, 409, "conflict.concurrent_modification")
    (job,) = ok(next(answer for answer in answers if answer.status_code == 200))
    assert [m.payload["jobLocator"] for m in jobs.sent if m.job_type == "compliance.anonymize"] == [job["jobLocator"]]
    (again,) = ok(anonymize(api, admin_token, tenant, body))
    assert again["jobLocator"] == job["jobLocator"]


def test_an_anonymize_whose_answer_was_lost_answers_the_job_it_started_as_its_own_and_starts_one(
    api, admin_token, jobs
):
    tenant = quotes_tenant(api, admin_token, plugins=None)
    account = new_account(api, admin_token, tenant)
    body = {"references": {"account": [account]}}
    with answers_lost():
        lost = anonymize_keyed(api, admin_token, tenant, body, "anonymize-lost")
    assert_error(lost, 503, "service.unavailable")

    retried = anonymize_keyed(api, admin_token, tenant, body, "anonymize-lost")

    (job,) = ok(retried)
    assert (job["fromCurrentRequest"], job["assignedReferenceLocators"]) == (True, [account])
    (other,) = ok(anonymize(api, admin_token, tenant, body))  # another request: the same job, not its own
    assert (other["jobLocator"], other["fromCurrentRequest"]) == (job["jobLocator"], False)


def anonymize_keyed(api, token, tenant, body, key):
    return call(api, "POST", compliance(tenant, "/anonymize"), token, body, headers={"X-Idempotency-Key": key})
