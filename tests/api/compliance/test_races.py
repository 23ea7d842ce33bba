"""Two anonymize calls on one account in parallel (threads against the app, each having read the account's
references before either writes): one job is started, the other call answers 409 and starts nothing; a retry
answers that job."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.api.compliance.support import anonymize
from tests.api.quotes.support import new_account
from tests.support.api import assert_error, ok
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
