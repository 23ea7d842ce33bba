"""`pas clock show|advance`, `pas events tail` (read and followed) and `pas tables upload|get` on a tenant of the
example package with a test clock."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli.conftest import GADGETCOVER, PAS, environment


@pytest.fixture
def tenant(signed_in) -> str:
    done = signed_in("config", "deploy", str(GADGETCOVER), "--create", "Clocked", "--test-clock", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["locator"]


def test_the_clock_advances_with_progress_until_ready(signed_in, tenant):
    shown = json.loads(signed_in("clock", "show", "--tenant", tenant, "--json").stdout)
    assert (shown["testClock"], shown["status"]) == (True, "ready")

    advanced = signed_in("clock", "advance", "--to", "2031-03-01T00:00:00Z", "--tenant", tenant)

    assert advanced.returncode == 0, advanced.stderr
    lines = advanced.stdout.splitlines()
    assert lines[-2:] == [
        "clock to 2031-03-01T00:00:00.000Z: ready at 2031-03-01T00:00:00.000Z",
        "2031-03-01T00:00:00.000Z (ready)",
    ]
    assert (
        json.loads(signed_in("clock", "show", "--tenant", tenant, "--json").stdout)["now"] == "2031-03-01T00:00:00.000Z"
    )
    backwards = signed_in("clock", "advance", "--to", "2031-01-01T00:00:00Z", "--tenant", tenant)
    assert backwards.returncode == 1
    assert backwards.stderr.startswith("error: 400 clock.not_forward: The clock stands at 2031-03-01T00:00:00.000Z")


def test_events_tail_reads_the_stream_then_follows_it(signed_in, local_stack, tenant, config_home):
    everything = signed_in("events", "tail", "--tenant", tenant, "--no-follow", "--json")
    assert everything.returncode == 0, everything.stderr
    types = [json.loads(line)["type"] for line in everything.stdout.splitlines()]
    assert types[:3] == ["config.deployment.deploy", "config.bootstrap.queue", "resource.table.create"]
    only = signed_in("events", "tail", "--tenant", tenant, "--no-follow", "--type", "resource.*")
    assert only.stdout.count("  resource.table.create  ") == 1 and len(only.stdout.splitlines()) == 1

    following = subprocess.Popen(
        [str(PAS), "events", "tail", "--tenant", tenant, "--type", "policy.account.create", "--limit", "1", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(config_home),
    )
    try:
        status, account = local_stack.request(
            "POST",
            f"/policy/{tenant}/accounts",
            token=local_stack.sign_in(),
            json_body={"type": "Customer", "data": {"name": "Ada Lovelace"}},
        )
        assert status == 200
        out, err = following.communicate(timeout=60)
    finally:
        following.kill()
    assert following.returncode == 0, err
    [event] = [json.loads(line) for line in out.splitlines()]
    assert (event["type"], event["data"]) == ("policy.account.create", {"accountLocator": account["locator"]})


def test_tables_upload_and_get(signed_in, tenant, tmp_path):
    shipped = signed_in("tables", "get", "GadgetRates2026", "--tenant", tenant)
    assert shipped.returncode == 0, shipped.stderr
    assert shipped.stdout == "category,monthlyRate,maxValue\nphone,4.50,1500\nlaptop,7.25,3000\n"
    record = signed_in("tables", "get", "GadgetRates", "--key", "laptop", "--tenant", tenant)  # by static name
    assert (record.returncode, record.stdout) == (
        0,
        '{\n  "value": {\n    "monthlyRate": 7.25,\n    "maxValue": 3000\n  }\n}\n',
    )

    rates = tmp_path / "GadgetRates2031.csv"
    rates.write_text("category,monthlyRate,maxValue\nphone,5.00,1500\ncamera,3.10,900\n")
    uploaded = signed_in(
        "tables", "upload", "GadgetRates2031", str(rates), "--static-name", "GadgetRates", "--tenant", tenant, "--json"
    )
    assert uploaded.returncode == 0, uploaded.stderr
    stored = json.loads(uploaded.stdout)
    assert (stored["name"], stored["staticName"], stored["resourceType"]) == ("GadgetRates2031", "GadgetRates", "table")

    rates.write_text("category,monthlyRate,maxValue\nphone,5.25,1500\n")
    replaced = signed_in("tables", "upload", "GadgetRates2031", str(rates), "--replace", "--tenant", tenant)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.startswith("lookup table GadgetRates2031 (GadgetRates) stored: version ")
    saved = tmp_path / "saved.csv"
    assert signed_in("tables", "get", "GadgetRates2031", "--tenant", tenant, "-o", str(saved)).returncode == 0
    assert saved.read_text() == "category,monthlyRate,maxValue\nphone,5.25,1500\n"

    record = signed_in("tables", "get", "GadgetRates", "--key", "phone", "--tenant", tenant, "--json")
    assert record.returncode == 0, record.stderr
    assert record.stdout.strip() == '{"value":{"monthlyRate":5.25,"maxValue":1500}}'  # the latest instance
    unknown = signed_in("tables", "get", "Nope", "--tenant", tenant)
    assert unknown.returncode == 1 and unknown.stderr.startswith("error: 404 ")
