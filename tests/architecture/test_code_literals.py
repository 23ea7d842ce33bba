"""Every error and outcome code is spelled once, in the catalogue (chalicelib/core/codes.py); the rest of the code
names its entry (`codes.QUOTE_NOT_PRICED`, `codes.RENEWAL_INVALID.code`), so a search for a code finds its one
definition and its meaning, and a code cannot drift from the catalogue by a typo.

A code literal is a string that is a catalogue code, or any string or f-string in a code's place: the value of a
`"code"` key, a `code=` argument, or what `.code` is compared with. Event names (`policy.issue`, `auth.role.delete`)
look alike but are none of these, and pass."""

from __future__ import annotations

import ast
from pathlib import Path

from chalicelib.core import codes

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "chalicelib" / "core" / "codes.py"


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _is_code_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "code"


def code_literals(source: str) -> list[tuple[int, str]]:
    """(line, the literal) of every code literal in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes.CATALOGUE:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Dict):
            found += [
                (value.lineno, ast.unparse(value))
                for key, value in zip(node.keys, node.values)
                if isinstance(key, ast.Constant)
                and key.value == "code"
                and _is_text(value)
                and not (isinstance(value, ast.Constant) and value.value in codes.CATALOGUE)
            ]
        elif (
            isinstance(node, ast.keyword)
            and node.arg == "code"
            and _is_text(node.value)
            and not (isinstance(node.value, ast.Constant) and node.value.value in codes.CATALOGUE)
        ):
            found.append((node.value.lineno, ast.unparse(node.value)))
        elif isinstance(node, ast.Compare) and any(map(_is_code_attribute, [node.left, *node.comparators])):
            found += [
                (side.lineno, ast.unparse(side))
                for side in [node.left, *node.comparators]
                if _is_text(side) and not (isinstance(side, ast.Constant) and side.value in codes.CATALOGUE)
            ]
    return sorted(found)


def test_no_error_or_outcome_code_is_spelled_outside_the_catalogue():
    modules = sorted(path for path in (ROOT / "chalicelib").rglob("*.py") if path != CATALOGUE)
    assert len(modules) > 200

    spelled = [
        f"{path.relative_to(ROOT)}:{line}: {literal}"
        for path in modules
        for line, literal in code_literals(path.read_text())
    ]

    assert spelled == [], "name the catalogue's entry (chalicelib/core/codes.py) instead:\n" + "\n".join(spelled)


def test_a_code_literal_is_found_in_each_place_a_code_goes_and_an_event_name_is_not():
    source = """
failed.append({"policyLocator": locator, "code": "transaction.invalid"})
failed.append({"code": f"transaction.{state}", "message": "stopped"})
raise Conflict("in progress", code="renewal.in_progress")
if error.code == "idempotency.in_progress" or "quote.not_priced" != error.code:
    pass
CODE = "auth.token_invalid"
uow.record_event("policy.issue", {"policyLocator": locator})
uow.record_event("clock.advance.start", {"code": codes.RENEWAL_INVALID.code})
if error.code == codes.IDEMPOTENCY_IN_PROGRESS.code:
    pass
"""
    assert code_literals(source) == [
        (2, "transaction.invalid"),
        (3, "f'transaction.{state}'"),
        (4, "'renewal.in_progress'"),
        (5, "idempotency.in_progress"),
        (5, "quote.not_priced"),
        (7, "auth.token_invalid"),
    ]
