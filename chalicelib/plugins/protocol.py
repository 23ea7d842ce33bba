"""The host's side of the plugin protocol (chalicelib/plugins/child.py has the other): exact JSON,
pas calls answered through a HostApi, and plugin answers turned into results or failures.
Everything that comes from the plugin is untrusted and checked here."""
from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, get_args

import simplejson

from chalicelib.core.errors import DomainError, Unavailable
from chalicelib.plugins.models import FailureReason, HostApi, PluginFailure, PluginResult

MAX_HOST_CALLS = 1000
"""pas calls one plugin call may make: each is a table read, so a loop of lookups is cut short."""

_REASONS = frozenset(get_args(FailureReason))


class Malformed(Exception):
    """The plugin process broke the protocol (its own doing: it wrote to the channel itself)."""


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: JSON with Decimals written exactly."""
    return simplejson.dumps(message, use_decimal=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decode(line: bytes | str) -> dict[str, Any]:
    try:
        message = json.loads(line, parse_float=Decimal)
    except ValueError as error:
        raise Malformed(f"it wrote something that is not JSON to the plugin channel: {error}") from None
    if not isinstance(message, dict):
        raise Malformed("it wrote something that is not a JSON object to the plugin channel")
    return message


def answer_pas(message: Mapping[str, Any], host: HostApi) -> dict[str, Any]:
    """The host's answer to one pas call: {"value": ...} or {"error": message}. A DomainError of the
    host API (unknown table, bad key) goes back to the plugin; Unavailable and any other error
    propagate, since they are the service's trouble and not the plugin's."""
    kind, table, key, date = message.get("pas"), message.get("table"), message.get("key"), message.get("date")
    if (not isinstance(table, str) or not isinstance(key, list) or not all(isinstance(k, str) for k in key)
            or not (date is None or isinstance(date, str))):
        raise Malformed(f"it made a pas call the protocol does not know: {str(dict(message))[:200]}")
    try:
        if kind == "lookup":
            value = host.lookup(table, key, date)
        elif kind == "range_lookup":
            bound = message.get("bound")
            if isinstance(bound, bool) or not isinstance(bound, (int, Decimal)):
                raise Malformed("it made a pas.range_lookup call without a numeric bound")
            value = host.range_lookup(table, key, Decimal(bound), date)
        else:
            raise Malformed(f"it made a pas call the protocol does not know: {kind!r}")
    except Unavailable:
        raise
    except DomainError as error:
        return {"error": error.message}
    return {"value": None if value is None else dict(value)}


def result_of(answer: Any, function: str) -> PluginResult:
    """A plugin's final answer ({"result"} or {"failure"}) as a result or a failure."""
    if isinstance(answer, dict) and isinstance(answer.get("result"), dict):
        return answer["result"]
    failure = answer.get("failure") if isinstance(answer, dict) else None
    if isinstance(failure, dict) and failure.get("reason") in _REASONS and isinstance(failure.get("detail"), str):
        return PluginFailure(function, failure["reason"], failure["detail"])
    return PluginFailure(function, "malformed", "its process answered outside the plugin protocol")


def too_many_calls(function: str) -> PluginFailure:
    return PluginFailure(function, "refused", f"it made more than {MAX_HOST_CALLS} pas calls in one call")
