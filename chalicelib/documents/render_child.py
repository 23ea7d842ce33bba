"""The document renderer's process: renders one tenant template (Liquid or Velocity) and converts the
HTML to PDF, inside the kernel boundary of sandbox/kernel.py (the one plugins run in).

Never imported by the service: documents/rendering.py starts it as a script (`python -I -S -B
render_child.py [uid gid]`) with the template libraries read-only at /libs. Before it reads the
template it drops to an unprivileged user, lowers its resource limits (address space, CPU seconds, open
files, file size, no processes) and installs the host's second seccomp filter (no execve), as the
plugin process does (plugins/child.py; the three helpers are repeated here because each sandboxed script
is the only file of the service its sandbox sees).

Protocol: on stdin, one line of this machine's setup (`{"seccomp": base64, "preload": bool}`: with `preload`
the libraries are imported as soon as the line is read, while the request has not come, and a newline on
stdout says they are) then the JSON request
(`engine`, `template`, `snippets`, `data`, `format`, `page`, `fonts` (family -> path of its file on the
read-only disk), `limits`); one JSON answer on stdout: `{"text": ...}` or `{"pdf": base64}`, or
`{"error": {"stage": "render" | "conversion", "message": ...}}`. The request and the answer are byte for
byte those of the tenant function (plugins/tenant_handler.py), where `run` renders the same request.

Both engines see the rendering data as `data` (the platform's name) and its top-level keys as variables.

Templates are hostile. Velocity (airspeed) resolves names with getattr; here it resolves map keys and a
fixed set of Java methods over plain data instead (velocity_as_java), so no route leads from a value to
a Python attribute; Liquid reads items only by design (its loop drops expose their listed keys). The
PDF converter is given a resource policy that fetches nothing: every URL (http, file, relative, CSS
@import, fonts, images) resolves to nothing, and only `data:` URIs and the custom fonts' files the host
put on the read-only disk are read. The kernel boundary holds whatever happens.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import sys
from collections.abc import Callable
from decimal import Decimal
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
    return environment.from_string(template).render(**namespace_of(data))


def namespace_of(data: dict[str, Any]) -> dict[str, Any]:
    """The template's variables: the rendering data as `data` (the platform's name), and each of its
    top-level keys."""
    return {**data, "data": data}


def render_velocity(template: str, snippets: dict[str, str], data: dict[str, Any]) -> str:
    import airspeed  # type: ignore[import-untyped]

    velocity_as_java(airspeed)

    class Snippets:
        def load_template(self, name: str) -> Any:
            if name not in snippets:
                raise Failed("render", f"no template snippet named {name!r}")
            return airspeed.Template(snippets[name], name)

        def load_text(self, name: str) -> str:
            if name not in snippets:
                raise Failed("render", f"no template snippet named {name!r}")
            return snippets[name]

    return str(airspeed.Template(template).merge(namespace_of(data), loader=Snippets()))


# --- Velocity over plain data, as Java's engine sees it, and nothing of Python ---------------------------
#
# airspeed resolves `$x.name` with getattr and calls whatever it finds, so every Python method of a
# value (str.format, dict.get, ...) and every attribute path behind them would be the template's. Here
# a name is a map's key and nothing else, and `$x.name(...)` is one of the Java methods below for the
# value's type, written over the value: a template reaches the rendering data and what these answer
# (plain strings, numbers, booleans, lists and maps), never a Python object. Names starting with `_`
# resolve to nothing, as before. Values print as Java prints them (true, [a, b], {k=v}), `%` `-` `*`
# `/` take numbers only (no `'%s' % $x`, no `'x' * 10**9`), `+` adds numbers or joins text, `$$x`
# is a dollar sign before `$x`, and #foreach over a map walks its values.


def velocity_as_java(airspeed: Any) -> None:
    definition = airspeed._FunctionDefinition

    def run(found: Any, arguments: list[Any], namespace: Any, loader: Any) -> str:
        stream = airspeed.StoppableStream()
        found.execute_function(stream, namespace, arguments, loader)
        return str(stream.getvalue())

    def name_or_call(self: Any, current: Any, loader: Any, top_namespace: Any) -> Any:
        if self.name.startswith("_"):
            return None
        if self.parameters is not None:
            arguments = self.parameters.calculate(top_namespace, loader)
            if isinstance(current, airspeed.LocalNamespace):  # `$macroLike(...)`: a #define'd block only
                found = property_of(current, self.name)
                return run(found, arguments, top_namespace, loader) if isinstance(found, definition) else None
            result = call_method(current, self.name, arguments)
        else:
            result = property_of(current, self.name)
            if isinstance(result, definition):
                return run(result, [], top_namespace, loader)
        if self.index is not None:
            result = item_of(result, self.index.calculate(top_namespace, loader))
        return result

    def sub_expression(self: Any, current: Any, loader: Any, global_namespace: Any) -> Any:
        if not isinstance(self.expression, airspeed.ArrayIndex):
            return self.expression.calculate(current, loader, global_namespace)
        result = item_of(current, self.expression.calculate(current, loader))
        if self.subexpression:
            result = self.subexpression.calculate(result, loader, global_namespace)
        return result

    def reference(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
        value = self.expression.calculate(namespace, loader) if self.expression is not None else None
        if value is None and self.alternate is not None:
            value = self.alternate.calculate(namespace, loader)
        if value is None:
            stream.write("" if self.silent and self.expression is not None else self.my_text())
        else:
            stream.write(java_text(value))

    def foreach(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
        iterable = self.value.calculate(namespace, loader)
        if iterable is None:
            return
        if isinstance(iterable, dict):
            iterable = list(iterable.values())
        if not isinstance(iterable, (list, range)):
            raise ValueError(f"#foreach needs a list or a map, not {java_type(iterable)}")
        length = len(iterable)
        for counter, item in enumerate(iterable, start=1):
            local = airspeed.LocalNamespace(namespace)
            local["velocityCount"] = counter
            local["velocityHasNext"] = counter < length
            local["foreach"] = {
                "count": counter,
                "index": counter - 1,
                "hasNext": counter < length,
                "first": counter == 1,
                "last": counter == length,
            }
            local[self.loop_var_name] = item
            self.block.evaluate(stream, local, loader)

    airspeed.NameOrCall.calculate = name_or_call
    airspeed.SubExpression.calculate = sub_expression
    airspeed.FormalReference.evaluate_raw = reference
    airspeed.ForeachDirective.evaluate_raw = foreach
    airspeed.__additional_methods__.clear()
    airspeed.BinaryOperator.OPERATORS.update(
        {
            "%": remainder,
            "+": plus,
            "-": lambda a, b: number(a) - number(b),
            "*": lambda a, b: number(a) * number(b),
            "/": divide,
        }
    )
    airspeed.Text.PLAIN = re.compile(  # airspeed's, but `$` before `$` is one character of text
        r"((?:[^\\\$#]+|\\[\$#])+|\$(?=\$)|\$[^!\{a-z0-9_$]|\$$|#$|#[^\{\}a-zA-Z0-9#\*]+|\\.)", re.S + re.I
    )


def property_of(value: Any, name: str) -> Any:
    """`$value.name`: a map's entry; over a list, the entries of its maps (lists of them joined)."""
    if isinstance(value, dict):
        try:
            return value[name]
        except KeyError:
            return None
    if isinstance(value, list):
        found: list[Any] = []
        named = False
        for element in value:
            if isinstance(element, dict) and name in element:
                named = True
                entry = element[name]
                if isinstance(entry, list):
                    found.extend(entry)
                else:
                    found.append(entry)
        return found if named else None
    return None


def item_of(value: Any, key: Any) -> Any:
    """`$value[key]`: a list's or a string's element by its number, a map's entry by its key."""
    if isinstance(value, (list, str)) and type(key) is int:
        return value[key] if -len(value) <= key < len(value) else None
    if isinstance(value, dict) and isinstance(key, (str, int)):
        return value.get(key)
    return None


def java_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, (int, float, Decimal)):
        return "Number"
    names: dict[type, str] = {str: "String", list: "List", range: "List", dict: "Map"}
    return names.get(type(value), "Object")


def java_text(value: Any) -> str:
    """A value as Java's toString shows it; anything that is not data shows nothing."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, Decimal)):
        return str(value)
    if isinstance(value, (list, range)):
        return "[" + ", ".join(java_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_text(key)}={java_text(item)}" for key, item in value.items()) + "}"
    return "null" if value is None else ""


def number(value: Any) -> int | Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise TypeError(f"a {java_type(value)} is not a number")
    return Decimal(str(value)) if isinstance(value, float) else value


def integer(value: Any) -> int:
    if type(value) is not int:
        raise TypeError(f"a {java_type(value)} is not an integer")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"a {java_type(value)} is not a String")
    return value


def plus(left: Any, right: Any) -> Any:
    if isinstance(left, str) or isinstance(right, str):
        return java_text(left) + java_text(right)
    return number(left) + number(right)


def remainder(left: Any, right: Any) -> Any:
    """Java's `%`: the sign of the dividend (Decimal's already is)."""
    dividend, divisor = number(left), number(right)
    if isinstance(dividend, int) and isinstance(divisor, int):
        magnitude = abs(dividend) % abs(divisor)
        return -magnitude if dividend < 0 else magnitude
    return Decimal(dividend) % Decimal(divisor)


def divide(left: Any, right: Any) -> Any:
    """Java's `/`: whole numbers truncate toward zero."""
    dividend, divisor = number(left), number(right)
    if isinstance(dividend, int) and isinstance(divisor, int):
        quotient = abs(dividend) // abs(divisor)
        return quotient if (dividend < 0) == (divisor < 0) else -quotient
    return Decimal(dividend) / Decimal(divisor)


def substring(value: str, begin: Any, end: Any = None) -> str:
    start, stop = integer(begin), len(value) if end is None else integer(end)
    if not 0 <= start <= stop <= len(value):
        raise IndexError(f"substring({start}, {stop}) of a String of length {len(value)}")
    return value[start:stop]


def element(values: list[Any], index: Any) -> Any:
    position = integer(index)
    if not 0 <= position < len(values):
        raise IndexError(f"index {position} of a List of size {len(values)}")
    return values[position]


def java_substitute(pattern: Any, replacement: Any, value: str, count: int = 0) -> str:
    """replaceAll / replaceFirst: `$1` in the replacement is the first group."""

    def expand(match: Any) -> str:
        return re.sub(r"\$(\d)", lambda group: match.group(int(group.group(1))) or "", text(replacement))

    return re.sub(text(pattern), expand, value, count=count)


def scaled(value: Any, scale: Any, mode: Any = None) -> Decimal:
    """BigDecimal.setScale: without a rounding mode the value must fit (Java's ROUND_UNNECESSARY)."""
    import decimal

    modes = {
        0: decimal.ROUND_UP,
        1: decimal.ROUND_DOWN,
        2: decimal.ROUND_CEILING,
        3: decimal.ROUND_FLOOR,
        4: decimal.ROUND_HALF_UP,
        5: decimal.ROUND_HALF_DOWN,
        6: decimal.ROUND_HALF_EVEN,
    }
    named = {"UP": 0, "DOWN": 1, "CEILING": 2, "FLOOR": 3, "HALF_UP": 4, "HALF_DOWN": 5, "HALF_EVEN": 6}
    exponent = Decimal(1).scaleb(-integer(scale))
    amount = Decimal(number(value))
    if mode is None or mode == 7 or mode == "UNNECESSARY":
        if amount.quantize(exponent, decimal.ROUND_DOWN) != amount:
            raise ArithmeticError("Rounding necessary")
        return amount.quantize(exponent)
    rounding = modes.get(named.get(mode, -1) if isinstance(mode, str) else integer(mode))
    if rounding is None:
        raise ValueError(f"no rounding mode {mode}")
    return amount.quantize(exponent, rounding)


def put(values: dict[Any, Any], key: Any, value: Any) -> Any:
    previous = values.get(key)
    values[key] = value
    return previous


def replaced(values: list[Any], index: Any, value: Any) -> Any:
    previous = element(values, index)
    values[integer(index)] = value
    return previous


def added(values: list[Any], value: Any) -> bool:
    values.append(value)
    return True


def compared(left: Any, right: Any) -> int:
    return int((left > right) - (left < right))


def character(value: str, index: Any) -> str:
    return substring(value, index, integer(index) + 1)


def sublist(values: list[Any], begin: Any, end: Any) -> list[Any]:
    start, stop = integer(begin), integer(end)
    if not 0 <= start <= stop <= len(values):
        raise IndexError(f"subList({start}, {stop}) of a List of size {len(values)}")
    return values[start:stop]


def put_all(values: dict[Any, Any], more: Any) -> None:
    if not isinstance(more, dict):
        raise TypeError(f"a {java_type(more)} is not a Map")
    values.update(more)


COMMON: dict[str, Callable[..., Any]] = {"toString": java_text, "equals": lambda value, other: value == other}
STRING_METHODS: dict[str, Callable[..., Any]] = {
    **COMMON,
    "length": len,
    "isEmpty": lambda value: not value,
    "isBlank": lambda value: not value.strip(),
    "substring": substring,
    "charAt": character,
    "indexOf": lambda value, part, start=0: value.find(text(part), integer(start)),
    "lastIndexOf": lambda value, part: value.rfind(text(part)),
    "contains": lambda value, part: text(part) in value,
    "startsWith": lambda value, part: value.startswith(text(part)),
    "endsWith": lambda value, part: value.endswith(text(part)),
    "equalsIgnoreCase": lambda value, other: isinstance(other, str) and value.casefold() == other.casefold(),
    "compareTo": lambda value, other: compared(value, text(other)),
    "toUpperCase": lambda value: value.upper(),
    "toLowerCase": lambda value: value.lower(),
    "trim": lambda value: value.strip(),
    "strip": lambda value: value.strip(),
    "concat": lambda value, other: value + text(other),
    "replace": lambda value, old, new: value.replace(java_text(old), java_text(new)),
    "replaceAll": lambda value, pattern, replacement: java_substitute(pattern, replacement, value),
    "replaceFirst": lambda value, pattern, replacement: java_substitute(pattern, replacement, value, 1),
    "matches": lambda value, pattern: re.fullmatch(text(pattern), value) is not None,
    "split": lambda value, pattern: re.split(text(pattern), value),
}
LIST_METHODS: dict[str, Callable[..., Any]] = {
    **COMMON,
    "size": len,
    "isEmpty": lambda values: not values,
    "get": element,
    "contains": lambda values, value: value in values,
    "indexOf": lambda values, value: values.index(value) if value in values else -1,
    "add": added,
    "set": replaced,
    "subList": sublist,
}
MAP_METHODS: dict[str, Callable[..., Any]] = {
    **COMMON,
    "size": len,
    "isEmpty": lambda values: not values,
    "get": item_of,
    "containsKey": lambda values, key: isinstance(key, (str, int)) and key in values,
    "containsValue": lambda values, value: value in values.values(),
    "keySet": lambda values: list(values),
    "values": lambda values: list(values.values()),
    "entrySet": lambda values: [{"key": key, "value": value} for key, value in values.items()],
    "put": put,
    "putAll": put_all,
    "remove": lambda values, key: values.pop(key, None) if isinstance(key, (str, int)) else None,
}
NUMBER_METHODS: dict[str, Callable[..., Any]] = {
    **COMMON,
    "intValue": lambda value: int(value),
    "longValue": lambda value: int(value),
    "compareTo": lambda value, other: compared(value, number(other)),
    "add": lambda value, other: value + number(other),
    "subtract": lambda value, other: value - number(other),
    "multiply": lambda value, other: value * number(other),
    "divide": divide,
    "negate": lambda value: -value,
    "abs": lambda value: abs(value),
    "signum": lambda value: compared(value, 0),
    "setScale": scaled,
    "toPlainString": lambda value: format(Decimal(value), "f"),
}
BOOLEAN_METHODS: dict[str, Callable[..., Any]] = {**COMMON, "booleanValue": lambda value: value}
METHODS = {
    str: STRING_METHODS,
    list: LIST_METHODS,
    dict: MAP_METHODS,
    int: NUMBER_METHODS,
    float: NUMBER_METHODS,
    Decimal: NUMBER_METHODS,
    bool: BOOLEAN_METHODS,
}
"""The Java methods a template may call, by the exact type of the value: all a value has."""


def call_method(value: Any, name: str, arguments: list[Any]) -> Any:
    method = METHODS.get(type(value), {}).get(name)
    if method is None:
        return None
    try:
        return method(value, *arguments)
    except TypeError as error:
        raise TypeError(f"{java_type(value)}.{name}({len(arguments)} arguments): {error}") from None


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
    result = pisa.CreatePDF(
        page_style(page) + font_faces(fonts) + html, dest=output, link_callback=lambda uri, rel: "", encoding="utf-8"
    )
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


def preload() -> None:
    """A renderer started before its request (documents/rendering.py's warm renderers): the template engines
    and the PDF converter imported while it waits, before any tenant input has been read."""
    import airspeed  # noqa: F401
    import liquid  # noqa: F401
    from xhtml2pdf import files, pisa  # noqa: F401


def serve() -> None:
    channel_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # a library printing must not touch the answer
    sys.path.insert(0, LIBRARIES)
    setup = json.loads(sys.stdin.buffer.readline())
    if setup.get("preload"):
        preload()
        os.write(channel_out, b"\n")  # ready: the host may count on this renderer being warm
    request = json.loads(sys.stdin.buffer.read(), parse_float=Decimal)
    apply_limits(request["limits"])
    os.environ.clear()
    if setup.get("seccomp"):
        install_seccomp(base64.b64decode(setup["seccomp"]))
    for name in [name for name in sys.modules if name == "ctypes" or name.startswith(("ctypes.", "_ctypes"))]:
        del sys.modules[name]
    sys.setrecursionlimit(2000)
    try:
        answer = run(request)
    except Failed as failed:
        answer = {"error": {"stage": failed.stage, "message": failed.message}}
    data = json.dumps(answer).encode("utf-8")
    while data:
        data = data[os.write(channel_out, data) :]


if __name__ == "__main__":
    drop_privileges(sys.argv[1:])
    serve()
    os._exit(0)  # the answer is out: no interpreter teardown of the libraries (the host reads to the end)
