"""`pas fixtures`: docs/examples/fixtures/first-year.json run to the end (the walkthrough's phone policy billed
monthly on a test clock: eleven invoices paid, the twelfth missed, the policy lapsed), and a YAML file's
references, expected statuses and failures."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

from tests.e2e.support import ROOT

FIRST_YEAR = ROOT / "docs" / "examples" / "fixtures" / "first-year.json"
PACKAGE = ROOT / "docs" / "examples" / "gadgetcover"


def amounts(items, field="amount"):
    return [Decimal(str(item[field])) for item in items]


def test_the_first_year_runs_to_the_end_with_the_walkthroughs_amounts(signed_in):
    year = datetime.now(timezone.utc).year + 1  # a policy starting next January 1st, whatever today is
    done = signed_in("fixtures", str(FIRST_YEAR), "--json", env={"PAS_FIXTURE_YEAR": str(year)}, timeout=600)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    steps = [json.loads(line, parse_float=Decimal) for line in done.stdout.splitlines()]
    assert len(steps) == len(json.loads(FIRST_YEAR.read_text())["fixtures"])
    answers = {step["name"]: step["body"] for step in steps}
    assert {step["status"] for step in steps} == {200}
    # priced as in the README's walkthrough: 4.50 a month for 12 months, and the fee of 12
    assert [(i["chargeType"], i["amount"]) for i in answers["priced"]["items"]] == [
        ("premium", Decimal("54.00")),
        ("fee", Decimal("12.00")),
    ]
    # the Monthly plan: every whole month carries the same amount, 4.50 of premium and 1.00 of fee
    installments = answers["installments"]["items"]
    assert [i["installmentStartTime"][:10] for i in installments] == [f"{year}-{m:02d}-01" for m in range(1, 13)]
    assert {tuple(amounts(i["installmentItems"])) for i in installments} == {(Decimal("4.50"), Decimal("1.00"))}
    paid = [answers[f"posted{m:02d}"] for m in range(1, 12)]
    assert [(p["paymentState"], p["amount"]) for p in paid] == [("posted", Decimal("5.50"))] * 11
    # December's invoice was missed: the grace ran out, the policy lapsed from its due time, December's premium
    # and fee came back as a negative invoice, settled into the account's credit
    assert answers["lapsed"]["statuses"] == ["cancelled"]
    [delinquency] = answers["delinquencies"]["items"]
    assert (delinquency["delinquencyState"], delinquency["lapseTransactionEffectiveDate"]) == (
        "lapseTransactionCreated",
        f"{year}-12-01T05:00:00.000Z",
    )
    invoices = answers["invoices"]["items"]
    assert [(i["invoiceState"], i["totalAmount"]) for i in invoices] == [("settled", Decimal("5.50"))] * 11 + [
        ("open", Decimal("5.50")),
        ("settled", Decimal("-5.50")),
    ]
    assert answers["credit"]["balance"] == Decimal("5.50")


SCRIPT = """\
- name: who
  path: /auth/users/whoami
- name: tenant
  method: POST
  path: /config/createTenant
  query: {name: "${env.TENANT_NAME}"}
  package: ${env.PACKAGE:-../../../docs/examples/gadgetcover}
- name: clock
  path: /clock/${tenant.locator}
- method: POST
  path: /clock/${tenant.locator}/advance
  body: {to: "2040-01-01T00:00:00Z"}
  status: 409
- name: account
  method: POST
  path: /policy/${tenant.locator}/accounts
  body: {type: Customer, data: {name: "${who.userName}", email: "${env.NOBODY:-}"}}
  until: {data.name: admin@example.com}
"""


def test_a_yaml_file_refers_to_earlier_answers_and_the_environment(signed_in, tmp_path):
    folder = tmp_path / "a" / "b" / "c"
    folder.mkdir(parents=True)
    (tmp_path / "docs").symlink_to(ROOT / "docs")  # the default package path is relative to the file
    script = folder / "script.yaml"
    script.write_text(SCRIPT)

    done = signed_in("fixtures", str(script), env={"TENANT_NAME": "From YAML", "PACKAGE": str(PACKAGE)})

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("[1/5] who  GET /auth/users/whoami  200  locator=")
    assert lines[1].startswith("[2/5] tenant  POST /config/createTenant  200  locator=")
    tenant = lines[1].rsplit("locator=", 1)[1]
    assert lines[3] == f"[4/5] -  POST /clock/{tenant}/advance  409"
    verbose = signed_in("fixtures", str(script), "--verbose", env={"TENANT_NAME": "Again"})  # the default package
    assert '"name": "Again",' in verbose.stdout
    assert '"name": "admin@example.com",\n    "email": ""' in verbose.stdout

    unset = signed_in("fixtures", str(script))
    assert unset.returncode == 1
    assert unset.stderr.strip() == "error: step 2 (tenant): ${env.TENANT_NAME}: the environment has no TENANT_NAME"
    assert unset.stdout.startswith("[1/5] who ")

    script.write_text(SCRIPT.replace("status: 409", "status: 200"))
    unexpected = signed_in("fixtures", str(script), env={"TENANT_NAME": "Unexpected", "PACKAGE": str(PACKAGE)})
    assert unexpected.returncode == 1
    assert "error: step 4: POST /clock/" in unexpected.stderr
    assert "answered 409, not 200: 409 clock.not_a_test_clock: " in unexpected.stderr

    script.write_text("- path: /auth/users/whoami\n  metod: GET\n")
    typo = signed_in("fixtures", str(script))
    assert (typo.returncode, typo.stdout) == (1, "")
    assert "step 1: unknown key(s) metod" in typo.stderr
