"""Underwriting flags: what an underwriting run and an underwriter's changes do to them. Pure.

Manual flags come from the API; plugin flags from the last underwriting run. A run keeps the manual
flags as they are; of the plugin's, those it raised now: a raised flag equal (level, element, note,
tag) to one it raised before keeps that one, so a flag an underwriter cleared stays cleared; cleared
plugin flags stay as history, and an uncleared one the plugin no longer raises goes. Whether the
record passes is decided over the uncleared flags (DECISIONS.md, "Underwriting outcome").

Errors name the user's entity: `{code}.invalid_flag` (400), `underwritingFlag.not_found` (404),
`underwritingFlag.cleared` (409).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from chalicelib.core import codes
from chalicelib.core.errors import FieldError
from chalicelib.priceable.models import Flag, FlagLevel

FLAG_ENTITY = "underwritingFlag"


class RaisedFlag(Protocol):
    """A flag as a plugin raised it (plugins.models.PluginFlag), read-only."""

    @property
    def level(self) -> FlagLevel: ...

    @property
    def note(self) -> str: ...

    @property
    def tag(self) -> str: ...

    @property
    def element_locator(self) -> str | None: ...


class FlagRequest(Protocol):
    """A flag as a client asks for it (level None: not given), read-only."""

    @property
    def level(self) -> FlagLevel | None: ...

    @property
    def note(self) -> str: ...

    @property
    def tag(self) -> str: ...

    @property
    def elementLocator(self) -> str | None: ...


@dataclass(frozen=True)
class Author:
    """Who changes flags, and when; `new_locator` names new flags."""

    user: str
    now: datetime
    new_locator: Callable[[], str]


def after_run(flags: list[Flag], raised: Iterable[RaisedFlag], by: Author) -> list[Flag]:
    """The flags after an underwriting run that raised `raised`."""
    previous = [flag for flag in flags if flag.source == "plugin"]
    kept: list[Flag] = []
    for flag in raised:
        same = next(
            (
                old
                for old in previous
                if old not in kept
                and (old.level, old.elementLocator, old.note, old.tag)
                == (flag.level, flag.element_locator, flag.note, flag.tag)
            ),
            None,
        )
        kept.append(
            same
            or Flag(
                locator=by.new_locator(),
                level=flag.level,
                note=flag.note,
                tag=flag.tag,
                elementLocator=flag.element_locator,
                source="plugin",
                createdBy=by.user,
                createdTime=by.now,
            )
        )
    history = [flag for flag in previous if flag.cleared and flag not in kept]
    return [flag for flag in flags if flag.source == "manual"] + history + kept


def uncleared_levels(flags: Iterable[Flag]) -> list[str]:
    return [flag.level for flag in flags if not flag.cleared]


def changed(
    flags: list[Flag],
    add: Sequence[FlagRequest],
    clear: list[str],
    elements: set[str],
    by: Author,
    *,
    code: str,
    noun: str,
) -> list[Flag]:
    """Manual flags added (on elements of the record) and flags (manual or plugin) cleared. 404 for a
    flag to clear the record does not have, 409 when it is cleared already."""
    problems = [
        FieldError(f"addFlags[{i}].elementLocator", f"{flag.elementLocator} is not an element of the {noun}")
        for i, flag in enumerate(add)
        if flag.elementLocator and flag.elementLocator not in elements
    ]
    problems += [FieldError(f"addFlags[{i}].level", "is required") for i, flag in enumerate(add) if not flag.level]
    if problems:
        raise codes.INVALID_FLAG[code]("Invalid underwriting flags", field_errors=problems)
    unknown = _unknown(flags, clear)
    if unknown:
        raise codes.not_found(FLAG_ENTITY, unknown[0])
    doomed = set(clear)
    already = [flag.locator for flag in flags if flag.locator in doomed and flag.cleared]
    if already:
        raise codes.UNDERWRITING_FLAG_CLEARED(f"Underwriting flag {already[0]} is cleared already")
    kept = [cleared(flag, by) if flag.locator in doomed else flag for flag in flags]
    return kept + [
        Flag(
            locator=by.new_locator(),
            level=flag.level,
            note=flag.note,
            tag=flag.tag,
            elementLocator=flag.elementLocator,
            source="manual",
            createdBy=by.user,
            createdTime=by.now,
        )
        for flag in add
        if flag.level
    ]


def after_reset(
    flags: list[Flag], chosen: list[str], *, every: bool, delete: bool, by: Author, code: str, noun: str
) -> list[Flag]:
    """Reset's flag options: the chosen flags (or `every` one) cleared, or deleted with `delete`."""
    unknown = _unknown(flags, chosen)
    if unknown:
        raise codes.INVALID_FLAG[code](
            "Unknown underwriting flag",
            field_errors=[FieldError("resetFlags", f"{unknown[0]} is not a flag of the {noun}")],
        )
    wanted = {flag.locator for flag in flags} if every else set(chosen)
    if delete:
        return [flag for flag in flags if flag.locator not in wanted]
    return [cleared(flag, by) if flag.locator in wanted and not flag.cleared else flag for flag in flags]


def check_level(flags: Iterable[Flag], locator: str, level: str) -> None:
    """404 unless the record has flag `locator` of `level`."""
    if not any(flag.locator == locator and flag.level == level for flag in flags):
        raise codes.not_found(FLAG_ENTITY, locator)


def _unknown(flags: Iterable[Flag], locators: Iterable[str]) -> list[str]:
    known = {flag.locator for flag in flags}
    return [locator for locator in locators if locator not in known]


def cleared(flag: Flag, by: Author) -> Flag:
    return flag.model_copy(update={"clearedBy": by.user, "clearedTime": by.now})
