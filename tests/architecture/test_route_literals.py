"""Every route path is written in full as one string literal (issue 11, item 7), so searching the code
for a path from the spec finds the route that serves it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _route_paths() -> list[tuple[str, ast.expr]]:
    found = []
    for module in sorted((ROOT / "chalicelib").glob("*/routes.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "route"
                and node.args
            ):
                found.append((f"{module.relative_to(ROOT)}:{node.lineno}", node.args[0]))
    return found


def test_every_route_path_is_a_full_string_literal():
    paths = _route_paths()

    assert len(paths) > 150
    not_literal = [
        where
        for where, path in paths
        if not (isinstance(path, ast.Constant) and isinstance(path.value, str) and path.value.startswith("/"))
    ]
    assert not_literal == []
