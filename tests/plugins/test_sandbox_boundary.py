"""The kernel's boundary around a plugin process, proven with the Python-level audit hook switched off
(and once with the hook defeated the way a real probe did): whatever a plugin does in pure Python or
through ctypes, it cannot read outside its package, reach a network, signal or trace another process,
start a program, gain privileges, write more than its disk quota or make more files than it may, or
see where the service keeps its files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import pytest

from chalicelib.core.ids import new_locator, new_tenant_locator
from chalicelib.plugins.local import MB, Limits, LocalProcessRunner
from chalicelib.plugins.models import PluginFailure
from chalicelib.sandbox import kernel
from tests.conftest import ROOT
from tests.plugins.conftest import FakeHost, modules

HOSTILE = """
import errno, os, socket, sys

def _attempt(action):
    try:
        return {"done": action()}
    except OSError as error:
        return {"errno": errno.errorcode.get(error.errno, str(error.errno))}

def read(request):
    return _attempt(lambda: open(request["path"], "rb").read().decode("latin-1"))

def stat(request):
    return _attempt(lambda: os.stat(request["path"]).st_mode)

def readlink(request):
    return _attempt(lambda: os.readlink(request["path"]))

def listdir(request):
    return _attempt(lambda: sorted(os.listdir(request["path"])))

def every_environment(request):
    found = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            found[pid] = _attempt(lambda: open(f"/proc/{pid}/environ", "rb").read().decode("latin-1"))
    return {"environ": found, "mine": dict(os.environ)}

def sockets(request):
    families = {"inet": socket.AF_INET, "inet6": socket.AF_INET6, "unix": socket.AF_UNIX,
                "netlink": socket.AF_NETLINK, "packet": socket.AF_PACKET}
    return {name: _attempt(lambda family=family: socket.socket(family, socket.SOCK_DGRAM).close() or "opened")
            for name, family in families.items()}

def signals(request):
    return {"kill": _attempt(lambda: os.kill(request["pid"], 9)),
            "kill_parent": _attempt(lambda: os.kill(os.getppid(), 9)),
            "kill_all": _attempt(lambda: os.kill(-1, 9)),
            "pidfd": _attempt(lambda: os.pidfd_open(os.getppid())),
            "killpg": _attempt(lambda: os.killpg(0, 0))}

def ctypes_system(request):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    status = libc.system(b"id > /sandbox/id.txt")
    return {"status": status, "ran": os.path.exists("/sandbox/id.txt")}

def ctypes_socket(request):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.socket(2, 1, 0)
    return {"fd": fd, "errno": errno.errorcode.get(ctypes.get_errno())}

def ctypes_ptrace(request):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    result = libc.ptrace(16, os.getppid(), 0, 0)  # PTRACE_ATTACH
    return {"result": result, "errno": errno.errorcode.get(ctypes.get_errno())}

def execs(request):
    return _attempt(lambda: os.execv("/usr/bin/id", ["id"]))

def forks(request):
    return _attempt(lambda: os.fork())

def privileges(request):
    status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    return {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
            "capabilities": status["CapEff"].strip(), "seccomp": status["Seccomp"].strip(),
            "setuid": _attempt(lambda: os.setuid(0)),
            "no_new_privs": status["NoNewPrivs"].strip()}

def writes_python(request):
    return _attempt(lambda: open(os.path.join(sys.base_prefix, "lib", "pas-escape.txt"), "w").write("x"))

def fills_the_disk(request):
    written = 0
    block = b"x" * (1024 * 1024)
    try:
        for index in range(request["files"]):
            with open(f"/sandbox/fill-{index}.bin", "wb") as target:
                target.write(block)
            written += len(block)
    except OSError as error:
        return {"written": written, "errno": errno.errorcode.get(error.errno)}
    return {"written": written}

def creates_files(request):
    made = 0
    try:
        for index in range(request["files"]):
            open(f"/sandbox/empty-{index}", "wb").close()
            made += 1
    except OSError as error:
        return {"made": made, "errno": errno.errorcode.get(error.errno)}
    return {"made": made}

def remembers(request):
    global SEEN
    try:
        before = SEEN
    except NameError:
        before = None
    SEEN = request["value"]
    with open("/sandbox/memory.txt", "a") as memory:
        memory.write(request["value"])
    return {"before": before, "file": open("/sandbox/memory.txt").read()}

def rebinds_the_runner(request):
    import _socket, posixpath
    runner = sys.modules["__main__"]
    runner._REFUSED_IMPORTS = frozenset()
    runner._REFUSED_PREFIXES = ()
    runner._CHANGES = frozenset()
    posixpath.realpath = lambda path, *args, **kwargs: "/sandbox"
    outcome = {"passwd": read({"path": "/etc/passwd"}), "environ": read({"path": "/proc/1/environ"}),
               "socket": _attempt(lambda: _socket.socket(socket.AF_INET, socket.SOCK_STREAM))}
    outcome.update(ctypes_system(request))
    return outcome
"""


@pytest.fixture(scope="module")
def bare() -> Iterator[LocalProcessRunner]:
    """A runner whose processes have no audit hook: what holds here is the kernel's doing."""
    local = LocalProcessRunner(Limits(timeout_seconds=5), audit_hook=False)
    yield local
    local.close()


@pytest.fixture
def call(bare):
    tenant, version = new_tenant_locator(), new_locator()

    def run(function: str, **request: object) -> dict:
        result = bare.call(tenant, version, modules(hostile=HOSTILE), function, request, FakeHost())
        assert not isinstance(result, PluginFailure), result
        return result

    return run


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/etc/shadow",
        "/root/.bash_history",
        "/home",
        "/tmp",
        str(os.path.realpath(".")),
        "/work",
        "/var/run",
    ],
)
def test_nothing_outside_the_package_and_the_runtime_exists(call, path):
    assert call("read", path=path) == {"errno": "ENOENT"}
    assert call("stat", path=path) == {"errno": "ENOENT"}


def test_the_file_system_holds_only_the_runtime_the_package_and_a_scratch_folder(call):
    assert set(call("listdir", path="/")["done"]) <= {
        "dev",
        "lib",
        "lib32",
        "lib64",
        "proc",
        "root",
        "runner",
        "sandbox",
        "usr",
        "opt",
    }
    assert call("listdir", path="/sandbox") == {"done": ["plugins"]}
    assert call("listdir", path="/runner") == {"done": ["child.py"]}


def test_the_service_state_and_secrets_are_out_of_reach(call, monkeypatch):
    monkeypatch.setenv("PAS_ADMIN_PASSWORD", "the-admin-password-1234")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")

    seen = call("every_environment")

    assert seen["mine"] == {}
    assert set(seen["environ"]) <= {"1", "2"}  # its own PID namespace: bwrap's init and itself
    for outcome in seen["environ"].values():
        assert "the-admin-password" not in str(outcome) and "EXAMPLEKEY" not in str(outcome)
    assert call("readlink", path="/proc/1/exe") in ({"errno": "EACCES"}, {"errno": "EPERM"}, {"errno": "ENOENT"})


def test_no_socket_of_any_family_can_be_opened(call):
    assert call("sockets") == {family: {"errno": "EPERM"} for family in ("inet", "inet6", "unix", "netlink", "packet")}
    assert call("ctypes_socket") == {"fd": -1, "errno": "EPERM"}


def test_no_process_can_be_signalled_not_even_its_own_parent():
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    runner = LocalProcessRunner(Limits(timeout_seconds=5), audit_hook=False)
    try:
        result = runner.call(
            new_tenant_locator(), new_locator(), modules(hostile=HOSTILE), "signals", {"pid": victim.pid}, FakeHost()
        )
        time.sleep(0.2)
        assert victim.poll() is None
        assert result == {
            "kill": {"errno": "EPERM"},
            "kill_parent": {"errno": "EPERM"},
            "kill_all": {"errno": "EPERM"},
            "pidfd": {"errno": "EPERM"},
            "killpg": {"errno": "EPERM"},
        }
    finally:
        runner.close()
        victim.send_signal(signal.SIGKILL)
        victim.wait()


def test_no_program_can_be_started_even_through_ctypes(call):
    started = call("ctypes_system")
    assert started["ran"] is False and started["status"] != 0
    assert call("execs") == {"errno": "EPERM"}
    assert call("forks") in ({"errno": "EAGAIN"}, {"errno": "EPERM"})
    assert call("ctypes_ptrace") == {"result": -1, "errno": "EPERM"}


def test_the_process_runs_unprivileged_under_seccomp(call):
    seen = call("privileges")

    assert seen["capabilities"] == "0000000000000000"
    assert seen["seccomp"] == "2" and seen["no_new_privs"] == "1"
    assert seen["setuid"] == {"errno": "EPERM"}
    if kernel.privileged():
        assert (seen["uid"], seen["euid"], seen["gid"]) == (kernel.NOBODY, kernel.NOBODY, kernel.NOBODY)
    assert call("writes_python") in ({"errno": "EROFS"}, {"errno": "EACCES"})


def test_the_disk_quota_holds_across_many_files(call):
    result = call("fills_the_disk", files=40)

    assert result["errno"] == "ENOSPC"
    assert 8 * MB <= result["written"] <= Limits().disk_bytes


@pytest.mark.skipif(not kernel.privileged(), reason="only root can mount a tmpfs with an inode limit")
def test_the_file_count_quota_holds(call):
    """Empty files take no disk blocks but each costs the kernel about a kilobyte: the tmpfs's inodes are
    limited too."""
    result = call("creates_files", files=20_000)

    assert result["errno"] == "ENOSPC"
    assert Limits().max_files - 100 <= result["made"] < Limits().max_files


def test_the_mounts_name_no_path_of_the_service(call):
    """/proc/self/mountinfo names the source of every mount: neither the checkout (the runner script) nor the
    service's temporary folders (the package's files) may show there. The Python installation does, as its
    path is in the interpreter's own build data anyway (README, Plugins: the sandbox)."""
    mounts = call("read", path="/proc/self/mountinfo")["done"]

    assert str(ROOT) not in mounts
    assert os.path.realpath(tempfile.gettempdir()) + "/" not in mounts
    assert "/runner/child.py" in mounts and "/sandbox/plugins" in mounts


def test_state_does_not_survive_from_one_tenants_process_into_anothers(bare):
    version = new_locator()
    first, second = new_tenant_locator(), new_tenant_locator()
    plugin = modules(hostile=HOSTILE)

    mine = [bare.call(first, version, plugin, "remembers", {"value": value}, FakeHost()) for value in "ab"]
    theirs = bare.call(second, version, plugin, "remembers", {"value": "c"}, FakeHost())

    assert mine == [{"before": None, "file": "a"}, {"before": "a", "file": "ab"}]
    assert theirs == {"before": None, "file": "c"}


def test_defeating_the_audit_hook_by_rebinding_the_runner_gains_nothing():
    runner = LocalProcessRunner(Limits(timeout_seconds=5))  # the audit hook on, then defeated from inside
    try:
        result = runner.call(
            new_tenant_locator(), new_locator(), modules(hostile=HOSTILE), "rebinds_the_runner", {}, FakeHost()
        )
    finally:
        runner.close()

    assert result["passwd"] == {"errno": "ENOENT"}
    assert result["environ"] in ({"errno": "EACCES"}, {"errno": "ENOENT"}, {"done": ""})
    assert result["socket"] == {"errno": "EPERM"}
    assert result["ran"] is False


def test_without_the_sandbox_tools_plugins_are_refused_with_a_clear_message(monkeypatch):
    def missing() -> str:
        raise kernel.SandboxUnavailable("plugins run only inside bubblewrap, which this machine lacks")

    monkeypatch.setattr(kernel, "bwrap", missing)
    kernel.check.cache_clear()
    runner = LocalProcessRunner()
    try:
        result = runner.call(
            new_tenant_locator(), new_locator(), modules(hostile=HOSTILE), "privileges", {}, FakeHost()
        )
    finally:
        runner.close()
        monkeypatch.undo()
        kernel.check.cache_clear()

    assert isinstance(result, PluginFailure)
    assert (result.reason, result.detail) == (
        "unavailable",
        "plugins run only inside bubblewrap, which this machine lacks",
    )
