"""The kernel boundary around a process that handles tenant code or tenant input on this machine:
bubblewrap namespaces plus seccomp filters. The plugins' processes (chalicelib/plugins/local.py) run in
it; it lives here, below every domain, because configuration deployments parse tenant source in it too.

A sandboxed process starts as `bwrap ... python -I -S -B /runner/<script> [uid gid]` and sees:

- its own PID namespace (it is the only process it can see or signal), no network namespace
  (no interface but a loopback that is down), its own IPC and UTS namespaces, a new session;
- a mount namespace holding only: /usr and the Python installation, read-only (the interpreter, the
  standard library, the time zone database); its script in /runner, read-only; /sandbox, a tmpfs of
  a fixed size (the disk quota), its working directory, with the tenant's `plugins/` bound read-only
  inside it; a fresh /proc of its own PID namespace and a minimal /dev. No /etc, no /home, no
  /root, no /tmp of the host, no other tenant's files, no state of the service;
- an unprivileged user id: when the service runs as root, bwrap keeps only CAP_SETUID/CAP_SETGID and
  the script's first statement drops to `nobody` (which also clears every capability) before it reads
  anything; otherwise bwrap runs it in a user namespace under the service's own unprivileged user,
  with further user namespaces disabled. NO_NEW_PRIVS is always set;
- seccomp filter 1 (installed by bwrap before the interpreter starts): sockets, ptrace and other
  processes' memory, every way to signal a process (kill, tkill, tgkill, sigqueue, pidfds), mounts,
  namespaces, keyrings, BPF, perf, io_uring, userfaultfd, module loading, reboot, clock changes and
  handle-based opens all fail with EPERM;
- seccomp filter 2 (installed by plugins/child.py before any plugin code is imported): execve and
  execveat fail with EPERM, so no other program can be started even through ctypes.

Both filters are built here with libseccomp (the `pyseccomp` binding) as BPF programs; once installed
the kernel enforces them and nothing in the process can lift them. child.py keeps its audit hook as a
second line that explains refusals early with a readable message.
"""
from __future__ import annotations

import errno
import functools
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SANDBOX_HOME = "/sandbox"
RUNNER_FOLDER = "/runner"
NOBODY = 65534

REFUSED_AT_START = (
    "socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen",
    "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "open_by_handle_at", "name_to_handle_at",
    "personality", "iopl", "ioperm", "lookup_dcookie", "fanotify_init", "mknod", "mknodat",
)
"""System calls that fail with EPERM from the first instruction of the sandboxed interpreter."""

REFUSED_BEFORE_PLUGINS = ("execve", "execveat")
"""System calls that fail with EPERM once child.py has set itself up, before plugin code runs."""


class SandboxUnavailable(RuntimeError):
    """This machine cannot contain plugins: the message says what is missing and how to get it."""


@dataclass(frozen=True)
class Filters:
    """The two seccomp programs, as BPF bytes."""

    at_start: bytes
    before_plugins: bytes


@functools.lru_cache(maxsize=1)
def filters() -> Filters:
    """Built once per process with libseccomp; SandboxUnavailable when it is not installed."""
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as error:  # pyseccomp raises when libseccomp is missing
        raise SandboxUnavailable(
            f"plugins need libseccomp and its Python binding pyseccomp ({error}); on Debian or Ubuntu: "
            "apt-get install libseccomp2, then reinstall the requirements (make clean-venv)") from None

    def program(names: Sequence[str]) -> bytes:
        syscall_filter = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        for name in names:
            try:
                syscall_filter.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
            except (ValueError, RuntimeError, OSError):
                continue  # a system call this architecture does not have (e.g. ioperm on arm64)
        with tempfile.TemporaryFile() as bpf:
            syscall_filter.export_bpf(bpf)
            bpf.seek(0)
            return bpf.read()

    return Filters(program(REFUSED_AT_START), program(REFUSED_BEFORE_PLUGINS))


def bwrap() -> str:
    found = shutil.which("bwrap", path=os.environ.get("PATH", os.defpath) + ":/usr/bin:/bin")
    if found is None:
        raise SandboxUnavailable(
            "plugins run only inside bubblewrap, which this machine lacks: install it (Debian or Ubuntu: "
            "apt-get install bubblewrap; Fedora: dnf install bubblewrap); `make run` and `make test` "
            "install it when they run as root")
    return found


def privileged() -> bool:
    return os.geteuid() == 0


def _python_roots() -> list[str]:
    """Folders the interpreter needs, outside /usr: its installation (a pyenv or a build in /opt)."""
    roots = []
    for folder in {os.path.realpath(sys.base_prefix), os.path.dirname(os.path.realpath(sys.executable))}:
        if folder != "/usr" and not folder.startswith("/usr/"):
            roots.append(folder)
    return sorted(roots)


def _ancestors(path: str) -> Iterator[str]:
    parts = Path(path).parts[1:-1]
    for depth in range(1, len(parts) + 1):
        yield "/" + "/".join(parts[:depth])


def command(script: Path, package: str, *, disk_bytes: int, seccomp_fd: int, python: str) -> list[str]:
    """The bwrap command line that runs the Python `script` with `package` (a folder holding `plugins/`)
    visible read-only at /sandbox/plugins, inside a `disk_bytes` tmpfs at /sandbox."""
    interpreter = os.path.realpath(python)
    runner = f"{RUNNER_FOLDER}/{script.name}"
    arguments = [bwrap(), "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
                 "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if privileged():
        arguments += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        arguments += ["--unshare-user", "--disable-userns"]
    arguments += ["--ro-bind", "/usr", "/usr"]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/lib32", "usr/lib32")):
        if os.path.islink(link) or os.path.isdir(link):
            arguments += ["--symlink", target, link] if os.path.islink(link) else ["--ro-bind", link, link]
    made: set[str] = set()
    for root in _python_roots():
        for folder in _ancestors(root + "/x"):
            if folder != root and folder not in made and not folder.startswith("/usr"):
                made.add(folder)
                arguments += ["--perms", "0755", "--dir", folder]
        arguments += ["--ro-bind", root, root]
    arguments += [
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "0755", "--dir", RUNNER_FOLDER, "--ro-bind", str(script), runner,
        "--size", str(disk_bytes), "--perms", "0777", "--tmpfs", SANDBOX_HOME,
        "--ro-bind", os.path.join(package, "plugins"), f"{SANDBOX_HOME}/plugins",
        "--chdir", SANDBOX_HOME, "--seccomp", str(seccomp_fd),
        interpreter, "-I", "-S", "-B", runner,
    ]
    if privileged():
        arguments += [str(NOBODY), str(NOBODY)]
    return arguments


def launch(arguments: list[str], *, pass_fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
    """Start a sandbox (a `command` line) with pipes as its stdin and stdout, an empty environment and
    nothing else of this process, from the launcher thread (_Launcher says why)."""
    return _launcher.popen(arguments, pass_fds)


class _Launcher:
    """Starts every sandbox from one thread that lives as long as the process. `--die-with-parent` asks
    the kernel to kill the sandbox when its parent dies, and that parent is the *thread* that forked bwrap
    (PR_SET_PDEATHSIG): started from a request's thread, a warm process died with the request."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[list[str], tuple[int, ...], Future[subprocess.Popen[bytes]]]] = \
            queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, arguments: list[str], pass_fds: tuple[int, ...]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="sandbox-launcher", daemon=True)
                self._thread.start()
        started: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((arguments, pass_fds, started))
        return started.result()

    def _serve(self) -> None:
        while True:
            arguments, pass_fds, started = self._requests.get()
            try:
                started.set_result(subprocess.Popen(
                    arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={},
                    close_fds=True, pass_fds=pass_fds, start_new_session=True))
            except BaseException as error:  # the caller's to handle (an OSError: bwrap cannot be run)
                started.set_exception(error)


_launcher = _Launcher()


@contextmanager
def seccomp_input(program: bytes) -> Iterator[int]:
    """A file descriptor bwrap reads the BPF program from (inheritable only for the child)."""
    with tempfile.TemporaryFile() as bpf:
        bpf.write(program)
        bpf.flush()
        bpf.seek(0)
        yield bpf.fileno()


@functools.lru_cache(maxsize=1)
def check() -> None:
    """Starts one empty sandbox (cached per process): SandboxUnavailable with the kernel's or bwrap's
    own words when namespaces, bubblewrap or libseccomp are missing."""
    program = filters().at_start
    package = tempfile.mkdtemp(prefix="pas-sandbox-check-")
    try:
        os.chmod(package, 0o755)
        os.mkdir(os.path.join(package, "plugins"), 0o755)
        with seccomp_input(program) as fd:
            arguments = command(Path(__file__), package, disk_bytes=1024 * 1024, seccomp_fd=fd, python=sys.executable)
            probe = arguments[:-1] + ["-c", "pass"]
            result = subprocess.run(probe, pass_fds=(fd,), env={}, stdin=subprocess.DEVNULL,
                                    capture_output=True, timeout=30, check=False)
    finally:
        shutil.rmtree(package, ignore_errors=True)
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace").strip()[-500:]
        raise SandboxUnavailable(f"the plugin sandbox cannot start on this machine ({said or result.returncode}); "
                                 "it needs Linux namespaces (unprivileged user namespaces when not root), "
                                 "seccomp and bubblewrap")
