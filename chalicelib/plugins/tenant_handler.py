"""The tenant function's handler (Lambda handler `tenant_handler.handler`): the tenant's plugins and its
document templates, both tenant code, run here on AWS. Standard library only, never imported by the service.

The function's package (plugins/tenant_code.py builds it) holds this file, the plugin child (child.py) and
the renderer (render_child.py) at its root, the renderer's libraries beside them, and the tenant's
`plugins/python/` folder. Two kinds of event:

    {"message": "<plugin protocol>"}             child.lambda_handler (the replay protocol, plugins/child.py)
                                                 -> {"message": "<its answer>"}
    {"render": "<request>", "files": {path: b64}}  render_child.run: `request` is byte for byte what the local
                                                 renderer reads on its stdin, `files` its disk (the custom fonts
                                                 under plugins/fonts/, written to a scratch folder here)
                                                 -> {"render": "<answer>"}, byte for byte what the local
                                                 renderer writes on its stdout
    {"imports": true}                            every plugin module imported (child.import_errors)
                                                 -> {"imports": "<JSON list of why those that fail do>"}

Run as a script (`python -I -S -B tenant_handler.py [uid gid]`), it is the same handler inside the local
sandbox (plugins/local_lambda.py): the function's unzipped package read-only at /var/task (as on Lambda),
the layer's libraries at /libs; on stdin a line of setup (`{"memory_bytes"}`, the function's memory as an
address-space limit) then the event; on stdout `{"payload": <the handler's answer>}` or
`{"error": {"errorType", "errorMessage"}}`, as Lambda would answer it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import tempfile
from decimal import Decimal
from typing import Any

SANDBOX_HOME = "/sandbox/"
"""Where the local renderer's disk lies (sandbox/kernel.py SANDBOX_HOME): a request names its fonts there."""


def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    if "render" in event:
        return {"render": render(event["render"], event.get("files") or {})}
    import child  # type: ignore[import-not-found]

    if "imports" in event:
        return {"imports": json.dumps(child.import_errors())}
    answer: dict[str, str] = child.lambda_handler(event, context)
    return answer


def render(request_text: str, files: dict[str, str]) -> str:
    import render_child  # type: ignore[import-not-found]

    request = json.loads(request_text, parse_float=Decimal)
    disk = tempfile.mkdtemp(prefix="pas-render-")
    try:
        for path, content in files.items():
            parts = path.split("/")
            if parts[0] != "plugins" or ".." in parts or path.startswith("/"):
                continue
            target = os.path.join(disk, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as file:
                file.write(base64.b64decode(content))
        request["fonts"] = {
            name: os.path.join(disk, path[len(SANDBOX_HOME) :]) if path.startswith(SANDBOX_HOME) else path
            for name, path in (request.get("fonts") or {}).items()
        }
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(2000)  # as the local renderer runs
        try:
            answer = render_child.run(request)
        except render_child.Failed as failed:
            answer = {"error": {"stage": failed.stage, "message": failed.message}}
        finally:
            sys.setrecursionlimit(limit)
        return json.dumps(answer)
    finally:
        shutil.rmtree(disk, ignore_errors=True)


def _serve_locally(arguments: list[str]) -> None:
    """One invocation in the local sandbox (see the module docstring)."""
    if arguments:
        uid, gid = int(arguments[0]), int(arguments[1])
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid):
            raise SystemExit("the tenant function could not drop its privileges")
    channel_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the code prints goes nowhere, as it goes to the function's log on Lambda
    setup_line, _, payload = sys.stdin.buffer.read().partition(b"\n")
    setup, event = json.loads(setup_line), json.loads(payload)
    import resource

    memory = int(setup.get("memory_bytes", 0))
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.environ.clear()
    os.environ["LAMBDA_TASK_ROOT"] = "/var/task"
    sys.path[:0] = ["/var/task", "/libs"]  # the package, then the layer's libraries (/opt/python on Lambda)
    try:
        answer: dict[str, Any] = {"payload": handler(event, None)}
    except MemoryError:
        answer = {"error": {"errorType": "Runtime.OutOfMemory", "errorMessage": "Runtime exited: out of memory"}}
    except BaseException as error:  # what Lambda answers for an unhandled exception
        answer = {"error": {"errorType": type(error).__name__, "errorMessage": str(error)[:1000]}}
    data = json.dumps(answer).encode("utf-8")
    while data:
        data = data[os.write(channel_out, data) :]


if __name__ == "__main__":
    _serve_locally(sys.argv[1:])
