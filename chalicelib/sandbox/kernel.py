"""The kernel boundary around a process that handles tenant code or tenant input on this machine:
bubblewrap namespaces plus seccomp filters. The plugins' processes (chalicelib/plugins/local.py) run in
it, so do the document renderer's (documents/rendering.py); it lives in its own package below every domain,
beside the hostile-source parser (python_source.py), because configuration deployments parse tenant source
in it too.

A sandboxed process starts as `bwrap ... python -I -S -B /runner/<script> [arguments] [uid gid]`, from
one launcher thread (see _Launcher), and sees:

- its own PID namespace (it is the only process it can see or signal), no network namespace
  (no interface but a loopback that is down), its own IPC and UTS namespaces, a new session;
- a mount namespace holding only: /usr and the Python installation, read-only (the interpreter, the
  standard library, the time zone database); a read-only copy of its script in /runner; /sandbox, a
  tmpfs of a fixed size and (run as root) a fixed number of files (Disk), its working directory, with
  the tenant's `plugins/` read-only inside it; a fresh /proc of its own PID namespace and a minimal
  /dev. No /etc, no /home, no /root, no /tmp of the host, no other tenant's files, no state of the
  service, and no mount that names the checkout or a folder of the service (the Python installation's
  path shows in /proc/self/mountinfo, as it does in the interpreter's own sysconfig data);
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
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SANDBOX_HOME = "/sandbox"
RUNNER_FOLDER = "/runner"
LIBRARIES_FOLDER = "/libs"
CODE_FOLDER = "/var/task"
NOBODY = 65534

REFUSED_AT_START = (
    "socket",
    "socketpair",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "kill",
    "tkill",
    "tgkill",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "pidfd_open",
    "pidfd_send_signal",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fspick",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "open_by_handle_at",
    "name_to_handle_at",
    "personality",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "fanotify_init",
    "mknod",
    "mknodat",
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
            "apt-get install libseccomp2, then reinstall the requirements (make clean-venv)"
        ) from None

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
            "install it when they run as root"
        )
    return found


def privileged() -> bool:
    return os.geteuid() == 0


def _python_roots() -> list[str]:
    """Folders the interpreter needs, outside /usr: its installation (a pyenv or a build in /opt)."""
    folders = {os.path.realpath(sys.base_prefix), os.path.dirname(os.path.realpath(sys.executable))}
    outside = sorted(folder for folder in folders if folder != "/usr" and not folder.startswith("/usr/"))
    return [folder for folder in outside if not any(folder.startswith(other + "/") for other in outside)]


def _ancestors(path: str) -> Iterator[str]:
    parts = Path(path).parts[1:-1]
    for depth in range(1, len(parts) + 1):
        yield "/" + "/".join(parts[:depth])


class Disk:
    """/sandbox, a sandbox's working directory and its only writable file system: a tmpfs of `size_bytes`
    holding at most `max_files` files and folders, with `files` (paths under `plugins/` -> bytes) read-only
    in /sandbox/plugins.

    bwrap can give a tmpfs a size but not an inode count, and empty files take no blocks (each costs the
    kernel about a kilobyte all the same). So, run as root, the host mounts the tmpfs itself with both
    limits, in a folder of its own (0700), writes the files into it and binds it into the sandbox; its own
    mount goes as soon as the sandbox runs (`started`), so none stays on the host, and the sandbox's mounts
    name no path of the host. Run as a normal user the host cannot mount: /sandbox is then bwrap's tmpfs,
    limited in size only, and the files are bound from the host folder."""

    def __init__(self, files: Mapping[str, bytes], *, size_bytes: int, max_files: int):
        self.size_bytes = size_bytes
        self.folder = tempfile.mkdtemp(prefix="pas-sandbox-")
        self.own_tmpfs = privileged()
        self.source = os.path.join(self.folder, "disk") if self.own_tmpfs else self.folder
        self._mounted_here = False
        try:
            if self.own_tmpfs:
                os.mkdir(self.source, 0o700)
                _mount_tmpfs(self.source, size_bytes, max_files)
                self._mounted_here = True
            _write_read_only(self.source, files)
        except BaseException:
            self.remove()
            raise

    def arguments(self) -> list[str]:
        """What bwrap needs to mount /sandbox and /sandbox/plugins."""
        if self.own_tmpfs:
            disk = ["--bind", self.source, SANDBOX_HOME]
        else:
            disk = ["--size", str(self.size_bytes), "--perms", "0777", "--tmpfs", SANDBOX_HOME]
        return disk + ["--ro-bind", os.path.join(self.source, "plugins"), f"{SANDBOX_HOME}/plugins"]

    def started(self) -> None:
        """The sandbox runs, with its own mount of the disk: the host's goes (a lazy unmount, which fails
        only if the mount is gone already; then there is nothing to do)."""
        if self._mounted_here:
            self._mounted_here = False
            import ctypes

            ctypes.CDLL(None, use_errno=True).umount2(self.source.encode(), _MNT_DETACH)

    def remove(self) -> None:
        self.started()
        shutil.rmtree(self.folder, ignore_errors=True)


_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 0x2, 0x4, 0x2


def _mount_tmpfs(target: str, size_bytes: int, max_files: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size_bytes},nr_inodes={max_files},mode=0777".encode()
    if libc.mount(b"tmpfs", target.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot mount the sandbox's disk: {os.strerror(code)}")


def _write_read_only(root: str, files: Mapping[str, bytes]) -> None:
    """`files` (paths under plugins/, never outside it) at their paths under `root`, readable by the
    sandbox's unprivileged user and writable by nobody but the host."""
    Path(root, "plugins").mkdir(mode=0o755)
    for path, content in files.items():
        parts = PurePosixPath(path).parts
        if parts[:1] != ("plugins",) or ".." in parts or PurePosixPath(path).is_absolute():
            continue
        target = Path(root, *parts)
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        target.write_bytes(content)
        target.chmod(0o644)
    for folder, _, _ in os.walk(os.path.join(root, "plugins")):
        os.chmod(folder, 0o755)


def _command(
    script_name: str,
    disk: Disk,
    *,
    seccomp_fd: int,
    script_fd: int,
    python: str,
    arguments: Sequence[str] = (),
    libraries: str | None = None,
    code: str | None = None,
) -> list[str]:
    """The bwrap command line that runs the Python script `/runner/<script_name>` (read from `script_fd`: a
    copy, so no mount names the checkout) with `arguments` on `disk`, under the seccomp program read from
    `seccomp_fd`. Run as root, the script gets the user and group it must drop to as two more arguments."""
    interpreter = os.path.realpath(python)
    runner = f"{RUNNER_FOLDER}/{script_name}"
    line = [
        bwrap(),
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if privileged():
        line += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        line += ["--unshare-user", "--disable-userns"]
    line += ["--ro-bind", "/usr", "/usr"]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/lib32", "usr/lib32")):
        if os.path.islink(link) or os.path.isdir(link):
            line += ["--symlink", target, link] if os.path.islink(link) else ["--ro-bind", link, link]
    made: set[str] = set()
    for root in _python_roots():
        for folder in _ancestors(root + "/x"):
            if folder != root and folder not in made and not folder.startswith("/usr"):
                made.add(folder)
                line += ["--perms", "0755", "--dir", folder]
        line += ["--ro-bind", root, root]
    line += [
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "0755",
        "--dir",
        RUNNER_FOLDER,
        "--perms",
        "0444",
        "--ro-bind-data",
        str(script_fd),
        runner,
        *disk.arguments(),
        *(["--ro-bind", libraries, LIBRARIES_FOLDER] if libraries else []),
        *(["--perms", "0755", "--dir", "/var", "--ro-bind", code, CODE_FOLDER] if code else []),
        "--chdir",
        SANDBOX_HOME,
        "--seccomp",
        str(seccomp_fd),
        interpreter,
        "-I",
        "-S",
        "-B",
        runner,
        *arguments,
    ]
    if privileged():
        line += [str(NOBODY), str(NOBODY)]
    return line


def start(
    script: Path,
    disk: Disk,
    *,
    python: str,
    arguments: Sequence[str] = (),
    libraries: str | None = None,
    code: str | None = None,
) -> subprocess.Popen[bytes]:
    """The Python `script` running with `arguments` in a sandbox on `disk`, its stdin and stdout pipes to
    this process; `libraries` (a folder from `libraries()`) read-only at /libs, `code` (a folder: a tenant
    function's unzipped package) read-only at /var/task. SandboxUnavailable when this machine cannot
    sandbox; OSError when bwrap cannot start."""
    check()
    with _bwrap_input(filters().at_start) as seccomp_fd, _bwrap_input(_source(script)) as script_fd:
        line = _command(
            script.name,
            disk,
            seccomp_fd=seccomp_fd,
            script_fd=script_fd,
            python=python,
            arguments=arguments,
            libraries=libraries,
            code=code,
        )
        return _launcher.popen(line, (seccomp_fd, script_fd))


LIBRARIES_PREFIX = "pas-libraries-"


@functools.lru_cache(maxsize=4)
def libraries(names: tuple[str, ...], *, size_bytes: int = 256 * 1024 * 1024) -> str:
    """A host folder holding read-only copies of the installed top-level packages and modules `names`
    (entries of the environment's site-packages: `liquid`, `six.py`, `pillow.libs`), for `start` to bind
    at /libs: tenant code that needs a library (a template engine) gets it without the sandbox seeing
    the service's environment. Made once per process and set of names, and removed when the process
    exits. Run as root the copies live on a tmpfs the host mounts for the life of the process, so the
    sandbox's mounts name no host path (as with Disk); otherwise in a temporary folder. The folder's name
    carries the process id: one a killed process left is removed by the next process that makes one.
    Names not installed are left out."""
    import atexit

    from chalicelib.sandbox import runtimes

    try:
        site_packages = runtimes.site_packages()
    except RuntimeError as error:
        raise SandboxUnavailable(str(error)) from None
    _remove_orphaned_libraries()
    folder = tempfile.mkdtemp(prefix=f"{LIBRARIES_PREFIX}{os.getpid()}-")
    target = folder
    if privileged():
        target = os.path.join(folder, "libs")
        os.mkdir(target, 0o700)
        _mount_tmpfs(target, size_bytes, 100_000)
    atexit.register(_remove_libraries, folder)
    for name in names:
        source = os.path.join(site_packages, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(target, name), ignore=shutil.ignore_patterns("tests"))
        elif os.path.isfile(source):
            shutil.copy2(source, os.path.join(target, name))
    for root, _, files in os.walk(target):
        os.chmod(root, 0o755)
        for file in files:
            os.chmod(os.path.join(root, file), 0o444)
    return target


def _remove_libraries(folder: str) -> None:
    target = os.path.join(folder, "libs")
    if os.path.ismount(target):
        import ctypes

        ctypes.CDLL(None, use_errno=True).umount2(target.encode(), _MNT_DETACH)
    shutil.rmtree(folder, ignore_errors=True)


def remove_libraries() -> None:
    """This process's library folders, now: for a process that ends without its exit handlers (local/run.py);
    `libraries` makes them again if asked."""
    libraries.cache_clear()
    for folder in Path(tempfile.gettempdir()).glob(f"{LIBRARIES_PREFIX}{os.getpid()}-*"):
        _remove_libraries(str(folder))


def _remove_orphaned_libraries() -> None:
    """The library folders of processes that are gone (killed before their exit handlers ran)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{LIBRARIES_PREFIX}*-*"):
        pid = folder.name[len(LIBRARIES_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            _remove_libraries(str(folder))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@functools.lru_cache(maxsize=8)
def _source(script: Path) -> bytes:
    return script.read_bytes()


class _Launcher:
    """Starts every sandbox from one thread that lives as long as the process. `--die-with-parent` asks
    the kernel to kill the sandbox when its parent dies, and that parent is the *thread* that forked bwrap
    (PR_SET_PDEATHSIG): started from a request's thread, a warm process died with the request."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[list[str], tuple[int, ...], Future[subprocess.Popen[bytes]]]] = (
            queue.SimpleQueue()
        )
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
                started.set_result(
                    subprocess.Popen(
                        arguments,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL,
                        env={},
                        close_fds=True,
                        pass_fds=pass_fds,
                        start_new_session=True,
                    )
                )
            except BaseException as error:  # the caller's to handle (an OSError: bwrap cannot be run)
                started.set_exception(error)


_launcher = _Launcher()


@contextmanager
def _bwrap_input(data: bytes) -> Iterator[int]:
    """A file descriptor bwrap reads `data` from (passed to bwrap alone)."""
    with tempfile.TemporaryFile() as file:
        file.write(data)
        file.flush()
        file.seek(0)
        yield file.fileno()


@functools.lru_cache(maxsize=1)
def check() -> None:
    """Starts one empty sandbox (cached per process): SandboxUnavailable with the kernel's or bwrap's
    own words when namespaces, bubblewrap or libseccomp are missing."""
    program = filters().at_start
    try:
        disk = Disk({}, size_bytes=1024 * 1024, max_files=64)
    except OSError as error:
        raise SandboxUnavailable(f"the plugin sandbox cannot start on this machine ({error})") from None
    try:
        with _bwrap_input(program) as seccomp_fd, _bwrap_input(b"") as script_fd:
            arguments = _command("probe.py", disk, seccomp_fd=seccomp_fd, script_fd=script_fd, python=sys.executable)
            result = subprocess.run(
                arguments,
                pass_fds=(seccomp_fd, script_fd),
                env={},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
            )
    finally:
        disk.remove()
    if result.returncode != 0:
        said = result.stderr.decode("utf-8", "replace").strip()[-500:]
        raise SandboxUnavailable(
            f"the plugin sandbox cannot start on this machine ({said or result.returncode}); "
            "it needs Linux namespaces (unprivileged user namespaces when not root), "
            "seccomp and bubblewrap"
        )
