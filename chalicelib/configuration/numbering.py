"""Numbers from numbering plans (DECISIONS.md, "Numbering"): pure formatting, no storage.

A plan's `format` mixes literal characters with positions and placeholders: `X` a letter (A-Z),
`#` a digit, `{name}` a value given by the caller (`{product}`: the product's `numberingString`;
term formats use `{policyNumber}`, `{termNumberPlusOne}`), and `\\` makes the next character literal
(`\\A\\C\\C-########` -> `ACC-00000001`). The positions together form the *core number*, which counts
like an odometer from `initialCoreNumber`: with `X##`, A99 is followed by B00, and Z99 is the last.

`initialCoreNumber` is read against the positions from the right: missing leading characters count
as the lowest value (0 or A), surplus leading zeros are ignored (real packages pair `########` with
"000000001"), anything else that does not fit is a NumberingError. A quote's number uses the plan's
`quoteNumberFormat` and `initialQuoteCoreNumber` (the validator defaults them to `format` and
`initialCoreNumber`).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LETTER, DIGIT, ESCAPE = "X", "#", "\\"
_ALPHABETS = {LETTER: string.ascii_uppercase, DIGIT: string.digits}
QUOTE_KIND = "quote"


class NumberingError(ValueError):
    """A format that cannot be read, a core number that does not fit it, or a plan used up."""


@dataclass(frozen=True)
class NumberFormat:
    """A parsed format: `parts` are ("literal", text), ("position", "X" | "#") or ("placeholder", name)."""

    text: str
    parts: tuple[tuple[str, str], ...]

    @property
    def positions(self) -> str:
        """The core number's positions in order, e.g. "X#####"."""
        return "".join(value for kind, value in self.parts if kind == "position")

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(value for kind, value in self.parts if kind == "placeholder")

    @property
    def capacity(self) -> int:
        """How many distinct core numbers the positions can show (1 without positions)."""
        total = 1
        for position in self.positions:
            total *= len(_ALPHABETS[position])
        return total

    def render(self, core: str = "", values: Mapping[str, str | None] | None = None) -> str:
        """The number with `core` (as long as the positions) and the placeholder `values`."""
        if len(core) != len(self.positions):
            raise NumberingError(f"format {self.text!r} needs a core number of {len(self.positions)} characters")
        values = values or {}
        out: list[str] = []
        cores = iter(core)
        for kind, value in self.parts:
            if kind == "literal":
                out.append(value)
            elif kind == "position":
                out.append(next(cores))
            elif values.get(value) is None:
                raise NumberingError(f"format {self.text!r} needs a value for {{{value}}}")
            else:
                out.append(str(values[value]))
        return "".join(out)


def parse_format(text: object) -> NumberFormat:
    if not isinstance(text, str) or not text:
        raise NumberingError("a numbering format must be a non-empty string")
    parts: list[tuple[str, str]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == ESCAPE:
            if index + 1 == len(text):
                raise NumberingError(f"format {text!r} ends with an escape character")
            parts.append(("literal", text[index + 1]))
            index += 2
        elif char in _ALPHABETS:
            parts.append(("position", char))
            index += 1
        elif char == "{":
            end = text.find("}", index)
            name = text[index + 1 : end] if end > 0 else ""
            if not name.isidentifier():
                raise NumberingError(f"format {text!r} has a malformed placeholder at position {index}")
            parts.append(("placeholder", name))
            index = end + 1
        else:
            parts.append(("literal", char))
            index += 1
    return NumberFormat(text, tuple(parts))


def core_index(positions: str, core: str) -> int:
    """Where `core` stands in the odometer sequence of `positions` (0 for all-lowest)."""
    core = core.strip().upper()
    surplus = len(core) - len(positions)
    if surplus > 0:
        if core[:surplus].strip("0"):
            raise NumberingError(f"core number {core!r} is longer than the format's {len(positions)} positions")
        core = core[surplus:]
    padded = "".join(_ALPHABETS[p][0] for p in positions[: len(positions) - len(core)]) + core
    index = 0
    for position, char in zip(positions, padded):
        alphabet = _ALPHABETS[position]
        if char not in alphabet:
            expected = "a letter" if position == LETTER else "a digit"
            raise NumberingError(f"core number {core!r} has {char!r} where the format expects {expected}")
        index = index * len(alphabet) + alphabet.index(char)
    return index


def core_at(positions: str, index: int) -> str:
    """The core number at `index` of the odometer sequence of `positions`."""
    if index < 0:
        raise NumberingError("a core number index cannot be negative")
    chars: list[str] = []
    for position in reversed(positions):
        alphabet = _ALPHABETS[position]
        index, digit = divmod(index, len(alphabet))
        chars.append(alphabet[digit])
    if index:
        raise NumberingError(f"the format's positions {positions!r} are used up")
    return "".join(reversed(chars))


@dataclass(frozen=True)
class PlanSequence:
    """One numbering sequence of a plan: its format and the odometer index of its first number."""

    format: NumberFormat
    start: int

    @property
    def remaining(self) -> int:
        """How many numbers the sequence gives in all (counter values 0 .. remaining-1)."""
        return self.format.capacity - self.start

    def number(self, counter: int, values: Mapping[str, str | None] | None = None) -> str:
        """The number for the `counter`-th reservation (0 = the first)."""
        if counter >= self.remaining:
            raise NumberingError(f"the numbering format {self.format.text!r} is used up")
        return self.format.render(core_at(self.format.positions, self.start + counter), values)


def sequence(plan: dict[str, Any], entity_kind: str) -> PlanSequence:
    """The sequence a plan gives `entity_kind` (quotes: the quote format and initial core number)."""
    if entity_kind == QUOTE_KIND:
        text = plan.get("quoteNumberFormat") or plan.get("format")
        initial = plan.get("initialQuoteCoreNumber") or plan.get("initialCoreNumber")
    else:
        text, initial = plan.get("format"), plan.get("initialCoreNumber")
    parsed = parse_format(text)
    return PlanSequence(parsed, core_index(parsed.positions, str(initial or "")))


def format_number(text: str, initial_core: str, counter: int, values: Mapping[str, str] | None = None) -> str:
    """The `counter`-th number (0 = the first) of a format counting from `initial_core`."""
    parsed = parse_format(text)
    return PlanSequence(parsed, core_index(parsed.positions, initial_core)).number(counter, values)
