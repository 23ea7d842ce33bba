"""LocalProcessRunner with real plugin processes: the contract end to end through a fake HostApi,
containment of misbehaving plugins, warm reuse and replacement, concurrency."""

from __future__ import annotations

import os
import threading
import time
from decimal import Decimal

import pytest

from chalicelib.core import codes
from chalicelib.core.errors import Unavailable
from chalicelib.core.ids import new_tenant_locator
from chalicelib.plugins import protocol
from chalicelib.plugins.contract import (
    apply_rating,
    build_request,
    underwriting_flags,
    underwriting_outcome,
    validation_errors,
)
from chalicelib.plugins.local import Limits, LocalProcessRunner
from chalicelib.plugins.models import Charge, PluginFailure, PluginFlag, ValidationItem
from tests.plugins.conftest import NOW, FakeHost, modules

RATING = """
import pas

def rate_Auto(request):
    items = []
    state = request["account"]["data"]["state"]
    for vehicle in request["segment"]["element"]["elements"]:
        base = pas.lookup("BaseRates", [state, vehicle["data"]["class"]])
        band = pas.range_lookup("AgeBands", [state], vehicle["data"]["age"], date=pas.now())
        items.append({"elementLocator": vehicle["locator"], "chargeType": "premium",
                      "rate": base["rate"] * band["factor"]})
        items.append({"elementLocator": vehicle["locator"], "chargeType": "fee", "amount": base["fee"]})
    return {"items": items}
"""

VALIDATION = """
def validate(request):
    errors = []
    for vehicle in request["segment"]["element"]["elements"]:
        if len(vehicle["data"].get("vin", "")) != 17:
            errors.append({"locator": vehicle["locator"], "message": "vin must have 17 characters"})
    if request["account"]["data"].get("state") not in ("NY", "CA"):
        errors.append({"message": "we do not insure in this state"})
    return {"errors": errors}
"""

UNDERWRITING = """
def underwrite_Auto(request):
    level = request["static"]["level"]
    return {"flags": [{"level": level, "note": "plugin says " + level, "tag": "auto",
                       "elementLocator": request["segment"]["element"]["locator"]}]}
"""

MISBEHAVING = """
import os

def fails(request):
    return {"ratio": 1 / request["static"]["zero"]}

def reads_environment(request):
    return {"environment": dict(os.environ), "secret": os.environ.get("AWS_SECRET_ACCESS_KEY")}

def reads_passwd(request):
    with open("/etc/passwd") as passwd:
        return {"passwd": passwd.read()}

def reads_another_directory(request):
    with open(request["static"]["path"]) as other:
        return {"stolen": other.read()}

def writes(request):
    with open("scratch.txt", "w") as mine:
        mine.write("fine")
    with open("/tmp/pas-plugin-escape.txt", "w") as outside:
        outside.write("not fine")
    return {}

def opens_a_socket(request):
    import socket
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    return {}

def connects(request):
    import urllib.request
    return {"page": urllib.request.urlopen("http://169.254.169.254/latest/meta-data/").read()}

def starts_a_process(request):
    os.system("id")
    return {}

def allocates_a_gigabyte(request):
    return {"size": len(bytearray(1024 * 1024 * 1024))}

def returns_a_list(request):
    return ["not", "an", "object"]

def returns_an_object(request):
    return {"when": object()}

def exits(request):
    os._exit(3)

def lists_root(request):
    return {"root": os.listdir("/")}

def answers_too_much(request):
    return {"text": "x" * (9 * 1024 * 1024)}

PROCESS = os.urandom(8).hex()  # the process's identity: every sandbox is PID 2 of its own namespace

def ok(request):
    return {"pid": PROCESS, "cwd": sorted(os.listdir(".")), "directory": os.getcwd()}
"""


def quote(vehicles: list[dict], *, state: str = "NY", static: dict | None = None, duration: str = "1") -> dict:
    return build_request(
        tenant_locator="t",
        product_name="Auto",
        kind="quote",
        locator="Q1",
        transaction_category=None,
        start_time=NOW,
        end_time="2027-01-15T09:30:00.000Z",
        currency="USD",
        timezone="America/New_York",
        duration_basis="years",
        account={"locator": "A1", "type": "Person", "data": {"state": state}},
        static=static or {},
        segment_start=NOW,
        segment_end="2027-01-15T09:30:00.000Z",
        duration=Decimal(duration),
        element={"locator": "P1", "type": "AutoQuote", "elements": vehicles},
    )


def vehicle(locator: str, **data: object) -> dict:
    return {"locator": locator, "staticLocator": f"S{locator}", "type": "Vehicle", "data": data}


CHARGES = {"premium": {"category": "premium"}, "fee": {"category": "fee"}}


# --- the contract through a real process ---------------------------------------------------------


def test_a_rating_plugin_prices_from_lookup_and_range_tables(runner, tenant, version):
    host = FakeHost(
        tables={
            "BaseRates": {
                ("NY", "sedan"): {"rate": Decimal("812.40"), "fee": 25},
                ("NY", "truck"): {"rate": Decimal("1020"), "fee": Decimal("30.5")},
            }
        },
        ranges={
            "AgeBands": [
                (("NY",), Decimal(0), Decimal(25), {"factor": Decimal("1.35")}),
                (("NY",), Decimal(25), Decimal(200), {"factor": Decimal("0.9")}),
            ]
        },
    )
    request = quote(
        [vehicle("V1", **{"class": "sedan", "age": 19}), vehicle("V2", **{"class": "truck", "age": Decimal("40.5")})],
        duration="0.5",
    )

    result = runner.call(tenant, version, modules(rating=RATING), "rate_Auto", request, host)

    assert apply_rating(result, request, CHARGES) == [
        Charge("V1", "SV1", "premium", "premium", Decimal("548.37"), Decimal("1096.7400")),
        Charge("V1", "SV1", "fee", "fee", Decimal("25.00"), None),
        Charge("V2", "SV2", "premium", "premium", Decimal("459.00"), Decimal("918.00")),
        Charge("V2", "SV2", "fee", "fee", Decimal("30.50"), None),
    ]
    assert host.calls == [
        ("lookup", "BaseRates", ("NY", "sedan"), None),
        ("range_lookup", "AgeBands", ("NY",), Decimal(19), "2026-01-15T09:30:00.000Z"),
        ("lookup", "BaseRates", ("NY", "truck"), None),
        ("range_lookup", "AgeBands", ("NY",), Decimal("40.5"), "2026-01-15T09:30:00.000Z"),
    ]


def test_lookups_asked_together_are_answered_in_their_order(runner, tenant, version):
    host = FakeHost(tables={"Rates": {("sedan",): {"rate": Decimal("812.40")}, ("van",): {"rate": Decimal(900)}}})
    plugin = modules(
        rating="""
import pas

def rate(request):
    return {"rates": [row and row["rate"] for row in pas.lookups("Rates", [["sedan"], ["boat"], ["van"]])]}
"""
    )

    assert runner.call(tenant, version, plugin, "rate", {}, host) == {"rates": [Decimal("812.40"), None, 900]}
    assert [call[2] for call in host.calls] == [("sedan",), ("boat",), ("van",)]


def test_a_lookup_the_host_refuses_reaches_the_plugin_as_pas_error(runner, tenant, version):
    plugin = modules(
        rating="""
import pas

def rate(request):
    try:
        pas.lookup("Missing", ["x"])
    except pas.PasError as error:
        caught = str(error)
    pas.lookup("AlsoMissing", ["x"])
    return {"caught": caught}
"""
    )

    result = runner.call(tenant, version, plugin, "rate", quote([]), FakeHost())

    assert isinstance(result, PluginFailure)
    assert result.message == (
        "The plugin function rate failed: PasError: table AlsoMissing not found (plugins/python/rating.py line 9)"
    )


def test_a_validation_plugin_reports_errors_per_element(runner, tenant, version):
    request = quote([vehicle("V1", vin="123"), vehicle("V2", vin="1HGCM82633A004352")], state="TX")

    result = runner.call(tenant, version, modules(validation=VALIDATION), "validate", request, FakeHost())

    assert validation_errors(result, request) == [
        ValidationItem("V1", "Vehicle", ("vin must have 17 characters",)),
        ValidationItem("Q1", "Auto", ("we do not insure in this state",)),
    ]


@pytest.mark.parametrize(
    "level, outcome",
    [
        ("approve", "passed"),
        ("block", "underwrittenBlocked"),
        ("decline", "declined"),
        ("reject", "rejected"),
        ("info", "passed"),
    ],
)
def test_an_underwriting_plugin_raises_each_flag_level(runner, tenant, version, level, outcome):
    request = quote([], static={"level": level})

    result = runner.call(tenant, version, modules(underwriting=UNDERWRITING), "underwrite_Auto", request, FakeHost())

    flags = underwriting_flags(result, request)
    assert flags == [PluginFlag(level, f"plugin says {level}", "auto", "P1")]
    assert underwriting_outcome(flag.level for flag in flags).result == outcome


# --- containment ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "function, reason, detail",
    [
        ("fails", "exception", "ZeroDivisionError: division by zero (plugins/python/misbehaving.py line 5)"),
        (
            "reads_passwd",
            "refused",
            "SandboxRefused: the plugin sandbox refuses to open '/etc/passwd' (plugins/python/misbehaving.py line 11)",
        ),
        (
            "writes",
            "refused",
            "SandboxRefused: the plugin sandbox refuses to open '/tmp/pas-plugin-escape.txt' "
            "(plugins/python/misbehaving.py line 21)",
        ),
        (
            "opens_a_socket",
            "refused",
            "SandboxRefused: the plugin sandbox has no network (plugins/python/misbehaving.py line 27)",
        ),
        (
            "connects",
            "refused",
            "URLError: <urlopen error the plugin sandbox refuses socket.getaddrinfo> "
            "(plugins/python/misbehaving.py line 32)",
        ),
        (
            "starts_a_process",
            "refused",
            "SandboxRefused: the plugin sandbox refuses os.system (plugins/python/misbehaving.py line 35)",
        ),
        (
            "lists_root",
            "refused",
            "SandboxRefused: the plugin sandbox refuses to list '/' (plugins/python/misbehaving.py line 51)",
        ),
        ("allocates_a_gigabyte", "memory_limit", "it ran out of memory (the plugin process's memory limit)"),
        ("returns_a_list", "malformed", "it returned list; a JSON object (dict) is expected"),
        (
            "returns_an_object",
            "malformed",
            "its answer is not JSON: answer.result.when is of type object, which is not JSON",
        ),
        ("exits", "crashed", "its process exited with status 3"),
        ("answers_too_much", "malformed", "it sent more than 2 MB at once"),
        ("not_there", "missing", "no function not_there in plugins/python"),
    ],
)
def test_a_misbehaving_plugin_is_contained_and_the_runner_keeps_serving(
    runner, tenant, version, function, reason, detail
):
    plugin = modules(misbehaving=MISBEHAVING)

    result = runner.call(tenant, version, plugin, function, quote([], static={"zero": 0}), FakeHost())
    after = runner.call(tenant, version, plugin, "ok", quote([]), FakeHost())

    assert isinstance(result, PluginFailure)
    assert (result.reason, result.detail) == (reason, detail)
    assert result.message == f"The plugin function {function} failed: {detail}"
    assert not os.path.exists("/tmp/pas-plugin-escape.txt")
    assert after["cwd"] == (["plugins", "scratch.txt"] if function == "writes" else ["plugins"])


def test_the_plugin_sees_an_empty_environment(runner, tenant, version, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("PAS_PAGING_SECRET", "service-secret")

    result = runner.call(tenant, version, modules(misbehaving=MISBEHAVING), "reads_environment", quote([]), FakeHost())

    assert result == {"environment": {}, "secret": None}


def test_a_plugin_cannot_read_another_tenants_plugin_directory(runner, version):
    victim, thief = new_tenant_locator(), new_tenant_locator()
    secret = modules(misbehaving=MISBEHAVING, secret="RATE = 'confidential'\n")
    victims_directory = runner.call(victim, version, secret, "ok", quote([]), FakeHost())["directory"]

    stolen = runner.call(
        thief,
        version,
        modules(misbehaving=MISBEHAVING),
        "reads_another_directory",
        quote([], static={"path": f"{victims_directory}/plugins/python/secret.py"}),
        FakeHost(),
    )

    assert victims_directory == "/sandbox"  # every process has its own /sandbox, holding only its package
    assert isinstance(stolen, PluginFailure) and stolen.reason == "exception"
    assert "FileNotFoundError" in stolen.detail and "confidential" not in stolen.detail


def test_an_endless_plugin_is_killed_at_the_wall_clock_limit_and_replaced(tenant, version):
    plugin = modules(
        loop="import os\ndef spin(request):\n    while True:\n        pass\n"
        "def sleep(request):\n    import time\n    time.sleep(60)\n"
        "PROCESS = os.urandom(8).hex()\ndef pid(request):\n    return {'pid': PROCESS}\n"
    )
    runner = LocalProcessRunner(Limits(timeout_seconds=0.5))
    try:
        before = runner.call(tenant, version, plugin, "pid", {}, FakeHost())["pid"]
        started = time.monotonic()
        spun = runner.call(tenant, version, plugin, "spin", {}, FakeHost())
        slept = runner.call(tenant, version, plugin, "sleep", {}, FakeHost())
        elapsed = time.monotonic() - started
        after = runner.call(tenant, version, plugin, "pid", {}, FakeHost())["pid"]
    finally:
        runner.close()

    assert (spun.reason, spun.detail) == ("timeout", "it ran longer than 0.5 s (wall clock)")
    assert (slept.reason, slept.detail) == ("timeout", "it ran longer than 0.5 s (wall clock)")
    assert elapsed < 3
    assert after != before


def test_an_endless_plugin_is_stopped_by_its_cpu_time_limit(tenant, version):
    runner = LocalProcessRunner(Limits(timeout_seconds=10, cpu_seconds=1))
    try:
        result = runner.call(
            tenant, version, modules(loop="def spin(request):\n    while True:\n        pass\n"), "spin", {}, FakeHost()
        )
    finally:
        runner.close()

    assert (result.reason, result.detail) == ("cpu_limit", "its process used up its CPU-time limit (1 s)")


def test_a_plugin_looping_over_lookups_is_cut_short(runner, tenant, version):
    plugin = modules(rating="import pas\ndef rate(request):\n    while True:\n        pas.lookup('T', ['k'])\n")

    result = runner.call(tenant, version, plugin, "rate", {}, FakeHost(tables={"T": {}}))

    assert (result.reason, result.detail) == (
        "refused",
        f"it made more than {protocol.MAX_HOST_CALLS} pas calls in one call",
    )


def test_a_host_api_failure_propagates_and_the_process_is_replaced(runner, tenant, version):
    class Down(FakeHost):
        def lookup(self, table, key, date):
            raise codes.SERVICE_UNAVAILABLE("DynamoDB is throttling")

    plugin = modules(
        rating="import pas, os\ndef rate(request):\n    return {'row': pas.lookup('T', ['k'])}\n"
        "PROCESS = os.urandom(8).hex()\ndef pid(request):\n    return {'pid': PROCESS}\n"
    )
    before = runner.call(tenant, version, plugin, "pid", {}, FakeHost())["pid"]

    with pytest.raises(Unavailable):
        runner.call(tenant, version, plugin, "rate", {}, Down())

    assert runner.call(tenant, version, plugin, "pid", {}, FakeHost())["pid"] != before


# --- warm reuse ----------------------------------------------------------------------------------

PID = modules(info="import os\nPROCESS = os.urandom(8).hex()\ndef pid(request):\n    return {'pid': PROCESS}\n")


def test_a_process_serves_many_calls_and_a_new_version_replaces_it(runner, tenant):
    first, second = "01JAAAAAAAAAAAAAAAAAAAAAAA", "01JBBBBBBBBBBBBBBBBBBBBBBB"

    pids = [runner.call(tenant, first, PID, "pid", {}, FakeHost())["pid"] for _ in range(5)]
    redeployed = runner.call(tenant, second, PID, "pid", {}, FakeHost())["pid"]

    assert len(set(pids)) == 1
    assert redeployed != pids[0]
    assert runner.processes(tenant, first) == 0
    assert runner.processes(tenant, second) == 1


def test_a_warm_process_outlives_the_thread_that_started_it(runner, tenant, version):
    """Each request of `make run` has a thread of its own; the kernel's parent-death signal follows the thread
    that started bwrap, so a process started from a request's thread died with it."""
    pids: list[str] = []

    def call() -> None:
        pids.append(runner.call(tenant, version, PID, "pid", {}, FakeHost())["pid"])

    for _ in range(2):
        thread = threading.Thread(target=call)
        thread.start()
        thread.join()
        time.sleep(0.3)  # a signal sent as the thread ended has landed

    assert len(pids) == 2 and pids[0] == pids[1]
    assert runner.processes(tenant, version) == 1


def test_an_idle_process_is_replaced(tenant, version):
    runner = LocalProcessRunner(idle_seconds=0)
    try:
        pids = [runner.call(tenant, version, PID, "pid", {}, FakeHost())["pid"] for _ in range(2)]
    finally:
        runner.close()

    assert pids[0] != pids[1]


def test_a_tenant_flooding_the_pool_leaves_room_for_another_tenants_call():
    flooder, victim = new_tenant_locator(), new_tenant_locator()
    plugin = modules(
        slow="import os, time\nPROCESS = os.urandom(8).hex()\n"
        "def slow(request):\n    time.sleep(30)\n"
        "def pid(request):\n    return {'pid': PROCESS}\n"
    )
    runner = LocalProcessRunner(Limits(timeout_seconds=4), max_processes=4)
    flood = [
        threading.Thread(
            target=runner.call, args=(flooder, f"01JAAAAAAAAAAAAAAAAAAAAAA{number % 4}", plugin, "slow", {}, FakeHost())
        )
        for number in range(8)
    ]
    try:
        for thread in flood:
            thread.start()
        time.sleep(1.5)  # the flooder's calls hold what they may, the rest wait
        started = time.monotonic()
        served = runner.call(victim, "01JBBBBBBBBBBBBBBBBBBBBBBB", plugin, "pid", {}, FakeHost())
        elapsed = time.monotonic() - started
    finally:
        for thread in flood:
            thread.join()
        runner.close()

    assert not isinstance(served, PluginFailure), served
    assert elapsed < 2, elapsed  # a process start, not the wait for a flooder's call to time out


def test_concurrent_calls_run_in_parallel_processes(runner, tenant, version):
    plugin = modules(
        slow="import os, time\nPROCESS = os.urandom(8).hex()\n"
        "def slow(request):\n    time.sleep(0.4)\n    return {'pid': PROCESS}\n"
    )
    runner.call(tenant, version, plugin, "slow", {}, FakeHost())
    results: list[dict] = []

    def call() -> None:
        results.append(runner.call(tenant, version, plugin, "slow", {}, FakeHost()))

    threads = [threading.Thread(target=call) for _ in range(2)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert time.monotonic() - started < 0.75
    assert len({result["pid"] for result in results}) == 2
    assert runner.processes(tenant, version) == 2
