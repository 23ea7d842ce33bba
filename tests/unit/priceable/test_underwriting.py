"""Underwriting flags and outcomes as the engine applies them to any user's record (here the fake
widget): DECISIONS.md "Plugins" for the outcome, underwriting.py for what runs and underwriters do to
the flags, with errors named after the declaring entity."""

from __future__ import annotations

from datetime import timedelta
from itertools import count

import pytest

from chalicelib.core.errors import InvalidRequest, InvalidState, NotFound
from chalicelib.http.errors import status_of
from chalicelib.plugins.contract import underwriting_outcome
from chalicelib.plugins.models import PluginFlag
from chalicelib.priceable import underwriting
from tests.unit.priceable.widget import NOW, manual, raised


def author(prefix: str = "N") -> underwriting.Author:
    numbers = count(1)
    return underwriting.Author("U2", NOW + timedelta(hours=1), lambda: f"{prefix}{next(numbers)}")


class Requested:
    def __init__(self, level, element=None, note="", tag=""):
        self.level, self.elementLocator, self.note, self.tag = level, element, note, tag


@pytest.mark.parametrize(
    ("levels", "already_rejected", "result", "status"),
    [
        ([], False, "passed", "info"),
        (["info"], False, "passed", "info"),
        (["approve", "reject", "decline", "block"], False, "passed", "approve"),
        (["approve", "reject"], True, "rejected", "reject"),
        (["approve"], True, "passed", "info"),
        (["reject", "decline", "block"], False, "rejected", "reject"),
        (["decline", "block"], False, "declined", "decline"),
        (["block", "info"], False, "underwrittenBlocked", "block"),
    ],
)
def test_the_outcome_follows_the_uncleared_levels(levels, already_rejected, result, status):
    outcome = underwriting_outcome(levels, already_rejected=already_rejected)
    assert (outcome.result, outcome.status) == (result, status)


def test_only_uncleared_flags_count():
    flags = [manual("M1", "reject", cleared=True), manual("M2", "block")]
    assert underwriting.uncleared_levels(flags) == ["block"]


def test_a_run_keeps_manual_flags_and_a_cleared_plugin_flag_it_raises_again():
    first = underwriting.after_run(
        [manual("M1", "info")], [raised("block", "old car"), raised("decline", "x")], author("P")
    )
    plugin_block = next(f for f in first if f.level == "block")
    cleared = [underwriting.cleared(f, author()) if f is plugin_block else f for f in first]

    second = underwriting.after_run(cleared, [raised("block", "old car")], author("Q"))

    assert [(f.locator, f.source, f.cleared) for f in second] == [
        ("M1", "manual", False),
        (plugin_block.locator, "plugin", True),
    ]
    assert underwriting.uncleared_levels(second) == ["info"]  # the underwriter's clearing stands


def test_underwriters_add_and_clear_flags():
    flags = [manual("M1", "block")]

    changed = underwriting.changed(
        flags, [Requested("approve", "E1", "checked")], ["M1"], {"E1"}, author(), code="quote", noun="widget"
    )

    assert [(f.locator, f.level, f.clearedBy, f.createdBy, f.elementLocator) for f in changed] == [
        ("M1", "block", "U2", "U1", None),
        ("N1", "approve", None, "U2", "E1"),
    ]


def test_flag_changes_are_refused_with_the_declaring_entitys_codes():
    flags = [manual("M1", "block"), manual("M2", "info", cleared=True)]

    with pytest.raises(InvalidRequest) as bad:
        underwriting.changed(
            flags, [Requested("block", "E9"), Requested(None)], [], {"E1"}, author(), code="quote", noun="widget"
        )
    assert (status_of(bad.value), bad.value.code) == (400, "quote.invalid_flag")
    assert [(e.field, e.message) for e in bad.value.field_errors] == [
        ("addFlags[0].elementLocator", "E9 is not an element of the widget"),
        ("addFlags[1].level", "is required"),
    ]

    with pytest.raises(NotFound) as unknown:
        underwriting.changed(flags, [], ["M9"], set(), author(), code="quote", noun="widget")
    assert (status_of(unknown.value), unknown.value.code) == (404, "underwritingFlag.not_found")

    with pytest.raises(InvalidState) as twice:
        underwriting.changed(flags, [], ["M2"], set(), author(), code="quote", noun="widget")
    assert (status_of(twice.value), twice.value.code) == (409, "underwritingFlag.cleared")


def test_reset_clears_or_deletes_the_chosen_flags():
    flags = [manual("M1", "block"), manual("M2", "decline")]

    assert [
        f.cleared
        for f in underwriting.after_reset(
            flags, ["M1"], every=False, delete=False, by=author(), code="quote", noun="widget"
        )
    ] == [True, False]
    assert underwriting.after_reset(flags, [], every=True, delete=True, by=author(), code="quote", noun="widget") == []
    with pytest.raises(InvalidRequest) as unknown:
        underwriting.after_reset(flags, ["M9"], every=False, delete=False, by=author(), code="quote", noun="widget")
    assert unknown.value.code == "quote.invalid_flag"


def test_a_new_plugin_flag_holds_what_the_plugin_raised_and_who_ran_it():
    [flag] = underwriting.after_run([], [raised("block", "old car", "age")], author("P"))
    assert (
        flag.locator,
        flag.level,
        flag.note,
        flag.tag,
        flag.source,
        flag.createdBy,
        flag.createdTime,
        flag.cleared,
    ) == ("P1", "block", "old car", "age", "plugin", "U2", NOW + timedelta(hours=1), False)
    on_element = PluginFlag(level="info", note="n", tag="", element_locator="E1")
    assert [f.elementLocator for f in underwriting.after_run([], [on_element], author())] == ["E1"]


def test_a_run_replaces_an_uncleared_plugin_flag_it_no_longer_raises_and_reuses_equal_ones_one_each():
    first = underwriting.after_run([], [raised("block", "a"), raised("block", "a")], author("P"))
    assert [f.locator for f in first] == ["P1", "P2"]

    # the same flag twice keeps both; a different flag is new, never a reused old one
    assert [
        f.locator for f in underwriting.after_run(first, [raised("block", "a"), raised("block", "a")], author("Q"))
    ] == ["P1", "P2"]
    second = underwriting.after_run(first, [raised("decline", "b")], author("Q"))
    assert [(f.locator, f.level, f.note) for f in second] == [("Q1", "decline", "b")]


def test_clearing_a_flag_leaves_the_others_and_an_added_flag_keeps_its_note_and_tag():
    flags = [manual("M1", "block"), manual("M3", "decline")]

    changed = underwriting.changed(
        flags, [Requested("info", note="seen", tag="t")], ["M1"], set(), author(), code="quote", noun="widget"
    )

    assert [(f.locator, f.cleared, f.note, f.tag) for f in changed] == [
        ("M1", True, "", ""),
        ("M3", False, "", ""),
        ("N1", False, "seen", "t"),
    ]


def test_refused_flag_changes_say_what_is_wrong():
    flags = [manual("M2", "info", cleared=True)]
    with pytest.raises(InvalidRequest) as bad:
        underwriting.changed(flags, [Requested(None)], [], set(), author(), code="quote", noun="widget")
    assert bad.value.message == "Invalid underwriting flags"
    with pytest.raises(NotFound) as unknown:
        underwriting.changed(flags, [], ["M9"], set(), author(), code="quote", noun="widget")
    assert unknown.value.message == "underwritingFlag M9 not found"
    with pytest.raises(InvalidState) as twice:
        underwriting.changed(flags, [], ["M2"], set(), author(), code="quote", noun="widget")
    assert twice.value.message == "Underwriting flag M2 is cleared already"


def test_reset_of_an_unknown_flag_names_it():
    with pytest.raises(InvalidRequest) as unknown:
        underwriting.after_reset(
            [manual("M1", "block")], ["M1", "M9"], every=False, delete=False, by=author(), code="quote", noun="widget"
        )
    assert (unknown.value.message, unknown.value.code) == ("Unknown underwriting flag", "quote.invalid_flag")
    assert [(e.field, e.message) for e in unknown.value.field_errors] == [
        ("resetFlags", "M9 is not a flag of the widget")
    ]


def test_reset_clears_every_flag_once_and_deletes_only_the_chosen():
    flags = [manual("M1", "block"), manual("M2", "decline", cleared=True), manual("M3", "info")]

    every = underwriting.after_reset(flags, [], every=True, delete=False, by=author(), code="quote", noun="widget")
    assert [(f.locator, f.clearedBy) for f in every] == [("M1", "U2"), ("M2", "U1"), ("M3", "U2")]
    assert [
        f.locator
        for f in underwriting.after_reset(
            flags, ["M1", "M3"], every=False, delete=True, by=author(), code="quote", noun="widget"
        )
    ] == ["M2"]


def test_a_flag_of_a_level_is_found_only_by_its_locator_and_level():
    flags = [manual("M1", "block"), manual("M2", "approve")]
    underwriting.check_level(flags, "M1", "block")
    for locator, level in [("M1", "approve"), ("M9", "block")]:
        with pytest.raises(NotFound) as missing:
            underwriting.check_level(flags, locator, level)
        assert (missing.value.code, missing.value.message) == (
            "underwritingFlag.not_found",
            f"underwritingFlag {locator} not found",
        )
