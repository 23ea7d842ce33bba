"""The host's side of the plugin protocol (chalicelib/plugins/child.py has the other): exact JSON,
pas calls answered through a HostApi, and plugin answers turned into results or failures.
Everything that comes from the plugin is untrusted and checked here: a message must be UTF-8 JSON
within the input limits of a request body (DECISIONS.md: nested at most 32 deep, Unicode text, numbers
DynamoDB can store), or the plugin broke the protocol."""

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
MAX_DEPTH = 32
"""Objects and arrays nest at most this deep in a plugin's answer (and in a pas call), as in a request body."""
MAX_DETAIL = 1000
"""Characters of a failure's detail the host keeps (the child cuts its own details there too)."""
_ENVELOPE_DEPTH = 2
"""The levels around a plugin's answer: {"answer": {"result": ...}}."""

_REASONS = frozenset(get_args(FailureReason))


class Malformed(Exception):
    """The plugin process broke the protocol (its own doing: it wrote to the channel itself)."""


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line: JSON with Decimals written exactly."""
    return simplejson.dumps(message, use_decimal=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def decode(line: bytes | str) -> dict[str, Any]:
    """One message from the plugin: a JSON object within the limits, else Malformed."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
        message = json.loads(text, parse_float=Decimal, parse_constant=_not_a_number)
    except RecursionError:
        raise Malformed(f"it sent JSON nested more than {MAX_DEPTH} deep") from None
    except ArithmeticError:  # decimal.InvalidOperation
        raise Malformed("it sent a number whose exponent is beyond any decimal number") from None
    except ValueError as error:
        raise Malformed(f"it wrote something that is not JSON to the plugin channel: {error}"[:MAX_DETAIL]) from None
    if not isinstance(message, dict):
        raise Malformed("it wrote something that is not a JSON object to the plugin channel")
    _check_limits(message)
    return message


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _check_limits(message: dict[str, Any]) -> None:
    """Malformed when the message nests too deep, holds a string that is no Unicode text (a lone
    surrogate escape) or a number DynamoDB cannot store: what no route could store or answer."""
    pending: list[tuple[Any, int]] = [(message, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH + _ENVELOPE_DEPTH:
                raise Malformed(f"it sent JSON nested more than {MAX_DEPTH} deep")
            if isinstance(item, dict):
                for key in item:
                    _check_text(key)
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, str):
            _check_text(item)
        elif isinstance(item, (int, Decimal)) and not isinstance(item, bool) and not _storable(item):
            raise Malformed(
                f"it sent the number {_shown_number(item)}, which DynamoDB cannot store "
                "(at most 38 significant digits, between 1E-130 and 9.9E+125 in size)"
            )


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise Malformed("it sent a string that is not Unicode text (a lone surrogate escape)") from None


def readable(text: str) -> str:
    """`text` with what is not Unicode text (lone surrogates) written as backslash escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _storable(number: int | Decimal) -> bool:
    if isinstance(number, int):
        return abs(number) < 10**38
    if not number.is_finite():
        return False
    if number.is_zero():
        return True
    significant = "".join(map(str, number.as_tuple().digits)).rstrip("0")
    return len(significant) <= 38 and -130 <= number.adjusted() <= 125


def _shown_number(number: int | Decimal) -> str:
    return f"{number:.6E}" if isinstance(number, Decimal) and number.is_finite() else str(number)[:40]


def answer_pas(message: Mapping[str, Any], host: HostApi) -> dict[str, Any]:
    """The host's answer to one pas call: {"value": ...} or {"error": message}. A DomainError of the
    host API (unknown table, bad key) goes back to the plugin; Unavailable and any other error
    propagate, since they are the service's trouble and not the plugin's."""
    kind, table, key, date = message.get("pas"), message.get("table"), message.get("key"), message.get("date")
    if (
        not isinstance(table, str)
        or not isinstance(key, list)
        or not all(isinstance(k, str) for k in key)
        or not (date is None or isinstance(date, str))
    ):
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
    result = answer.get("result") if isinstance(answer, dict) else None
    if isinstance(result, dict):
        return result
    failure = answer.get("failure") if isinstance(answer, dict) else None
    if isinstance(failure, dict) and failure.get("reason") in _REASONS and isinstance(failure.get("detail"), str):
        detail = failure["detail"]
        return PluginFailure(
            function, failure["reason"], detail if len(detail) <= MAX_DETAIL else detail[: MAX_DETAIL - 3] + "..."
        )
    return PluginFailure(function, "malformed", "its process answered outside the plugin protocol")


def too_many_calls(function: str) -> PluginFailure:
    return PluginFailure(function, "refused", f"it made more than {MAX_HOST_CALLS} pas calls in one call")
