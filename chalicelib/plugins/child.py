"""The plugin process: runs a tenant's `plugins/python/` functions for the host, one call at a time.

Standard library only, never imported by the service: the local runner starts it as a script
(`python -I -S -B child.py`), and the per-tenant plugin Lambda uses `lambda_handler` below.

Local protocol, JSON lines (numbers exact: the host sends Decimal text, this side parses non-integers
as Decimal and writes Decimals back as JSON numbers):

    host -> child  {"root": ".", "limits": {...}}                      once, first
    child -> host  {"ready": true}                                     limits and sandbox in force
    host -> child  {"call": "rate_Auto", "request": {...}, "now": "2026-...Z"}
    child -> host  {"pas": "lookup" | "range_lookup", "table", "key", "date", ["bound"]}   any number
    host -> child  {"value": ...} | {"error": "message"}               the host's answer to each
    child -> host  {"cpu": s, "answer": {"result": {...}} | {"failure": {"reason", "detail"}}}

What the process does, in this order, before any plugin code runs: started as root by bwrap it first
drops to an unprivileged user (sandbox/kernel.py describes the namespaces, mounts and the first seccomp
filter it runs under); it lowers its own resource limits (address space, CPU seconds for the
process's life, open files, file size, no core files, no new processes), empties `os.environ`,
installs the host's second seccomp filter (no execve), indexes the plugin functions by parsing
(never running) the modules, and, unless the host asks otherwise, installs the audit hook described
next. It then reports ready.

The audit hook is a second line, a tripwire that explains a refusal early and readably: it refuses
opening files outside the plugin directory, the standard library and the time zone database (or for
writing outside the plugin directory), listing other directories, changing files outside it,
sockets, new processes, signals, ctypes, sqlite and syslog, changing resource limits, and the gc
walks that reach every object. CPython's documentation says hooks cannot contain code that works
around them on purpose (rebinding this module's globals, object internals), and a plugin can: the
boundary that holds then is the kernel's (namespaces, seccomp, unprivileged user, rlimits, tmpfs
quota; tests/plugins/test_sandbox_boundary.py proves it with the hook off and with the hook defeated).
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Callable
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

PLUGIN_FOLDER = ("plugins", "python")
MAX_DETAIL = 1000
MAX_BATCH = 100
"""Keys of one `pas.lookups` (what one replay step of the tenant function carries is bounded)."""


class SandboxRefused(PermissionError):
    """An operation the plugin sandbox does not allow."""


class _Unanswered(BaseException):
    """A pas call the Lambda host has not answered yet (BaseException: a plugin's `except Exception`
    must not swallow it)."""


# --- exact JSON ----------------------------------------------------------------------------------


def encode(value: Any) -> str:
    """JSON text with Decimals written exactly; anything that is not JSON raises TypeError/ValueError."""
    parts: list[str] = []
    _encode(value, parts, "answer")
    return "".join(parts)


def _encode(value: Any, parts: list[str], where: str) -> None:
    if value is None or isinstance(value, (bool, str)):
        parts.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"{where} is {value}, which JSON cannot carry")
        parts.append(str(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where} is {value}, which JSON cannot carry")
        parts.append(float.__repr__(value))
    elif isinstance(value, dict):
        parts.append("{")
        for position, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"{where} has the key {key!r}; JSON object keys are strings")
            parts.append(("," if position else "") + json.dumps(key, ensure_ascii=False) + ":")
            _encode(item, parts, f"{where}.{key}")
        parts.append("}")
    elif isinstance(value, (list, tuple)):
        parts.append("[")
        for position, item in enumerate(value):
            parts.append("," if position else "")
            _encode(item, parts, f"{where}[{position}]")
        parts.append("]")
    else:
        raise TypeError(f"{where} is of type {type(value).__name__}, which is not JSON")


def decode(text: str | bytes) -> Any:
    return json.loads(text, parse_float=Decimal)


# --- the pas module ------------------------------------------------------------------------------


class PasError(Exception):
    """The host refused a pas call (an unknown table, a malformed key)."""


class _Pas:
    """Behind `import pas`: asks the host through `ask`, a function of the current mode."""

    def __init__(self) -> None:
        self.ask: Callable[[dict[str, Any]], Any] = _no_call
        self.ask_all: Callable[[list[dict[str, Any]]], list[Any]] = lambda calls: [self.ask(call) for call in calls]
        """Several calls at once: one by one locally; in one replay step in the tenant function."""
        self.now = datetime.now(timezone.utc)

    def module(self) -> Any:
        import types

        module = types.ModuleType("pas", "The platform's API for plugins: table lookups and the current time.")
        module.PasError = PasError  # type: ignore[attr-defined]
        module.lookup = self.lookup  # type: ignore[attr-defined]
        module.range_lookup = self.range_lookup  # type: ignore[attr-defined]
        module.lookups = self.lookups  # type: ignore[attr-defined]
        module.now = lambda: self.now  # type: ignore[attr-defined]
        return module

    def lookup(self, table: str, key: list[str], date: Any = None) -> Any:
        """The row of `table` whose key columns equal `key` (its non-key columns by name), or None."""
        return self.ask({"pas": "lookup", "table": _table(table), "key": _key(key), "date": _date(date)})

    def lookups(self, table: str, keys: list[list[str]], date: Any = None) -> list[Any]:
        """`lookup(table, key, date)` of each key, in their order, asked of the host together: in the tenant
        function one invocation answers them all, where one `lookup` after another costs one each."""
        if not isinstance(keys, (list, tuple)) or len(keys) > MAX_BATCH:
            raise TypeError(f"pas.lookups: keys must be a list of at most {MAX_BATCH} keys")
        return self.ask_all(
            [{"pas": "lookup", "table": _table(table), "key": _key(key), "date": _date(date)} for key in keys]
        )

    def range_lookup(self, table: str, key: list[str], bound: Any, date: Any = None) -> Any:
        """The row of range table `table` for `key` whose range holds `bound`, or None."""
        if isinstance(bound, bool) or not isinstance(bound, (int, float, Decimal)):
            raise TypeError(f"pas.range_lookup: bound must be a number, not {type(bound).__name__}")
        exact = Decimal(repr(bound)) if isinstance(bound, float) else Decimal(bound)
        return self.ask(
            {"pas": "range_lookup", "table": _table(table), "key": _key(key), "bound": exact, "date": _date(date)}
        )


def _no_call(message: dict[str, Any]) -> Any:
    raise PasError("pas is only available while a plugin function runs")


def _table(table: Any) -> str:
    if not isinstance(table, str) or not table:
        raise TypeError("pas: table must be a table name")
    return table


def _key(key: Any) -> list[str]:
    if not isinstance(key, (list, tuple)) or not all(isinstance(part, str) for part in key):
        raise TypeError("pas: key must be a list of strings")
    return list(key)


def _date(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return aware.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError("pas: date must be a datetime, a date or an ISO-8601 string")


def _parse_now(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- plugin functions ----------------------------------------------------------------------------


class Plugins:
    """The plugin functions under `root`/plugins/python: indexed by parsing, imported on first use."""

    def __init__(self, root: str):
        self.folder = os.path.join(root, *PLUGIN_FOLDER)
        self.modules: dict[str, str] = {}
        self.loaded: dict[str, Callable[..., Any]] = {}
        self._index()

    def _index(self) -> None:
        if not os.path.isdir(self.folder):
            return
        paths = []
        for directory, folders, files in os.walk(self.folder):
            folders.sort()
            paths += [os.path.join(directory, name) for name in files if name.endswith(".py")]
        for path in sorted(paths):
            relative = os.path.relpath(path, self.folder)[:-3]
            with open(path, "rb") as source:
                try:
                    tree = ast.parse(source.read(), filename=path)
                except (SyntaxError, ValueError):
                    continue  # deployment refuses such a module; here its functions are just missing
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    self.modules.setdefault(node.name, relative.replace(os.sep, "."))

    def function(self, name: str) -> Callable[..., Any] | None:
        if name not in self.loaded:
            module_name = self.modules.get(name)
            if module_name is None:
                return None
            import importlib

            found = getattr(importlib.import_module(module_name), name, None)
            if not callable(found):
                return None
            self.loaded[name] = found
        return self.loaded[name]


def run(plugins: Plugins, function_name: str, request: Any) -> str:
    """One call, answered as the JSON text of {"result": ...} or {"failure": {"reason", "detail"}}."""
    try:
        function = plugins.function(function_name)
        if function is None:
            return _failure("missing", f"no function {function_name} in plugins/python")
        result = function(request)
    except _Unanswered:
        raise
    except MemoryError:
        return _failure("memory_limit", "it ran out of memory (the plugin process's memory limit)")
    except BaseException as error:  # the plugin's own failure, whatever it is, is an answer
        reason = "refused" if _refused(error) else "exception"
        return _failure(reason, _describe(error, plugins.folder))
    if not isinstance(result, dict):
        return _failure("malformed", f"it returned {type(result).__name__}; a JSON object (dict) is expected")
    try:
        return encode({"result": result})
    except (TypeError, ValueError, RecursionError) as error:
        return _failure("malformed", f"its answer is not JSON: {error}")
    except MemoryError:
        return _failure("memory_limit", "its answer does not fit in the plugin process's memory limit")


def _failure(reason: str, detail: str) -> str:
    return encode({"failure": {"reason": reason, "detail": detail[:MAX_DETAIL]}})


def _refused(error: BaseException | None) -> bool:
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, SandboxRefused):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def _describe(error: BaseException, folder: str) -> str:
    """`Type: message (plugins/python/x.py line N)`, naming the innermost plugin line."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    where = None
    trace = error.__traceback__
    while trace is not None:
        path = trace.tb_frame.f_code.co_filename
        if path.startswith(folder + os.sep):
            where = f"{'/'.join(PLUGIN_FOLDER)}/{os.path.relpath(path, folder)} line {trace.tb_lineno}"
        trace = trace.tb_next
    return f"{text} ({where})" if where else text


# --- the local sandbox ---------------------------------------------------------------------------


def apply_limits(limits: dict[str, int]) -> None:
    import resource

    def cap(name: str, soft: int, hard: int | None = None) -> None:
        resource.setrlimit(getattr(resource, name), (soft, soft if hard is None else hard))

    cap("RLIMIT_AS", limits["memory_bytes"])
    cap("RLIMIT_CPU", limits["cpu_seconds"], limits["cpu_seconds"] + 1)  # soft: SIGXCPU, hard: SIGKILL
    cap("RLIMIT_NOFILE", limits["max_open_files"])
    cap("RLIMIT_FSIZE", limits["max_file_bytes"])
    cap("RLIMIT_CORE", 0)
    cap("RLIMIT_NPROC", 0)


_REFUSED_PREFIXES = (
    "socket.",
    "subprocess.",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.fork",
    "os.forkpty",
    "os.system",
    "os.kill",
    "os.killpg",
    "os.symlink",
    "pty.",
    "ctypes.",
    "sqlite3.",
    "syslog.",
    "resource.setrlimit",
    "resource.prlimit",
    "signal.pthread_kill",
    "gc.get_",
    "sys._current_frames",
    "sys.remote_exec",
)
_REFUSED_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "_posixsubprocess",
        "_xxsubinterpreters",
        "_testcapi",
        "_testinternalcapi",
        "sqlite3",
        "_sqlite3",
    }
)
_CHANGES = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.utime",
        "os.link",
        "os.chflags",
        "os.lchflags",
        "os.lchmod",
        "os.lchown",
        "os.chdir",
        "os.setxattr",
        "os.removexattr",
        "shutil.rmtree",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def install_sandbox(root: str) -> None:
    """Replace `socket.socket` and install the audit hook (see the module docstring)."""
    import socket
    import zoneinfo

    class RefusedSocket(socket.socket):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise SandboxRefused("the plugin sandbox has no network")

    socket.socket = RefusedSocket  # type: ignore[misc]
    home = os.path.realpath(root)
    readable = tuple(os.path.realpath(path) for path in [*sys.path, *zoneinfo.TZPATH] if os.path.isdir(path))
    readable = (home, *readable)
    writable = (home,)

    def inside(path: Any, roots: tuple[str, ...]) -> bool:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return False  # file descriptors, path-likes the interpreter did not turn into str
        real = os.path.realpath(path)
        return any(real == top or real.startswith(top + os.sep) for top in roots)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, _, flags = args
            roots = writable if isinstance(flags, int) and flags & _WRITE_FLAGS else readable
            if not inside(path, roots):
                raise SandboxRefused(f"the plugin sandbox refuses to open {path!r}")
        elif event in ("os.listdir", "os.scandir"):
            if not inside("." if args[0] is None else args[0], readable):
                raise SandboxRefused(f"the plugin sandbox refuses to list {args[0]!r}")
        elif event in _CHANGES:
            paths = [arg for arg in args if isinstance(arg, (str, bytes))] or [args[0]]
            if not all(inside(path, writable) for path in paths):
                raise SandboxRefused(f"the plugin sandbox refuses {event} outside its directory")
        elif event == "import":
            if args[0] in _REFUSED_IMPORTS:
                raise SandboxRefused(f"the plugin sandbox refuses to import {args[0]}")
        elif event.startswith(_REFUSED_PREFIXES):
            raise SandboxRefused(f"the plugin sandbox refuses {event}")

    sys.addaudithook(hook)


def drop_privileges(arguments: list[str]) -> None:
    """Started as root by bwrap (with only CAP_SETUID/CAP_SETGID), become `uid`/`gid` for good: a
    change of every user id away from 0 also clears every capability."""
    if not arguments:
        return
    uid, gid = int(arguments[0]), int(arguments[1])
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise SystemExit("the plugin process could not drop its privileges")


def install_seccomp(program: bytes) -> None:
    """Load a seccomp BPF program (built by the host with libseccomp) into the kernel. Once loaded it
    applies to this process for the rest of its life; nothing in it can lift the filter."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    if not program or len(program) % 8:
        raise SystemExit("the plugin process got a malformed seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if (
        libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0
        or libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0
    ):
        raise SystemExit(f"the plugin process could not install its seccomp filter: errno {ctypes.get_errno()}")
    for name in [name for name in sys.modules if name == "ctypes" or name.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]  # a plugin's `import ctypes` goes through the import machinery (and the hook)


def _cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return round(usage.ru_utime + usage.ru_stime, 3)


def serve() -> None:
    """The local child's main loop (see the protocol in the module docstring)."""
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # a plugin reading stdin or printing must not touch the channel
    os.dup2(2, 1)
    os.close(devnull)

    def send(text: str) -> None:
        data = (text + "\n").encode("utf-8")
        while data:
            data = data[os.write(channel_out, data) :]

    def receive() -> Any:
        line = channel_in.readline()
        if not line:
            raise SystemExit(0)  # the host closed the channel
        return decode(line)

    setup = receive()
    apply_limits(setup["limits"])
    os.environ.clear()
    if setup.get("seccomp"):
        import base64

        install_seccomp(base64.b64decode(setup["seccomp"]))
    root = os.path.realpath(setup["root"])
    plugins = Plugins(root)
    pas = _Pas()
    sys.modules["pas"] = pas.module()
    sys.path.append(plugins.folder)
    if setup.get("auditHook", True):
        install_sandbox(root)

    def ask(message: dict[str, Any]) -> Any:
        send(encode(message))
        answer = receive()
        if "error" in answer:
            raise PasError(answer["error"])
        return answer["value"]

    pas.ask = ask
    send(encode({"ready": True}))
    while True:
        call = receive()
        pas.now = _parse_now(call["now"])
        answer = run(plugins, call["call"], call["request"])
        send(f'{{"cpu": {_cpu_seconds()!r}, "answer": {answer}}}')


# --- the per-tenant Lambda -----------------------------------------------------------------------

_lambda_plugins: Plugins | None = None
_pas_for_lambda = _Pas()


def _lambda_setup() -> Plugins:
    global _lambda_plugins
    if _lambda_plugins is None:
        _lambda_plugins = Plugins(os.environ.get("LAMBDA_TASK_ROOT") or os.getcwd())
        sys.modules["pas"] = _pas_for_lambda.module()
        sys.path.append(_lambda_plugins.folder)
    return _lambda_plugins


def import_errors() -> list[str]:
    """Each plugin module of the function imported, as a call would: why those that fail do (naming the file
    and line). The publish job asks this of a version before its alias exists (plugins/tenant_code.py)."""
    import importlib

    plugins = _lambda_setup()
    _pas_for_lambda.ask = _no_call
    errors = []
    for module_name in sorted(set(plugins.modules.values())):
        try:
            importlib.import_module(module_name)
        except BaseException as error:  # whatever a module raises as it is imported makes it unusable
            errors.append(_describe(error, plugins.folder)[:MAX_DETAIL])
    return errors


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    """The per-tenant plugin function. A Lambda cannot call back into the service, so pas calls are
    replayed: the event carries the answers the host has given so far; a call without an answer ends
    this run with {"need": [call]}, and the host invokes again with that answer added. Plugin
    functions are deterministic in their request, their pas answers and `pas.now()`, so each replay
    follows the same path up to the first unanswered call.

    Event and answer are {"message": "<JSON text>"} so numbers stay exact; the message is
    {"call", "request", "now", "answers": [[call, {"value"} | {"error"}], ...]}, the answer
    {"result"} | {"failure"} as in the local protocol, or {"need": [call]}."""
    plugins = _lambda_setup()
    message = decode(event["message"])
    answers = {encode(call): answer for call, answer in message.get("answers", [])}
    needed: list[dict[str, Any]] = []

    def ask_all(calls: list[dict[str, Any]]) -> list[Any]:
        missing = [call for call in calls if encode(call) not in answers]
        if missing:
            if not needed:  # after a swallowed unanswered call the plugin's path cannot be trusted: the first only
                needed.extend(missing)
            raise _Unanswered()
        found = [answers[encode(call)] for call in calls]
        for answer in found:
            if "error" in answer:
                raise PasError(answer["error"])
        return [answer["value"] for answer in found]

    _pas_for_lambda.ask = lambda call: ask_all([call])[0]
    _pas_for_lambda.ask_all = ask_all
    _pas_for_lambda.now = _parse_now(message["now"])
    try:
        answer = run(plugins, message["call"], message["request"])
    except _Unanswered:
        answer = ""
    if needed:  # even when the plugin swallowed the unanswered call, its answer cannot be trusted
        answer = encode({"need": needed})
    return {"message": answer}


if __name__ == "__main__":
    drop_privileges(sys.argv[1:])
    serve()
