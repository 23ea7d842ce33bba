"""LambdaRunner: tenant plugins in a per-tenant Lambda function (the production runner).

The isolation is AWS's: each tenant's plugins run in their own function (`pas-tenant-{tenant}` by
default, a settings template), in their own execution environments, with a role that grants nothing
but writing its own logs and in subnets with no route out, so even code that defeats any in-process check
reaches no data, no other tenant and no secret (the role's own credentials open nothing). Memory and time
are the function's configured limits; Lambda keeps environments warm between invocations (warm reuse for
free); the host also holds the local runner's wall clock over all the invocations of one call.

The function's code is chalicelib/plugins/tenant_handler.py (which hands plugin calls to
child.lambda_handler) beside the tenant's `plugins/python/` folder. A configuration deployment publishes
one function version per configuration version and points an alias named after the configuration version
at it (plugins/tenant_code.py, a job), so a call runs exactly the plugins of the version it names
(`Qualifier`). Before that alias exists, a call answers 503 `tenantCode.not_ready`: never another
version's code.

pas calls: a Lambda cannot call back into the service mid-invocation (no channel, and the role must
not reach the tables). So calls are replayed: the first invocation runs the plugin until its first
pas call without a known answer and returns that call as `need`; the host answers it through the
HostApi and invokes again with every answer so far; plugin functions are deterministic in their
request, their pas answers and `pas.now()` (fixed per call), so each replay takes the same path
and gets one step further. Cost: one invocation per pas call plus one (a plugin making 10 lookups
takes 11 warm invocations, ~5-15 ms each in-region), but the lookups a plugin asks together
(`pas.lookups(table, keys)`) are answered in one: a plugin asking its 10 keys at once takes 2. A plugin
that depends on randomness, the wall clock or module-level state changed by earlier calls can take a
different path on replay (`pas.now()` is the clock plugins should use); the local runner has no such
restriction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from chalicelib.core import codes
from chalicelib.core.clock import isoformat
from chalicelib.core.errors import NotFound
from chalicelib.plugins import protocol
from chalicelib.plugins.local import Limits
from chalicelib.plugins.models import HostApi, PluginFailure, PluginResult
from chalicelib.runtime import wiring

Invoke = Callable[[str, bytes, str | None], Any]
"""(function name, payload, qualifier) -> an object with `payload` and `function_error`."""


class LambdaRunner:
    def __init__(
        self,
        function_name_template: str,
        *,
        invoke: Invoke = wiring.invoke_function,
        timeout_seconds: float = Limits().timeout_seconds,
    ):
        self.function_name_template = function_name_template
        self.invoke = invoke
        self.timeout_seconds = timeout_seconds

    def function_name(self, tenant: str) -> str:
        return self.function_name_template.format(tenant=tenant)

    def call(
        self,
        tenant: str,
        config_version: str,
        module_files: Mapping[str, bytes],
        function_name: str,
        request: Mapping[str, Any],
        host: HostApi,
    ) -> PluginResult:
        """`module_files` is not sent: the function was deployed with them."""
        name = self.function_name(tenant)
        answers: list[list[Any]] = []
        now = isoformat(host.now())
        deadline = time.monotonic() + self.timeout_seconds
        for _ in range(protocol.MAX_HOST_CALLS + 1):
            if time.monotonic() > deadline:
                return PluginFailure(
                    function_name, "timeout", f"it ran longer than {self.timeout_seconds:g} s (wall clock)"
                )
            message = protocol.encode({"call": function_name, "request": request, "now": now, "answers": answers})
            try:
                invocation = self.invoke(name, json.dumps({"message": message.decode()}).encode(), config_version)
            except NotFound:
                raise codes.TENANT_CODE_NOT_READY(
                    f"The tenant function {name} has no code for configuration {config_version}: its deployment is "
                    "publishing it, or failed to (GET /config/{tenantLocator}/deployments says which)"
                ) from None
            if invocation.function_error:
                return _function_failure(function_name, invocation.payload)
            try:
                answer = protocol.decode(_message_of(invocation.payload))
                need = answer.get("need")
                if need is None:
                    return protocol.result_of(answer, function_name)
                if not isinstance(need, list) or not need or not all(isinstance(call, dict) for call in need):
                    raise protocol.Malformed("it asked for pas answers in a shape the protocol does not know")
                if len(answers) + len(need) > protocol.MAX_HOST_CALLS:
                    return protocol.too_many_calls(function_name)
                answers += [[call, protocol.answer_pas(call, host)] for call in need]
            except protocol.Malformed as error:
                return PluginFailure(function_name, "malformed", str(error))
        return protocol.too_many_calls(function_name)

    def import_errors(self, tenant: str, function_version: str) -> list[str]:
        """Why the plugin modules of a published function version fail to import (none: they all import), as
        the function answers it; its failing as a whole (a module that hangs, or eats its memory) is one."""
        invocation = self.invoke(self.function_name(tenant), json.dumps({"imports": True}).encode(), function_version)
        if invocation.function_error:
            return [f"importing the plugin modules: {_function_failure('imports', invocation.payload).detail}"]
        try:
            body = json.loads(invocation.payload)
            errors = json.loads(body["imports"])
        except (ValueError, TypeError, KeyError, RecursionError):
            return ["importing the plugin modules: the function answered outside the protocol"]
        if not isinstance(errors, list):
            return ["importing the plugin modules: the function answered outside the protocol"]
        return [protocol.readable(str(error)[:1000]) for error in errors]


def _message_of(payload: bytes) -> str:
    try:
        body = json.loads(payload)
    except (ValueError, RecursionError):
        body = None
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        raise protocol.Malformed("the plugin function answered outside the plugin protocol")
    return message


def _function_failure(function_name: str, payload: bytes) -> PluginFailure:
    """The function failed as a whole: Lambda's error payload says how."""
    try:
        error = json.loads(payload)
    except (ValueError, RecursionError):
        error = {}
    error = error if isinstance(error, dict) else {}
    text = protocol.readable(str(error.get("errorMessage") or error.get("errorType") or "no detail")[:500])
    if "timed out" in text:
        return PluginFailure(function_name, "timeout", f"its Lambda function timed out ({text})")
    if error.get("errorType") == "Runtime.OutOfMemory" or "out of memory" in text.lower():
        return PluginFailure(function_name, "memory_limit", f"its Lambda function ran out of memory ({text})")
    return PluginFailure(function_name, "crashed", f"its Lambda function failed: {text}")
