"""The plugin process's logic (plugins/child.py) called in this process on the messages it gets: a call answered
with exact numbers, a plugin's failure reported with its file and line, the tenant function's replay of pas calls,
the tripwire's decisions. The process itself (its limits, its seccomp filter, its channel) runs only as a script in
the sandbox (tests/plugins/test_local_runner.py, test_sandbox_boundary.py); here nothing is installed in this
process: the audit hook is caught before `sys.addaudithook` and only asked."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from chalicelib.plugins import child

NOW = "2026-01-15T09:30:00Z"


def plugin_folder(root: Path, **sources: str) -> Path:
    folder = root / "plugins" / "python"
    folder.mkdir(parents=True)
    for name, source in sources.items():
        path = folder / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    return root


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The plugin modules a test imports, `pas`, sys.path and the tenant function's globals leave with it."""
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(child, "_lambda_plugins", None)
    monkeypatch.setattr(child, "_pas_for_lambda", child._Pas())
    monkeypatch.setitem(sys.modules, "pas", sys.modules.get("pas"))
    yield
    for name in set(sys.modules) - before - {"pas"}:
        del sys.modules[name]


def test_numbers_cross_exactly_and_what_is_not_json_is_refused():
    assert child.encode({"a": Decimal("0.10"), "b": [1, 2.5, True, None, "é"], "c": (3,)}) == (
        '{"a":0.10,"b":[1,2.5,true,null,"é"],"c":[3]}'
    )
    assert child.decode('{"rate": 1.10, "n": 3}') == {"rate": Decimal("1.10"), "n": 3}
    for value, message in [
        ({"x": Decimal("NaN")}, "answer.x is NaN, which JSON cannot carry"),
        ({"y": [float("inf")]}, "answer.y[0] is inf, which JSON cannot carry"),
        ({1: "a"}, "answer has the key 1; JSON object keys are strings"),
        ({"when": date(2026, 1, 1)}, "answer.when is of type date, which is not JSON"),
    ]:
        with pytest.raises((TypeError, ValueError), match=message.replace("[", r"\[").replace("]", r"\]")):
            child.encode(value)


def test_pas_asks_the_host_with_exact_keys_dates_and_bounds():
    pas = child._Pas()
    asked: list[dict[str, Any]] = []
    pas.ask = lambda call: asked.append(call) or {"rate": 1}
    module = pas.module()
    assert module.lookup("Rates", ["NY", "A"]) == {"rate": 1}
    assert module.range_lookup(
        "Bands", ("NY",), 2.5, date=datetime(2026, 1, 15, 4, 30, tzinfo=timezone(-timedelta(hours=5)))
    ) == {"rate": 1}
    assert module.range_lookup("Bands", ["NY"], 7, date=date(2026, 1, 15)) == {"rate": 1}
    assert module.lookups("Rates", [["NY", "A"], ["CA", "B"]], date=datetime(2026, 1, 15, 9, 30)) == [{"rate": 1}] * 2
    assert module.now() == pas.now
    assert asked == [
        {"pas": "lookup", "table": "Rates", "key": ["NY", "A"], "date": None},
        {
            "pas": "range_lookup",
            "table": "Bands",
            "key": ["NY"],
            "bound": Decimal("2.5"),
            "date": "2026-01-15T09:30:00.000Z",
        },
        {"pas": "range_lookup", "table": "Bands", "key": ["NY"], "bound": Decimal(7), "date": "2026-01-15"},
        {"pas": "lookup", "table": "Rates", "key": ["NY", "A"], "date": "2026-01-15T09:30:00.000Z"},
        {"pas": "lookup", "table": "Rates", "key": ["CA", "B"], "date": "2026-01-15T09:30:00.000Z"},
    ]
    for call, message in [
        (lambda: module.lookup("", ["a"]), "table must be a table name"),
        (lambda: module.lookup("Rates", "NY"), "key must be a list of strings"),
        (lambda: module.lookup("Rates", ["NY"], date=15), "date must be a datetime, a date or an ISO-8601 string"),
        (lambda: module.range_lookup("Bands", ["NY"], "7"), "bound must be a number, not str"),
        (lambda: module.range_lookup("Bands", ["NY"], True), "bound must be a number, not bool"),
        (lambda: module.lookups("Rates", [["a"]] * 101), "keys must be a list of at most 100 keys"),
    ]:
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(child.PasError, match="only available while a plugin function runs"):
        child._Pas().lookup("Rates", ["NY"])


def test_a_call_is_answered_and_each_failure_is_reported_with_its_plugin_line(tmp_path, monkeypatch, isolated):
    root = plugin_folder(
        tmp_path,
        rating="import pas\n\ndef rate(request):\n    return {'premium': request['base'] * pas.lookup('F', ['x'])}\n",
        failing=(
            "def divides(request):\n    return {'r': 1 / 0}\n\n"
            "def refused(request):\n    try:\n        open('/etc/passwd')\n"
            "    except OSError as error:\n        raise ValueError('no') from error\n\n"
            "def not_a_dict(request):\n    return [1]\n\n"
            "def not_json(request):\n    return {'at': object()}\n\n"
            "def out_of_memory(request):\n    raise MemoryError\n\n"
            "def silent(request):\n    raise KeyError\n\n"
            "NOT_A_FUNCTION = 1\n"
        ),
        broken="def broken(:\n",
        shadowed="def shadowed(request):\n    return {}\n\n\nshadowed = 1\n",
    )
    sys.path.append(str(root / "plugins" / "python"))
    pas = child._Pas()
    pas.ask = lambda call: Decimal("1.5")
    sys.modules["pas"] = pas.module()
    plugins = child.Plugins(str(root))
    assert "broken" not in plugins.modules  # a module that does not parse: its functions are missing
    assert child.decode(child.run(child.Plugins(str(tmp_path / "nowhere")), "rate", {})) == {
        "failure": {"reason": "missing", "detail": "no function rate in plugins/python"}
    }
    real_open = open

    def refusing_open(path: Any, *args: Any) -> Any:
        if path == "/etc/passwd":
            raise child.SandboxRefused("the plugin sandbox refuses to open '/etc/passwd'")
        return real_open(path, *args)

    answers = {
        name: child.decode(child.run(plugins, name, {"base": Decimal("100.10")}))
        for name in [
            "rate",
            "divides",
            "not_a_dict",
            "not_json",
            "out_of_memory",
            "silent",
            "missing",
            "NOT_A_FUNCTION",
            "shadowed",
        ]
    }
    import builtins

    monkeypatch.setattr(builtins, "open", refusing_open)  # the refusal as the audit hook raises it in the sandbox
    answers["refused"] = child.decode(child.run(plugins, "refused", {}))
    monkeypatch.setattr(builtins, "open", real_open)
    assert answers == {
        "rate": {"result": {"premium": Decimal("150.150")}},
        "divides": {
            "failure": {
                "reason": "exception",
                "detail": "ZeroDivisionError: division by zero (plugins/python/failing.py line 2)",
            }
        },
        "refused": {"failure": {"reason": "refused", "detail": "ValueError: no (plugins/python/failing.py line 8)"}},
        "not_a_dict": {
            "failure": {"reason": "malformed", "detail": "it returned list; a JSON object (dict) is expected"}
        },
        "not_json": {
            "failure": {
                "reason": "malformed",
                "detail": "its answer is not JSON: answer.result.at is of type object, which is not JSON",
            }
        },
        "out_of_memory": {
            "failure": {"reason": "memory_limit", "detail": "it ran out of memory (the plugin process's memory limit)"}
        },
        "silent": {"failure": {"reason": "exception", "detail": "KeyError (plugins/python/failing.py line 20)"}},
        "missing": {"failure": {"reason": "missing", "detail": "no function missing in plugins/python"}},
        "NOT_A_FUNCTION": {"failure": {"reason": "missing", "detail": "no function NOT_A_FUNCTION in plugins/python"}},
        "shadowed": {"failure": {"reason": "missing", "detail": "no function shadowed in plugins/python"}},
    }


def lambda_call(name: str, request: Any, answers: list[Any] | None = None) -> Any:
    event = {"message": child.encode({"call": name, "request": request, "now": NOW, "answers": answers or []})}
    return child.decode(child.lambda_handler(event, None)["message"])


def test_the_tenant_function_replays_pas_calls_until_each_is_answered(tmp_path, monkeypatch, isolated):
    plugin_folder(
        tmp_path,
        rating=(
            "import pas\n\n"
            "def rate(request):\n"
            "    rows = pas.lookups('Rates', [['NY'], ['CA']])\n"
            "    band = pas.range_lookup('Bands', ['NY'], request['age'], date=pas.now())\n"
            "    return {'total': rows[0]['r'] + rows[1]['r'] + band['f']}\n\n"
            "def swallows(request):\n"
            "    try:\n        pas.lookup('Rates', ['NY'])\n    except BaseException:\n        pass\n"
            "    return {'trusted': False}\n\n"
            "def asks_a_missing_table(request):\n"
            "    return {'row': pas.lookup('Nowhere', ['x'])}\n"
        ),
    )
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    first = {"pas": "lookup", "table": "Rates", "key": ["NY"], "date": None}
    second = {"pas": "lookup", "table": "Rates", "key": ["CA"], "date": None}
    band = {"pas": "range_lookup", "table": "Bands", "key": ["NY"], "bound": 30, "date": "2026-01-15T09:30:00.000Z"}
    assert lambda_call("rate", {"age": 30}) == {"need": [first, second]}
    answered = [[first, {"value": {"r": Decimal("1.10")}}], [second, {"value": {"r": 2}}]]
    assert lambda_call("rate", {"age": 30}, answered) == {"need": [band]}
    assert lambda_call("rate", {"age": 30}, [*answered, [band, {"value": {"f": Decimal("0.05")}}]]) == {
        "result": {"total": Decimal("3.15")}
    }
    assert lambda_call("swallows", {}) == {"need": [first]}  # its answer cannot be trusted: the call is asked
    missing = {"pas": "lookup", "table": "Nowhere", "key": ["x"], "date": None}
    assert lambda_call("asks_a_missing_table", {}, [[missing, {"error": "no table Nowhere"}]]) == {
        "failure": {"reason": "exception", "detail": "PasError: no table Nowhere (plugins/python/rating.py line 16)"}
    }


def test_the_publish_job_learns_which_modules_fail_to_import(tmp_path, monkeypatch, isolated):
    plugin_folder(
        tmp_path,
        good="def rate(request):\n    return {}\n",
        asks="import pas\nROW = pas.lookup('Rates', ['NY'])\n\ndef f(request):\n    return {}\n",
        missing="import not_installed_anywhere\n\ndef g(request):\n    return {}\n",
    )
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    assert child.import_errors() == [
        "PasError: pas is only available while a plugin function runs (plugins/python/asks.py line 2)",
        "ModuleNotFoundError: No module named 'not_installed_anywhere' (plugins/python/missing.py line 1)",
    ]


@pytest.fixture
def tripwire(tmp_path, monkeypatch: pytest.MonkeyPatch) -> tuple[Callable[[str, tuple[Any, ...]], None], Path]:
    """The audit hook install_sandbox would install, caught instead, and the network refused only until the test
    ends (`socket.socket` restored)."""
    import socket

    hooks: list[Callable[[str, tuple[Any, ...]], None]] = []
    monkeypatch.setattr(sys, "addaudithook", hooks.append)
    monkeypatch.setattr(socket, "socket", socket.socket)
    home = plugin_folder(tmp_path / "home")
    child.install_sandbox(str(home))
    with pytest.raises(child.SandboxRefused, match="the plugin sandbox has no network"):
        socket.socket()
    return hooks[0], home


def test_the_tripwire_refuses_what_a_plugin_must_not_do_and_allows_its_own_folder(tripwire):
    import os

    hook, home = tripwire
    mine = str(home / "plugins" / "python" / "scratch.txt")
    allowed = [
        ("open", (mine, "w", os.O_WRONLY | os.O_CREAT)),
        ("open", (os.__file__, "r", os.O_RDONLY)),
        ("os.listdir", (str(home),)),
        ("os.remove", (mine.encode(),)),
        ("import", ("json", None, None, None, None)),
        ("compile", (b"", "<string>")),
    ]
    for event, args in allowed:
        hook(event, args)
    refused = [
        ("open", ("/etc/passwd", "r", os.O_RDONLY), "refuses to open '/etc/passwd'"),
        ("open", (os.__file__, "w", os.O_WRONLY), "refuses to open"),
        ("open", (b"/etc/shadow", "r", os.O_RDONLY), "refuses to open b'/etc/shadow'"),
        ("open", (3, "r", os.O_RDONLY), "refuses to open 3"),  # a file descriptor it cannot judge: refused
        ("os.scandir", ("/etc",), "refuses to list '/etc'"),
        ("os.rename", (mine, "/tmp/elsewhere", -1, -1), "refuses os.rename outside its directory"),
        ("import", ("ctypes", None, None, None, None), "refuses to import ctypes"),
        ("socket.connect", (None, ("10.0.0.1", 80)), "refuses socket.connect"),
        ("os.system", (b"id",), "refuses os.system"),
        ("resource.setrlimit", (0, (1, 1)), "refuses resource.setrlimit"),
        ("gc.get_objects", (), "refuses gc.get_objects"),
    ]
    for event, args, message in refused:
        with pytest.raises(child.SandboxRefused, match=message.replace("(", r"\(")):
            hook(event, args)


def test_the_process_refuses_a_malformed_seccomp_program_and_keeps_its_user_without_arguments():
    for program in (b"", b"1234567"):
        with pytest.raises(SystemExit, match="malformed seccomp program"):
            child.install_seccomp(program)
    child.drop_privileges([])  # no uid/gid given (no sandbox on this machine): the user it was started as


def test_the_process_limits_are_the_ones_the_host_asked_for(monkeypatch):
    import resource

    set_to: dict[int, tuple[int, int]] = {}
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: set_to.__setitem__(which, limits))
    child.apply_limits({"memory_bytes": 256 << 20, "cpu_seconds": 5, "max_open_files": 32, "max_file_bytes": 1 << 20})
    assert set_to == {
        resource.RLIMIT_AS: (256 << 20, 256 << 20),
        resource.RLIMIT_CPU: (5, 6),  # soft: SIGXCPU, hard: SIGKILL
        resource.RLIMIT_NOFILE: (32, 32),
        resource.RLIMIT_FSIZE: (1 << 20, 1 << 20),
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NPROC: (0, 0),
    }
