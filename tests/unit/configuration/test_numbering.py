"""Numbering plan formats: positions, placeholders, escapes and the odometer."""

from __future__ import annotations

import pytest

from chalicelib.configuration.numbering import (
    NumberingError,
    core_at,
    core_index,
    format_number,
    parse_format,
    sequence,
)


def numbers(text: str, initial: str, count: int, values: dict | None = None) -> list[str]:
    return [format_number(text, initial, n, values) for n in range(count)]


def test_letters_and_digits_count_like_an_odometer():
    assert numbers("X##", "A98", 4) == ["A98", "A99", "B00", "B01"]
    assert numbers("##X", "0Y", 4) == ["00Y", "00Z", "01A", "01B"]
    assert numbers("XX", "AZ", 2) == ["AZ", "BA"]


def test_the_documented_example():
    assert numbers("X#####-{product}", "", 2, {"product": "PA"}) == ["A00000-PA", "A00001-PA"]
    assert format_number("X#####-{product}", "A99999", 1, {"product": "PA"}) == "B00000-PA"
    assert format_number("X#####-{product}", "G51234", 0, {"product": "PA"}) == "G51234-PA"


def test_backslash_makes_the_next_character_literal():
    assert format_number("\\A\\C\\C-########", "000000001", 0) == "ACC-00000001"
    assert format_number("\\X\\#\\\\-#", "", 3) == "X#\\-3"
    assert format_number("\\{product}-#", "", 0) == "{product}-0"


def test_other_characters_are_literal():
    assert format_number("INV/2026-x##", "7", 0) == "INV/2026-x07"


def test_real_package_formats():
    assert numbers("\\R\\O\\L-########", "000000001", 2) == ["ROL-00000001", "ROL-00000002"]
    assert format_number("\\M\\G\\T\\S-{product}-#######", "0000000", 0, {"product": "GL"}) == "MGTS-GL-0000000"
    assert format_number("\\D\\G-########-{product}", "000000001", 9, {"product": "IC"}) == "DG-00000010-IC"


def test_the_initial_core_number_is_read_from_the_right():
    assert core_index("X##", "") == 0
    assert core_index("X##", "5") == 5
    assert core_index("X##", "b10") == 110
    assert core_index("###", "000042") == 42


def test_an_initial_core_number_that_does_not_fit_is_an_error():
    with pytest.raises(NumberingError, match="longer than"):
        core_index("##", "123")
    with pytest.raises(NumberingError, match="expects a digit"):
        core_index("X##", "AB1")
    with pytest.raises(NumberingError, match="expects a letter"):
        core_index("X##", "101")


def test_the_last_number_and_then_none():
    assert format_number("X#", "Z8", 1) == "Z9"
    with pytest.raises(NumberingError, match="used up"):
        format_number("X#", "Z8", 2)
    with pytest.raises(NumberingError, match="used up"):
        core_at("#", 10)


def test_core_at_inverts_core_index():
    for index in (0, 1, 9, 10, 259, 2599):
        assert core_index("X##", core_at("X##", index)) == index


def test_capacity_and_positions():
    parsed = parse_format("\\AX#-{product}")
    assert parsed.positions == "X#"
    assert parsed.capacity == 260
    assert parsed.placeholders == ("product",)
    assert parse_format("{policyNumber}").capacity == 1


def test_placeholders_need_values():
    with pytest.raises(NumberingError, match="needs a value for {product}"):
        format_number("#-{product}", "", 0)


def test_term_formats_are_rendered_without_a_core_number():
    parsed = parse_format("{policyNumber}-{termNumberPlusOne}")
    assert parsed.render("", {"policyNumber": "ROL-1", "termNumberPlusOne": "2"}) == "ROL-1-2"


@pytest.mark.parametrize("text", ["", "##\\", "#{product", "#{}", "#{1x}"])
def test_malformed_formats(text):
    with pytest.raises(NumberingError):
        parse_format(text)


def test_a_plan_gives_quotes_their_own_format_and_start():
    plan = {"format": "P-###", "initialCoreNumber": "100", "quoteNumberFormat": "Q-###", "initialQuoteCoreNumber": "5"}
    assert sequence(plan, "policy").number(0) == "P-100"
    assert sequence(plan, "quote").number(1) == "Q-006"
    assert sequence({"format": "P-###", "initialCoreNumber": "998"}, "quote").number(1) == "P-999"
    assert sequence({"format": "P-###", "initialCoreNumber": "998"}, "account").remaining == 2
