"""Synchronous Lambda invocations (the per-tenant plugin functions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.core import codes
from chalicelib.storage import clients

_RETRYABLE = frozenset(
    {
        "TooManyRequestsException",
        "ServiceException",
        "ResourceNotReadyException",
        "ResourceConflictException",
        "EC2ThrottledException",
        "SubnetIPAddressLimitReachedException",
    }
)


class PayloadTooLarge(Exception):
    """The request is larger than Lambda takes in one synchronous invocation (6 MB)."""


MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
"""Lambda's limit on a synchronous invocation's request and on its response."""


@dataclass(frozen=True)
class Invocation:
    """What the function answered; `function_error` is set ("Unhandled") when the function itself
    failed (an exception, a timeout, running out of memory), `payload` then holds the error."""

    payload: bytes
    function_error: str | None


INVOKE_READ_TIMEOUT_SECONDS = 60
"""Longer than any tenant function's timeout (20 s): the answer is awaited, never cut short by the client."""


def lambda_client() -> Any:
    """The client of invocations: it waits for the function, and never sends an invocation twice by itself
    (a render or a plugin call retried behind the caller's back would run twice)."""
    return clients.client(
        "lambda", read_timeout=INVOKE_READ_TIMEOUT_SECONDS, retries={"total_max_attempts": 1, "mode": "standard"}
    )


def invoke(function_name: str, payload: bytes, qualifier: str | None = None) -> Invocation:
    """Invoke `function_name` (at alias or version `qualifier`) and wait for its answer. An unknown
    function or alias is NotFound("plugin_function"); throttling or a Lambda service error is
    Unavailable; a request over Lambda's limit is PayloadTooLarge."""
    from botocore.exceptions import ClientError

    arguments = {"FunctionName": function_name, "InvocationType": "RequestResponse", "Payload": payload}
    if qualifier:
        arguments["Qualifier"] = qualifier
    try:
        response = lambda_client().invoke(**arguments)
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "")
        if code == "ResourceNotFoundException":
            raise codes.not_found(
                "plugin_function", f"{function_name}:{qualifier}" if qualifier else function_name
            ) from None
        if code == "RequestTooLargeException":
            raise PayloadTooLarge(f"the request to {function_name} is larger than Lambda takes") from None
        if code in _RETRYABLE:
            raise codes.SERVICE_UNAVAILABLE(
                f"The plugin function {function_name} cannot be invoked now ({code})"
            ) from None
        raise
    return Invocation(response["Payload"].read(), response.get("FunctionError"))
