"""A local invoker of the tenant functions: what Lambda's Invoke does, on this machine, for the tests, the
benchmarks and a `make run` against the emulated AWS (moto models the control plane but runs no code
without docker).

An invocation resolves the function and alias through the Lambda API as Lambda would (an unknown function
or alias is NotFound: 503 `tenantCode.not_ready` upstream), reads the published version's code object
(`tenants/{t}/code/{version}.zip`) and checks it is the code that version was published with (its
CodeSha256), unzips it once per content, then runs the same handler (tenant_handler.py) in the local
sandbox (sandbox/kernel.py): the package read-only at /var/task, the layer's libraries (the same entries of
the same environment) at /libs, the function's memory as its address-space limit and its timeout as the
wall clock. Its answer is what Lambda would answer: the handler's result as JSON, or an error payload with
`function_error` set.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile

from chalicelib.core import codes
from chalicelib.plugins import repository
from chalicelib.plugins.repository import Invocation
from chalicelib.sandbox import kernel, runtimes
from chalicelib.settings import settings

MB = 1024 * 1024
MAX_RESPONSE_BYTES = 6 * MB
"""Lambda's limit on a synchronous invocation's answer."""


class LocalLambda:
    """An `invoke(function_name, payload, qualifier)` (storage/functions.py's signature) running the
    published tenant code locally; `invocations` records (function name, qualifier) of each call that ran
    code."""

    def __init__(self) -> None:
        self.invocations: list[tuple[str, str | None]] = []
        self._unzipped: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, function_name: str, payload: bytes, qualifier: str | None = None) -> Invocation:
        version = (
            (qualifier if qualifier.isdigit() else repository.alias_version(function_name, qualifier))
            if qualifier
            else None
        )
        configuration = repository.function_version(function_name, version) if version else None
        if configuration is None or qualifier is None:
            raise codes.not_found("plugin_function", f"{function_name}:{qualifier}")
        code_name = (
            str(configuration["Description"]).removeprefix("configuration ") if qualifier.isdigit() else qualifier
        )
        code = repository.read_code(self._tenant(function_name), code_name)
        if code is None or base64.b64encode(hashlib.sha256(code).digest()).decode() != configuration["CodeSha256"]:
            raise RuntimeError(f"the code object of {function_name}:{qualifier} is not the code it was published with")
        folder = self._unzip(code)
        self.invocations.append((function_name, qualifier))
        return self._run(folder, payload, int(str(configuration["MemorySize"])), float(str(configuration["Timeout"])))

    def close(self) -> None:
        with self._lock:
            for folder in self._unzipped.values():
                shutil.rmtree(folder, ignore_errors=True)
            self._unzipped.clear()

    @staticmethod
    def _tenant(function_name: str) -> str:
        template = settings().plugin_function_name
        pattern = re.escape(template).replace(re.escape("{tenant}"), "(?P<tenant>[0-9a-fA-F-]+)")
        found = re.fullmatch(pattern, function_name)
        if found is None:
            raise codes.not_found("plugin_function", function_name)
        return found["tenant"]

    def _unzip(self, code: bytes) -> str:
        key = hashlib.sha256(code).hexdigest()
        with self._lock:
            if key not in self._unzipped:
                folder = tempfile.mkdtemp(prefix="pas-tenant-function-")
                with zipfile.ZipFile(io.BytesIO(code)) as archive:
                    archive.extractall(folder)
                for root, _, files in os.walk(folder):
                    os.chmod(root, 0o755)
                    for file in files:
                        os.chmod(os.path.join(root, file), 0o444)
                self._unzipped[key] = folder
            return self._unzipped[key]

    @staticmethod
    def _run(folder: str, payload: bytes, memory_mb: int, timeout: float) -> Invocation:
        disk = kernel.Disk({}, size_bytes=64 * MB, max_files=4096)
        try:
            process = kernel.start(
                runtimes.TENANT_HANDLER_SCRIPT,
                disk,
                python=sys.executable,
                libraries=kernel.libraries(runtimes.RENDERER_LIBRARIES),
                code=folder,
            )
            setup = json.dumps({"memory_bytes": memory_mb * MB}).encode()
            try:
                output, _ = process.communicate(setup + b"\n" + payload, timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate(timeout=5)
                return _error("Sandbox.Timedout", f"Task timed out after {timeout:.2f} seconds")
        finally:
            disk.remove()
        if len(output) > MAX_RESPONSE_BYTES + 64:
            return _error(
                "Function.ResponseSizeTooLarge",
                f"Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes).",
            )
        try:
            answer = json.loads(output)
        except ValueError:
            return _error("Runtime.ExitError", f"Runtime exited with status {process.returncode}")
        if "error" in answer:
            return Invocation(json.dumps(answer["error"]).encode(), "Unhandled")
        return Invocation(json.dumps(answer["payload"]).encode(), None)


def _error(error_type: str, message: str) -> Invocation:
    return Invocation(json.dumps({"errorType": error_type, "errorMessage": message}).encode(), "Unhandled")
