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
from chalicelib.priceable import underwriting
from tests.unit.priceable.widget import NOW, manual, raised


def author(prefix: str = "N") -> underwriting.Author:
    numbers = count(1)
    return underwriting.Author("U2", NOW + timedelta(hours=1), lambda: f"{prefix}{next(numbers)}")


class Requested:
    def __init__(self, level, element=None, note="", tag=""):
        self.level, self.elementLocator, self.note, self.tag = level, element, note, tag


@pytest.mark.parametrize(("levels", "already_rejected", "result", "status"), [
    ([], False, "passed", "info"),
    (["info"], False, "passed", "info"),
    (["approve", "reject", "decline", "block"], False, "passed", "approve"),
    (["approve", "reject"], True, "rejected", "reject"),
    (["approve"], True, "passed", "info"),
    (["reject", "decline", "block"], False, "rejected", "reject"),
    (["decline", "block"], False, "declined", "decline"),
    (["block", "info"], False, "underwrittenBlocked", "block"),
])
def test_the_outcome_follows_the_uncleared_levels(levels, already_rejected, result, status):
    outcome = underwriting_outcome(levels, already_rejected=already_rejected)
    assert (outcome.result, outcome.status) == (result, status)


def test_only_uncleared_flags_count():
    flags = [manual("M1", "reject", cleared=True), manual("M2", "block")]
    assert underwriting.uncleared_levels(flags) == ["block"]


def test_a_run_keeps_manual_flags_and_a_cleared_plugin_flag_it_raises_again():
    first = underwriting.after_run([manual("M1", "info")], [raised("block", "old car"), raised("decline", "x")],
                                   author("P"))
    plugin_block = next(f for f in first if f.level == "block")
    cleared = [underwriting.cleared(f, author()) if f is plugin_block else f for f in first]

    second = underwriting.after_run(cleared, [raised("block", "old car")], author("Q"))

    assert [(f.locator, f.source, f.cleared) for f in second] == [("M1", "manual", False),
                                                                  (plugin_block.locator, "plugin", True)]
    assert underwriting.uncleared_levels(second) == ["info"]  # the underwriter's clearing stands


def test_underwriters_add_and_clear_flags():
    flags = [manual("M1", "block")]

    changed = underwriting.changed(flags, [Requested("approve", "E1", "checked")], ["M1"], {"E1"}, author(),
                                   code="widget", noun="widget")

    assert [(f.locator, f.level, f.clearedBy, f.createdBy, f.elementLocator) for f in changed] == [
        ("M1", "block", "U2", "U1", None), ("N1", "approve", None, "U2", "E1")]


def test_flag_changes_are_refused_with_the_declaring_entitys_codes():
    flags = [manual("M1", "block"), manual("M2", "info", cleared=True)]

    with pytest.raises(InvalidRequest) as bad:
        underwriting.changed(flags, [Requested("block", "E9"), Requested(None)], [], {"E1"}, author(),
                             code="widget", noun="widget")
    assert (status_of(bad.value), bad.value.code) == (400, "widget.invalid_flag")
    assert [(e.field, e.message) for e in bad.value.field_errors] == [
        ("addFlags[0].elementLocator", "E9 is not an element of the widget"), ("addFlags[1].level", "is required")]

    with pytest.raises(NotFound) as unknown:
        underwriting.changed(flags, [], ["M9"], set(), author(), code="widget", noun="widget")
    assert (status_of(unknown.value), unknown.value.code) == (404, "underwritingFlag.not_found")

    with pytest.raises(InvalidState) as twice:
        underwriting.changed(flags, [], ["M2"], set(), author(), code="widget", noun="widget")
    assert (status_of(twice.value), twice.value.code) == (409, "underwritingFlag.cleared")


def test_reset_clears_or_deletes_the_chosen_flags():
    flags = [manual("M1", "block"), manual("M2", "decline")]

    assert [f.cleared for f in underwriting.after_reset(flags, ["M1"], every=False, delete=False, by=author(),
                                                        code="widget", noun="widget")] == [True, False]
    assert underwriting.after_reset(flags, [], every=True, delete=True, by=author(), code="widget",
                                    noun="widget") == []
    with pytest.raises(InvalidRequest) as unknown:
        underwriting.after_reset(flags, ["M9"], every=False, delete=False, by=author(), code="widget", noun="widget")
    assert unknown.value.code == "widget.invalid_flag"
