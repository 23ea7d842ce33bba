"""The document renderer's process: renders one tenant template (Liquid or Velocity) and converts the
HTML to PDF, inside the kernel boundary of runtime/sandbox.py (the one plugins run in).

Never imported by the service: documents/rendering.py starts it as a script (`python -I -S -B
render_child.py [uid gid]`) with the template libraries read-only at /libs. Before it reads the
template it drops to an unprivileged user, lowers its resource limits (address space, CPU seconds, open
files, file size, no processes) and installs the host's second seccomp filter (no execve), as the
plugin process does (plugins/child.py; the three helpers are repeated here because each sandboxed script
is the only file of the service its sandbox sees).

Protocol: one JSON request on stdin (`engine`, `template`, `snippets`, `data`, `format`, `page`,
`fonts` (family -> path of its file on the read-only disk), `limits`, `seccomp`), one JSON answer on
stdout: `{"text": ...}` or `{"pdf": base64}`, or
`{"error": {"stage": "render" | "conversion", "message": ...}}`.

Templates are hostile. Velocity (airspeed) resolves names with getattr, so names starting with `_` are
refused (`$x.__class__` renders nothing); Liquid reaches no Python attribute by design. The PDF converter
is given a resource policy that fetches nothing: every URL (http, file, relative, CSS @import, fonts,
images) resolves to nothing, and only `data:` URIs and the custom fonts' files the host put on the
read-only disk are read. The kernel boundary holds whatever happens.
"""
from __future__ import annotations

import base64
import io
import json
import os
import sys
from typing import Any

LIBRARIES = "/libs"


def drop_privileges(arguments: list[str]) -> None:
    if not arguments:
        return
    uid, gid = int(arguments[0]), int(arguments[1])
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise SystemExit("the renderer could not drop its privileges")


def apply_limits(limits: dict[str, int]) -> None:
    import resource

    def cap(name: str, soft: int, hard: int | None = None) -> None:
        resource.setrlimit(getattr(resource, name), (soft, soft if hard is None else hard))

    cap("RLIMIT_AS", limits["memory_bytes"])
    cap("RLIMIT_CPU", limits["cpu_seconds"], limits["cpu_seconds"] + 1)
    cap("RLIMIT_NOFILE", limits["max_open_files"])
    cap("RLIMIT_FSIZE", limits["max_file_bytes"])
    cap("RLIMIT_CORE", 0)
    cap("RLIMIT_NPROC", 0)


def install_seccomp(program: bytes) -> None:
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    if not program or len(program) % 8:
        raise SystemExit("the renderer got a malformed seccomp program")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise SystemExit(f"the renderer could not install its seccomp filter: errno {ctypes.get_errno()}")


class Failed(Exception):
    def __init__(self, stage: str, message: str):
        super().__init__(message)
        self.stage = stage
        self.message = message


def render_liquid(template: str, snippets: dict[str, str], data: dict[str, Any]) -> str:
    import liquid

    environment = liquid.Environment(loader=liquid.DictLoader(snippets))
    return environment.from_string(template).render(**data)


def render_velocity(template: str, snippets: dict[str, str], data: dict[str, Any]) -> str:
    import airspeed  # type: ignore[import-untyped]

    calculate = airspeed.NameOrCall.calculate

    def guarded(self: Any, current_object: Any, loader: Any, top_namespace: Any) -> Any:
        if self.name.startswith("_"):
            return None
        return calculate(self, current_object, loader, top_namespace)

    airspeed.NameOrCall.calculate = guarded

    class Snippets:
        def load_template(self, name: str) -> Any:
            if name not in snippets:
                raise Failed("render", f"no template snippet named {name!r}")
            return airspeed.Template(snippets[name], name)

        def load_text(self, name: str) -> str:
            if name not in snippets:
                raise Failed("render", f"no template snippet named {name!r}")
            return snippets[name]

    return str(airspeed.Template(template).merge(data, loader=Snippets()))


def page_style(page: dict[str, Any]) -> str:
    size = str(page.get("pageSize") or "letter")
    orientation = "portrait" if page.get("portrait", True) else "landscape"
    margin = page.get("margin") or "0.75in"
    return f"<style>@page {{ size: {size} {orientation}; margin: {margin}; }}</style>"


def font_faces(fonts: dict[str, str]) -> str:
    """@font-face rules naming the custom fonts' files on the read-only disk."""
    rules = "".join(f'@font-face {{ font-family: "{name}"; src: url("{path}"); }}' for name, path in fonts.items())
    return f"<style>{rules}</style>" if rules else ""


def to_pdf(html: str, page: dict[str, Any], fonts: dict[str, str]) -> bytes:
    from xhtml2pdf import files, pisa  # type: ignore[import-untyped]

    readable = frozenset(fonts.values())

    def fetch_nothing(uri: Any, basepath: Any = None, policy: Any = None) -> Any:
        if isinstance(uri, str) and uri.startswith("data:"):
            return files.B64InlineURI(uri, None, policy)
        if isinstance(uri, str) and uri in readable:
            return files.LocalFileURI(uri, None, policy)
        return files.LocalTmpFile(None, None, policy)

    files.FileNetworkManager.get_manager = staticmethod(fetch_nothing)
    output = io.BytesIO()
    result = pisa.CreatePDF(page_style(page) + font_faces(fonts) + html, dest=output,
                            link_callback=lambda uri, rel: "", encoding="utf-8")
    if result.err:
        raise Failed("conversion", f"the HTML could not be converted to PDF ({result.err} errors)")
    return output.getvalue()


def run(request: dict[str, Any]) -> dict[str, Any]:
    engine, template = request["engine"], request["template"]
    snippets, data = request.get("snippets") or {}, request.get("data") or {}
    try:
        text = (render_velocity if engine == "velocity" else render_liquid)(template, snippets, data)
    except Failed:
        raise
    except MemoryError:
        raise Failed("render", "the template used more memory than allowed") from None
    except RecursionError:
        raise Failed("render", "the template nests too deeply") from None
    except Exception as error:
        raise Failed("render", f"{type(error).__name__}: {error}"[:1000]) from None
    if len(text.encode("utf-8")) > request["limits"]["max_output_bytes"]:
        raise Failed("render", f"the rendered text is larger than {request['limits']['max_output_bytes']} bytes")
    if request["format"] != "pdf":
        return {"text": text}
    try:
        pdf = to_pdf(text, request.get("page") or {}, request.get("fonts") or {})
    except Failed:
        raise
    except MemoryError:
        raise Failed("conversion", "the conversion used more memory than allowed") from None
    except Exception as error:
        raise Failed("conversion", f"{type(error).__name__}: {error}"[:1000]) from None
    if len(pdf) > request["limits"]["max_output_bytes"]:
        raise Failed("conversion", f"the PDF is larger than {request['limits']['max_output_bytes']} bytes")
    return {"pdf": base64.b64encode(pdf).decode("ascii")}


def serve() -> None:
    channel_out = os.dup(1)
    from decimal import Decimal

    request = json.loads(sys.stdin.buffer.read(), parse_float=Decimal)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # a library printing must not touch the answer
    apply_limits(request["limits"])
    os.environ.clear()
    if request.get("seccomp"):
        install_seccomp(base64.b64decode(request["seccomp"]))
    for name in [name for name in sys.modules if name == "ctypes" or name.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    sys.path.insert(0, LIBRARIES)
    sys.setrecursionlimit(2000)
    try:
        answer = run(request)
    except Failed as failed:
        answer = {"error": {"stage": failed.stage, "message": failed.message}}
    data = json.dumps(answer).encode("utf-8")
    while data:
        data = data[os.write(channel_out, data):]


if __name__ == "__main__":
    drop_privileges(sys.argv[1:])
    serve()
