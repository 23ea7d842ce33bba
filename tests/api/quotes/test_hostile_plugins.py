"""Whatever a plugin answers, through the quotes API: each answer that breaks the protocol, the contract or
a limit is the plugin's failure, a validationResult naming the function, the quote keeping its state; an
answer within them is used; never a 5xx (DECISIONS.md, Identifiers, time, money: input limits).

The plugin (HOSTILE) answers by the quote's first VIN, `shape:kind:hostile`: the function of `kind` (validate,
rate or underwrite) answers `shape`, the others answer nothing. Some shapes bypass the child's own
encoder and write their line to the channel themselves, as a hostile plugin can.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chalicelib.plugins import service
from chalicelib.plugins.local import Limits, LocalProcessRunner
from tests.api.quotes.support import advance, auto, create, new_account, vehicle
from tests.support.api import ok
from tests.support.configs import quotes_tenant

HOSTILE = r'''
import fcntl, os, stat, time
from decimal import Decimal

import pas

FIELD = {"validate": "errors", "rate": "items", "underwrite": "flags"}


def _channel():
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            continue


def _raw(line):
    """Write `line` to the plugin channel, bypassing the child's encoder, and end the process."""
    fd = _channel()
    while line:
        line = line[os.write(fd, line):]
    os._exit(0)


def _answer(kind, result):
    return b'{"cpu":0,"answer":{"result":' + result + b'}}\n'


def _item(kind, request, **fields):
    """A well-formed item of `kind` with `fields` over it."""
    root = request["segment"]["element"]["locator"]
    base = {"validate": {"message": "fine"},
            "rate": {"elementLocator": root, "chargeType": "tax", "amount": 1},
            "underwrite": {"level": "info", "note": "fine"}}[kind]
    return {**base, **fields}


def _number(kind, request, number):
    """`number` where `kind` reads a number (rating's rate), elsewhere in a field the host ignores."""
    if kind == "rate":
        item = _item(kind, request, rate=number)
        del item["amount"]
        return {"items": [item]}
    return {FIELD[kind]: [], "extra": number}


def _raw_number(kind, request, text):
    if kind == "rate":
        root = request["segment"]["element"]["locator"].encode()
        return _raw(_answer(kind, b'{"items":[{"elementLocator":"' + root + b'","chargeType":"tax","rate":'
                            + text + b'}]}'))
    return _raw(_answer(kind, b'{"' + FIELD[kind].encode() + b'":[],"extra":' + text + b'}'))


def _spin():
    while True:
        pass


def _nested(depth):
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


SHAPES = {
    "nested_100000_deep": lambda kind, request: _raw(_answer(kind, b"[" * 100000 + b"]" * 100000)),
    "nested_40_deep": lambda kind, request: {FIELD[kind]: [], "extra": _nested(40)},
    "huge_number": lambda kind, request: _number(kind, request, Decimal("1E+999999")),
    "tiny_number": lambda kind, request: _number(kind, request, Decimal("1E-999999")),
    "number_beyond_dynamodb": lambda kind, request: _number(kind, request, Decimal("1E+200")),
    "forty_digit_number": lambda kind, request: _number(kind, request, 10 ** 39 + 1),
    "5000_digit_integer": lambda kind, request: _raw_number(kind, request, b"7" * 5000),
    "nan_token": lambda kind, request: _raw_number(kind, request, b"NaN"),
    "infinity_token": lambda kind, request: _raw_number(kind, request, b"-Infinity"),
    "exponent_overflow_text": lambda kind, request: _raw_number(kind, request, b"1e999999999999999999999"),
    "nan_decimal": lambda kind, request: _number(kind, request, Decimal("NaN")),
    "float_infinity": lambda kind, request: _number(kind, request, float("inf")),
    "negative_zero": lambda kind, request: _number(kind, request, Decimal("-0.0")),
    "not_json": lambda kind, request: _raw(b"this is not JSON\n"),
    "not_utf8": lambda kind, request: _raw(_answer(kind, b'{"' + FIELD[kind].encode() + b'":[],"x":"\xff\xfe"}')),
    "lone_surrogate": lambda kind, request: _raw(_answer(kind, b'{"' + FIELD[kind].encode() + b'":[],"x":"\\ud800"}')),
    "huge_string": lambda kind, request: {FIELD[kind]: [_item(kind, request, note="x" * 1_000_000,
                                                              message="x" * 1_000_000, tag="x" * 1_000_000)]},
    "long_strings": lambda kind, request: {FIELD[kind]: [_item(kind, request, note="x" * 2001, message="x" * 2001,
                                                               tag="x" * 201, elementType="x" * 201)]},
    "huge_list": lambda kind, request: {FIELD[kind]: [_item(kind, request)] * 100_000},
    "answer_beyond_every_limit": lambda kind, request: {FIELD[kind]: [], "x": "x" * (9 * 1024 * 1024)},
    "answer_not_an_object": lambda kind, request: _raw(b'{"cpu":0,"answer":[]}\n'),
    "result_not_an_object": lambda kind, request: _raw(_answer(kind, b"5")),
    "failure_with_a_huge_detail": lambda kind, request: _raw(
        b'{"cpu":0,"answer":{"failure":{"reason":"exception","detail":"' + b"x" * 1_000_000 + b'"}}}\n'),
    "failure_with_a_lone_surrogate": lambda kind, request: _raw(
        b'{"cpu":0,"answer":{"failure":{"reason":"exception","detail":"\\udfff"}}}\n'),
    "pas_call_with_a_lone_surrogate": lambda kind, request: _raw(
        b'{"pas":"lookup","table":"BaseRates","key":["\\ud800"],"date":null}\n'),
    "pas_call_with_a_huge_key": lambda kind, request: {"row": pas.lookup("BaseRates", ["x" * 500_000])},
    "pas_call_with_a_huge_table_name": lambda kind, request: {"row": pas.lookup("x" * 500_000, ["web"])},
    "pas_call_with_a_huge_bound": lambda kind, request: {
        "row": pas.range_lookup("ValueBands", ["auto"], Decimal("1E+999999"))},
    "pas_call_with_a_bad_date": lambda kind, request: {"row": pas.lookup("BaseRates", ["web"], date="x" * 100_000)},
    "raises": lambda kind, request: 1 / 0,
    "exits": lambda kind, request: os._exit(3),
    "sleeps": lambda kind, request: time.sleep(60),
    "spins": lambda kind, request: _spin(),
    "allocates": lambda kind, request: bytearray(2 ** 31),
}


WRONG = {"int": 5, "text": "1", "empty": "", "bool": True, "list": [], "object": {}, "null": None}
LEVELS = {
    "answer": lambda kind, request, value: value,
    "entries": lambda kind, request, value: {FIELD[kind]: value},
    "entry": lambda kind, request, value: {FIELD[kind]: [value]},
}


def _wrong(kind, request, level, wrong):
    """An answer of `kind` whose `level` (the answer, its list, an entry, or an entry's field) is `wrong`."""
    if level in LEVELS:
        return LEVELS[level](kind, request, WRONG[wrong])
    return {FIELD[kind]: [_item(kind, request, **{level: WRONG[wrong]})]}


def _answer_for(kind, request):
    shape, target, _, *arguments = request["segment"]["element"]["elements"][0]["data"]["vin"].split(":")
    if target != kind:
        return {FIELD[kind]: []}
    if shape == "wrong":
        return _wrong(kind, request, *arguments)
    return SHAPES[shape](kind, request)


def validate_PersonalAuto(request):
    return _answer_for("validate", request)


def rate_PersonalAuto(request):
    return _answer_for("rate", request)


def underwrite_PersonalAuto(request):
    return _answer_for("underwrite", request)
'''

FAILING_SHAPES = [
    "nested_100000_deep",
    "nested_40_deep",
    "huge_number",
    "tiny_number",
    "number_beyond_dynamodb",
    "forty_digit_number",
    "5000_digit_integer",
    "nan_token",
    "infinity_token",
    "exponent_overflow_text",
    "nan_decimal",
    "float_infinity",
    "not_json",
    "not_utf8",
    "lone_surrogate",
    "huge_string",
    "long_strings",
    "huge_list",
    "answer_beyond_every_limit",
    "answer_not_an_object",
    "result_not_an_object",
    "failure_with_a_huge_detail",
    "failure_with_a_lone_surrogate",
    "pas_call_with_a_lone_surrogate",
    "pas_call_with_a_huge_key",
    "pas_call_with_a_huge_table_name",
    "pas_call_with_a_huge_bound",
    "pas_call_with_a_bad_date",
    "raises",
    "exits",
    "sleeps",
    "spins",
    "allocates",
]
STEPS = {"validate": "validate", "rate": "price", "underwrite": "underwrite"}


@pytest.fixture
def runner() -> Iterator[LocalProcessRunner]:
    """The API's plugin runner, with a short wall clock so the shapes that hang fail fast."""
    local = LocalProcessRunner(Limits(timeout_seconds=1))
    service.use_runner(local)
    yield local
    service.use_runner(None)
    local.close()


@pytest.fixture
def hostile(api, admin_token) -> tuple[str, str]:
    """A fresh tenant with HOSTILE deployed, and an account of it."""
    tenant = quotes_tenant(api, admin_token, plugins=HOSTILE)
    return tenant, new_account(api, admin_token, tenant)


WRONG_TYPES = {
    "validate": [
        ("answer", "list"),
        ("entries", "object"),
        ("entry", "int"),
        ("message", "int"),
        ("message", "empty"),
        ("locator", "list"),
        ("elementType", "object"),
    ],
    "rate": [
        ("answer", "list"),
        ("entries", "null"),
        ("entry", "text"),
        ("elementLocator", "int"),
        ("elementLocator", "list"),
        ("chargeType", "object"),
        ("amount", "text"),
        ("amount", "bool"),
        ("referenceRate", "text"),
        ("tag", "int"),
    ],
    "underwrite": [
        ("answer", "list"),
        ("entries", "text"),
        ("entry", "list"),
        ("level", "int"),
        ("level", "list"),
        ("note", "list"),
        ("tag", "object"),
        ("elementLocator", "list"),
        ("elementLocator", "int"),
    ],
}
"""Per kind: (where, what): the answer, its list, an entry or one field of an entry, of a wrong type."""


def advanced(api, token: str, tenant: str, account: str, shape: str, kind: str, *arguments: str) -> tuple[dict, dict]:
    """(the quote as created, the answer of its step of `kind`) for a quote whose plugin answers `shape`."""
    quote = create(api, token, tenant, auto(account, vehicle(vin=":".join([shape, kind, "hostile", *arguments]))))
    return quote, ok(advance(api, token, tenant, quote["locator"], STEPS[kind]))


def assert_the_plugins_failure(kind: str, quote: dict, body: dict) -> None:
    """The step failed on the plugin of `kind`: the quote keeps its state, the message names the function."""
    assert body["quoteState"] == "draft", (kind, body)
    assert body["validationResult"]["success"] is False, (kind, body)
    [item] = body["validationResult"]["validationItems"]
    assert (item["locator"], item["elementType"]) == (quote["locator"], "PersonalAuto")
    [message] = item["errors"]
    assert message.startswith(f"The plugin function {kind}_PersonalAuto failed: "), (kind, message)
    assert len(message) < 1200, (kind, len(message))


@pytest.mark.parametrize("shape", FAILING_SHAPES)
def test_an_answer_outside_the_protocol_the_contract_or_a_limit_is_the_plugins_failure(
    api, admin_token, runner, hostile, shape
):
    tenant, account = hostile
    for kind in STEPS:
        assert_the_plugins_failure(kind, *advanced(api, admin_token, tenant, account, shape, kind))


def test_a_wrong_type_at_every_level_of_an_answer_is_the_plugins_failure(api, admin_token, runner, hostile):
    tenant, account = hostile
    for kind, cases in WRONG_TYPES.items():
        for where, what in cases:
            assert_the_plugins_failure(kind, *advanced(api, admin_token, tenant, account, "wrong", kind, where, what))


def test_a_negative_zero_is_a_zero(api, admin_token, runner, hostile):
    tenant, account = hostile
    _, validated = advanced(api, admin_token, tenant, account, "negative_zero", "validate")
    _, priced = advanced(api, admin_token, tenant, account, "negative_zero", "rate")
    _, underwritten = advanced(api, admin_token, tenant, account, "negative_zero", "underwrite")

    assert validated["quoteState"] == "validated"
    assert (priced["quoteState"], priced["items"]) == ("priced", [])
    assert underwritten["quoteState"] == "underwritten"
