"""Finds the top-level functions of tenant Python modules for the host (sandbox/python_source.py), in a
process of its own: parsing hostile source can take gigabytes and seconds, which the service must not pay.

Standard library only, never imported by the service: run as `python -I -S -B python_source_child.py
MEMORY_BYTES CPU_SECONDS [UID GID]`, inside the sandbox (sandbox/kernel.py) where the machine has one.
Before it reads anything it drops to UID/GID when given (started as root by bwrap) and lowers its own
limits, which the kernel then enforces: address space, CPU seconds, no files written, no new processes.

stdin: one JSON object, module path -> source as base64. stdout: one JSON line per module, in the order
given, as soon as it is parsed: {"path", "functions": [name, ...]} or {"path", "error": text}. A module
whose parse needs more than CPU_SECONDS ends the process (SIGXCPU): the host blames the module that has
no line.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import resource
import sys

MB = 1024 * 1024


def limit(memory_bytes: int, cpu_seconds: int) -> None:
    for name, soft, hard in (
        ("RLIMIT_AS", memory_bytes, memory_bytes),
        ("RLIMIT_CPU", cpu_seconds, cpu_seconds + 1),
        ("RLIMIT_FSIZE", 0, 0),
        ("RLIMIT_NPROC", 0, 0),
        ("RLIMIT_CORE", 0, 0),
        ("RLIMIT_NOFILE", 16, 16),
    ):
        resource.setrlimit(getattr(resource, name), (soft, hard))


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise SystemExit("the parser could not drop its privileges")


def parsed(path: str, source: bytes, memory_bytes: int) -> dict[str, object]:
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        return {"path": path, "error": f"{path} line {error.lineno}: {error.msg}"}
    except MemoryError:
        return {
            "path": path,
            "error": f"{path}: cannot be parsed within the parser's limits ({memory_bytes // MB} MB of memory)",
        }
    except (ValueError, RecursionError) as error:
        return {"path": path, "error": f"{path}: cannot be parsed as Python: {error}"}
    return {"path": path, "functions": [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]}


def main(arguments: list[str]) -> None:
    if len(arguments) == 4:
        drop_privileges(int(arguments[2]), int(arguments[3]))
    memory_bytes, cpu_seconds = int(arguments[0]), int(arguments[1])
    limit(memory_bytes, cpu_seconds)
    modules = json.loads(sys.stdin.buffer.read())
    for path, encoded in modules.items():
        sys.stdout.write(json.dumps(parsed(path, base64.b64decode(encoded), memory_bytes)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
